#pragma once
// One output's merge cut into ranges that merge on their own, on any thread.
//
// KWayMerger (kway_merger.h) is one tree of losers over the run heads: an output's
// merge runs on one core. RangeCutter cuts the same order into consecutive
// ranges: each range has a bound B, a key (aligned ts, tie, run index), and
// holds, of every run, its events below B that no earlier range took. Every
// event of a range sorts before every event of the next one, so merging
// each range alone (MergeRange::ForEach, the KWayMerger's comparison) and
// writing the ranges in order gives exactly the KWayMerger's order.
//
// Cutting is serial and cheap: a run in memory is cut by position (a
// galloping search over its keys; no event is visited). A spilled run can
// only be read in order, so its events below B are copied into the range
// (with their rest bytes). B is the smallest of the runs' keys some events
// (`ahead`) past their positions: for a spilled run, the key after the
// `ahead` events it copied; its copies at or above the final B go back to
// it for the next range. `ahead` starts at `target_events` / (active runs)
// and is doubled or halved as the last range came out short or long (runs
// whose times barely overlap give a few events each), and halved while the
// runs in memory would give more than twice `target_events`; the copies
// also stop at `max_copy_bytes` in all. B is never below the smallest head
// (and its run's events of the same key), so every range holds an event.
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "formats/common/event.h"
#include "merge/loser_tree.h"
#include "merge/sorted_run.h"

namespace tracemill::merge {

// RangeBound: a position in the merged order of an output's runs: the key
// (aligned ts, tie, run index), as KWayMerger compares them.
struct RangeBound {
  int64_t ts_ns;
  uint64_t tie;
  int run;
};

// MergeRange: the events of one range, per run (cut by RangeCutter).
// Events of runs in memory point into their runs; copies of spilled runs'
// events (and their rest bytes) are the range's own, valid until the range
// is cut again.
class MergeRange {
 public:
  // ForEach calls `f(int run, const formats::Event& e)` for every event of
  // the range in merge order. Not thread-safe on one range; ranges are
  // independent.
  template <typename F>
  void ForEach(F&& f);
  // Events in the range.
  size_t size() const { return size_; }

 private:
  friend class RangeCutter;
  struct Segment {
    int run;
    int64_t shift_ns;
    const SortKey* keys;  // in order; keys[i].index indexes `events`
    size_t n;
    const formats::Event* events;
  };
  struct Copies {  // a spilled run's events in this range
    std::vector<SortKey> keys;
    std::vector<formats::Event> events;
    std::string rest;
  };
  // Prefetch: as SortedRun::Next, an event a few ahead of `i` in `s` and
  // the first rest bytes of a nearer one (sorted order visits the events
  // out of memory order).
  static void Prefetch(const Segment& s, size_t i) {
    if (i + 8 < s.n) __builtin_prefetch(&s.events[s.keys[i + 8].index]);
    if (i + 4 < s.n) {
      const formats::Event& ahead = s.events[s.keys[i + 4].index];
      for (uint32_t off = 0; off < ahead.rest_len && off < 4 * 64; off += 64) __builtin_prefetch(ahead.rest + off);
    }
  }
  // HeadAt: segment `seg`'s key at position `pos`, or its done key.
  MergeHead HeadAt(uint32_t seg, size_t pos) const;

  std::vector<Segment> segments_;
  std::vector<Copies> copies_;  // per run; used by spilled runs only
  size_t size_ = 0;
  // ForEach's: leaf i is segment i, at position pos_[i].
  LoserTree tree_;
  std::vector<MergeHead> heads_;
  std::vector<size_t> pos_;
};

// RangeCutter: opened SortedRuns (and their clock shifts) -> MergeRange...
class RangeCutter {
 public:
  // `runs` are borrowed, opened, and read only through the cutter from
  // here on; `shifts_ns` is empty or one per run, as KWayMerger's.
  // `target_events` >= 1.
  RangeCutter(std::vector<SortedRun*> runs, std::vector<int64_t> shifts_ns, size_t target_events,
              size_t max_copy_bytes);

  // Next cuts the next range into `*range` (its earlier events dropped).
  // Returns false, with `*range` empty, once every run is done.
  bool Next(MergeRange* range);

 private:
  struct Carry {  // a spilled run's event given back by a lowered bound
    SortKey key;
    formats::Event e;
    std::string rest;
  };
  bool HasNext(int r) const { return !carry_[r].empty() || !runs_[r]->done(); }
  // The bound of run r's next event (HasNext(r)), or of its key at `i`.
  RangeBound Head(int r) const;
  RangeBound At(int r, const SortKey& k) const;
  // The bound from the runs in memory: the smallest of their keys `ahead`
  // events on.
  RangeBound Choose(size_t ahead) const;
  // TakeSpilled copies run r's next event into `c` (rest as an offset).
  void TakeSpilled(int r, MergeRange::Copies& c);
  // GiveBack moves run r's copies at or above `b` back to its carry.
  void GiveBack(int r, MergeRange::Copies& c, const RangeBound& b);
  // EndInMemory: the first position of memory run r at or above `b`.
  size_t EndInMemory(int r, const RangeBound& b) const;

  std::vector<SortedRun*> runs_;
  std::vector<int64_t> shifts_;
  const size_t target_;
  const size_t max_copy_bytes_;
  std::vector<std::deque<Carry>> carry_;
  size_t ahead_ = 0;  // how far ahead the runs look (0: not yet set)
};

// RangeLess: whether `a` sorts before `b` in the merged order.
inline bool RangeLess(const RangeBound& a, const RangeBound& b) {
  if (a.ts_ns != b.ts_ns) return a.ts_ns < b.ts_ns;
  if (a.tie != b.tie) return a.tie < b.tie;
  return a.run < b.run;
}

// AlignedKeyTs: a key's ts as the merge compares it (metadata stays first).
inline int64_t AlignedKeyTs(int64_t ts_ns, int64_t shift_ns) { return ts_ns == INT64_MIN ? INT64_MIN : ts_ns + shift_ns; }

inline MergeHead MergeRange::HeadAt(uint32_t seg, size_t pos) const {
  const Segment& s = segments_[seg];
  if (pos == s.n) return MergeHead::Done(s.run, seg);
  const SortKey& k = s.keys[pos];
  return {AlignedKeyTs(k.ts_ns, s.shift_ns), k.tie, s.run, seg};
}

template <typename F>
void MergeRange::ForEach(F&& f) {
  if (segments_.size() == 1) {
    const Segment& s = segments_[0];
    for (size_t i = 0; i < s.n; ++i) {
      Prefetch(s, i);
      f(s.run, s.events[s.keys[i].index]);
    }
    return;
  }
  heads_.clear();
  for (uint32_t i = 0; i < segments_.size(); ++i) heads_.push_back(HeadAt(i, 0));
  tree_.Reset(heads_);
  pos_.assign(segments_.size(), 0);
  while (!tree_.Done()) {
    const uint32_t seg = tree_.Top().slot;
    const Segment& s = segments_[seg];
    const size_t pos = pos_[seg]++;
    Prefetch(s, pos);
    f(s.run, s.events[s.keys[pos].index]);
    tree_.ReplaceTop(HeadAt(seg, pos + 1));
  }
}

}  // namespace tracemill::merge
