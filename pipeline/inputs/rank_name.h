#pragma once
// The rank of an input named by its file name, for inputs without
// `distributedInfo.rank`.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tracemill::pipeline {

// The default patterns, tried in order on the file's base name:
// `rank-5`, `rank5`, `rank_5`, `worker5` (case-insensitive), then a `.5`
// suffix of at most 6 digits (`profile.5`, Paddle's layout).
inline constexpr std::string_view kDefaultRankPatterns =
    R"((?:rank|worker)[-_ ]?(\d+))" " | " R"(\.(\d{1,6})$)";

// RankMatcher: base name -> rank.
class RankMatcher {
 public:
  // Create compiles `pattern` (ECMAScript regex with one capture group, or
  // empty for the defaults). Errors: kInvalidArgument for a bad regex.
  static absl::StatusOr<RankMatcher> Create(const std::string& pattern);
  // Match returns the rank named by the base name of `path`, if any.
  std::optional<int64_t> Match(std::string_view path) const;

 private:
  std::string pattern_;
  bool use_default_ = true;
};

}  // namespace tracemill::pipeline
