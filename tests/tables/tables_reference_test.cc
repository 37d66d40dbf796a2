// `--tables` against the reference libraries (issue 23): the numbers HTA and
// SageMaker Debugger's PandasFrame compute for the same files, generated once
// with the real libraries and committed (tests/data/tables/EXPECTED.md).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <tuple>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tables/tables_test_util.h"
#include "tests/testing/convert_harness.h"

namespace tracemill::testing {
namespace {

double Num(const std::string& s) { return std::strtod(s.c_str(), nullptr); }

class TablesReferenceTest : public ConvertTest {
 protected:
  // Converts `inputs` with --tables and returns tables.sqlite's path.
  std::string Tables(const std::vector<std::string>& inputs, const std::string& mode = "--tables=full") {
    std::vector<std::string> args = inputs;
    args.push_back(mode);
    args.push_back("-q");
    Run r = Convert(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.Output("tables.sqlite");
  }

  // Every HTA row of `csv` has our row of the same `keys` with the same
  // `exact` columns (as doubles, ==) and `close` ones (relative 1e-9:
  // HTA's float mean and stddev).
  void ExpectRows(const std::string& db, const std::string& sql, const std::string& csv,
                  const std::vector<std::string>& keys, const std::vector<std::string>& exact,
                  const std::vector<std::string>& close) {
    const Rows ours = Query(db, sql);
    const Rows hta = ReadCsv(ExpectedPath(csv));
    ASSERT_GT(hta.size(), 1u) << csv;
    auto key_of = [&](const Rows& t, size_t i) {
      std::string k;
      for (const auto& c : keys) {
        const std::string& v = t[i][static_cast<size_t>(Column(t, c))];
        k += (c == "rank" ? std::to_string(static_cast<long long>(Num(v))) : v) + "|";
      }
      return k;
    };
    std::map<std::string, size_t> by_key;
    for (size_t i = 1; i < ours.size(); ++i) by_key[key_of(ours, i)] = i;
    for (size_t i = 1; i < hta.size(); ++i) {
      const std::string k = key_of(hta, i);
      auto it = by_key.find(k);
      ASSERT_NE(it, by_key.end()) << csv << ": no row " << k;
      for (const auto& c : exact)
        EXPECT_EQ(Num(ours[it->second][static_cast<size_t>(Column(ours, c))]),
                  Num(hta[i][static_cast<size_t>(Column(hta, c))]))
            << csv << " " << k << " " << c;
      for (const auto& c : close) {
        const double a = Num(ours[it->second][static_cast<size_t>(Column(ours, c))]);
        const double b = Num(hta[i][static_cast<size_t>(Column(hta, c))]);
        EXPECT_NEAR(a, b, 1e-9 * std::max(1.0, std::abs(b))) << csv << " " << k << " " << c;
      }
    }
  }

  // idle_gaps summed as HTA's get_idle_time_breakdown sums them, with
  // `delay` (consecutive_kernel_delay): HTA's rows, in HTA's order.
  void ExpectIdle(const std::string& db, const std::string& csv, int delay) {
    const std::string category = "CASE WHEN host_wait THEN 'host_wait' WHEN gap_us < " + std::to_string(delay) +
                                 " THEN 'kernel_wait' ELSE 'other' END";
    const std::string sql = "SELECT rank, stream, " + category +
                            " AS idle_category, TOTAL(gap_us * gaps) AS idle_time, SUM(gaps) AS gaps, "
                            "MIN(stream_order) AS stream_order FROM idle_gaps GROUP BY rank, stream, idle_category "
                            "ORDER BY rank, stream_order, idle_category";
    ExpectRows(db, sql, csv, {"rank", "stream", "idle_category"}, {"idle_time"}, {});
    const Rows ours = Query(db, sql), hta = ReadCsv(ExpectedPath(csv));
    ASSERT_EQ(ours.size(), hta.size());
    for (size_t i = 1; i < ours.size(); ++i)  // HTA's row order: streams as in the file
      EXPECT_EQ(Num(ours[i][1]), Num(hta[i][1])) << "row " << i;
  }

  void ExpectHta(const std::string& db, const std::string& name) {
    ExpectRows(db, "SELECT * FROM temporal_breakdown", "hta_" + name + "_temporal.csv", {"rank"},
               {"idle_time(us)", "compute_time(us)", "non_compute_time(us)", "kernel_time(us)", "idle_time_pctg",
                "compute_time_pctg", "non_compute_time_pctg"},
               {});
    ExpectRows(db, "SELECT * FROM kernel_breakdown", "hta_" + name + "_kernels.csv", {"rank", "kernel_type", "name"},
               {"sum (us)", "max (us)", "min (us)"}, {"mean (us)", "stddev"});
    ExpectRows(db, "SELECT * FROM kernel_type_breakdown WHERE input IS NULL", "hta_" + name + "_kernel_types.csv",
               {"kernel_type"}, {"sum", "percentage"}, {});
    // Every kernel row HTA has, and no other.
    EXPECT_EQ(Query(db, "SELECT * FROM kernel_breakdown").size(),
              ReadCsv(ExpectedPath("hta_" + name + "_kernels.csv")).size());
  }
};

// HTA's 2-rank NCCL pair (its own test data): iteration filter on (several
// ProfilerSteps), communication overlapping computation and memory.
TEST_F(TablesReferenceTest, HtaBreakdownsOfTheTraceFilterPair) {
  const std::string db = Tables({DataPath("hta/trace_filter")});
  ExpectHta(db, "trace_filter");
  ExpectRows(db, "SELECT * FROM comm_comp_overlap", "hta_trace_filter_overlap.csv", {"rank"},
             {"comp_comm_overlap_pctg"}, {});
  const Rows t = Query(db, "SELECT rank, kernel_time_ns, idle_time_ns, hta_iteration_filter FROM temporal_breakdown "
                           "ORDER BY rank");
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[1], (std::vector<std::string>{"0", "600058000", "321378000", "1"}));
  EXPECT_EQ(t[2], (std::vector<std::string>{"1", "600674000", "328671000", "1"}));
}

// --hta-last-step: HTA's include_last_profiler_step=True on the same pair
// (make_expected_last_step.py): no iteration filter, every breakdown HTA's.
TEST_F(TablesReferenceTest, HtaLastStepKeepsTheLastProfilerStep) {
  Run r = Convert({DataPath("hta/trace_filter"), "--tables=summary", "--hta-last-step", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string db = r.Output("tables.sqlite");
  ExpectHta(db, "trace_filter_last_step");
  ExpectRows(db, "SELECT * FROM comm_comp_overlap", "hta_trace_filter_last_step_overlap.csv", {"rank"},
             {"comp_comm_overlap_pctg"}, {});
  ExpectIdle(db, "hta_trace_filter_last_step_idle.csv", 30);
  const Rows t = Query(db, "SELECT rank, kernel_time_ns, hta_iteration_filter FROM temporal_breakdown ORDER BY rank");
  EXPECT_EQ(t, (Rows{{"rank", "kernel_time_ns", "hta_iteration_filter"},
                     {"0", "1222847000", "0"},
                     {"1", "1231186000", "0"}}));
  EXPECT_EQ(Query(db, "SELECT value FROM tables_meta WHERE key = 'hta_last_step'"), (Rows{{"value"}, {"1"}}));
}

// One more real trace: the PyTorch TensorBoard plugin's ResNet-50 (older
// Kineto category names `Kernel`, `Memcpy`, `Memset`; 7,580 device rows,
// more than ten kernel names: HTA's "others" grouping).
// HTA's ns-resolution trace (its own test data): epoch-µs `ts` with three
// decimals, which HTA parses into doubles (0.25 µs steps at that
// magnitude) and rounds (ceil ts, floor ts + dur): 454 device rows round to
// dur <= 0. Our `(us)` columns equal HTA's; the `_ns` ones stay exact.
TEST_F(TablesReferenceTest, HtaBreakdownsOfANanosecondTrace) {
  const std::string db = Tables({DataPath("hta/ns_resolution_trace")}, "--tables=summary");
  ExpectHta(db, "ns_resolution");
  EXPECT_EQ(Query(db, "SELECT idle_time_ns, compute_time_ns, kernel_time_ns, hta_us_rounding FROM temporal_breakdown"),
            (Rows{{"idle_time_ns", "compute_time_ns", "kernel_time_ns", "hta_us_rounding"},
                  {"6452701", "374738006", "384634463", "1"}}));
}

TEST_F(TablesReferenceTest, HtaBreakdownsOfTheTensorBoardPluginTrace) {
  const std::string db = Tables({DataPath("kineto-tb-plugin/resnet50_num_workers_0")}, "--tables=summary");
  ExpectHta(db, "tb_plugin");
  EXPECT_EQ(Query(db, "SELECT * FROM kernel_breakdown WHERE name = 'others'").size(), 2u);
  // Issue 37, point 7: `mean_ns` is one kernel's mean (HTA's `mean (us)` of a
  // named row past ten names is its sum: 67252.0 here).
  const Rows means = Query(db, "SELECT name, kernels, sum_ns, mean_ns, \"mean (us)\" FROM kernel_breakdown "
                               "WHERE kernel_type = 'COMPUTATION' ORDER BY sum_ns DESC LIMIT 2");
  ASSERT_EQ(means.size(), 3u);
  EXPECT_EQ(means[1][0], "others");
  EXPECT_EQ((std::vector<std::string>(means[1].begin() + 1, means[1].begin() + 4)),
            (std::vector<std::string>{"3630", "155196000", "42753"}));
  EXPECT_EQ((std::vector<std::string>(means[2].begin() + 1, means[2].end())),
            (std::vector<std::string>{"135", "67252000", "498162", "67252.0"}));
  EXPECT_EQ(Query(db, "SELECT count(*) FROM kernel_breakdown WHERE mean_ns != sum_ns / kernels")[1][0], "0");
  // --tables summary: no per-event rows.
  EXPECT_EQ(Query(db, "SELECT count(*) FROM framework_metrics")[1][0], "0");
}

// Issue 36, step 1: op_summary holds HTA's TraceDiff summary (get_ops_summary
// over extract_ops) of every rank, iteration and device, row for row:
// counts and total durations exact (hta_*_ops.csv, make_expected_ops.py).
TEST_F(TablesReferenceTest, OpSummaryIsHtasTraceDiffSummary) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{DataPath("hta/trace_compare/base")}, "trace_compare_base"},
      {{DataPath("hta/trace_compare/test")}, "trace_compare_test"},
      {{DataPath("hta/trace_filter")}, "trace_filter"},
      {{DataPath("kineto-tb-plugin/resnet50_num_workers_0")}, "tb_plugin"}};
  for (const auto& [inputs, name] : cases) {
    SCOPED_TRACE(name);
    const std::string db = Tables(inputs, "--tables=summary");
    const std::string csv = "hta_" + name + "_ops.csv";
    ExpectRows(db, "SELECT * FROM op_summary", csv, {"rank", "iteration", "device", "cat", "name"},
               {"counts", "total_duration"}, {});
    EXPECT_EQ(Query(db, "SELECT * FROM op_summary").size(), ReadCsv(ExpectedPath(csv)).size());
  }
}

// Issue 39: idle_gaps summed as HTA's get_idle_time_breakdown sums them
// (consecutive_kernel_delay 30 and 5) equal HTA's own frames
// (make_expected_idle.py), and its streams come in HTA's order: that of each
// stream's first kernel in the file (trace_filter: not the order in time).
TEST_F(TablesReferenceTest, IdleGapsAreHtasIdleTimeBreakdown) {
  const std::vector<std::tuple<std::string, std::string, int>> cases = {
      {"hta/trace_filter", "trace_filter", 30},
      {"hta/trace_filter", "trace_filter", 5},
      {"kineto-tb-plugin/resnet50_num_workers_0", "tb_plugin", 30},
      {"hta/ns_resolution_trace", "ns_resolution", 30},
      {"hta/trace_compare/base", "trace_compare_base", 30}};
  for (const auto& [folder, name, delay] : cases) {
    SCOPED_TRACE(name + " " + std::to_string(delay));
    const std::string db = Tables({DataPath(folder)}, "--tables=summary");
    ExpectIdle(db, "hta_" + name + "_idle" + (delay == 30 ? "" : "_delay" + std::to_string(delay)) + ".csv", delay);
  }
  const Rows order = Query(Tables({DataPath("hta/trace_filter")}, "--tables=summary"),
                           "SELECT DISTINCT stream FROM idle_gaps WHERE rank = 0 ORDER BY stream_order");
  EXPECT_EQ(order, (Rows{{"stream"}, {"23"}, {"84"}, {"25"}, {"7"}, {"203"}}));  // in time: 23, 84, 7, 25, 203
}

// PandasFrame's de-duplicated system metrics of smdebug's test folder.
TEST_F(TablesReferenceTest, SystemMetricsArePandasFrames) {
  const std::string db = Tables({DataPath("smdebug/test_traces")});
  const Rows pf = ReadCsv(ExpectedPath("pf_test_traces_system.csv"));
  const int64_t base = std::atoll(ReadFileBytes(ExpectedPath("pf_test_traces_start_time.txt")).c_str());
  std::multiset<std::string> want, got;
  for (size_t i = 1; i < pf.size(); ++i) {
    const auto& r = pf[i];
    want.insert(r[0] + "|" + std::to_string(std::atoll(r[1].c_str()) + base) + "|" + std::to_string(Num(r[2])) +
                "|" + r[3] + "|" + r[4] + "|" + r[5] + "|" + r[6]);
  }
  const Rows ours = Query(db,
                          "SELECT timestamp, timestamp_us, value, system_metric, dimension, nodeID, type "
                          "FROM system_metrics");
  for (size_t i = 1; i < ours.size(); ++i) {
    auto r = ours[i];
    // PandasFrame writes `2020-06-03T05:04:59:457089` (a colon before the
    // µs, no zone); ours is ISO-8601 `2020-06-03T05:04:59.457089Z`.
    std::string ts = r[0].substr(0, 19) + ":" + r[0].substr(20, 6);
    got.insert(ts + "|" + r[1] + "|" + std::to_string(Num(r[2])) + "|" + r[3] + "|" + r[4] + "|" + r[5] + "|" + r[6]);
  }
  EXPECT_EQ(got.size(), 78u);
  EXPECT_EQ(got, want);
}

// The smdebug folders PandasFrame's frames were made of (EXPECTED.md), and
// their names in the expected files.
const std::vector<std::pair<std::string, std::string>> kPandasFrameJobs = {
    {"smdebug/merge_traces", "merge_traces"},
    {"smdebug/model_timeline_traces", "model_timeline"},
    {"rules/smdebug_algo_names", "algo_names"}};

// PandasFrame's de-duplicated framework metrics of two smdebug folders, and
// of a SageMaker-named job whose B/E pairs carry step_num on the E
// (pid and tid aside: README, "Analysis tables").
TEST_F(TablesReferenceTest, FrameworkMetricsArePandasFrames) {
  for (const auto& [folder, name] : kPandasFrameJobs) {
    SCOPED_TRACE(folder);
    const std::string db = Tables({DataPath(folder)});
    const Rows pf = ReadCsv(ExpectedPath("pf_" + name + "_framework.csv"));
    const int64_t base = std::atoll(ReadFileBytes(ExpectedPath("pf_" + name + "_start_time.txt")).c_str());
    std::set<std::string> want, got;
    for (size_t i = 1; i < pf.size(); ++i) {
      const auto& r = pf[i];
      want.insert(r[0] + "|" + r[1] + "|" + std::to_string(std::atoll(r[2].c_str()) + base) + "|" +
                  std::to_string(std::atoll(r[3].c_str()) + base) + "|" + r[6] + "|" + r[7] + "|" + r[8] + "|" + r[9] +
                  "|" + r[10]);
    }
    const Rows ours = Query(db,
                            "SELECT start_time, end_time, start_time_us, end_time_us, framework_metric, step, bytes, "
                            "process, nodeID FROM framework_metrics");
    for (size_t i = 1; i < ours.size(); ++i) {
      auto r = ours[i];
      auto pf_time = [](const std::string& iso) { return iso.substr(0, 19) + ":" + iso.substr(20, 6); };
      got.insert(pf_time(r[0]) + "|" + pf_time(r[1]) + "|" + r[2] + "|" + r[3] + "|" + r[4] + "|" + r[5] + "|" + r[6] +
                 "|" + r[7] + "|" + r[8]);
    }
    EXPECT_EQ(ours.size(), pf.size());
    EXPECT_EQ(got, want);
  }
}

// Issue 40, point 5: PandasFrame's get_all_dataloader_metrics is every
// framework event with the data loader's columns (no filter by name: 229,748
// rows on the job, where dataloader_metrics, tracemill's data-loading
// spans, had 0). The view all_dataloader_metrics is that frame.
TEST_F(TablesReferenceTest, AllDataloaderMetricsArePandasFrames) {
  for (const auto& [folder, name] : kPandasFrameJobs) {
    SCOPED_TRACE(folder);
    const std::string db = Tables({DataPath(folder)});
    const Rows pf = ReadCsv(ExpectedPath("pf_" + name + "_dataloader.csv"));
    const int64_t base = std::atoll(ReadFileBytes(ExpectedPath("pf_" + name + "_start_time.txt")).c_str());
    std::multiset<std::string> want, got;
    for (size_t i = 1; i < pf.size(); ++i) {
      const auto& r = pf[i];  // start_time .. duration_us, pid, framework_metric .. node_id
      std::string key = r[0] + "|" + r[1] + "|" + std::to_string(std::atoll(r[2].c_str()) + base) + "|" +
                        std::to_string(std::atoll(r[3].c_str()) + base);
      for (size_t c = 4; c < r.size(); ++c)
        if (c != 5) key += "|" + r[c];
      want.insert(key);
    }
    const Rows ours = Query(db,
                            "SELECT start_time, end_time, start_time_us, end_time_us, duration_us, framework_metric, "
                            "step, worker_id, num_workers, pin_memory, process, node_id FROM all_dataloader_metrics");
    auto pf_time = [](const std::string& iso) { return iso.substr(0, 19) + ":" + iso.substr(20, 6); };
    for (size_t i = 1; i < ours.size(); ++i) {
      const auto& r = ours[i];
      std::string key = pf_time(r[0]) + "|" + pf_time(r[1]);
      for (size_t c = 2; c < r.size(); ++c) key += "|" + r[c];
      got.insert(key);
    }
    EXPECT_EQ(ours.size(), pf.size());
    EXPECT_EQ(got, want);
  }
}

// SageMaker's node ids (`<pid>-algo-<n>` in framework file names) as
// PandasFrame reports them: swapped in framework rows (and dataloader rows,
// which this job has none of), the system files' `algo-<n>` as they are.
TEST_F(TablesReferenceTest, NodeIdsAreSmdebugsOnSageMakerNames) {
  const std::string db = Tables({DataPath("rules/smdebug_algo_names")});
  auto column = [](const Rows& t, const std::string& name) {
    std::set<std::string> v;
    for (size_t i = 1; i < t.size(); ++i) v.insert(t[i][static_cast<size_t>(Column(t, name))]);
    return v;
  };
  const std::set<std::string> want = column(ReadCsv(ExpectedPath("pf_algo_names_framework.csv")), "nodeID");
  EXPECT_EQ(want, (std::set<std::string>{"algo-1-1234", "algo-2-5678"}));
  EXPECT_EQ(column(Query(db, "SELECT nodeID FROM framework_metrics"), "nodeID"), want);
  EXPECT_EQ(column(Query(db, "SELECT nodeID FROM system_metrics"), "nodeID"),
            column(ReadCsv(ExpectedPath("pf_algo_names_system.csv")), "nodeID"));
}

}  // namespace
}  // namespace tracemill::testing
