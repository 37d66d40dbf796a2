#pragma once
// Analysis: RunModel -> what the report draws (RunModel -> Analysis): the
// timeline's rows, stragglers per step, dead ranks, rounds of run event logs.
//
// Rows. One row per rank, ordered by rank and banded by node
// (node = rank / gpus_per_node), then unranked inputs, then one row per track
// of each multi-actor input (a run event log's scheduler and workers).
// Ranks that a job's world_size says exist but no input holds are "missing";
// consecutive missing ranks share one row ("ranks 2–127"). More than
// `max_rank_rows` unranked inputs, or workers of one log, keep only their
// dead and slowest rows plus one "… N more" line.
//
// Row-collapsing rule (bounds the page for 4,096 ranks): when more than
// `max_rank_rows` (64) ranks have an input, ranks are drawn one row per node
// instead (each step a bar from the node's earliest start to its latest end,
// its tooltip the median and the slowest rank), and these ranks keep a row
// of their own under their node: every dead rank (input rejected or damaged,
// at most `max_dead_rows`), and the `slowest_ranks` (16) ranks with the
// largest total lag behind the step medians. Missing ranks stay collapsed in
// ranges. A row with more steps than fit (`max_bars` / rows, at most
// `max_bars_per_row`, at least 8) draws bins of consecutive steps, one bar
// each from the first start to the last end, highlighted if any step in it
// is.
//
// Stragglers. Per step, among the participants that have it (ranks with
// steps; or the workers of one run event log), the median duration
// (the mean of the two middle ones for an even count, rounded down to the
// ns), and the three slowest with their lag (duration - median). The slowest
// participant of a step is its straggler, highlighted on the timeline and in
// the table, only when it is more than 5 % and more than 1 ms behind the
// median (`IsStraggler`): a rank 0.05 % slower than its only peer is noise,
// not a straggler. A ranks' step with collectives matched across ranks
// (`tables.collectives.steps`, convert --tables) takes its straggler from
// them instead: the rank that kept the others waiting longest at the step's
// collectives, when that time is beyond the same thresholds (every rank's
// step ends at the same all-reduce, so the late rank's step is not longer). The table keeps the `max_straggler_steps` (200) steps
// with the largest lag, in step order.
//
// Dead. An input whose status is an error: rejected (nothing converted) ->
// the whole row; damaged (converted up to the damage) -> red from its last
// event. A run event log's worker (or scheduler) with a failed action -> red
// from the failure.
//
// Missing ranks (world_size says they exist, no input holds them) are "not
// given" (grey, not dead) when no input failed: a partial sample, e.g. 2 of
// a 128-rank job's files. When some input failed (rejected or damaged),
// they are "missing" and counted as dead (red, hatched): the inputs are then
// not what the job wrote, and a rank without an input cannot be told from
// one whose file was lost or unreadable (a file's rank is known only if it
// could be read, or its name gives it).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/run_model.h"

