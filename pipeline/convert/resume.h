#pragma once
// --resume: the outputs an earlier run of the same job completed, kept
// without reading their inputs, and the journal that lets a killed run be
// resumed (pipeline/journal.h). Part of the convert job's plan stage: after
// the pre-scan (the job's fingerprint), before the decode.
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "pipeline/inputs/input_record.h"
#include "pipeline/job.h"
#include "pipeline/journal.h"
#include "pipeline/options.h"
#include "pipeline/plan.h"

namespace tracemill::pipeline {

// ResumeState: outputs of an earlier run of this job that are complete.
struct ResumeState {
  std::vector<CompletedOutput> outputs;
  std::map<std::string, size_t> input_of_path;  // carried input path -> index in records
  std::string note;                             // one line for stderr
  std::set<std::string> carried_outputs;        // names of `outputs`
  std::unique_ptr<Journal> journal;             // this run's (null if it cannot be written)
  std::string clocks_json;                      // the earlier manifest's clocks section, if any
  std::map<int64_t, std::string> overview_blocks;  // carried inputs' overview blocks, by pid (index + 1)
};

// InputPathsOf: the paths of the inputs of completed output `c`: those it
// reports, or (a time range's file, which reports some or none) its output
// record's list.
std::vector<std::string> InputPathsOf(const CompletedOutput& c);

// LoadResume reads OUTDIR's manifest (a completed earlier run) and journal (a
// killed one) of this shard and keeps the outputs this shard owns whose file
// has the recorded size and CRC-32, and whose inputs are still planned to
// them. With --time-ranges, an output's range files that this shard writes
// are kept all or none.
ResumeState LoadResume(const ConvertOptions& opts, const JobPlan& plan,
                       const std::vector<InputRecord>& records);

// ResumeOrStartOver: with --resume, LoadResume (its note said unless
// quiet); then the journal starts over with what was carried, and the
// manifest of an earlier run goes (a manifest present means a finished
// run), as does a merged job manifest when a shard runs again.
// `keep` (may be empty) may refuse a completed output, which is then redone
// (--tables: an output whose inputs' rows the earlier tables.sqlite lacks).
ResumeState ResumeOrStartOver(const ConvertOptions& opts, const JobPlan& plan,
                              const std::vector<InputRecord>& records, Job& job,
                              const std::function<bool(const CompletedOutput&)>& keep = {});

}  // namespace tracemill::pipeline
