// The checks the end-to-end tests rely on must fail when they should: each is
// fed a small hand-made output that breaks exactly one property.
#include "tests/testing/convert_harness.h"

#include <sys/stat.h>

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/output_trace.h"

namespace tracemill::testing {
namespace {

class HarnessTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, std::string_view bytes) {
    std::string p = tmp_.Join(name);
    WriteFileBytes(p, bytes);
    return p;
  }
  std::unique_ptr<OutputTrace> Trace(std::string_view json) {
    std::string error;
    auto t = OutputTrace::Load(Write("t.json", json), &error);
    EXPECT_NE(t, nullptr) << error;
    return t;
  }
  TempDir tmp_;
};

// A two-input output: pids 1-2 for rank 0, 3 for rank 1.
constexpr char kHeader[] =
    R"({"displayTimeUnit":"ms","otherData":{"inputs":[)"
    R"({"path":"a","rank":0,"label":"rank 0","pids":[1,2],"metadata":{}},)"
    R"({"path":"b","rank":1,"label":"rank 1","pids":[3,3],"metadata":{}}]},"traceEvents":[)";
constexpr char kNames[] =
    R"({"ph":"M","name":"process_name","pid":1,"args":{"name":"rank 0 · CPU"}},)"
    R"({"ph":"M","name":"process_name","pid":2,"args":{"name":"rank 0 · GPU 0"}},)"
    R"({"ph":"M","name":"process_name","pid":3,"args":{"name":"rank 1 · CPU"}})";

TEST_F(HarnessTest, PythonRejectsWhatStrictJsonRejects) {
  // One python3 run over all the cases; it names every file it rejects.
  const std::vector<std::pair<std::string, bool>> cases = {
      {R"({"a":[1,"\u00e9","\ud83d\ude00",null]})", true},
      {R"({"a":"\\ud800"})", true},  // an escaped backslash, not a surrogate
      {R"({"a":NaN})", false},
      {R"({"a":Infinity})", false},
      {"{\"a\":\"\xff\"}", false},
      {"{\"a\":\"x\x01y\"}", false},
      {R"({"a":"\ud800"})", false},
      {R"({"a":"\udc00\ud800"})", false},
      {R"({"a":[1,]})", false},
      {R"({"a":1)", false},
  };
  const std::string dir = tmp_.Join("cases");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  std::vector<std::string> argv = {TRACEMILL_PYTHON3_FOR_TESTS, "-S", TRACEMILL_TRACE_TOOL_FOR_TESTS,
                                   "validate"};
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string path = dir + "/case" + std::to_string(i) + ".json";
    WriteFileBytes(path, cases[i].first);
    argv.push_back(path);
  }
  // .gz with two members is read whole; a cut member is an error.
  WriteFileBytes(dir + "/two_members.json.gz", GzipBytes(R"({"a":[1,)") + GzipBytes(R"(2]})"));
  WriteFileBytes(dir + "/cut.json.gz", GzipBytes(R"({"a":[1,)"));
  argv.push_back(dir + "/two_members.json.gz");
  argv.push_back(dir + "/cut.json.gz");
  CommandResult r = RunCommand(argv, tmp_.path());
  EXPECT_EQ(r.exit_code, 1);
  for (size_t i = 0; i < cases.size(); ++i) {
    bool named = r.out.find("/case" + std::to_string(i) + ".json:") != std::string::npos;
    EXPECT_EQ(named, !cases[i].second) << cases[i].first << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find("two_members.json.gz"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cut.json.gz"), std::string::npos) << r.out;
  // And the directory form used by every test.
  const std::string good = tmp_.Join("good");
  ASSERT_EQ(::mkdir(good.c_str(), 0755), 0);
  WriteFileBytes(good + "/x.json", cases[0].first);
  EXPECT_TRUE(OutputsParse(good, tmp_.path()));
  WriteFileBytes(good + "/y.json", cases[2].first);
  EXPECT_FALSE(OutputsParse(good, tmp_.path()));
}

TEST_F(HarnessTest, OutputTraceKeepsRawNumbers) {
  auto t = Trace(std::string(kHeader) + kNames +
                 R"(,{"ph":"X","name":"a\"b","pid":1,"tid":"s 7","ts":1682725897226747.123,"dur":0.5,)"
                 R"("id":18446744073709551617,"args":{"x":1.000000000000000000001}}]})");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->events.size(), 4u);
  const OutEvent& e = t->events[3];
  EXPECT_EQ(e.name, "a\"b");
  EXPECT_EQ(e.ts, "1682725897226747.123");
  EXPECT_EQ(e.dur, "0.5");
  EXPECT_EQ(e.tid, R"("s 7")");
  EXPECT_EQ(e.id, "18446744073709551617");
  EXPECT_EQ(e.args, R"({"x":1.000000000000000000001})");
  ASSERT_EQ(t->inputs.size(), 2u);
  EXPECT_EQ(t->inputs[1].pid_lo, 3);
  EXPECT_EQ(t->InputOfPid(2), 0);
  EXPECT_EQ(t->ProcessNames()[2], "rank 0 \xC2\xB7 GPU 0");
}

