// BM_KWayMerge: the merge of one output alone (merge/kway_merger.h), in
// memory, as the 512-rank job meets it: R runs of Kineto-like events (ts in
// the order Kineto writes them, so every run is sorted first; 200-byte
// `rest` in the run's arena), merged into one stream whose first and last
// rest bytes are read, as the writer reads them. Arguments: runs, events in
// all (the same total for every R, so the figures compare per event).
//   bench_merge --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "formats/common/event.h"
#include "formats/common/trace_data.h"
#include "merge/kway_merger.h"
#include "merge/sorted_run.h"

namespace tracemill::merge {
namespace {

constexpr uint32_t kRestBytes = 200;

// One rank: `n` events over ~n x 10 us, as three sections (CPU ops, kernels,
// flows) each in ts order, so the run's sort interleaves them.
std::unique_ptr<SortedRun> MakeRun(int rank, size_t n) {
  auto d = std::make_unique<formats::TraceData>();
  std::mt19937_64 rng(static_cast<uint64_t>(rank) * 7919 + 1);
  const std::string rest(kRestBytes, 'a');
  d->events.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t section = i % 3;
    formats::Event e{};
    e.phase = 'X';
    e.flags = formats::kHasTs | formats::kHasDur;
    e.ts_ns = static_cast<int64_t>((i / 3) * 30'000 + section * 7'000 + rng() % 5'000);
    e.dur_ns = static_cast<int64_t>(rng() % 20'000);
    e.name = static_cast<uint32_t>(i % 97);
    std::string_view r = d->rest_arena.Copy(rest);
    e.rest = r.data();
    e.rest_len = kRestBytes;
    d->events.push_back(e);
  }
  return SortedRun::Sort(std::move(d));
}

void BM_KWayMerge(benchmark::State& state) {
  const int runs = static_cast<int>(state.range(0));
  const size_t total = static_cast<size_t>(state.range(1));
  std::vector<std::unique_ptr<SortedRun>> owned;
  std::vector<SortedRun*> ptrs;
  for (int r = 0; r < runs; ++r) {
    owned.push_back(MakeRun(r, total / static_cast<size_t>(runs)));
    ptrs.push_back(owned.back().get());
  }
  uint64_t sum = 0, events = 0;
  for (auto _ : state) {
    for (SortedRun* r : ptrs) (void)r->Open(0);
    KWayMerger m(ptrs);
    while (true) {
      auto [run, e] = m.Next();
      if (!e) break;
      sum += static_cast<unsigned char>(e->rest[0]) + static_cast<unsigned char>(e->rest[e->rest_len - 1]) +
             static_cast<uint64_t>(run);
      ++events;
    }
  }
  benchmark::DoNotOptimize(sum);
  state.counters["ns_per_event"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.SetItemsProcessed(static_cast<int64_t>(events));
}

BENCHMARK(BM_KWayMerge)
    ->ArgNames({"runs", "events"})
    ->Args({4, 1 << 21})
    ->Args({32, 1 << 21})
    ->Args({128, 1 << 21})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tracemill::merge

BENCHMARK_MAIN();
