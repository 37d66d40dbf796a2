#include "pipeline/convert/step_window.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"

namespace tracemill::pipeline {

absl::StatusOr<formats::TimeWindow> ResolveStepWindow(
    const std::vector<InputRecord>& records, const std::vector<std::unique_ptr<merge::SortedRun>>& runs,
    std::optional<int64_t> first, std::optional<int64_t> last) {
  formats::TimeWindow w;
  bool found_first = !first, found_last = !last;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  size_t decoded = 0, rejected = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    rejected += !runs[i] && records[i].rejected;
    if (!runs[i]) continue;
    ++decoded;
    for (const formats::StepSpan& st : records[i].timeline.steps) {
      lo = std::min(lo, st.step);
      hi = std::max(hi, st.step);
      if (first && st.step == *first) {
        w.start_ns = found_first ? std::min(w.start_ns, st.start_ns) : st.start_ns;
        found_first = true;
      }
      if (last && st.step == *last) {
        w.end_ns = found_last ? std::max(w.end_ns, st.end_ns) : st.end_ns;
        found_last = true;
      }
    }
  }
  if (!found_first || !found_last) {
    int64_t missing = !found_first ? *first : *last;
    std::string why = " (no step markers found)";
    if (lo <= hi) {
      why = absl::StrCat(" (steps found: ", lo, "..", hi, ")");
    } else if (decoded == 0 && rejected > 0) {  // not the inputs' steps: the inputs
      why = absl::StrCat(" (no input could be decoded: ", rejected, rejected == 1 ? " was" : " were", " rejected)");
    }
    return absl::InvalidArgumentError(absl::StrCat(!found_first ? "--start-step " : "--end-step ", missing,
                                                   ": no input has step ", missing, why));
  }
  if (first && last && *last < *first)
    return absl::InvalidArgumentError(absl::StrCat("--end-step ", *last, " is before --start-step ", *first));
  return w;
}

}  // namespace tracemill::pipeline
