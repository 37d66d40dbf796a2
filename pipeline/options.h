#pragma once
// ConvertOptions: everything `tracemill convert` was asked to do.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/facts.h"
#include "pipeline/inputs/rank_select.h"
#include "pipeline/shard.h"

namespace tracemill::pipeline {

// How inputs are grouped into outputs.
enum class GroupBy {
  kLocalGpu,  // output g holds ranks r with r % gpus_per_node == g (CrossStackProfiler's grouping)
  kRank,      // one output per rank
  kNode,      // output n holds ranks r with r / gpus_per_node == n
  kAll,       // one output
};

// --align-clocks: whether ranks of different nodes are put on one clock
// (pipeline/clocks/clocks.h).
enum class AlignClocks {
  kAuto,  // when the inputs span more than one node and the estimate is confident
  kOn,    // wherever an offset can be estimated
  kOff,   // never
};

// --tables: the analysis tables in OUTDIR/tables.sqlite (analysis/tables.h).
using analysis::TablesMode;

// FollowOptions: `convert --follow` (pipeline/follow/follow_job.h): watch
// the inputs while a job writes them and convert them window by window.
// Durations are int64 ns (trace time for the window, wall time otherwise).
struct FollowOptions {
  int64_t window_ns = 60'000'000'000;  // --window: consecutive windows of trace time
  bool per_cycle = false;              // --window cycle: one window per profiling cycle
  int64_t idle_timeout_ns = 0;         // --idle-timeout: stop after this long without new data; 0: never
  int64_t grace_ns = 120'000'000'000;  // --grace: how long a window waits for a lagging source
  bool poll = false;                   // --poll: list the folders instead of inotify
  int64_t poll_interval_ns = 10'000'000'000;  // --poll-interval (smdebug's ProfilerTrial polls every 10 s)
};

// FollowWindow: the one window a follow job's convert writes (by start,
// [start_ns, end_ns)); `late`: events of files that came after their
// window was written (start_ns is then the minimum).
struct FollowWindow {
  std::string name;  // the folder's name under OUTDIR/windows/
  int64_t start_ns = 0, end_ns = 0;
  bool late = false;
};

// ParseGroupBy maps "local-gpu" | "rank" | "node" | "all"; nullopt otherwise.
std::optional<GroupBy> ParseGroupBy(const std::string& s);

struct ConvertOptions {
  std::vector<std::string> inputs;  // files or directories (recursed)
  std::string out_dir;
  GroupBy group_by = GroupBy::kLocalGpu;
  int gpus_per_node = 0;  // 0: the number of deviceProperties entries, else 8
  bool compress = false;  // write .json.gz
  bool direct_io = true;  // outputs with O_DIRECT where possible (--no-direct-io: false)
  bool relative_time = false;
  int threads = 0;        // 0: the CPUs this process may use
  uint64_t memory_limit = 0;  // bytes; 0: DefaultMemoryLimit() (pipeline/budget.h)
  std::string tmp_dir;        // spill files; empty: $TMPDIR, else /tmp
  std::string rank_pattern;  // regex with one capture group; empty: default
  bool quiet = false;
  bool verbose = false;
  bool progress = false;  // a progress line on stderr (set when it is a TTY)
  bool write_report = true;  // OUTDIR/report.html after the manifest (--no-report: false)
  std::string command_line;
  ShardSpec shard;        // --shard or the environment (pipeline/shard.h)
  bool resume = false;    // --resume: keep outputs the journal/manifest shows complete
  // Windows (formats/common/time_window.h): keep events overlapping
  // [window_start_ns, window_end_ns] (absolute ns; --start/--end), or the
  // span from the start of step `start_step` to the end of step `end_step`
  // (inclusive), resolved from the decoded step markers.
  std::optional<int64_t> window_start_ns, window_end_ns;
  std::optional<int64_t> start_step, end_step;
  int64_t time_offset_ns = 0;      // --time-offset: added to every input's timestamps
  double low_gpu_threshold = 85;   // percent: GPUUtilization below it is a bottleneck
  bool no_system_metrics = false;  // skip smdebug system metrics
  bool no_overlap = false;       // --no-overlap: stage 1 (decode all), then stage 2 (write all)
  AlignClocks align_clocks = AlignClocks::kAuto;
  std::optional<RankSet> ranks;  // --ranks: only these ranks in the traces (rank_select.h)
  // --max-output-bytes: an output past it is written in time parts
  // (output_parts.h); 0: never.
  uint64_t max_output_bytes = 256ull << 20;
  // --time-ranges: each output written as this many consecutive time ranges
  // (<stem>.time-R-of-N.trace.json), which a sharded job's shards share
  // (merge/time_split.h, write_output.h); 1: one file per output.
  int time_ranges = 1;
  TablesMode tables = TablesMode::kOff;  // --tables [summary|full]
  // --hta-last-step: HTA's tables keep each rank's last ProfilerStep (HTA's
  // include_last_profiler_step=True); by default they leave it out, as HTA.
  bool hta_last_step = false;
  std::optional<FollowOptions> follow;   // --follow: a follow job (RunFollow), not one convert
  // Set by the follow job on each window's convert: keep the events that
  // start in the window, and add a `follow` member to its manifest.
  std::optional<FollowWindow> follow_window;
  // A follow window's smdebug system-metrics files just before and after
  // its own, of the same nodes: read for the low-GPU runs that cross its
  // edges, so that each window holds exactly its part of a one-shot
  // convert's slices (follow/window_plan.h ContextFiles).
  std::vector<std::string> follow_context_files;
  int debug_write_delay_ms = 0;  // hidden: sleep this long per 1,000 events written (tests)
};

// Exit statuses of `tracemill` (documented in --help and README.md).
enum ExitCode : int {
  kExitOk = 0,          // every input converted
  kExitInternal = 1,    // internal error (or an output could not be written)
  kExitUsage = 2,       // bad command line
  kExitSomeRejected = 3,  // some inputs rejected or damaged; the rest converted
};

}  // namespace tracemill::pipeline
