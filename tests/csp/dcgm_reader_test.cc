// `dcgmi dmon` logs (formats/dcgm/dcgm_reader.h): the quirks of the real
// files in tests/data/paddle-csp/small/data/dcgm and the ones the issue lists.
#include "formats/dcgm/dcgm_reader.h"

#include <gtest/gtest.h>

#include "tests/csp/test_util.h"

namespace tracemill::formats {
namespace {

constexpr char kHeader[] =
    "# Entity  TIMESTAMP  GPUTL  GRACT  SMACT  SMOCC  FBUSD  FBTTL  DRAMA  NVLTX  NVLRX  PCITX  "
    "PCIRX  FP32A  FP16A  TENSO\n";

TEST(DcgmReader, ToleratesNoiseRepeatedHeadersUnitsAndNa) {
  const std::string text = std::string(
      "Started host engine version 2.2.9 using socket path /tmp/nv-hostengine\n"
      "Host Engine Listener Started\n") + kHeader +
      "      Id\n"
      "    GPU 0  1700000000.000  81  0.494  0.183  0.346  31123  32510  0.939  62106086  11442642  42250777  54105825  0.680  0.777  0.734\n"
      "    GPU 1  1700000000.000  N/A  0.809  0.124  0.755  18147  32510  0.709  698885281  98587997  35954722  69297278  0.048  0.540  0.017\n" +
      kHeader +
      "      Id\n"
      "    GPU 1  1700000000.100  71  0.774  0.044  0.498  29452  32510  0.829  640519349  182090495  63577  88272978  0.096  0.137  0.512\n"
      "dmon finished\n";
  DcgmFile f = ParseDcgmDmon(text);
  ASSERT_TRUE(f.status.ok()) << f.status;
  EXPECT_EQ(f.rows, 3u);
  EXPECT_EQ(f.dropped_na, 1u);
  EXPECT_EQ(f.headers, 2u);
  EXPECT_EQ(f.noise_lines, 3u);
  ASSERT_EQ(f.samples.size(), 2u);
  EXPECT_EQ(f.samples[0].gpu, 0);
  EXPECT_EQ(f.samples[0].ts_ns, 1700000000000000000);
  EXPECT_EQ(f.samples[0].value(DcgmColumn::kGputl), 81.0);
  EXPECT_EQ(f.samples[0].value(DcgmColumn::kGract), 0.494);
  EXPECT_EQ(f.samples[0].value(DcgmColumn::kFbusd), 31123.0);
  EXPECT_EQ(f.samples[0].value(DcgmColumn::kFbttl), 32510.0);
  EXPECT_EQ(f.samples[0].value(DcgmColumn::kNvltx), 62106086.0);
  EXPECT_EQ(f.samples[0].value(DcgmColumn::kTenso), 0.734);
  EXPECT_EQ(f.samples[1].gpu, 1);
  EXPECT_EQ(f.samples[1].ts_ns, 1700000000100000000);
  EXPECT_EQ(f.samples[1].value(DcgmColumn::kPcitx), 63577.0);
}

// Columns are found by their header name, whatever the order, extra columns
// included.
TEST(DcgmReader, ColumnsByHeaderName) {
  DcgmFile f = ParseDcgmDmon(
      "# Entity  POWER  TENSO  FP16A  FP32A  PCIRX  PCITX  NVLRX  NVLTX  DRAMA  FBTTL  FBUSD  SMOCC  "
      "SMACT  GRACT  GPUTL  TIMESTAMP\n"
      "GPU 7  250.5  0.1  0.2  0.3  4  5  6  7  0.8  100  25  0.11  0.12  0.13  42  1700000000.5\n");
  ASSERT_TRUE(f.status.ok()) << f.status;
  ASSERT_EQ(f.samples.size(), 1u);
  const DcgmSample& s = f.samples[0];
  EXPECT_EQ(s.gpu, 7);
  EXPECT_EQ(s.ts_ns, 1700000000500000000);
  EXPECT_EQ(s.value(DcgmColumn::kTenso), 0.1);
  EXPECT_EQ(s.value(DcgmColumn::kFbttl), 100.0);
  EXPECT_EQ(s.value(DcgmColumn::kFbusd), 25.0);
  EXPECT_EQ(s.value(DcgmColumn::kGputl), 42.0);
  EXPECT_EQ(s.value(DcgmColumn::kSmact), 0.12);
}

TEST(DcgmReader, MissingColumnIsAnError) {
  DcgmFile f = ParseDcgmDmon("# Entity  TIMESTAMP  GPUTL\nGPU 0  1.0  5\n");
  EXPECT_EQ(f.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(f.status.message()).find("GRACT"), std::string::npos) << f.status;
  EXPECT_TRUE(f.samples.empty());
  DcgmFile none = ParseDcgmDmon("just text\n");
  EXPECT_EQ(none.status.code(), absl::StatusCode::kInvalidArgument);
}

TEST(DcgmReader, BadRowsAreDropped) {
  const std::string text = std::string("GPU 0  1 2 3\n") + kHeader +
                           "GPU 0  1700000000.0  1  2\n"  // too few columns
                           "GPU 0  1700000000.0  1  1  1  1  1  1  1  1  1  1  1  1  1  nan\n"
                           "GPU 0  1700000000.0  1  1  1  1  1  1  1  1  1  1  1  1  1  1\n";
  DcgmFile f = ParseDcgmDmon(text);
  ASSERT_TRUE(f.status.ok()) << f.status;
  EXPECT_EQ(f.rows, 4u);
  EXPECT_EQ(f.dropped_malformed, 2u);  // before the header, too few columns
  EXPECT_EQ(f.dropped_na, 1u);         // nan is not a sample
  EXPECT_EQ(f.samples.size(), 1u);
}

// The reference computes int(float(TIMESTAMP) * 1e9): kept for the default
// (drop-in) output; the exact decimal value for --time-unit us.
TEST(DcgmReader, TimestampFloatAndExact) {
  DcgmFile f = ParseDcgmDmon(std::string(kHeader) +
                             "GPU 2  1700000000.003  1  1  1  1  1  1  1  1  1  1  1  1  1  1\n");
  ASSERT_EQ(f.samples.size(), 1u);
  EXPECT_EQ(f.samples[0].ts_ns, 1700000000003000000);
  EXPECT_EQ(f.samples[0].ts_float_ns, 1700000000003000064);
}

TEST(DcgmReader, ParseSecondsToNanos) {
  int64_t ns = 0;
  ASSERT_TRUE(ParseSecondsToNanos("1700000000.003", &ns));
  EXPECT_EQ(ns, 1700000000003000000);
  ASSERT_TRUE(ParseSecondsToNanos("0.0000000015", &ns));  // 1.5 ns: half away from zero
  EXPECT_EQ(ns, 2);
  ASSERT_TRUE(ParseSecondsToNanos("-1.25", &ns));
  EXPECT_EQ(ns, -1250000000);
  ASSERT_TRUE(ParseSecondsToNanos("1.7e9", &ns));
  EXPECT_EQ(ns, 1700000000000000000);
  ASSERT_TRUE(ParseSecondsToNanos("42", &ns));
  EXPECT_EQ(ns, 42000000000);
  EXPECT_FALSE(ParseSecondsToNanos("N/A", &ns));
  EXPECT_FALSE(ParseSecondsToNanos("1e30", &ns));
  EXPECT_FALSE(ParseSecondsToNanos("", &ns));
}

// The real logs: 2 trainers x 8 GPUs x 40 samples, noise and repeated headers.
TEST(DcgmReader, ReferenceLogs) {
  for (int t = 0; t < 2; ++t) {
    DcgmFile f = ParseDcgmDmon(testing::ReadFile(std::string(PADDLE_CSP_DATA) +
                                                 "/small/data/dcgm/dcgm." + std::to_string(t)));
    ASSERT_TRUE(f.status.ok()) << f.status;
    EXPECT_EQ(f.samples.size(), 320u);
    EXPECT_EQ(f.headers, 2u);
    EXPECT_EQ(f.noise_lines, 3u);
    EXPECT_EQ(f.dropped_na + f.dropped_malformed, 0u);
  }
}

// What `convert` takes for a dmon log (issue 40, point 2): dcgmi's first
// line, or the `# Entity ... TIMESTAMP` header after other lines; not a
// trace, not a header without TIMESTAMP.
TEST(DcgmReader, LooksLikeDcgmDmon) {
  EXPECT_TRUE(LooksLikeDcgmDmon("Started host engine version 2.2.9 using socket path /tmp/nv-hostengine\n"));
  EXPECT_TRUE(LooksLikeDcgmDmon("noise\n  # Entity  TIMESTAMP  GPUTL\n      Id\n"));
  EXPECT_FALSE(LooksLikeDcgmDmon("# Entity  GPUTL\n"));
  EXPECT_FALSE(LooksLikeDcgmDmon("{\"traceEvents\":[]}"));
  EXPECT_FALSE(LooksLikeDcgmDmon(""));
}

}  // namespace
}  // namespace tracemill::formats
