#pragma once
// Run event log decoder: the JSON Lines log a small training orchestrator
// (parameter server, federated rounds) writes of its scheduler and workers
// -> events into a TraceBuilder, plus the input's Timeline (rounds as steps,
// per-worker round spans and failures, bytes pushed and pulled).
//
// Input: one JSON object per line (README.md, "Run event logs"):
//   {"time": 12.5, "kind": "exec", "rank": 2, "duration_s": 3.25,
//    "data": {"exit_code": 1, "output_tail": "CUDA error"}}
// - `time`: seconds since the run start, decimal text, parsed exactly to int64
//   ns (`ParseSecondsToNanos`, never through a double); it is the END of the
//   action, which lasted `duration_s` (at the top level or in `data`).
// - `kind`: round_start / round_end (data: round_num, active_nodes,
//   survivors, total_nodes), push / pull (size_bytes, path), exec (exit_code,
//   output_tail), aggregate (num_workers, weight_norm, delta_norm); other
//   kinds are kept too.
// - `rank`: the worker; absent or null for the scheduler.
// - `error` (top level or in `data`): non-null, non-empty, non-false marks the
//   action failed; so does an exec with exit_code != 0.
//
// Output: one process per actor (string pid `"scheduler"`, `"worker 3"`; the
// scheduler first, workers in order of first appearance), one event per line:
// round_start / round_end -> `B` / `E` named "round N" on the scheduler;
// actions with a duration -> `X` ending at `time`; others -> instant `i`.
// Args are `data` plus any other top-level keys; a failed action also gets
// `"failed": true` and `"cname": "terrible"` (red in chrome://tracing).
//
// Lines are re-emitted through `AppendSanitizedJson` and walked as compact
// JSON, not with simdjson: run logs are small (KBs to a few MBs), every line
// is parsed on its own (a crashed orchestrator leaves a cut last line, and
// one bad line costs one event), and Python's json.dumps writes bare `NaN`
// norms that the sanitizer turns into strings.
#include <string_view>

#include "formats/chrome/tef_decoder.h"  // DecodeReport
#include "formats/common/trace_data.h"

namespace tracemill::formats {

// RunEventLogDecoder: JSON Lines bytes -> events and Timeline in a
// TraceBuilder. Reentrant per instance (holds scratch buffers).
class RunEventLogDecoder {
 public:
  // Decode pushes every line of `text` into `builder` (the views it keeps
  // point into the builder's arena, so `text` may be freed afterwards).
  // Report status: OK; kDataLoss (a malformed or cut line: every other line
  // was kept, `error_offset` is the first bad line's); kInvalidArgument (no
  // line has both `time` and `kind`: not a run event log; nothing kept).
  DecodeReport Decode(std::string_view text, TraceBuilder* builder);

 private:
  std::string obj_;   // the current line, sanitized
  std::string args_;  // the current event's args
  std::string rest_;  // the current event's rest members
};

}  // namespace tracemill::formats
