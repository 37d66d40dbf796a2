#pragma once
// Timeline rows, the row half of `Analyze` (analysis.h): RunModel and the
// compared steps -> `Analysis::rows`, following the rules of analysis.h
// (rank rows banded by node, or node rows past `max_rank_rows`; missing
// ranges; unranked inputs; a run event log's scheduler and workers, bounded).
// Bars are not binned here (`Analyze` bins them once every row is known).
#include <cstdint>
#include <string>
#include <vector>

#include "report/analysis.h"
#include "report/run_model.h"
#include "report/step_compare.h"

namespace tracemill::report {

// RankRange: ranks lo..hi, inclusive.
struct RankRange {
  int64_t lo = 0, hi = 0;
  int64_t count() const { return hi - lo + 1; }
};

// RowSources: what rows are made of. `gpus_per_node` > 0.
struct RowSources {
  const RunModel& model;
  const Participants& parts;  // compared (CompareSteps has run)
  int64_t gpus_per_node = 8;
  int64_t world_size = 0;     // for the missing rows' reason
  bool missing_are_dead = false;  // some input failed (analysis.h)
};

// MissingReason: why ranks `r` have no row of their own, for the tooltip
// and the dead table: "no input for these ranks; distributedInfo.world_size
// is 8 and some inputs failed" (dead), or "not in the inputs:
// distributedInfo.world_size is 128 and no input failed" (not given).
std::string MissingReason(RankRange r, int64_t world_size, bool dead);

// AddTimelineRows appends every row to `a->rows` in page order: blocks by
// first rank (missing ranges, then rank rows or node rows with the ranks
// kept under them), then unranked inputs, then each run event log's
// scheduler and workers. Sets `a->rank_inputs`, `a->collapsed`,
// `a->workers` and appends the scheduler rounds to `a->rounds`. Last, the
// rows' bars: built from their steps one row at a time and binned where a
// row has more than fit (`max_bars` / rows, at least 8, at most
// `max_bars_per_row`; `a->binned`).
void AddTimelineRows(const RowSources& src, const std::vector<RankRange>& missing,
                     const AnalysisLimits& limits, Analysis* a);

}  // namespace tracemill::report
