#include "tools/cli/convert_command.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "analysis/schema.h"
#include "formats/common/stats.h"
#include "formats/common/time_window.h"
#include "formats/common/ts_text.h"
#include "pipeline/budget.h"
#include "pipeline/clocks/clocks_job.h"
#include "pipeline/convert/convert.h"
#include "pipeline/follow/duration.h"
#include "pipeline/follow/follow_job.h"
#include "pipeline/job_notes.h"
#include "pipeline/shard.h"
#include "tools/cli/run_summary_lines.h"

namespace tracemill::tools::cli {
namespace {

using pipeline::ConvertOptions;

// The options that say what to read and what to write.
void AddInputOutputOptions(CLI::App* c, ConvertOptions* opts, ConvertFlags* flags) {
  c->add_option("inputs", opts->inputs,
                "Input files or directories (recursed). Format is detected from content: "
                "Trace Event Format JSON (array or object form), Paddle profiler protobuf, "
                "run event logs (JSON Lines), gzip with any number of members.")
      ->required();
  c->add_option("-o,--output", opts->out_dir, "Output directory (created if missing)")->required();
  c->add_option("--group-by", flags->group_by,
                "local-gpu: one output per local GPU g (ranks r with r % gpus-per-node == g); "
                "rank: one per rank; node: one per node (r / gpus-per-node); all: one output")
      ->check(CLI::IsMember({"local-gpu", "rank", "node", "all"}))
      ->default_str("local-gpu");
  c->add_option("--gpus-per-node", opts->gpus_per_node,
                "GPUs per node (default: number of deviceProperties entries, else 8)")
      ->check(CLI::Range(1, 1 << 16).description("an integer from 1"));
  c->add_option("--ranks", flags->ranks,
                "Keep only these ranks in the traces, e.g. 0-7,64,120-127 (every input is still read "
                "and counted: the manifest and the report cover every rank; events of the others are "
                "dropped as not_selected)")
      // An empty list would keep every rank: what `--ranks "$RANKS"` gives
      // when the variable is unset, so it is an error, not "all".
      ->check(CLI::Validator(
          [](std::string& v) {
            return v.empty() ? std::string("an empty list (expected ranks and ranges like 0-7,64,120-127)")
                             : std::string();
          },
          "LIST"));
  c->add_option("--max-output-bytes", flags->max_output_bytes,
                "Write an output larger than this as consecutive time parts (<name>.part-001.trace.json, "
                "...), each a complete trace a viewer opens; 0: never split. Default 256M: Chrome's trace "
                "viewer reads a file into one string (at most ~512 MiB) and Perfetto UI parses it in "
                "~2 GB of memory; the JSON text counts, before --compress");
  c->add_option("--time-ranges", opts->time_ranges,
                "Write each output as N consecutive time ranges (<name>.time-R-of-N.trace.json, about the same "
                "number of events each; every file a complete trace with the inputs' metadata), so that a "
                "sharded job can use up to N times as many shards as outputs: each range goes to one shard. "
                "Default 1 (one file per output)")
      ->check(CLI::Range(1, 4096));
  c->add_flag("--compress", opts->compress, "Write .json.gz (multi-member gzip)");
  c->add_flag("--no-direct-io", flags->no_direct_io,
              "Write outputs and spill files through the page cache (default: O_DIRECT where "
              "the file system takes it: outputs are written once and not read back; spilled "
              "runs past the page cache the job may use)");
  c->add_flag("--relative-time", opts->relative_time,
              "Write ts as microseconds since the job's first event (base in otherData)");
}

// The options that say how to run: threads, memory, scratch, ranks, shards.
void AddResourceOptions(CLI::App* c, ConvertOptions* opts, ConvertFlags* flags) {
  c->add_option("--threads", opts->threads,
                "Worker threads (default: CPUs this process may use: affinity and cgroup quota)")
      ->check(CLI::Range(1, 1 << 16).description("an integer from 1"));
  c->add_option("--memory-limit", flags->memory_limit,
                "Peak memory bound, e.g. 512M, 4G (default: half the cgroup memory limit, "
                "else half the physical memory, at most 4G). Runs that do not fit spill to "
                "--tmp-dir");
  c->add_option("--tmp-dir", opts->tmp_dir,
                "Directory for spill files (default: $TMPDIR, else /tmp; node-local scratch "
                "under Slurm and Kubernetes)");
  c->add_option("--rank-pattern", opts->rank_pattern,
                "Regex with one capture group giving the rank from a file name, for inputs "
                "without distributedInfo.rank (default: rank-5, rank5, rank_5, worker5, .5 suffix)");
  c->add_option("--shard", flags->shard,
                "This process writes shard INDEX of COUNT (0-based, e.g. 0/4): a fixed share of the "
                "outputs, balanced by input bytes; `tracemill manifest merge` joins the shard "
                "manifests. Default: from SLURM_ARRAY_TASK_ID/_COUNT/_MIN, else SLURM_PROCID/"
                "SLURM_NTASKS, else JOB_COMPLETION_INDEX with --shard-count or "
                "TRACEMILL_SHARD_COUNT, else 0/1; --shard 0/1 turns detection off");
  c->add_option("--shard-count", flags->shard_count,
                "Shard count for a Kubernetes Indexed Job (JOB_COMPLETION_INDEX is the index)")
      ->check(CLI::Range(1, 1 << 16).description("an integer from 1"));
  c->add_flag("--resume", opts->resume,
              "Keep outputs an earlier (killed) run of the same job completed, checked by size "
              "and CRC-32 against its journal or manifest, without reading their inputs; redo "
              "the rest");
}

// The options that select or shift events: windows, offset, system metrics.
void AddEventOptions(CLI::App* c, ConvertOptions* opts, ConvertFlags* flags) {
  c->add_option("--start", flags->start,
                "Keep events that overlap the window from this time (not clipped): microseconds "
                "since the epoch, or ISO-8601 with a zone (2020-05-26T02:45:27.873Z); dropped "
                "events are counted as `window` in the manifest");
  c->add_option("--end", flags->end, "End of the window (inclusive), as --start");
  c->add_option("--start-step", flags->start_step,
                "Window from the start of this step (Kineto ProfilerStep#N, Paddle ProfileStep#N or "
                "forward/backward markers, smdebug Step:ModeKeys.TRAIN step_num); an unknown step "
                "is an error")
      ->check(CLI::Range(0, std::numeric_limits<int>::max()).description("an integer from 0"));
  c->add_option("--end-step", flags->end_step, "Window to the end of this step (inclusive), as --start-step")
      ->check(CLI::Range(0, std::numeric_limits<int>::max()).description("an integer from 0"));
  c->add_option("--time-offset", flags->time_offset,
                "Add this many microseconds (may be negative) to every input's timestamps, e.g. "
                "to place a raw Horovod timeline (monotonic clock) on the epoch");
  c->add_option("--low-gpu-threshold", opts->low_gpu_threshold,
                "smdebug system metrics: GPUUtilization below this percentage is drawn as a "
                "slice on the node's `GPU bottlenecks` track (default 85)")
      ->check(CLI::Range(0.0, 100.0));
  c->add_flag("--no-system-metrics", opts->no_system_metrics,
              "Skip smdebug system metrics (system/ folders and loose sample files)");
  c->add_option_function<std::string>(
       "--align-clocks",
       [opts, flags](const std::string& v) {
         flags->align_clocks = v;
         opts->align_clocks = v == "on" ? pipeline::AlignClocks::kOn
                              : v == "off" ? pipeline::AlignClocks::kOff
                                           : pipeline::AlignClocks::kAuto;
       },
                "Put ranks of different nodes on one clock, measured from their collectives "
                "(NCCL kernels, else nccl:/gloo: records): auto applies the offsets when the inputs "
                "span several nodes and the estimate is confident (8 matched instances, spread "
                "<= 20 us); on applies every offset found; off never shifts")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->default_str("auto");
}

// The options that say what the run shows and when it writes.
void AddRunOptions(CLI::App* c, ConvertOptions* opts) {
  c->add_flag("--no-overlap", opts->no_overlap,
              "Decode every input before writing any output (by default an output is written "
              "as soon as its inputs are decoded, when the inputs' heads tell every output)");
  c->add_option("--debug-write-delay-ms", opts->debug_write_delay_ms,
                "Sleep this long per 1,000 events written (tests of interrupted runs)")
      ->group("");
  c->add_flag("-q,--quiet", opts->quiet, "No progress line and no summary; error lines are kept");
  c->add_flag("-v,--verbose", opts->verbose, "Log threads, simdjson kernel and outputs");
  c->add_flag("--no-report", [opts](int64_t) { opts->write_report = false; },
              "Do not write OUTDIR/report.html (the HTML run report)");
  c->add_option_function<std::string>(
       "--tables",
       [opts](const std::string& v) {
         opts->tables = v == "summary" ? pipeline::TablesMode::kSummary : pipeline::TablesMode::kFull;
       },
       "Also write OUTDIR/tables.sqlite: system/framework/data-loader metrics (SageMaker "
       "Debugger's PandasFrame), steps, phases per step, HTA's temporal and kernel breakdowns, "
       "comm/comp overlap, idle time, inputs and outputs. `summary` leaves out the per-event "
       "framework_metrics table (write --tables=full or put --tables after the inputs). With --follow, "
       "each window writes its own and OUTDIR/tables.sqlite gathers every window's rows")
      ->expected(0, 1)
      ->default_str("full")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            if (v.empty() || v == "summary" || v == "full") return "";
            return "takes summary or full, not `" + v +
                   "`: tables.sqlite is written into -o's folder (before an input, write --tables=full)";
          },
          "summary|full"));
  c->add_flag("--hta-last-step", opts->hta_last_step,
              "With --tables: HTA's tables (temporal, kernel and idle breakdowns, overlap) keep each rank's "
              "last ProfilerStep, as HTA's include_last_profiler_step=True; by default they leave it out, "
              "as HTA does");
}

