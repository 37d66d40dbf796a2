// `tracemill csp` against Paddle CrossStackProfiler's own output
// (tests/data/paddle-csp/small, see its PROVENANCE.md): 16 ranks (2 trainers
// x 8 GPUs), 2 DCGM logs, run with --gpus-per-trainer 8 --trainer-num 2
// --group-size 2 --display-size 2. Each traceFile_0_<n>.json is compared
// with the reference as a multiset of events (key order, event order and
// 500 vs 500.0 ignored), allowing exactly the documented deviations; in this
// data only one applies: memory counters are per (rank, place, device) lane
// instead of one total per rank mixed across places.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "tests/csp/test_util.h"

namespace tracemill::testing {
namespace {

const std::string kData = std::string(PADDLE_CSP_DATA) + "/small";

class CspReference : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    out_ = new TempDir;
    result_ = new RunResult(RunTracemill({"csp", "--profile-path", kData + "/data", "--timeline-path",
                                          out_->path(), "--gpus-per-trainer", "8", "--trainer-num",
                                          "2", "--group-size", "2", "--display-size", "2"}));
  }
  static void TearDownTestSuite() {
    delete result_;
    delete out_;
  }
  static std::string Ours(int gpu) { return *out_ / ("traceFile_0_" + std::to_string(gpu) + ".json"); }
  static std::string Reference(int gpu) {
    return Gunzip(ReadFile(kData + "/reference-output/traceFile_0_" + std::to_string(gpu) + ".json.gz"));
  }
  static TempDir* out_;
  static RunResult* result_;
};
TempDir* CspReference::out_ = nullptr;
RunResult* CspReference::result_ = nullptr;

bool IsMemoryCounter(simdjson::dom::element e) {
  return Str(e, "ph") == "C" && Str(e, "cat") == "Memory";
}

TEST_F(CspReference, RunsCleanly) {
  EXPECT_EQ(result_->exit_code, 0) << result_->err;
  std::vector<std::string> files;
  for (int n = 0; n < 8; ++n) files.push_back(Ours(n));
  files.push_back(*out_ / "manifest.json");
  for (const auto& f : files) EXPECT_TRUE(Exists(f)) << f;
  EXPECT_EQ(PythonJsonErrors(files), "");
  // Only the outputs and the manifest: no ./tmp, no log files.
  EXPECT_EQ(ListDir(out_->path()).size(), 10u);  // 8 traces, manifest, report
}

// Everything but the memory counters is identical as a multiset.
TEST_F(CspReference, SameEventsAsTheReference) {
  for (int n = 0; n < 8; ++n) {
    SCOPED_TRACE("traceFile_0_" + std::to_string(n));
    Trace ours(ReadFile(Ours(n)));
    Trace ref(Reference(n));
    std::multiset<std::string> a, b;
    size_t ours_events = 0, ref_events = 0;
    for (auto e : ours.events()) {
      ++ours_events;
      if (!IsMemoryCounter(e)) a.insert(Canonical(e));
    }
    for (auto e : ref.events()) {
      ++ref_events;
      if (!IsMemoryCounter(e)) b.insert(Canonical(e));
    }
    EXPECT_EQ(ours_events, ref_events);
    std::vector<std::string> only_ours, only_ref;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only_ours));
    std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(only_ref));
    EXPECT_EQ(only_ours.size(), 0u) << "first: " << (only_ours.empty() ? "" : only_ours[0]);
    EXPECT_EQ(only_ref.size(), 0u) << "first: " << (only_ref.empty() ? "" : only_ref[0]);
    EXPECT_EQ(a.size(), b.size());
  }
}

// Spot values, so a comparison that passes for the wrong reason cannot hide.
TEST_F(CspReference, KnownValues) {
  Trace t0(ReadFile(Ours(0)));
  std::map<char, int> phases;
  for (auto e : t0.events()) ++phases[Str(e, "ph")[0]];
  EXPECT_EQ(phases['X'], 4040);  // 2 ranks x 2,000 ops + 40 pipeline spans
  EXPECT_EQ(phases['C'], 1200);  // 2 x 400 memory + 2 trainers x 40 samples x 5 metrics
  EXPECT_EQ(phases['M'], 24);
  auto names = ProcessNames(t0);
  EXPECT_EQ(names[0], "01_pipeLineInfo");
  EXPECT_EQ(names[1], "02_gpuUtility");
  EXPECT_EQ(names[5], "06_calUtility");
  EXPECT_EQ(names[8], "09_trainerRank.000:cpu:block:0");
  EXPECT_EQ(names[11], "12_trainerRank.000:cuda_api");
  EXPECT_EQ(names[17], "09_trainerRank.008:cpu:block:0");  // NN restarts per rank, pids do not
  Trace t3(ReadFile(Ours(3)));
  bool found_span = false, found_dcgm = false;
  for (auto e : t3.events()) {
    if (Str(e, "name") == "forward" && Int(e, "tid") == 3 && Int(e, "ts") == 1700000000000043000) {
      found_span = true;
      EXPECT_EQ(Int(e, "pid"), 0);
      EXPECT_EQ(Int(e, "dur"), 160000);
      EXPECT_EQ(Str(e, "cname"), "bad");
    }
    if (Str(e, "name") == "04_memUtility" && Int(e, "ts") == 1700000000000000000 &&
        Str(e, "tid") == "0_0") {
      found_dcgm = true;
      EXPECT_EQ(Num(e["args"].value(), "FB_USED_RATIO"), 23824.0 / 32510.0);
      EXPECT_EQ(Num(e["args"].value(), "DRAMA"), 0.113);
      EXPECT_EQ(Int(e, "id"), 0);
    }
  }
  EXPECT_TRUE(found_span);
  EXPECT_TRUE(found_dcgm);
}

