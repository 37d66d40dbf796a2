// tracemill: batch converter for distributed-training profiler traces.
// Flags -> ConvertOptions -> pipeline::RunConvert. CLI11 parses the command
// line (Debian's libcli11-dev): subcommands, --help and typed options.
#include <signal.h>
#include <simdjson.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "formats/common/time_window.h"
#include "formats/common/ts_text.h"
#include "pipeline/budget.h"
#include "pipeline/csp.h"
#include "pipeline/convert.h"
#include "pipeline/manifest_merge.h"
#include "pipeline/options.h"
#include "pipeline/shard.h"
#include "report/html_report.h"
#include "tracemill/version.h"

namespace {

constexpr const char kExitCodes[] =
    "Exit status:\n"
    "  0  every input converted\n"
    "  1  internal error, or an output could not be written\n"
    "  2  usage error (bad command line, no input file at all, -o not writable or in use)\n"
    "  3  some inputs were rejected or damaged; every other input was converted\n"
    "  130 / 143  interrupted by SIGINT / SIGTERM; no partial output left (convert: rerun with --resume)\n";

// Outputs of `s` that could not be written, and the summary line's note on
// them (", N could not be written", or "").
std::pair<size_t, std::string> FailedOutputs(const tracemill::pipeline::RunSummary& s) {
  size_t failed = 0;
  for (const auto& o : s.outputs) failed += !o.error.empty();
  return {failed, failed ? absl::StrCat(", ", failed, " could not be written") : std::string()};
}

std::string JoinArgs(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) absl::StrAppend(&s, i ? " " : "", argv[i]);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  using tracemill::pipeline::ConvertOptions;
  // Every subcommand: a file past `ulimit -f` fails its write with EFBIG (a
  // clear error, temporaries removed) instead of SIGXFSZ killing the process.
  ::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"tracemill: merge per-rank profiler traces (PyTorch profiler/Kineto, Chrome Trace "
               "Event Format, Paddle profiler protobuf, SageMaker Debugger folders, Horovod timelines, "
               "run event logs) into per-GPU Chrome traces, fast and in "
               "parallel."};
  app.footer(kExitCodes);
  app.set_version_flag("--version", std::string("tracemill ") + tracemill::kVersion);
  app.require_subcommand(1);

  ConvertOptions opts;
  std::string group_by = "local-gpu";
  CLI::App* convert = app.add_subcommand(
      "convert",
      "Convert per-rank trace files into merged Chrome traces (one per local GPU by default), "
      "plus OUTDIR/manifest.json and OUTDIR/report.html.");
  convert->add_option("inputs", opts.inputs,
                      "Input files or directories (recursed). Format is detected from content: "
                      "Trace Event Format JSON (array or object form), Paddle profiler protobuf, "
                      "run event logs (JSON Lines), gzip with any number of members.")
      ->required();
  convert->add_option("-o,--output", opts.out_dir, "Output directory (created if missing)")
      ->required();
  convert->add_option("--group-by", group_by,
                      "local-gpu: one output per local GPU g (ranks r with r % gpus-per-node == g); "
                      "rank: one per rank; node: one per node (r / gpus-per-node); all: one output")
      ->check(CLI::IsMember({"local-gpu", "rank", "node", "all"}))
      ->default_str("local-gpu");
  convert->add_option("--gpus-per-node", opts.gpus_per_node,
                      "GPUs per node (default: number of deviceProperties entries, else 8)")
      ->check(CLI::Range(1, 1 << 16).description("an integer from 1"));
  convert->add_flag("--compress", opts.compress, "Write .json.gz (multi-member gzip)");
  bool no_direct_io = false;
  convert->add_flag("--no-direct-io", no_direct_io,
                    "Write outputs through the page cache (default: O_DIRECT where the file system "
                    "takes it: outputs are written once and not read back)");
  convert->add_flag("--relative-time", opts.relative_time,
                    "Write ts as microseconds since the job's first event (base in otherData)");
  convert->add_option("--threads", opts.threads,
                      "Worker threads (default: CPUs this process may use: affinity and cgroup quota)")
      ->check(CLI::Range(1, 1 << 16).description("an integer from 1"));
  std::string memory_limit;
  convert->add_option("--memory-limit", memory_limit,
                      "Peak memory bound, e.g. 512M, 4G (default: half the cgroup memory limit, "
                      "else half the physical memory, at most 4G). Runs that do not fit spill to "
                      "--tmp-dir");
  convert->add_option("--tmp-dir", opts.tmp_dir,
                      "Directory for spill files (default: $TMPDIR, else /tmp; node-local scratch "
                      "under Slurm and Kubernetes)");
  convert->add_option("--rank-pattern", opts.rank_pattern,
                      "Regex with one capture group giving the rank from a file name, for inputs "
                      "without distributedInfo.rank (default: rank-5, rank5, rank_5, worker5, .5 suffix)");
  std::string shard_arg;
  convert->add_option("--shard", shard_arg,
                      "This process writes shard INDEX of COUNT (0-based, e.g. 0/4): a fixed share of the "
                      "outputs, balanced by input bytes; `tracemill manifest merge` joins the shard "
                      "manifests. Default: from SLURM_ARRAY_TASK_ID/_COUNT/_MIN, else SLURM_PROCID/"
                      "SLURM_NTASKS, else JOB_COMPLETION_INDEX with --shard-count or "
                      "TRACEMILL_SHARD_COUNT, else 0/1; --shard 0/1 turns detection off");
  int shard_count = 0;
  convert->add_option("--shard-count", shard_count,
                      "Shard count for a Kubernetes Indexed Job (JOB_COMPLETION_INDEX is the index)")
      ->check(CLI::Range(1, 1 << 16).description("an integer from 1"));
  convert->add_flag("--resume", opts.resume,
                    "Keep outputs an earlier (killed) run of the same job completed, checked by size "
                    "and CRC-32 against its journal or manifest, without reading their inputs; redo "
                    "the rest");
  std::string start_arg, end_arg, time_offset_arg;
  convert->add_option("--start", start_arg,
                      "Keep events that overlap the window from this time (not clipped): microseconds "
                      "since the epoch, or ISO-8601 with a zone (2020-05-26T02:45:27.873Z); dropped "
                      "events are counted as `window` in the manifest");
  convert->add_option("--end", end_arg, "End of the window (inclusive), as --start");
  int64_t start_step = -1, end_step = -1;
  convert->add_option("--start-step", start_step,
                      "Window from the start of this step (Kineto ProfilerStep#N, Paddle ProfileStep#N or "
                      "forward/backward markers, smdebug Step:ModeKeys.TRAIN step_num); an unknown step "
                      "is an error")
      ->check(CLI::NonNegativeNumber);
  convert->add_option("--end-step", end_step, "Window to the end of this step (inclusive), as --start-step")
      ->check(CLI::NonNegativeNumber);
  convert->add_option("--time-offset", time_offset_arg,
                      "Add this many microseconds (may be negative) to every input's timestamps, e.g. "
                      "to place a raw Horovod timeline (monotonic clock) on the epoch");
  convert->add_option("--low-gpu-threshold", opts.low_gpu_threshold,
                      "smdebug system metrics: GPUUtilization below this percentage is drawn as a "
                      "slice on the node's `GPU bottlenecks` track (default 85)")
      ->check(CLI::Range(0.0, 100.0));
  convert->add_flag("--no-system-metrics", opts.no_system_metrics,
                    "Skip smdebug system metrics (system/ folders and loose sample files)");
  convert->add_flag("--no-overlap", opts.no_overlap,
                    "Decode every input before writing any output (by default an output is written "
                    "as soon as its inputs are decoded, when the inputs' heads tell every output)");
  convert->add_option("--debug-write-delay-ms", opts.debug_write_delay_ms,
                      "Sleep this long per 1,000 events written (tests of interrupted runs)")
      ->group("");
  convert->add_flag("-q,--quiet", opts.quiet, "No progress line and no per-input error lines");
  convert->add_flag("-v,--verbose", opts.verbose, "Log threads, simdjson kernel and outputs");

  // `tracemill csp`: Paddle CrossStackProfiler drop-in (CspReporter.py's flags;
  // its camelCase spellings are accepted too).
  tracemill::pipeline::CspOptions csp_opts;
  std::string time_unit = "ns";
  CLI::App* csp = app.add_subcommand(
      "csp",
      "Paddle CrossStackProfiler drop-in: PROFILE_PATH/profile/<name>.<rank> (Paddle profiler "
      "protobuf) and PROFILE_PATH/dcgm/<name>.<trainer> (dcgmi dmon) -> "
      "TIMELINE_PATH/traceFile_<group>_<gpu>.json, plus manifest.json.");
  csp->footer(std::string(kExitCodes) +
              "  (csp: 3 also when a rank file of the job is missing, see manifest.json "
              "csp.missing_ranks)\n");
  csp->add_option("--profile-path,--profile_path", csp_opts.profile_path,
                  "Folder holding profile/ and (optional) dcgm/")
      ->default_str(".");
  csp->add_option("--timeline-path,--timeline_path", csp_opts.timeline_path,
                  "Output folder (created if missing)")
      ->default_str(".");
  csp->add_option("--gpus-per-trainer,--gpuPerTrainer", csp_opts.gpus_per_trainer,
                  "GPUs (ranks) per trainer")
      ->check(CLI::PositiveNumber)
      ->default_str("8");
  csp->add_option("--trainer-num,--trainerNum", csp_opts.trainer_num,
                  "Number of trainers (default: from the highest rank file)")
      ->check(CLI::Range(1, 1 << 16).description("an integer from 1"));
  csp->add_option("--group-size,--groupSize", csp_opts.group_size,
                  "Trainers per group; must divide --trainer-num (default: all trainers)")
      ->check(CLI::Range(1, 1 << 16).description("an integer from 1"));
  csp->add_option("--display-size,--displaySize", csp_opts.display_size,
                  "Trainers shown per group (trainer % group-size < display-size)")
      ->check(CLI::PositiveNumber)
      ->default_str("2");
  csp->add_option("--time-unit", time_unit,
                  "ns: nanoseconds in the ts/dur fields, as CrossStackProfiler writes them "
                  "(timelines look 1000x longer); us: true microseconds")
      ->check(CLI::IsMember({"ns", "us"}))
      ->default_str("ns");
  csp->add_option("--threads", csp_opts.threads,
                  "Worker threads (default: CPUs this process may use: affinity and cgroup quota)")
      ->check(CLI::Range(1, 1 << 16).description("an integer from 1"));
  csp->add_flag("--compress", csp_opts.compress, "Write traceFile_<g>_<n>.json.gz");
  csp->add_flag("-q,--quiet", csp_opts.quiet, "No progress line and no per-input error lines");
  csp->add_flag("-v,--verbose", csp_opts.verbose, "Log the outputs");
  std::string csp_stop_after;
  csp->add_option("--stop-after", csp_stop_after, "Benchmarking: stop after this stage (decode)")
      ->check(CLI::IsMember({"decode"}))
      ->group("");  // hidden
  CLI::App* manifest = app.add_subcommand("manifest", "Work with manifests of sharded runs");
  manifest->require_subcommand(1);
  std::string merge_dir;
  CLI::App* merge = manifest->add_subcommand(
      "merge",
      "Join the shard manifests (manifest.shard-<i>-of-<n>.json) in OUTDIR into OUTDIR/manifest.json, "
      "after checking every shard finished and no output was written twice. Exit status 1 names "
      "each missing or failed shard.");
  merge->add_option("outdir", merge_dir, "The output directory the shards wrote into")->required();
  convert->add_flag("--no-report", [&opts](int64_t) { opts.write_report = false; },
                    "Do not write OUTDIR/report.html (the HTML run report)");

  std::string report_dir;
  CLI::App* report = app.add_subcommand(
      "report",
      "Rebuild OUTDIR/report.html (the HTML run report: summary, step timeline, stragglers, dead "
      "ranks, warnings) from OUTDIR/manifest.json of a finished convert.");
  report->add_option("outdir", report_dir, "Output directory of a convert run")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return tracemill::pipeline::kExitUsage;
  }

  if (merge->parsed()) {
    tracemill::pipeline::MergeReport rep =
        tracemill::pipeline::MergeShardManifests(merge_dir, JoinArgs(argc, argv));
    for (const auto& p : rep.problems) std::fprintf(stderr, "tracemill: manifest merge: %s\n", p.c_str());
    if (rep.problems.empty())
      std::fprintf(stderr, "tracemill: manifest merge: %d shards, %zu inputs, %zu outputs -> %s/manifest.json\n",
                   rep.shard_count, rep.inputs, rep.outputs, merge_dir.c_str());
    return rep.exit_code;
  }

  if (convert->parsed()) {
    opts.group_by = *tracemill::pipeline::ParseGroupBy(group_by);
    if (!shard_arg.empty()) {
      auto spec = tracemill::pipeline::ParseShardArg(shard_arg);
      if (!spec.ok()) {
        std::fprintf(stderr, "tracemill: %s\n", std::string(spec.status().message()).c_str());
        return tracemill::pipeline::kExitUsage;
      }
      if (shard_count > 0 && shard_count != spec->count) {
        std::fprintf(stderr, "tracemill: --shard-count %d disagrees with --shard %s\n", shard_count,
                     shard_arg.c_str());
        return tracemill::pipeline::kExitUsage;
      }
      opts.shard = *spec;
    } else {
      auto spec = tracemill::pipeline::DetectShard([](const char* k) { return std::getenv(k); }, shard_count);
      if (!spec.ok()) {
        std::fprintf(stderr, "tracemill: %s\n", std::string(spec.status().message()).c_str());
        return tracemill::pipeline::kExitUsage;
      }
      opts.shard = *spec;
      if (!opts.shard.source.empty() && !opts.quiet)
        std::fprintf(stderr, "tracemill: shard %d/%d (detected from %s)\n", opts.shard.index,
                     opts.shard.count, opts.shard.source.c_str());
    }
    if (opts.relative_time && opts.shard.sharded()) {
      std::fprintf(stderr,
                   "tracemill: --relative-time needs the whole job's first event, which shard %d/%d "
                   "does not read: drop --relative-time or run unsharded (--shard 0/1)\n",
                   opts.shard.index, opts.shard.count);
      return tracemill::pipeline::kExitUsage;
    }
    for (auto [arg, flag, out] : {std::tuple{&start_arg, "--start", &opts.window_start_ns},
                                  std::tuple{&end_arg, "--end", &opts.window_end_ns}}) {
      if (arg->empty()) continue;
      auto ns = tracemill::formats::ParseTimeArg(*arg);
      if (!ns.ok()) {
        std::fprintf(stderr, "tracemill: %s: %s\n", flag, std::string(ns.status().message()).c_str());
        return tracemill::pipeline::kExitUsage;
      }
      *out = *ns;
    }
    if (opts.window_start_ns && opts.window_end_ns && *opts.window_end_ns < *opts.window_start_ns) {
      std::fprintf(stderr, "tracemill: --end is before --start\n");
      return tracemill::pipeline::kExitUsage;
    }
    if (start_step >= 0) opts.start_step = start_step;
    if (end_step >= 0) opts.end_step = end_step;
    if ((opts.start_step || opts.end_step) && opts.shard.sharded()) {
      std::fprintf(stderr,
                   "tracemill: --start-step/--end-step need every input's step markers, which shard %d/%d "
                   "does not read: pass --start/--end, or run unsharded (--shard 0/1)\n",
                   opts.shard.index, opts.shard.count);
      return tracemill::pipeline::kExitUsage;
    }
    opts.direct_io = !no_direct_io;
    if (!time_offset_arg.empty()) {
      auto ns = tracemill::formats::ParseMicrosToNanos(time_offset_arg);
      // Held to the range of timestamps (+-2^62 ns), so that ts + offset fits.
      if (!ns || !tracemill::formats::InTimeRange(*ns)) {
        std::fprintf(stderr,
                     "tracemill: --time-offset %s: expected decimal microseconds within "
                     "+-4611686018427387.903\n",
                     time_offset_arg.c_str());
        return tracemill::pipeline::kExitUsage;
      }
      opts.time_offset_ns = *ns;
    }
    if (!memory_limit.empty()) {
      auto bytes = tracemill::pipeline::ParseBytes(memory_limit);
      if (!bytes || *bytes < (16u << 20)) {
        std::fprintf(stderr, "tracemill: --memory-limit %s: expected a size like 512M or 4G (at least 16M)\n",
                     memory_limit.c_str());
        return tracemill::pipeline::kExitUsage;
      }
      opts.memory_limit = *bytes;
    }
    opts.progress = isatty(STDERR_FILENO) && !opts.quiet;
    opts.command_line = JoinArgs(argc, argv);
    tracemill::pipeline::RunSummary s = tracemill::pipeline::RunConvert(opts);
    if (!opts.quiet && s.exit_code != tracemill::pipeline::kExitUsage) {
      uint64_t read = 0, written = 0, dropped = 0;
      int bad = 0;
      size_t listed = 0;
      for (const auto& r : s.inputs) {
        if (r.owner_shard >= 0) continue;  // another shard reports it
        ++listed;
        read += r.events_read;
        written += r.events_written;
        dropped += r.dropped.Total();
        bad += !r.status.ok();
      }
      const auto [failed, not_written] = FailedOutputs(s);
      std::fprintf(stderr,
                   "tracemill: %zu input%s (%d with errors), %llu events read, %llu written, %llu "
                   "dropped; %zu output%s in %s%s (%.2f s)\n",
                   listed, listed == 1 ? "" : "s", bad, static_cast<unsigned long long>(read),
                   static_cast<unsigned long long>(written), static_cast<unsigned long long>(dropped),
                   s.outputs.size() - failed, s.outputs.size() - failed == 1 ? "" : "s",
                   opts.out_dir.c_str(), not_written.c_str(), s.wall_seconds);
      if (opts.verbose)
        for (const auto& o : s.outputs)
          std::fprintf(stderr, "tracemill:   %s: %llu events, %llu bytes\n", o.path.c_str(),
                       static_cast<unsigned long long>(o.events),
                       static_cast<unsigned long long>(o.bytes));
    }
    return s.exit_code;
  }
  if (csp->parsed()) {
    csp_opts.unit = time_unit == "us" ? tracemill::formats::CspTimeUnit::kMicros
                                      : tracemill::formats::CspTimeUnit::kReferenceNs;
    csp_opts.progress = isatty(STDERR_FILENO) && !csp_opts.quiet;
    csp_opts.stop_after_decode = csp_stop_after == "decode";
    csp_opts.command_line = JoinArgs(argc, argv);
    tracemill::pipeline::RunSummary s = tracemill::pipeline::RunCsp(csp_opts);
    if (!csp_opts.quiet && s.exit_code != tracemill::pipeline::kExitUsage) {
      uint64_t read = 0, written = 0, dropped = 0;
      int bad = 0;
      for (const auto& r : s.inputs) {
        read += r.events_read;
        written += r.events_written;
        dropped += r.dropped.Total();
        bad += !r.status.ok();
      }
      const auto [failed, not_written] = FailedOutputs(s);
      std::fprintf(stderr,
                   "tracemill csp: %zu inputs (%d with errors), %llu events read, %llu written, "
                   "%llu dropped or not displayed; %zu outputs in %s%s (%.2f s)\n",
                   s.inputs.size(), bad, static_cast<unsigned long long>(read),
                   static_cast<unsigned long long>(written),
                   static_cast<unsigned long long>(dropped), s.outputs.size() - failed,
                   csp_opts.timeline_path.c_str(), not_written.c_str(), s.wall_seconds);
      if (csp_opts.verbose)
        for (const auto& o : s.outputs)
          std::fprintf(stderr, "tracemill csp:   %s: %llu events, %llu bytes\n", o.path.c_str(),
                       static_cast<unsigned long long>(o.events),
                       static_cast<unsigned long long>(o.bytes));
    }
    return s.exit_code;
  }
  if (report->parsed()) {
    absl::Status st = tracemill::report::WriteReport(report_dir);
    if (!st.ok()) {
      std::fprintf(stderr, "tracemill: report: %s\n", std::string(st.message()).c_str());
      // No manifest there, or not one of ours: the OUTDIR given is wrong (usage).
      return absl::IsNotFound(st) || absl::IsInvalidArgument(st) ? tracemill::pipeline::kExitUsage
                                                                  : tracemill::pipeline::kExitInternal;
    }
    std::fprintf(stderr, "tracemill: wrote %s/report.html\n", report_dir.c_str());
    return tracemill::pipeline::kExitOk;
  }
  return tracemill::pipeline::kExitUsage;
}
