#include "merge/sorted_run.h"

#include <algorithm>

namespace tracemill::merge {

SortKey MakeSortKey(const formats::Event& e, uint32_t index) {
  constexpr uint64_t kMid = uint64_t{1} << 63;
  if (e.phase == 'M') return {INT64_MIN, 0, index};
  uint64_t tie = kMid;
  if (e.phase == 'E') {
    tie = 0;
  } else if (e.phase == 'X') {
    tie = kMid - static_cast<uint64_t>(std::max<int64_t>(e.dur_ns, 0));
  }
  return {e.ts_ns, tie, index};
}

std::unique_ptr<SortedRun> SortedRun::Sort(std::unique_ptr<formats::TraceData> data) {
  auto run = std::unique_ptr<SortedRun>(new SortedRun);
  const auto& events = data->events;
  run->keys_.resize(events.size());
  bool sorted = true;
  for (uint32_t i = 0; i < events.size(); ++i) {
    run->keys_[i] = MakeSortKey(events[i], i);
    if (i && sorted && KeyLess(run->keys_[i], run->keys_[i - 1])) sorted = false;
  }
  if (!sorted) std::sort(run->keys_.begin(), run->keys_.end(), KeyLess);
  run->data_ = std::move(data);
  return run;
}

}  // namespace tracemill::merge
