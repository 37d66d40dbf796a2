#include "report/analysis.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "report/input_labels.h"
#include "report/step_compare.h"
#include "report/timeline_rows.h"

namespace tracemill::report {
namespace {

// Sets world size, ranks and nodes seen and the missing-rank count of `a`;
// returns the missing ranges (ranks below world_size without an input).
std::vector<RankRange> CountRanks(const RunModel& m, Analysis* a) {
  std::set<int64_t> seen;
  std::set<int64_t> world_sizes;
  for (const InputModel& in : m.inputs) {
    if (in.skipped || !in.timeline.tracks.empty()) continue;
    if (in.rank) seen.insert(*in.rank);
    if (in.world_size) world_sizes.insert(*in.world_size);
  }
  a->world_sizes.assign(world_sizes.begin(), world_sizes.end());
  a->world_size = world_sizes.empty() ? 0 : *world_sizes.rbegin();
  a->ranks_seen = static_cast<int64_t>(seen.size());
  std::set<int64_t> nodes;
  for (int64_t r : seen) nodes.insert(r / a->gpus_per_node);
  a->nodes_seen = static_cast<int64_t>(nodes.size());
  std::vector<RankRange> missing;
  int64_t next = 0;
  for (int64_t r : seen) {
    if (r >= a->world_size) break;
    if (r > next) missing.push_back(RankRange{next, r - 1});
    next = r + 1;
  }
  if (a->world_size > next) missing.push_back(RankRange{next, a->world_size - 1});
  for (const RankRange& r : missing) a->missing_ranks += r.count();
  return missing;
}

DeadEntry InputDeadEntry(const InputModel& in) {
  DeadEntry d;
  d.label = InputLabel(in);
  d.kind = in.rejected ? "rejected" : "damaged";
  d.reason = InputErrorReason(in);
  if (!in.rejected && in.span_ns) d.from_ns = in.span_ns->second;
  d.path = in.path;
  return d;
}

// A range of missing ranks: dead ("missing") when some input failed, else
// "not given" (analysis.h).
DeadEntry MissingEntry(RankRange r, const Analysis& a) {
  DeadEntry d;
  d.label = RangeLabel(r.lo, r.hi);
  d.kind = a.missing_are_dead ? "missing" : "not given";
  d.reason = MissingReason(r, a.world_size, a.missing_are_dead);
  d.ranks = r.count();
  return d;
}

bool AnyInputFailed(const RunModel& m) {
  for (const InputModel& in : m.inputs)
    if (!in.skipped && in.has_error) return true;
  return false;
}

// Dead entries: inputs with errors and missing ranks (if dead) in rank
// order, then unranked inputs, then failed tracks. Sets `a->dead`,
// `a->dead_ranks`, `a->not_given` and `a->not_given_ranks`.
void CollectDead(const RunModel& m, const std::vector<RankRange>& missing, Analysis* a) {
  std::vector<std::pair<int64_t, DeadEntry>> ranked;
  std::vector<DeadEntry> rest;
  for (const InputModel& in : m.inputs) {
    if (in.skipped || !in.has_error) continue;
    if (in.rank && in.timeline.tracks.empty()) ranked.emplace_back(*in.rank, InputDeadEntry(in));
    else rest.push_back(InputDeadEntry(in));
  }
  for (const RankRange& r : missing) {
    if (a->missing_are_dead) ranked.emplace_back(r.lo, MissingEntry(r, *a));
    else a->not_given.push_back(MissingEntry(r, *a));
  }
  for (const DeadEntry& d : a->not_given) a->not_given_ranks += d.ranks;
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  for (auto& [r, d] : ranked) a->dead.push_back(std::move(d));
  for (auto& d : rest) a->dead.push_back(std::move(d));
  for (const InputModel& in : m.inputs) {
    if (in.skipped) continue;
    for (const auto& tr : in.timeline.tracks) {
      if (!tr.failed_at_ns) continue;
      DeadEntry d;
      d.label = absl::StrCat(InputLabel(in), " \xC2\xB7 ", tr.name);
      d.kind = "failed";
      d.reason = tr.failure;
      d.from_ns = tr.failed_at_ns;
      d.path = in.path;
      a->dead.push_back(std::move(d));
    }
  }
  for (const DeadEntry& d : a->dead) a->dead_ranks += d.ranks;
}

// Widens `range` (nullopt: none yet) to hold [lo_ns, hi_ns].
void Extend(std::optional<std::pair<int64_t, int64_t>>* range, int64_t lo_ns, int64_t hi_ns) {
  if (!*range) *range = std::make_pair(lo_ns, hi_ns);
  (*range)->first = std::min((*range)->first, lo_ns);
  (*range)->second = std::max((*range)->second, hi_ns);
}

// The x range: the job's span, widened to every bar and point of death.
void SetTimeRange(const RunModel& m, Analysis* a) {
  a->time_ns = m.span_ns;
  for (const Row& row : a->rows) {
    for (const Bar& b : row.bars) Extend(&a->time_ns, b.start_ns, b.end_ns);
    if (row.dead_from_ns) Extend(&a->time_ns, *row.dead_from_ns, *row.dead_from_ns);
  }
}

}  // namespace

bool IsStraggler(int64_t lag_ns, int64_t median_ns) {
  return lag_ns > kStragglerMinLagNs &&
         static_cast<__int128>(lag_ns) * 100 > static_cast<__int128>(median_ns) * kStragglerMinPercent;
}

Analysis Analyze(const RunModel& m, const AnalysisLimits& lim) {
  Analysis a;
  a.gpus_per_node = m.gpus_per_node > 0 ? m.gpus_per_node : 8;
  a.cpu_only = m.cpu_only;
  Participants parts = CollectParticipants(m);
  StepComparison compared = CompareSteps(lim, &parts, m.tables.collectives.steps);
  a.stragglers = std::move(compared.stragglers);
  a.straggler_steps_omitted = compared.steps_omitted;
  a.steps_with_straggler = compared.steps_with_straggler;
  a.runs = parts.runs;
  a.steps_seen = compared.rank_steps;
  const std::vector<RankRange> missing = CountRanks(m, &a);
  a.missing_are_dead = AnyInputFailed(m);
  CollectDead(m, missing, &a);
  AddTimelineRows(RowSources{m, parts, a.gpus_per_node, a.world_size, a.missing_are_dead}, missing, lim, &a);
  SetTimeRange(m, &a);
  return a;
}

}  // namespace tracemill::report
