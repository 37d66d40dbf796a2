#include "pipeline/follow/duration.h"

#include <array>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tracemill::pipeline::follow {
namespace {

// Units, smallest first; a name that starts another comes after it ("ms" before "m").
constexpr std::array<std::pair<std::string_view, int64_t>, 7> kDurationUnits = {{
    {"ns", 1},
    {"us", 1'000},
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
    {"m", 60'000'000'000},
    {"h", 3'600'000'000'000},
    {"d", 86'400'000'000'000},
}};

}  // namespace

std::optional<int64_t> ParseDuration(std::string_view text) {
  if (text == "0") return 0;
  if (text.empty()) return std::nullopt;
  int64_t total = 0;
  size_t i = 0;
  while (i < text.size()) {
    int64_t v = 0;
    const size_t digits_at = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, text[i] - '0', &v)) return std::nullopt;
      ++i;
    }
    if (i == digits_at) return std::nullopt;
    std::optional<int64_t> scale;
    for (const auto& [name, ns] : kDurationUnits) {  // "ms" is tried before "m"
      if (text.substr(i, name.size()) == name) {
        scale = ns;
        i += name.size();
        break;
      }
    }
    if (!scale) return std::nullopt;
    int64_t term;
    if (__builtin_mul_overflow(v, *scale, &term) || __builtin_add_overflow(total, term, &total)) return std::nullopt;
  }
  return total;
}

std::string DurationText(int64_t ns) {
  if (ns == 0) return "0s";
  std::string out;
  int64_t left = ns;
  for (size_t k = kDurationUnits.size(); k-- > 0;) {
    const int64_t unit = kDurationUnits[k].second;
    if (left >= unit) {
      absl::StrAppend(&out, left / unit, std::string(kDurationUnits[k].first));
      left %= unit;
    }
  }
  return out;
}

}  // namespace tracemill::pipeline::follow
