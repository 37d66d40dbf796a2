#pragma once
// IterationTimer: wall-clock time per iteration (the convert job runs on
// several threads, so CPU time of the benchmark thread means nothing), fed to
// Google Benchmark with UseManualTime(), plus the best iteration and the CPU
// time of the whole process (all threads, user + system), which a busy
// machine disturbs less than wall time.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>

namespace tracemill::bench {

class IterationTimer {
 public:
  void Start() {
    cpu0_ = ProcessCpuSeconds();
    t0_ = Clock::now();
  }
  void Stop(benchmark::State& state) {
    const double s = std::chrono::duration<double>(Clock::now() - t0_).count();
    cpu_ += ProcessCpuSeconds() - cpu0_;
    state.SetIterationTime(s);
    best_ = std::min(best_, s);
  }
  // Counters: bytes and items per second over all iterations (Google
  // Benchmark's bytes_per_second / items_per_second), and the best iteration
  // as best_MB/s and best_Mevents/s; MB = 10^6 bytes.
  void Report(benchmark::State& state, uint64_t bytes, uint64_t items) const {
    const auto n = static_cast<int64_t>(state.iterations());
    state.SetBytesProcessed(static_cast<int64_t>(bytes) * n);
    state.SetItemsProcessed(static_cast<int64_t>(items) * n);
    if (n > 0 && best_ < std::numeric_limits<double>::infinity()) {
      state.counters["best_MB/s"] = static_cast<double>(bytes) / best_ / 1e6;
      state.counters["best_Mev/s"] = static_cast<double>(items) / best_ / 1e6;
    }
    if (n > 0 && cpu_ > 0)
      state.counters["cpu_MB/s"] = static_cast<double>(bytes) * static_cast<double>(n) / cpu_ / 1e6;
  }

 private:
  static double ProcessCpuSeconds() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  }
  using Clock = std::chrono::steady_clock;
  Clock::time_point t0_;
  double best_ = std::numeric_limits<double>::infinity();
  double cpu0_ = 0;
  double cpu_ = 0;
};

}  // namespace tracemill::bench
