#include "merge/kway_merger.h"

#include <algorithm>
#include <cstdint>

namespace tracemill::merge {

KWayMerger::KWayMerger(std::vector<SortedRun*> runs, std::vector<int64_t> shifts_ns)
    : runs_(std::move(runs)), shifts_(std::move(shifts_ns)) {
  if (std::all_of(shifts_.begin(), shifts_.end(), [](int64_t s) { return s == 0; })) shifts_.clear();
  const size_t k = runs_.size();
  if (k == 0) return;
  // Play every match once, from the last internal node up: `winners`
  // holds each node's winner (the leaves' being the heads themselves).
  std::vector<Head> winners(2 * k);
  for (size_t r = 0; r < k; ++r) winners[k + r] = HeadOf(static_cast<int>(r));
  tree_.resize(k);
  for (size_t j = k - 1; j >= 1; --j) {
    const Head& a = winners[2 * j];
    const Head& b = winners[2 * j + 1];
    const bool a_wins = HeadLess(a, b);
    winners[j] = a_wins ? a : b;
    tree_[j] = a_wins ? b : a;
  }
  tree_[0] = winners[1];  // the root's winner; with one run, its leaf
}

KWayMerger::Head KWayMerger::HeadOf(int run) const {
  const SortedRun& r = *runs_[run];
  if (r.done()) return {kDoneTs, 0, run};
  const SortKey& k = r.PeekKey();
  // Metadata keys (INT64_MIN) stay first; shifts are far below 2^62.
  const int64_t ts = shifts_.empty() || k.ts_ns == INT64_MIN ? k.ts_ns : k.ts_ns + shifts_[run];
  return {ts, k.tie, run};
}

std::pair<int, const formats::Event*> KWayMerger::Next() {
  if (tree_.empty() || tree_[0].ts == kDoneTs) return {-1, nullptr};
  const int run = tree_[0].run;
  const formats::Event* e = runs_[run]->Next();
  // Replay run's matches from its leaf up with its new head: at each node
  // the loser stays, the winner goes on.
  Head h = HeadOf(run);
  for (size_t j = (tree_.size() + static_cast<size_t>(run)) / 2; j > 0; j /= 2) {
    if (HeadLess(tree_[j], h)) std::swap(tree_[j], h);
  }
  tree_[0] = h;
  return {run, e};
}

}  // namespace tracemill::merge
