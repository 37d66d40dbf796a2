#pragma once
// Timeline: the few facts per input that the run report draws, collected
// while decoding (never by a second pass over the file or the events).
//
// - Steps: a training step (Kineto `ProfilerStep#N`, Paddle `ProfileStep#N`,
//   smdebug `Step:N`) or a round of an orchestrator, as (number, start, end)
//   in absolute ns. `TraceBuilder` fills `steps` from event names
//   (`MatchStepName`); decoders that know their steps (the run event log)
//   add them directly.
// - Tracks: an input that holds several actors (a run event log: a scheduler
//   and its workers) has one `TrackTimeline` per actor, each with its own
//   steps and, for a worker that failed, the time and reason.
//
// Bounded: at most `kMaxStepsKept` steps are kept per input or track (the
// rest are counted in `steps_dropped`): the analysis tables and
// `--start-step` see all of them (a 1-hour smdebug job has ~14,400 steps
// per node). The manifest lists at most `kMaxStepsPerTrack` of each, spread
// over the whole run: the steps whose number is a multiple of a power-of-two
// stride (`ListedStride`, the same for a batch job and a follow job over the
// same steps), and counts the others in its `steps_dropped`, so a manifest
// for 4,096 ranks stays small whatever the inputs hold and the report's
// timeline still covers the run.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tracemill::formats {

inline constexpr size_t kMaxStepsPerTrack = 4096;           // listed in the manifest
inline constexpr size_t kMaxStepsKept = size_t{1} << 20;     // kept per input or track (32 MiB)

// StepSpan: one step of one input or track. Times are absolute ns (the
// input's time base applied). `survivors`/`total` are set on rounds of a run
// event log's scheduler (workers alive at the end of the round / workers in
// the run), else -1.
struct StepSpan {
  int64_t step = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int32_t survivors = -1;
  int32_t total = -1;
};

// TrackTimeline: one actor of a multi-actor input.
struct TrackTimeline {
  std::string name;             // "scheduler", "worker 3" (plain UTF-8)
  std::optional<int64_t> rank;  // the worker's rank; nullopt for a scheduler
  std::vector<StepSpan> steps;  // sorted by step
  std::optional<int64_t> failed_at_ns;  // first failed action (absolute ns)
  std::string failure;          // why, plain UTF-8 ("exec exit_code 1: ...")
  int64_t steps_stride = 1;     // read back from a manifest: the stride it listed at (ListedStride)
};

// GpuUtilization: one GPU's DCGM samples in an input (a Paddle trainer's
// `dcgmi dmon` log), summed for the report: GPUTL in percent, the others
// ratios (0..1) as dmon writes them. Sums, so that a follow job's windows
// and shards add up; the manifest writes means.
struct GpuUtilization {
  int64_t gpu = 0;
  uint64_t samples = 0;
  double gputl_sum = 0, gputl_max = 0;  // GPU utilization (percent)
  double smact_sum = 0;                 // SM active
  double smocc_sum = 0;                 // SM occupancy
  double drama_sum = 0;                 // DRAM active
  double tenso_sum = 0;                 // tensor pipes active
};

// AddGpuUtilization adds `from` into `into` GPU by GPU (sorted by gpu).
void AddGpuUtilization(const std::vector<GpuUtilization>& from, std::vector<GpuUtilization>* into);

// Timeline: what the report needs of one input.
struct Timeline {
  std::vector<StepSpan> steps;        // the input's own steps, sorted by step
  std::vector<TrackTimeline> tracks;  // multi-actor inputs only
  uint64_t bytes_pushed = 0;          // run event logs: sum of push size_bytes
  uint64_t bytes_pulled = 0;          // run event logs: sum of pull size_bytes
  uint64_t steps_dropped = 0;         // steps past kMaxStepsKept (not kept at all)
  int64_t steps_stride = 1;           // read back from a manifest: the stride it listed at (ListedStride)
  std::vector<GpuUtilization> gpus;   // DCGM logs: per GPU, sorted by gpu
};

// ListedStride: the stride of the steps a manifest lists: the smallest power
// of two, at least `at_least` (a power of two: the stride `steps` were
// already listed at), at which at most kMaxStepsPerTrack of `steps` (unique
// numbers) have a number that is a multiple of it.
int64_t ListedStride(const std::vector<StepSpan>& steps, int64_t at_least = 1);

// IsListed: step number `step` is listed at `stride` (a multiple of it,
// negative numbers too).
inline bool IsListed(int64_t step, int64_t stride) { return step % stride == 0; }

// MatchStepName returns N if `name` (a sanitized JSON string body) names a
// step: `ProfilerStep#N` (PyTorch profiler / Kineto), `ProfileStep#N`
// (Paddle profiler) or `Step:N` (smdebug), N a decimal integer; else nullopt.
std::optional<int64_t> MatchStepName(std::string_view name);

// NormalizeSteps sorts `steps` by step and merges spans of the same step
// number (union: earliest start, latest end), then keeps the first
// kMaxStepsKept. Returns the number of steps dropped by the cap.
uint64_t NormalizeSteps(std::vector<StepSpan>* steps);

}  // namespace tracemill::formats
