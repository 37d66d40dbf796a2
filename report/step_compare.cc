#include "report/step_compare.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "report/input_labels.h"
#include "report/page_sections.h"

namespace tracemill::report {
namespace {

using formats::StepSpan;

// (group, step): the steps compared with each other.
using StepKey = std::pair<std::string, int64_t>;
// (participant, index into its steps): one participant's span of a step.
using StepMember = std::pair<int, size_t>;

int64_t DurNs(const Participants& parts, const StepMember& x) {
  const StepSpan& s = (*parts.list[x.first].steps)[x.second];
  return s.end_ns - s.start_ns;
}

std::map<StepKey, std::vector<StepMember>> GroupByStep(const Participants& parts) {
  std::map<StepKey, std::vector<StepMember>> by_step;
  for (size_t p = 0; p < parts.list.size(); ++p)
    for (size_t k = 0; k < parts.list[p].steps->size(); ++k)
      by_step[{parts.list[p].group, (*parts.list[p].steps)[k].step}].emplace_back(static_cast<int>(p), k);
  return by_step;
}

// A straggler table row and the largest lag in it, which decides whether
// the row is kept.
struct LaggedStepRow {
  int64_t max_lag_ns = 0;
  StepStragglers row;
};

// Compares the `members` (two or more) of step `key`: notes their lags,
// marks the slowest, and returns the table row.
LaggedStepRow CompareStep(const StepKey& key, std::vector<StepMember> members, Participants* parts,
                          const TablesModel::Collectives::StepLate* late) {
  std::vector<int64_t> d;
  for (const auto& x : members) d.push_back(DurNs(*parts, x));
  const size_t n = d.size();
  const int64_t median = MedianNs(std::move(d));
  // Slowest first; ties in participant order.
  std::stable_sort(members.begin(), members.end(), [&](const StepMember& x, const StepMember& y) {
    return DurNs(*parts, x) > DurNs(*parts, y);
  });
  for (const auto& x : members) {
    StepNote& note = parts->list[x.first].notes[x.second];
    note.median_ns = median;
    note.lag_ns = DurNs(*parts, x) - median;
    if (note.lag_ns > 0) parts->list[x.first].total_lag_ns += note.lag_ns;
  }
  // With collectives, the late rank's step (if it has this step) is marked.
  const StepMember* late_member = nullptr;
  if (late)
    for (const auto& x : members)
      if (parts->list[x.first].rank == late->rank) late_member = &x;
  const bool straggler = late ? IsStraggler(late->late_ns, median) && late_member
                              : IsStraggler(DurNs(*parts, members[0]) - median, median);
  const StepMember& marked = late_member ? *late_member : members[0];
  parts->list[marked.first].notes[marked.second].slowest = straggler;
  LaggedStepRow lagged;
  StepStragglers& row = lagged.row;
  row.group = key.first;
  row.step = key.second;
  row.participants = static_cast<int32_t>(n);
  row.median_ns = median;
  row.straggler = straggler;
  row.all_equal = DurNs(*parts, members.front()) == DurNs(*parts, members.back());
  for (size_t k = 0; k < std::min<size_t>(3, members.size()); ++k)
    row.slowest.push_back(Straggler{parts->list[members[k].first].label, DurNs(*parts, members[k]),
                                    DurNs(*parts, members[k]) - median});
  lagged.max_lag_ns = DurNs(*parts, members[0]) - median;
  if (late) {
    row.by_collectives = true;
    row.late_label = absl::StrCat("rank ", late->rank);
    row.late_ns = late->late_ns;
    row.times_last = late->times_last;
    row.instances = late->instances;
    lagged.max_lag_ns = late->late_ns;
  }
  return lagged;
}

// Keeps the `max_rows` rows with the largest lag (in (group, step) order);
// returns how many were dropped.
size_t KeepLargestLags(size_t max_rows, std::vector<LaggedStepRow>* table) {
  if (table->size() <= max_rows) return 0;
  std::stable_sort(table->begin(), table->end(),
                   [](const LaggedStepRow& x, const LaggedStepRow& y) { return x.max_lag_ns > y.max_lag_ns; });
  const size_t omitted = table->size() - max_rows;
  table->resize(max_rows);
  std::stable_sort(table->begin(), table->end(), [](const LaggedStepRow& x, const LaggedStepRow& y) {
    return std::tie(x.row.group, x.row.step) < std::tie(y.row.group, y.row.step);
  });
  return omitted;
}

// RunGroups: per input, "" when the ranks' inputs are one run, else
// "run k" (1-based, by start): the inputs whose time spans overlap, as
// pipeline/job_notes.cc tells different runs apart, so that no rank is
// compared with another run's.
std::vector<std::string> RunGroups(const RunModel& m, int* runs_out) {
  std::vector<size_t> order;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const InputModel& in = m.inputs[i];
    if (!in.skipped && in.timeline.tracks.empty() && in.span_ns && IsEpochTime(in.span_ns->first)) order.push_back(i);
  }
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return m.inputs[a].span_ns->first < m.inputs[b].span_ns->first; });
  std::vector<int> run(m.inputs.size(), 0);
  int runs = 0;
  int64_t end = INT64_MIN;
  for (size_t i : order) {
    const auto& span = *m.inputs[i].span_ns;
    if (runs == 0 || span.first > end) ++runs;
    end = std::max(end, span.second);
    run[i] = runs;
  }
  std::vector<std::string> group(m.inputs.size());
  if (runs >= 2)
    for (size_t i = 0; i < m.inputs.size(); ++i)
      if (run[i]) group[i] = absl::StrCat("run ", run[i]);
  if (runs_out) *runs_out = std::max(runs, 1);
  return group;
}

}  // namespace

