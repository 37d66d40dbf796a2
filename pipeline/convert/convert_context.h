#pragma once
// ConvertContext: what the stages of one convert job share (pipeline/
// convert.h): the options, the job (console, summary), the input records
// that every stage adds to, the plan, the threads and which inputs this
// process reads. Built by RunConvert stage by stage; passed by reference.
#include <cstddef>
#include <string>
#include <vector>

#include "analysis/collectives.h"
#include "pipeline/inputs/input_record.h"
#include "pipeline/inputs/rank_name.h"
#include "pipeline/job.h"
#include "pipeline/options.h"
#include "pipeline/plan.h"

namespace tracemill::pipeline {

class ClockAlignment;

struct ConvertContext {
  ConvertContext(const ConvertOptions& o, Job& j, const RankMatcher& r) : opts(o), job(j), ranks(r) {}

  const ConvertOptions& opts;
  Job& job;
  const RankMatcher& ranks;
  std::vector<InputRecord> records;  // one per input, in input order (index = position)
  JobPlan plan;                      // the pre-scan's plan, the same in every shard
  int threads = 1;
  std::vector<bool> read;            // inputs this process reads (ChooseInputsToRead)
  // Inputs read only for their collectives: clock probes whose output
  // another shard writes, or an earlier run kept (--resume).
  std::vector<bool> clock_only;
  ClockAlignment* clocks = nullptr;  // --align-clocks (clocks.h); set before the decode
  // The files an earlier run's manifest listed in OUTDIR (read before this
  // run removes that manifest; pipeline/output/earlier_run.h): those this
  // run does not write are removed in the account stage.
  std::vector<std::string> earlier_files;
  // The collectives' last arrivals the overview marks (tables_job.h's
  // FinishTables; not in a shard's own overview: manifest merge adds them).
  std::vector<analysis::LastArrival> last_arrivals;

  // The shard this process is.
  int me() const { return opts.shard.index; }
  // ReportsNow: input `i`'s error line is printed as soon as it is known
  // (planned to this shard); an undetermined input's only once grouped.
  // Errors are said even with --quiet.
  bool ReportsNow(size_t i) const { return plan.OwnerOfInput(i) == me(); }
};

}  // namespace tracemill::pipeline
