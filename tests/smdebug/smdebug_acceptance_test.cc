// Acceptance of issue 4 on smdebug's own test resources (tests/data/smdebug,
// PROVENANCE.md there): each expected number is what smdebug's reader
// returns for the same files and window (its tests, or measured with it).
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/smdebug/smdebug_test_util.h"

namespace tracemill::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class SmdebugAcceptance : public SmdebugConvertTest {};

std::vector<const OutEvent*> Timed(const OutputTrace& t, std::string_view ph) {
  std::vector<const OutEvent*> v;
  for (const auto& e : t.events)
    if (e.ph == ph) v.push_back(&e);
  return v;
}

// Every E closes an open B of its pid/tid, in output order.
::testing::AssertionResult EveryEndPaired(const OutputTrace& t) {
  std::map<std::pair<int64_t, std::string>, int> open;
  size_t ends = 0;
  for (const auto& e : t.events) {
    auto key = std::make_pair(e.pid.value_or(-1), e.tid);
    if (e.ph == "B") ++open[key];
    if (e.ph != "E") continue;
    ++ends;
    if (open[key]-- <= 0) return ::testing::AssertionFailure() << "unpaired E at ts " << e.ts;
  }
  if (ends == 0) return ::testing::AssertionFailure() << "no E events";
  return ::testing::AssertionSuccess();
}

// smdebug test_LocalMetricsReader: get_events(1589930980, 1589930995, SECONDS) -> 4.
TEST_F(SmdebugAcceptance, TestTracesFrameworkWindow) {
  auto t = ConvertAll({DataPath("smdebug/test_traces"), "--no-system-metrics", "--start", "1589930980000000",
                       "--end", "1589930995000000"});
  ASSERT_TRUE(t);
  auto x = Timed(*t, "X");
  ASSERT_EQ(x.size(), 4u);
  EXPECT_EQ(NonMeta(*t), 4u);
  // start = the file's start_time_since_epoch_in_micros + ts, exactly.
  EXPECT_EQ(x[0]->ts, "1589930988663519");
  EXPECT_EQ(x[3]->ts, "1589930991672308");
  EXPECT_EQ(x[0]->name, "event1");
}

// test_LocalMetricsReader_Model_timeline: 54 events, the first from node 0001.
TEST_F(SmdebugAcceptance, ModelTimelineWindow) {
  auto t = ConvertAll({DataPath("smdebug/model_timeline_traces"), "--start", "1590461127873222", "--end",
                       "1590461139949971"});
  ASSERT_TRUE(t);
  auto x = Timed(*t, "X");
  EXPECT_EQ(x.size(), 54u);
  EXPECT_EQ(NonMeta(*t), 54u);
  ASSERT_FALSE(x.empty());
  EXPECT_THAT(t->ProcessNames()[*x[0]->pid], StartsWith("rank 1 (0001) \xC2\xB7 "));
  // Three files, pid 1 meaning DataIterator in one and NcclManager in another:
  // one process per phase.
  int phases = 0;
  for (const auto& [pid, name] : t->ProcessNames()) phases += name == "rank 1 (0001) \xC2\xB7 DataIterator" ||
                                                                name == "rank 1 (0001) \xC2\xB7 NcclManager";
  EXPECT_EQ(phases, 2);
  EXPECT_EQ(last_.manifest->Int("/totals/dropped_by_reason/window"), 109 - 54);
}

// test_LocalMetricsReader_Horovod_timeline: 15 events. smdebug keeps only
// complete events; the window also holds the 4 NEGOTIATE_ALLREDUCE `B`s that
// are never closed (drawn to the input's end, so they overlap), which we keep.
TEST_F(SmdebugAcceptance, HorovodTimelineWindow) {
  auto t = ConvertAll({DataPath("smdebug/horovod_timeline_traces"), "--start", "1593673051472800", "--end",
                       "1593673051473100"});
  ASSERT_TRUE(t);
  EXPECT_EQ(Timed(*t, "X").size(), 15u);
  EXPECT_EQ(Timed(*t, "B").size(), 4u);
  EXPECT_EQ(Timed(*t, "E").size(), 0u);
  // The two nameless E with no open B are surplus: counted, not fatal.
  EXPECT_EQ(last_.manifest->Int("/totals/dropped_by_reason/unmatched_end"), 2);
}

