#include "pipeline/inputs/rank_select.h"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tracemill::pipeline {
namespace {

bool ParseRank(std::string_view s, int64_t* v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size() && *v >= 0;
}

}  // namespace

absl::StatusOr<RankSet> RankSet::Parse(const std::string& text) {
  RankSet set;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    const std::string_view s(item.data(), item.size());
    const size_t dash = s.find('-');
    int64_t lo = 0, hi = 0;
    const bool ok = dash == std::string_view::npos
                        ? ParseRank(s, &lo) && (hi = lo, true)
                        : ParseRank(s.substr(0, dash), &lo) && ParseRank(s.substr(dash + 1), &hi) && lo <= hi;
    if (!ok)
      return absl::InvalidArgumentError(absl::StrCat("--ranks ", text, ": bad item \"", item,
                                                     "\" (expected ranks and ranges like 0-7,64,120-127)"));
    set.ranges_.emplace_back(lo, hi);
  }
  std::sort(set.ranges_.begin(), set.ranges_.end());
  std::vector<std::pair<int64_t, int64_t>> merged;
  for (auto r : set.ranges_) {
    if (!merged.empty() && r.first <= merged.back().second + 1) merged.back().second = std::max(merged.back().second, r.second);
    else merged.push_back(r);
  }
  set.ranges_ = std::move(merged);
  return set;
}

bool RankSet::Contains(int64_t rank) const {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), std::pair<int64_t, int64_t>{rank, INT64_MAX});
  return it != ranges_.begin() && std::prev(it)->second >= rank;
}

std::string RankSet::ToString() const {
  std::string s;
  for (auto [lo, hi] : ranges_)
    absl::StrAppend(&s, s.empty() ? "" : ",", lo, lo == hi ? "" : absl::StrCat("-", hi));
  return s;
}

}  // namespace tracemill::pipeline
