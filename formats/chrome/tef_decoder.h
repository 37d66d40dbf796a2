#pragma once
// Trace Event Format JSON decoder (Kineto / PyTorch profiler, Chrome, Horovod,
// Perfetto's JSON): bytes -> events into a TraceBuilder.
//
// Spec: Trace Event Format (Google, "Trace Event Format" doc), both the JSON
// Array Format (`[ {...}, ... ]`) and the JSON Object Format
// (`{"traceEvents": [...], ...}`), plus Kineto's top-level keys
// (`distributedInfo`, `deviceProperties`, `baseTimeNanoseconds`, the logger's
// `ERROR`/`WARNING` arrays, which become warnings of the input; every key,
// before or after `traceEvents`, kept in `InputMetadata::top_level`).
//
// Three paths over one event decoder:
// - scan: byte loops over a strictly valid document of clean events
//   (Kineto's files), no simdjson; declines at anything else, and the fast
//   path runs;
// - fast: simdjson On-Demand over the whole padded buffer, zero-copy;
// - tolerant: when simdjson refuses the document (truncated tail, unterminated
//   array, trailing comma, invalid UTF-8, raw control characters), a small
//   scanner finds each event object's boundaries, repairs its bytes and
//   decodes objects one by one, so one bad byte costs one event, not the file.
//   Evidence: Horovod/Bluefog timelines are never closed and end in `},`
//   (tests/data/bluefog); crashed jobs leave files cut mid-object.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "formats/common/decode_report.h"
#include "formats/common/stats.h"
#include "formats/common/trace_data.h"


namespace tracemill::formats {

// TefDecoder: bytes of one JSON document -> events in a TraceBuilder
// (InputBytes -> TraceBuilder). Reentrant per instance: one per worker thread;
// holds simdjson parsers and scratch buffers that are reused across inputs.
class TefDecoder {
 public:
  TefDecoder();
  ~TefDecoder();
  TefDecoder(const TefDecoder&) = delete;
  TefDecoder& operator=(const TefDecoder&) = delete;

  // Decode parses `json` (its allocation must extend `capacity` >=
  // json.size() + SIMDJSON_PADDING bytes, as `Gunzip` and `ReadFile` leave it)
  // and pushes every event into `builder` (a fresh one: the tolerant path
  // resets it), plus a memory counter sample after each `[memory]` instant
  // (`TraceBuilder::DeriveMemoryCounters`), counted in the report's
  // events_read. `json` must stay alive until `builder->Finish()`.
  DecodeReport Decode(std::string_view json, size_t capacity, TraceBuilder* builder);

  // set_scan_path: whether Decode tries the scan path first (default on;
  // off for the tests that compare it with the fast path).
  void set_scan_path(bool on);
  // scanned: the last Decode took the scan path (it declined nothing).
  bool scanned() const;

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace tracemill::formats
