#pragma once
// smdebug framework timelines of one node -> one TraceBuilder.
//
// smdebug rotates a node's timeline into many small files (one per minute or
// per 10 MB, per suffix: pythontimeline, model_timeline, horovod_timeline,
// smdataparallel_timeline; TF profiler traces per profiled step). Each file
// is a JSON array, one record per line (smdebug's `TimelineFileWriter`):
//   {"name": "process_name", "ph": "M", "pid": 0,
//    "args": {"start_time_since_epoch_in_micros": 1589930987655184}}   <- the file's time base
//   {"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "DataIterator"}}  <- a phase
//   {"name": "dataset::GetNext", "ph": "X", "pid": 1, "ts": 18057039, "dur": 4}
// `ts` is µs relative to the base (absolute = base + ts); pids are local to a
// file (pid 1 is DataIterator in one file and NcclManager in the next), so a
// phase is known by its name, not its pid; metadata repeats mid-file.
//
// Every file is decoded by `TefDecoder` (so unterminated arrays, trailing
// commas and cut tails are tolerated as for any Trace Event Format input)
// into a scratch builder, then moved into the node's builder:
// - each phase becomes one process of the node (string pid = the phase
//   name), ordered by `SmdebugPhaseOrder` (Step, Forward, Backward, ...);
// - threads keep their tid; `thread_name`s become `<node>_<name>`;
// - the pid-0 base record is counted `time_base`, repeated metadata
//   `duplicate_metadata`; every other event is moved;
// - flow/async ids get fresh ids per file (`TraceBuilder::ReserveIds`);
// - `Step:ModeKeys.TRAIN` / `Step:ModeKeys.GLOBAL` events with
//   `args.step_num` become the node's steps (EVAL/PREDICT steps restart at 0
//   and would alias TRAIN's numbers).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "formats/chrome/tef_decoder.h"
#include "formats/common/trace_data.h"

namespace tracemill::formats {

// FrameworkNodeDecoder: framework files of one node -> `out`
// (file bytes... -> TraceBuilder). One instance per node being decoded.
class FrameworkNodeDecoder {
 public:
  // `node` labels thread names (`<node>_<thread>`); `out` is borrowed.
  FrameworkNodeDecoder(std::string node, TraceBuilder* out) : node_(std::move(node)), out_(out) {}

  // AddFile decodes one file (`json` padded as for `TefDecoder::Decode`) and
  // moves its events into the node. `base_ns` overrides the file's time base
  // (a TF profiler trace's `.metadata` start); without it the pid-0
  // `start_time_since_epoch_in_micros` record is the base; with neither,
  // times stay relative (a warning says so). The report is the file's own
  // (status kDataLoss: damaged, what was readable is kept; kInvalidArgument:
  // not a trace, nothing kept). `json` may be freed after the call.
  DecodeReport AddFile(std::string_view json, size_t capacity, std::optional<int64_t> base_ns,
                       TefDecoder* tef);

 private:
  // Cached: `cache[key]`, else `(out_->*intern)` of an arena copy of `key`.
  uint32_t Cached(absl::flat_hash_map<std::string, uint32_t>& cache, std::string_view key,
                  uint32_t (TraceBuilder::*intern)(std::string_view));
  uint32_t Intern(std::string_view sanitized_body);
  uint32_t InternToken(std::string_view sanitized_token);
  uint32_t PhasePid(std::string_view phase_body);

  std::string node_;
  TraceBuilder* out_;
  // Keys own their bytes: the scratch builder's strings die with each file.
  absl::flat_hash_map<std::string, uint32_t> strings_;
  absl::flat_hash_map<std::string, uint32_t> tokens_;
  absl::flat_hash_map<std::string, uint32_t> phase_pid_;
  absl::flat_hash_set<std::string> metadata_seen_;  // "name|pid|tid" of kept metadata
  std::string scratch_;
};

// SmdebugStepNumber: the step of an smdebug step marker, if `name` is
// `Step:ModeKeys.TRAIN` or `Step:ModeKeys.GLOBAL` and `rest` (sanitized
// members) holds `"step_num"` as an integer or a string of digits.
std::optional<int64_t> SmdebugStepNumber(std::string_view name, std::string_view rest);

}  // namespace tracemill::formats
