#pragma once
// The plan stage of a convert job (pipeline/convert/convert.h, step 3), shared with
// `tracemill clocks` (pipeline/clocks/clocks_job.h).
#include "pipeline/convert/convert_context.h"
#include "pipeline/convert/resume.h"

namespace tracemill::pipeline {

// PlanJob: the pre-scan of every input's head and the plan of outputs and
// shards (plan.h), identical in every shard, into `cx.plan` and the summary.
void PlanJob(ConvertContext& cx);

// RemoveOwnStaleFiles removes the stale files this run owns (output_dir.h): in
// a shard only its own outputs' temporaries, manifest and journal (the other
// shards may be writing theirs into OUTDIR now); in a whole job every
// temporary and an earlier sharded job's shard manifests and journals.
void RemoveOwnStaleFiles(const ConvertContext& cx);

// ChooseInputsToRead fills `cx.read`: the inputs planned to this shard's
// outputs, every undetermined one, and (shard 0) those that are no trace at
// all; not those of outputs carried over by --resume. Clock probes this
// process would not read are read for their collectives only
// (`cx.clock_only`), unless nothing is left to write. Says the plan with
// --verbose, or in a shard.
void ChooseInputsToRead(ConvertContext& cx, const ResumeState& resume);

}  // namespace tracemill::pipeline
