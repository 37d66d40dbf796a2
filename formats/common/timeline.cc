#include "formats/common/timeline.h"

#include <algorithm>

#include "formats/common/ts_text.h"

namespace tracemill::formats {
namespace {

// Step name prefixes, each followed by the step number and nothing else.
constexpr std::string_view kStepPrefixes[] = {
    "ProfilerStep#",  // PyTorch profiler: record_function("ProfilerStep#N") per profiler.step()
    "ProfileStep#",   // Paddle profiler (paddle.profiler, RecordEvent per step)
    "Step:",          // smdebug framework traces
};

}  // namespace

std::optional<int64_t> MatchStepName(std::string_view name) {
  for (std::string_view prefix : kStepPrefixes) {
    if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) continue;
    std::string_view digits = name.substr(prefix.size());
    if (digits.size() > 18) return std::nullopt;
    for (char c : digits)
      if (c < '0' || c > '9') return std::nullopt;
    return ParseInt64(digits);
  }
  return std::nullopt;
}

uint64_t NormalizeSteps(std::vector<StepSpan>* steps) {
  auto& v = *steps;
  if (v.empty()) return 0;
  std::stable_sort(v.begin(), v.end(),
                   [](const StepSpan& a, const StepSpan& b) { return a.step < b.step; });
  size_t out = 0;
  for (size_t i = 1; i < v.size(); ++i) {
    StepSpan& cur = v[out];
    if (v[i].step == cur.step) {
      cur.start_ns = std::min(cur.start_ns, v[i].start_ns);
      cur.end_ns = std::max(cur.end_ns, v[i].end_ns);
      if (cur.survivors < 0) cur.survivors = v[i].survivors;
      if (cur.total < 0) cur.total = v[i].total;
    } else {
      v[++out] = v[i];
    }
  }
  v.resize(out + 1);
  uint64_t dropped = 0;
  if (v.size() > kMaxStepsKept) {
    dropped = v.size() - kMaxStepsKept;
    v.resize(kMaxStepsKept);
  }
  return dropped;
}

int64_t ListedStride(const std::vector<StepSpan>& steps, int64_t at_least) {
  int64_t stride = std::max<int64_t>(at_least, 1);
  if (steps.size() <= kMaxStepsPerTrack) return stride;
  constexpr int64_t kMaxStride = int64_t{1} << 62;
  for (;; stride *= 2) {
    size_t listed = 0;
    for (const StepSpan& s : steps) listed += IsListed(s.step, stride);
    if (listed <= kMaxStepsPerTrack || stride >= kMaxStride) return stride;
  }
}

void AddGpuUtilization(const std::vector<GpuUtilization>& from, std::vector<GpuUtilization>* into) {
  for (const GpuUtilization& g : from) {
    auto it = std::lower_bound(into->begin(), into->end(), g.gpu,
                               [](const GpuUtilization& a, int64_t gpu) { return a.gpu < gpu; });
    if (it == into->end() || it->gpu != g.gpu) {
      into->insert(it, g);
      continue;
    }
    it->samples += g.samples;
    it->gputl_sum += g.gputl_sum;
    it->gputl_max = std::max(it->gputl_max, g.gputl_max);
    it->smact_sum += g.smact_sum;
    it->smocc_sum += g.smocc_sum;
    it->drama_sum += g.drama_sum;
    it->tenso_sum += g.tenso_sum;
  }
}

}  // namespace tracemill::formats
