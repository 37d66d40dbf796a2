#include "pipeline/clocks/clocks_job.h"

#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "pipeline/clocks/clocks.h"
#include "pipeline/convert/convert_context.h"
#include "pipeline/convert/convert_plan.h"
#include "pipeline/convert/decode_stage.h"
#include "pipeline/convert/graph.h"
#include "pipeline/convert/output_groups.h"
#include "pipeline/convert/write_output.h"
#include "pipeline/inputs/inputs.h"
#include "pipeline/output/output_dir.h"

namespace tracemill::pipeline {
namespace {

// DecodeProbes decodes the inputs `cx.read` marks (the probes) through the
// convert graph, stopping before anything would be written.
void DecodeProbes(ConvertContext& cx, const MemoryPlan& memory) {
  const DecodeSchedule schedule = ScheduleDecodes(cx, memory);
  DecodedRuns runs(cx.records.size(), schedule.memory.runs, schedule.spill_dir, schedule.spill_page_cache,
                   cx.opts.direct_io);
  ConvertProgress progress(cx.job.console(), schedule.order.size(), /*overlap=*/false);
  DecodeStage decode(cx, schedule, runs, progress);
  const std::set<std::string> no_carried_outputs;
  OutputGroups groups(cx, runs, no_carried_outputs);
  OutputTimes times;
  OutputWriter writer(cx, runs, times, schedule.memory.merge, nullptr, progress);
  DecodeAndWrite(schedule, decode, groups, writer, [&] {
    decode.DoneDecoding(/*keep_spills=*/false);
    return false;  // the runs are not needed: only the records' digests
  });
  progress.End();
}

}  // namespace

RunSummary RunClocks(const ConvertOptions& given) {
  ConvertOptions opts = given;
  opts.no_overlap = true;  // decode, then stop: nothing is written
  opts.shard = ShardSpec{};
  Job job("tracemill clocks", opts.progress && !opts.quiet, opts.command_line);
  auto ranks = RankMatcher::Create(opts.rank_pattern);
  if (!ranks.ok()) return job.UsageError(ranks.status().message());
  OutputDirectory out_dir(job, opts.out_dir);
  if (!out_dir.Open("-o ", opts.tmp_dir, opts.shard)) return job.summary();
  ConvertContext cx(opts, job, *ranks);
  if (!ListInputs(opts.inputs, opts.out_dir, out_dir.id(), opts.no_system_metrics, job, &cx.records))
    return job.summary();
  cx.threads = job.StartThreads(opts.threads, opts.quiet);
  PlanJob(cx);
  ClockAlignment clocks(cx);
  cx.clocks = &clocks;
  cx.read.assign(cx.records.size(), false);
  cx.clock_only.assign(cx.records.size(), false);
  for (size_t i = 0; i < cx.records.size(); ++i) cx.read[i] = cx.clock_only[i] = clocks.IsCandidate(i);
  const MemoryPlan memory = PlanMemory(opts.memory_limit ? opts.memory_limit : DefaultMemoryLimit());
  ChunkPoolScope chunk_pool(memory);
  if (clocks.considered()) DecodeProbes(cx, memory);
  clocks.Solve();
  if (!opts.quiet) clocks.SayOutcome();  // as convert says it: the nodes shifted, the warnings
  RunSummary& s = job.summary();
  s.clocks_json = clocks.ManifestJson();
  s.clocks_shift = clocks.ShiftsAny();
  for (size_t i = 0; i < cx.records.size(); ++i)
    if (cx.read[i]) s.inputs.push_back(cx.records[i]);
  const std::string path = opts.out_dir + "/" + kClocksFileName;
  if (absl::Status st = clocks.SaveSolution(path, ClocksFingerprint(cx)); !st.ok()) {
    job.Say(absl::StrCat("cannot write ", path, ": ", st.message()));
    return job.Exit(kExitInternal);
  }
  bool damaged = false;
  for (const InputRecord& r : s.inputs) damaged |= !r.status.ok();
  s.wall_seconds = job.ElapsedSeconds();
  return job.Exit(damaged ? kExitSomeRejected : kExitOk);
}

}  // namespace tracemill::pipeline
