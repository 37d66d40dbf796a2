#pragma once
// SageMaker Debugger (smdebug) profiler folder layout: what a path is.
//
// smdebug writes one folder per training job (smdebug's `TraceFileLocation`
// and `SystemMetricsWriter`, at sagemaker-debugger 3b82de3):
//   framework/pevents/YYYYMMDDHH/<end_us>_<node_id>_<suffix>
//       suffix: pythontimeline.json, model_timeline.json,
//       horovod_timeline.json, smdataparallel_timeline.json; a file still
//       being written ends in `.tmp`;
//   framework/tensorflow/detailed_profiling/YYYYMMDDHH/<step>/
//       <node_id>_<start_us>_<end_us>.metadata          (empty: the name is the data)
//       plugins/profile/<date>/<host>.trace.json.gz     (TF profiler, relative ts)
//   system/incremental/[YYYYMMDDHH/]<epoch_s>.<node_id>.json   (JSON Lines samples)
// Framework files are recognized by name wherever they are (smdebug's own
// tests keep loose copies); system metrics by name under a `system/` folder
// (elsewhere, by content); everything is still decoded by content.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tracemill::formats {

enum class SmdebugFileKind {
  kNone,             // not an smdebug layout file
  kFramework,        // framework/pevents timeline (JSON array)
  kInProgress,       // a framework file still being written (`*.tmp`)
  kTfProfilerTrace,  // plugins/profile/<date>/<host>.trace.json.gz
  kMetadataMarker,   // <node>_<start_us>_<end_us>.metadata
  kSystemMetrics,    // system/.../<epoch_s>.<node>.json
};

// SmdebugPath: what ClassifySmdebugPath found in one path.
struct SmdebugPath {
  SmdebugFileKind kind = SmdebugFileKind::kNone;
  std::string node;      // node id (`4487_0000`, `905-b88ab1bb8259`, `algo-1`), if in the name
  std::string suffix;    // framework: `pythontimeline`, `model_timeline`, ...
  int64_t time_us = 0;   // framework: end µs; system: epoch s x 1e6; marker: start µs
  int64_t end_us = 0;    // marker: end µs
};

// ClassifySmdebugPath looks at a path (its file name and, for system
// metrics and TF profiler traces, its folders); never reads the file.
SmdebugPath ClassifySmdebugPath(std::string_view path);

// SmdebugNodeRank: the rank an smdebug node id names, if it names one
// unambiguously: the older `<pid>_<rank>` form (`4487_0000` -> 0) or an id
// of digits only (`0001` -> 1). `<rank-or-pid>-<host>` is rank or pid
// depending on the job, so it gives none (the node stays unranked).
std::optional<int64_t> SmdebugNodeRank(std::string_view node);

// SageMakerHost: the SageMaker host a node id names (`algo-<n>`, the
// system files' id, or `<pid>-algo-<n>`, a framework file's): n >= 1, and
// its name `algo-<n>` in `*name` (may be null); nullopt for other ids. A
// host's framework and system files are one node.
std::optional<int64_t> SageMakerHost(std::string_view node, std::string* name = nullptr);

// SmdebugPhaseOrder: the position of a framework phase (a pseudo-process
// name) in the output's process order: Step (`Step:*`), Forward, Backward,
// DataIterator, Dataset, /device, /host, gpu_functions, cpu_functions,
// Horovod, then others (10).
int SmdebugPhaseOrder(std::string_view phase);

}  // namespace tracemill::formats
