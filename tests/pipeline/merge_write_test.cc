// pipeline/convert/merge_write: formatting on several threads writes the bytes the
// serial loop writes, counts the same events per input, and calls `seen` in
// merge order.
#include "pipeline/convert/merge_write.h"

#include <libdeflate.h>
#include <simdjson.h>
#include <tbb/task_arena.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "formats/chrome/output_file.h"
#include "gtest/gtest.h"
#include "merge/namespacer.h"
#include "merge/spill_file.h"
#include "pipeline/convert/decode_input.h"
#include "pipeline/inputs/rank_name.h"

namespace tracemill::pipeline {
namespace {

// A Kineto-like rank file: metadata first, then `n` X events out of ts
// order, args of varying length (some events have none).
std::string RankJson(int rank, int n) {
  std::string s =
      absl::StrCat(R"({"distributedInfo": {"rank": )", rank, R"(}, "traceEvents": [)",
                   R"({"ph": "M", "name": "process_name", "pid": 7, "args": {"name": "python"}})");
  for (int i = 0; i < n; ++i) {
    const int64_t ts_ns = 1682725898001000000 + int64_t{(i * 7919) % n} * 1000 + rank * 333 + i % 3;
    absl::StrAppend(&s, ",\n{\"ph\": \"X\", \"name\": \"op", i % 13, "\", \"pid\": 7, \"tid\": ", i % 4,
                    ", \"ts\": ", ts_ns / 1000, ".", absl::StrFormat("%03d", ts_ns % 1000),
                    ", \"dur\": ", i % 50);
    if (i % 5)
      absl::StrAppend(&s, ", \"args\": {\"Call stack\": \"", std::string(i % 700, 'a' + i % 26), "\"}");
    s.push_back('}');
  }
  s.append("]}");
  return s;
}

struct DecodedJob {
  std::vector<std::unique_ptr<merge::SortedRun>> runs;
  std::vector<formats::WriterInput> winputs;
};

DecodedJob Decode(int ranks, int events) {
  static DecodeWorker worker;
  auto matcher = RankMatcher::Create("");
  DecodedJob job;
  merge::Namespacer ns;
  for (int r = 0; r < ranks; ++r) {
    std::string json = RankJson(r, events);
    const size_t size = json.size();
    json.resize(size + simdjson::SIMDJSON_PADDING, '\0');
    InputRecord rec;
    rec.path = absl::StrCat("rank", r, ".json");
    auto run = DecodeInput(std::string_view(json.data(), size), json.size(), worker, *matcher, rec);
    EXPECT_NE(run, nullptr) << rec.status;
    if (!run) continue;
    job.runs.push_back(std::move(run));
  }
  for (auto& run : job.runs) {
    merge::InputNamespace ids = ns.Add(run->data());
    formats::WriterInput in;
    in.data = &run->data();
    in.SetOutPids(std::move(ids.out_pid));
    in.pid_order = std::move(ids.pid_order);
    in.id_base = ids.id_base;
    in.label = absl::StrCat("rank ", job.winputs.size());
    job.winputs.push_back(std::move(in));
  }
  return job;
}

struct Written {
  std::string bytes;
  std::vector<uint64_t> per_input;
  uint64_t events = 0;
  std::vector<std::pair<int, int64_t>> kept;  // (run, ts_ns) in the order `seen` saw them
  uint64_t ranges = 0;  // MergeStats
  uint32_t crc = 0;     // OutputFile's CRC-32 of the bytes
  bool merged_serially = false;
};

// Writes the job's runs (from their start) as one output, keeping events
// whose ts is not a multiple of 11 us.
Written Write(DecodedJob& job, int threads, bool metadata, bool gzip = false, std::vector<int64_t> shifts = {}) {
  for (auto& run : job.runs) EXPECT_TRUE(run->Open(1 << 16).ok());
  for (auto& in : job.winputs) in.events_written = 0;
  auto out = formats::OutputFile::CreateInMemory(gzip);
  formats::ChromeWriter w(out.get(), 1000);
  Written r;
  EXPECT_TRUE(w.Begin("ms", "{}").ok());
  if (metadata) {
    for (auto& in : job.winputs) EXPECT_TRUE(w.WriteProcessMetadata(in).ok());
  }
  std::vector<merge::SortedRun*> runs;
  for (auto& run : job.runs) runs.push_back(run.get());
  tbb::task_arena arena(threads);
  absl::Status st;
  const MergeHooks hooks{[](int, const formats::Event& e) { return e.ts_ns % 11000 != 0; },
                         [&](int run, const formats::Event& e, bool kept) {
                           EXPECT_EQ(kept, e.ts_ns % 11000 != 0);
                           r.kept.emplace_back(run, e.ts_ns);
                         }};
  MergeStats stats;
  arena.execute([&] { st = WriteMerged(runs, shifts, job.winputs, w, threads, hooks, &stats); });
  r.ranges = stats.ranges;
  r.merged_serially = stats.merged_serially;
  EXPECT_TRUE(st.ok()) << st;
  EXPECT_TRUE(w.Finish().ok());
  EXPECT_TRUE(out->Commit().ok());
  r.bytes = out->memory();
  r.crc = out->crc32();
  r.events = w.events_written();
  for (auto& in : job.winputs) r.per_input.push_back(in.events_written);
  return r;
}

TEST(MergeWriteTest, ParallelFormattingWritesTheSerialBytes) {
  // 3 x 4,000 events with args up to 700 bytes: about 4 MB, 4 ranges of
  // ~1 MiB merged on their own.
  DecodedJob job = Decode(3, 4000);
  ASSERT_EQ(job.runs.size(), 3u);
  for (bool metadata : {true, false}) {
    SCOPED_TRACE(metadata ? "with process metadata first" : "an event first");
    const Written serial = Write(job, 1, metadata);
    const Written parallel = Write(job, 4, metadata);  // ranges
    const Written two = Write(job, 2, metadata);       // merged by the first stage
    ASSERT_GT(serial.bytes.size(), 3 * kRangeBytes);
    EXPECT_EQ(serial.ranges, 0u);  // the serial loop
    EXPECT_GE(parallel.ranges, 3u);
    EXPECT_FALSE(parallel.merged_serially);
    EXPECT_TRUE(two.merged_serially);
    EXPECT_EQ(two.bytes, serial.bytes);
    EXPECT_EQ(two.kept, serial.kept);
    EXPECT_EQ(serial.kept.size(), 3u * 4001);
    EXPECT_LT(serial.events, 3u * 4001);  // some were not kept
    EXPECT_GT(serial.events, 3u * 3000);
    EXPECT_EQ(parallel.bytes, serial.bytes);
    // Each range's CRC from its formatter, combined in order (and the first
    // range's again once its separator is fixed, without metadata first).
    EXPECT_EQ(parallel.crc, libdeflate_crc32(0, serial.bytes.data(), serial.bytes.size()));
    EXPECT_EQ(two.crc, parallel.crc);
    EXPECT_EQ(serial.crc, parallel.crc);
    EXPECT_EQ(parallel.events, serial.events);
    EXPECT_EQ(parallel.per_input, serial.per_input);
    EXPECT_EQ(parallel.kept, serial.kept);
    // The array opens with "\n" and every later entry with ",\n".
    EXPECT_NE(serial.bytes.find("\"traceEvents\":[\n{"), std::string::npos);
    EXPECT_EQ(serial.bytes.find("[,"), std::string::npos);
    EXPECT_EQ(serial.bytes.substr(serial.bytes.size() - 4), "\n]}\n");
  }
}

// Runs on clocks shifted onto one another merge in aligned time, in ranges
// as in the serial loop (the shifts reorder events of runs 1 and 2 against
// run 0's by up to 5 us, across the ranges' bounds).
TEST(MergeWriteTest, ShiftedRunsWriteTheSerialBytes) {
  DecodedJob job = Decode(3, 4000);
  ASSERT_EQ(job.runs.size(), 3u);
  const std::vector<int64_t> shifts{0, 5000, -3333};
  const Written serial = Write(job, 1, true, false, shifts);
  const Written parallel = Write(job, 4, true, false, shifts);
  const Written unshifted = Write(job, 1, true, false);
  EXPECT_NE(serial.kept, unshifted.kept);  // the shifts changed the order
  EXPECT_GE(parallel.ranges, 3u);
  EXPECT_EQ(parallel.kept, serial.kept);
  EXPECT_TRUE(parallel.bytes == serial.bytes);
  EXPECT_EQ(parallel.per_input, serial.per_input);
}

// A gzip output is one member per 1 MiB the serial loop flushes; the
// batches append the same members, so the file's bytes do not depend on
// --threads (they did: 4% larger, 402 members instead of 88).
TEST(MergeWriteTest, GzipOutputHasTheSerialMembers) {
  DecodedJob job = Decode(3, 4000);
  ASSERT_EQ(job.runs.size(), 3u);
  const Written serial = Write(job, 1, true, /*gzip=*/true);
  const Written parallel = Write(job, 4, true, /*gzip=*/true);
  ASSERT_GT(serial.bytes.size(), 100000u);
  EXPECT_EQ(serial.bytes.substr(0, 2), "\x1f\x8b");
  EXPECT_TRUE(parallel.bytes == serial.bytes) << parallel.bytes.size() << " vs " << serial.bytes.size();
}

// An output with an event whose rest is over kMaxParallelRestBytes is written
// by the serial loop: kBatchTokens batches of such events held 4 copies of
// them (1,002 MB peak RSS for 40 MB events under --memory-limit 300M).
TEST(MergeWriteTest, LargeEventsAreWrittenSerially) {
  DecodedJob job = Decode(2, 100);
  ASSERT_EQ(job.runs.size(), 2u);
  EXPECT_EQ(job.runs[0]->max_rest_len(), 123u);  // `"args":{"Call stack":"` + 99 bytes + `"}`
  EXPECT_TRUE(FormatsInParallel({job.runs[0].get(), job.runs[1].get()}, 2));
  EXPECT_FALSE(FormatsInParallel({job.runs[0].get(), job.runs[1].get()}, 1));
  std::string json = R"({"traceEvents": [{"ph": "X", "name": "big", "pid": 1, "tid": 1, "ts": 1, "dur": 1,)"
                     R"( "args": {"s": ")" + std::string(kMaxParallelRestBytes, 'z') + R"("}}]})";
  const size_t size = json.size();
  json.resize(size + simdjson::SIMDJSON_PADDING, '\0');
  static DecodeWorker worker;
  auto matcher = RankMatcher::Create("");
  InputRecord rec;
  rec.path = "big.json";
  auto big = DecodeInput(std::string_view(json.data(), size), json.size(), worker, *matcher, rec);
  ASSERT_NE(big, nullptr);
  EXPECT_GT(big->max_rest_len(), kMaxParallelRestBytes);
  EXPECT_FALSE(FormatsInParallel({job.runs[0].get(), big.get()}, 2));
}

// Events of a spilled run live in its read buffer only until its next event:
// the batches copy them (and their rest bytes). One run spilled through the
// page cache, one direct (where the file system takes it), in one file.
TEST(MergeWriteTest, SpilledRunsWriteTheSameBytes) {
  DecodedJob job = Decode(3, 4000);
  ASSERT_EQ(job.runs.size(), 3u);
  const Written in_memory = Write(job, 1, true);
  auto file = merge::SpillFile::Create(::testing::TempDir());
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_TRUE(job.runs[0]->Spill(file->get()).ok());
  (*file)->UseDirect(true);
  ASSERT_TRUE(job.runs[2]->Spill(file->get()).ok());
  EXPECT_FALSE(job.runs[0]->spill_direct());
  EXPECT_EQ(job.runs[2]->spill_direct(), (*file)->direct());
  ASSERT_TRUE(job.runs[0]->spilled() && !job.runs[1]->spilled() && job.runs[2]->spilled());
  // Small read buffers (Write opens runs with 64 KiB): a batch spans many
  // refills.
  const Written parallel = Write(job, 4, true);
  const Written serial = Write(job, 1, true);
  EXPECT_TRUE(parallel.merged_serially);  // a spilled run: merged by the first stage
  EXPECT_GE(parallel.ranges, 3u);
  EXPECT_EQ(parallel.bytes, in_memory.bytes);
  EXPECT_EQ(serial.bytes, in_memory.bytes);
  EXPECT_EQ(parallel.per_input, in_memory.per_input);
  EXPECT_EQ(parallel.kept, in_memory.kept);
  for (auto& run : job.runs) run->DiscardSpill();
}

TEST(MergeWriteTest, NothingKeptWritesAnEmptyArray) {
  DecodedJob job = Decode(2, 50);
  ASSERT_EQ(job.runs.size(), 2u);
  for (int threads : {1, 2, 4}) {
    for (auto& run : job.runs) ASSERT_TRUE(run->Open(1 << 16).ok());
    auto out = formats::OutputFile::CreateInMemory(/*gzip=*/false);
    formats::ChromeWriter w(out.get(), 0);
    ASSERT_TRUE(w.Begin("ms", "{}").ok());
    tbb::task_arena arena(threads);
    absl::Status st;
    size_t seen = 0;
    const MergeHooks hooks{[](int, const formats::Event&) { return false; },
                           [&](int, const formats::Event&, bool kept) { seen += !kept; }};
    arena.execute([&] { st = WriteMerged({job.runs[0].get(), job.runs[1].get()}, {}, job.winputs, w, threads, hooks); });
    ASSERT_TRUE(st.ok());
    ASSERT_TRUE(w.Finish().ok());
    ASSERT_TRUE(out->Commit().ok());
    EXPECT_EQ(seen, 2u * 51);
    EXPECT_EQ(w.events_written(), 0u);
    EXPECT_EQ(out->memory(), "{\"displayTimeUnit\":\"ms\",\"otherData\":{},\"traceEvents\":[\n]}\n");
  }
}

}  // namespace
}  // namespace tracemill::pipeline
