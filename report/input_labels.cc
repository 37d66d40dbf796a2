#include "report/input_labels.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "report/html_text.h"

namespace tracemill::report {
namespace {

std::string BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace

std::string InputLabel(const InputModel& in) {
  if (!in.label.empty()) return in.label;
  if (in.rank) return absl::StrCat("rank ", *in.rank);
  return BaseName(in.path);
}

std::string RangeLabel(int64_t lo, int64_t hi) {
  if (lo == hi) return absl::StrCat("rank ", lo);
  return absl::StrCat("ranks ", lo, "\xE2\x80\x93", hi);  // en dash
}

std::string InputErrorReason(const InputModel& in) {
  std::string s = in.error_message;
  if (!in.error_code.empty())
    absl::StrAppend(&s, " (", in.error_code, ", at byte ", GroupedCount(in.error_offset), ")");
  return s;
}

}  // namespace tracemill::report
