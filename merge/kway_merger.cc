#include "merge/kway_merger.h"

#include <algorithm>
#include <cstdint>

namespace tracemill::merge {

KWayMerger::KWayMerger(std::vector<SortedRun*> runs, std::vector<int64_t> shifts_ns)
    : runs_(std::move(runs)), shifts_(std::move(shifts_ns)) {
  if (std::all_of(shifts_.begin(), shifts_.end(), [](int64_t s) { return s == 0; })) shifts_.clear();
  for (int i = 0; i < static_cast<int>(runs_.size()); ++i)
    if (!runs_[i]->done()) heap_.push_back(i);
  for (size_t i = heap_.size() / 2; i-- > 0;) SiftDown(i);
}

bool KWayMerger::HeadLess(int a, int b) const {
  const SortKey& ka = runs_[a]->PeekKey();
  const SortKey& kb = runs_[b]->PeekKey();
  if (!shifts_.empty()) {
    // Metadata keys (INT64_MIN) stay first; shifts are far below 2^62.
    const int64_t ta = ka.ts_ns == INT64_MIN ? INT64_MIN : ka.ts_ns + shifts_[a];
    const int64_t tb = kb.ts_ns == INT64_MIN ? INT64_MIN : kb.ts_ns + shifts_[b];
    if (ta != tb) return ta < tb;
  } else if (ka.ts_ns != kb.ts_ns) {
    return ka.ts_ns < kb.ts_ns;
  }
  if (ka.tie != kb.tie) return ka.tie < kb.tie;
  return a < b;
}

void KWayMerger::SiftDown(size_t i) {
  const size_t n = heap_.size();
  while (true) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && HeadLess(heap_[l], heap_[m])) m = l;
    if (r < n && HeadLess(heap_[r], heap_[m])) m = r;
    if (m == i) return;
    std::swap(heap_[i], heap_[m]);
    i = m;
  }
}

std::pair<int, const formats::Event*> KWayMerger::Next() {
  if (heap_.empty()) return {-1, nullptr};
  int run = heap_[0];
  const formats::Event* e = runs_[run]->Next();
  if (runs_[run]->done()) {
    heap_[0] = heap_.back();
    heap_.pop_back();
  }
  if (!heap_.empty()) SiftDown(0);
  return {run, e};
}

}  // namespace tracemill::merge
