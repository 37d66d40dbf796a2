#pragma once
// Account for a `tracemill csp` job (pipeline/csp/csp.h): the DCGM logs' rows
// (written, lost with an output, or of no output), one line per damaged or
// rejected input, the job's span, the manifest's `csp` section (parameters,
// missing ranks and DCGM logs, pipeline-marker counts per rank and output),
// then the exit status and manifest.json.
#include "pipeline/csp/csp.h"
#include "pipeline/csp/csp_inputs.h"
#include "pipeline/csp/csp_output.h"
#include "pipeline/job.h"

namespace tracemill::pipeline {

// AccountForCsp finishes `job`'s summary after every output of `outputs`
// was written, and writes the manifest into --timeline-path.
void AccountForCsp(const CspOptions& opts, const CspInputs& in, const CspShape& shape, const CspOutputs& outputs,
                   Job& job);

}  // namespace tracemill::pipeline
