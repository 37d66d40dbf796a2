#include "merge/range_cutter.h"

#include <algorithm>
#include <climits>
#include <utility>

namespace tracemill::merge {
namespace {

constexpr RangeBound kEndBound{INT64_MAX, UINT64_MAX, INT_MAX};

// The least bound above `b`: every event of run b.run keyed like `b`
// sorts below it.
RangeBound JustAbove(const RangeBound& b) { return RangeBound{b.ts_ns, b.tie, b.run + 1}; }

}  // namespace

RangeCutter::RangeCutter(std::vector<SortedRun*> runs, std::vector<int64_t> shifts_ns, size_t target_events,
                         size_t max_copy_bytes)
    : runs_(std::move(runs)),
      shifts_(std::move(shifts_ns)),
      target_(std::max<size_t>(1, target_events)),
      max_copy_bytes_(max_copy_bytes),
      carry_(runs_.size()) {
  shifts_.resize(runs_.size(), 0);
}

RangeBound RangeCutter::At(int r, const SortKey& k) const {
  return RangeBound{AlignedKeyTs(k.ts_ns, shifts_[r]), k.tie, r};
}

RangeBound RangeCutter::Head(int r) const {
  if (!carry_[r].empty()) return At(r, carry_[r].front().key);
  return runs_[r]->spilled() ? At(r, runs_[r]->PeekKey()) : At(r, runs_[r]->keys()[runs_[r]->pos()]);
}

RangeBound RangeCutter::Choose(size_t ahead) const {
  RangeBound b = kEndBound;
  for (int r = 0; r < static_cast<int>(runs_.size()); ++r) {
    const SortedRun& run = *runs_[r];
    if (!run.spilled() && run.pos() + ahead < run.end()) {
      const RangeBound c = At(r, run.keys()[run.pos() + ahead]);
      if (RangeLess(c, b)) b = c;
    }
  }
  return b;
}

void RangeCutter::TakeSpilled(int r, MergeRange::Copies& c) {
  SortKey key;
  formats::Event e;
  std::string_view rest;
  std::string carried;
  if (!carry_[r].empty()) {
    Carry& front = carry_[r].front();
    key = front.key;
    e = front.e;
    carried = std::move(front.rest);
    rest = carried;
    carry_[r].pop_front();
  } else {
    key = runs_[r]->PeekKey();
    const formats::Event* next = runs_[r]->Next();
    e = *next;
    rest = std::string_view(next->rest, next->rest_len);
  }
  key.index = static_cast<uint32_t>(c.events.size());
  // The rest bytes' offset in `c.rest` until the range is complete (the
  // string may move while it grows).
  e.rest = reinterpret_cast<const char*>(uintptr_t{c.rest.size()});
  c.rest.append(rest);
  c.keys.push_back(key);
  c.events.push_back(e);
}

void RangeCutter::GiveBack(int r, MergeRange::Copies& c, const RangeBound& b) {
  size_t keep = c.keys.size();
  while (keep > 0 && !RangeLess(At(r, c.keys[keep - 1]), b)) --keep;
  for (size_t i = c.keys.size(); i-- > keep;) {
    formats::Event e = c.events[i];
    const size_t off = reinterpret_cast<uintptr_t>(e.rest);
    std::string rest = c.rest.substr(off, e.rest_len);
    e.rest = nullptr;
    carry_[r].push_front(Carry{c.keys[i], e, std::move(rest)});
  }
  if (keep < c.keys.size()) c.rest.resize(reinterpret_cast<uintptr_t>(c.events[keep].rest));
  c.keys.resize(keep);
  c.events.resize(keep);
}

size_t RangeCutter::EndInMemory(int r, const RangeBound& b) const {
  const SortKey* keys = runs_[r]->keys();
  const size_t n = runs_[r]->end();
  size_t lo = runs_[r]->pos();  // keys[lo - 1] < b (or lo = pos)
  if (lo >= n || !RangeLess(At(r, keys[lo]), b)) return lo;
  // Gallop: keys[lo] < b; find hi with keys[hi] >= b (or n).
  size_t step = 1, hi = lo + 1;
  while (hi < n && RangeLess(At(r, keys[hi]), b)) {
    lo = hi;
    step *= 2;
    hi = std::min(n, lo + step);
  }
  // keys[lo] < b, keys[hi] >= b or hi == n.
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    (RangeLess(At(r, keys[mid]), b) ? lo : hi) = mid;
  }
  return hi;
}