// The options of a follow job (`--follow`, pipeline/follow/follow_job.h).
void AddFollowOptions(CLI::App* c, ConvertFlags* flags) {
  c->add_flag("--follow", flags->follow,
              "Follow a running job: watch the inputs while training writes them and convert what is "
              "complete, window by window, into OUTDIR/windows/<start>-<end>/ (OUTDIR/latest: the newest; "
              "OUTDIR/report.html: the whole job so far), until smdebug's end markers, --idle-timeout, or "
              "SIGINT/SIGTERM (the window in progress is finished); --resume continues a follow job");
  c->add_option("--window", flags->window,
                "With --follow: consecutive windows of this much trace time, e.g. 60s, 5m (default 60s); "
                "`cycle`: one window per profiling cycle (PyTorch profiler's per-cycle files)");
  c->add_option("--idle-timeout", flags->idle_timeout,
                "With --follow: stop after this long (wall time, e.g. 10m) without new data, writing "
                "every window left (default: never)");
  c->add_option("--grace", flags->grace,
                "With --follow: how long a window waits for sources that have not written past its end "
                "(default 2m); then it is written without them and what they write later goes to a "
                "late window");
  c->add_flag("--poll", flags->poll,
              "With --follow: list the input folders every --poll-interval instead of inotify (chosen "
              "by itself on NFS, Lustre, GPFS, CIFS and FUSE)");
  c->add_option("--poll-interval", flags->poll_interval, "With --follow: time between listings when polling (default 10s)");
}

