#pragma once
// --start-step/--end-step: the window of steps a user asked for, resolved
// into times once every input is decoded (the step markers are only known
// then; formats/common/timeline.h finds them while decoding).
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "formats/common/time_window.h"
#include "merge/sorted_run.h"
#include "pipeline/inputs/input_record.h"

namespace tracemill::pipeline {

// ResolveStepWindow: the time window from the start of step `first` to the
// end of step `last` (inclusive), over the steps of every decoded input
// (Kineto `ProfilerStep#N`, Paddle `ProfileStep#N`, smdebug
// `Step:ModeKeys.TRAIN` step_num, ...). kInvalidArgument names a step no
// input has, with the range that exists.
absl::StatusOr<formats::TimeWindow> ResolveStepWindow(
    const std::vector<InputRecord>& records, const std::vector<std::unique_ptr<merge::SortedRun>>& runs,
    std::optional<int64_t> first, std::optional<int64_t> last);

}  // namespace tracemill::pipeline
