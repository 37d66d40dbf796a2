#include "tools/cli/manifest_merge_command.h"

#include <cstdio>

#include "pipeline/manifest_merge.h"

namespace tracemill::tools::cli {

ManifestMergeCommand::ManifestMergeCommand(CLI::App* app) {
  CLI::App* manifest = app->add_subcommand("manifest", "Work with manifests of sharded runs");
  manifest->require_subcommand(1);
  merge_ = manifest->add_subcommand(
      "merge",
      "Join the shard manifests (manifest.shard-<i>-of-<n>.json) in OUTDIR into OUTDIR/manifest.json, "
      "after checking every shard finished and no output was written twice. Exit status 1 names "
      "each missing or failed shard.");
  merge_->add_option("outdir", out_dir_, "The output directory the shards wrote into")->required();
}

int ManifestMergeCommand::Run(const std::string& command_line) {
  const pipeline::MergeReport rep = pipeline::MergeShardManifests(out_dir_, command_line);
  for (const auto& p : rep.problems) std::fprintf(stderr, "tracemill: manifest merge: %s\n", p.c_str());
  if (rep.problems.empty())
    std::fprintf(stderr, "tracemill: manifest merge: %d shards, %zu inputs, %zu outputs -> %s/manifest.json\n",
                 rep.shard_count, rep.inputs, rep.outputs, out_dir_.c_str());
  return rep.exit_code;
}

}  // namespace tracemill::tools::cli
