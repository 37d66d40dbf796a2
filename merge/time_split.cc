#include "merge/time_split.h"

#include <algorithm>

namespace tracemill::merge {

int TimeSplit::RangeOf(const formats::Event& e, int run, int64_t shift_ns) const {
  if (bounds.empty() || e.phase == 'M') return 0;
  const SortKey k = MakeSortKey(e, 0);
  const RangeBound b{AlignedKeyTs(k.ts_ns, shift_ns), k.tie, run};
  // The first bound above the event's key is its range's end.
  auto it = std::upper_bound(bounds.begin(), bounds.end(), b,
                             [](const RangeBound& x, const RangeBound& y) { return RangeLess(x, y); });
  return static_cast<int>(it - bounds.begin());
}

size_t FirstAtOrAbove(const SortedRun& run, int run_index, int64_t shift_ns, const RangeBound& b) {
  const SortKey* keys = run.keys();
  const SortKey* end = std::partition_point(keys, keys + run.size(), [&](const SortKey& k) {
    return RangeLess(RangeBound{AlignedKeyTs(k.ts_ns, shift_ns), k.tie, run_index}, b);
  });
  return static_cast<size_t>(end - keys);
}

TimeSplit SplitRuns(const std::vector<SortedRun*>& runs, const std::vector<int64_t>& shifts_ns, int ranges,
                    int64_t from_ns, int64_t to_ns) {
  TimeSplit split;
  split.ranges = std::max(ranges, 1);
  if (split.ranges == 1) return split;
  // Each sample stands for its run's stride of events from it on.
  std::vector<std::pair<RangeBound, uint64_t>> samples;
  uint64_t total = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    const int64_t shift = shifts_ns.empty() ? 0 : shifts_ns[r];
    const uint64_t weight = runs[r]->sample_stride();
    for (const SortKey& k : runs[r]->samples()) {
      const int64_t ts = AlignedKeyTs(k.ts_ns, shift);
      if (ts < from_ns || ts > to_ns) continue;
      samples.push_back({{ts, k.tie, static_cast<int>(r)}, weight});
      total += weight;
    }
  }
  std::sort(samples.begin(), samples.end(), [](const auto& a, const auto& b) { return RangeLess(a.first, b.first); });
  // Range r starts at the first sample with r / ranges of the weight before it.
  size_t i = 0;
  uint64_t before = 0;
  for (int r = 1; r < split.ranges; ++r) {
    const uint64_t target = total * static_cast<uint64_t>(r) / static_cast<uint64_t>(split.ranges);
    while (i < samples.size() && before < target) before += samples[i++].second;
    // Nothing timed left: the later ranges are empty.
    split.bounds.push_back(i < samples.size() ? samples[i].first : RangeBound{INT64_MAX, UINT64_MAX, INT32_MAX});
  }
  return split;
}

}  // namespace tracemill::merge
