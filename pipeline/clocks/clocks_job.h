#pragma once
// `tracemill clocks`: the first step of a sharded job that aligns clocks.
//
// Every process of a job must apply the same clock offsets (pipeline/
// clocks.h), so each shard of a sharded convert decodes every node's probe
// (its lowest rank), including the ones it does not write. At scale that is
// most of a shard's work (4,096 ranks on 8 GPUs per node: 512 probes beside
// a shard's own 64 ranks). `tracemill clocks` decodes the probes once, with
// the same inputs and options as the convert job it prepares, and writes
// OUTDIR/clocks.json (the solved offsets and the probes' collective
// digests); a shard finds it there, checks it was written for its job (the
// inputs' paths, sizes and mtimes, --gpus-per-node, --rank-pattern,
// --time-offset, --align-clocks) and decodes only its own inputs. The
// outputs are byte-identical either way.
//
//   srun -n1 tracemill clocks /data/job -o /out         # or a Kubernetes init Job
//   sbatch --array=0-63 --dependency=afterok:$first convert.sh
#include "pipeline/options.h"
#include "pipeline/output/manifest.h"

namespace tracemill::pipeline {

// RunClocks plans the job of `opts` as convert does, decodes its clock
// probes and writes `<opts.out_dir>/clocks.json`. The summary holds the
// probes' records and the clocks section; exit status: 0, 1 (clocks.json
// could not be written), 2 (usage), 3 (a probe could not be decoded).
RunSummary RunClocks(const ConvertOptions& opts);

// The file `tracemill clocks` writes and a convert job looks for in OUTDIR.
inline constexpr char kClocksFileName[] = "clocks.json";

}  // namespace tracemill::pipeline
