// tracemill: batch converter for distributed-training profiler traces.
// Flags -> ConvertOptions -> pipeline::RunConvert. CLI11 parses the command
// line (Debian's libcli11-dev): subcommands, --help and typed options.
#include <simdjson.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "pipeline/budget.h"
#include "pipeline/csp.h"
#include "pipeline/graph.h"
#include "pipeline/options.h"
#include "tracemill/version.h"

namespace {

constexpr const char kExitCodes[] =
    "Exit status:\n"
    "  0  every input converted\n"
    "  1  internal error, or an output could not be written\n"
    "  2  usage error (bad command line)\n"
    "  3  some inputs were rejected or damaged; every other input was converted\n";

std::string JoinArgs(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) absl::StrAppend(&s, i ? " " : "", argv[i]);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  using tracemill::pipeline::ConvertOptions;
  CLI::App app{"tracemill: merge per-rank profiler traces (PyTorch profiler/Kineto, Chrome Trace "
               "Event Format, Paddle profiler protobuf) into per-GPU Chrome traces, fast and in "
               "parallel."};
  app.footer(kExitCodes);
  app.set_version_flag("--version", std::string("tracemill ") + tracemill::kVersion);
  app.require_subcommand(1);

  ConvertOptions opts;
  std::string group_by = "local-gpu";
  CLI::App* convert = app.add_subcommand(
      "convert",
      "Convert per-rank trace files into merged Chrome traces (one per local GPU by default), "
      "plus OUTDIR/manifest.json.");
  convert->add_option("inputs", opts.inputs,
                      "Input files or directories (recursed). Format is detected from content: "
                      "Trace Event Format JSON (array or object form), Paddle profiler protobuf, "
                      "gzip with any number of members.")
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
      ->check(CLI::PositiveNumber);
  convert->add_flag("--compress", opts.compress, "Write .json.gz (multi-member gzip)");
  convert->add_flag("--relative-time", opts.relative_time,
                    "Write ts as microseconds since the job's first event (base in otherData)");
  convert->add_option("--threads", opts.threads,
                      "Worker threads (default: CPUs this process may use: affinity and cgroup quota)")
      ->check(CLI::PositiveNumber);
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
                      "without distributedInfo.rank (default: rank-5, rank5, worker5, .5 suffix)");
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
      ->check(CLI::PositiveNumber);
  csp->add_option("--group-size,--groupSize", csp_opts.group_size,
                  "Trainers per group; must divide --trainer-num (default: all trainers)")
      ->check(CLI::PositiveNumber);
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
      ->check(CLI::PositiveNumber);
  csp->add_flag("--compress", csp_opts.compress, "Write traceFile_<g>_<n>.json.gz");
  csp->add_flag("-q,--quiet", csp_opts.quiet, "No progress line and no per-input error lines");
  csp->add_flag("-v,--verbose", csp_opts.verbose, "Log the outputs");
  std::string csp_stop_after;
  csp->add_option("--stop-after", csp_stop_after, "Benchmarking: stop after this stage (decode)")
      ->check(CLI::IsMember({"decode"}))
      ->group("");  // hidden

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

  if (convert->parsed()) {
    opts.group_by = *tracemill::pipeline::ParseGroupBy(group_by);
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
      for (const auto& r : s.inputs) {
        read += r.events_read;
        written += r.events_written;
        dropped += r.dropped.Total();
        bad += !r.status.ok();
      }
      std::fprintf(stderr,
                   "tracemill: %zu inputs (%d with errors), %llu events read, %llu written, %llu "
                   "dropped; %zu outputs in %s (%.2f s)\n",
                   s.inputs.size(), bad, static_cast<unsigned long long>(read),
                   static_cast<unsigned long long>(written), static_cast<unsigned long long>(dropped),
                   s.outputs.size(), opts.out_dir.c_str(), s.wall_seconds);
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
      std::fprintf(stderr,
                   "tracemill csp: %zu inputs (%d with errors), %llu events read, %llu written, "
                   "%llu dropped or not displayed; %zu outputs in %s (%.2f s)\n",
                   s.inputs.size(), bad, static_cast<unsigned long long>(read),
                   static_cast<unsigned long long>(written),
                   static_cast<unsigned long long>(dropped), s.outputs.size(),
                   csp_opts.timeline_path.c_str(), s.wall_seconds);
      if (csp_opts.verbose)
        for (const auto& o : s.outputs)
          std::fprintf(stderr, "tracemill csp:   %s: %llu events, %llu bytes\n", o.path.c_str(),
                       static_cast<unsigned long long>(o.events),
                       static_cast<unsigned long long>(o.bytes));
    }
    return s.exit_code;
  }
  return tracemill::pipeline::kExitUsage;
}