// Each Resolve* below turns checked flags into options. On a bad flag it
// prints one "tracemill: ..." line and returns false (a usage error).

// The shard: --shard (checked against --shard-count), else the environment.
bool ResolveShard(const ConvertFlags& flags, ConvertOptions* opts) {
  if (!flags.shard.empty()) {
    auto spec = pipeline::ParseShardArg(flags.shard);
    if (!spec.ok()) {
      std::fprintf(stderr, "tracemill: %s\n", std::string(spec.status().message()).c_str());
      return false;
    }
    if (flags.shard_count > 0 && flags.shard_count != spec->count) {
      std::fprintf(stderr, "tracemill: --shard-count %d disagrees with --shard %s\n", flags.shard_count,
                   flags.shard.c_str());
      return false;
    }
    opts->shard = *spec;
    return true;
  }
  auto spec = pipeline::DetectShard([](const char* k) { return std::getenv(k); }, flags.shard_count);
  if (!spec.ok()) {
    std::fprintf(stderr, "tracemill: %s\n", std::string(spec.status().message()).c_str());
    return false;
  }
  opts->shard = *spec;
  if (!opts->shard.source.empty() && !opts->quiet)
    std::fprintf(stderr, "tracemill: shard %d/%d (detected from %s)\n", opts->shard.index,
                 opts->shard.count, opts->shard.source.c_str());
  return true;
}

