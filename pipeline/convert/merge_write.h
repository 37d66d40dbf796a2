#pragma once
// WriteMerged: the merge-and-write loop of one output, on one thread or
// formatted on several.
//
// The k-way merge is serial (it is a heap over the run heads), but most of
// an output's write time is formatting (WriteEvent: ts and dur as decimal
// microseconds, the rest bytes copied) and the copy into the file's buffers.
// With `threads` > 1 the loop is a oneTBB parallel_pipeline: a serial,
// in-order stage pulls events from the merger and counts them in batches of
// about kBatchBytes, a parallel stage formats each batch into its own
// buffer, and a serial, in-order stage appends the buffers to the file. The
// output bytes are the same as the serial loop's (MergeWriteTest). It lets
// the last output of a job, written after every decode has finished, use
// both cores instead of one.
//
// Events of a spilled run are valid only until that run's next event: the
// batches hold copies of the events, and of a spilled run's rest bytes. So
// that the batches stay small, an output with an event whose rest is longer
// than kMaxParallelRestBytes (64 KiB; Kineto's args are ~1 KB) is written by
// the serial loop. A gzip output gets the members of the serial loop
// (ChromeWriter::AppendFormatted): its bytes do not depend on `threads`.
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "formats/chrome/chrome_writer.h"
#include "merge/kway_merger.h"
#include "pipeline/output/output_parts.h"

namespace tracemill::pipeline {

// Batches of about this many formatted bytes; at most kBatchTokens in
// flight. Each also holds up to 4,096 event copies (72 bytes each) and, for
// spilled runs, their rest bytes: under 4 MiB in all, counted in
// kWriterBytes (pipeline/budget.h).
inline constexpr size_t kBatchBytes = 256 << 10;
inline constexpr size_t kBatchTokens = 4;
// Outputs with an event whose rest is longer are written by the serial loop.
inline constexpr size_t kMaxParallelRestBytes = 64 << 10;

// FormatsInParallel: whether WriteMerged formats on several threads: more
// than one thread, and no event of `runs` with a rest over
// kMaxParallelRestBytes.
bool FormatsInParallel(const std::vector<merge::SortedRun*>& runs, int threads);

// WriteMerged writes every event `merger` yields, in its order, with `w`
// (Begin and the process metadata written before, Finish after, by the
// caller). `keep(run, e)` is called once per event in merge order on one
// thread at a time; false skips the event (the caller counts why).
// `runs` are the merger's runs and `winputs[run]` the input of run `run`.
// `threads` > 1 formats on the current task arena's threads. Returns the
// first write error, or OK. Exceptions from `keep` or the allocator
// propagate.
absl::Status WriteMerged(merge::KWayMerger& merger, const std::vector<merge::SortedRun*>& runs,
                         std::vector<formats::WriterInput>& winputs, formats::ChromeWriter& w, int threads,
                         const std::function<bool(int run, const formats::Event& e)>& keep);
// The same into an output that may be written in parts (output_parts.h):
// the same bytes as the one-file loop while no part is cut.
absl::Status WriteMerged(merge::KWayMerger& merger, const std::vector<merge::SortedRun*>& runs,
                         std::vector<formats::WriterInput>& winputs, OutputParts& w, int threads,
                         const std::function<bool(int run, const formats::Event& e)>& keep);

}  // namespace tracemill::pipeline
