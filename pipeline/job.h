#pragma once
// Job: what every tracemill job (`convert`, `csp`) holds from its first line
// to its last: the console (stderr), the summary that becomes manifest.json,
// the cap on oneTBB's threads, and the rule that turns what happened into
// the exit status. One code path for both jobs:
//
//   Job job(...)                    installs the SIGINT/SIGTERM cleanup
//   job.UsageError(...)             a bad command line: exit 2, nothing written
//   job.StartThreads(...)           --threads, cut to what can start
//   ... the job's own stages ...
//   job.WriteManifest(out_dir, ...) exit status, wall time, manifest.json
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include <tbb/global_control.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "pipeline/console.h"
#include "pipeline/options.h"
#include "pipeline/output/manifest.h"

namespace tracemill::pipeline {

class Job {
 public:
  // `prefix` starts every line the job prints ("tracemill", "tracemill csp");
  // `show_progress`: a progress line on stderr (a TTY, not --quiet).
  Job(std::string prefix, bool show_progress, std::string command_line);
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  Console& console() { return console_; }
  RunSummary& summary() { return summary_; }
  const std::string& prefix() const { return prefix_; }

  // Say prints "<prefix>: <line>" (whole, clearing the progress line).
  void Say(absl::string_view line);

  // UsageError says `message` and sets exit 2 (kExitUsage); returns the
  // summary, for `return job.UsageError(...)`.
  RunSummary UsageError(absl::string_view message);

  // Exit sets the exit status and returns the summary.
  RunSummary Exit(int exit_code);

  // StartThreads: `requested` threads (0: the CPUs this process may use),
  // cut to as many as can start (pipeline/cpus.h; said unless `quiet`);
  // oneTBB uses at most that many until the job ends. Returns the count,
  // also in summary().threads.
  int StartThreads(int requested, bool quiet);

  // Seconds since the job started.
  double ElapsedSeconds() const;

  // WriteManifest sets the exit status from what happened (1: an output
  // could not be written, or `outputs_failed`; 3: an input this job reports
  // has an error, or `inputs_failed`; else 0) and the wall time, and writes
  // `<out_dir>/manifest.json` (pipeline/output/manifest.h). A manifest that cannot
  // be written is said and makes the exit status 1; that error is returned.
  absl::Status WriteManifest(const std::string& out_dir, bool outputs_failed, bool inputs_failed);

 private:
  const std::string prefix_;
  const std::chrono::steady_clock::time_point start_;
  Console console_;
  RunSummary summary_;
  std::optional<tbb::global_control> parallelism_;
};

}  // namespace tracemill::pipeline
