#include "merge/key_sort.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

namespace tracemill::merge {
namespace {

constexpr size_t kBuckets = size_t{1} << kRadixDigitBits;

void ComparisonSort(SortKey* begin, SortKey* end) {
  std::sort(begin, end, [](const SortKey& a, const SortKey& b) { return KeyLess(a, b); });
}

// Radix value of a key: 0 for metadata (INT64_MIN, before everything),
// else 1 + its distance from the smallest other time `lo`.
inline uint64_t Value(const SortKey& k, int64_t lo) {
  return k.ts_ns == INT64_MIN ? 0 : static_cast<uint64_t>(k.ts_ns) - static_cast<uint64_t>(lo) + 1;
}

// SortTies: within each stretch of equal times (in index order after the
// passes) the tie decides; a stretch whose ties are not already in order is
// sorted by KeyLess.
void SortTies(SortKeyVector& keys) {
  const size_t n = keys.size();
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    bool ordered = true;
    for (; j < n && keys[j].ts_ns == keys[i].ts_ns; ++j) ordered &= keys[j - 1].tie <= keys[j].tie;
    if (!ordered) ComparisonSort(keys.data() + i, keys.data() + j);
    i = j;
  }
}

}  // namespace

void SortKeys(SortKeyVector& keys) {
  const size_t n = keys.size();
  if (n < kRadixMinKeys) {
    ComparisonSort(keys.data(), keys.data() + n);
    return;
  }
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const SortKey& k : keys) {
    if (k.ts_ns == INT64_MIN) continue;
    lo = std::min(lo, k.ts_ns);
    hi = std::max(hi, k.ts_ns);
  }
  if (lo > hi) {  // metadata only: the ties and indexes decide
    ComparisonSort(keys.data(), keys.data() + n);
    return;
  }
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (span == UINT64_MAX) {  // no room for the metadata's 0
    ComparisonSort(keys.data(), keys.data() + n);
    return;
  }
  const int bits = std::bit_width(span + 1);
  const int passes = (bits + kRadixDigitBits - 1) / kRadixDigitBits;
  // Every pass's bucket counts in one read of the keys.
  std::vector<std::array<uint32_t, kBuckets>> counts(static_cast<size_t>(passes));
  for (auto& c : counts) c.fill(0);
  for (const SortKey& k : keys) {
    uint64_t v = Value(k, lo);
    for (int p = 0; p < passes; ++p, v >>= kRadixDigitBits) ++counts[static_cast<size_t>(p)][v & (kBuckets - 1)];
  }
  SortKeyVector other(n);
  for (int p = 0; p < passes; ++p) {
    std::array<uint32_t, kBuckets>& c = counts[static_cast<size_t>(p)];
    if (std::find(c.begin(), c.end(), static_cast<uint32_t>(n)) != c.end()) continue;  // one bucket: no move
    uint32_t sum = 0;
    for (uint32_t& x : c) {
      const uint32_t here = x;
      x = sum;
      sum += here;
    }
    const int shift = p * kRadixDigitBits;
    for (const SortKey& k : keys) other[c[(Value(k, lo) >> shift) & (kBuckets - 1)]++] = k;
    keys.swap(other);
  }
  SortTies(keys);
}

}  // namespace tracemill::merge
