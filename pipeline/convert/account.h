#pragma once
// Account: the convert job's last stage. Every input this process read
// gets its final record (who reports it, its rank, its error line if it
// was undetermined), --resume's carried records and outputs join, the job's
// time span is taken, then manifest.json (the exit status with it; the
// journal goes once the manifest holds what it held) and, unless
// --no-report or sharded, report.html built from that manifest (report/).
// On exit 1 an earlier report.html is removed: it would describe another job.
#include <functional>

#include "pipeline/convert/convert_context.h"
#include "pipeline/convert/output_groups.h"
#include "pipeline/convert/resume.h"
#include "pipeline/output/overview.h"

namespace tracemill::pipeline {

// AccountForConvert finishes `cx.job`'s summary from `cx.records` (moved
// into it), writes the manifest and the report, and sets the exit status.
// `overview` gets a block for every input read that has none yet (steps
// only) and is written next to the manifest.
// `finish_tables` (--tables, may be empty) runs once the records are in the
// summary, before the manifest; false fails the job (exit 1).
void AccountForConvert(ConvertContext& cx, const OutputGroups& groups, ResumeState& resume,
                       OverviewCollector* overview, const std::function<bool()>& finish_tables = {});

}  // namespace tracemill::pipeline
