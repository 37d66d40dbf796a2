#pragma once
// SortKeys: a run's sort (sorted_run.h), as an LSD radix sort on the keys'
// times. A rank's events are mostly short ascending stretches (the real
// tb-plugin ResNet-50 rank: 18,040 of them in 75,718 events), so a
// comparison sort mispredicts about every other compare; a radix sort
// looks at each key once per 11-bit digit of the run's time span (a span of
// seconds in ns: 3 passes; in whole us, as most Kineto times are, up to
// 4.19 s: 2 passes) and never compares. Equal times keep their input
// order (the passes are stable and the keys start in index order), and
// only groups of equal times whose ties are out of order are then sorted
// by KeyLess. The order is KeyLess's, a total order, so the result is the
// same keys in the same order as std::sort gives.
#include "merge/sorted_run.h"

namespace tracemill::merge {

// SortKeys sorts `keys` by KeyLess. `keys[i].index` must be ascending on
// entry (as SortedRun::Sort makes them: keys[i].index == i). Holds a
// second buffer of keys.size() keys while it sorts (24 bytes per event,
// from the block pool; the decoder's structural index it follows was
// larger). Short inputs (under kRadixMinKeys) and time spans that need
// more than kMaxRadixPasses digits go to std::sort.
void SortKeys(SortKeyVector& keys);

inline constexpr size_t kRadixMinKeys = 512;
inline constexpr int kRadixDigitBits = 11;
inline constexpr int kMaxRadixPasses = 6;  // 64 bits

}  // namespace tracemill::merge
