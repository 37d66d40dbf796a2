#include "tools/cli/csp_command.h"

#include <unistd.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "formats/common/stats.h"
#include "pipeline/job_notes.h"
#include "pipeline/options.h"
#include "tools/cli/run_summary_lines.h"

namespace tracemill::tools::cli {
namespace {

// csp's exit statuses (convert's, in csp's words: no -o, no --resume).
constexpr char kCspExitCodesHelp[] =
    "Exit status:\n"
    "  0  every rank of the job converted\n"
    "  1  internal error, or an output could not be written\n"
    "  2  usage error (bad command line, no profile file at all, --timeline-path not writable or in use)\n"
    "  3  some inputs were rejected or damaged, or a rank of the job has no profile file (manifest.json\n"
    "     csp.missing_ranks); everything else was converted\n"
    "  130 / 143  interrupted by SIGINT / SIGTERM; no partial output left\n";

// The options that say where the job is and how it is laid out.
void AddCspJobOptions(CLI::App* c, pipeline::CspOptions* opts) {
  c->add_option("--profile-path,--profile_path", opts->profile_path,
                "Folder holding profile/ and (optional) dcgm/")
      ->default_str(".");
  c->add_option("--timeline-path,--timeline_path", opts->timeline_path, "Output folder (created if missing)")
      ->default_str(".");
  c->add_option("--gpus-per-trainer,--gpuPerTrainer", opts->gpus_per_trainer, "GPUs (ranks) per trainer")
      ->check(CLI::Range(1, 1 << 16).description("an integer from 1"))
      ->default_str("8");
  c->add_option("--trainer-num,--trainerNum", opts->trainer_num,
                "Number of trainers (default: from the highest rank file)")
      ->check(CLI::Range(1, 1 << 16).description("an integer from 1"));
  c->add_option("--group-size,--groupSize", opts->group_size,
                "Trainers per group; must divide --trainer-num (default: all trainers)")
      ->check(CLI::Range(1, 1 << 16).description("an integer from 1"));
  c->add_option("--display-size,--displaySize", opts->display_size,
                "Trainers shown per group (trainer % group-size < display-size)")
      ->check(CLI::Range(1, 1 << 16).description("an integer from 1"))
      ->default_str("2");
}

// The options that say how to write and run.
void AddCspRunOptions(CLI::App* c, pipeline::CspOptions* opts, std::string* time_unit,
                   std::string* stop_after) {
  c->add_option("--time-unit", *time_unit,
                "ns: nanoseconds in the ts/dur fields, as CrossStackProfiler writes them "
                "(timelines look 1000x longer); us: true microseconds")
      ->check(CLI::IsMember({"ns", "us"}))
      ->default_str("ns");
  c->add_option("--threads", opts->threads,
                "Worker threads (default: CPUs this process may use: affinity and cgroup quota)")
      ->check(CLI::Range(1, 1 << 16).description("an integer from 1"));
  c->add_flag("--compress", opts->compress, "Write traceFile_<g>_<n>.json.gz");
  c->add_flag("--no-report", [opts](int64_t) { opts->write_report = false; },
              "Do not write TIMELINE_PATH/report.html (the HTML run report)");
  c->add_flag("-q,--quiet", opts->quiet, "No progress line and no per-input error lines");
  c->add_flag("-v,--verbose", opts->verbose, "Log the outputs");
  c->add_option("--stop-after", *stop_after, "Benchmarking: stop after this stage (decode)")
      ->check(CLI::IsMember({"decode"}))
      ->group("");  // hidden
}

// "tracemill csp: N inputs (...), ...; M outputs in TIMELINE_PATH (T s)".
void PrintCspSummary(const pipeline::CspOptions& opts, const pipeline::RunSummary& s) {
  const InputCounts in = CountInputs(s, /*skip_other_shards=*/false);
  const FailedOutputs failed = CountFailedOutputs(s);
  using formats::GroupedCount;
  const std::string missing =
      s.ranks_missing ? absl::StrCat(", ", s.ranks_missing, " rank", s.ranks_missing == 1 ? "" : "s", " missing") : "";
  const bool report = opts.write_report && s.exit_code != pipeline::kExitInternal &&
                      ::access(absl::StrCat(opts.timeline_path, "/report.html").c_str(), F_OK) == 0;
  const std::string also = report ? "; also report.html" : "";
  std::fprintf(stderr,
               "tracemill csp: %s (%d with errors)%s, %s events read, %s written, %s dropped or not displayed; "
               "%s in %s%s (%.2f s)%s\n",
               formats::Counted(in.inputs, "input").c_str(), in.with_errors, missing.c_str(),
               GroupedCount(in.events_read).c_str(), GroupedCount(in.events_written).c_str(),
               GroupedCount(in.events_dropped).c_str(), formats::Counted(s.outputs.size() - failed.count, "output").c_str(),
               opts.timeline_path.c_str(), failed.note.c_str(), s.wall_seconds, also.c_str());
  for (const std::string& line : pipeline::SummaryLines(s)) std::fprintf(stderr, "tracemill csp: %s\n", line.c_str());
  if (opts.verbose) PrintOutputLines("tracemill csp", s);
}

}  // namespace

CspCommand::CspCommand(CLI::App* app)
    : command_(app->add_subcommand(
          "csp",
          "Paddle CrossStackProfiler drop-in: PROFILE_PATH/profile/<name>.<rank> (Paddle profiler "
          "protobuf) and PROFILE_PATH/dcgm/<name>.<trainer> (dcgmi dmon) -> "
          "TIMELINE_PATH/traceFile_<group>_<gpu>.json, plus manifest.json and report.html.")) {
  command_->footer(kCspExitCodesHelp);
  AddCspJobOptions(command_, &opts_);
  AddCspRunOptions(command_, &opts_, &time_unit_, &stop_after_);
}

int CspCommand::Run(const std::string& command_line) {
  opts_.unit = time_unit_ == "us" ? formats::CspTimeUnit::kMicros : formats::CspTimeUnit::kReferenceNs;
  opts_.progress = isatty(STDERR_FILENO) && !opts_.quiet;
  opts_.stop_after_decode = stop_after_ == "decode";
  opts_.command_line = command_line;
  const pipeline::RunSummary s = pipeline::RunCsp(opts_);
  if (s.exit_code == pipeline::kExitUsage) return s.exit_code;
  if (!opts_.quiet) PrintCspSummary(opts_, s);
  else  // what changes the meaning of the outputs reaches the terminal even so
    for (const std::string& n : s.notices) std::fprintf(stderr, "tracemill csp: warning: %s\n", n.c_str());
  return s.exit_code;
}

}  // namespace tracemill::tools::cli
