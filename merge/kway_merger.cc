#include "merge/kway_merger.h"

#include <algorithm>
#include <cstdint>

namespace tracemill::merge {

KWayMerger::KWayMerger(std::vector<SortedRun*> runs, std::vector<int64_t> shifts_ns)
    : runs_(std::move(runs)), shifts_(std::move(shifts_ns)) {
  if (std::all_of(shifts_.begin(), shifts_.end(), [](int64_t s) { return s == 0; })) shifts_.clear();
  for (int i = 0; i < static_cast<int>(runs_.size()); ++i)
    if (!runs_[i]->done()) heap_.push_back(HeadOf(i));
  for (size_t i = heap_.size() / 2; i-- > 0;) SiftDown(i);
}

KWayMerger::Head KWayMerger::HeadOf(int run) const {
  const SortKey& k = runs_[run]->PeekKey();
  // Metadata keys (INT64_MIN) stay first; shifts are far below 2^62.
  const int64_t ts = shifts_.empty() || k.ts_ns == INT64_MIN ? k.ts_ns : k.ts_ns + shifts_[run];
  return {ts, k.tie, run};
}

void KWayMerger::SiftDown(size_t i) {
  const size_t n = heap_.size();
  const Head h = heap_[i];
  while (true) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && HeadLess(heap_[c + 1], heap_[c])) ++c;
    if (!HeadLess(heap_[c], h)) break;
    heap_[i] = heap_[c];
    i = c;
  }
  heap_[i] = h;
}

std::pair<int, const formats::Event*> KWayMerger::Next() {
  if (heap_.empty()) return {-1, nullptr};
  const int run = heap_[0].run;
  const formats::Event* e = runs_[run]->Next();
  if (runs_[run]->done()) {
    heap_[0] = heap_.back();
    heap_.pop_back();
  } else {
    heap_[0] = HeadOf(run);
  }
  if (!heap_.empty()) SiftDown(0);
  return {run, e};
}

}  // namespace tracemill::merge
