#pragma once
// WriteMerged: the merge-and-write loop of one output, on one thread or
// merged and formatted on several.
//
// The serial loop is a KWayMerger (merge/kway_merger.h): one tree of losers over the
// run heads. With `threads` > 1 the loop is a oneTBB parallel_pipeline over
// ranges of the merged order (merge/range_cutter.h): a serial, in-order
// stage cuts the next range (runs in memory by position), a parallel stage
// merges the range alone, filters it
// (MergeHooks::keeps) and formats the kept events into the range's own
// buffer, and a serial, in-order stage counts the events, calls
// MergeHooks::seen in merge order and appends the buffer to the file. The
// ranges partition the merged order, so the output bytes are the serial
// loop's (MergeWriteTest): the separator of the array's first entry is
// fixed in the last stage, the only place that knows which entry is first.
// An output's merge, which was one core's, now spreads over the free ones.
// Ranges are used from kMinRangeThreads threads on, for outputs without a
// spilled run. Otherwise the first stage merges (its KWayMerger yields
// ~kBatchBytes batches, filtered and copied there; the rest as above): at
// 2 threads that merge keeps pace with formatting on both, and ranges were
// 4-9 % slower on the real 16-rank job (bench/RESULTS.md, session 18); a
// spilled run can only be read in order, and cutting it (RangeCutter copies
// its events and gives back those past the bound) cost more than merging it.
//
// A range holds about kRangeBytes of formatted events (from the runs'
// average event size) and at most kMaxBatchTokens ranges are in flight. So
// that the ranges stay small, an output with an event whose rest is longer
// than kMaxParallelRestBytes (64 KiB; Kineto's args are ~1 KB) is written
// by the serial loop. A gzip output gets the members of the serial loop
// (ChromeWriter::AppendFormatted): its bytes do not depend on `threads`.
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "formats/chrome/chrome_writer.h"
#include "merge/sorted_run.h"
#include "pipeline/output/output_parts.h"

namespace tracemill::pipeline {

// Ranges of about kRangeBytes formatted bytes (from the runs' average event
// size: a range of larger events than the average holds more), at most
// kRangeCopyBytes of copied spilled events each, and kBatchTokens to
// kMaxBatchTokens (the thread count) of them in flight. Each also holds a
// copy of its kept events (64 bytes each): about 5 MiB at most on average,
// counted in kWriterBytes (pipeline/budget.h).
inline constexpr size_t kRangeBytes = 256 << 10;
inline constexpr size_t kRangeCopyBytes = 256 << 10;
// The first stage's merged batches (an output with a spilled run): about
// this many formatted bytes, their spilled runs' rest bytes copied.
inline constexpr size_t kBatchBytes = 256 << 10;
inline constexpr size_t kBatchTokens = 4;
inline constexpr int kMinRangeThreads = 4;
inline constexpr size_t kMaxBatchTokens = 8;
// Outputs with an event whose rest is longer are written by the serial loop.
inline constexpr size_t kMaxParallelRestBytes = 64 << 10;

// FormatsInParallel: whether WriteMerged formats on several threads: more
// than one thread, and no event of `runs` with a rest over
// kMaxParallelRestBytes.
bool FormatsInParallel(const std::vector<merge::SortedRun*>& runs, int threads);

// MergeHooks: what the caller decides and sees of an output's events.
struct MergeHooks {
  // keeps(run, e): whether event `e` of run `run` is written. Called on
  // several threads at once: it must only read. May be empty: every event
  // is written (no window and no time range: no call per event).
  std::function<bool(int run, const formats::Event& e)> keeps;
  // Keeps: keeps(run, e), or true without one.
  bool Keeps(int run, const formats::Event& e) const { return !keeps || keeps(run, e); }
  // seen(run, e, kept): once per event, in merge order, on one thread at a
  // time, after `keeps` said `kept` (the caller counts why an event was
  // not kept, and taps the kept ones). May be empty: nothing to see.
  std::function<void(int run, const formats::Event& e, bool kept)> seen;
};

// MergeStats: how an output's merge went: the ranges, and the time spent in
// the pipeline's serial stages, which bound the output's rate however many
// threads merge and format: cutting the ranges, counting and seeing their
// events (MergeHooks::seen: the taps), and appending their bytes to the
// file (a full direct-I/O ring waits for the disk here). Zero for the
// serial loop.
struct MergeStats {
  uint64_t ranges = 0;
  // Under kMinRangeThreads threads or with a spilled run: the "ranges"
  // are batches of the first stage's serial merge (KWayMerger), `cut_ns`
  // that merge's time.
  bool merged_serially = false;
  int64_t cut_ns = 0;
  int64_t count_ns = 0;
  int64_t append_ns = 0;
  // Waiting for the disk, by the appends and the copies (stage 4, beside
  // the serial stages): the output's file's total.
  int64_t disk_wait_ns = 0;
};

// WriteMerged merges `runs` (opened; `shifts_ns` empty or one per run, as
// KWayMerger's) and writes every event `hooks.keeps` keeps, in merge order,
// with `w` (Begin and the process metadata written before, Finish after,
// by the caller). `winputs[run]` is the input of run `run`. `threads` > 1
// merges and formats on the current task arena's threads. Returns the
// first write error, or OK; `stats`, if given, gets MergeStats. Exceptions
// from the hooks or the allocator propagate.
absl::Status WriteMerged(const std::vector<merge::SortedRun*>& runs, const std::vector<int64_t>& shifts_ns,
                         std::vector<formats::WriterInput>& winputs, formats::ChromeWriter& w, int threads,
                         const MergeHooks& hooks, MergeStats* stats = nullptr);
// The same into an output that may be written in parts (output_parts.h):
// the same bytes as the one-file loop while no part is cut.
absl::Status WriteMerged(const std::vector<merge::SortedRun*>& runs, const std::vector<int64_t>& shifts_ns,
                         std::vector<formats::WriterInput>& winputs, OutputParts& w, int threads,
                         const MergeHooks& hooks, MergeStats* stats = nullptr);

}  // namespace tracemill::pipeline