TEST_F(HarnessTest, TsNonDecreasingCatchesDisorder) {
  auto ok = Trace(std::string(kHeader) + kNames +
                  R"(,{"ph":"X","pid":1,"ts":5,"dur":1},{"ph":"X","pid":3,"ts":5.001},{"ph":"i","pid":2,"ts":6}]})");
  EXPECT_TRUE(TsNonDecreasing(*ok));
  auto back = Trace(std::string(kHeader) + kNames +
                    R"(,{"ph":"X","pid":1,"ts":5.001},{"ph":"X","pid":3,"ts":5}]})");
  EXPECT_FALSE(TsNonDecreasing(*back));
  auto late_meta = Trace(std::string(kHeader) +
                         R"({"ph":"X","pid":1,"ts":5},{"ph":"M","name":"process_name","pid":1,"args":{"name":"x"}}]})");
  EXPECT_FALSE(TsNonDecreasing(*late_meta));
  auto exponent = Trace(std::string(kHeader) + R"({"ph":"X","pid":1,"ts":1e3}]})");
  EXPECT_FALSE(TsNonDecreasing(*exponent));
  auto no_ts = Trace(std::string(kHeader) + R"({"ph":"X","pid":1}]})");
  EXPECT_FALSE(TsNonDecreasing(*no_ts));
}

TEST_F(HarnessTest, RanksNamespacedCatchesSharedPids) {
  auto ok = Trace(std::string(kHeader) + kNames + R"(,{"ph":"X","pid":2,"ts":1},{"ph":"X","pid":3,"ts":1}]})");
  EXPECT_TRUE(RanksNamespaced(*ok));
  auto outside = Trace(std::string(kHeader) + kNames + R"(,{"ph":"X","pid":4,"ts":1}]})");
  EXPECT_FALSE(RanksNamespaced(*outside));
  auto unnamed = Trace(std::string(kHeader) + R"({"ph":"X","pid":1,"ts":1}]})");
  EXPECT_FALSE(RanksNamespaced(*unnamed));
  auto wrong_rank = Trace(std::string(kHeader) +
                          R"({"ph":"M","name":"process_name","pid":3,"args":{"name":"rank 0 · CPU"}},)"
                          R"({"ph":"X","pid":3,"ts":1}]})");
  EXPECT_FALSE(RanksNamespaced(*wrong_rank));
  auto overlap = Trace(
      R"({"otherData":{"inputs":[{"path":"a","rank":0,"label":"rank 0","pids":[1,2],"metadata":{}},)"
      R"({"path":"b","rank":1,"label":"rank 1","pids":[2,3],"metadata":{}}]},"traceEvents":[]})");
  EXPECT_FALSE(RanksNamespaced(*overlap));
}

TEST_F(HarnessTest, ManifestBalancesCatchesLostEvents) {
  constexpr char kGood[] =
      R"({"totals":{"events_read":5,"events_written":4,"events_dropped":1,"dropped_by_reason":{"bad_ts":1},"balanced":true},)"
      R"("inputs":[{"path":"a","events_read":5,"events_written":4,"events_dropped":1,"dropped_by_reason":{"bad_ts":1}}]})";
  auto good = Manifest::Load(Write("good.json", kGood));
  ASSERT_NE(good, nullptr);
  EXPECT_TRUE(ManifestBalances(*good));
  constexpr char kLost[] =
      R"({"totals":{"events_read":5,"events_written":3,"events_dropped":1,"dropped_by_reason":{"bad_ts":1},"balanced":true},)"
      R"("inputs":[{"path":"a","events_read":5,"events_written":3,"events_dropped":1,"dropped_by_reason":{"bad_ts":1}}]})";
  auto lost = Manifest::Load(Write("lost.json", kLost));
  ASSERT_NE(lost, nullptr);
  EXPECT_FALSE(ManifestBalances(*lost));
}

TEST(MicrosToNanos, PlainDecimalMicrosOnly) {
  EXPECT_EQ(MicrosToNanos("1682725897226747.123"), 1682725897226747123);
  EXPECT_EQ(MicrosToNanos("1.5"), 1500);
  EXPECT_EQ(MicrosToNanos("-0.001"), -1);
  EXPECT_EQ(MicrosToNanos("7"), 7000);
  EXPECT_EQ(MicrosToNanos("1.0001"), std::nullopt);
  EXPECT_EQ(MicrosToNanos("1e3"), std::nullopt);
  EXPECT_EQ(MicrosToNanos("1."), std::nullopt);
  EXPECT_EQ(MicrosToNanos(""), std::nullopt);
  EXPECT_EQ(MicrosToNanos("\"1\""), std::nullopt);
}

TEST(UnescapeJsonString, DecodesAndRejectsLoneSurrogates) {
  EXPECT_EQ(UnescapeJsonString(R"("a\"\\\/\n\u00e9\ud83d\ude00")"), "a\"\\/\n\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(UnescapeJsonString(R"("\ud800")"), std::nullopt);
  EXPECT_EQ(UnescapeJsonString(R"("\x")"), std::nullopt);
  EXPECT_EQ(UnescapeJsonString("unquoted"), std::nullopt);
}

}  // namespace
}  // namespace tracemill::testing
