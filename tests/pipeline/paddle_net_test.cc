// Issue 25: Paddle network logs (`net/<name>.<trainer>`) in `tracemill
// convert`, end to end through the real binary, on tests/data/paddle-net
// (its PROVENANCE.md cites the reader's parsing code the logs follow) and
// the profiles of tests/data/paddle-csp/small. `tracemill csp`'s side is in
// tests/csp/csp_net_test.cc.
#include <sys/stat.h>

#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/convert_harness.h"

namespace tracemill::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class NetLogTest : public ConvertTest {
 protected:
  // A Paddle job: profiles of ranks 0 and 8 (trainers 0 and 1 with 8 GPUs
  // each) and the two trainers' network logs.
  std::string Job() {
    const std::string job = tmp_.Join("job" + std::to_string(jobs_++));
    for (const char* d : {"", "/profile", "/net"}) EXPECT_EQ(::mkdir((job + d).c_str(), 0755), 0);
    for (const char* r : {"0", "8"})
      CopyFileTo(DataPath(std::string("paddle-csp/small/data/profile/profile.") + r), job + "/profile/profile." + r);
    for (const char* n : {"net.0", "net.1"}) CopyFileTo(DataPath(std::string("paddle-net/job/net/") + n), job + "/net/" + n);
    return job;
  }
  int jobs_ = 0;
};

TEST_F(NetLogTest, TwoTrainersAreCountersOnTheirFirstGpu) {
  Run run = Convert({Job(), "--gpus-per-node", "8"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_TRUE(ManifestBalances(*run.manifest));
  EXPECT_THAT(ListDir(run.out_dir), ElementsAre("gpu0.trace.json", "manifest.json"));
  const Manifest& m = *run.manifest;
  const int n0 = m.InputIndex("net/net.0"), n1 = m.InputIndex("net/net.1");
  ASSERT_GE(n0, 0);
  ASSERT_GE(n1, 0);
  EXPECT_EQ(m.Str(Manifest::InputPointer(n1, "/format")), "paddle_net_log");
  EXPECT_EQ(m.Int(Manifest::InputPointer(n0, "/rank")), 0);
  EXPECT_EQ(m.Int(Manifest::InputPointer(n1, "/rank")), 8);
  EXPECT_EQ(m.Str(Manifest::InputPointer(n1, "/rank_source")), "file name (trainer 1 x 8 GPUs per node)");
  EXPECT_EQ(m.Int(Manifest::InputPointer(n0, "/events_written")), 4);
  EXPECT_EQ(m.Int(Manifest::InputPointer(n1, "/events_written")), 3);
  // Not a second claim on rank 8: no duplicate-rank warning.
  EXPECT_THAT(m.Json("/inputs"), Not(HasSubstr("also claimed")));
  auto t = LoadTrace(run.Output("gpu0.trace.json"));
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(RanksNamespaced(*t));
  auto names = t->ProcessNames();
  std::map<std::string, std::vector<std::string>> by_process;  // process name -> counters
  for (const auto& e : t->events)
    if (e.ph == "C" && (e.name == "tx" || e.name == "rx"))
      by_process[names[*e.pid]].push_back(e.name + " " + e.ts + " " + e.args);
  EXPECT_EQ(by_process,
            (std::map<std::string, std::vector<std::string>>{
                {std::string("rank 0 (trainer 0)") + kLabelDot + "network",
                 {R"(tx 1700000000000500 {"bytes":1048576})", R"(rx 1700000000000500 {"bytes":524288})",
                  R"(tx 1700000000010123.457 {"bytes":2097152})", R"(rx 1700000000010123.457 {"bytes":1048576})"}},
                {std::string("rank 8 (trainer 1)") + kLabelDot + "network",
                 {R"(tx 1700000000001000 {"bytes":4096})", R"(rx 1700000000001000 {"bytes":8192})",
                  R"(tx 1700000000011000.001 {"bytes":0})"}},
            }));
  // --group-by node: each trainer's counters with its own node.
  Run nodes = Convert({Job(), "--gpus-per-node", "8", "--group-by", "node"});
  EXPECT_EQ(nodes.exit_code, 0) << nodes.err;
  EXPECT_THAT(ListDir(nodes.out_dir), ElementsAre("manifest.json", "node0.trace.json", "node1.trace.json"));
}

TEST_F(NetLogTest, MalformedLinesAreDroppedAndCountedWithFileAndLine) {
  const std::string in = DataPath("paddle-net/malformed/net/net.1");
  Run run = Convert({in, "--gpus-per-node", "4"});
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_THAT(run.err, HasSubstr("tracemill: " + in + ": at byte 71: net: net.1:2: not valid JSON"));
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_TRUE(ManifestBalances(*run.manifest));
  EXPECT_EQ(run.manifest->Int("/inputs/0/rank"), 4);
  EXPECT_EQ(run.manifest->Int("/inputs/0/events_read"), 8);
  EXPECT_EQ(run.manifest->Int("/inputs/0/events_written"), 3);
  EXPECT_EQ(run.manifest->Json("/inputs/0/dropped_by_reason"),
            R"({"truncated":1,"malformed":1,"missing_ts":1,"bad_ts":1,"bad_net_sample":1})");
  EXPECT_EQ(run.manifest->Int("/inputs/0/error/byte_offset"), 71);
  EXPECT_EQ(run.manifest->Str("/inputs/0/error/message"), "net: net.1:2: not valid JSON");
}

}  // namespace
}  // namespace tracemill::testing