// --relative-time needs the whole job, which a shard does not read.
bool CheckRelativeTime(const ConvertOptions& opts) {
  if (!opts.relative_time || !opts.shard.sharded()) return true;
  std::fprintf(stderr,
               "tracemill: --relative-time needs the whole job's first event, which shard %d/%d "
               "does not read: drop --relative-time or run unsharded (--shard 0/1)\n",
               opts.shard.index, opts.shard.count);
  return false;
}

// --start / --end as absolute ns, the end not before the start.
bool ResolveTimeWindow(const ConvertFlags& flags, ConvertOptions* opts) {
  struct Bound {
    const std::string* arg;
    const char* flag;
    std::optional<int64_t>* ns;
  };
  for (const Bound& b : {Bound{&flags.start, "--start", &opts->window_start_ns},
                         Bound{&flags.end, "--end", &opts->window_end_ns}}) {
    if (b.arg->empty()) continue;
    auto ns = formats::ParseTimeArg(*b.arg);
    if (!ns.ok()) {
      std::fprintf(stderr, "tracemill: %s: %s\n", b.flag, std::string(ns.status().message()).c_str());
      return false;
    }
    *b.ns = *ns;
  }
  if (opts->window_start_ns && opts->window_end_ns && *opts->window_end_ns < *opts->window_start_ns) {
    std::fprintf(stderr, "tracemill: --end is before --start\n");
    return false;
  }
  return true;
}

// --start-step / --end-step; they need every input, which a shard does not read.
bool ResolveStepWindow(const ConvertFlags& flags, ConvertOptions* opts) {
  if (flags.start_step >= 0) opts->start_step = flags.start_step;
  if (flags.end_step >= 0) opts->end_step = flags.end_step;
  if ((opts->start_step || opts->end_step) && opts->shard.sharded()) {
    std::fprintf(stderr,
                 "tracemill: --start-step/--end-step need every input's step markers, which shard %d/%d "
                 "does not read: pass --start/--end, or run unsharded (--shard 0/1)\n",
                 opts->shard.index, opts->shard.count);
    return false;
  }
  return true;
}

bool ResolveTimeOffset(const ConvertFlags& flags, ConvertOptions* opts) {
  if (flags.time_offset.empty()) return true;
  auto ns = formats::ParseMicrosToNanos(flags.time_offset);
  // Held to the range of timestamps (+-2^62 ns), so that ts + offset fits.
  if (!ns || !formats::InTimeRange(*ns)) {
    std::fprintf(stderr,
                 "tracemill: --time-offset %s: expected decimal microseconds within "
                 "+-4611686018427387.903\n",
                 flags.time_offset.c_str());
    return false;
  }
  opts->time_offset_ns = *ns;
  return true;
}

// ParseSizeFlag: size flag `name`'s `value` ("512M") into `*out`, bytes;
// false, with a usage line saying what it expects (`expected`), when it is
// not a size of at least `min_bytes`.
bool ParseSizeFlag(const char* name, const std::string& value, uint64_t min_bytes, const char* expected,
                   uint64_t* out) {
  auto bytes = pipeline::ParseBytes(value);
  if (!bytes || *bytes < min_bytes) {
    std::fprintf(stderr, "tracemill: %s %s: expected %s\n", name, value.c_str(), expected);
    return false;
  }
  *out = *bytes;
  return true;
}

bool ResolveMemoryLimit(const ConvertFlags& flags, ConvertOptions* opts) {
  if (flags.memory_limit.empty()) return true;
  return ParseSizeFlag("--memory-limit", flags.memory_limit, 16u << 20, "a size like 512M or 4G (at least 16M)",
                       &opts->memory_limit);
}

