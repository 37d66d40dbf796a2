#pragma once
// Decode and sort: the convert job's first stage, in two parts.
//
// ScheduleDecodes plans it (before the flow graph): the decode cost of every
// input this process reads (an input that alone exceeds the decode budget is
// rejected here, naming the --memory-limit that would fit), whether outputs
// are written while later inputs decode (the overlap, DESIGN-NOTES.md), how
// many inputs decode at once (the limiter_node's threshold) and in what
// order.
//
// DecodeStage is the body of the graph's decode node (InputRecord index ->
// SortedRun in DecodedRuns): read (or map) the input, inflate, recognize,
// decode, sort (pipeline/convert/decode_input.h), then keep the run in memory or
// spill it. It holds one worker (decoders, read and inflate buffers, spill
// file) per decode slot, so at most `slots` sets of buffers ever exist.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <tbb/concurrent_queue.h>

#include "merge/spill_file.h"
#include "pipeline/budget.h"
#include "pipeline/convert/convert_context.h"
#include "pipeline/convert/decode_input.h"
#include "pipeline/convert/decoded_runs.h"
#include "pipeline/progress.h"

namespace tracemill::pipeline {

// DecodeSchedule: how the inputs this process reads are decoded.
struct DecodeSchedule {
  MemoryPlan memory;              // the budget split in use (overlap or two stages)
  uint64_t max_inflated_bytes = 0;  // a gzip input inflates to at most this (the same in both modes)
  bool overlap = false;           // outputs written as their inputs are decoded
  size_t slots = 1;               // inputs decoded at once (1..threads)
  std::vector<size_t> order;      // inputs to decode, in decode order
  std::string spill_dir;          // --tmp-dir, else $TMPDIR, else /tmp
  uint64_t spill_page_cache = 0;  // spilled bytes the page cache may hold (SpillPageCacheBytes)
};

// ScheduleDecodes plans the decode of the inputs `cx.read` marks, within
// `memory` (PlanMemory of --memory-limit). Inputs skipped or rejected
// already, and those over the decode budget (rejected now, their line said
// when this shard reports them), are left out. Largest first; with the
// overlap, output by output, largest output first, inputs planned to no
// output before all others. Says the plan with --verbose.
DecodeSchedule ScheduleDecodes(ConvertContext& cx, const MemoryPlan& memory);

// ReadAndDecode: one input through read (or map; an smdebug node's files one
// after another), then `DecodeInput` (inflate, recognize, decode, sort);
// everything that happened goes into `r`. `max_inflated_bytes`: see
// `DecodeInput`. Also the follow job's look at a new file (follow/probe.h).
std::unique_ptr<merge::SortedRun> ReadAndDecode(InputRecord& r, DecodeWorker& w, const RankMatcher& ranks,
                                                uint64_t max_inflated_bytes, const DecodeOptions& o);

// ChunkPoolScope: while it lives, freed blocks (arena chunks, the event and
// key vectors of spilled runs and written outputs) are kept for the next
// decodes instead of being faulted in again (formats/common/large_alloc.h),
// up to the memory limit (the pool never holds more than was in use); and
// malloc keeps the free top of its heaps up to limit/64 (128 KiB..8 MiB).
// The pool is emptied, and malloc's trim threshold set back to its 128 KiB
// default, when it ends.
class ChunkPoolScope {
 public:
  explicit ChunkPoolScope(const MemoryPlan& memory);
  ~ChunkPoolScope();
  ChunkPoolScope(const ChunkPoolScope&) = delete;
  ChunkPoolScope& operator=(const ChunkPoolScope&) = delete;
};

// DecodeWorkerSlot: a decode worker and its spill file (created on the
// first spill).
struct DecodeWorkerSlot : DecodeWorker {
  std::unique_ptr<merge::SpillFile> spill;
};

class DecodeStage {
 public:
  DecodeStage(ConvertContext& cx, const DecodeSchedule& schedule, DecodedRuns& runs, ConvertProgress& progress);

  // Decode reads, decodes and sorts input `i` into `runs` (nothing if it is
  // rejected or skipped; what happened is in its record, its error line
  // said if this shard reports it now). At most `slots` calls at once.
  // Never throws. Returns true for the call that finished the schedule's
  // last decode (every other input is decoded by then).
  bool Decode(size_t i);

  // AfterLastDecode (outputs written as their inputs are decoded, once the
  // last decode has handed on its output): keeps at most kWriterBytes per
  // thread of free blocks pooled, for the writes still to start; the rest
  // is unmapped now, beside the last output's write (whose tail waits on
  // the disk), not when the job ends. The blocks written outputs free from
  // now on go back as they are freed. The workers and their spill files
  // stay (DoneDecoding's).
  void AfterLastDecode();

  // DoneDecoding frees the workers' buffers once every input is decoded;
  // `keep_spills` keeps their spill files for the merge that follows (two
  // stages). Says what is in memory and spilled with --verbose.
  void DoneDecoding(bool keep_spills);

 private:
  // DecodeAndKeep: input `i` -> its run kept or spilled in `runs_`.
  void DecodeAndKeep(size_t i, DecodeWorkerSlot& w);
  // Reject: input `i` is rejected with `st` after its events were read.
  void Reject(size_t i, absl::Status st);

  ConvertContext& cx_;
  const DecodeSchedule& schedule_;
  DecodedRuns& runs_;
  ConvertProgress& progress_;
  const DecodeOptions options_;
  std::vector<std::unique_ptr<DecodeWorkerSlot>> workers_;
  tbb::concurrent_queue<DecodeWorkerSlot*> idle_;
  std::vector<std::unique_ptr<merge::SpillFile>> spill_files_;  // kept by DoneDecoding(true)
  const uint64_t fresh_at_start_;  // formats::FreshMappedBytes() when constructed
  std::atomic<size_t> decoded_{0};  // Decode calls finished
  uint64_t released_after_last_ = 0;  // pooled bytes AfterLastDecode gave back
};

}  // namespace tracemill::pipeline
