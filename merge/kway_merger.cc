#include "merge/kway_merger.h"

#include <algorithm>
#include <cstdint>

namespace tracemill::merge {

KWayMerger::KWayMerger(std::vector<SortedRun*> runs, std::vector<int64_t> shifts_ns)
    : runs_(std::move(runs)), shifts_(std::move(shifts_ns)) {
  if (std::all_of(shifts_.begin(), shifts_.end(), [](int64_t s) { return s == 0; })) shifts_.clear();
  std::vector<MergeHead> heads;
  for (int r = 0; r < static_cast<int>(runs_.size()); ++r) heads.push_back(HeadOf(r));
  tree_.Reset(heads);
}

MergeHead KWayMerger::HeadOf(int run) const {
  const SortedRun& r = *runs_[run];
  if (r.done()) return MergeHead::Done(run, static_cast<uint32_t>(run));
  const SortKey& k = r.PeekKey();
  // Metadata keys (INT64_MIN) stay first; shifts are far below 2^62.
  const int64_t ts = shifts_.empty() || k.ts_ns == INT64_MIN ? k.ts_ns : k.ts_ns + shifts_[run];
  return {ts, k.tie, run, static_cast<uint32_t>(run)};
}

std::pair<int, const formats::Event*> KWayMerger::Next() {
  if (tree_.Done()) return {-1, nullptr};
  const int run = tree_.Top().run;
  const formats::Event* e = runs_[run]->Next();
  tree_.ReplaceTop(HeadOf(run));
  return {run, e};
}

}  // namespace tracemill::merge
