#include "pipeline/cpus.h"

#include <sched.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>
#include <fstream>
#include <string>

namespace tracemill::pipeline {
namespace {

// ceil(quota/period) from cgroup files, or 0 if unlimited or unknown.
int CgroupCpuLimit() {
  std::ifstream v2("/sys/fs/cgroup/cpu.max");
  std::string quota;
  long long period = 0;
  if (v2 && (v2 >> quota >> period) && quota != "max" && period > 0) {
    long long q = std::stoll(quota);
    return static_cast<int>((q + period - 1) / period);
  }
  std::ifstream q1("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), p1("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
  long long q = -1, p = 0;
  if (q1 && p1 && (q1 >> q) && (p1 >> p) && q > 0 && p > 0) return static_cast<int>((q + p - 1) / p);
  return 0;
}

}  // namespace

int AvailableCpus() {
  int n = 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) n = CPU_COUNT(&set);
  if (n <= 0) n = 1;
  int limit = 0;
  try {
    limit = CgroupCpuLimit();
  } catch (...) {
    limit = 0;
  }
  if (limit > 0) n = std::min(n, limit);
  return std::max(n, 1);
}

int ThreadsThatStart(int wanted) {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::vector<std::thread> started;
  for (int i = 1; i < wanted; ++i) {
    try {
      started.emplace_back([&] {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return release; });
      });
    } catch (const std::system_error&) {
      break;
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  for (auto& t : started) t.join();
  return 1 + static_cast<int>(started.size());
}

int ThreadsToUse(int requested, std::string* note) {
  const int wanted = requested > 0 ? requested : AvailableCpus();
  const int threads = ThreadsThatStart(wanted);
  note->clear();
  if (threads < wanted)
    *note = "only " + std::to_string(threads) + " of " + std::to_string(wanted) +
            " threads can start (ulimit -u or the cgroup's pids.max); running with " + std::to_string(threads);
  return threads;
}

}  // namespace tracemill::pipeline
