#pragma once
// --tables in the convert job (pipeline/convert/convert.h): where tables.sqlite is
// opened (before the decode), which outputs --resume may keep, and where it
// is finished (the account stage, before the manifest, which records it).
#include <functional>
#include <memory>

#include "analysis/tables.h"
#include "pipeline/budget.h"
#include "pipeline/convert/convert_context.h"
#include "pipeline/convert/resume.h"
#include "pipeline/journal.h"
#include "pipeline/table_facts.h"

namespace tracemill::pipeline {

// TablesBudget: SQLite's page cache and the writer's queue for a memory
// limit: limit/32 and limit/64, each within [2 MiB, 64 MiB] / [2 MiB, 8 MiB].
std::pair<uint64_t, uint64_t> TablesBudget(uint64_t memory_limit);

// PreviousTables: with --tables and --resume, the tables file an earlier
// run of this job left in OUTDIR: an interrupted run's partial file (moved
// aside to `.<name>.previous`, as this run writes a new partial file), else
// a finished run's tables.sqlite; "" if none (or without --resume).
std::string PreviousTables(const ConvertContext& cx);

// StartTables opens OUTDIR/tables.sqlite (a shard's tables.shard-<i>-of-<n>.sqlite)
// when --tables asks for it: written as `.<name>.partial` until the job
// ends (a follow window's as a temporary), the rows of `resume`'s carried
// inputs copied from `previous` first (which then goes, if it is a moved
// partial file). Null without --tables, or when it cannot be opened (said
// on the console; `*error` set: the job will exit 1).
std::unique_ptr<analysis::TablesCollector> StartTables(ConvertContext& cx, uint64_t memory_limit,
                                                       const ResumeState& resume, const std::string& previous,
                                                       std::string* error);

// KeepForTables: with --tables and --resume, an output is kept only if
// `previous` (PreviousTables) holds its inputs' rows; empty otherwise
// (every complete output is kept).
std::function<bool(const CompletedOutput&)> KeepForTables(const ConvertContext& cx, const std::string& previous);

// RemoveStaleTables: without --resume, an interrupted run's partial tables
// files of this shard go (they are kept for --resume only).
void RemoveStaleTables(const ConvertContext& cx);

// FinishTables writes the account stage's rows and renames the file; the
// manifest gets a `tables` member (path, mode, rows, or the error). False
// if the tables could not be written (the job exits 1, no tables.sqlite).
// `window`: the traces' (--start/--end, --start-step/--end-step), aligned ns.
bool FinishTables(ConvertContext& cx, analysis::TablesCollector* tables, const std::string& error,
                  const formats::TimeWindow& window);

}  // namespace tracemill::pipeline