// test_MetricsReader_TFProfiler_timeline: 798, placed at the .metadata start.
TEST_F(SmdebugAcceptance, TfProfilerTrace) {
  auto t = ConvertAll({DataPath("smdebug/tfprofiler_timeline_traces")});
  ASSERT_TRUE(t);
  auto x = Timed(*t, "X");
  EXPECT_EQ(x.size(), 798u);
  int64_t lo = INT64_MAX;
  for (auto* e : x) lo = std::min(lo, *MicrosToNanos(e->ts));
  EXPECT_EQ(lo, 1596659864566410000);  // 1596659864545103 + 21.307 ms, smdebug's span start
  EXPECT_THAT(t->ProcessNames().begin()->second, StartsWith("80807-8c859046be41.ant.amazon.com \xC2\xB7 "));
}

// Without a marker, times stay relative (smdebug: node "", start 0) and we say so.
TEST_F(SmdebugAcceptance, TfProfilerTraceWithoutMarker) {
  auto t = ConvertAll({DataPath("smdebug/tfprofiler_local_missing_metadata")});
  ASSERT_TRUE(t);
  EXPECT_EQ(Timed(*t, "X").size(), 256u);
  EXPECT_THAT(last_.manifest->Json("/inputs/0/warnings"), HasSubstr("times kept relative"));
}

// test_SystemLocalMetricsReader: (1591100000, 1692300000) s -> 78, cpu -> 68.
TEST_F(SmdebugAcceptance, SystemMetricsWindow) {
  auto t = ConvertAll({DataPath("smdebug/test_traces/system"), "--start", "1591100000000000", "--end",
                       "1692300000000000"});
  ASSERT_TRUE(t);
  auto c = Timed(*t, "C");
  EXPECT_EQ(c.size(), 78u);
  int cpu = 0;
  for (auto* e : c) cpu += e->name.rfind("cpu", 0) == 0;
  EXPECT_EQ(cpu, 68);
  // Narrower windows of the same test: 10 and 32 samples.
  auto t2 = ConvertAll({DataPath("smdebug/test_traces/system"), "--start", "1591100000000000", "--end",
                        "1591167699000000"});
  ASSERT_TRUE(t2);
  EXPECT_EQ(t2->CountPh("C"), 10u);
  auto t3 = ConvertAll({DataPath("smdebug/test_traces/system"), "--start", "1591748165000000", "--end",
                        "1600000000000000"});
  ASSERT_TRUE(t3);
  EXPECT_EQ(t3->CountPh("C"), 32u);
}

// test_system_profiler_file_parser, "normal exit": the torn last line is a
// warning; 13 samples kept; exit 0.
TEST_F(SmdebugAcceptance, TornSystemMetricsKeeps13) {
  auto t = ConvertAll({DataPath("smdebug/1591160699.algo-1.json.corrupt")});
  ASSERT_TRUE(t);
  EXPECT_EQ(t->CountPh("C"), 13u);
  EXPECT_EQ(last_.manifest->Str("/inputs/0/format"), "smdebug_system_metrics");
  EXPECT_EQ(last_.manifest->Int("/inputs/0/dropped_by_reason/truncated"), 1);
  EXPECT_TRUE(last_.manifest->IsNull("/inputs/0/error"));
  EXPECT_THAT(last_.manifest->Json("/inputs/0/warnings"), HasSubstr(":14: last line cut off"));
}

// test_timeline_merge: merge_timeline(1594662618874598, 1594662623418701) -> 15 + 216 = 231.
TEST_F(SmdebugAcceptance, MergeTracesByTime) {
  auto t = ConvertAll({DataPath("smdebug/merge_traces"), "--start", "1594662618874598", "--end",
                       "1594662623418701"});
  ASSERT_TRUE(t);
  EXPECT_EQ(Timed(*t, "X").size(), 231u);
  EXPECT_EQ(NonMeta(*t), 231u);
}

