// BM_SortKeys: one run's sort (merge/key_sort.h) against std::sort by
// KeyLess on the same keys, in ns per key. The keys are shaped like the real
// tb-plugin ResNet-50 rank's (75,718 events in 18,040 ascending stretches,
// about 4 each, over a few seconds; 1 % metadata): stretches of 1-8 keys,
// each ascending from a random time in 5 s. Arguments: keys; 1 for
// SortKeys, 0 for std::sort; 1 for times in whole us (as the tb-plugin
// rank's: two radix passes, not three), 0 for times in ns.
//   bench_merge --benchmark_filter=SortKeys --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>

#include "merge/key_sort.h"

namespace tracemill::merge {
namespace {

SortKeyVector KinetoLikeKeys(size_t n, bool whole_us) {
  SortKeyVector keys(n);
  std::mt19937_64 rng(42);
  constexpr uint64_t kMid = uint64_t{1} << 63;
  size_t i = 0;
  while (i < n) {
    const size_t len = 1 + rng() % 8;
    const uint64_t start = rng();
    int64_t ts = 1623142623000000000 + static_cast<int64_t>(whole_us ? start % 1'200'000 * 1000 : start % 5'000'000'000);
    for (size_t k = 0; k < len && i < n; ++k, ++i) {
      keys[i].index = static_cast<uint32_t>(i);
      if (rng() % 100 == 0) {
        keys[i].ts_ns = INT64_MIN;
        keys[i].tie = 0;
        continue;
      }
      ts += whole_us ? static_cast<int64_t>(rng() % 20) * 1000 : static_cast<int64_t>(rng() % 20'000);
      keys[i].ts_ns = ts;
      keys[i].tie = kMid - rng() % 10'000;
    }
  }
  return keys;
}

void BM_SortKeys(benchmark::State& state) {
  const SortKeyVector input = KinetoLikeKeys(static_cast<size_t>(state.range(0)), state.range(2) != 0);
  const bool radix = state.range(1) != 0;
  SortKeyVector keys;
  for (auto _ : state) {
    state.PauseTiming();
    keys = input;
    state.ResumeTiming();
    if (radix) {
      SortKeys(keys);
    } else {
      std::sort(keys.begin(), keys.end(), [](const SortKey& a, const SortKey& b) { return KeyLess(a, b); });
    }
    benchmark::DoNotOptimize(keys.data());
  }
  state.counters["ns_per_key"] = benchmark::Counter(static_cast<double>(state.range(0)),
                                                     benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
}
BENCHMARK(BM_SortKeys)->ArgsProduct({{75'718, 1'000'000}, {0, 1}, {0, 1}})->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace tracemill::merge