bool ResolveMaxOutputBytes(const ConvertFlags& flags, ConvertOptions* opts) {
  if (flags.max_output_bytes.empty()) return true;
  if (flags.max_output_bytes == "0") {
    opts->max_output_bytes = 0;
    return true;
  }
  return ParseSizeFlag("--max-output-bytes", flags.max_output_bytes, 64u << 10,
                       "a size like 256M or 1G (at least 64K), or 0", &opts->max_output_bytes);
}

bool ResolveRanks(const ConvertFlags& flags, ConvertOptions* opts) {
  if (flags.ranks.empty()) return true;
  auto set = pipeline::RankSet::Parse(flags.ranks);
  if (!set.ok()) {
    std::fprintf(stderr, "tracemill: %s\n", std::string(set.status().message()).c_str());
    return false;
  }
  opts->ranks = *set;
  return true;
}

// A duration flag of --follow; false after its line.
bool ResolveDuration(const std::string& text, const char* flag, int64_t min_ns, int64_t* ns) {
  if (text.empty()) return true;
  auto d = pipeline::follow::ParseDuration(text);
  if (!d || *d < min_ns) {
    std::fprintf(stderr,
                 "tracemill: %s %s: expected a duration like 30s, 5m, 1h30m or 250ms (units ms, s, m, h, d)%s\n",
                 flag, text.c_str(),
                 min_ns > 0 ? (std::string(", at least ") + pipeline::follow::DurationText(min_ns)).c_str() : "");
    return false;
  }
  *ns = *d;
  return true;
}

// --follow and its options, and what a follow job cannot take.
bool ResolveFollow(const ConvertFlags& flags, ConvertOptions* opts) {
  if (!flags.follow) {
    for (const auto& [given, flag] : {std::pair{!flags.window.empty(), "--window"},
                                      std::pair{!flags.idle_timeout.empty(), "--idle-timeout"},
                                      std::pair{!flags.grace.empty(), "--grace"}, std::pair{flags.poll, "--poll"},
                                      std::pair{!flags.poll_interval.empty(), "--poll-interval"}})
      if (given) {
        std::fprintf(stderr, "tracemill: %s is an option of --follow (a running job); for a time window of a "
                             "finished one, write --start/--end\n", flag);
        return false;
      }
    return true;
  }
  pipeline::FollowOptions f;
  if (flags.window == "cycle") f.per_cycle = true;
  else if (!ResolveDuration(flags.window, "--window", 1'000'000, &f.window_ns)) return false;
  if (!f.per_cycle && f.window_ns % 1000 != 0) {
    std::fprintf(stderr, "tracemill: --window %s: expected whole microseconds\n", flags.window.c_str());
    return false;
  }
  if (!ResolveDuration(flags.idle_timeout, "--idle-timeout", 0, &f.idle_timeout_ns) ||
      !ResolveDuration(flags.grace, "--grace", 0, &f.grace_ns) ||
      !ResolveDuration(flags.poll_interval, "--poll-interval", 10'000'000, &f.poll_interval_ns))
    return false;
  f.poll = flags.poll;
  // Each window is one convert of the events that start in it: options that
  // need the whole job, or choose their own window, do not apply.
  for (const auto& [given, flag] :
       {std::pair{!flags.start.empty() || !flags.end.empty(), "--start/--end"},
        std::pair{opts->time_ranges > 1, "--time-ranges"},
        std::pair{flags.start_step >= 0 || flags.end_step >= 0, "--start-step/--end-step"},
        std::pair{opts->relative_time, "--relative-time"},
        std::pair{!flags.shard.empty() || flags.shard_count > 0, "--shard"},
        std::pair{!flags.align_clocks.empty() && flags.align_clocks != "off", "--align-clocks"}})
    if (given) {
      std::fprintf(stderr, "tracemill: %s does not go with --follow (each window is converted on its own)\n", flag);
      return false;
    }
  opts->follow = f;
  opts->align_clocks = pipeline::AlignClocks::kOff;
  return true;
}

