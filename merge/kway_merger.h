#pragma once
// K-way merge of sorted runs into one output stream.
//
// The merger pulls `Next()` from each run and yields events in
// `(ts_ns, tie, run index)` order: at equal keys the run listed first wins,
// so the output is deterministic and metadata of run 0 precedes run 1's.
// A tree of losers over the run heads (Knuth, TAOCP 5.4.1): each event
// replays one match per level from its run's leaf to the root, ceil(log2 k)
// comparisons, k = runs in the output (ranks per GPU: 8-512 in practice),
// where the binary heap it replaced made up to 2 log2 k (a child against
// its sibling, then against the sifted head) and ~1.3 log2 k on
// average. The tree holds each head's key (shifted ts, tie, run), so a
// comparison reads only the tree's own array: with the keys behind the
// runs, each comparison chased a run's pointers, and at 128 runs per
// output the heap was 12 % of the 512-rank job's CPU (session 22).
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
  // Head: a run's next key as the merge orders it; a run that is done
  // has ts kDoneTs, which no event's shifted ts reaches (|ts| and |shift|
  // are at most kMaxAbsTimeNs, 2^62 - 1), and loses every match.
  struct Head {
    int64_t ts;    // shifted, metadata's INT64_MIN kept
    uint64_t tie;
    int run;
  };
  static constexpr int64_t kDoneTs = INT64_MAX;
  static bool HeadLess(const Head& a, const Head& b) {
    if (a.ts != b.ts) return a.ts < b.ts;
    if (a.tie != b.tie) return a.tie < b.tie;
    return a.run < b.run;
  }
  // HeadOf: run `run`'s next key, or its done key.
  Head HeadOf(int run) const;

  std::vector<SortedRun*> runs_;
  std::vector<int64_t> shifts_;  // per run; empty: none
  // tree_[0]: the winner (the least head); tree_[1..k-1]: the loser of the
  // match at that node, whose children are nodes 2j and 2j+1, node k + r
  // being run r's leaf. Empty when there are no runs.
  std::vector<Head> tree_;
};

}  // namespace tracemill::merge
