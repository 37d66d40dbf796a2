#pragma once
// LoserTree: the least of k heads, kept as one head is replaced at a time
// (Knuth, TAOCP 5.4.1, "tree of losers"). The merges of sorted runs
// (KWayMerger, MergeRange::ForEach) hold each run's next key here: replacing
// the least head replays one match per level from its leaf to the root,
// at most ceil(log2 k) comparisons, where a binary heap makes up to 2 log2 k (a child
// against its sibling, then against the sifted head). The heads are the
// tree's own array, so a comparison reads no run.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace tracemill::merge {

// MergeHead: a run's next key as the merges order it (ts shifted onto the
// merge's clock, metadata's INT64_MIN kept; then tie, then run index), and
// the leaf it belongs to (`slot`, 0..k-1). A done leaf's head has ts
// kDoneTs, which no shifted ts reaches (|ts| and |shift| are at most
// kMaxAbsTimeNs, 2^62 - 1), and loses every match.
struct MergeHead {
  static constexpr int64_t kDoneTs = INT64_MAX;
  int64_t ts;
  uint64_t tie;
  int run;
  uint32_t slot;

  static MergeHead Done(int run, uint32_t slot) { return {kDoneTs, 0, run, slot}; }
  bool done() const { return ts == kDoneTs; }
};

inline bool MergeHeadLess(const MergeHead& a, const MergeHead& b) {
  if (a.ts != b.ts) return a.ts < b.ts;
  if (a.tie != b.tie) return a.tie < b.tie;
  return a.run < b.run;
}

class LoserTree {
 public:
  // Reset plays every match once: `heads[i]` is leaf i's head (slot i).
  void Reset(const std::vector<MergeHead>& heads) {
    const size_t k = heads.size();
    tree_.resize(k);
    if (k == 0) return;
    // winners[j]: node j's winner, the leaves' (k..2k-1) being the heads.
    winners_.resize(2 * k);
    for (size_t i = 0; i < k; ++i) winners_[k + i] = heads[i];
    for (size_t j = k - 1; j >= 1; --j) {
      const MergeHead& a = winners_[2 * j];
      const MergeHead& b = winners_[2 * j + 1];
      const bool a_wins = MergeHeadLess(a, b);
      winners_[j] = a_wins ? a : b;
      tree_[j] = a_wins ? b : a;
    }
    tree_[0] = winners_[1];  // the root's winner; with one leaf, the leaf
  }
  // Done: no heads, or every one done.
  bool Done() const { return tree_.empty() || tree_[0].done(); }
  // Top: the least head (not Done()).
  const MergeHead& Top() const { return tree_[0]; }
  // ReplaceTop gives Top()'s leaf its next head `h` (h.slot == Top().slot;
  // MergeHead::Done when its run has no more): at each node up from the
  // leaf the loser stays and the winner goes on.
  void ReplaceTop(MergeHead h) {
    for (size_t j = (tree_.size() + h.slot) / 2; j > 0; j /= 2) {
      if (MergeHeadLess(tree_[j], h)) std::swap(tree_[j], h);
    }
    tree_[0] = h;
  }

 private:
  // tree_[0]: the winner; tree_[1..k-1]: the loser of the match at that
  // node, whose children are nodes 2j and 2j+1, node k + i being leaf i.
  std::vector<MergeHead> tree_;
  std::vector<MergeHead> winners_;  // Reset's
};

}  // namespace tracemill::merge
