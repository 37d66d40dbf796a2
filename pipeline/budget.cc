#include "pipeline/budget.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>

#include "absl/strings/str_format.h"

namespace tracemill::pipeline {
namespace {

std::optional<uint64_t> ReadLimit(const char* path) {
  std::ifstream f(path);
  std::string s;
  if (!(f >> s) || s == "max") return std::nullopt;
  try {
    uint64_t v = std::stoull(s);
    // cgroup v1 reports "unlimited" as a huge number.
    if (v == 0 || v >= (uint64_t{1} << 60)) return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace

std::string MemoryPlan::Describe() const {
  auto mib = [](uint64_t b) { return static_cast<double>(b) / (1 << 20); };
  auto pct = [&](uint64_t b) { return static_cast<int>((b * 100 + limit / 2) / std::max<uint64_t>(limit, 1)); };
  if (overlap)
    return absl::StrFormat(
        "memory limit %.0f MiB: decode %.0f MiB (%d%%), in-memory runs %.0f MiB (%d%%, the rest "
        "spills), merge buffers %.0f MiB (%d%%, while decoding)",
        mib(limit), mib(decode), pct(decode), mib(runs), pct(runs), mib(merge), pct(merge));
  return absl::StrFormat(
      "memory limit %.0f MiB: decode %.0f MiB (60%%), in-memory runs %.0f MiB (40%%, the rest "
      "spills), merge buffers %.0f MiB (60%%, after decode)",
      mib(limit), mib(decode), mib(runs), mib(merge));
}

MemoryPlan MemoryPlan::ForOverlap(uint64_t largest_cost, int threads) const {
  MemoryPlan p;
  p.limit = limit;
  p.decode = limit / 10 * 5;
  p.runs = limit / 10 * 4;
  p.merge = limit / 10;
  p.overlap = true;
  const uint64_t want = static_cast<uint64_t>(std::max(threads, 1));
  if (largest_cost > 0 && p.decode / largest_cost < want) {
    const uint64_t max_decode = limit / 20 * 15;  // 75%: runs keep at least 15%
    const uint64_t fit = std::min(want, max_decode / largest_cost);
    if (fit * largest_cost > p.decode) {
      p.decode = fit * largest_cost;
      p.runs = limit - p.merge - p.decode;
    }
  }
  return p;
}

MemoryPlan PlanMemory(uint64_t limit) {
  MemoryPlan p;
  p.limit = limit;
  p.decode = limit / 10 * 6;
  p.runs = limit / 10 * 4;
  p.merge = limit / 10 * 6;
  return p;
}

std::optional<uint64_t> CgroupMemoryLimit(const std::string& root) {
  // The process's own cgroup: "0::/path" (v2), "N:memory:/path" or
  // "N:cpu,memory:/path" (v1). Slurm's cgroup plugin and systemd put a job
  // several levels down while the whole hierarchy stays mounted, so the
  // mount root's file says "max" there; in a container with its own cgroup
  // namespace the path is "/" and the root's file is the container's.
  std::string v1_path, v2_path;
  std::ifstream self(root + "/proc/self/cgroup");
  for (std::string line; std::getline(self, line);) {
    const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = "," + line.substr(a + 1, b - a - 1) + ",";
    if (controllers == ",,") v2_path = line.substr(b + 1);
    else if (controllers.find(",memory,") != std::string::npos) v1_path = line.substr(b + 1);
  }
  // The effective limit is the smallest on the way up to the mount root;
  // levels that are not mounted here (another namespace's path) are skipped.
  auto smallest = [](const std::string& mount, std::string path, const char* file) {
    std::optional<uint64_t> best;
    while (true) {
      if (auto v = ReadLimit((mount + path + (path.empty() || path.back() != '/' ? "/" : "") + file).c_str()))
        best = best ? std::min(*best, *v) : *v;
      if (path.empty() || path == "/") break;
      path = path.substr(0, path.rfind('/'));
    }
    return best;
  };
  if (auto v2 = smallest(root + "/sys/fs/cgroup", v2_path, "memory.max")) return v2;
  return smallest(root + "/sys/fs/cgroup/memory", v1_path, "memory.limit_in_bytes");
}

namespace {
// ProcessMemory: the cgroup's limit, else the physical memory (bytes).
uint64_t ProcessMemory() {
  if (std::optional<uint64_t> cg = CgroupMemoryLimit("")) return *cg;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : (uint64_t{8} << 30);
}
}  // namespace

uint64_t DefaultMemoryLimit() { return std::min<uint64_t>(ProcessMemory() / 2, uint64_t{4} << 30); }

uint64_t SpillPageCacheBytes(uint64_t limit_bytes) {
  const uint64_t memory = ProcessMemory();
  return memory > limit_bytes ? (memory - limit_bytes) / 2 : 0;
}

std::optional<uint64_t> ParseBytes(const std::string& text) {
  size_t i = 0;
  uint64_t v = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    if (v > (uint64_t{1} << 50)) return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(text[i] - '0');
    ++i;
  }
  if (i == 0) return std::nullopt;
  std::string unit = text.substr(i);
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() >= 2 && unit.substr(unit.size() - 2) == "IB") unit.resize(unit.size() - 2);
  else if (!unit.empty() && unit.back() == 'B') unit.pop_back();
  int shift = 0;
  if (unit.empty()) shift = 0;
  else if (unit == "K") shift = 10;
  else if (unit == "M") shift = 20;
  else if (unit == "G") shift = 30;
  else if (unit == "T") shift = 40;
  else return std::nullopt;
  if (v == 0 || v > (UINT64_MAX >> shift)) return std::nullopt;
  return v << shift;
}

}  // namespace tracemill::pipeline
