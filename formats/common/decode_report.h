#pragma once
// DecodeReport: what decoding one input found, whatever its format. Every
// decoder returns one (formats/registry.h); the pipeline copies it into the
// input's record (pipeline/inputs/input_record.h), which feeds the manifest.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "formats/common/stats.h"

namespace tracemill::formats {

struct DecodeReport {
  uint64_t events_read = 0;  // events (array elements, lines, messages) seen: decoded + dropped
  DropCounts dropped;
  std::vector<std::string> warnings;  // tolerated oddities, one line each
  // OK; kDataLoss (truncated or corrupt: what was readable is in the
  // builder); kInvalidArgument (not a document of this format: nothing kept,
  // the input is rejected).
  absl::Status status;
  uint64_t error_offset = 0;  // byte offset of the first error in the input
  bool tolerant = false;      // Trace Event Format: the tolerant path was used
  // Non-empty: the input is not part of this job (e.g. smdebug system
  // metrics under --no-system-metrics) and is skipped with this note;
  // nothing was decoded.
  std::string skip_note;
};

}  // namespace tracemill::formats
