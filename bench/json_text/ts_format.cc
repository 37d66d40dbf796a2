// bench_ts_format (issue 38): FormatNanosAsMicros, which ChromeWriter calls
// for every event's ts and dur (2.5 % of the real 16-rank job's samples at
// two threads, session 29), on times shaped as Kineto's: epoch ts with a
// fraction (1,623,142,623,488,289.xxx us, 16 digits before the point), the
// same in whole us (the tb-plugin traces) and durations from 0 to 5 s.
// items/s: numbers formatted.
//
//   bench_ts_format [Google Benchmark flags]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "formats/common/ts_text.h"

namespace {

// Times: n values, the same on every run (a linear congruential walk):
// shape 0 durations, 1 epoch ts in ns, 2 epoch ts in whole us.
std::vector<int64_t> Times(int shape, size_t n) {
  std::vector<int64_t> v(n);
  uint64_t x = 88172645463325252ull;
  int64_t ts = 1623142623488289000;
  for (int64_t& t : v) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    if (shape) {
      ts += static_cast<int64_t>(x >> 50);  // up to 16 us apart, any ns
      t = shape == 2 ? ts / 1000 * 1000 : ts;
    } else {
      t = static_cast<int64_t>((x >> 20) % 5'000'000'000ull);
    }
  }
  return v;
}

void BM_FormatNanosAsMicros(benchmark::State& state) {
  const std::vector<int64_t> times = Times(static_cast<int>(state.range(0)), 1 << 16);
  char buf[64];
  for (auto _ : state) {
    for (int64_t t : times) {
      benchmark::DoNotOptimize(tracemill::formats::FormatNanosAsMicros(t, buf));
      benchmark::ClobberMemory();
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * times.size()));
  const char* const kShapes[] = {"dur", "epoch ts, ns", "epoch ts, whole us"};
  state.SetLabel(kShapes[state.range(0)]);
}
BENCHMARK(BM_FormatNanosAsMicros)->Arg(1)->Arg(2)->Arg(0);

}  // namespace

BENCHMARK_MAIN();
