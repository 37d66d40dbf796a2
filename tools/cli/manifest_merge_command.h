#pragma once
// `tracemill manifest merge OUTDIR`: joins the shard manifests of a sharded
// run (pipeline::MergeShardManifests) and reports on stderr.
#include <CLI/CLI.hpp>
#include <string>

namespace tracemill::tools::cli {

// ManifestMergeCommand adds `manifest` and its `merge` subcommand to an app
// and runs the merge.
class ManifestMergeCommand {
 public:
  // Adds `manifest merge OUTDIR` to `app`, which must outlive this object.
  explicit ManifestMergeCommand(CLI::App* app);
  ManifestMergeCommand(const ManifestMergeCommand&) = delete;  // CLI11 holds pointers into it
  ManifestMergeCommand& operator=(const ManifestMergeCommand&) = delete;

  // True if the command line named `manifest merge`.
  bool parsed() const { return merge_->parsed(); }

  // Merges, recording `command_line` in OUTDIR/manifest.json, and writes
  // OUTDIR/report.html (unless --no-report). Prints each problem as
  // "tracemill: manifest merge: ..." or, if there is none, one line with the
  // counts and the files written. Returns MergeReport::exit_code (0, 1, 2 or 3).
  int Run(const std::string& command_line);

 private:
  CLI::App* merge_ = nullptr;
  std::string out_dir_;
  bool no_report_ = false;
};

}  // namespace tracemill::tools::cli
