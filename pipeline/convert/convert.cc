#include "pipeline/convert/convert.h"

#include <malloc.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "formats/common/byte_kernel.h"
#include "formats/common/cleanup.h"
#include "formats/common/stats.h"
#include "pipeline/clocks/clocks.h"
#include "pipeline/clocks/clocks_job.h"
#include "pipeline/convert/account.h"
#include "pipeline/convert/convert_context.h"
#include "pipeline/convert/convert_plan.h"
#include "pipeline/convert/decode_stage.h"
#include "pipeline/convert/graph.h"
#include "pipeline/convert/output_groups.h"
#include "pipeline/convert/resume.h"
#include "pipeline/convert/step_window.h"
#include "pipeline/convert/tables_job.h"
#include "pipeline/convert/write_output.h"
#include "pipeline/inputs/inputs.h"
#include "pipeline/inputs/smdebug_inputs.h"
#include "pipeline/output/earlier_run.h"
#include "pipeline/output/output_dir.h"
#include "pipeline/output/overview.h"

namespace tracemill::pipeline {
namespace {

// Freed memory goes back to the OS: fixed mmap threshold (glibc raises it
// dynamically after large frees, which keeps big buffers on the heap) and
// few arenas, so RSS follows the budget.
void ReturnFreedMemoryToTheSystem() {
  mallopt(M_MMAP_THRESHOLD, 256 << 10);
  mallopt(M_ARENA_MAX, 4);
}

// LoadClocksFile: the offsets `tracemill clocks` solved for this job, if
// OUTDIR holds them (clocks_job.h): then no probe is decoded for them.
void LoadClocksFile(ConvertContext& cx, ClockAlignment* clocks) {
  const std::string path = cx.opts.out_dir + "/" + kClocksFileName;
  std::string note;
  if (clocks->LoadSolution(path, ClocksFingerprint(cx), &note)) {
    if (!cx.opts.quiet) cx.job.Say(absl::StrCat("clock offsets from ", path, " (tracemill clocks)"));
  } else if (!note.empty() && !cx.opts.quiet) {
    cx.job.Say(note);
  }
}

// BeforeWritingAll (two stages): every input is decoded, so the window can
// be narrowed to the steps asked for, every input placed, and the base of
// --relative-time taken. False: a step no input has (said; exit 2).
bool BeforeWritingAll(ConvertContext& cx, DecodedRuns& runs, DecodeStage& decode, OutputGroups& groups,
                      ResumeState& resume, OutputTimes* times) {
  decode.DoneDecoding(/*keep_spills=*/true);
  // Clocks first: the steps and spans below are aligned ones.
  cx.clocks->Solve();
  for (size_t i = 0; i < cx.records.size(); ++i)
    if (runs.get(i) && !cx.clock_only[i]) cx.clocks->Assign(cx.records[i]);
  if (cx.opts.start_step || cx.opts.end_step) {
    auto resolved = ResolveStepWindow(cx.records, runs.all(), cx.opts.start_step, cx.opts.end_step);
    if (!resolved.ok()) {
      if (resume.journal) resume.journal->Remove();
      cx.job.UsageError(resolved.status().message());
      return false;
    }
    times->window.start_ns = std::max(times->window.start_ns, resolved->start_ns);
    times->window.end_ns = std::min(times->window.end_ns, resolved->end_ns);
    if (cx.opts.verbose)
      cx.job.Say(absl::StrCat("steps resolve to [", times->window.start_ns, ", ", times->window.end_ns, "] ns"));
  }
  // Every decoded input's rank is known now: the decoded rank decides its
  // output, and the output's shard decides who reports it.
  groups.PlaceAll();
  int64_t first = INT64_MAX;
  for (size_t i = 0; i < cx.records.size(); ++i)
    if (groups.placed(i) && cx.records[i].has_span) first = std::min(first, cx.records[i].first_ts_ns);
  for (auto& c : resume.outputs)
    for (auto& r : c.inputs)
      if (r.has_span) first = std::min(first, r.first_ts_ns);
  if (cx.opts.relative_time && first != INT64_MAX) times->offset_ns = first;
  return true;
}

// OutputTimesOf: the window of --start/--end (absolute ns).
OutputTimes OutputTimesOf(const ConvertOptions& opts) {
  OutputTimes t;
  if (opts.window_start_ns) t.window.start_ns = *opts.window_start_ns;
  if (opts.window_end_ns) t.window.end_ns = *opts.window_end_ns;
  if (opts.follow_window) {  // a follow job's window: by start, end excluded
    t.window.start_ns = opts.follow_window->start_ns;
    t.window.end_ns = opts.follow_window->end_ns;
    t.window.by_start = true;
  }
  return t;
}

}  // namespace

RunSummary RunConvert(const ConvertOptions& opts) {
  Job job("tracemill", opts.progress && !opts.quiet, opts.command_line);
  job.summary().group_by = GroupByName(opts.group_by);
  ReturnFreedMemoryToTheSystem();
  auto ranks = RankMatcher::Create(opts.rank_pattern);
  if (!ranks.ok()) return job.UsageError(ranks.status().message());

  // 1. The output directory, made ready before any input is read.
  OutputDirectory out_dir(job, opts.out_dir);
  if (!out_dir.Open("-o ", opts.tmp_dir, opts.shard)) return job.summary();
  // 2. The inputs.
  ConvertContext cx{opts, job, *ranks};
  if (!ListInputs(opts.inputs, opts.out_dir, out_dir.id(), opts.no_system_metrics, job, &cx.records))
    return job.summary();
  AttachContextFiles(opts.follow_context_files, &cx.records);
  cx.threads = job.StartThreads(opts.threads, opts.quiet);
  if (opts.verbose)
    job.Say(absl::StrCat(formats::Counted(cx.records.size(), "input"), ", ", formats::Counted(cx.threads, "thread"),
                         ", simdjson kernel ",
                         simdjson::get_active_implementation()->name(), " (",
                         simdjson::get_active_implementation()->description(), "), byte kernel ",
                         formats::ByteKernelNote()));
  // 3. The plan: outputs and shards from the heads, then --resume.
  PlanJob(cx);
  RemoveOwnStaleFiles(cx);
  ClockAlignment clocks(cx);
  cx.clocks = &clocks;
  LoadClocksFile(cx, &clocks);
  if (!opts.shard.sharded() && !opts.follow_window)  // shards share OUTDIR; a window's is new
    cx.earlier_files = EarlierRunFiles(opts.out_dir, ManifestFileName(opts.shard));
  RemoveStaleTables(cx);
  const std::string previous_tables = PreviousTables(cx);
  ResumeState resume = ResumeOrStartOver(opts, cx.plan, cx.records, job, KeepForTables(cx, previous_tables));
  ChooseInputsToRead(cx, resume);

  // 4-6. Decode and sort, group and place, merge and write: one flow graph.
  const MemoryPlan memory = PlanMemory(opts.memory_limit ? opts.memory_limit : DefaultMemoryLimit());
  std::string tables_error;  // --tables: OUTDIR/tables.sqlite (tables_job.h)
  std::unique_ptr<analysis::TablesCollector> tables = StartTables(cx, memory.limit, resume, previous_tables, &tables_error);
  ChunkPoolScope chunk_pool(memory);
  const DecodeSchedule schedule = ScheduleDecodes(cx, memory);
  DecodedRuns runs(cx.records.size(), schedule.memory.runs, schedule.spill_dir, schedule.spill_page_cache,
                   cx.opts.direct_io);
  ConvertProgress progress(job.console(), schedule.order.size(), schedule.overlap);
  DecodeStage decode(cx, schedule, runs, progress);
  OutputGroups groups(cx, runs, resume.carried_outputs);
  if (schedule.overlap) groups.ExpectInputs(schedule.order);
  OutputTimes times = OutputTimesOf(opts);
  OverviewCollector overview(cx.records.size(), times.offset_ns);
  OutputWriter writer(cx, runs, times, schedule.memory.merge, resume.journal.get(), progress, &overview,
                      tables.get());
  if (!DecodeAndWrite(schedule, decode, groups, writer,
                      [&] { return BeforeWritingAll(cx, runs, decode, groups, resume, &times); }))
    return job.summary();
  if (schedule.overlap) decode.DoneDecoding(/*keep_spills=*/false);
  progress.End();

  // 7. Account: records, manifest, journal, report.
  AccountForConvert(cx, groups, resume, &overview,
                    [&] { return FinishTables(cx, tables.get(), tables_error, times.window); });
  return job.summary();
}

}  // namespace tracemill::pipeline
