#pragma once
// Text forms of the analysis tables' times (tables.h).
#include <cstdint>

#include "formats/sqlite/sqlite_writer.h"

namespace tracemill::analysis {

// FloorDiv: a / b rounded toward negative infinity (b > 0).
inline int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && (a < 0)); }

// FormatIsoTime writes `ns` (since the Unix epoch) as ISO-8601 UTC with
// microseconds, `2020-06-03T05:04:59.457089Z` (ns truncated toward the
// past), into `out` (at least 32 bytes); returns the length. Years outside
// 0000-9999 are written with more digits or a sign, never wrapped.
int FormatIsoTime(int64_t ns, char* out);

// AppendIsoTime: FormatIsoTime as a text cell.
void AppendIsoTime(int64_t ns, formats::RowBatch* b);

}  // namespace tracemill::analysis
