// DecodeStage: the call that finishes the schedule's last decode says so,
// and AfterLastDecode then keeps only what the writes still to start need of
// the pooled free blocks (the rest is unmapped beside the last output's
// write, not all when the job ends).
#include "pipeline/convert/decode_stage.h"

#include <sys/stat.h>

#include <cstring>
#include <string>
#include <vector>

#include "formats/common/large_alloc.h"
#include "gtest/gtest.h"
#include "tests/testing/convert_harness.h"

namespace tracemill::pipeline {
namespace {

using tracemill::testing::DataPath;

InputRecord RecordOf(const std::string& path) {
  InputRecord r;
  r.path = path;
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  r.bytes = static_cast<uint64_t>(st.st_size);
  return r;
}

TEST(DecodeStageTest, AfterTheLastDecodeThePoolKeepsWhatTheWritesNeed) {
  ConvertOptions opts;
  Job job("tracemill", /*show_progress=*/false, "tracemill convert");
  const RankMatcher ranks = *RankMatcher::Create("");
  ConvertContext cx(opts, job, ranks);
  cx.threads = 2;
  for (const char* rel : {"hta/trace_filter/sampled_rank-0.json.gz", "hta/trace_filter/sampled_rank-1.json.gz",
                          "perfetto/flow_events_json_v2.json"})
    cx.records.push_back(RecordOf(DataPath(rel)));
  cx.read.assign(cx.records.size(), true);
  DecodeSchedule s;
  s.memory = PlanMemory(uint64_t{4} << 30).ForOverlap(uint64_t{64} << 20, cx.threads);
  s.max_inflated_bytes = uint64_t{1} << 30;
  s.overlap = true;
  s.slots = 2;
  s.order = {2, 0, 1};
  s.spill_dir = ::testing::TempDir();
  DecodedRuns runs(cx.records.size(), s.memory.runs, s.spill_dir, 0, /*direct_io=*/false);
  ConvertProgress progress(job.console(), s.order.size(), s.overlap);
  ChunkPoolScope pool(s.memory);
  DecodeStage decode(cx, s, runs, progress);
  // An output written meanwhile: its blocks (8 x 16 MiB) went to the pool.
  constexpr size_t kBlock = size_t{16} << 20;
  std::vector<void*> blocks;
  for (int k = 0; k < 8; ++k) {
    blocks.push_back(formats::AllocateLarge(kBlock));
    std::memset(blocks.back(), 1, 4096);
  }
  for (void* p : blocks) formats::FreeLarge(p, kBlock);
  ASSERT_EQ(formats::ChunkPoolBytes(), 8 * kBlock);

  EXPECT_FALSE(decode.Decode(2));
  EXPECT_FALSE(decode.Decode(0));
  EXPECT_TRUE(decode.Decode(1));  // the last of the three
  for (size_t i : s.order) {
    EXPECT_TRUE(cx.records[i].status.ok()) << cx.records[i].path << ": " << cx.records[i].status;
    EXPECT_GT(cx.records[i].events_read, 0u) << cx.records[i].path;
  }
  // The decodes took what they needed of the pool (their arenas' chunks are
  // shorter than a block: a block's head each, its tail pooled).
  const size_t before = formats::ChunkPoolBytes();
  EXPECT_GT(before, 6 * kBlock);
  decode.AfterLastDecode();
  const size_t keep = kWriterBytes * 2;  // per thread
  EXPECT_LE(formats::ChunkPoolBytes(), keep);
  EXPECT_GE(formats::ChunkPoolBytes(), keep - kBlock);  // the shortest blocks go first, up to the limit
  // Written outputs free their runs later: pooled up to the same limit, the
  // rest unmapped at once.
  void* a = formats::AllocateLarge(keep);
  void* b = formats::AllocateLarge(keep);
  formats::FreeLarge(a, keep);
  formats::FreeLarge(b, keep);
  EXPECT_EQ(formats::ChunkPoolBytes(), keep);
  decode.DoneDecoding(/*keep_spills=*/false);
}

}  // namespace
}  // namespace tracemill::pipeline
