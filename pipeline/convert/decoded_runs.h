#pragma once
// DecodedRuns: the sorted run of every decoded input (merge/sorted_run.h),
// from the decode node that makes it to the write node that merges and
// frees it, and the bytes of them held in memory against the job's run
// budget (pipeline/budget.h: MemoryPlan::runs).
//
// A run that would take the runs in memory past the budget is spilled to
// its worker's spill file (merge/spill_file.h) instead, so decodes that run
// ahead of the writes spill rather than grow memory. Runs waiting for their
// output count until freed.
//
// A spilled run goes through the page cache while the spilled bytes held
// there (spilled through it, not yet merged) stay within the page cache
// the job may use, and bypasses it past that (merge/spill_file.h says what
// each costs): SpillPageCacheBytes (budget.h), the memory the process may
// have beyond its --memory-limit, halved.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "merge/sorted_run.h"
#include "merge/spill_file.h"

namespace tracemill::pipeline {

class DecodedRuns {
 public:
  // `inputs`: the job's input count; `budget_bytes`: the runs budget;
  // `spill_dir`: where spill files are created (--tmp-dir); `page_cache_bytes`:
  // the spilled bytes that may stay in the page cache at once; `direct_io`:
  // O_DIRECT past that where possible (--no-direct-io: false, never).
  DecodedRuns(size_t inputs, uint64_t budget_bytes, std::string spill_dir, uint64_t page_cache_bytes,
              bool direct_io);

  // Keep takes input `i`'s run: in memory while the runs fit the budget,
  // else spilled into `*spill` (a worker's file, created on first use).
  // Thread-safe for distinct `i`. Errors: those of creating the spill file
  // or spilling (kResourceExhausted when the disk is full); the run is then
  // dropped.
  absl::Status Keep(size_t i, std::unique_ptr<merge::SortedRun> run, std::unique_ptr<merge::SpillFile>* spill);

  // Free drops input `i`'s run (written, or not wanted): its memory leaves
  // the budget and its spilled bytes are punched out of the spill file (their
  // disk blocks and page cache go back now). No-op if it has none.
  void Free(size_t i);

  // The run of input `i`, or nullptr.
  merge::SortedRun* get(size_t i) const { return runs_[i].get(); }
  // Every input's run (nullptr where none), by input index.
  const std::vector<std::unique_ptr<merge::SortedRun>>& all() const { return runs_; }

  uint64_t resident_bytes() const { return resident_.load(); }
  uint64_t spilled_runs() const { return spilled_runs_.load(); }
  uint64_t spilled_events() const { return spilled_events_.load(); }
  // Runs spilled past the page cache (O_DIRECT).
  uint64_t direct_runs() const { return direct_runs_.load(); }

 private:
  std::vector<std::unique_ptr<merge::SortedRun>> runs_;
  std::vector<uint64_t> accounted_;  // bytes of runs_[i] counted in resident_
  const uint64_t budget_;
  const std::string spill_dir_;
  const uint64_t page_cache_bytes_;
  const bool direct_io_;
  std::atomic<uint64_t> resident_{0};
  std::atomic<uint64_t> cached_spill_{0};  // spilled bytes through the page cache, not yet freed
  std::atomic<uint64_t> spilled_runs_{0}, spilled_events_{0}, direct_runs_{0};
};

}  // namespace tracemill::pipeline
