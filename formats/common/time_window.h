#pragma once
// Time windows (`--start/--end`, `--start-step/--end-step`) and B/E pairing.
//
// A window keeps the events that overlap it, unclipped, inclusive at both
// ends (smdebug's `get_events` rule): an `X` [ts, ts+dur], a paired `B`/`E`
// the span of its pair (`PairBeginEnd`), any other event its `ts`. Metadata
// (`M`) and events without `ts` are always kept. Times are absolute int64 ns.
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "formats/common/event.h"
#include "formats/common/stats.h"
#include "formats/common/trace_data.h"

namespace tracemill::formats {

// TimeWindow: [start_ns, end_ns], absolute ns since the Unix epoch
// ([start_ns, end_ns) of starts with `by_start`).
struct TimeWindow {
  int64_t start_ns = std::numeric_limits<int64_t>::min();
  int64_t end_ns = std::numeric_limits<int64_t>::max();
  bool by_start = false;
  bool bounded() const {
    return start_ns != std::numeric_limits<int64_t>::min() ||
           end_ns != std::numeric_limits<int64_t>::max();
  }
  // StartOf: where `by_start` places `e` (its `ts`; a paired `E`, its
  // pair's start), saturated at int64's range.
  static int64_t StartOf(const Event& e) {
    int64_t start = e.ts_ns;
    if ((e.flags & kHasSpan) && e.phase == 'E' && __builtin_sub_overflow(e.ts_ns, e.dur_ns, &start))
      start = std::numeric_limits<int64_t>::min();
    return start;
  }
  // Keeps: true if `e` overlaps the window (see the header comment).
  bool Keeps(const Event& e) const {
    if (e.phase == 'M' || !(e.flags & kHasTs)) return true;
    if (by_start) {
      const int64_t start = StartOf(e);
      return start >= start_ns && start < end_ns;
    }
    int64_t lo = e.ts_ns, hi = e.ts_ns;
    // A pair's span can reach 2^63 - 2 ns (PairBeginEnd): saturate.
    if (e.flags & kHasDur) {
      if (__builtin_add_overflow(e.ts_ns, e.dur_ns, &hi)) hi = std::numeric_limits<int64_t>::max();
    } else if (e.flags & kHasSpan) {
      if (e.phase == 'E') {
        if (__builtin_sub_overflow(e.ts_ns, e.dur_ns, &lo)) lo = std::numeric_limits<int64_t>::min();
      } else if (__builtin_add_overflow(e.ts_ns, e.dur_ns, &hi)) {
        hi = std::numeric_limits<int64_t>::max();
      }
    }
    return lo <= end_ns && hi >= start_ns;
  }
};

// ParseTimeArg parses a window bound: decimal microseconds since the epoch
// (`1590461127873222`, `1590461127873222.5`; exact, never through a double)
// or ISO-8601 / RFC 3339 with a zone (`2020-05-26T02:45:27.873222Z`,
// `2020-05-26T04:45:27+02:00`). Returns ns since the epoch, or
// kInvalidArgument naming the accepted forms (a time without zone too).
absl::StatusOr<int64_t> ParseTimeArg(std::string_view text);

// PairBeginEnd matches `B` and `E` events per (pid, tid) in time order (ties
// in input order), as viewers do: an `E` closes the most recent open `B` of
// its thread whatever its name. Both get `kHasSpan` and the pair's length in
// `dur_ns`. A nameless `E` (Horovod writes none) gets its `B`'s name. A `B`
// left open spans to the latest time in the input (viewers draw it to the
// end). A surplus `E` (no open `B`) is removed and counted in `dropped` as
// `unmatched_end`. One warning line each for nameless, open and surplus
// events goes to `warnings`. Events keep their input order.
void PairBeginEnd(TraceData* data, DropCounts* dropped, std::vector<std::string>* warnings);

}  // namespace tracemill::formats
