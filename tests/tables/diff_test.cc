// `tracemill diff` (issue 36) against HTA's own TraceDiff.compare_traces on
// real pairs (tests/data/tables/hta_diff_*.csv, make_expected_diff.py), and
// its bad inputs.
#include <cstdlib>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tables/tables_test_util.h"
#include "tests/testing/convert_harness.h"

namespace tracemill::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class DiffTest : public ConvertTest {
 protected:
  // Runs `tracemill diff CONTROL TEST -o <fresh dir> ARGS`; returns the dir.
  std::string Diff(const std::string& control, const std::string& test, const std::vector<std::string>& args,
                   CommandResult* result) {
    const std::string out = tmp_.Join("diff" + std::to_string(++runs_));
    std::vector<std::string> a = {"diff", control, test, "-o", out};
    a.insert(a.end(), args.begin(), args.end());
    *result = Tracemill(a);
    return out;
  }

  // diff.sqlite's compare_traces equals HTA's frame row for row (HTA's order:
  // by name), counts and µs exact.
  void ExpectHtas(const std::string& control, const std::string& test, const std::vector<std::string>& args,
                  const std::string& csv) {
    CommandResult r;
    const std::string out = Diff(DataPath(control), DataPath(test), args, &r);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Rows ours = Query(out + "/diff.sqlite", "SELECT * FROM compare_traces ORDER BY rowid");
    const Rows hta = ReadCsv(ExpectedPath(csv));
    ASSERT_EQ(ours.size(), hta.size()) << csv;
    ASSERT_EQ(ours[0], hta[0]) << csv;  // HTA's column names, labels included
    for (size_t i = 1; i < hta.size(); ++i) {
      EXPECT_EQ(ours[i][0], hta[i][0]) << csv << " row " << i;
      for (size_t c = 1; c + 1 < hta[i].size(); ++c)
        EXPECT_EQ(std::strtod(ours[i][c].c_str(), nullptr), std::strtod(hta[i][c].c_str(), nullptr))
            << csv << " " << hta[i][0] << " " << hta[0][c];
      EXPECT_EQ(ours[i].back(), hta[i].back()) << csv << " " << hta[i][0];
    }
  }
};

// HTA's own test pair (tests/data/hta/trace_compare): its defaults (rank 1,
// iteration 1009 of each), one iteration against another, and the GPU only.
TEST_F(DiffTest, HtasPairEqualsCompareTraces) {
  ExpectHtas("hta/trace_compare/base", "hta/trace_compare/test", {}, "hta_diff_compare_default.csv");
  ExpectHtas("hta/trace_compare/base", "hta/trace_compare/test",
             {"--control-iteration", "1009", "--test-iteration", "1010"}, "hta_diff_compare_iterations.csv");
  ExpectHtas("hta/trace_compare/base", "hta/trace_compare/test",
             {"--control-iteration", "1010", "--test-iteration", "1010", "--device", "gpu"},
             "hta_diff_compare_gpu.csv");
}

// Two real runs of one ResNet-50 (the TensorBoard plugin's samples): the
// first iteration of each (5 and 16), and five iterations of the GPU.
TEST_F(DiffTest, TwoRunsOfOneModelEqualCompareTraces) {
  ExpectHtas("kineto-tb-plugin/resnet50_num_workers_0", "kineto-tb-plugin/resnet50_run2", {},
             "hta_diff_resnet_runs.csv");
  ExpectHtas("kineto-tb-plugin/resnet50_num_workers_0", "kineto-tb-plugin/resnet50_run2",
             {"--control-iteration", "5,6,7,8,9", "--test-iteration", "16,17,18,19,20", "--device", "gpu"},
             "hta_diff_resnet_runs_gpu_all.csv");
}

// HTA's short names (shorten_name): the GPU of HTA's pair, the two ResNet-50
// runs whole and their GPU (template and argument lists dropped, names that
// then coincide summed; memory kernels kept whole).
TEST_F(DiffTest, ShortNamesEqualCompareTraces) {
  ExpectHtas("hta/trace_compare/base", "hta/trace_compare/test",
             {"--control-iteration", "1009", "--test-iteration", "1009", "--device", "gpu", "--short-names"},
             "hta_diff_compare_gpu_short.csv");
  ExpectHtas("kineto-tb-plugin/resnet50_num_workers_0", "kineto-tb-plugin/resnet50_run2", {"--short-names"},
             "hta_diff_resnet_runs_short.csv");
  ExpectHtas("kineto-tb-plugin/resnet50_num_workers_0", "kineto-tb-plugin/resnet50_run2",
             {"--device", "gpu", "--short-names"}, "hta_diff_resnet_runs_gpu_short.csv");
}

// Two ranks of one job (HTA's trace_filter pair): rank 0 against rank 1,
// whole and GPU only with short names.
TEST_F(DiffTest, TwoRanksOfOneJobEqualCompareTraces) {
  ExpectHtas("hta/trace_filter", "hta/trace_filter", {"--control-rank", "0", "--test-rank", "1"},
             "hta_diff_filter_ranks.csv");
  ExpectHtas("hta/trace_filter", "hta/trace_filter",
             {"--control-rank", "0", "--test-rank", "1", "--device", "gpu", "--short-names"},
             "hta_diff_filter_ranks_gpu_short.csv");
}

