#pragma once
// An output's merged order split into consecutive time ranges, each written
// as a file of its own (convert --time-ranges N, pipeline/convert/
// write_output.h), so that a sharded job can give one output's ranges to
// several shards.
//
// The split depends on the runs' keys alone: every process that decodes the
// same inputs (one process, or each shard that owns a range) chooses the
// same bounds, whether or not a run spilled. The bounds are quantiles of
// the runs' samples (SortedRun::samples, each weighted by its run's
// stride), so each range holds about the same number of events. Metadata
// (`M`) sorts first and is in the first range.
#include <cstdint>
#include <vector>

#include "formats/common/event.h"
#include "merge/range_cutter.h"
#include "merge/sorted_run.h"

namespace tracemill::merge {

// TimeSplit: `ranges` consecutive ranges of the merged order of an output's
// runs: range r holds the events whose key (aligned ts, tie, run index)
// is at or above bounds[r - 1] (r > 0) and below bounds[r] (r < ranges - 1).
// A range may be empty (few events, or many of one key).
struct TimeSplit {
  int ranges = 1;
  std::vector<RangeBound> bounds;  // ranges - 1 of them, in order

  // RangeOf: the range of event `e` of run `run` (whose clock shift is
  // `shift_ns`): 0 for metadata.
  int RangeOf(const formats::Event& e, int run, int64_t shift_ns) const;
};

// FirstAtOrAbove: the first position of run `run` (index `run_index` in
// the output, clock shift `shift_ns`; in memory) whose key is at or above
// `b`, or its size(). Metadata keys are below every bound.
size_t FirstAtOrAbove(const SortedRun& run, int run_index, int64_t shift_ns, const RangeBound& b);

// SplitRuns chooses `ranges` >= 1 ranges of `runs` (`shifts_ns` empty or
// one per run, as KWayMerger's) from their samples whose aligned ts is in
// [from_ns, to_ns] (the output's time window: the events it writes).
TimeSplit SplitRuns(const std::vector<SortedRun*>& runs, const std::vector<int64_t>& shifts_ns, int ranges,
                    int64_t from_ns = INT64_MIN, int64_t to_ns = INT64_MAX);

}  // namespace tracemill::merge
