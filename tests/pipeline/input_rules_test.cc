// One test per input rule of issue 2, each on a small fixture named after the
// rule (tests/data/rules/, described in its README.md) or on the real file
// that needed it (tests/data/hta, tests/data/bluefog).
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/convert_harness.h"

namespace tracemill::testing {
namespace {

using ::testing::AnyOf;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;
using ::testing::StartsWith;

constexpr const char kDot[] = " \xC2\xB7 ";         // " · " in process names
constexpr const char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

class InputRulesTest : public ConvertTest {
 protected:
  std::string Rule(const std::string& name) { return DataPath("rules/" + name); }

  // A fresh directory under the test's temporary directory.
  std::string NewDir(const std::string& name) {
    std::string d = tmp_.Join(name);
    EXPECT_EQ(::mkdir(d.c_str(), 0755), 0) << d;
    return d;
  }

  // Names of the non-M events of `t`, in output order.
  static std::vector<std::string> TimedNames(const OutputTrace& t) {
    std::vector<std::string> v;
    for (const auto& e : t.events)
      if (e.ph != "M") v.push_back(e.name);
    return v;
  }

  // Lines of `err` that mention `path`.
  static int LinesNaming(const std::string& err, const std::string& path) {
    int n = 0;
    size_t start = 0;
    while (start < err.size()) {
      size_t end = err.find('\n', start);
      if (end == std::string::npos) end = err.size();
      if (err.substr(start, end - start).find(path) != std::string::npos) ++n;
      start = end + 1;
    }
    return n;
  }
};

// ---- JSON Array Format leniency ----

TEST_F(InputRulesTest, UnterminatedArray) {
  // `[` ... without `]`: what a never-closed writer leaves; every event kept.
  Run run = Convert({Rule("unterminated_array.json")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_TRUE(ManifestBalances(*run.manifest));
  EXPECT_TRUE(run.manifest->IsNull("/inputs/0/error"));
  EXPECT_EQ(run.manifest->Int("/inputs/0/events_written"), 4);
  auto t = OnlyTrace(run);
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(TimedNames(*t), ElementsAre("a", "b", "c"));
  EXPECT_TRUE(TsNonDecreasing(*t));
}

TEST_F(InputRulesTest, BluefogTimelineUnterminatedWithTrailingComma) {
  // A real Horovod-style timeline: no `]`, ends in `},`, E events without name.
  Run run = Convert({DataPath("bluefog/timeline_temp3.json")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_TRUE(ManifestBalances(*run.manifest));
  EXPECT_EQ(run.manifest->Int("/inputs/0/events_read"), 6);
  EXPECT_EQ(run.manifest->Int("/inputs/0/events_written"), 6);
  auto t = OnlyTrace(run);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->CountPh("B"), 2u);
  EXPECT_EQ(t->CountPh("E"), 2u);
  EXPECT_TRUE(TsNonDecreasing(*t));
}

TEST_F(InputRulesTest, TrailingComma) {
  struct Case {
    const char* file;
    std::vector<std::string> names;  // non-M events in output order
  };
  for (const Case& c : {Case{"trailing_comma/before_bracket.json", {"a", "b"}},
                        Case{"trailing_comma/object_format.json", {"a", "b"}},
                        // The nameless E takes the name of the B it closes (issue 4).
                        Case{"trailing_comma/at_eof.json", {"a", "a"}}}) {
    SCOPED_TRACE(c.file);
    Run run = Convert({Rule(c.file)});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    ASSERT_NE(run.manifest, nullptr);
    EXPECT_TRUE(ManifestBalances(*run.manifest));
    EXPECT_TRUE(run.manifest->IsNull("/inputs/0/error"));
    EXPECT_EQ(run.manifest->Int("/inputs/0/events_dropped"), 0);
    auto t = OnlyTrace(run);
    ASSERT_NE(t, nullptr);
    EXPECT_THAT(TimedNames(*t), ElementsAreArray(c.names));
  }
  // The trailing comma inside args is gone too.
  Run run = Convert({Rule("trailing_comma/before_bracket.json")});
  auto t = OnlyTrace(run);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->Named("a").size(), 1u);
  EXPECT_EQ(t->Named("a")[0]->args, R"({"k":1})");
}

TEST_F(InputRulesTest, EmptyObjectsAreSkipped) {
  const std::string in = Rule("empty_objects.json");
  InputFacts f = Facts(in);
  ASSERT_EQ(f.events, 5);
  ASSERT_EQ(f.empty_objects, 3);
  Run run = Convert({in});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  const Manifest& m = *run.manifest;
  EXPECT_TRUE(ManifestBalances(m));
  // Every element is read; the empty ones are dropped under their own reason.
  EXPECT_EQ(m.Int("/inputs/0/events_read"), f.events);
  EXPECT_EQ(m.Int("/inputs/0/events_written"), 2);
  EXPECT_EQ(m.Int("/inputs/0/dropped_by_reason/empty_object"), f.empty_objects);
  auto t = OnlyTrace(run);
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(TimedNames(*t), ElementsAre("a", "b"));
}

// Kineto lists every GPU of the host on every rank, used or not: the
// metadata of a process with no other event is left out, counted, and its
// process numbers no output pid.
TEST_F(InputRulesTest, ProcessesWithOnlyMetadataAreLeftOut) {
  const std::string in = Rule("empty_processes.json");
  InputFacts f = Facts(in);
  ASSERT_EQ(f.events, 9);
  ASSERT_EQ(f.empty_process_meta, 3);
  Run run = Convert({in});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  const Manifest& m = *run.manifest;
  EXPECT_TRUE(ManifestBalances(m));
  EXPECT_EQ(m.Int("/inputs/0/events_read"), 9);
  EXPECT_EQ(m.Int("/inputs/0/dropped_by_reason/empty_process"), 3);
  EXPECT_EQ(m.Int("/inputs/0/events_written"), 6);
  EXPECT_THAT(run.err, HasSubstr("left out on purpose, not lost: 3 events (empty_process 3)"));
  auto t = OnlyTrace(run);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->inputs.size(), 1u);
  EXPECT_EQ(t->inputs[0].pid_lo, 1);  // dense: GPU 1, then python3 (sort index, then first seen)
  EXPECT_EQ(t->inputs[0].pid_hi, 2);
  EXPECT_THAT(t->ProcessNames(), ElementsAre(Pair(1, "empty_processes.json \xC2\xB7 GPU 1"),
                                             Pair(2, "empty_processes.json \xC2\xB7 python3 (pid 7)")));
  EXPECT_TRUE(RanksNamespaced(*t));
}

// ---- gzip ----

struct GzipCase {
  const char* name;
  std::vector<double> cuts;  // member boundaries as fractions of the text
  bool empty_member_between;
};

void PrintTo(const GzipCase& c, std::ostream* os) { *os << c.name; }

class MultiMemberGzipTest : public InputRulesTest,
                            public ::testing::WithParamInterface<GzipCase> {};

TEST_P(MultiMemberGzipTest, ConvertsEveryMember) {
  // Members split the JSON text anywhere (mid-event included), as `cat a.gz
  // b.gz` and parallel compressors do; an empty member may sit between.
  const GzipCase& c = GetParam();
  const std::string source = Rule("gzip_source.json");
  const std::string text = ReadFileBytes(source);
  std::string gz;
  size_t begin = 0;
  std::vector<double> cuts = c.cuts;
  cuts.push_back(1.0);
  for (size_t k = 0; k < cuts.size(); ++k) {
    size_t end = static_cast<size_t>(cuts[k] * static_cast<double>(text.size()));
    gz += GzipBytes(std::string_view(text).substr(begin, end - begin));
    if (c.empty_member_between && k + 1 < cuts.size()) gz += GzipBytes("");
    begin = end;
  }
  const std::string in = tmp_.Join(std::string(c.name) + ".json.gz");
  WriteFileBytes(in, gz);
  InputFacts f = Facts(source, /*with_times=*/true);
  ASSERT_EQ(f.events, 401);

  Run run = Convert({in});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_TRUE(ManifestBalances(*run.manifest));
  EXPECT_TRUE(run.manifest->IsNull("/inputs/0/error"));
  EXPECT_THAT(run.manifest->Str("/inputs/0/format"), StartsWith("gzip+"));
  EXPECT_EQ(run.manifest->Int("/inputs/0/decoded_bytes"), static_cast<int64_t>(text.size()));
  EXPECT_EQ(run.manifest->Int("/inputs/0/events_written"), f.events);
  auto t = OnlyTrace(run);
  ASSERT_NE(t, nullptr);
  std::vector<std::string> got;
  for (const auto& e : t->events)
    if (e.ph != "M") got.push_back(TimeKey(e));
  std::sort(got.begin(), got.end());
  std::sort(f.times.begin(), f.times.end());
  EXPECT_EQ(got, f.times);
}

INSTANTIATE_TEST_SUITE_P(
    Members, MultiMemberGzipTest,
    ::testing::Values(GzipCase{"two_members", {0.5}, false},
                      GzipCase{"two_members_empty_between", {0.5}, true},
                      GzipCase{"seven_members", {0.01, 0.2, 0.33, 0.5, 0.77, 0.9}, false}),
    [](const ::testing::TestParamInfo<GzipCase>& info) { return std::string(info.param.name); });

// The last four bytes of a gzip member are its ISIZE; in a truncated file
// they are whatever compressed bytes the cut left there.
uint32_t LastFourBytesAsIsize(std::string_view bytes) {
  uint32_t v = 0;
  for (int k = 0; k < 4; ++k)
    v |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[bytes.size() - 4 + k])) << (8 * k);
  return v;
}

class TruncatedGzipTest : public InputRulesTest,
                          public ::testing::WithParamInterface<bool> {};

TEST_P(TruncatedGzipTest, SalvagesWhatWasWritten) {
  // A crashed profiler's .gz: everything before the cut is still data. The
  // cut is placed near 60% of the file where the last four bytes, read as
  // ISIZE, claim a small size (false) or more than 2 GiB (true): both happen
  // in real truncated files.
  const bool huge_trailer = GetParam();
  const std::string text = ReadFileBytes(Rule("gzip_source.json"));
  const std::string gz = GzipBytes(text);
  size_t cut = gz.size() * 6 / 10;
  while (cut > gz.size() / 3 &&
         (LastFourBytesAsIsize(std::string_view(gz).substr(0, cut)) >= (1u << 31)) != huge_trailer)
    --cut;
  ASSERT_GT(cut, gz.size() / 3) << "no suitable cut";
  const std::string in = tmp_.Join("truncated.json.gz");
  WriteFileBytes(in, std::string_view(gz).substr(0, cut));
  const std::string good = Rule("single_plain_trace.json");

  Run run = Convert({in, good});
  EXPECT_EQ(run.exit_code, 3) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  const Manifest& m = *run.manifest;
  EXPECT_TRUE(ManifestBalances(m));
  int i = m.InputIndex("truncated.json.gz");
  ASSERT_GE(i, 0);
  EXPECT_EQ(m.Str(Manifest::InputPointer(i, "/error/code")), "DATA_LOSS")
      << m.Json(Manifest::InputPointer(i, "/error"));
  EXPECT_FALSE(m.Bool(Manifest::InputPointer(i, "/error/rejected")));
  int64_t written = m.Int(Manifest::InputPointer(i, "/events_written"));
  EXPECT_GT(written, 10);
  EXPECT_LT(written, 401);
  EXPECT_EQ(LinesNaming(run.err, in), 1) << run.err;
  EXPECT_THAT(run.err, HasSubstr("byte " + std::to_string(m.Int(Manifest::InputPointer(i, "/error/byte_offset")))));
  // The other input is converted as usual.
  int g = m.InputIndex("single_plain_trace.json");
  ASSERT_GE(g, 0);
  EXPECT_EQ(m.Int(Manifest::InputPointer(g, "/events_written")), 2);

  // What was salvaged is a prefix of the file: the process metadata and e0..e(k-1).
  auto t = LoadTrace(run.Output("unranked.trace.json"));
  ASSERT_NE(t, nullptr);
  std::vector<std::string> names;
  for (const auto& e : t->events) {
    if (e.ph == "M" || !e.pid) continue;
    int k = t->InputOfPid(*e.pid);
    ASSERT_GE(k, 0);
    if (t->inputs[k].path == in) names.push_back(e.name);
  }
  ASSERT_EQ(static_cast<int64_t>(names.size()), std::max<int64_t>(written - 1, 0));  // minus the M event
  for (size_t k = 0; k < names.size(); ++k) {
    std::string want = "e";
    want += std::to_string(k);
    EXPECT_EQ(names[k], want);
  }
}

INSTANTIATE_TEST_SUITE_P(Trailer, TruncatedGzipTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "HugeIsizeBytes" : "SmallIsizeBytes");
                         });

