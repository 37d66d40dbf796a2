#include "tools/cli/manifest_merge_command.h"

#include <cstdio>

#include "absl/strings/str_cat.h"

#include "pipeline/output/manifest_merge.h"

namespace tracemill::tools::cli {

ManifestMergeCommand::ManifestMergeCommand(CLI::App* app) {
  CLI::App* manifest = app->add_subcommand("manifest", "Work with manifests of sharded runs");
  manifest->require_subcommand(1);
  // Not convert's table (CLI11 copies the parent's footer into a subcommand).
  static constexpr char kMergeExitCodesHelp[] =
      "Exit status:\n"
      "  0  manifest.json written; every input converted\n"
      "  1  a shard is missing or failed, or tables.sqlite or report.html could not be written\n"
      "  2  usage error (bad command line, OUTDIR holds no shard manifests or is in use)\n"
      "  3  manifest.json written; some inputs were rejected or damaged\n";
  manifest->footer(kMergeExitCodesHelp);
  merge_ = manifest->add_subcommand(
      "merge",
      "Join the shard manifests (manifest.shard-<i>-of-<n>.json) in OUTDIR into OUTDIR/manifest.json, "
      "after checking every shard finished and no output was written twice, then write "
      "OUTDIR/report.html from it (as convert does). Exit status 1 names each missing or failed "
      "shard, or says tables.sqlite (a shard's file missing or damaged: the manifest is still written, "
      "its `tables` member says why) or the report could not be written.");
  merge_->add_option("outdir", out_dir_, "The output directory the shards wrote into")->required();
  merge_->footer(kMergeExitCodesHelp);
  merge_->add_flag("--no-report", no_report_, "Do not write OUTDIR/report.html (`tracemill report OUTDIR` writes it later)");
}

int ManifestMergeCommand::Run(const std::string& command_line) {
  const pipeline::MergeReport rep = pipeline::MergeShardManifests(out_dir_, command_line, !no_report_);
  for (const auto& p : rep.problems) std::fprintf(stderr, "tracemill: manifest merge: %s\n", p.c_str());
  if (rep.manifest_written)
    std::fprintf(stderr, "tracemill: manifest merge: %d shard%s, %zu input%s, %zu output%s -> %s/manifest.json%s\n",
                 rep.shard_count, rep.shard_count == 1 ? "" : "s", rep.inputs, rep.inputs == 1 ? "" : "s",
                 rep.outputs, rep.outputs == 1 ? "" : "s", out_dir_.c_str(),
                 rep.report_written ? absl::StrCat(", ", out_dir_, "/report.html").c_str() : "");
  return rep.exit_code;
}

}  // namespace tracemill::tools::cli