// --hta-last-step says what HTA's tables hold: without --tables it would do
// nothing, silently.
bool CheckHtaLastStep(const ConvertOptions& opts) {
  if (!opts.hta_last_step || opts.tables != pipeline::TablesMode::kOff) return true;
  std::fprintf(stderr,
               "tracemill: --hta-last-step changes HTA's tables, which only --tables writes: add --tables=summary "
               "(or --tables=full)\n");
  return false;
}

// Every flag check, in the order their errors have always been reported.
bool ResolveOptions(const ConvertFlags& flags, ConvertOptions* opts) {
  opts->group_by = *pipeline::ParseGroupBy(flags.group_by);  // CLI11 checked the name
  if (!CheckHtaLastStep(*opts)) return false;
  if (!ResolveFollow(flags, opts)) return false;
  if (opts->follow) {  // one process: no shard from the environment
    opts->direct_io = !flags.no_direct_io;
    return ResolveTimeOffset(flags, opts) && ResolveMemoryLimit(flags, opts) && ResolveRanks(flags, opts) &&
           ResolveMaxOutputBytes(flags, opts);
  }
  if (!ResolveShard(flags, opts) || !CheckRelativeTime(*opts) || !ResolveTimeWindow(flags, opts) ||
      !ResolveStepWindow(flags, opts))
    return false;
  opts->direct_io = !flags.no_direct_io;
  return ResolveTimeOffset(flags, opts) && ResolveMemoryLimit(flags, opts) && ResolveRanks(flags, opts) &&
         ResolveMaxOutputBytes(flags, opts);
}

// AlsoWritten: "; also overview.trace.json, report.html, tables.sqlite", the
// files beside the traces that this run wrote in OUTDIR (the summary counts
// only trace outputs); "" if none.
std::string AlsoWritten(const ConvertOptions& opts, const pipeline::RunSummary& s) {
  std::string names;
  auto name = [&](const std::string& file) {
    if (::access(absl::StrCat(opts.out_dir, "/", file).c_str(), F_OK) == 0)
      absl::StrAppend(&names, names.empty() ? "; also " : ", ", file);
  };
  if (!opts.shard.sharded()) name("overview.trace.json");
  if (opts.write_report && !opts.shard.sharded() && s.exit_code != pipeline::kExitInternal) name("report.html");
  if (opts.tables != pipeline::TablesMode::kOff) name(analysis::TablesFileName(opts.shard.index, opts.shard.count));
  return names;
}

// ShardNotes: what a shard's summary line adds when its own inputs do not
// tell what it did: " (1 more input read here, counted by shard 1)" after
// the input counts, when it read inputs that another shard reports (for its
// time ranges of their outputs, or to learn their output); and ", 1,208
// events written here" after the outputs, when its outputs hold another
// number of events than its own inputs had written (a time range holds
// part of an input's events, and its owner counts them all). Both "" when
// not so.
struct ShardNotes {
  std::string read, written;
};
ShardNotes ShardSummaryNotes(const InputCounts& in, const pipeline::RunSummary& s) {
  ShardNotes n;
  if (!s.shard.sharded()) return n;
  if (in.read_for_others) {
    std::string owners;
    for (int o : in.other_owners) absl::StrAppend(&owners, owners.empty() ? "" : ", ", o);
    n.read = absl::StrCat(" (", in.read_for_others, " more input", in.read_for_others == 1 ? "" : "s",
                          " read here, counted by shard", in.other_owners.size() == 1 ? " " : "s ", owners, ")");
  }
  uint64_t here = 0;
  for (const auto& o : s.outputs)
    if (!o.reused && o.error.empty()) here += o.events;
  if (here != in.events_written)
    n.written = absl::StrCat(", ", formats::GroupedCount(here), " event", here == 1 ? "" : "s", " written here");
  return n;
}

