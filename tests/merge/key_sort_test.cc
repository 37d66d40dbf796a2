// SortKeys (merge/key_sort.h) against std::sort by KeyLess: the same keys
// in the same order, for every size around the radix threshold and for
// times that need 1 to 6 digits, metadata, negative times and many equal
// times with ties out of order.
#include "merge/key_sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>

namespace tracemill::merge {
namespace {

constexpr uint64_t kMid = uint64_t{1} << 63;

// Keys as SortedRun::Sort makes them: index i at position i.
SortKeyVector Keys(size_t n, std::mt19937_64& rng, int64_t base, uint64_t span, int distinct_ts, int meta_per_mille) {
  SortKeyVector keys(n);
  std::uniform_int_distribution<uint64_t> off(0, span);
  std::uniform_int_distribution<int> pick(0, distinct_ts - 1), mille(0, 999), tie(0, 3);
  std::vector<int64_t> few;
  for (int i = 0; i < distinct_ts; ++i) few.push_back(static_cast<int64_t>(static_cast<uint64_t>(base) + off(rng)));
  for (size_t i = 0; i < n; ++i) {
    SortKey& k = keys[i];
    k.index = static_cast<uint32_t>(i);
    if (mille(rng) < meta_per_mille) {
      k.ts_ns = INT64_MIN;
      k.tie = 0;
      continue;
    }
    k.ts_ns = distinct_ts > 0 ? few[static_cast<size_t>(pick(rng))]
                              : static_cast<int64_t>(static_cast<uint64_t>(base) + off(rng));
    const int t = tie(rng);
    k.tie = t == 0 ? 0 : t == 1 ? kMid : kMid - off(rng) % 1000000;
  }
  return keys;
}

void ExpectSameAsStdSort(SortKeyVector keys) {
  SortKeyVector want = keys;
  std::sort(want.begin(), want.end(), [](const SortKey& a, const SortKey& b) { return KeyLess(a, b); });
  SortKeys(keys);
  ASSERT_EQ(keys.size(), want.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(keys[i].ts_ns, want[i].ts_ns) << "at " << i;
    ASSERT_EQ(keys[i].tie, want[i].tie) << "at " << i;
    ASSERT_EQ(keys[i].index, want[i].index) << "at " << i;
  }
}

TEST(SortKeys, EqualsStdSortAroundTheRadixThreshold) {
  std::mt19937_64 rng(7);
  for (size_t n : {size_t{0}, size_t{1}, size_t{2}, kRadixMinKeys - 1, kRadixMinKeys, kRadixMinKeys + 1, size_t{5000}}) {
    SCOPED_TRACE(n);
    ExpectSameAsStdSort(Keys(n, rng, 1623142623460111000, 5'000'000'000, 0, 10));
  }
}

// Spans of one digit up to the whole +-2^62 range (6 digits), negative
// times included; with and without metadata.
TEST(SortKeys, EqualsStdSortForEverySpan) {
  std::mt19937_64 rng(11);
  for (uint64_t span : {uint64_t{0}, uint64_t{1}, uint64_t{2047}, uint64_t{2048}, uint64_t{5'000'000'000},
                        uint64_t{1} << 44, uint64_t{1} << 63}) {
    for (int meta : {0, 50}) {
      SCOPED_TRACE(::testing::Message() << "span " << span << " metadata " << meta);
      const int64_t base = span >= (uint64_t{1} << 63) ? -(int64_t{1} << 62) : -1000;
      ExpectSameAsStdSort(Keys(20000, rng, base, span, 0, meta));
    }
  }
}

// Times that all share their remainder in us (Kineto's whole-us times: the
// radix passes count us, not ns), negative times too; and the same keys
// with one time 1 ns off that remainder (every digit in ns again).
TEST(SortKeys, EqualsStdSortForTimesInWholeMicroseconds) {
  std::mt19937_64 rng(17);
  for (int64_t residue : {int64_t{0}, int64_t{537}, int64_t{-463}}) {
    for (uint64_t span_us : {uint64_t{1}, uint64_t{2047}, uint64_t{1'200'000}, uint64_t{5'000'000}, uint64_t{1} << 40}) {
      for (int distinct : {0, 300}) {
        SCOPED_TRACE(::testing::Message() << "remainder " << residue << " span " << span_us << " us, distinct "
                                          << distinct);
        SortKeyVector keys = Keys(20000, rng, 0, span_us, distinct, 20);
        const int64_t base = residue < 0 ? -int64_t{1'000'000'000'000'000} : 1623142623000000000;
        for (SortKey& k : keys)
          if (k.ts_ns != INT64_MIN) k.ts_ns = base + k.ts_ns * 1000 + residue;
        ExpectSameAsStdSort(keys);
        keys[keys.size() / 2].ts_ns = base + 1000 * static_cast<int64_t>(span_us / 2) + residue + 1;
        ExpectSameAsStdSort(keys);
      }
    }
  }
}

// Many events at few times: the ties decide inside each time, often out of
// input order (E before X, longer X first).
TEST(SortKeys, EqualTimesAreOrderedByTieThenIndex) {
  std::mt19937_64 rng(13);
  for (int distinct : {1, 3, 200}) {
    SCOPED_TRACE(distinct);
    ExpectSameAsStdSort(Keys(30000, rng, 1000, 1'000'000, distinct, 20));
  }
  // A small case checked by hand: ts 5 (X dur 1), 5 (E), 3, 5 (X dur 9).
  SortKeyVector keys(kRadixMinKeys);
  for (uint32_t i = 0; i < keys.size(); ++i) keys[i] = {100 + i, kMid, i};
  keys[0] = {5, kMid - 1, 0};
  keys[1] = {5, 0, 1};
  keys[2] = {3, kMid, 2};
  keys[3] = {5, kMid - 9, 3};
  SortKeys(keys);
  EXPECT_EQ(keys[0].index, 2u);
  EXPECT_EQ(keys[1].index, 1u);  // E first
  EXPECT_EQ(keys[2].index, 3u);  // the longer X
  EXPECT_EQ(keys[3].index, 0u);
  EXPECT_EQ(keys[4].index, 4u);
}

TEST(SortKeys, MetadataOnlyKeepsInputOrder) {
  SortKeyVector keys(kRadixMinKeys * 2);
  for (uint32_t i = 0; i < keys.size(); ++i) keys[i] = {INT64_MIN, 0, i};
  SortKeys(keys);
  for (uint32_t i = 0; i < keys.size(); ++i) ASSERT_EQ(keys[i].index, i);
}

}  // namespace
}  // namespace tracemill::merge
