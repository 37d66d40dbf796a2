#include "report/timeline_rows.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "formats/common/status_macros.h"
#include "report/html_text.h"
#include "report/input_labels.h"

namespace tracemill::report {
namespace {

using formats::StepSpan;

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

// The row of input `i` (ranked or not): its own steps, dead if it has an error.
Row InputRow(const RowSources& src, size_t i) {
  const InputModel& in = src.model.inputs[i];
  Row row;
  row.kind = in.rank ? RowKind::kRank : RowKind::kUnranked;
  row.label = InputLabel(in);
  row.detail = in.path;
  row.node = in.rank ? *in.rank / src.gpus_per_node : -1;
  row.span_ns = in.span_ns;
  row.steps = &in.timeline.steps;
  row.step_notes = src.parts.of_input[i] >= 0 ? src.parts.list[src.parts.of_input[i]].notes.data() : nullptr;
  if (in.has_error) {
    row.dead = true;
    if (!in.rejected && in.span_ns) row.dead_from_ns = in.span_ns->second;
    row.dead_reason = absl::StrCat(in.rejected ? "input rejected: " : "input damaged: ", InputErrorReason(in));
  }
  return row;
}

Row MissingRow(const RowSources& src, RankRange r) {
  Row row;
  row.kind = RowKind::kMissing;
  row.label = RangeLabel(r.lo, r.hi);
  row.detail = absl::StrCat(GroupedCount(static_cast<uint64_t>(r.count())), r.hi > r.lo ? " ranks" : " rank",
                            " without an input");
  row.node = r.lo / src.gpus_per_node;
  row.dead = src.missing_are_dead;
  row.dead_reason = absl::StrCat(row.dead ? "missing: " : "", MissingReason(r, src.world_size, row.dead));
  return row;
}

// (input, index into its steps): one rank's span of a step on a node row.
using InputStep = std::pair<size_t, size_t>;

// The bar of one step on a node row: earliest start, latest end, median and
// slowest of the node's ranks that have the step.
Bar NodeStepBar(const RowSources& src, int64_t step, const std::vector<InputStep>& list) {
  Bar b;
  b.first_step = b.last_step = step;
  b.start_ns = INT64_MAX;
  b.end_ns = INT64_MIN;
  b.ranks = static_cast<int32_t>(list.size());
  std::vector<int64_t> d;
  for (const auto& [i, k] : list) {
    const StepSpan& s = src.model.inputs[i].timeline.steps[k];
    const StepNote& note = *src.parts.InputNote(i, k);
    b.start_ns = std::min(b.start_ns, s.start_ns);
    b.end_ns = std::max(b.end_ns, s.end_ns);
    d.push_back(s.end_ns - s.start_ns);
    if (s.end_ns - s.start_ns >= b.slowest_ns) {
      if (s.end_ns - s.start_ns > b.slowest_ns || b.slowest_label.empty())
        b.slowest_label = InputLabel(src.model.inputs[i]);
      b.slowest_ns = s.end_ns - s.start_ns;
    }
    b.lag_ns = std::max(b.lag_ns, note.lag_ns);
    b.slowest |= note.slowest;
  }
  b.median_ns = MedianNs(std::move(d));
  return b;
}

// The row of node `node`, whose ranked inputs are `members` (in rank order).
Row NodeRow(const RowSources& src, int64_t node, const std::vector<size_t>& members) {
  const std::vector<InputModel>& inputs = src.model.inputs;
  Row nr;
  nr.kind = RowKind::kNode;
  nr.label = absl::StrCat("node ", node);
  nr.node = node;
  const int64_t lo = *inputs[members.front()].rank, hi = *inputs[members.back()].rank;
  nr.detail =
      absl::StrCat(GroupedCount(members.size()), members.size() == 1 ? " input" : " inputs", ", ", RangeLabel(lo, hi));
  for (size_t i : members) {
    const InputModel& in = inputs[i];
    if (in.span_ns) {
      if (!nr.span_ns) nr.span_ns = in.span_ns;
      nr.span_ns->first = std::min(nr.span_ns->first, in.span_ns->first);
      nr.span_ns->second = std::max(nr.span_ns->second, in.span_ns->second);
    }
  }
  nr.node_inputs = members;  // its bars: NodeBars, one row at a time (BuildAndBinBars)
  return nr;
}

// NodeBars: a node row's bars, one per step number of its ranks `members`.
std::vector<Bar> NodeBars(const RowSources& src, const std::vector<size_t>& members) {
  std::map<int64_t, std::vector<InputStep>> steps;  // step -> (input, k)
  for (size_t i : members) {
    const InputModel& in = src.model.inputs[i];
    for (size_t k = 0; k < in.timeline.steps.size(); ++k) steps[in.timeline.steps[k].step].emplace_back(i, k);
  }
  std::vector<Bar> bars;
  bars.reserve(steps.size());
  for (const auto& [step, list] : steps) bars.push_back(NodeStepBar(src, step, list));
  return bars;
}

// InputOrder: the inputs without tracks, ranked ones by (rank, path).
struct InputOrder {
  std::vector<size_t> ranked;
  std::vector<size_t> unranked;
};

InputOrder OrderInputs(const RunModel& m) {
  InputOrder order;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const InputModel& in = m.inputs[i];
    if (in.skipped || !in.timeline.tracks.empty()) continue;
    (in.rank ? order.ranked : order.unranked).push_back(i);
  }
  std::stable_sort(order.ranked.begin(), order.ranked.end(), [&](size_t x, size_t y) {
    if (*m.inputs[x].rank != *m.inputs[y].rank) return *m.inputs[x].rank < *m.inputs[y].rank;
    return m.inputs[x].path < m.inputs[y].path;
  });
  return order;
}

// With rows per node, the ranks kept on a row of their own: the first
// `max_dead_rows` dead ones, and the `slowest_ranks` with the largest lag.
std::set<size_t> RanksWithOwnRow(const RowSources& src, const std::vector<size_t>& ranked,
                                 const AnalysisLimits& limits) {
  std::set<size_t> own;
  size_t dead_rows = 0;
  for (size_t i : ranked)
    if (src.model.inputs[i].has_error && dead_rows < limits.max_dead_rows) {
      own.insert(i);
      ++dead_rows;
    }
  std::vector<size_t> by_lag;
  for (size_t i : ranked)
    if (src.parts.InputLagNs(i) > 0) by_lag.push_back(i);
  std::stable_sort(by_lag.begin(), by_lag.end(),
                   [&](size_t x, size_t y) { return src.parts.InputLagNs(x) > src.parts.InputLagNs(y); });
  if (by_lag.size() > limits.slowest_ranks) by_lag.resize(limits.slowest_ranks);
  own.insert(by_lag.begin(), by_lag.end());
  return own;
}

// RankBlock: rows that stay together, placed by their first rank.
struct RankBlock {
  int64_t first_rank = 0;
  std::vector<Row> rows;
};

RankBlock OneRowBlock(int64_t first_rank, Row row) {
  RankBlock block{first_rank, {}};
  block.rows.push_back(std::move(row));
  return block;
}

// One block per node: the node's row, then its ranks with a row of their own.
std::vector<RankBlock> NodeBlocks(const RowSources& src, const std::vector<size_t>& ranked,
                                  const AnalysisLimits& limits) {
  const std::set<size_t> own = RanksWithOwnRow(src, ranked, limits);
  std::map<int64_t, std::vector<size_t>> nodes;
  for (size_t i : ranked) nodes[*src.model.inputs[i].rank / src.gpus_per_node].push_back(i);
  std::vector<RankBlock> blocks;
  for (const auto& [node, members] : nodes) {
    RankBlock block{*src.model.inputs[members.front()].rank, {}};
    block.rows.push_back(NodeRow(src, node, members));
    for (size_t i : members)
      if (own.count(i)) block.rows.push_back(InputRow(src, i));
    blocks.push_back(std::move(block));
  }
  return blocks;
}

// Appends the blocks' rows in rank order, marking each node's first row.
void AppendBlocks(std::vector<RankBlock> blocks, Analysis* a) {
  std::stable_sort(blocks.begin(), blocks.end(),
                   [](const RankBlock& x, const RankBlock& y) { return x.first_rank < y.first_rank; });
  int64_t last_node = INT64_MIN;
  for (RankBlock& block : blocks)
    for (Row& row : block.rows) {
      row.first_of_node = row.node != last_node;
      last_node = row.node;
      a->rows.push_back(std::move(row));
    }
}

// A row and the total lag that ranks it among the slowest.
struct RowWithLag {
  Row row;
  int64_t lag_ns = 0;
};

// Rows past `max_rank_rows` in a list of unranked inputs or of one log's
// workers: only the dead and the slowest stay, the rest become one line.
void AddBounded(std::vector<RowWithLag> rows, std::string_view what, const AnalysisLimits& limits, Analysis* a) {
  if (rows.size() <= limits.max_rank_rows) {
    for (RowWithLag& r : rows) a->rows.push_back(std::move(r.row));
    return;
  }
  std::vector<size_t> slow;
  for (size_t k = 0; k < rows.size(); ++k)
    if (rows[k].lag_ns > 0 && !rows[k].row.dead) slow.push_back(k);
  std::stable_sort(slow.begin(), slow.end(), [&](size_t x, size_t y) { return rows[x].lag_ns > rows[y].lag_ns; });
  if (slow.size() > limits.slowest_ranks) slow.resize(limits.slowest_ranks);
  std::set<size_t> keep(slow.begin(), slow.end());
  size_t dead = 0;
  for (size_t k = 0; k < rows.size(); ++k)
    if (rows[k].row.dead && dead < limits.max_dead_rows) {
      keep.insert(k);
      ++dead;
    }
  for (size_t k : keep) a->rows.push_back(std::move(rows[k].row));
  Row more;
  more.kind = RowKind::kMore;
  more.label = absl::StrCat("\xE2\x80\xA6 ", GroupedCount(rows.size() - keep.size()), " more ", AbslView(what));
  more.detail = "not drawn: neither dead nor among the slowest (see the Inputs table)";
  a->rows.push_back(std::move(more));
}

// The row of track `t` of run event log `i`: the scheduler's rounds or a
// worker's steps, dead from its failure (or from the input's damage).
Row TrackRow(const RowSources& src, size_t i, size_t t) {
  const InputModel& in = src.model.inputs[i];
  const formats::TrackTimeline& tr = in.timeline.tracks[t];
  Row row;
  row.kind = tr.rank ? RowKind::kWorker : RowKind::kScheduler;
  row.label = absl::StrCat(InputLabel(in), " \xC2\xB7 ", tr.name);
  row.detail = in.path;
  row.span_ns = in.span_ns;
  row.first_of_node = t == 0;
  const int p = src.parts.of_track[i][t];
  row.steps = &tr.steps;
  row.step_notes = p >= 0 ? src.parts.list[p].notes.data() : nullptr;
  if (tr.failed_at_ns) {
    row.dead = true;
    row.dead_from_ns = tr.failed_at_ns;
    row.dead_reason = tr.failure;
  } else if (in.has_error) {
    row.dead = true;
    if (!in.rejected && in.span_ns) row.dead_from_ns = in.span_ns->second;
    row.dead_reason = absl::StrCat("input damaged: ", InputErrorReason(in));
  }
  return row;
}

// Run event logs: the scheduler (and its rounds) and each worker, bounded.
void AddRunEventLogRows(const RowSources& src, const AnalysisLimits& limits, Analysis* a) {
  const std::vector<InputModel>& inputs = src.model.inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputModel& in = inputs[i];
    if (in.skipped || in.timeline.tracks.empty()) continue;
    std::vector<RowWithLag> workers;
    for (size_t t = 0; t < in.timeline.tracks.size(); ++t) {
      const formats::TrackTimeline& tr = in.timeline.tracks[t];
      Row row = TrackRow(src, i, t);
      if (!tr.rank) {
        for (const StepSpan& s : tr.steps)
          a->rounds.push_back(RoundEntry{InputLabel(in), s.step, s.start_ns, s.end_ns, s.survivors, s.total});
        a->rows.push_back(std::move(row));
      } else {
        a->workers += 1;
        const int p = src.parts.of_track[i][t];
        workers.push_back(RowWithLag{std::move(row), p >= 0 ? src.parts.list[p].total_lag_ns : 0});
      }
    }
    AddBounded(std::move(workers), "workers", limits, a);
  }
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

// Builds the bars of rows whose steps are pending and bins those of rows
// with more than fit (`max_bars` / rows, clamped), one row at a time.
void BuildAndBinBars(const RowSources& src, const AnalysisLimits& lim, Analysis* a) {
  const size_t cap =
      std::clamp<size_t>(lim.max_bars / std::max<size_t>(a->rows.size(), 1), 8, lim.max_bars_per_row);
  for (Row& row : a->rows) {
    if (!row.node_inputs.empty()) {
      row.bars = NodeBars(src, row.node_inputs);
      std::vector<size_t>().swap(row.node_inputs);
    }
    if (row.steps) {
      row.bars.reserve(row.steps->size());
      for (size_t k = 0; k < row.steps->size(); ++k)
        row.bars.push_back(BarOf((*row.steps)[k], row.step_notes ? &row.step_notes[k] : nullptr));
      row.steps = nullptr;
      row.step_notes = nullptr;
    }
    if (row.bars.size() > cap) {
      BinBars(&row.bars, cap);
      row.bars.shrink_to_fit();
      a->binned = true;
    }
  }
}

}  // namespace