TEST_F(InputRulesTest, GzipCutInsideItsHeader) {
  const std::string gz = GzipBytes(ReadFileBytes(Rule("gzip_source.json")));
  const std::string in = tmp_.Join("cut_header.json.gz");
  WriteFileBytes(in, std::string_view(gz).substr(0, 6));
  Run run = Convert({in, Rule("single_plain_trace.json")});
  EXPECT_EQ(run.exit_code, 3) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_TRUE(ManifestBalances(*run.manifest));
  int i = run.manifest->InputIndex("cut_header.json.gz");
  ASSERT_GE(i, 0);
  EXPECT_FALSE(run.manifest->IsNull(Manifest::InputPointer(i, "/error")));
  EXPECT_EQ(run.manifest->Int(Manifest::InputPointer(i, "/events_written")), 0);
  EXPECT_EQ(LinesNaming(run.err, in), 1) << run.err;
}

// ---- damaged or foreign JSON ----

TEST_F(InputRulesTest, TruncatedJson) {
  for (const char* file : {"truncated_json/object_format.json", "truncated_json/array_format.json"}) {
    SCOPED_TRACE(file);
    const std::string in = Rule(file);
    const std::string text = ReadFileBytes(in);
    const size_t third = text.find(R"({"ph":"X","name":"c")");
    ASSERT_NE(third, std::string::npos);
    Run run = Convert({in});
    EXPECT_EQ(run.exit_code, 3) << run.err;
    ASSERT_NE(run.manifest, nullptr);
    const Manifest& m = *run.manifest;
    EXPECT_TRUE(ManifestBalances(m));
    EXPECT_EQ(m.Str("/inputs/0/error/code"), "DATA_LOSS");
    EXPECT_FALSE(m.Bool("/inputs/0/error/rejected"));
    const int64_t offset = m.Int("/inputs/0/error/byte_offset");
    EXPECT_GE(offset, static_cast<int64_t>(third));
    EXPECT_LE(offset, static_cast<int64_t>(text.size()));
    EXPECT_EQ(m.Int("/inputs/0/events_written"), 2);
    EXPECT_EQ(m.Int("/inputs/0/events_dropped"), 1);
    // One line on stderr naming the file, the byte offset and the reason.
    EXPECT_EQ(LinesNaming(run.err, in), 1) << run.err;
    EXPECT_THAT(run.err, HasSubstr("byte " + std::to_string(offset)));
    auto t = OnlyTrace(run);
    ASSERT_NE(t, nullptr);
    EXPECT_THAT(TimedNames(*t), ElementsAre("a", "b"));
  }
}

