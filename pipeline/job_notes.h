#pragma once
// What a user must know about a finished convert job, said where they look:
// a few lines on the terminal after the summary line, and the notices that
// change the meaning of an output first in manifest.json (`notices`) and on
// the report's first screen.
//
// - Drops by reason, largest first, the largest lost one with its cause and
//   the input that lost most; drops by design (outside a window, not
//   selected, a record that only carried the time base) said as such.
// - Inputs rejected and files skipped, by kind, naming a few files.
// - Notices: inputs that look like different jobs (world sizes that
//   disagree, time spans that do not overlap), mixed time bases (relative
//   times beside epoch times), a rank claimed by several inputs, inputs
//   without a rank, a --ranks list that selects none of the ranks read.
//   Each once, naming the files.
//
// Rules that change the exit status (README, "Errors and exit status"):
// - An input that lost more than half of the events it read, and at least
//   100 (drops of kind kLoss: bad timestamps, malformed events, ...), counts
//   as one with errors.
// - A job none of whose inputs is a trace (every file skipped or rejected as
//   no trace) is a usage error: nothing is written.
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/inputs/input_record.h"
#include "pipeline/output/manifest.h"

namespace tracemill::pipeline {

// kYear2000Ns: an input whose times all come before it (ns since the epoch)
// counts from its own start (a trace with no epoch base), not from the epoch.
inline constexpr int64_t kYear2000Ns = int64_t{946684800} * 1000000000;

// RankRanges: sorted distinct ranks (or trainers) as "0, 5-6, 100", at most
// 8 ranges ("... and 3 more ranges").
std::string RankRanges(const std::vector<int64_t>& ranks);

// MarkMostlyLost gives every input whose kLoss drops exceed half of its
// events read and number at least 100 (and that has no error yet) a
// kDataLoss status saying so.
void MarkMostlyLost(std::vector<InputRecord>* inputs);

// NoTraceAmong: none of `inputs` (those this process reports) is a trace;
// `*why` names what they were ("skipped: 7 not a trace (a.txt, b.txt, c.txt and 4 more)").
bool NoTraceAmong(const std::vector<const InputRecord*>& inputs, std::string* why);

// Notices: the warnings that change the meaning of the outputs of `s`
// (see the file comment), one line each.
std::vector<std::string> Notices(const RunSummary& s);

// SummaryLines: the lines printed after the summary line (without the
// "tracemill: " prefix): drops by reason, rejected and skipped inputs, then
// `s.notices` as warnings.
std::vector<std::string> SummaryLines(const RunSummary& s);

}  // namespace tracemill::pipeline
