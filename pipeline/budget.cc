#include "pipeline/budget.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>

#include "absl/strings/str_format.h"
#include "pipeline/cgroup.h"

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
  // As many of the largest input as there are threads, within 75% (runs
  // keep at least 15%); none fits: 50/40/10, and the caller does not overlap.
  const uint64_t max_decode = limit / 20 * 15;
  const uint64_t fit =
      largest_cost ? std::min<uint64_t>(static_cast<uint64_t>(std::max(threads, 1)), max_decode / largest_cost) : 0;
  if (fit == 0) return p;
  p.decode = fit * largest_cost;
  p.runs = limit - p.merge - p.decode;
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
  // The smallest on the way up (cgroup.h); levels not mounted here are skipped.
  const CgroupDirs dirs = FindCgroupDirs(root, "memory");
  auto smallest = [](const std::vector<std::string>& up, const char* file) {
    std::optional<uint64_t> best;
    for (const std::string& dir : up)
      if (auto v = ReadLimit((dir + file).c_str())) best = best ? std::min(*best, *v) : *v;
    return best;
  };
  if (auto v2 = smallest(dirs.v2, "memory.max")) return v2;
  if (auto v1 = smallest(dirs.v1, "memory.limit_in_bytes")) return v1;
  // No /proc/self/cgroup: the mount root's files.
  if (auto v2 = ReadLimit((root + "/sys/fs/cgroup/memory.max").c_str())) return v2;
  return ReadLimit((root + "/sys/fs/cgroup/memory/memory.limit_in_bytes").c_str());
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
