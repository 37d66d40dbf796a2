#include "pipeline/inputs/input_record.h"

#include "absl/strings/str_cat.h"

namespace tracemill::pipeline {

std::string ErrorLine(const InputRecord& r) {
  return absl::StrCat("tracemill: ", r.error_file.empty() ? r.path : r.error_file, ": at byte ", r.error_offset, ": ",
                      r.status.message(),
                      r.rejected ? " (input rejected)"
                                 : absl::StrCat(" (", r.events_read - r.dropped.Total(), " events read intact)"));
}

}  // namespace tracemill::pipeline