// Beyond HTA, both runs side by side: step times per rank (from the traces'
// ProfilerStep#N spans: 6 each, 1,048,976 and 917,731 µs), the job's GPU
// time per kernel type and each rank's kernel and idle time (the values of
// HTA's own breakdowns of each run: tests/data/tables/hta_tb_plugin_*.csv,
// and HTA's get_temporal_breakdown / get_gpu_kernel_breakdown of run2:
// 721,601 µs of kernels, 219,798 idle, 30.46 %; COMPUTATION 492,770 µs
// 98.2 %, MEMORY 9,033 µs 1.8 %); names in one run only.
TEST_F(DiffTest, TwoRunsSideBySide) {
  CommandResult r;
  const std::string out = Diff(DataPath("kineto-tb-plugin/resnet50_num_workers_0"),
                               DataPath("kineto-tb-plugin/resnet50_run2"), {}, &r);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string db = out + "/diff.sqlite";
  EXPECT_EQ(Query(db, "SELECT * FROM step_times"),
            (Rows{{"side", "rank", "steps", "total_ns", "mean_ns", "min_ns", "max_ns"},
                  {"control", "0", "6", "1048976000", "174829333", "164261000", "181259000"},
                  {"test", "0", "6", "917731000", "152955166", "148659000", "159363000"}}));
  EXPECT_EQ(Query(db, "SELECT * FROM kernel_type_time"),
            (Rows{{"kernel_type", "control_ns", "control_percentage", "test_ns", "test_percentage", "diff_ns"},
                  {"COMPUTATION", "492891000", "98.0", "492770000", "98.2", "-121000"},
                  {"MEMORY", "10140000", "2.0", "9033000", "1.8", "-1107000"}}));
  EXPECT_EQ(Query(db, "SELECT * FROM rank_time"),
            (Rows{{"rank", "control_kernel_ns", "control_idle_ns", "control_idle_pctg", "test_kernel_ns", "test_idle_ns",
                   "test_idle_pctg"},
                  {"0", "830494000", "327463000", "39.43", "721601000", "219798000", "30.46"}}));
  // Each run's own step (iteration 5 against 16) is the one name it has alone.
  EXPECT_EQ(Query(db, "SELECT name, Test_counts FROM new_names"), (Rows{{"name", "Test_counts"}, {"ProfilerStep#16", "1"}}));
  EXPECT_EQ(Query(db, "SELECT name, Control_counts FROM vanished_names"),
            (Rows{{"name", "Control_counts"}, {"ProfilerStep#5", "1"}}));
  EXPECT_THAT(r.err, Not(HasSubstr("no operator or kernel name in common")));
  // The page: self-contained (no script, nothing fetched), the same numbers.
  const std::string html = ReadFileBytes(out + "/diff.html");
  EXPECT_THAT(html, HasSubstr("<h2>Slower in TEST</h2>"));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("http")));
  // Step times: control's mean 174.829333 ms, test's 152.955166 ms.
  EXPECT_THAT(html, HasSubstr("<tr><td>control</td><td class=\"n\">0</td><td class=\"n\">6</td><td class=\"n\">"
                              "174.829333 ms</td>"));
  EXPECT_THAT(html, HasSubstr("<td>ProfilerStep#16</td><td class=\"n\">1</td><td class=\"n\">159.363 ms</td>"));
}

// Two runs of different models share no GPU kernel: said as a warning
// (even with -q), the table still written (every name new or vanished).
TEST_F(DiffTest, RunsWithNoCommonNameAreSaid) {
  CommandResult r;
  const std::string out = Diff(DataPath("hta/trace_compare/base"), DataPath("kineto-tb-plugin/resnet50_run2"),
                               {"--device", "gpu", "-q"}, &r);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("tracemill: diff: warning: the two runs have no operator or kernel name in common"));
  EXPECT_EQ(Query(out + "/diff.sqlite", "SELECT count(*) FROM compare_traces WHERE Control_counts > 0 AND "
                                        "Test_counts > 0")[1][0],
            "0");
}

// An earlier `convert --tables` output folder is read as it is (nothing
// converted again: no OUTDIR/test folder).
TEST_F(DiffTest, ConvertOutputFoldersAreReadAsTheyAre) {
  Run converted = Convert({DataPath("hta/trace_compare/test"), "--tables=summary"});
  ASSERT_EQ(converted.exit_code, 0) << converted.err;
  CommandResult r;
  const std::string out = Diff(DataPath("hta/trace_compare/base"), converted.out_dir, {}, &r);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("tracemill: diff: 7 names (0 only in TEST, 0 only in CONTROL)"));
  EXPECT_EQ(Query(out + "/diff.sqlite", "SELECT count(*) FROM compare_traces")[1][0], "7");
  EXPECT_EQ(system(("test -d '" + out + "/control' && ! test -e '" + out + "/test'").c_str()), 0);
}

// Bad inputs: a rank or iteration a side does not have (exit 2, naming what
// it has), a side with no trace, a bad --device.
TEST_F(DiffTest, BadInputsAreUsageErrors) {
  CommandResult r;
  const std::string base = DataPath("hta/trace_compare/base"), test = DataPath("hta/trace_compare/test");
  Diff(base, test, {"--control-rank", "0"}, &r);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("tracemill: diff: rank 0 is not in CONTROL (its ranks: 1)"));
  Diff(base, test, {"--test-iteration", "7"}, &r);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("iteration 7 is not in TEST (its iterations: 1009, 1010)"));
  Diff(base, tmp_.Join("nowhere"), {}, &r);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("tracemill: diff: converting test ("));
  Diff(base, test, {"--device", "tpu"}, &r);
  EXPECT_EQ(r.exit_code, 2);
  // A side that is an empty folder: convert finds no input (its own line), exit 2.
  const std::string empty = tmp_.Join("empty-run");
  ASSERT_EQ(system(("mkdir -p '" + empty + "'").c_str()), 0);
  Diff(empty, test, {}, &r);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("tracemill: diff: converting control ("));
}

}  // namespace
}  // namespace tracemill::testing