namespace tracemill::report {

// The straggler threshold: more than this share of the median (percent)...
inline constexpr int64_t kStragglerMinPercent = 5;
// ...and more than this lag.
inline constexpr int64_t kStragglerMinLagNs = 1000000;

// IsStraggler: `lag_ns` behind a step's median `median_ns` is beyond both
// thresholds (lag > 5 % of the median and lag > 1 ms).
bool IsStraggler(int64_t lag_ns, int64_t median_ns);

struct AnalysisLimits {
  size_t max_rank_rows = 64;
  size_t slowest_ranks = 16;
  size_t max_dead_rows = 128;
  size_t max_bars = 12000;
  size_t max_bars_per_row = 200;
  size_t max_straggler_steps = 200;
};

// Bar: one step (or a bin of consecutive steps) of one row.
struct Bar {
  int64_t first_step = 0, last_step = 0;  // equal unless binned
  int64_t start_ns = 0, end_ns = 0;
  int32_t survivors = -1, total = -1;     // scheduler rounds
  int64_t median_ns = -1;                 // the step's median duration; -1: none
  int64_t lag_ns = 0;                     // duration - median (max over a bin)
  bool slowest = false;                   // a straggler (`IsStraggler`), highlighted
  int32_t ranks = 0;                      // node rows: ranks that have this step
  std::string slowest_label;              // node rows: the slowest of them
  int64_t slowest_ns = 0;                 // node rows: its duration
};

enum class RowKind { kRank, kNode, kMissing, kUnranked, kScheduler, kWorker, kMore };

struct StepNote;  // step_compare.h

// Row: one row of the timeline.
struct Row {
  RowKind kind = RowKind::kRank;
  std::string label;       // "rank 3", "node 2", "ranks 6–7", "example.jsonl · worker 2"
  std::string detail;      // tooltip line under the label (path, ranks of a node)
  int64_t node = -1;       // node band, -1 for none
  bool first_of_node = false;
  std::optional<std::pair<int64_t, int64_t>> span_ns;  // activity: first to last event
  std::vector<Bar> bars;
  // Steps whose bars are not built yet (nullptr: `bars` is complete). An
  // input's or a track's row gets one bar per step, each with the note of
  // the same index in `step_notes` (nullptr: none); they are built and
  // binned one row at a time once the number of rows is known
  // (AddTimelineRows), so a report of 16 x 4,096 steps (a follow job's
  // refresh) never holds a bar for every step at once.
  const std::vector<formats::StepSpan>* steps = nullptr;
  const StepNote* step_notes = nullptr;
  // A node row's ranked inputs, whose bars (one per step number, its ranks'
  // earliest start to latest end) are built the same way, later.
  std::vector<size_t> node_inputs;
  bool dead = false;
  std::optional<int64_t> dead_from_ns;  // dead: nullopt = the whole row
  std::string dead_reason;  // why dead; for a missing row not dead, why not given
};

// Straggler: one of the slowest participants of a step.
struct Straggler {
  std::string label;
  int64_t dur_ns = 0;
  int64_t lag_ns = 0;
};

// StepStragglers: one row of the straggler table.
struct StepStragglers {
  std::string group;  // "" for ranks, else the run event log's label
  int64_t step = 0;
  int32_t participants = 0;
  int64_t median_ns = 0;
  std::vector<Straggler> slowest;  // at most 3, slowest first
  bool straggler = false;          // slowest.front() (or late_label's rank) is beyond `IsStraggler`
  bool all_equal = false;          // every participant's step lasted as long: no slowest
  // A ranks' step that holds collectives matched across ranks: its
  // straggler is the rank that kept the others waiting longest there
  // (`late_ns`: the skews of the `times_last` of `instances` it was last
  // at), not the longest step, which in synchronous training is rather one
  // of the ranks that waited.
  bool by_collectives = false;
  std::string late_label;
  int64_t late_ns = 0, times_last = 0, instances = 0;
};

// DeadEntry: one row of the dead-ranks table.
struct DeadEntry {
  std::string label;   // "rank 5", "ranks 6–7", "example.jsonl · worker 2"
  std::string kind;    // "rejected", "damaged", "missing", "failed"; "not given"
  std::string reason;
  std::optional<int64_t> from_ns;  // nullopt: from the start (or never ran)
  std::string path;    // the input, if any
  int64_t ranks = 1;   // ranks this entry covers
};

// RoundEntry: one round of a run event log.
struct RoundEntry {
  std::string log;  // the input's label
  int64_t round = 0;
  int64_t start_ns = 0, end_ns = 0;
  int32_t survivors = -1, total = -1;
};

struct Analysis {
  std::vector<Row> rows;
  bool collapsed = false;        // rows per node (see the file comment)
  size_t rank_inputs = 0;        // ranked inputs (rows before collapsing)
  bool binned = false;           // some row draws bins of steps
  std::optional<std::pair<int64_t, int64_t>> time_ns;  // the timeline's x range
  std::vector<StepStragglers> stragglers;
  size_t straggler_steps_omitted = 0;
  size_t steps_with_straggler = 0;  // among the steps compared (kept or not)
  int runs = 1;                  // the ranks' inputs are this many different runs (compared apart)
  std::vector<DeadEntry> dead;
  int64_t dead_ranks = 0;        // ranks counted in `dead` (ranges expanded)
  bool missing_are_dead = false; // some input failed: missing ranks are dead
  std::vector<DeadEntry> not_given;  // missing ranges when no input failed
  int64_t not_given_ranks = 0;   // ranks counted in `not_given`
  std::vector<RoundEntry> rounds;
  int64_t world_size = 0;        // largest distributedInfo.world_size, 0 if none
  std::vector<int64_t> world_sizes;  // distinct values seen (more than one: a conflict)
  int64_t ranks_seen = 0;        // distinct ranks with an input
  int64_t nodes_seen = 0;        // distinct rank / gpus_per_node
  int64_t missing_ranks = 0;     // below world_size without an input (dead or not given)
  int64_t steps_seen = 0;        // distinct step numbers over ranks
  int64_t workers = 0;           // worker tracks of run event logs
  int gpus_per_node = 8;
  bool cpu_only = false;         // no input lists a GPU: ranks per node, no GPUs
};

// Analyze computes the analysis of `m` (see the file comment for the rules):
// the steps compared (step_compare.h), ranks counted, dead entries, the
// rows (timeline_rows.h), then bins and the x range.
Analysis Analyze(const RunModel& m, const AnalysisLimits& limits = {});

}  // namespace tracemill::report
