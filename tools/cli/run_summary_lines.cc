#include "tools/cli/run_summary_lines.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"

namespace tracemill::tools::cli {

const char kExitCodesHelp[] =
    "Exit status:\n"
    "  0  every input converted\n"
    "  1  internal error, or an output could not be written\n"
    "  2  usage error (bad command line, no input file at all, -o not writable or in use)\n"
    "  3  some inputs were rejected or damaged; every other input was converted\n"
    "  130 / 143  interrupted by SIGINT / SIGTERM; no partial output left (convert: rerun with --resume)\n";

InputCounts CountInputs(const pipeline::RunSummary& s, bool skip_other_shards) {
  InputCounts c;
  for (const auto& r : s.inputs) {
    if (r.skipped) continue;  // not a trace: named on the "skipped N files" line, not an input
    if (skip_other_shards && r.owner_shard >= 0) {  // another shard reports it
      ++c.read_for_others;
      c.other_owners.push_back(r.owner_shard);
      continue;
    }
    ++c.inputs;
    c.events_read += r.events_read;
    c.events_written += r.events_written;
    c.events_dropped += r.dropped.Total();
    c.with_errors += !r.status.ok();
  }
  std::sort(c.other_owners.begin(), c.other_owners.end());
  c.other_owners.erase(std::unique(c.other_owners.begin(), c.other_owners.end()), c.other_owners.end());
  return c;
}

FailedOutputs CountFailedOutputs(const pipeline::RunSummary& s) {
  FailedOutputs f;
  for (const auto& o : s.outputs) f.count += !o.error.empty();
  if (f.count) f.note = absl::StrCat(", ", f.count, " could not be written");
  return f;
}

void PrintOutputLines(const char* prefix, const pipeline::RunSummary& s) {
  for (const auto& o : s.outputs)
    std::fprintf(stderr, "%s:   %s: %llu events, %llu bytes\n", prefix, o.path.c_str(),
                 static_cast<unsigned long long>(o.events), static_cast<unsigned long long>(o.bytes));
}

}  // namespace tracemill::tools::cli
