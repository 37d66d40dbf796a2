#include "pipeline/inputs/rank_name.h"

#include <regex>

#include "absl/strings/str_cat.h"

namespace tracemill::pipeline {
namespace {

std::optional<int64_t> Search(const std::regex& re, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(name, m, re)) return std::nullopt;
  for (size_t g = 1; g < m.size(); ++g) {
    if (!m[g].matched) continue;
    std::string digits = m[g].str();
    if (digits.empty() || digits.size() > 9) return std::nullopt;
    for (char c : digits)
      if (c < '0' || c > '9') return std::nullopt;
    return std::stoll(digits);
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<RankMatcher> RankMatcher::Create(const std::string& pattern) {
  RankMatcher m;
  if (pattern.empty()) return m;
  try {
    std::regex re(pattern, std::regex::ECMAScript | std::regex::icase);
    if (re.mark_count() < 1)
      return absl::InvalidArgumentError(
          absl::StrCat("--rank-pattern '", pattern, "' needs one capture group for the rank"));
  } catch (const std::regex_error& e) {
    return absl::InvalidArgumentError(absl::StrCat("--rank-pattern '", pattern, "': ", e.what()));
  }
  m.pattern_ = pattern;
  m.use_default_ = false;
  return m;
}

std::optional<int64_t> RankMatcher::Match(std::string_view path) const {
  size_t slash = path.rfind('/');
  std::string base(slash == std::string_view::npos ? path : path.substr(slash + 1));
  if (!use_default_) {
    return Search(std::regex(pattern_, std::regex::ECMAScript | std::regex::icase), base);
  }
  static const std::regex kNamed(R"((?:rank|worker)[-_ ]?(\d+))",
                                 std::regex::ECMAScript | std::regex::icase);
  static const std::regex kSuffix(R"(\.(\d{1,6})$)", std::regex::ECMAScript);
  if (auto r = Search(kNamed, base)) return r;
  return Search(kSuffix, base);
}

}  // namespace tracemill::pipeline
