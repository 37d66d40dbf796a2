#pragma once
// The convert job: inputs -> decoded, sorted runs -> merged outputs + manifest.
//
//   input_node (files, largest first)
//     -> limiter_node (at most 2 x threads inputs in flight)
//     -> function_node DecodeAndSort (unlimited: read, inflate, decode, sort)
//   then, once every input's rank is known (it may sit at the end of a file):
//   function_node MergeAndWrite per output group (in parallel)
//   then the manifest.
#include "pipeline/manifest.h"
#include "pipeline/options.h"

namespace tracemill::pipeline {

// RunConvert runs the whole job and returns its summary; `summary.exit_code`
// follows ExitCode. Never throws; per-input problems are recorded in the
// summary and reported on stderr (one line each) unless `opts.quiet`.
RunSummary RunConvert(const ConvertOptions& opts);

}  // namespace tracemill::pipeline
