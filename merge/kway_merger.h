#pragma once
// K-way merge of sorted runs into one output stream.
//
// The merger pulls `Next()` from each run and yields events in
// `(ts_ns, tie, run index)` order: at equal keys the run listed first wins,
// so the output is deterministic and metadata of run 0 precedes run 1's.
// A binary heap over the run heads: O(log k) per event, k = runs in the
// output (ranks per GPU: 8-512 in practice). The heap holds each head's
// key (shifted ts, tie, run), so a comparison reads only the heap's own
// array: with the keys behind the runs, each of the ~2 log k comparisons
// per event chased a run's pointers, and at 128 runs per output the heap
// was 12 % of the 512-rank job's CPU (session 22).
#include <cstdint>
#include <utility>
#include <vector>

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
  // Head: a run's next key as the merge orders it.
  struct Head {
    int64_t ts;    // shifted, metadata's INT64_MIN kept
    uint64_t tie;
    int run;
  };
  static bool HeadLess(const Head& a, const Head& b) {
    if (a.ts != b.ts) return a.ts < b.ts;
    if (a.tie != b.tie) return a.tie < b.tie;
    return a.run < b.run;
  }
  Head HeadOf(int run) const;
  void SiftDown(size_t i);

  std::vector<SortedRun*> runs_;
  std::vector<int64_t> shifts_;  // per run; empty: none
  std::vector<Head> heap_;       // min-heap on the head key
};

}  // namespace tracemill::merge
