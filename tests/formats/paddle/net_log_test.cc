// formats/paddle/net_log: Paddle network logs line by line (issue 25), on
// the hand-written fixtures of tests/data/paddle-net (PROVENANCE.md there).
#include "formats/paddle/net_log.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "formats/common/trace_data.h"
#include "formats/paddle/net_log_format.h"
#include "tests/testing/convert_harness.h"

namespace tracemill::formats {
namespace {

using ::tracemill::testing::DataPath;
using ::tracemill::testing::ReadFileBytes;

std::vector<std::string> NetSamples(const NetLogFile& f) {
  std::vector<std::string> v;
  for (const NetSample& s : f.samples)
    v.push_back(std::string(NetDirectionName(s.dir)) + " " + std::to_string(s.ts_ns) + " line " +
                std::to_string(s.line) + " " + std::string(f.args(s)));
  return v;
}

TEST(NetLog, TwoTrainersExactNanoseconds) {
  NetLogFile f0 = ParseNetLog("net.0", ReadFileBytes(DataPath("paddle-net/job/net/net.0")));
  EXPECT_TRUE(f0.report.status.ok()) << f0.report.status;
  EXPECT_EQ(f0.report.events_read, 4u);
  EXPECT_EQ(f0.report.dropped.Total(), 0u);
  EXPECT_EQ(NetSamples(f0), (std::vector<std::string>{
                             "tx 1700000000000500000 line 1 {\"bytes\":1048576}",
                             "rx 1700000000000500000 line 2 {\"bytes\":524288}",
                             "tx 1700000000010123457 line 3 {\"bytes\":2097152}",
                             "rx 1700000000010123457 line 4 {\"bytes\":1048576}",
                         }));
  // A blank line is skipped, not counted.
  NetLogFile f1 = ParseNetLog("net.1", ReadFileBytes(DataPath("paddle-net/job/net/net.1")));
  EXPECT_EQ(f1.report.events_read, 3u);
  EXPECT_EQ(NetSamples(f1), (std::vector<std::string>{
                             "tx 1700000000001000000 line 1 {\"bytes\":4096}",
                             "rx 1700000000001000000 line 3 {\"bytes\":8192}",
                             "tx 1700000000011000001 line 4 {\"bytes\":0}",
                         }));
}

TEST(NetLog, BadLinesAreDroppedByReasonAndTheFirstIsTheError) {
  NetLogFile f = ParseNetLog("net.1", ReadFileBytes(DataPath("paddle-net/malformed/net/net.1")));
  const DecodeReport& r = f.report;
  EXPECT_EQ(r.events_read, 8u);
  EXPECT_EQ(f.samples.size(), 3u);
  EXPECT_EQ(r.dropped[DropReason::kMalformed], 1u);       // line 2: `tx 1700000000003 200`
  EXPECT_EQ(r.dropped[DropReason::kBadNetSample], 1u);    // line 4: name "tcp"
  EXPECT_EQ(r.dropped[DropReason::kBadTs], 1u);           // line 5: "soon"
  EXPECT_EQ(r.dropped[DropReason::kMissingTs], 1u);       // line 6
  EXPECT_EQ(r.dropped[DropReason::kTruncated], 1u);       // line 8, cut by the writer's end
  EXPECT_EQ(r.status, absl::DataLossError("net: net.1:2: not valid JSON"));
  EXPECT_EQ(r.error_offset, 71u);  // the first line is 70 bytes and a newline
  EXPECT_EQ(r.warnings, (std::vector<std::string>{
                            "net.1:7: keys other than name, ph, ts and args are ignored (\"cat\", and maybe others)",
                            "net.1:8: last line cut off (the writer was stopped); ignored"}));
}

TEST(NetLog, RecognizedByItsFirstLine) {
  EXPECT_TRUE(LooksLikeNetLog("{\"name\": \"rx\", \"ts\": 1}\n{}"));
  EXPECT_TRUE(LooksLikeNetLog("{\"ts\": \"1.5\", \"ph\": \"C\", \"name\": \"tx\"}"));
  EXPECT_FALSE(LooksLikeNetLog("{\"name\": \"tcp\", \"ts\": 1}\n"));      // not tx/rx
  EXPECT_FALSE(LooksLikeNetLog("{\"name\": \"tx\", \"time\": 1}\n"));     // no ts
  EXPECT_FALSE(LooksLikeNetLog("{\"time\": 0.5, \"kind\": \"exec\"}\n"));  // a run event log
}

TEST(NetLog, ConvertMappingIsCountersOnTheNetworkProcess) {
  const std::string text = ReadFileBytes(DataPath("paddle-net/job/net/net.1"));
  TraceBuilder b;
  DecodeReport r = DecodeNetLogToTrace("net.1", text, &b);
  auto t = b.Finish();
  EXPECT_TRUE(r.status.ok());
  EXPECT_TRUE(t->meta.name_number_is_trainer);
  ASSERT_EQ(t->processes.size(), 1u);
  EXPECT_EQ(t->processes[0].pid_token, "\"network\"");
  ASSERT_EQ(t->events.size(), 3u);
  const Event& e = t->events[2];
  EXPECT_EQ(e.phase, 'C');
  EXPECT_EQ(t->strings[e.name], "tx");
  EXPECT_EQ(e.ts_ns, 1700000000011000001);
  EXPECT_EQ(std::string_view(e.rest, e.rest_len), "\"args\":{\"bytes\":0}");
}

}  // namespace
}  // namespace tracemill::formats
