#pragma once
// What every subcommand that runs a job shares: the exit-status table of
// --help, and the counts behind the summary line on stderr.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/output/manifest.h"

namespace tracemill::tools::cli {

// The "Exit status:" footer of `tracemill --help` and of each subcommand's.
extern const char kExitCodesHelp[];

// InputCounts: the inputs of a run summed for its summary line.
struct InputCounts {
  size_t inputs = 0;        // inputs counted
  int with_errors = 0;      // of them, with a non-OK status
  uint64_t events_read = 0;
  uint64_t events_written = 0;
  uint64_t events_dropped = 0;  // all reasons
  // With `skip_other_shards`: the inputs left out because another shard
  // reports them, though this one read them (for its time ranges of their
  // outputs, or to learn their output), and those shards, ascending.
  size_t read_for_others = 0;
  std::vector<int> other_owners;
};

// CountInputs sums the inputs of `s`, files skipped as no trace left out
// (the manifest's totals.inputs less inputs_skipped). With
// `skip_other_shards`, inputs that another shard reports (`owner_shard` >= 0)
// are left out too.
InputCounts CountInputs(const pipeline::RunSummary& s, bool skip_other_shards);

// FailedOutputs: the outputs of a run that could not be written.
struct FailedOutputs {
  size_t count = 0;
  std::string note;  // ", N could not be written", or "" when none failed
};

// CountFailedOutputs returns the outputs of `s` with an error and the
// summary line's note on them.
FailedOutputs CountFailedOutputs(const pipeline::RunSummary& s);

// PrintOutputLines writes one stderr line per output of `s` (path, events,
// bytes), each starting with `prefix` ("tracemill", "tracemill csp").
void PrintOutputLines(const char* prefix, const pipeline::RunSummary& s);

}  // namespace tracemill::tools::cli
