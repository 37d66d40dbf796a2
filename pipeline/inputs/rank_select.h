#pragma once
// --ranks LIST: which ranks the traces keep ("0-7,64,120-127").
//
// Every input is still read and counted (the manifest accounts for it: its
// events are dropped as `not_selected`, not lost) and the report still
// covers every rank; only the traces leave the other ranks out, so that an
// output of a 4,096-rank job opens in a viewer. Inputs without a rank (run
// event logs) are kept: they are not a rank.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace tracemill::pipeline {

// RankSet: a union of closed rank intervals, sorted and merged.
class RankSet {
 public:
  // Parse reads a comma-separated list of ranks and ranges (`a-b`, a <= b,
  // non-negative decimal integers). Errors: kInvalidArgument naming the
  // first bad item.
  static absl::StatusOr<RankSet> Parse(const std::string& text);

  bool Contains(int64_t rank) const;
  // The list as written back, canonical: "0-7,64,120-127".
  std::string ToString() const;

 private:
  std::vector<std::pair<int64_t, int64_t>> ranges_;
};

}  // namespace tracemill::pipeline
