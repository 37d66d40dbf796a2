#pragma once
// `tracemill manifest merge OUTDIR`: the shard manifests of a sharded run ->
// the job's OUTDIR/manifest.json.
//
// Checks, each named in `problems` when it fails:
// - every shard 0..n-1 of the count found (manifest.shard-<i>-of-<n>.json)
//   has a manifest; a shard without one is "missing", and if its journal is
//   there it was killed or is still running (rerun it with --resume);
// - every shard finished: its manifest records exit status 0 (or 3: some
//   inputs rejected, the rest converted); 1 is a failed shard;
// - all shards ran the same job (same fingerprint, input count, grouping);
// - no output was written by two shards, and every input of the job is
//   reported by exactly one shard (an input a shard decoded for nothing,
//   listed with `owner_shard`, is not counted again).
// Only if all pass is manifest.json written: the inputs in job order, the
// outputs in output order, totals recomputed, one line per shard in `shards`;
// then report.html from it, as convert and `tracemill report` write it (a
// report that cannot be written is exit status 1, the manifest kept).
#include <string>
#include <vector>

namespace tracemill::pipeline {

struct MergeReport {
  // 0: merged; 3: merged, but some inputs were rejected or damaged;
  // 1: not merged, or merged without tables.sqlite (a shard's file missing
  // or damaged: the manifest's `tables` member has the error) (`problems`
  // says why); 2: usage (no shard manifests).
  int exit_code = 0;
  std::vector<std::string> problems;  // one line each
  int shard_count = 0;
  size_t outputs = 0;
  size_t inputs = 0;             // files skipped as no trace not counted
  bool manifest_written = false;  // OUTDIR/manifest.json
  bool report_written = false;  // OUTDIR/report.html
};

// MergeShardManifests merges the shard manifests in `out_dir` into
// `out_dir`/manifest.json (temporary + rename), then writes
// `out_dir`/report.html unless `write_report` is false. `command_line` is
// recorded.
MergeReport MergeShardManifests(const std::string& out_dir, const std::string& command_line,
                                bool write_report = true);

}  // namespace tracemill::pipeline
