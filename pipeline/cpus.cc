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

#include "pipeline/cgroup.h"

namespace tracemill::pipeline {
namespace {

// QuotaCpus: ceil(quota / period), or 0 if unlimited.
int QuotaCpus(long long quota, long long period) {
  return quota > 0 && period > 0 ? static_cast<int>((quota + period - 1) / period) : 0;
}

}  // namespace

int CgroupCpuLimit(const std::string& root) {
  // The smallest quota on the way up (cgroup.h).
  const CgroupDirs dirs = FindCgroupDirs(root, "cpu");
  int best = 0;
  auto keep = [&best](int n) {
    if (n > 0 && (best == 0 || n < best)) best = n;
  };
  auto keep_v2 = [&keep](const std::string& cpu_max) {  // "quota period" or "max period"
    std::ifstream f(cpu_max);
    std::string quota;
    long long period = 0;
    if (f >> quota >> period && quota != "max") keep(QuotaCpus(std::stoll(quota), period));
  };
  for (const std::string& dir : dirs.v2) keep_v2(dir + "cpu.max");
  for (const std::string& dir : dirs.v1) {
    std::ifstream q(dir + "cpu.cfs_quota_us"), p(dir + "cpu.cfs_period_us");
    long long quota = -1, period = 0;
    if (q >> quota && p >> period) keep(QuotaCpus(quota, period));
  }
  if (dirs.v2.empty() && dirs.v1.empty()) keep_v2(root + "/sys/fs/cgroup/cpu.max");  // no /proc/self/cgroup
  return best;
}

int AvailableCpus() {
  int n = 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) n = CPU_COUNT(&set);
  if (n <= 0) n = 1;
  int limit = 0;
  try {
    limit = CgroupCpuLimit("");
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
