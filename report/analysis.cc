#include "report/analysis.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "formats/common/status_macros.h"

namespace tracemill::report {
namespace {

using formats::StepSpan;

std::string BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string InputLabel(const InputModel& in) {
  if (!in.label.empty()) return in.label;
  if (in.rank) return absl::StrCat("rank ", *in.rank);
  return BaseName(in.path);
}

std::string RangeLabel(int64_t lo, int64_t hi) {
  if (lo == hi) return absl::StrCat("rank ", lo);
  return absl::StrCat("ranks ", lo, "\xE2\x80\x93", hi);  // en dash
}

std::string InputErrorReason(const InputModel& in) {
  std::string s = in.error_message;
  if (!in.error_code.empty()) absl::StrAppend(&s, " (", in.error_code, ", at byte ", in.error_offset, ")");
  return s;
}

// What the straggler pass found for one step of one participant.
struct StepNote {
  int64_t median_ns = -1;
  int64_t lag_ns = 0;
  bool slowest = false;
};

// A participant in the straggler comparison: a rank's input, or a worker
// track of a run event log.
struct Participant {
  std::string group;
  std::string label;
  const std::vector<StepSpan>* steps = nullptr;
  std::vector<StepNote> notes;  // parallel to *steps
  int64_t total_lag_ns = 0;
};

Bar BarOf(const StepSpan& s, const StepNote* note) {
  Bar b;
  b.first_step = b.last_step = s.step;
  b.start_ns = s.start_ns;
  b.end_ns = s.end_ns;
  b.survivors = s.survivors;
  b.total = s.total;
  if (note) {
    b.median_ns = note->median_ns;
    b.lag_ns = note->lag_ns;
    b.slowest = note->slowest;
  }
  return b;
}

// Merges runs of consecutive bars so that at most `cap` remain.
void BinBars(std::vector<Bar>* bars, size_t cap) {
  if (bars->size() <= cap) return;
  const size_t per = (bars->size() + cap - 1) / cap;
  std::vector<Bar> out;
  for (size_t i = 0; i < bars->size(); i += per) {
    Bar b = (*bars)[i];
    b.median_ns = -1;
    b.survivors = b.total = -1;
    for (size_t k = i + 1; k < std::min(bars->size(), i + per); ++k) {
      const Bar& x = (*bars)[k];
      b.last_step = x.last_step;
      b.start_ns = std::min(b.start_ns, x.start_ns);
      b.end_ns = std::max(b.end_ns, x.end_ns);
      b.lag_ns = std::max(b.lag_ns, x.lag_ns);
      b.slowest |= x.slowest;
      b.ranks = std::max(b.ranks, x.ranks);
    }
    out.push_back(std::move(b));
  }
  *bars = std::move(out);
}

}  // namespace

Analysis Analyze(const RunModel& m, const AnalysisLimits& lim) {
  Analysis a;
  a.gpus_per_node = m.gpus_per_node > 0 ? m.gpus_per_node : 8;
  const int64_t gpn = a.gpus_per_node;

  // ---- Participants and stragglers.
  std::vector<Participant> parts;
  std::vector<int> part_of_input(m.inputs.size(), -1);
  std::vector<std::vector<int>> part_of_track(m.inputs.size());
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const InputModel& in = m.inputs[i];
    if (in.skipped) continue;
    if (in.timeline.tracks.empty()) {
      part_of_input[i] = static_cast<int>(parts.size());
      parts.push_back(Participant{"", InputLabel(in), &in.timeline.steps, {}, 0});
      continue;
    }
    part_of_track[i].assign(in.timeline.tracks.size(), -1);
    for (size_t t = 0; t < in.timeline.tracks.size(); ++t) {
      const formats::TrackTimeline& tr = in.timeline.tracks[t];
      if (!tr.rank) continue;  // the scheduler's rounds are not compared
      part_of_track[i][t] = static_cast<int>(parts.size());
      parts.push_back(Participant{InputLabel(in), tr.name, &tr.steps, {}, 0});
    }
  }
  for (Participant& p : parts) p.notes.resize(p.steps->size());
  {
    // (group, step) -> (participant, index into its steps)
    std::map<std::pair<std::string, int64_t>, std::vector<std::pair<int, size_t>>> by_step;
    for (size_t p = 0; p < parts.size(); ++p)
      for (size_t k = 0; k < parts[p].steps->size(); ++k)
        by_step[{parts[p].group, (*parts[p].steps)[k].step}].emplace_back(static_cast<int>(p), k);
    std::set<int64_t> rank_steps;
    std::vector<std::pair<int64_t, StepStragglers>> table;  // (max lag, row)
    for (auto& [key, members] : by_step) {
      if (key.first.empty()) rank_steps.insert(key.second);
      if (members.size() < 2) continue;
      auto dur = [&](const std::pair<int, size_t>& x) {
        const StepSpan& s = (*parts[x.first].steps)[x.second];
        return s.end_ns - s.start_ns;
      };
      std::vector<int64_t> d;
      for (const auto& x : members) d.push_back(dur(x));
      std::sort(d.begin(), d.end());
      const size_t n = d.size();
      const int64_t median = n % 2 ? d[n / 2] : d[n / 2 - 1] + (d[n / 2] - d[n / 2 - 1]) / 2;
      // Slowest first; ties in participant order.
      std::stable_sort(members.begin(), members.end(),
                       [&](const auto& x, const auto& y) { return dur(x) > dur(y); });
      for (const auto& x : members) {
        StepNote& note = parts[x.first].notes[x.second];
        note.median_ns = median;
        note.lag_ns = dur(x) - median;
        if (note.lag_ns > 0) parts[x.first].total_lag_ns += note.lag_ns;
      }
      if (dur(members[0]) > median) parts[members[0].first].notes[members[0].second].slowest = true;
      StepStragglers row;
      row.group = key.first;
      row.step = key.second;
      row.participants = static_cast<int32_t>(n);
      row.median_ns = median;
      for (size_t k = 0; k < std::min<size_t>(3, members.size()); ++k)
        row.slowest.push_back(Straggler{parts[members[k].first].label, dur(members[k]),
                                        dur(members[k]) - median});
      table.emplace_back(dur(members[0]) - median, std::move(row));
    }
    a.steps_seen = static_cast<int64_t>(rank_steps.size());
    if (table.size() > lim.max_straggler_steps) {
      std::stable_sort(table.begin(), table.end(),
                       [](const auto& x, const auto& y) { return x.first > y.first; });
      a.straggler_steps_omitted = table.size() - lim.max_straggler_steps;
      table.resize(lim.max_straggler_steps);
      std::stable_sort(table.begin(), table.end(), [](const auto& x, const auto& y) {
        return std::tie(x.second.group, x.second.step) < std::tie(y.second.group, y.second.step);
      });
    }
    for (auto& [lag, row] : table) a.stragglers.push_back(std::move(row));
  }