// The memory deviation, checked against the reference's numbers: the
// reference writes one running total per rank (all places mixed, on the pid
// of whichever entry came last); ours keeps one total per lane. At every
// time the reference sampled, the sum of our lanes' latest values must equal
// its total, and the sample times must be the same.
TEST_F(CspReference, MemoryCountersAreTheReferenceSplitByLane) {
  const std::regex rank_re(R"(memory usage on trainerRank\.(\d+):)");
  for (int n = 0; n < 8; ++n) {
    SCOPED_TRACE("traceFile_0_" + std::to_string(n));
    Trace ours(ReadFile(Ours(n)));
    Trace ref(Reference(n));
    auto rank_of = [&](const Trace& t) {
      std::map<int64_t, std::string> m;
      for (auto& [pid, name] : ProcessNames(t)) {
        std::smatch sm;
        if (std::regex_search(name, sm, rank_re)) m[pid] = sm[1];
      }
      return m;
    };
    auto our_rank = rank_of(ours), ref_rank = rank_of(ref);
    // 2 ranks x (cpu:0, gpu:0, cudapinnedplace:0, and gpu:n, cudapinnedplace:n if n != 0).
    ASSERT_EQ(our_rank.size(), n == 0 ? 6u : 10u);
    std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> ref_totals;  // rank -> (ts, total)
    std::map<std::string, std::vector<std::tuple<int64_t, int64_t, int64_t>>> our_samples;  // (ts, pid, v)
    for (auto e : ref.events())
      if (IsMemoryCounter(e))
        ref_totals[ref_rank.at(Int(e, "pid"))].emplace_back(Int(e, "ts"), Int(e["args"].value(), "0"));
    for (auto e : ours.events())
      if (IsMemoryCounter(e)) {
        ASSERT_TRUE(our_rank.count(Int(e, "pid"))) << "counter on a non-memory lane";
        our_samples[our_rank.at(Int(e, "pid"))].emplace_back(Int(e, "ts"), Int(e, "pid"),
                                                             Int(e["args"].value(), "0"));
      }
    ASSERT_EQ(ref_totals.size(), 2u);
    size_t checked = 0;
    for (auto& [rank, totals] : ref_totals) {
      auto samples = our_samples[rank];
      std::sort(samples.begin(), samples.end());
      std::map<int64_t, int64_t> latest;  // pid -> value
      std::map<int64_t, int64_t> sum_at;  // ts -> sum of lanes
      for (auto& [ts, pid, v] : samples) {
        latest[pid] = v;
        int64_t sum = 0;
        for (auto& [p, x] : latest) sum += x;
        sum_at[ts] = sum;
      }
      ASSERT_EQ(sum_at.size(), totals.size()) << "rank " << rank;
      for (auto& [ts, total] : totals) {
        ASSERT_TRUE(sum_at.count(ts)) << "rank " << rank << " ts " << ts;
        EXPECT_EQ(sum_at[ts], total) << "rank " << rank << " ts " << ts;
        ++checked;
      }
    }
    EXPECT_EQ(checked, 800u);
  }
}

// Deterministic: the same input gives byte-identical files, whatever the
// number of threads (the reference's order depends on process scheduling).
TEST_F(CspReference, ByteIdenticalAcrossRunsAndThreads) {
  TempDir again;
  RunResult r = RunTracemill({"csp", "--profile-path", kData + "/data", "--timeline-path",
                              again.path(), "--gpus-per-trainer", "8", "--trainer-num", "2",
                              "--group-size", "2", "--display-size", "2", "--threads", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int n = 0; n < 8; ++n) {
    const std::string name = "traceFile_0_" + std::to_string(n) + ".json";
    EXPECT_TRUE(ReadFile(again / name) == ReadFile(Ours(n))) << name;
  }
  std::vector<std::string> files;
  for (const auto& n : ListDir(again.path())) files.push_back(again / n);
  EXPECT_EQ(PythonJsonErrors(files), "");
}

TEST_F(CspReference, ManifestCountsBalance) {
  Trace m(ReadFile(*out_ / "manifest.json"));
  auto totals = m.root()["totals"].value();
  EXPECT_EQ(Int(totals, "inputs"), 18);
  // 16 ranks x (2,000 events + 200 mem events) + 2 x 320 DCGM rows.
  EXPECT_EQ(Int(totals, "events_read"), 16 * 2200 + 640);
  EXPECT_EQ(Int(totals, "events_written"), 16 * 2200 + 640);
  EXPECT_EQ(Int(totals, "events_dropped"), 0);
  auto csp = m.root()["csp"].value();
  EXPECT_EQ(Int(csp, "groups"), 1);
  EXPECT_EQ(Str(csp, "time_unit"), "ns");
  EXPECT_EQ(Int(csp["pipeline"].value(), "markers"), 16 * 40);
  EXPECT_EQ(Int(csp["pipeline"].value(), "spans"), 16 * 20);
  EXPECT_EQ(Int(csp["pipeline"].value(), "markers_dropped"), 0);
}

}  // namespace
}  // namespace tracemill::testing
