#include "pipeline/job.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "formats/common/cleanup.h"
#include "formats/common/status_macros.h"
#include "pipeline/cpus.h"

namespace tracemill::pipeline {

Job::Job(std::string prefix, bool show_progress, std::string command_line)
    : prefix_(std::move(prefix)), start_(std::chrono::steady_clock::now()), console_(show_progress) {
  summary_.command_line = std::move(command_line);
  // SIGINT/SIGTERM (Slurm's time limit, a pod's deletion, Ctrl-C) remove the
  // outputs' temporaries and exit 130/143.
  formats::InstallInterruptCleanup();
}

void Job::Say(absl::string_view line) { console_.Line(absl::StrCat(prefix_, ": ", line)); }

RunSummary Job::UsageError(absl::string_view message) {
  Say(message);
  return Exit(kExitUsage);
}

RunSummary Job::Exit(int exit_code) {
  summary_.exit_code = exit_code;
  return summary_;
}

int Job::StartThreads(int requested, bool quiet) {
  std::string note;
  const int threads = ThreadsToUse(requested, &note);
  if (!note.empty() && !quiet) Say(note);
  summary_.threads = threads;
  parallelism_.emplace(tbb::global_control::max_allowed_parallelism, threads);
  return threads;
}

double Job::ElapsedSeconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

absl::Status Job::WriteManifest(const std::string& out_dir, bool outputs_failed, bool inputs_failed) {
  for (const auto& out : summary_.outputs) outputs_failed |= !out.error.empty();
  for (const auto& r : summary_.inputs) inputs_failed |= r.owner_shard < 0 && !r.status.ok();
  summary_.exit_code = outputs_failed ? kExitInternal : inputs_failed ? kExitSomeRejected : kExitOk;
  summary_.wall_seconds = ElapsedSeconds();
  absl::Status st = pipeline::WriteManifest(out_dir, summary_);
  if (!st.ok()) {
    Say(absl::StrCat("cannot write manifest: ", st.message()));
    summary_.exit_code = kExitInternal;
  }
  return st;
}

}  // namespace tracemill::pipeline