  // ---- World size, ranks seen, missing ranks.
  std::set<int64_t> seen;
  std::set<int64_t> world_sizes;
  for (const InputModel& in : m.inputs) {
    if (in.skipped || !in.timeline.tracks.empty()) continue;
    if (in.rank) seen.insert(*in.rank);
    if (in.world_size) world_sizes.insert(*in.world_size);
  }
  a.world_sizes.assign(world_sizes.begin(), world_sizes.end());
  a.world_size = world_sizes.empty() ? 0 : *world_sizes.rbegin();
  a.ranks_seen = static_cast<int64_t>(seen.size());
  {
    std::set<int64_t> nodes;
    for (int64_t r : seen) nodes.insert(r / gpn);
    a.nodes_seen = static_cast<int64_t>(nodes.size());
  }
  std::vector<std::pair<int64_t, int64_t>> missing;  // inclusive ranges
  {
    int64_t next = 0;
    for (int64_t r : seen) {
      if (r >= a.world_size) break;
      if (r > next) missing.emplace_back(next, r - 1);
      next = r + 1;
    }
    if (a.world_size > next) missing.emplace_back(next, a.world_size - 1);
  }
  for (const auto& [lo, hi] : missing) a.missing_ranks += hi - lo + 1;

  // ---- Dead entries: inputs with errors and missing ranks in rank order,
  // then unranked inputs, then failed tracks.
  {
    std::vector<std::pair<int64_t, DeadEntry>> ranked;
    std::vector<DeadEntry> rest;
    for (const InputModel& in : m.inputs) {
      if (in.skipped || !in.has_error) continue;
      DeadEntry d;
      d.label = InputLabel(in);
      d.kind = in.rejected ? "rejected" : "damaged";
      d.reason = InputErrorReason(in);
      if (!in.rejected && in.span_ns) d.from_ns = in.span_ns->second;
      d.path = in.path;
      if (in.rank && in.timeline.tracks.empty()) ranked.emplace_back(*in.rank, std::move(d));
      else rest.push_back(std::move(d));
    }
    for (const auto& [lo, hi] : missing) {
      DeadEntry d;
      d.label = RangeLabel(lo, hi);
      d.kind = "missing";
      d.reason = absl::StrCat("no input for ", hi > lo ? "these ranks" : "this rank",
                              "; distributedInfo.world_size is ", a.world_size);
      d.ranks = hi - lo + 1;
      ranked.emplace_back(lo, std::move(d));
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (auto& [r, d] : ranked) a.dead.push_back(std::move(d));
    for (auto& d : rest) a.dead.push_back(std::move(d));
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
        a.dead.push_back(std::move(d));
      }
    }
    for (const DeadEntry& d : a.dead) a.dead_ranks += d.ranks;
  }

  // ---- Rows.
  auto rank_row = [&](size_t i) {
    const InputModel& in = m.inputs[i];
    Row row;
    row.kind = in.rank ? RowKind::kRank : RowKind::kUnranked;
    row.label = InputLabel(in);
    row.detail = in.path;
    row.node = in.rank ? *in.rank / gpn : -1;
    row.span_ns = in.span_ns;
    const Participant* p = part_of_input[i] >= 0 ? &parts[part_of_input[i]] : nullptr;
    for (size_t k = 0; k < in.timeline.steps.size(); ++k)
      row.bars.push_back(BarOf(in.timeline.steps[k], p ? &p->notes[k] : nullptr));
    if (in.has_error) {
      row.dead = true;
      if (!in.rejected && in.span_ns) row.dead_from_ns = in.span_ns->second;
      row.dead_reason = absl::StrCat(in.rejected ? "input rejected: " : "input damaged: ",
                                     InputErrorReason(in));
    }
    return row;
  };
  auto missing_row = [&](int64_t lo, int64_t hi) {
    Row row;
    row.kind = RowKind::kMissing;
    row.label = RangeLabel(lo, hi);
    row.detail = absl::StrCat(hi - lo + 1, hi > lo ? " ranks" : " rank", " without an input");
    row.node = lo / gpn;
    row.dead = true;
    row.dead_reason = absl::StrCat("missing: no input for ", hi > lo ? "these ranks" : "this rank",
                                   "; distributedInfo.world_size is ", a.world_size);
    return row;
  };

  std::vector<size_t> ranked;  // inputs in rank order (then path)
  std::vector<size_t> unranked;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const InputModel& in = m.inputs[i];
    if (in.skipped || !in.timeline.tracks.empty()) continue;
    (in.rank ? ranked : unranked).push_back(i);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [&](size_t x, size_t y) {
    if (*m.inputs[x].rank != *m.inputs[y].rank) return *m.inputs[x].rank < *m.inputs[y].rank;
    return m.inputs[x].path < m.inputs[y].path;
  });
  a.rank_inputs = ranked.size();
  a.collapsed = ranked.size() > lim.max_rank_rows;

  // Blocks in rank order: (first rank, rows).
  std::vector<std::pair<int64_t, std::vector<Row>>> blocks;
  for (const auto& [lo, hi] : missing) blocks.push_back({lo, {missing_row(lo, hi)}});
  if (!a.collapsed) {
    for (size_t i : ranked) blocks.push_back({*m.inputs[i].rank, {rank_row(i)}});
  } else {
    // Ranks kept on their own row: dead ones, and the slowest.
    std::set<size_t> own;
    size_t dead_rows = 0;
    for (size_t i : ranked)
      if (m.inputs[i].has_error && dead_rows < lim.max_dead_rows) {
        own.insert(i);
        ++dead_rows;
      }
    std::vector<size_t> by_lag;
    for (size_t i : ranked)
      if (part_of_input[i] >= 0 && parts[part_of_input[i]].total_lag_ns > 0) by_lag.push_back(i);
    std::stable_sort(by_lag.begin(), by_lag.end(), [&](size_t x, size_t y) {
      return parts[part_of_input[x]].total_lag_ns > parts[part_of_input[y]].total_lag_ns;
    });
    if (by_lag.size() > lim.slowest_ranks) by_lag.resize(lim.slowest_ranks);
    own.insert(by_lag.begin(), by_lag.end());

    std::map<int64_t, std::vector<size_t>> nodes;
    for (size_t i : ranked) nodes[*m.inputs[i].rank / gpn].push_back(i);
    for (auto& [node, members] : nodes) {
      Row nr;
      nr.kind = RowKind::kNode;
      nr.label = absl::StrCat("node ", node);
      nr.node = node;
      const int64_t lo = *m.inputs[members.front()].rank, hi = *m.inputs[members.back()].rank;
      nr.detail = absl::StrCat(members.size(), members.size() == 1 ? " input" : " inputs", ", ",
                               RangeLabel(lo, hi));
      // Per step: earliest start, latest end, median and slowest of the node.
      std::map<int64_t, std::vector<std::pair<size_t, size_t>>> steps;  // step -> (input, k)
      for (size_t i : members) {
        const InputModel& in = m.inputs[i];
        if (in.span_ns) {
          if (!nr.span_ns) nr.span_ns = in.span_ns;
          nr.span_ns->first = std::min(nr.span_ns->first, in.span_ns->first);
          nr.span_ns->second = std::max(nr.span_ns->second, in.span_ns->second);
        }
        for (size_t k = 0; k < in.timeline.steps.size(); ++k)
          steps[in.timeline.steps[k].step].emplace_back(i, k);
      }
      for (auto& [step, list] : steps) {
        Bar b;
        b.first_step = b.last_step = step;
        b.start_ns = INT64_MAX;
        b.end_ns = INT64_MIN;
        b.ranks = static_cast<int32_t>(list.size());
        std::vector<int64_t> d;
        for (const auto& [i, k] : list) {
          const StepSpan& s = m.inputs[i].timeline.steps[k];
          const StepNote& note = parts[part_of_input[i]].notes[k];
          b.start_ns = std::min(b.start_ns, s.start_ns);
          b.end_ns = std::max(b.end_ns, s.end_ns);
          d.push_back(s.end_ns - s.start_ns);
          if (s.end_ns - s.start_ns >= b.slowest_ns) {
            if (s.end_ns - s.start_ns > b.slowest_ns || b.slowest_label.empty())
              b.slowest_label = InputLabel(m.inputs[i]);
            b.slowest_ns = s.end_ns - s.start_ns;
          }
          b.lag_ns = std::max(b.lag_ns, note.lag_ns);
          b.slowest |= note.slowest;
        }
        std::sort(d.begin(), d.end());
        const size_t n = d.size();
        b.median_ns = n % 2 ? d[n / 2] : d[n / 2 - 1] + (d[n / 2] - d[n / 2 - 1]) / 2;
        nr.bars.push_back(std::move(b));
      }
      std::vector<Row> rows;
      rows.push_back(std::move(nr));
      for (size_t i : members)
        if (own.count(i)) rows.push_back(rank_row(i));
      blocks.push_back({lo, std::move(rows)});
    }
  }
  std::stable_sort(blocks.begin(), blocks.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  int64_t last_node = INT64_MIN;
  for (auto& [first, rows] : blocks)
    for (Row& row : rows) {
      row.first_of_node = row.node != last_node;
      last_node = row.node;
      a.rows.push_back(std::move(row));
    }
  // Rows past `max_rank_rows` in a list of unranked inputs or of one log's
  // workers: only the dead and the slowest stay, the rest become one line.
  auto add_bounded = [&](std::vector<std::pair<Row, int64_t>> rows, std::string_view what) {
    if (rows.size() <= lim.max_rank_rows) {
      for (auto& [row, lag] : rows) a.rows.push_back(std::move(row));
      return;
    }
    std::vector<size_t> slow;
    for (size_t k = 0; k < rows.size(); ++k)
      if (rows[k].second > 0 && !rows[k].first.dead) slow.push_back(k);
    std::stable_sort(slow.begin(), slow.end(),
                     [&](size_t x, size_t y) { return rows[x].second > rows[y].second; });
    if (slow.size() > lim.slowest_ranks) slow.resize(lim.slowest_ranks);
    std::set<size_t> keep(slow.begin(), slow.end());
    size_t dead = 0;
    for (size_t k = 0; k < rows.size(); ++k)
      if (rows[k].first.dead && dead < lim.max_dead_rows) {
        keep.insert(k);
        ++dead;
      }
    for (size_t k : keep) a.rows.push_back(std::move(rows[k].first));
    Row more;
    more.kind = RowKind::kMore;
    more.label = absl::StrCat("\xE2\x80\xA6 ", rows.size() - keep.size(), " more ", AbslView(what));
    more.detail = "not drawn: neither dead nor among the slowest (see the Inputs table)";
    a.rows.push_back(std::move(more));
  };
  {
    std::vector<std::pair<Row, int64_t>> rows;
    for (size_t i : unranked)
      rows.emplace_back(rank_row(i), part_of_input[i] >= 0 ? parts[part_of_input[i]].total_lag_ns : 0);
    add_bounded(std::move(rows), "unranked inputs");
  }

  // Run event logs: the scheduler and each worker.
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const InputModel& in = m.inputs[i];
    if (in.skipped || in.timeline.tracks.empty()) continue;
    std::vector<std::pair<Row, int64_t>> workers;
    for (size_t t = 0; t < in.timeline.tracks.size(); ++t) {
      const formats::TrackTimeline& tr = in.timeline.tracks[t];
      Row row;
      row.kind = tr.rank ? RowKind::kWorker : RowKind::kScheduler;
      row.label = absl::StrCat(InputLabel(in), " \xC2\xB7 ", tr.name);
      row.detail = in.path;
      row.span_ns = in.span_ns;
      row.first_of_node = t == 0;
      const int p = part_of_track[i][t];
      for (size_t k = 0; k < tr.steps.size(); ++k)
        row.bars.push_back(BarOf(tr.steps[k], p >= 0 ? &parts[p].notes[k] : nullptr));
      if (tr.failed_at_ns) {
        row.dead = true;
        row.dead_from_ns = tr.failed_at_ns;
        row.dead_reason = tr.failure;
      } else if (in.has_error) {
        row.dead = true;
        if (!in.rejected && in.span_ns) row.dead_from_ns = in.span_ns->second;
        row.dead_reason = absl::StrCat("input damaged: ", InputErrorReason(in));
      }
      if (!tr.rank) {
        for (const StepSpan& s : tr.steps)
          a.rounds.push_back(RoundEntry{InputLabel(in), s.step, s.start_ns, s.end_ns, s.survivors, s.total});
        a.rows.push_back(std::move(row));
      } else {
        a.workers += 1;
        workers.emplace_back(std::move(row), p >= 0 ? parts[p].total_lag_ns : 0);
      }
    }
    add_bounded(std::move(workers), "workers");
  }

  // ---- Bins, and the x range.
  const size_t cap = std::clamp<size_t>(lim.max_bars / std::max<size_t>(a.rows.size(), 1), 8,
                                        lim.max_bars_per_row);
  for (Row& row : a.rows) {
    if (row.bars.size() > cap) {
      BinBars(&row.bars, cap);
      a.binned = true;
    }
  }
  a.time_ns = m.span_ns;
  for (const Row& row : a.rows) {
    auto extend = [&](int64_t lo, int64_t hi) {
      if (!a.time_ns) a.time_ns = std::make_pair(lo, hi);
      a.time_ns->first = std::min(a.time_ns->first, lo);
      a.time_ns->second = std::max(a.time_ns->second, hi);
    };
    for (const Bar& b : row.bars) extend(b.start_ns, b.end_ns);
    if (row.dead_from_ns) extend(*row.dead_from_ns, *row.dead_from_ns);
  }
  return a;
}

}  // namespace tracemill::report
