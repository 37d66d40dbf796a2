#pragma once
// The names `Analyze` gives inputs and ranks on rows and in tables.
#include <cstdint>
#include <string>

#include "report/run_model.h"

namespace tracemill::report {

// InputLabel: the input's manifest label, else "rank N", else its file name.
std::string InputLabel(const InputModel& in);

// RangeLabel: "rank 5" for lo == hi, else "ranks 5–7" (en dash), inclusive.
std::string RangeLabel(int64_t lo, int64_t hi);

// InputErrorReason: the input's error message, then " (CODE, at byte N)"
// when the manifest has the code.
std::string InputErrorReason(const InputModel& in);

}  // namespace tracemill::report
