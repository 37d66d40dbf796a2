// TefDecoder on Kineto's 2024-2026 output (issue 25), at the decoder's
// boundary: the hand-written fixtures of tests/data/kineto-2026 (see its
// PROVENANCE.md for the writer's source lines each follows).
#include <simdjson.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "formats/chrome/tef_decoder.h"
#include "formats/common/collectives.h"
#include "formats/common/trace_data.h"
#include "tests/testing/convert_harness.h"

namespace tracemill::formats {
namespace {

using ::tracemill::testing::DataPath;
using ::tracemill::testing::ReadFileBytes;

constexpr int64_t kKinetoBase = 1780000000123456789;  // the fixtures' baseTimeNanoseconds

struct DecodedFixture {
  std::string json;  // kept alive: the builder's keys point into it
  DecodeReport report;
  std::unique_ptr<TraceData> data;
};

DecodedFixture DecodeFixture(const std::string& fixture) {
  DecodedFixture d;
  d.json = ReadFileBytes(DataPath("kineto-2026/" + fixture));
  const size_t size = d.json.size();
  d.json.resize(size + simdjson::SIMDJSON_PADDING);
  TefDecoder dec;
  TraceBuilder b;
  d.report = dec.Decode(std::string_view(d.json.data(), size), d.json.size(), &b);
  d.data = b.Finish();
  return d;
}

TEST(Kineto2026, MemoryInstantsAlsoBecomePerDeviceCounters) {
  DecodedFixture d = DecodeFixture("memory_instants.json");
  ASSERT_TRUE(d.report.status.ok()) << d.report.status;
  // 8 events in the file, plus 5 derived counter samples (the [memory]
  // event without totals, as PyTorch before 2.0 wrote it, derives none).
  EXPECT_EQ(d.report.events_read, 13u);
  EXPECT_EQ(d.data->derived_events, 5u);
  EXPECT_EQ(d.data->events.size(), 13u);
  std::vector<std::string> counters;
  for (const Event& e : d.data->events) {
    if (e.phase != 'C') continue;
    EXPECT_EQ(d.data->processes[e.pid].pid_token, "4242");
    counters.push_back(std::string(d.data->strings[e.name]) + " " + std::to_string(e.ts_ns - kKinetoBase) + " " +
                       std::string(e.rest, e.rest_len));
  }
  EXPECT_EQ(counters, (std::vector<std::string>{
                          "memory cuda:0 1000 \"args\":{\"Total Allocated\":4096,\"Total Reserved\":2097152}",
                          "memory cuda:1 2000 \"args\":{\"Total Allocated\":8192,\"Total Reserved\":2097152}",
                          "memory cuda:0 3000 \"args\":{\"Total Allocated\":0,\"Total Reserved\":2097152}",
                          "memory cpu 4000 \"args\":{\"Total Allocated\":64,\"Total Reserved\":0}",
                          "memory cuda:1 5000 \"args\":{\"Total Allocated\":1056768,\"Total Reserved\":4194304}",
                      }));
  EXPECT_EQ(d.report.warnings,
            (std::vector<std::string>{"5 memory counter samples derived from [memory] events (counted as events read)"}));
}

TEST(Kineto2026, LoggerBucketsBecomeWarnings) {
  DecodedFixture d = DecodeFixture("logger_buckets.json");
  ASSERT_TRUE(d.report.status.ok()) << d.report.status;
  EXPECT_EQ(d.report.events_read, 3u);
  EXPECT_EQ(d.report.warnings,
            (std::vector<std::string>{
                "Kineto logged ERROR: CUPTI_ERROR_NOT_INITIALIZED: "
                "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) failed",
                "Kineto logged WARNING: Memory profiling is not supported for MTIA",
                "Kineto logged WARNING: Failed to record CUDA event. 'cudaEventRecord' returned 700",
                "Kineto logged WARNING: Skipping activity: correlation id 17 has no linked CPU op",
                "Kineto logged WARNING: Skipping activity: correlation id 18 has no linked CPU op",
                "Kineto logged WARNING: Skipping activity: correlation id 19 has no linked CPU op",
                "Kineto logged 2 more WARNING entries (all kept in the output's otherData)",
            }));
  // Still kept in the input's metadata, after traceEvents, as written.
  std::vector<std::string> keys;
  for (const auto& [k, v] : d.data->meta.top_level) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"schemaVersion", "deviceProperties", "displayTimeUnit",
                                            "baseTimeNanoseconds", "ERROR", "WARNING", "traceName"}));
}

TEST(Kineto2026, NcclMetadataOnTheKernelNamesItsGroupAndSequence) {
  DecodedFixture d = DecodeFixture("nccl_kernel_metadata.json");
  ASSERT_TRUE(d.report.status.ok()) << d.report.status;
  CollectiveCollector c;
  int kernels = 0;
  for (const Event& e : d.data->events) {
    const std::string_view name = d.data->strings[e.name];
    const CollectiveClass cls = ClassifyCollectiveName(name);
    if (cls == CollectiveClass::kNone) continue;
    ++kernels;
    EXPECT_EQ(cls, CollectiveClass::kGpuKernel);
    const std::string_view rest(e.rest, e.rest_len);
    c.Add(cls, CollectiveKind(cls, name, rest), rest, e.ts_ns, e.ts_ns + e.dur_ns);
  }
  EXPECT_EQ(kernels, 1);
  CollectiveDigest digest = c.Finish(kMaxCollectives);
  EXPECT_TRUE(digest.gpu);
  ASSERT_EQ(digest.ops.size(), 1u);
  // `Process Group Name` "0" and `Process Group Ranks` "[0, 1]", as Kineto
  // quotes them since d62c7f56; the kind from the kernel's name.
  EXPECT_EQ(digest.keys, (std::vector<std::string>{"\"0\"/\"[0, 1]\"\x1f" "AllReduce"}));
  EXPECT_EQ(digest.ops[0].seq, 7);
  EXPECT_EQ(digest.ops[0].start_ns, kKinetoBase + 130000);
  EXPECT_EQ(digest.ops[0].end_ns, kKinetoBase + 130000 + 250750);
}

}  // namespace
}  // namespace tracemill::formats
