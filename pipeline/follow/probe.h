#pragma once
// Probe: the follow job's one look at a new or changed file (path ->
// FileProbe): is it complete, which source wrote it, and the span of its
// events' starts, so that each window reads only the files that overlap it.
//
// The file is decoded once, as convert would (pipeline/convert/decode_stage.h:
// ReadAndDecode; an smdebug file as a one-file node), then dropped; only
// the numbers are kept. A file still being written shows as a decode
// error: JSON cut short (a Kineto trace being written), a gzip member
// without its trailer, a file that changed while it was read.
#include <cstdint>
#include <optional>
#include <string>

#include "pipeline/inputs/rank_name.h"
#include "pipeline/options.h"

namespace tracemill::pipeline::follow {

// FileProbe: what one decode of a file found.
struct FileProbe {
  enum class Result {
    kComplete,    // decoded without error
    kIncomplete,  // an error a file still being written shows (cut JSON, gzip without trailer, ...)
    kNotTrace,    // no format recognizes it (a README), or empty
  };
  Result result = Result::kNotTrace;
  std::string note;                 // the decode's error, if any
  uint64_t events = 0;              // timed (non-metadata) events decoded
  bool has_events = false;          // min/max below are set
  int64_t min_start_ns = 0;         // earliest event start (B/E pairs: the B's), absolute ns
  int64_t max_start_ns = 0;         // latest event start
  std::optional<int64_t> rank;      // the input's rank, as convert decides it
  std::optional<int64_t> world_size;
  std::string node;                 // smdebug node id
  int smdebug_kind = 0;             // formats::SmdebugFileKind
  std::string format;
};

// ProbeFile decodes `path` with `opts`' decode options (--time-offset,
// --rank-pattern via `ranks`, --no-system-metrics, ...) within
// `max_inflated_bytes`, and returns what it found. Never throws.
FileProbe ProbeFile(const std::string& path, const ConvertOptions& opts, const RankMatcher& ranks,
                    uint64_t max_inflated_bytes);

}  // namespace tracemill::pipeline::follow
