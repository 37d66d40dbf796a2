#include "pipeline/follow/probe.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "formats/common/status_macros.h"
#include "pipeline/convert/decode_stage.h"
#include "pipeline/inputs/smdebug_inputs.h"

namespace tracemill::pipeline::follow {

FileProbe ProbeFile(const std::string& path, const ConvertOptions& opts, const RankMatcher& ranks,
                    uint64_t max_inflated_bytes) {
  FileProbe p;
  // The record convert would make of this file alone: an smdebug file
  // becomes a one-file node (its rank from the node id).
  std::vector<InputRecord> records(1);
  records[0].path = path;
  records[0].from_directory = true;
  GroupSmdebugInputs(&records, opts.no_system_metrics);
  if (records.size() != 1 || records[0].skipped) {
    p.note = records.empty() ? "an smdebug marker" : "skipped";
    return p;
  }
  InputRecord& r = records[0];
  std::unique_ptr<merge::SortedRun> run;
  try {
    DecodeWorker worker;
    DecodeOptions o = DecodeOptionsOf(opts);
    run = ReadAndDecode(r, worker, ranks, max_inflated_bytes, o);
  } catch (const std::exception& e) {
    p.result = FileProbe::Result::kIncomplete;
    p.note = absl::StrCat("internal error: ", e.what());
    return p;
  }
  p.rank = r.rank;
  p.world_size = r.world_size;
  p.node = r.node;
  p.smdebug_kind = r.smdebug_kind;
  p.format = r.format;
  if (!r.status.ok()) p.note = std::string(StdView(r.status.message()));
  if (!run || r.rejected) {
    // Not a trace (yet): an empty file, a README, or the first bytes of a
    // trace that do not tell its format.
    p.result = r.status.ok() || absl::IsInvalidArgument(r.status) ? FileProbe::Result::kNotTrace
                                                                  : FileProbe::Result::kIncomplete;
    if (p.note.empty()) p.note = r.skipped ? "not a trace" : "nothing decoded";
    return p;
  }
  p.result = r.status.ok() ? FileProbe::Result::kComplete : FileProbe::Result::kIncomplete;
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (const formats::Event& e : run->data().events) {
    if (e.phase == 'M' || !(e.flags & formats::kHasTs)) continue;
    int64_t start = e.ts_ns;
    if ((e.flags & formats::kHasSpan) && e.phase == 'E' && __builtin_sub_overflow(e.ts_ns, e.dur_ns, &start))
      start = std::numeric_limits<int64_t>::min();
    lo = std::min(lo, start);
    hi = std::max(hi, start);
    ++p.events;
  }
  p.has_events = p.events > 0;
  if (p.has_events) {
    p.min_start_ns = lo;
    p.max_start_ns = hi;
  }
  return p;
}

}  // namespace tracemill::pipeline::follow