bool RangeCutter::Next(MergeRange* range) {
  const int k = static_cast<int>(runs_.size());
  range->segments_.clear();
  range->size_ = 0;
  range->copies_.resize(runs_.size());
  RangeBound head = kEndBound;
  int active = 0;
  for (int r = 0; r < k; ++r) {
    if (!HasNext(r)) continue;
    ++active;
    if (const RangeBound h = Head(r); RangeLess(h, head)) head = h;
  }
  if (active == 0) return false;
  const RangeBound floor = JustAbove(head);  // the smallest head is always in the range
  // How far ahead the runs in memory look: target / active to start with,
  // then as the last range asked (runs whose times barely overlap give a
  // few events each); halved while they would give more than twice the
  // target.
  size_t ahead = std::clamp<size_t>(ahead_ ? ahead_ : target_ / static_cast<size_t>(active), 1, target_);
  RangeBound b;
  while (true) {
    b = Choose(ahead);
    if (RangeLess(b, floor)) b = floor;
    size_t in_memory = 0;
    for (int r = 0; r < k; ++r)
      if (!runs_[r]->spilled()) in_memory += EndInMemory(r, b) - runs_[r]->pos();
    if (in_memory <= 2 * target_ || ahead == 1) break;
    ahead /= 2;
  }

  // Spilled runs: copy their events below b, at most `ahead` of each and
  // an even share of max_copy_bytes_ (then b comes down to that run's next
  // key, as a run in memory's key `ahead` on); the copies at or above the
  // final b go back to their runs.
  size_t spilled_active = 0;
  for (int r = 0; r < k; ++r) spilled_active += runs_[r]->spilled() && HasNext(r);
  const size_t share = max_copy_bytes_ / std::max<size_t>(1, spilled_active);
  for (int r = 0; r < k; ++r) {
    if (!runs_[r]->spilled()) continue;
    MergeRange::Copies& c = range->copies_[r];
    c.keys.clear();
    c.events.clear();
    c.rest.clear();
    size_t bytes = 0;
    while (HasNext(r)) {
      const RangeBound h = Head(r);
      if (!RangeLess(h, b)) break;
      if ((c.keys.size() >= ahead || bytes >= share) && !RangeLess(h, floor)) {
        b = h;
        break;
      }
      TakeSpilled(r, c);
      bytes += c.events.back().rest_len + sizeof(formats::Event);
    }
  }
  for (int r = 0; r < k; ++r)
    if (runs_[r]->spilled()) GiveBack(r, range->copies_[r], b);
  for (int r = 0; r < k; ++r) {
    SortedRun& run = *runs_[r];
    if (run.spilled()) {
      MergeRange::Copies& c = range->copies_[r];
      for (formats::Event& e : c.events) e.rest = c.rest.data() + reinterpret_cast<uintptr_t>(e.rest);
      if (!c.keys.empty())
        range->segments_.push_back({r, shifts_[r], c.keys.data(), c.keys.size(), c.events.data()});
    } else {
      const size_t from = run.pos(), to = EndInMemory(r, b);
      if (to > from) range->segments_.push_back({r, shifts_[r], run.keys() + from, to - from, run.events()});
      run.SkipTo(to);
    }
    if (!range->segments_.empty() && range->segments_.back().run == r) range->size_ += range->segments_.back().n;
  }
  if (range->size_ < target_ / 2) ahead_ = std::min(target_, ahead * 2);
  else if (range->size_ > 2 * target_) ahead_ = std::max<size_t>(1, ahead / 2);
  else ahead_ = ahead;
  return true;
}

}  // namespace tracemill::merge
