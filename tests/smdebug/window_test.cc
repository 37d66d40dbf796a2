// Issue 4 behaviours beyond the acceptance numbers: window flags for every
// format, step windows, smdebug folder rules, system-metrics options.
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/smdebug/smdebug_test_util.h"

namespace tracemill::testing {
namespace {

using ::testing::HasSubstr;

class WindowTest : public SmdebugConvertTest {};

// A Kineto-style trace with ProfilerStep#1..#3 (10 µs each from 1000 µs) and
// one kernel per step.
std::string KinetoSteps() {
  std::string s = R"({"distributedInfo":{"rank":0},"traceEvents":[)";
  for (int k = 1; k <= 3; ++k) {
    int64_t ts = 1000 + (k - 1) * 10;
    s += "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#" + std::to_string(k) +
         "\",\"pid\":1,\"tid\":1,\"ts\":" + std::to_string(ts) + ",\"dur\":10},";
    s += "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k" + std::to_string(k) + "\",\"pid\":2,\"tid\":7,\"ts\":" +
         std::to_string(ts + 2) + ",\"dur\":3},";
  }
  s += R"({"ph":"i","name":"mark","pid":1,"tid":1,"ts":1025,"s":"t"}]})";
  return s;
}

TEST_F(WindowTest, IsoBoundsWithZoneEqualMicros) {
  auto t = ConvertAll({DataPath("smdebug/test_traces"), "--no-system-metrics", "--start",
                       "2020-05-19T23:29:40Z", "--end", "2020-05-20T01:29:55+02:00"});
  ASSERT_TRUE(t);
  EXPECT_EQ(NonMeta(*t), 4u);
  auto bad = Tracemill({"convert", DataPath("smdebug/test_traces"), "-o", tmp_.Join("x"), "--start",
                        "2020-05-19T23:29:40"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("with a zone"));
}

TEST_F(WindowTest, StepWindowOverKinetoProfilerSteps) {
  WriteFileBytes(tmp_.Join("rank0.json"), KinetoSteps());
  auto t = ConvertAll({tmp_.Join("rank0.json"), "--start-step", "2", "--end-step", "2"});
  ASSERT_TRUE(t);
  // Step 2 spans 1010..1020 µs: it, its kernel, and steps 1 and 3 (they touch
  // its ends: overlap is inclusive); not kernels 1 and 3 nor the instant.
  std::vector<std::string> names;
  for (const auto& e : t->events)
    if (e.ph != "M") names.push_back(e.name);
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3", "k2"));
  EXPECT_EQ(last_.manifest->Int("/inputs/0/dropped_by_reason/window"), 3);
}

TEST_F(WindowTest, WindowAppliesToEveryFormat) {
  // A run event log (JSON Lines) and a Kineto file in one job.
  WriteFileBytes(tmp_.Join("rank0.json"), KinetoSteps());
  CopyFileTo(DataPath("../../cluster-examples/run-event-log/example.jsonl"), tmp_.Join("run.jsonl"));
  auto t = ConvertAll({tmp_.Join("rank0.json"), tmp_.Join("run.jsonl"), "--start", "1000", "--end", "1009"});
  ASSERT_TRUE(t);
  // Kineto: step 1 (1000..1010) and k1; the run log's times are seconds from 0,
  // so its events are all outside and counted.
  EXPECT_EQ(NonMeta(*t), 2u);
  EXPECT_GT(last_.manifest->Int("/totals/dropped_by_reason/window"), 10);
}

TEST_F(WindowTest, UnknownStepIsAnError) {
  auto r = Tracemill({"convert", DataPath("smdebug/merge_traces"), "-o", tmp_.Join("out"), "--start-step", "2",
                      "--end-step", "99"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--end-step 99: no input has step 99 (steps found: 0..29)"));
  EXPECT_TRUE(ListDir(tmp_.Join("out")).empty());  // no empty trace
}

// When no input could be decoded, the step error says so, rather than that
// the inputs have no step markers (every input was rejected by the decode
// budget in an attack helper's run: "no step markers found" misled).
TEST_F(WindowTest, UnknownStepWhenEveryInputIsRejectedSaysSo) {
  const std::string bad = tmp_.Join("rank0.json");
  WriteFileBytes(bad, std::string("\x00\x01garbage", 9));
  auto r = Tracemill({"convert", bad, "-o", tmp_.Join("out"), "--start-step", "1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("(input rejected)"));
  EXPECT_THAT(r.err, HasSubstr("--start-step 1: no input has step 1 (no input could be decoded: 1 was rejected)"));
}

TEST_F(WindowTest, EmptyWindowIsAValidTraceAndExitZero) {
  auto t = ConvertAll({DataPath("smdebug/merge_traces"), "--start", "1000", "--end", "2000"});
  ASSERT_TRUE(t);
  EXPECT_EQ(NonMeta(*t), 0u);
  // Only the process/thread names are written; every other event is counted.
  EXPECT_EQ(last_.manifest->Int("/totals/events_read"), 716);
  EXPECT_EQ(last_.manifest->Int("/totals/events_written"), 6);
  EXPECT_EQ(last_.manifest->Int("/totals/dropped_by_reason/window"), 702);
  // ... and said (issue 40, point 7): the window is before the job's start.
  const std::string notice =
      "--end 1970-01-01 00:00:00.002000 UTC is before the job's start: no event is in the window (the job's events "
      "span 2020-07-13 17:50:08.090195 UTC .. 2020-07-13 17:50:24.718694 UTC)";
  EXPECT_THAT(last_.err, HasSubstr("tracemill: warning: " + notice));
  EXPECT_THAT(last_.manifest->Str("/notices/0"), HasSubstr(notice));
}

TEST_F(WindowTest, AStartAfterTheJobsEndIsSaid) {
  auto t = ConvertAll({DataPath("smdebug/merge_traces"), "--start", "2030-01-01T00:00:00Z"});
  ASSERT_TRUE(t);
  EXPECT_EQ(NonMeta(*t), 0u);
  EXPECT_EQ(last_.exit_code, 0);
  EXPECT_THAT(last_.err, HasSubstr("tracemill: warning: --start 2030-01-01 00:00:00.000000 UTC is after the job's "
                                   "end: no event is in the window (the job's events span "));
}

// Paddle profiles have no step events: step N is the N-th forward/backward
// pair of pipeline markers (marker/compute/MarkerCUDA, 0-based).
TEST_F(WindowTest, StepWindowOverPaddlePipelineMarkers) {
  const std::string profile = DataPath("paddle-csp/small/data/profile/profile.0");
  auto r = Tracemill({"convert", profile, "-o", tmp_.Join("none"), "--start-step", "10"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--start-step 10: no input has step 10 (steps found: 0..9)"));
  EXPECT_FALSE(std::filesystem::exists(tmp_.Join("none")));  // no empty OUTDIR left behind
  auto t = ConvertAll({profile, "--start-step", "1", "--end-step", "1"});
  ASSERT_TRUE(t);
  EXPECT_EQ(last_.manifest->Int("/totals/events_read"), 2400);
  EXPECT_EQ(last_.manifest->Int("/totals/dropped_by_reason/window"), 2143);
  EXPECT_EQ(NonMeta(*t), 2400u - 2143u);
}

TEST_F(WindowTest, TimeOffsetPlacesMonotonicHorovodOnTheEpoch) {
  auto t = ConvertAll({DataPath("smdebug/horovod_timeline_small.json"), "--time-offset", "1593673051000000.5"});
  ASSERT_TRUE(t);
  auto cycles = t->Named("CYCLE_START");
  ASSERT_FALSE(cycles.empty());
  EXPECT_EQ(cycles[0]->ts, "1593750618277433.5");  // 77567277433 + offset, exactly
  EXPECT_EQ(*cycles[0]->Member("s"), "\"g\"");
}

// Found by fuzzing: an X at the top of the time range (ts = dur = 2^62 - 1 ns)
// and a B at its bottom. The open B spans 2^63 - 2 ns, and the window's
// overlap test and the pairing must not overflow (UBSan in the asan build).
TEST_F(WindowTest, ExtremeTimesNeitherOverflowPairingNorTheWindow) {
  WriteFileBytes(tmp_.Join("edge.json"),
                 "[\n{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":4611686018427387.903,"
                 "\"dur\":4611686018427387.903},\n"
                 "{\"ph\":\"B\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":-4611686018427387.903}\n]\n");
  auto t = ConvertAll({tmp_.Join("edge.json"), "--start", "0"});
  ASSERT_TRUE(t);
  ASSERT_EQ(t->Named("b").size(), 1u);  // spans to the X's end: overlaps [0, max]
  EXPECT_EQ(t->Named("b")[0]->ts, "-4611686018427387.903");
  ASSERT_EQ(t->Named("a").size(), 1u);
  EXPECT_EQ(t->Named("a")[0]->dur, "4611686018427387.903");
  EXPECT_EQ(last_.manifest->Int("/totals/events_read"), 2);
}

// --time-offset pushing a ts out of +-2^62 ns drops the event as bad_ts
// (later sums of ts and dur would overflow), and the job goes on.
TEST_F(WindowTest, TimeOffsetOutOfRangeDropsTheEventAsBadTs) {
  WriteFileBytes(tmp_.Join("edge.json"),
                 "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":4611686018427387.903,\"dur\":1},"
                 "{\"ph\":\"X\",\"name\":\"c\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":1}]");
  auto t = ConvertAll({tmp_.Join("edge.json"), "--time-offset", "0.001"});
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->Named("a").empty());
  ASSERT_EQ(t->Named("c").size(), 1u);
  EXPECT_EQ(t->Named("c")[0]->ts, "5.001");
  EXPECT_EQ(last_.manifest->Int("/totals/dropped_by_reason/bad_ts"), 1);
  // An offset beyond the range of timestamps is a usage error (the sums
  // ts + offset would overflow int64; found by an attack on the window code).
  auto bad = Tracemill({"convert", tmp_.Join("edge.json"), "-o", tmp_.Join("x"), "--time-offset",
                        "-9223372036854775.808"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "tracemill: --time-offset -9223372036854775.808: expected decimal microseconds "
                     "within +-4611686018427387.903\n");
  EXPECT_EQ(Tracemill({"convert", tmp_.Join("edge.json"), "-o", tmp_.Join("y"), "--time-offset",
                       "4611686018427387.904"}).exit_code, 2);
}

// A bad line in the middle of a system-metrics file is an error naming
// file:line; its good lines are kept and the job goes on (exit 3).
TEST_F(WindowTest, BadSystemMetricsLineIsAnErrorWithFileAndLine) {
  std::string dir = tmp_.Join("job/system/incremental/2020060300");
  ASSERT_EQ(0, std::system(("mkdir -p " + dir).c_str()));
  WriteFileBytes(dir + "/1591160699.algo-1.json",
                 "{\"Type\":\"gpu\",\"Name\":\"gpu0\",\"Dimension\":\"GPUUtilization\",\"Value\":10,\"NodeId\":\"algo-1\",\"Timestamp\":1591160699.5}\n"
                 "{\"Type\":\"gpu\",\"Name\":\"gpu0\",\"Dimension\":\"GPUUtilization\",\"Value\":1\n"
                 "{\"Type\":\"gpu\",\"Name\":\"gpu0\",\"Dimension\":\"GPUUtilization\",\"Value\":90,\"NodeId\":\"algo-1\",\"Timestamp\":1591160701.25}\n");
  auto t = ConvertAll({tmp_.Join("job")}, 3);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->CountPh("C"), 2u);
  EXPECT_THAT(last_.err, HasSubstr("1591160699.algo-1.json: at byte 112: system metrics: 1591160699.algo-1.json:2: not a JSON object"));
  // The low interval: from the 10% sample to the next, not-low one.
  auto slices = t->Named("low GPU utilization");
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0]->ts, "1591160699500000");
  EXPECT_EQ(slices[0]->dur, "1750000");
  EXPECT_THAT(t->ProcessNames()[*slices[0]->pid], HasSubstr("rank 0 (algo-1) \xC2\xB7 GPU bottlenecks"));
}

TEST_F(WindowTest, LowGpuThresholdAndNoSystemMetrics) {
  auto count_slices = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {DataPath("smdebug/test_traces")};
    args.insert(args.end(), extra.begin(), extra.end());
    auto t = ConvertAll(args);
    return t ? t->Named("low GPU utilization").size() : 999u;
  };
  EXPECT_EQ(count_slices({}), 2u);
  EXPECT_EQ(count_slices({"--low-gpu-threshold", "0"}), 0u);
  EXPECT_GT(count_slices({"--low-gpu-threshold", "100"}), 0u);
  auto t = ConvertAll({DataPath("smdebug/test_traces"), "--no-system-metrics"});
  ASSERT_TRUE(t);
  EXPECT_EQ(t->CountPh("C"), 0u);
  EXPECT_EQ(NonMeta(*t), 4u);
  EXPECT_THAT(last_.manifest->Json("/inputs"), HasSubstr("skipped: system metrics (--no-system-metrics)"));
  // A loose sample file (outside system/, detected by content) is skipped too.
  t = ConvertAll({DataPath("smdebug/1591160699.algo-1.json"), DataPath("smdebug/test_traces"), "--no-system-metrics"});
  ASSERT_TRUE(t);
  EXPECT_EQ(t->CountPh("C"), 0u);
  EXPECT_EQ(NonMeta(*t), 4u);
}

// Files still being written are skipped with a note; `.metadata` markers are
// not inputs.
TEST_F(WindowTest, TmpFilesSkippedWithANote) {
  std::string dir = tmp_.Join("job/framework/pevents/2020051923");
  ASSERT_EQ(0, std::system(("mkdir -p " + dir).c_str()));
  CopyFileTo(DataPath("smdebug/test_traces/framework/pevents/2020051923/1589930988000000_4487_0000_pythontimeline.json"),
             dir + "/1589930988000000_4487_0000_pythontimeline.json");
  WriteFileBytes(dir + "/1589930999000000_4487_0000_pythontimeline.json.tmp", "[\n{\"name\": \"process_name\",");
  auto t = ConvertAll({tmp_.Join("job")});
  ASSERT_TRUE(t);
  EXPECT_EQ(NonMeta(*t), 1u);
  EXPECT_THAT(last_.manifest->Json("/inputs"), HasSubstr("still writing it (*.tmp)"));
}

// Phases become processes in the order Step, Forward, Backward, DataIterator,
// Dataset, /device, /host, gpu_functions, cpu_functions, Horovod, others,
// whatever pids and file order say; one process per phase across files.
TEST_F(WindowTest, PhaseProcessOrder) {
  std::string dir = tmp_.Join("job/framework/pevents/2020010100");
  ASSERT_EQ(0, std::system(("mkdir -p " + dir).c_str()));
  const std::vector<std::string> phases = {"Other",        "Horovod_allreduce", "cpu_functions", "gpu_functions",
                                           "/host:CPU",    "/device:GPU:0",     "Dataset",       "DataIterator",
                                           "Backward",     "Forward",           "Step:ModeKeys.TRAIN"};
  for (int f = 0; f < 2; ++f) {
    std::string s = "[\n{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"args\": "
                    "{\"start_time_since_epoch_in_micros\": 1577836800000000}},\n";
    for (size_t k = 0; k < phases.size(); ++k) {
      size_t pid = f == 0 ? k + 1 : phases.size() - k;  // pids differ per file
      s += "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": " + std::to_string(pid) +
           ", \"args\": {\"name\": \"" + phases[k] + "\"}},\n";
      s += "{\"name\": \"e\", \"ph\": \"X\", \"pid\": " + std::to_string(pid) + ", \"ts\": " +
           std::to_string(f * 100 + k) + ", \"dur\": 1},\n";
    }
    s += "{\"name\": \"e\", \"ph\": \"X\", \"pid\": 1, \"ts\": 1, \"dur\": 1}\n]\n\n";
    WriteFileBytes(dir + "/157783680" + std::to_string(f) + "000000_7-host_pythontimeline.json", s);
  }
  auto t = ConvertAll({tmp_.Join("job")});
  ASSERT_TRUE(t);
  std::vector<std::string> order;
  for (const auto& [pid, name] : t->ProcessNames()) order.push_back(name.substr(name.find("\xC2\xB7 ") + 3));
  EXPECT_THAT(order, ::testing::ElementsAre("Step:ModeKeys.TRAIN", "Forward", "Backward", "DataIterator",
                                            "Dataset", "/device:GPU:0", "/host:CPU", "gpu_functions",
                                            "cpu_functions", "Horovod_allreduce", "Other"));
  for (const auto& e : t->events) {
    if (e.name == "process_sort_index") {
      EXPECT_EQ(e.args, "{\"sort_index\":" + std::to_string(*e.pid) + "}");
    }
  }
  EXPECT_EQ(NonMeta(*t), 2 * phases.size() + 2);
}

}  // namespace
}  // namespace tracemill::testing
