#pragma once
// Account for a `tracemill csp` job (pipeline/csp/csp.h): the DCGM logs' rows
// (written, lost with an output, or of no output), one line per damaged or
// rejected input, the job's span, the manifest's `csp` section (parameters,
// missing ranks and DCGM logs, pipeline-marker counts per rank and output),
// the files of an earlier run in the folder that this one did not write
// (pipeline/output/earlier_run.h), then the exit status, manifest.json and
// report.html.
#include <string>
#include <vector>

#include "pipeline/csp/csp.h"
#include "pipeline/csp/csp_inputs.h"
#include "pipeline/csp/csp_output.h"
#include "pipeline/job.h"

namespace tracemill::pipeline {

// AccountForCsp finishes `job`'s summary after every output of `outputs`
// was written, removes the files of `earlier` (the earlier run's, listed
// before this one wrote anything) it did not write again, and writes the
// manifest and (unless opts.write_report is off) the run report into
// --timeline-path.
void AccountForCsp(const CspOptions& opts, const CspInputs& in, const CspShape& shape, const CspOutputs& outputs,
                   const std::vector<std::string>& earlier, Job& job);

}  // namespace tracemill::pipeline
