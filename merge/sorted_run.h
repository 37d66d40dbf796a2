#pragma once
// Per-input sort: TraceData -> SortedRun.
//
// Kineto traces are not sorted by ts, not even within one thread (it writes
// CPU ops, then GPU activity, then flows, in sections), so every input gets a
// full sort. We sort compact 24-byte keys `(ts_ns, tie, index)`, not the
// 64-byte events: less data moved, and `index` makes the order total, so the
// result is deterministic whatever the sort algorithm.
//
// Tie-break at equal ts, following Perfetto's trace sorter: `E` before
// anything else (a slice ends before the next one begins), then `X` by longer
// `dur` first (the parent before its children), then input order. Metadata
// (`M`) sorts before every timed event, in input order.
#include <cstdint>
#include <memory>
#include <vector>

#include "formats/common/trace_data.h"

namespace tracemill::merge {

// SortKey: the order of one event inside its run.
struct SortKey {
  int64_t ts_ns;
  uint64_t tie;
  uint32_t index;  // into TraceData::events
};
static_assert(sizeof(SortKey) == 24);

// MakeSortKey computes the key of `e` at position `index` (see file comment).
SortKey MakeSortKey(const formats::Event& e, uint32_t index);

// Returns true if `a` sorts before `b` (ts, then tie, then index).
inline bool KeyLess(const SortKey& a, const SortKey& b) {
  if (a.ts_ns != b.ts_ns) return a.ts_ns < b.ts_ns;
  if (a.tie != b.tie) return a.tie < b.tie;
  return a.index < b.index;
}

// SortedRun: the events of one input in output order, behind `Next()`.
// Owns the TraceData (strings, arena) the events point into.
class SortedRun {
 public:
  // Sort takes the decoded input and returns its run (TraceData -> SortedRun).
  static std::unique_ptr<SortedRun> Sort(std::unique_ptr<formats::TraceData> data);

  // Next returns the next event in order, or nullptr at the end.
  const formats::Event* Next() {
    return pos_ < keys_.size() ? &data_->events[keys_[pos_++].index] : nullptr;
  }
  // Peek returns the key of the next event; only valid if !done().
  const SortKey& PeekKey() const { return keys_[pos_]; }
  bool done() const { return pos_ >= keys_.size(); }
  // Rewind restarts the run from its first event.
  void Rewind() { pos_ = 0; }

  const formats::TraceData& data() const { return *data_; }
  size_t size() const { return keys_.size(); }

 private:
  std::unique_ptr<formats::TraceData> data_;
  std::vector<SortKey> keys_;
  size_t pos_ = 0;
};

}  // namespace tracemill::merge
