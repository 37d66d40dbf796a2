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
#include "pipeline/graph.h"
#include "pipeline/options.h"
#include "report/html_report.h"
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
               "Event Format) into per-GPU Chrome traces, fast and in parallel."};
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
                      "Trace Event Format JSON (array or object form), run event logs (JSON "
                      "Lines), gzip with any number of members.")
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
  convert->add_flag("--no-report", [&opts](int64_t) { opts.write_report = false; },
                    "Do not write OUTDIR/report.html (the HTML run report)");
  convert->add_flag("-q,--quiet", opts.quiet, "No progress line and no per-input error lines");
  convert->add_flag("-v,--verbose", opts.verbose, "Log threads, simdjson kernel and outputs");

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
  if (report->parsed()) {
    absl::Status st = tracemill::report::WriteReport(report_dir);
    if (!st.ok()) {
      std::fprintf(stderr, "tracemill: report: %s\n", std::string(st.message()).c_str());
      return tracemill::pipeline::kExitInternal;
    }
    std::fprintf(stderr, "tracemill: wrote %s/report.html\n", report_dir.c_str());
    return tracemill::pipeline::kExitOk;
  }
  return tracemill::pipeline::kExitUsage;
}