TEST_F(InputRulesTest, NotATraceJsonIsRejected) {
  // A PyTorch Execution Trace: valid JSON, no traceEvents. Rejected, reported,
  // and the other input is still converted.
  const std::string et = DataPath("hta/execution_trace/benchmark_simple_add_et.json.gz");
  const std::string good = Rule("single_plain_trace.json");
  InputFacts f = Facts(et);
  ASSERT_FALSE(f.trace);
  Run run = Convert({et, good});
  EXPECT_EQ(run.exit_code, 3) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  const Manifest& m = *run.manifest;
  EXPECT_TRUE(ManifestBalances(m));
  int i = m.InputIndex("benchmark_simple_add_et.json.gz");
  ASSERT_GE(i, 0);
  EXPECT_EQ(m.Str(Manifest::InputPointer(i, "/error/code")), "INVALID_ARGUMENT");
  EXPECT_TRUE(m.Bool(Manifest::InputPointer(i, "/error/rejected")));
  EXPECT_EQ(m.Int(Manifest::InputPointer(i, "/events_written")), 0);
  EXPECT_TRUE(m.IsNull(Manifest::InputPointer(i, "/output")));
  EXPECT_EQ(m.Int("/totals/inputs_rejected"), 1);
  EXPECT_EQ(LinesNaming(run.err, et), 1) << run.err;
  int g = m.InputIndex("single_plain_trace.json");
  ASSERT_GE(g, 0);
  EXPECT_EQ(m.Int(Manifest::InputPointer(g, "/events_written")), 2);
  auto t = OnlyTrace(run);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->inputs.size(), 1u);
  EXPECT_EQ(t->inputs[0].path, good);
}

