#include "pipeline/follow/step_history.h"

#include <algorithm>

#include "formats/common/varint.h"

namespace tracemill::pipeline::follow {
namespace {

using formats::GetVarint;
using formats::PutVarint;
using formats::UnZigZag;
using formats::ZigZag;

// Diff: a - b modulo 2^64, as the int64 whose zigzag code is written.
int64_t Diff(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
// Undiff: b + d modulo 2^64 (inverts Diff exactly).
int64_t Undiff(int64_t b, int64_t d) { return static_cast<int64_t>(static_cast<uint64_t>(b) + static_cast<uint64_t>(d)); }

std::string Encode(const std::vector<formats::StepSpan>& steps) {
  std::string out;
  out.reserve(steps.size() * 12);
  int64_t prev_step = 0, prev_end = 0;
  for (const formats::StepSpan& s : steps) {
    PutVarint(ZigZag(Diff(s.step, prev_step)), &out);
    PutVarint(ZigZag(Diff(s.start_ns, prev_end)), &out);
    PutVarint(ZigZag(Diff(s.end_ns, s.start_ns)), &out);
    PutVarint(ZigZag(int64_t{s.survivors} + 1), &out);
    PutVarint(ZigZag(int64_t{s.total} + 1), &out);
    prev_step = s.step;
    prev_end = s.end_ns;
  }
  return std::string(out.data(), out.size());  // exactly sized: kept for the whole job
}

}  // namespace

uint64_t MergeSteps(std::vector<formats::StepSpan>* steps, int64_t* stride) {
  auto& v = *steps;
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.step < b.step; });
  size_t out = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (out > 0 && v[out - 1].step == v[i].step) {
      v[out - 1].start_ns = std::min(v[out - 1].start_ns, v[i].start_ns);
      v[out - 1].end_ns = std::max(v[out - 1].end_ns, v[i].end_ns);
    } else {
      v[out++] = v[i];
    }
  }
  v.resize(out);
  *stride = formats::ListedStride(v, *stride);
  const int64_t k = *stride;
  const auto gone = std::remove_if(v.begin(), v.end(), [k](const auto& s) { return !formats::IsListed(s.step, k); });
  const auto dropped = static_cast<uint64_t>(v.end() - gone);
  v.erase(gone, v.end());
  return dropped;
}

uint64_t StepHistory::Add(const std::vector<formats::StepSpan>& steps, int64_t listed_at) {
  stride_ = std::max(stride_, listed_at);
  if (steps.empty()) return 0;
  std::vector<formats::StepSpan> all;
  all.reserve(count_ + steps.size());
  DecodeAppend(&all);
  all.insert(all.end(), steps.begin(), steps.end());
  const uint64_t dropped = MergeSteps(&all, &stride_);
  bytes_ = Encode(all);
  count_ = all.size();
  return dropped;
}

std::vector<formats::StepSpan> StepHistory::Steps() const {
  std::vector<formats::StepSpan> steps;
  steps.reserve(count_);
  DecodeAppend(&steps);
  return steps;
}

void StepHistory::DecodeAppend(std::vector<formats::StepSpan>* out) const {
  const char* p = bytes_.data();
  int64_t prev_step = 0, prev_end = 0;
  for (size_t i = 0; i < count_; ++i) {
    formats::StepSpan s;
    s.step = Undiff(prev_step, UnZigZag(GetVarint(p)));
    s.start_ns = Undiff(prev_end, UnZigZag(GetVarint(p)));
    s.end_ns = Undiff(s.start_ns, UnZigZag(GetVarint(p)));
    s.survivors = static_cast<int32_t>(UnZigZag(GetVarint(p)) - 1);
    s.total = static_cast<int32_t>(UnZigZag(GetVarint(p)) - 1);
    out->push_back(s);
    prev_step = s.step;
    prev_end = s.end_ns;
  }
}

}  // namespace tracemill::pipeline::follow
