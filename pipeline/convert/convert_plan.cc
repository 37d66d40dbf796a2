#include "pipeline/convert/convert_plan.h"

#include "absl/strings/str_cat.h"
#include "analysis/schema.h"
#include "formats/common/stats.h"
#include "pipeline/clocks/clocks.h"
#include "pipeline/output/output_dir.h"
#include "pipeline/output/overview.h"

namespace tracemill::pipeline {

void PlanJob(ConvertContext& cx) {
  cx.plan = MakePlan(cx.records, PreScan(cx.records, cx.ranks), cx.opts, cx.opts.shard.count);
  for (size_t i = 0; i < cx.records.size(); ++i) {
    InputRecord& r = cx.records[i];
    if (r.sagemaker_host <= 0 || r.rank || !cx.plan.inputs[i].rank) continue;
    r.rank = cx.plan.inputs[i].rank;
    r.rank_source = absl::StrCat("SageMaker host algo-", r.sagemaker_host, " (node ", r.sagemaker_host - 1, " x ",
                                 cx.plan.gpus_per_node, " GPUs per node)");
  }
  RunSummary& s = cx.job.summary();
  s.gpus_per_node = cx.plan.gpus_per_node;
  s.group_by = GroupByName(cx.plan.group_by);
  s.cpu_only = cx.plan.cpu_only;
  s.fingerprint = cx.plan.fingerprint;
  s.shard = cx.opts.shard;
  s.inputs_in_job = cx.records.size();
}

void RemoveOwnStaleFiles(const ConvertContext& cx) {
  const ShardSpec& shard = cx.opts.shard;
  RemoveStaleFiles(
      cx.opts.out_dir,
      [&](std::string_view base) {
        if (!shard.sharded() || base == ManifestFileName(shard) || base == JournalFileName(shard) ||
            base == OverviewCollector::FileName(shard.index, shard.count) ||
            base == analysis::TablesFileName(shard.index, shard.count))
          return true;
        auto key = ParseOutputName(base);
        if (!key) return false;
        // A range of this job's layout is its writer's; any other layout's
        // file, the output's first range's writer's.
        auto range = ParseRangeName(base);
        if (range && range->second == cx.plan.time_ranges) return cx.plan.OwnerOfRange(*key, range->first) == cx.me();
        return cx.plan.OwnerOf(*key) == cx.me();
      },
      !shard.sharded());
}

namespace {
// SayIdleShard: a shard that no planned output (or time range) falls to
// says so, and how to give it one: more shards than outputs leave the rest
// idle (issue 34).
void SayIdleShard(ConvertContext& cx) {
  const JobPlan& plan = cx.plan;
  const size_t outputs = plan.planned_bytes.size();
  const size_t units = outputs * static_cast<size_t>(plan.time_ranges);
  const int count = cx.opts.shard.count;
  if (!cx.opts.shard.sharded() || cx.opts.quiet || outputs == 0 || units >= static_cast<size_t>(count)) return;
  for (const auto& [key, bytes] : plan.planned_bytes)
    if (plan.WritesAnyRange(key, cx.me())) return;
  const size_t ranges = (static_cast<size_t>(count) + outputs - 1) / outputs;
  cx.job.Say(absl::StrCat("shard ", cx.me(), "/", count, " has no planned output to write: the job plans ",
                          formats::Counted(outputs, "output"),
                          plan.time_ranges > 1 ? absl::StrCat(" x ", plan.time_ranges, " time ranges") : "", " for ",
                          count, " shards; --time-ranges ", ranges,
                          " (the same in every shard) would give each shard a time range of one"));
}
}  // namespace

void ChooseInputsToRead(ConvertContext& cx, const ResumeState& resume) {
  const size_t n = cx.records.size();
  cx.read.assign(n, false);
  cx.clock_only.assign(n, false);
  size_t n_undetermined = 0, n_read = 0;
  uint64_t read_bytes = 0;
  for (size_t i = 0; i < n; ++i) {
    n_undetermined += cx.plan.inputs[i].kind == PlanKind::kUndetermined;
    if (resume.input_of_path.count(cx.records[i].path)) {
      if (cx.clocks->IsCandidate(i)) cx.read[i] = cx.clock_only[i] = true;  // its output is kept
      continue;
    }
    const int owner = cx.plan.OwnerOfInput(i);
    // A shard that writes a later time range of the input's output decodes it too.
    const bool writes_range = cx.plan.planned_key[i] && cx.plan.WritesAnyRange(*cx.plan.planned_key[i], cx.me());
    cx.read[i] = owner < 0 || owner == cx.me() || writes_range;
    // Every process decodes every clock probe, so that all solve alike.
    if (!cx.read[i] && cx.clocks->IsCandidate(i)) cx.read[i] = cx.clock_only[i] = true;
    n_read += cx.read[i];
    if (cx.read[i]) read_bytes += cx.plan.inputs[i].bytes;
  }
  // Nothing left to write (--resume kept every output): no probe is read
  // for the clocks; the earlier manifest's clock section stands.
  bool writes = false;
  for (size_t i = 0; i < n; ++i) writes |= cx.read[i] && !cx.clock_only[i];
  if (!writes) {
    for (size_t i = 0; i < n; ++i)
      if (cx.clock_only[i]) {
        n_read -= 1;
        read_bytes -= cx.plan.inputs[i].bytes;
        cx.read[i] = cx.clock_only[i] = false;
      }
  }
  SayIdleShard(cx);
  if (cx.opts.verbose || (cx.opts.shard.sharded() && !cx.opts.quiet))
    cx.job.Say(absl::StrCat("plan ", cx.plan.fingerprint, ": ", n, " inputs, ", cx.plan.planned_bytes.size(),
                            " outputs planned, ", n_undetermined, " inputs undetermined until decoded; gpus per node ",
                            cx.plan.gpus_per_node, "; this process reads ", n_read, " inputs (", read_bytes >> 20,
                            " MiB)"));
}

}  // namespace tracemill::pipeline
