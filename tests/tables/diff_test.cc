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

// Two ranks of one job (HTA's trace_filter pair): rank 0 against rank 1.
TEST_F(DiffTest, TwoRanksOfOneJobEqualCompareTraces) {
  ExpectHtas("hta/trace_filter", "hta/trace_filter", {"--control-rank", "0", "--test-rank", "1"},
             "hta_diff_filter_ranks.csv");
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
}

}  // namespace
}  // namespace tracemill::testing
