#pragma once
// K-way merge of sorted runs into one output stream.
//
// The merger pulls `Next()` from each run and yields events in
// `(ts_ns, tie, run index)` order: at equal keys the run listed first wins,
// so the output is deterministic and metadata of run 0 precedes run 1's.
// A tree of losers over the run heads' keys (merge/loser_tree.h):
// at most ceil(log2 k) comparisons an event, k = runs in the output (ranks per GPU:
// 8-512 in practice), none reading a run: with the keys behind the runs,
// each comparison chased a run's pointers, and at 128 runs per output the
// binary heap of those days was 12 % of the 512-rank job's CPU (session 22).
#include <cstdint>
#include <utility>
#include <vector>

#include "merge/loser_tree.h"
#include "merge/sorted_run.h"

namespace tracemill::merge {

// KWayMerger: SortedRun... -> one ordered stream of (run index, event).
class KWayMerger {
 public:
  // `runs` are borrowed and must outlive the merger. `shifts_ns` (empty, or
  // one per run) is added to each run's timed keys (metadata keys stay
  // first): a constant per run keeps it sorted, so runs on different clocks
  // merge in aligned time (pipeline/clocks/clocks.h).
  explicit KWayMerger(std::vector<SortedRun*> runs, std::vector<int64_t> shifts_ns = {});

  // Next returns the next event and the index of its run in `runs`, or
  // {-1, nullptr} at the end.
  std::pair<int, const formats::Event*> Next();

 private:
  // HeadOf: run `run`'s next key, or its done key.
  MergeHead HeadOf(int run) const;

  std::vector<SortedRun*> runs_;
  std::vector<int64_t> shifts_;  // per run; empty: none
  LoserTree tree_;               // leaf r: run r
};

}  // namespace tracemill::merge
