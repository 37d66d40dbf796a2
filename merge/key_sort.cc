#include "merge/key_sort.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

namespace tracemill::merge {
namespace {

constexpr size_t kBuckets = size_t{1} << kRadixDigitBits;
constexpr int64_t kMicros = 1000;  // ns

void ComparisonSort(SortKey* begin, SortKey* end) {
  std::sort(begin, end, [](const SortKey& a, const SortKey& b) { return KeyLess(a, b); });
}

// Radix value of a key: 0 for metadata (INT64_MIN, before everything),
// else 1 + its distance from the smallest other time `lo`, in units of
// kUnit ns (every distance is a multiple of it).
template <uint64_t kUnit>
inline uint64_t Value(const SortKey& k, int64_t lo) {
  return k.ts_ns == INT64_MIN ? 0 : (static_cast<uint64_t>(k.ts_ns) - static_cast<uint64_t>(lo)) / kUnit + 1;
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

// RadixPasses: the LSD passes over Value<kUnit> (values up to span + 1),
// stable, then SortTies. For the passes each key's ts_ns holds its value
// (computed once, not once a pass), and its time again after them: every
// time is lo plus a multiple of kUnit, so the value gives it back exactly.
template <uint64_t kUnit>
void RadixPasses(SortKeyVector& keys, int64_t lo, uint64_t span) {
  const size_t n = keys.size();
  const int bits = std::bit_width(span + 1);
  const int passes = (bits + kRadixDigitBits - 1) / kRadixDigitBits;
  // Every pass's bucket counts in one read of the keys.
  std::vector<std::array<uint32_t, kBuckets>> counts(static_cast<size_t>(passes));
  for (auto& c : counts) c.fill(0);
  for (SortKey& k : keys) {
    uint64_t v = Value<kUnit>(k, lo);
    k.ts_ns = static_cast<int64_t>(v);  // modulo 2^64 (C++20), undone below
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
    for (const SortKey& k : keys) other[c[(static_cast<uint64_t>(k.ts_ns) >> shift) & (kBuckets - 1)]++] = k;
    keys.swap(other);
  }
  for (SortKey& k : keys) {
    const uint64_t v = static_cast<uint64_t>(k.ts_ns);
    k.ts_ns = v == 0 ? INT64_MIN : static_cast<int64_t>(static_cast<uint64_t>(lo) + (v - 1) * kUnit);
  }
  SortTies(keys);
}

}  // namespace

void SortKeys(SortKeyVector& keys) {
  const size_t n = keys.size();
  if (n < kRadixMinKeys) {
    ComparisonSort(keys.data(), keys.data() + n);
    return;
  }
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  // Whether every time has the same remainder in us (Kineto's usual whole-us
  // times): then every distance is whole us and needs fewer digits. (Equal
  // remainders of times of both signs are 0: C++'s % keeps the sign.)
  // The check stops at the first other remainder (ns times: at once).
  int64_t residue = 0;
  bool first = true, whole_us = true;
  size_t i = 0;
  for (; i < n && whole_us; ++i) {
    const int64_t ts = keys[i].ts_ns;
    if (ts == INT64_MIN) continue;
    lo = std::min(lo, ts);
    hi = std::max(hi, ts);
    if (first) residue = ts % kMicros;
    first = false;
    whole_us = ts % kMicros == residue;
  }
  for (; i < n; ++i) {
    const int64_t ts = keys[i].ts_ns;
    if (ts == INT64_MIN) continue;
    lo = std::min(lo, ts);
    hi = std::max(hi, ts);
  }
  if (lo > hi) {  // metadata only: the ties and indexes decide
    ComparisonSort(keys.data(), keys.data() + n);
    return;
  }
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (whole_us) {  // a span of seconds: 2 passes, not 3
    RadixPasses<kMicros>(keys, lo, span / kMicros);
    return;
  }
  if (span == UINT64_MAX) {  // no room for the metadata's 0
    ComparisonSort(keys.data(), keys.data() + n);
    return;
  }
  RadixPasses<1>(keys, lo, span);
}

}  // namespace tracemill::merge
