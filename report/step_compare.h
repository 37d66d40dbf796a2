#pragma once
// Step comparison, the straggler half of `Analyze` (analysis.h): RunModel ->
// the participants of the comparison, then per step their median and lags
// (Participants -> StepComparison).
//
// A participant is a rank's input (an input without tracks) or a worker
// track of a run event log; a scheduler's rounds are not compared. Steps are
// compared within a group: "" for ranks, else the run event log's label;
// when the ranks' inputs are different runs (epoch time spans that do not
// overlap), "run 1", "run 2", ... (by start): no rank is compared with
// another run's.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/analysis.h"
#include "report/run_model.h"

namespace tracemill::report {

// StepNote: what the comparison found for one step of one participant.
struct StepNote {
  int64_t median_ns = -1;  // the step's median duration; -1: not compared
  int64_t lag_ns = 0;      // duration - median
  bool slowest = false;    // the slowest of its step and a straggler (IsStraggler)
};

// Participant: a rank's input, or a worker track of a run event log.
struct Participant {
  std::string group;  // "" for ranks ("run k" when different runs), else the run event log's label
  std::string label;
  std::optional<int64_t> rank;  // a rank's input: its rank
  const std::vector<formats::StepSpan>* steps = nullptr;  // into the RunModel
  std::vector<StepNote> notes;  // parallel to *steps
  int64_t total_lag_ns = 0;     // sum of the positive lags
  bool input = false;           // a rank's input (not a worker track)
};

// Participants: every participant, and which input or track each one is.
struct Participants {
  std::vector<Participant> list;
  int runs = 1;  // the ranks' inputs are this many different runs
  std::vector<int> of_input;               // input -> index into `list`, -1: none
  std::vector<std::vector<int>> of_track;  // input, track -> index into `list`, -1: none

  // The note on step `k` of input `input`'s own steps; nullptr if the input
  // is no participant.
  const StepNote* InputNote(size_t input, size_t k) const {
    return of_input[input] >= 0 ? &list[of_input[input]].notes[k] : nullptr;
  }
  // The total lag of input `input` (0 if it is no participant).
  int64_t InputLagNs(size_t input) const {
    return of_input[input] >= 0 ? list[of_input[input]].total_lag_ns : 0;
  }
};

// CollectParticipants lists the participants of `m` (skipped inputs left
// out), in input order, each with one empty note per step. The steps it
// points to live in `m`, which must outlive the result.
Participants CollectParticipants(const RunModel& m);

// StepComparison: the straggler table and the count of rank steps.
struct StepComparison {
  std::vector<StepStragglers> stragglers;  // by (group, step)
  size_t steps_omitted = 0;   // steps left out past `max_straggler_steps`
  size_t steps_with_straggler = 0;  // steps whose slowest is a straggler
  int64_t rank_steps = 0;     // distinct step numbers over ranks
};

// CompareSteps compares, for each (group, step) that two or more
// participants have, their durations: it fills every participant's notes
// and total lag, marks the slowest as the step's straggler if `IsStraggler`,
// and returns one table row per such step (the three slowest,
// slowest first, ties in participant order), keeping the
// `limits.max_straggler_steps` rows with the largest lag.
// A ranks' step in `late` (the manifest's tables.collectives.steps) takes
// its straggler from there (analysis.h).
StepComparison CompareSteps(const AnalysisLimits& limits, Participants* parts,
                            const std::vector<TablesModel::Collectives::StepLate>& late = {});

// MedianNs: the median of `durations_ns` (not empty); for an even count the
// mean of the two middle ones, rounded down to the ns.
int64_t MedianNs(std::vector<int64_t> durations_ns);

}  // namespace tracemill::report
