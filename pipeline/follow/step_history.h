#pragma once
// StepHistory: the last kMaxStepsPerTrack steps of one follow source, kept
// between windows in a few bytes per step instead of sizeof(StepSpan) (32).
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
  // number become one (earliest start, latest end), and the last
  // kMaxStepsPerTrack by number are kept. Returns how many fell off the
  // front (the oldest). Work: the history's length plus `steps`'.
  uint64_t Add(const std::vector<formats::StepSpan>& steps);

  // Steps returns the history, sorted by step number.
  std::vector<formats::StepSpan> Steps() const;

  size_t size() const { return count_; }
  // HeldBytes: the heap the encoded history holds.
  size_t HeldBytes() const { return bytes_.capacity() > 15 ? bytes_.capacity() + 1 : 0; }

 private:
  void DecodeAppend(std::vector<formats::StepSpan>* out) const;

  std::string bytes_;
  size_t count_ = 0;
};

// MergeSteps sorts `steps` by number, merges spans of one number (earliest
// start, latest end; the survivors and total of the first after sorting)
// and keeps the last kMaxStepsPerTrack. Returns how many were dropped from
// the front.
uint64_t MergeSteps(std::vector<formats::StepSpan>* steps);

}  // namespace tracemill::pipeline::follow
