#pragma once
// The analyses' view of a job (analysis/facts.h) from the records the jobs
// keep for the manifest (pipeline/inputs/input_record.h,
// pipeline/output/manifest.h): the one place that knows both.
#include "analysis/facts.h"
#include "pipeline/inputs/input_record.h"
#include "pipeline/output/manifest.h"

namespace tracemill::pipeline {

using analysis::TablesMode;

// InputFactsOf: `r` as the tables see it (its steps copied, its first
// error's message, its drops summed over the reasons).
analysis::InputFacts InputFactsOf(const InputRecord& r);

// JobFactsOf: every input and output of `s`, and its fingerprint.
analysis::JobFacts JobFactsOf(const RunSummary& s);

}  // namespace tracemill::pipeline