std::string MissingReason(RankRange r, int64_t world_size, bool dead) {
  if (!dead)
    return absl::StrCat("not in the inputs: distributedInfo.world_size is ", GroupedCount(world_size),
                        " and no input failed");
  return absl::StrCat("no input for ", r.hi > r.lo ? "these ranks" : "this rank", "; distributedInfo.world_size is ",
                      GroupedCount(world_size), " and some inputs failed");
}

void AddTimelineRows(const RowSources& src, const std::vector<RankRange>& missing,
                     const AnalysisLimits& limits, Analysis* a) {
  const InputOrder order = OrderInputs(src.model);
  a->rank_inputs = order.ranked.size();
  a->collapsed = order.ranked.size() > limits.max_rank_rows;

  std::vector<RankBlock> blocks;
  for (const RankRange& r : missing) blocks.push_back(OneRowBlock(r.lo, MissingRow(src, r)));
  if (!a->collapsed) {
    for (size_t i : order.ranked) blocks.push_back(OneRowBlock(*src.model.inputs[i].rank, InputRow(src, i)));
  } else {
    for (RankBlock& b : NodeBlocks(src, order.ranked, limits)) blocks.push_back(std::move(b));
  }
  AppendBlocks(std::move(blocks), a);

  std::vector<RowWithLag> unranked;
  for (size_t i : order.unranked) unranked.push_back(RowWithLag{InputRow(src, i), src.parts.InputLagNs(i)});
  AddBounded(std::move(unranked), "unranked inputs", limits, a);
  AddRunEventLogRows(src, limits, a);
  BuildAndBinBars(src, limits, a);
}

}  // namespace tracemill::report
