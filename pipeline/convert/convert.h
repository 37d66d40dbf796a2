#pragma once
// `tracemill convert`: per-rank profiler files -> merged Chrome traces, one
// per output group, plus manifest.json and report.html. RunConvert reads as
// its list of stages (pipeline/README.md draws them):
//
//   1. output directory   output_dir.h   create, check, lock OUTDIR
//   2. inputs             inputs.h       expand paths, classify, group smdebug nodes
//   3. plan               plan.h         pre-scan heads, outputs and shards;
//                         resume.h       --resume, the journal; stale files
//   4. decode and sort    decode_stage.h schedule (budget, overlap, order), then per input:
//                                        read, inflate, recognize (formats/registry.h), decode, sort
//   5. group and place    output_groups.h decoded rank -> output; ready outputs
//   6. merge and write    write_output.h k-way merge per output, in parallel
//                         graph.h        steps 4-6 as one oneTBB flow graph
//   7. account            account.h      manifest, journal, report
//
// The stages share a ConvertContext (convert_context.h): options, the job
// (console, summary, threads: job.h), the input records and the plan.
#include "pipeline/options.h"
#include "pipeline/output/manifest.h"

namespace tracemill::pipeline {

// RunConvert runs the whole job and returns its summary; `summary.exit_code`
// follows ExitCode. Never throws; per-input problems are recorded in the
// summary and reported on stderr (one line each) unless `opts.quiet`.
RunSummary RunConvert(const ConvertOptions& opts);

}  // namespace tracemill::pipeline
