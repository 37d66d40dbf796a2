#include "pipeline/table_facts.h"

namespace tracemill::pipeline {

analysis::InputFacts InputFactsOf(const InputRecord& r) {
  analysis::InputFacts f;
  f.index = r.index;
  f.rank = r.rank;
  f.node = r.node;
  f.format = r.format;
  f.smdebug_kind = r.smdebug_kind;
  f.steps = r.timeline.steps;
  f.path = r.path;
  f.label = r.label;
  f.output = r.output;
  f.events_read = r.events_read;
  f.events_written = r.events_written;
  f.dropped = r.dropped.Total();
  f.has_span = r.has_span;
  f.first_ts_ns = r.first_ts_ns;
  f.last_ts_ns = r.last_ts_ns;
  f.clock_offset_ns = r.clock_offset_ns;
  f.clock_applied = r.clock_applied;
  f.on_job_clock = !r.clock_unaligned && (!r.clock_decided || r.clock_applied);
  if (!r.status.ok()) f.error = std::string(r.status.message());
  f.reused = r.reused;
  f.skipped = r.skipped;
  f.owner_shard = r.owner_shard;
  return f;
}

analysis::JobFacts JobFactsOf(const RunSummary& s) {
  analysis::JobFacts j;
  j.fingerprint = s.fingerprint;
  j.inputs.reserve(s.inputs.size());
  for (const InputRecord& r : s.inputs) j.inputs.push_back(InputFactsOf(r));
  for (const OutputRecord& o : s.outputs) {
    analysis::OutputFacts f;
    f.path = o.path;
    f.ranks = o.ranks;
    f.inputs = o.inputs.size();
    f.events = o.events;
    f.bytes = o.bytes;
    f.crc32 = o.crc32;
    f.parts = o.parts.size();
    f.error = o.error;
    f.reused = o.reused;
    j.outputs.push_back(std::move(f));
  }
  return j;
}

}  // namespace tracemill::pipeline