// "tracemill: N inputs (...), ... events read ...; M outputs in OUTDIR (T s);
// also report.html, ...".
void PrintConvertSummary(const ConvertOptions& opts, const pipeline::RunSummary& s) {
  const InputCounts in = CountInputs(s, /*skip_other_shards=*/true);
  const FailedOutputs failed = CountFailedOutputs(s);
  const size_t written = s.outputs.size() - failed.count;
  const ShardNotes shard = ShardSummaryNotes(in, s);
  using formats::GroupedCount;
  std::fprintf(stderr, "tracemill: %zu input%s (%d with errors), %s event%s read, %s written, %s dropped%s; %zu output%s in %s%s%s (%.2f s)%s\n",
               in.inputs, in.inputs == 1 ? "" : "s", in.with_errors, GroupedCount(in.events_read).c_str(),
               in.events_read == 1 ? "" : "s",
               GroupedCount(in.events_written).c_str(), GroupedCount(in.events_dropped).c_str(), shard.read.c_str(),
               written, written == 1 ? "" : "s", opts.out_dir.c_str(), failed.note.c_str(), shard.written.c_str(),
               s.wall_seconds, AlsoWritten(opts, s).c_str());
  for (const std::string& line : pipeline::SummaryLines(s)) std::fprintf(stderr, "tracemill: %s\n", line.c_str());
  if (opts.verbose) PrintOutputLines("tracemill", s);
}

// --quiet: no summary, but the warnings that change what the outputs mean
// (e.g. the inputs look like different runs) still reach the terminal.
void PrintQuietNotices(const pipeline::RunSummary& s) {
  for (const std::string& n : s.notices) std::fprintf(stderr, "tracemill: warning: %s\n", n.c_str());
}

// "tracemill clocks: N probes decoded; ... -> OUTDIR/clocks.json".
void PrintClocksSummary(const ConvertOptions& opts, const pipeline::RunSummary& s) {
  std::fprintf(stderr, "tracemill clocks: %zu probe%s decoded; %s -> %s/%s (%.2f s)\n", s.inputs.size(),
               s.inputs.size() == 1 ? "" : "s",
               opts.align_clocks == pipeline::AlignClocks::kOff ? "--align-clocks off, nothing solved"
               : s.clocks_json.empty()                           ? "one clock domain, nothing to align"
               : s.clocks_shift                                  ? "offsets solved"
                                                                 : "no node shifted (see the warnings)",
               opts.out_dir.c_str(),
               pipeline::kClocksFileName, s.wall_seconds);
}

}  // namespace

ConvertCommand::ConvertCommand(CLI::App* app, Mode mode)
    : mode_(mode),
      command_(mode == Mode::kConvert
                   ? app->add_subcommand("convert",
                                         "Convert per-rank trace files into merged Chrome traces (one per local "
                                         "GPU by default), plus OUTDIR/manifest.json and OUTDIR/report.html.")
                   : app->add_subcommand(
                         "clocks",
                         "First step of a sharded convert that aligns clocks: decode each node's lowest rank "
                         "once and write OUTDIR/clocks.json, which every shard of the same job (same inputs "
                         "and options) then uses instead of decoding those ranks itself. Takes convert's "
                         "options.")) {
  AddInputOutputOptions(command_, &opts_, &flags_);
  AddResourceOptions(command_, &opts_, &flags_);
  AddEventOptions(command_, &opts_, &flags_);
  AddRunOptions(command_, &opts_);
  if (mode == Mode::kConvert) AddFollowOptions(command_, &flags_);
}

int ConvertCommand::Run(const std::string& command_line) {
  if (mode_ == Mode::kClocks && flags_.shard.empty()) flags_.shard = "0/1";  // one process, whatever the environment
  if (!ResolveOptions(flags_, &opts_)) return pipeline::kExitUsage;
  opts_.progress = isatty(STDERR_FILENO) && !opts_.quiet;
  opts_.command_line = command_line;
  if (mode_ == Mode::kClocks) {
    const pipeline::RunSummary s = pipeline::RunClocks(opts_);
    if (!opts_.quiet && s.exit_code != pipeline::kExitUsage) PrintClocksSummary(opts_, s);
    return s.exit_code;
  }
  if (opts_.follow) return pipeline::RunFollow(opts_).exit_code;  // its own lines
  const pipeline::RunSummary s = pipeline::RunConvert(opts_);
  if (!opts_.quiet && s.exit_code != pipeline::kExitUsage) PrintConvertSummary(opts_, s);
  if (opts_.quiet) PrintQuietNotices(s);
  return s.exit_code;
}

}  // namespace tracemill::tools::cli