// test_timeline_merge_by_step: steps 2..4. smdebug resolves end step 4 to
// "start of step 4 minus 1 µs" (half-open: 1594662617507447..1594662617676640,
// 22 events), while its get_events treats the end as inclusive; we take the
// end step inclusively, to the end of step 4 (1594662617760868: 33 events,
// every event of steps 2, 3 and 4). Both numbers are checked here.
TEST_F(SmdebugAcceptance, MergeTracesBySteps) {
  auto t = ConvertAll({DataPath("smdebug/merge_traces"), "--start-step", "2", "--end-step", "4"});
  ASSERT_TRUE(t);
  EXPECT_EQ(Timed(*t, "X").size(), 33u);
  int steps = 0;
  for (auto* e : Timed(*t, "X")) steps += e->name == "Step:ModeKeys.TRAIN";
  EXPECT_EQ(steps, 3);  // steps 2, 3 and 4; EVAL steps (numbered from 0 too) are not markers
  auto half_open = ConvertAll({DataPath("smdebug/merge_traces"), "--start", "1594662617507447", "--end",
                               "1594662617676640"});
  ASSERT_TRUE(half_open);
  EXPECT_EQ(Timed(*half_open, "X").size(), 22u);
}

// Raw Horovod (smdebug's copy) and Bluefog timelines: unclosed arrays,
// nameless E, every E paired.
TEST_F(SmdebugAcceptance, HorovodAndBluefogEveryEndPaired) {
  for (std::string f : {"smdebug/horovod_timeline_small.json", "bluefog/timeline_temp3.json"}) {
    auto t = ConvertAll({DataPath(f)});
    ASSERT_TRUE(t) << f;
    EXPECT_TRUE(EveryEndPaired(*t)) << f;
    for (auto* e : Timed(*t, "E")) EXPECT_FALSE(e->name.empty()) << f;
  }
}

// Issue 40, point 3: a SageMaker job's nodes were not nodes: every event in
// one unranked.trace.json (even with --group-by node), the report's cards
// 0 ranks, 0 nodes, 0 GPUs, and a host's framework files (`<pid>-algo-1`)
// and its system files (`algo-1`) two clock domains ("4 nodes" for 2).
// Host algo-n is node n - 1 now, on its first GPU (rank (n - 1) x GPUs per
// node), its framework and system files one node.
TEST_F(SmdebugAcceptance, SageMakerHostsAreNodes) {
  Run run = Convert({DataPath("rules/smdebug_algo_names"), "--group-by", "node"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, StartsWith("tracemill: clocks: not aligned: no collective operations in any of the 2 nodes' "
                                  "lowest ranks"));
  ASSERT_NE(run.manifest, nullptr);
  const std::vector<std::pair<std::string, int64_t>> want = {
      {"framework [node 1234-algo-1]", 0}, {"framework [node 5678-algo-2]", 8},
      {"system [node algo-1]", 0}, {"system [node algo-2]", 8}};
  for (const auto& [path, rank] : want) {
    const int i = run.manifest->InputIndex(path);
    EXPECT_EQ(run.manifest->Int(Manifest::InputPointer(i, "/rank")), rank) << path;
    EXPECT_EQ(run.manifest->Str(Manifest::InputPointer(i, "/output")), rank ? "node1.trace.json" : "node0.trace.json");
    EXPECT_EQ(run.manifest->Str(Manifest::InputPointer(i, "/rank_source")),
              "SageMaker host algo-" + std::to_string(rank / 8 + 1) + " (node " + std::to_string(rank / 8) +
                  " x 8 GPUs per node)");
  }
  auto node1 = LoadTrace(run.Output("node1.trace.json"));
  ASSERT_TRUE(node1);
  std::set<std::string> names;
  for (const auto& [pid, name] : node1->ProcessNames()) names.insert(name);
  EXPECT_TRUE(names.count("rank 8 (5678-algo-2) \xC2\xB7 Step:ModeKeys.TRAIN")) << ::testing::PrintToString(names);
  EXPECT_TRUE(names.count("rank 8 (algo-2) \xC2\xB7 system metrics")) << ::testing::PrintToString(names);
  const std::string report = ReadFileBytes(run.Output("report.html"));
  EXPECT_THAT(report, HasSubstr("id=\"card-ranks\" data-value=\"2\""));
  EXPECT_THAT(report, HasSubstr("id=\"card-nodes\" data-value=\"2\""));
}

}  // namespace
}  // namespace tracemill::testing