TEST_F(InputRulesTest, MalformedEventCostsOneEvent) {
  // `{"ph":"X","name":"bad",,...}` between two good events.
  const std::string in = Rule("malformed_event.json");
  Run run = Convert({in});
  EXPECT_EQ(run.exit_code, 3) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  const Manifest& m = *run.manifest;
  EXPECT_TRUE(ManifestBalances(m));
  EXPECT_EQ(m.Str("/inputs/0/error/code"), "DATA_LOSS");
  EXPECT_EQ(m.Int("/inputs/0/events_read"), 3);
  EXPECT_EQ(m.Int("/inputs/0/dropped_by_reason/malformed"), 1);
  const int64_t bad_at = static_cast<int64_t>(ReadFileBytes(in).find("{\"ph\":\"X\",\"name\":\"bad\""));
  EXPECT_EQ(m.Int("/inputs/0/error/byte_offset"), bad_at);
  EXPECT_EQ(LinesNaming(run.err, in), 1) << run.err;
  auto t = OnlyTrace(run);
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(TimedNames(*t), ElementsAre("a", "c"));
}

TEST_F(InputRulesTest, FileNameNeedingEscapesStaysValidJson) {
  // A quote, a backslash, a control character, an invalid UTF-8 byte and a
  // newline in the input's name: it appears in the manifest, otherData and
  // process names, all of which must stay valid JSON.
  const std::string dir = NewDir("odd");
  const std::string name = "we\"ird\\\x01\xff\nname.json";
  CopyFileTo(Rule("single_plain_trace.json"), dir + "/" + name);
  Run run = Convert({dir, "--group-by", "all"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_EQ(run.manifest->Int("/inputs/0/events_written"), 2);
  auto t = LoadTrace(run.Output("all.trace.json"));
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(RanksNamespaced(*t));
}

TEST_F(InputRulesTest, MissingInputFileIsReported) {
  const std::string missing = tmp_.Join("no_such_rank-0.json");
  Run run = Convert({missing, Rule("single_plain_trace.json")});
  EXPECT_EQ(run.exit_code, 3) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_TRUE(ManifestBalances(*run.manifest));
  int i = run.manifest->InputIndex("no_such_rank-0.json");
  ASSERT_GE(i, 0);
  EXPECT_TRUE(run.manifest->Bool(Manifest::InputPointer(i, "/error/rejected")));
  EXPECT_EQ(LinesNaming(run.err, missing), 1) << run.err;
}

// ---- strings ----

TEST_F(InputRulesTest, InvalidUtf8InNameBecomesReplacementCharacter) {
  Run run = Convert({Rule("invalid_utf8_name.json")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_TRUE(ManifestBalances(*run.manifest));
  EXPECT_EQ(run.manifest->Int("/inputs/0/events_written"), 3);
  auto t = OnlyTrace(run);
  ASSERT_NE(t, nullptr);
  const std::string r = kReplacement;
  EXPECT_EQ(t->Named("op" + r + r + "end").size(), 1u);
  EXPECT_EQ(t->Named("ok \xC2\xB5s").size(), 1u) << "valid UTF-8 must be kept";
  bool cut_found = false;
  for (const auto& e : t->events) {
    if (e.name.rfind("cut", 0) != 0) continue;
    cut_found = true;
    // A cut sequence becomes one or two U+FFFD, nothing else.
    EXPECT_THAT(e.name, AnyOf("cut" + r, "cut" + r + r));
    EXPECT_EQ(e.cat, "c" + r + r + "at");  // 0xc0 0xaf: two invalid bytes
    EXPECT_THAT(UnescapeJsonString(e.args.substr(5, e.args.size() - 6)).value_or("?"),
                std::string("x") + r + "y");
  }
  EXPECT_TRUE(cut_found);
}

TEST_F(InputRulesTest, RawControlCharacterInNameIsEscaped) {
  Run run = Convert({Rule("control_char_name.json")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_TRUE(ManifestBalances(*run.manifest));
  auto t = OnlyTrace(run);
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(TimedNames(*t), ElementsAre("tab\there", std::string("bell\x01x"), "two\nlines"));
  auto bell = t->Named(std::string("bell\x01x"));
  ASSERT_EQ(bell.size(), 1u);
  EXPECT_EQ(UnescapeJsonString(bell[0]->args.substr(5, bell[0]->args.size() - 6)).value_or("?"),
            std::string("a\x1f" "b"));
}

TEST_F(InputRulesTest, BareNonFiniteArgsBecomeValidJson) {
  // NaN, Infinity, -Infinity, inf, nan, -inf: Python's json.dump writes them.
  Run run = Convert({Rule("nonfinite_args.json")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_TRUE(ManifestBalances(*run.manifest));
  EXPECT_EQ(run.manifest->Int("/inputs/0/events_written"), 2);
  auto t = OnlyTrace(run);
  ASSERT_NE(t, nullptr);
  auto k = t->Named("k");
  ASSERT_EQ(k.size(), 1u);
  simdjson::dom::parser parser;
  simdjson::dom::element args;
  ASSERT_EQ(parser.parse(k[0]->args).get(args), simdjson::SUCCESS) << k[0]->args;
  for (const char* key : {"a", "b", "c", "d", "e", "f"}) {
    simdjson::dom::element v = args[key];
    EXPECT_TRUE(v.is_string() || v.is_null()) << key << " = " << simdjson::to_string(v);
  }
  EXPECT_EQ(double(args["g"].at(1)), 1.5);
  EXPECT_EQ(std::string_view(args["h"]), "NaN");
  auto mem = t->Named("mem");
  ASSERT_EQ(mem.size(), 1u);
  EXPECT_EQ(mem[0]->ph, "C");
  simdjson::dom::element margs;
  ASSERT_EQ(parser.parse(mem[0]->args).get(margs), simdjson::SUCCESS) << mem[0]->args;
  EXPECT_TRUE(margs["bytes"].is_string() || margs["bytes"].is_null());
  // The repair is said once, with where it was first needed.
  EXPECT_THAT(run.manifest->Json("/inputs/0/warnings"),
              HasSubstr("repaired a value strict JSON parsers reject (bare word such as NaN"));
}

// ---- timestamps ----

TEST_F(InputRulesTest, StringTsIsParsedExactly) {
  Run run = Convert({Rule("string_ts.json")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_EQ(run.manifest->Int("/inputs/0/events_written"), 3);
  auto t = OnlyTrace(run);
  ASSERT_NE(t, nullptr);
  std::map<std::string, std::pair<std::string, std::string>> got;
  for (const auto& e : t->events)
    if (e.ph != "M") got[e.name] = {e.ts, e.dur};
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(got["s1"], P("123.5", "2.25"));
  EXPECT_EQ(got["s2"], P("1682725897226747.123", "0.001"));
  EXPECT_EQ(got["s3"], P("200", ""));
  EXPECT_TRUE(TsNonDecreasing(*t));
}

TEST_F(InputRulesTest, BaseTimeNanosecondsWithFloatTs) {
  const std::string in = Rule("base_time_float_ts.json");
  Run run = Convert({in});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  auto t = OnlyTrace(run);
  ASSERT_NE(t, nullptr);
  std::map<std::string, std::pair<std::string, std::string>> got;
  for (const auto& e : t->events)
    if (e.ph != "M") got[e.name] = {e.ts, e.dur};
  using P = std::pair<std::string, std::string>;
  // 1711964646000000000 ns + 4458676522690.655 us, digit for digit.
  EXPECT_EQ(got["DivBackward1"], P("1716423322522690.655", "156.777"));
  EXPECT_EQ(got["int_ts"], P("1716423322522700", "3"));
  // 4458676522800.0005 us: the 4th fraction digit rounds half away from zero;
  // dur 0.0004 us rounds to 0.
  EXPECT_EQ(got["four_fraction_digits"], P("1716423322522800.001", "0"));
  EXPECT_EQ(got["exponent"], P("1716423322522900", ""));
  // The same, computed by python3 from the input text.
  InputFacts f = Facts(in, /*with_times=*/true);
  std::vector<std::string> want = f.times, have;
  for (const auto& e : t->events)
    if (e.ph != "M") have.push_back(TimeKey(e));
  std::sort(want.begin(), want.end());
  std::sort(have.begin(), have.end());
  EXPECT_EQ(have, want);
}

TEST_F(InputRulesTest, TolerantPathKeepsTopLevelKeysAfterTraceEvents) {
  // An invalid UTF-8 byte sends the file down the tolerant path; the keys
  // after traceEvents (rank, devices, time base) must still apply.
  Run run = Convert({Rule("tolerant_path_top_level_keys.json")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  // 4 deviceProperties -> 4 GPUs per node: rank 2 -> gpu2.
  EXPECT_THAT(ListDir(run.out_dir), ElementsAre("gpu2.trace.json", "manifest.json"));
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_EQ(run.manifest->Int("/inputs/0/rank"), 2);
  EXPECT_EQ(run.manifest->Int("/gpus_per_node"), 4);
  auto t = LoadTrace(run.Output("gpu2.trace.json"));
  ASSERT_NE(t, nullptr);
  auto bad = t->Named(std::string("bad") + kReplacement);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0]->ts, "1716423322522690.655");
  EXPECT_EQ(bad[0]->dur, "156.777");
}

TEST_F(InputRulesTest, EqualTsTieBreak) {
  // At equal ts: E first, then X by longer dur, then input order; metadata first.
  Run run = Convert({Rule("equal_ts_tie_break.json")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  auto t = OnlyTrace(run);
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(TimedNames(*t), ElementsAre("early", "end", "long", "short", "b1", "inst", "zero"));
  EXPECT_TRUE(TsNonDecreasing(*t));
  EXPECT_EQ(t->events.front().ph, "M");
}

// ---- ranks ----

TEST_F(InputRulesTest, MissingRankIsKeptUnrankedWithAWarning) {
  // distributedInfo without rank, and no number in the file name.
  const std::string src = DataPath("hta/rank_unavailable/rank_not_found.json.gz");
  InputFacts f = Facts(src);
  const std::string in = NewDir("plain") + "/rank_not_found.json.gz";
  CopyFileTo(src, in);
  Run run = Convert({in});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(ListDir(run.out_dir), ElementsAre("manifest.json", "unranked.trace.json"));
  ASSERT_NE(run.manifest, nullptr);
  const Manifest& m = *run.manifest;
  EXPECT_TRUE(ManifestBalances(m));
  EXPECT_TRUE(m.IsNull("/inputs/0/rank"));
  EXPECT_GE(m.ArraySize("/inputs/0/warnings"), 1u);
  EXPECT_THAT(m.Json("/inputs/0/warnings"), HasSubstr("rank"));
  EXPECT_EQ(m.Int("/inputs/0/events_written"), f.events);
  auto t = LoadTrace(run.Output("unranked.trace.json"));
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(RanksNamespaced(*t));
  for (const auto& [pid, name] : t->ProcessNames())
    EXPECT_THAT(name, StartsWith(std::string("rank_not_found.json.gz") + kDot));

  // --group-by all: still labelled by its file name, never rank 0.
  Run all = Convert({in, "--group-by", "all"});
  EXPECT_EQ(all.exit_code, 0) << all.err;
  auto ta = LoadTrace(all.Output("all.trace.json"));
  ASSERT_NE(ta, nullptr);
  ASSERT_EQ(ta->inputs.size(), 1u);
  EXPECT_FALSE(ta->inputs[0].rank.has_value());
  for (const auto& [pid, name] : ta->ProcessNames()) EXPECT_THAT(name, Not(StartsWith("rank 0")));

  // --group-by node: unranked inputs have their own output too.
  Run node = Convert({in, "--group-by", "node"});
  EXPECT_EQ(node.exit_code, 0) << node.err;
  EXPECT_THAT(ListDir(node.out_dir), ElementsAre("manifest.json", "unranked.trace.json"));

  // The same bytes named rank-3: rank 3 from the file name.
  const std::string ranked = NewDir("ranked") + "/rank-3.json.gz";
  CopyFileTo(src, ranked);
  Run r3 = Convert({ranked});
  EXPECT_EQ(r3.exit_code, 0) << r3.err;
  EXPECT_THAT(ListDir(r3.out_dir), ElementsAre("gpu3.trace.json", "manifest.json"));
  ASSERT_NE(r3.manifest, nullptr);
  EXPECT_EQ(r3.manifest->Int("/inputs/0/rank"), 3);
  EXPECT_EQ(r3.manifest->Str("/inputs/0/rank_source"), "file name");
  auto t3 = LoadTrace(r3.Output("gpu3.trace.json"));
  ASSERT_NE(t3, nullptr);
  for (const auto& [pid, name] : t3->ProcessNames()) EXPECT_THAT(name, StartsWith(std::string("rank 3") + kDot));
}

TEST_F(InputRulesTest, RankFromFileNamePatterns) {
  // rank-5, rank5, rank_5, worker5 (any case), and a `.5` suffix.
  const std::string dir = NewDir("names");
  const std::vector<std::string> names = {"rank-5.json", "rank5.pt.trace.json", "Rank_5.json",
                                          "WORKER5.json", "profile.5"};
  for (const auto& n : names) CopyFileTo(Rule("single_plain_trace.json"), dir + "/" + n);
  Run run = Convert({dir, "--group-by", "rank"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(ListDir(run.out_dir), ElementsAre("manifest.json", "rank5.trace.json"));
  ASSERT_NE(run.manifest, nullptr);
  ASSERT_EQ(run.manifest->ArraySize("/inputs"), names.size());
  for (const auto& n : names) {
    int i = run.manifest->InputIndex("/" + n);
    ASSERT_GE(i, 0) << n;
    EXPECT_EQ(run.manifest->Int(Manifest::InputPointer(i, "/rank")), 5) << n;
    EXPECT_EQ(run.manifest->Str(Manifest::InputPointer(i, "/rank_source")), "file name") << n;
  }
  auto t = LoadTrace(run.Output("rank5.trace.json"));
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(RanksNamespaced(*t));  // five processes of rank 5, kept apart
}

TEST_F(InputRulesTest, RankPatternOptionNamesTheRank) {
  const std::string in = NewDir("custom") + "/trainer_05.json.gz";
  CopyFileTo(DataPath("hta/rank_unavailable/rank_not_found.json.gz"), in);
  Run run = Convert({in, "--rank-pattern", "trainer_(\\d+)"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_EQ(run.manifest->Int("/inputs/0/rank"), 5);
  EXPECT_THAT(ListDir(run.out_dir), ElementsAre("gpu5.trace.json", "manifest.json"));
}

TEST_F(InputRulesTest, SinglePlainTraceWithoutRankConverts) {
  const std::string in = Rule("single_plain_trace.json");
  Run run = Convert({in});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(ListDir(run.out_dir), ElementsAre("manifest.json", "unranked.trace.json"));
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_TRUE(ManifestBalances(*run.manifest));
  EXPECT_TRUE(run.manifest->IsNull("/inputs/0/rank"));
  EXPECT_GE(run.manifest->ArraySize("/inputs/0/warnings"), 1u);
  auto t = LoadTrace(run.Output("unranked.trace.json"));
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(TimedNames(*t), ElementsAre("step", "step"));
  std::map<int64_t, std::string> names = t->ProcessNames();
  ASSERT_EQ(names.size(), 1u);
  EXPECT_THAT(names.begin()->second, StartsWith(std::string("single_plain_trace.json") + kDot));
  EXPECT_THAT(names.begin()->second, HasSubstr("7"));  // the original pid
}

TEST_F(InputRulesTest, DuplicateRankKeepsBothAndWarns) {
  // HTA's trace_compare: base.json.gz and test.json.gz both claim rank 1.
  const std::string base = DataPath("hta/trace_compare/base/base.json.gz");
  const std::string test = DataPath("hta/trace_compare/test/test.json.gz");
  InputFacts fb = Facts(base), ft = Facts(test);
  Run run = Convert({DataPath("hta/trace_compare")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(ListDir(run.out_dir), ElementsAre("gpu1.trace.json", "manifest.json"));
  ASSERT_NE(run.manifest, nullptr);
  const Manifest& m = *run.manifest;
  EXPECT_TRUE(ManifestBalances(m));
  EXPECT_EQ(m.Int("/totals/events_written"), fb.events + ft.events);
  int ib = m.InputIndex("base.json.gz"), it = m.InputIndex("test.json.gz");
  ASSERT_GE(ib, 0);
  ASSERT_GE(it, 0);
  EXPECT_EQ(m.Int(Manifest::InputPointer(ib, "/rank")), 1);
  EXPECT_EQ(m.Int(Manifest::InputPointer(it, "/rank")), 1);
  // The manifest says so, on both inputs, naming the other file.
  EXPECT_THAT(m.Json(Manifest::InputPointer(ib, "/warnings")), HasSubstr("test.json.gz"));
  EXPECT_THAT(m.Json(Manifest::InputPointer(it, "/warnings")), HasSubstr("base.json.gz"));
  EXPECT_NE(m.Str(Manifest::InputPointer(ib, "/label")), m.Str(Manifest::InputPointer(it, "/label")));
  EXPECT_EQ(m.Json("/outputs/0/ranks"), "[1]");
  auto t = LoadTrace(run.Output("gpu1.trace.json"));
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->inputs.size(), 2u);
  EXPECT_TRUE(RanksNamespaced(*t));
  EXPECT_TRUE(TsNonDecreasing(*t));
  EXPECT_EQ(static_cast<int64_t>(t->events.size() - t->CountPh("M")),
            fb.events + ft.events - fb.by_ph["M"] - ft.by_ph["M"]);
}

// Many inputs claiming one rank: each warning names at most three others
// (3,000 claimants made each name the 2,999 others: a 416 MB manifest).
TEST_F(InputRulesTest, DuplicateRankWarningNamesAtMostThree) {
  const std::string dir = tmp_.Join("dup");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  for (int i = 0; i < 6; ++i)
    WriteFileBytes(dir + "/f" + std::to_string(i) + ".json",
                   "{\"distributedInfo\":{\"rank\":0},\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,"
                   "\"tid\":1,\"ts\":" + std::to_string(1700000000000000 + i) + ",\"dur\":1}]}");
  Run run = Convert({dir});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  const int f0 = run.manifest->InputIndex("f0.json");
  EXPECT_THAT(run.manifest->Json(Manifest::InputPointer(f0, "/warnings")),
              HasSubstr("rank 0 is also claimed by " + dir + "/f1.json, " + dir + "/f2.json, " + dir +
                        "/f3.json and 2 more; each kept as a separate process"));
}

// A file whose name gives a rank is a rank that failed when it holds no
// trace, whatever it holds: "hello" in rank1.json was skipped (exit 0).
TEST_F(InputRulesTest, RankNamedFileHoldingNoTraceIsRejected) {
  const std::string dir = tmp_.Join("job");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  WriteFileBytes(dir + "/rank0.json",
                 "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1700000000000000,\"dur\":1}]");
  WriteFileBytes(dir + "/rank1.json", "hello\n");
  WriteFileBytes(dir + "/notes.txt", "hello\n");
  Run run = Convert({dir});
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_THAT(run.err, HasSubstr(dir + "/rank1.json: at byte 0: unrecognized format (first bytes: 68 65 6c 6c 6f "
                                 "0a) (input rejected)"));
  EXPECT_THAT(run.err, HasSubstr("skipped 1 file: 1 not a trace (" + dir + "/notes.txt)"));
}

TEST_F(InputRulesTest, StringPidsCollidingAcrossRanksGetDistinctPids) {
  Run run = Convert({Rule("string_pids_across_ranks"), "--group-by", "all"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_TRUE(ManifestBalances(*run.manifest));
  auto t = LoadTrace(run.Output("all.trace.json"));
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(RanksNamespaced(*t));
  std::map<std::string, int64_t> pid_of;  // event name -> output pid
  std::map<std::string, std::string> tid_of;
  for (const auto& e : t->events)
    if (e.ph != "M" && e.pid) pid_of[e.name] = *e.pid, tid_of[e.name] = e.tid;
  ASSERT_EQ(pid_of.size(), 8u);
  std::set<int64_t> distinct;
  for (const auto& [name, pid] : pid_of) distinct.insert(pid);
  EXPECT_EQ(distinct.size(), 8u) << "a pid is shared";
  std::map<int64_t, std::string> names = t->ProcessNames();
  EXPECT_EQ(names[pid_of["span0"]], std::string("rank 0") + kDot + "Spans");
  EXPECT_EQ(names[pid_of["span1"]], std::string("rank 1") + kDot + "Spans");
  EXPECT_THAT(names[pid_of["trace1"]], StartsWith(std::string("rank 1") + kDot));
  EXPECT_THAT(names[pid_of["kernel0"]], StartsWith(std::string("rank 0") + kDot));
  // tids are kept as written (they are scoped by pid).
  EXPECT_EQ(tid_of["span1"], R"("PyTorch Profiler")");
  EXPECT_EQ(tid_of["trace0"], R"("")");
  EXPECT_EQ(tid_of["kernel1"], R"("stream 7")");
  EXPECT_EQ(tid_of["op0"], "4037");
}

// ---- ids ----

// Groups events by id: for each distinct id (within one kind, "id" or
// "bind_id"), the sorted "ph|ts" of its events; returns the sorted groups.
std::vector<std::vector<std::string>> IdGroups(
    const std::vector<std::array<std::string, 4>>& rows) {
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> groups;
  for (const auto& r : rows) groups[{r[0], r[3]}].push_back(r[1] + "|" + r[2]);
  std::vector<std::vector<std::string>> out;
  for (auto& [key, g] : groups) {
    std::sort(g.begin(), g.end());
    out.push_back(g);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(InputRulesTest, DuplicateFlowIdsKeepTheirGrouping) {
  // HTA's negative_queue_length_values_check: 49 flow ids used more than once.
  const std::string in = DataPath("hta/negative_queue_length_values_check/rank0.json.gz");
  InputFacts f = Facts(in, /*with_times=*/false, /*with_ids=*/true);
  ASSERT_GT(f.ids.size(), 40000u);
  Run run = Convert({in, "--group-by", "all"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_TRUE(ManifestBalances(*run.manifest));
  EXPECT_EQ(f.empty_process_meta, 21);
  EXPECT_EQ(run.manifest->Int("/inputs/0/events_written"), f.Written());
  auto t = LoadTrace(run.Output("all.trace.json"));
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(TsNonDecreasing(*t));
  std::vector<std::array<std::string, 4>> out_rows;
  for (const auto& e : t->events) {
    if (e.ph == "M") continue;
    if (!e.id.empty()) out_rows.push_back({"id", e.ph, e.ts, e.id});
    if (!e.bind_id.empty()) out_rows.push_back({"bind_id", e.ph, e.ts, e.bind_id});
  }
  ASSERT_EQ(out_rows.size(), f.ids.size());
  // Renamed, but the same events share an id as before: duplicates included.
  auto want = IdGroups(f.ids), got = IdGroups(out_rows);
  EXPECT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want) << "flow id grouping changed";
  size_t dup_groups = 0;
  for (const auto& g : want) {
    size_t f_count = std::count_if(g.begin(), g.end(), [](const std::string& s) { return s[0] == 'f'; });
    dup_groups += f_count > 1;
  }
  EXPECT_EQ(dup_groups, 49u);
}

TEST_F(InputRulesTest, EveryPhasePassesThrough) {
  const std::string in = Rule("every_phase.json");
  InputFacts f = Facts(in, /*with_times=*/false, /*with_ids=*/true);
  Run run = Convert({in});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_EQ(run.manifest->Int("/inputs/0/events_written"), f.events);
  auto t = OnlyTrace(run);
  ASSERT_NE(t, nullptr);
  for (const auto& [ph, n] : f.by_ph) {
    if (ph == "M") continue;
    EXPECT_EQ(static_cast<int64_t>(t->CountPh(ph)), n) << "phase " << ph;
  }
  std::vector<std::array<std::string, 4>> out_rows;
  for (const auto& e : t->events)
    if (!e.id.empty()) out_rows.push_back({"id", e.ph, e.ts, e.id});
  EXPECT_EQ(IdGroups(out_rows), IdGroups(f.ids));
  // The thread_name metadata of the input is kept.
  EXPECT_EQ(t->Named("thread_name").size(), 1u);
}

TEST_F(InputRulesTest, IntegersBeyondInt64InArgsAreCopiedVerbatim) {
  Run run = Convert({Rule("bigint_args.json")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_EQ(run.manifest->Int("/inputs/0/events_written"), 3);
  EXPECT_EQ(run.manifest->Int("/inputs/0/events_dropped"), 0);
  auto t = OnlyTrace(run);
  ASSERT_NE(t, nullptr);
  auto big = t->Named("big");
  ASSERT_EQ(big.size(), 1u);
  EXPECT_EQ(big[0]->args,
            R"({"Ev Idx":18446744073709551616,"neg":-9223372036854775809,)"
            R"("huge":123456789012345678901234567890,"frac":1.000000000000000000001})");
  auto flow = t->Named("flow");
  ASSERT_EQ(flow.size(), 2u);
  EXPECT_FALSE(flow[0]->id.empty());
  EXPECT_EQ(flow[0]->id, flow[1]->id);
}

// ---- JSON Object Format ----

TEST_F(InputRulesTest, ObjectFormatTopLevelKeysKeptInAnyOrder) {
  // Keys before and after traceEvents; distributedInfo comes last, so the rank
  // is known only at the end of the file.
  const std::string in = Rule("object_format_key_order.json");
  Run run = Convert({in});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  // gpus-per-node defaults to the 2 deviceProperties entries: rank 3 -> gpu1.
  EXPECT_THAT(ListDir(run.out_dir), ElementsAre("gpu1.trace.json", "manifest.json"));
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_EQ(run.manifest->Int("/inputs/0/rank"), 3);
  EXPECT_EQ(run.manifest->Str("/inputs/0/rank_source"), "distributedInfo");
  EXPECT_EQ(run.manifest->Int("/inputs/0/world_size"), 4);
  EXPECT_EQ(run.manifest->Int("/gpus_per_node"), 2);
  auto t = LoadTrace(run.Output("gpu1.trace.json"));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->display_time_unit, "ns");
  ASSERT_EQ(t->inputs.size(), 1u);
  // otherData.inputs[0].metadata: every other top-level key, in input order,
  // with its value.
  simdjson::dom::parser p1, p2;
  simdjson::dom::element meta, whole;
  ASSERT_EQ(p1.parse(t->inputs[0].metadata).get(meta), simdjson::SUCCESS) << t->inputs[0].metadata;
  ASSERT_EQ(p2.load(in).get(whole), simdjson::SUCCESS);
  std::vector<std::string> keys, want_keys;
  for (auto [k, v] : simdjson::dom::object(meta)) keys.emplace_back(k);
  for (auto [k, v] : simdjson::dom::object(whole)) {
    if (k == "traceEvents") continue;
    want_keys.emplace_back(k);
    simdjson::dom::element got;
    ASSERT_EQ(meta[k].get(got), simdjson::SUCCESS) << k;
    EXPECT_EQ(simdjson::to_string(got), simdjson::to_string(v)) << k;
  }
  EXPECT_EQ(keys, want_keys);
  EXPECT_THAT(keys, ElementsAre("schemaVersion", "deviceProperties", "displayTimeUnit", "custom_list",
                                "otherData", "distributedInfo", "traceName"));
}

TEST_F(InputRulesTest, DisplayTimeUnitIsCarriedToTheOutput) {
  Run ns = Convert({Rule("display_time_unit.json")});
  EXPECT_EQ(ns.exit_code, 0) << ns.err;
  auto t = OnlyTrace(ns);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->display_time_unit, "ns");
  EXPECT_THAT(t->top_level_keys, ::testing::Contains("traceEvents"));
  EXPECT_THAT(t->top_level_keys, ::testing::Contains("otherData"));
  // Without one: the Trace Event Format default, "ms".
  Run def = Convert({Rule("single_plain_trace.json")});
  auto d = OnlyTrace(def);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->display_time_unit, "ms");
}

}  // namespace
}  // namespace tracemill::testing
