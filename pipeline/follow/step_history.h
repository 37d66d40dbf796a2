#pragma once
// StepHistory: the steps of one follow source that its manifest lists, kept
// between windows in a few bytes per step instead of sizeof(StepSpan) (32):
// at most kMaxStepsPerTrack, those whose number is a multiple of a
// power-of-two stride that grows as steps come (formats::ListedStride), so
// the follow job's manifest lists what a batch convert of the same steps
// lists, spread over the whole run.
//
// Each step is five LEB128 varints of zigzag-coded differences: its number
// from the previous step's, its start from the previous step's end, its
// duration, and `survivors` and `total` plus one (both usually -1, so one
// byte each). Differences are taken modulo 2^64, so every int64 value comes
// back exactly. A 16-rank job's 65,536 kept steps of ~1 ms at 1 ms strides
// take ~0.6 MB instead of 2.1 MB: the history is full a few windows into a
// follow job and is then what the process holds more than at its start.
#include <cstdint>
#include <string>
#include <vector>

#include "formats/common/timeline.h"

namespace tracemill::pipeline::follow {

class StepHistory {
 public:
  // Add merges `steps` (in any order) into the history: spans of one step
  // number become one (earliest start, latest end), and those listed at the
  // (raised) stride are kept. Returns how many are not kept (steps of
  // `steps`, or kept before, whose number is not a multiple of the stride).
  // `listed_at`: the stride `steps` were already listed at (a window's
  // manifest read back by --resume), the least the stride can be now.
  // Work: the history's length plus `steps`'.
  uint64_t Add(const std::vector<formats::StepSpan>& steps, int64_t listed_at = 1);

  // Steps returns the history, sorted by step number.
  std::vector<formats::StepSpan> Steps() const;

  size_t size() const { return count_; }
  // The stride of the kept steps (1 until more than kMaxStepsPerTrack came).
  int64_t stride() const { return stride_; }
  // HeldBytes: the heap the encoded history holds.
  size_t HeldBytes() const { return bytes_.capacity() > 15 ? bytes_.capacity() + 1 : 0; }

 private:
  void DecodeAppend(std::vector<formats::StepSpan>* out) const;

  std::string bytes_;
  size_t count_ = 0;
  int64_t stride_ = 1;
};

// MergeSteps sorts `steps` by number, merges spans of one number (earliest
// start, latest end; the survivors and total of the first after sorting),
// raises `*stride` to formats::ListedStride of the result and keeps the
// steps listed at it. Returns how many were dropped.
uint64_t MergeSteps(std::vector<formats::StepSpan>* steps, int64_t* stride);

}  // namespace tracemill::pipeline::follow