Participants CollectParticipants(const RunModel& m) {
  Participants parts;
  const std::vector<std::string> run = RunGroups(m, &parts.runs);
  parts.of_input.assign(m.inputs.size(), -1);
  parts.of_track.resize(m.inputs.size());
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const InputModel& in = m.inputs[i];
    if (in.skipped) continue;
    if (in.timeline.tracks.empty()) {
      parts.of_input[i] = static_cast<int>(parts.list.size());
      parts.list.push_back(Participant{run[i], InputLabel(in), in.rank, &in.timeline.steps, {}, 0, true});
      continue;
    }
    parts.of_track[i].assign(in.timeline.tracks.size(), -1);
    for (size_t t = 0; t < in.timeline.tracks.size(); ++t) {
      const formats::TrackTimeline& tr = in.timeline.tracks[t];
      if (!tr.rank) continue;  // the scheduler's rounds are not compared
      parts.of_track[i][t] = static_cast<int>(parts.list.size());
      parts.list.push_back(Participant{InputLabel(in), tr.name, std::nullopt, &tr.steps, {}, 0});
    }
  }
  for (Participant& p : parts.list) p.notes.resize(p.steps->size());
  return parts;
}

StepComparison CompareSteps(const AnalysisLimits& limits, Participants* parts,
                            const std::vector<TablesModel::Collectives::StepLate>& late) {
  std::map<int64_t, const TablesModel::Collectives::StepLate*> late_of_step;
  for (const auto& s : late) late_of_step[s.step] = &s;
  StepComparison out;
  std::set<int64_t> rank_steps;
  std::vector<LaggedStepRow> table;
  for (auto& [key, members] : GroupByStep(*parts)) {
    if (parts->list[members.front().first].input) rank_steps.insert(key.second);
    if (members.size() < 2) continue;
    auto it = key.first.empty() ? late_of_step.find(key.second) : late_of_step.end();  // one run
    table.push_back(CompareStep(key, std::move(members), parts, it == late_of_step.end() ? nullptr : it->second));
    out.steps_with_straggler += table.back().row.straggler;
  }
  out.rank_steps = static_cast<int64_t>(rank_steps.size());
  out.steps_omitted = KeepLargestLags(limits.max_straggler_steps, &table);
  for (LaggedStepRow& r : table) out.stragglers.push_back(std::move(r.row));
  return out;
}

int64_t MedianNs(std::vector<int64_t> d) {
  std::sort(d.begin(), d.end());
  const size_t n = d.size();
  return n % 2 ? d[n / 2] : d[n / 2 - 1] + (d[n / 2] - d[n / 2 - 1]) / 2;
}

}  // namespace tracemill::report
