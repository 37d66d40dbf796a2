#include "merge/clock_offsets.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tracemill::merge {
namespace {

using formats::CollectiveDigest;
using formats::CollectiveOp;
using formats::StepSpan;

// At most this many candidate pairs are voted on; past it, A's ops are
// thinned by a fixed stride (deterministic).
constexpr size_t kMaxVotes = size_t{4} << 20;

// Median of `v` (reordered), the mean of the two middle values rounded
// toward the lower one; 0 if empty.
int64_t Median(std::vector<int64_t>& v) {
  if (v.empty()) return 0;
  const size_t n = v.size();
  std::nth_element(v.begin(), v.begin() + n / 2, v.end());
  const int64_t hi = v[n / 2];
  if (n % 2) return hi;
  const int64_t lo = *std::max_element(v.begin(), v.begin() + n / 2);
  return lo + (hi - lo) / 2;
}

// Robust spread: 1.4826 x the median absolute residual (ns).
int64_t Spread(const std::vector<int64_t>& diffs, int64_t center) {
  std::vector<int64_t> r;
  r.reserve(diffs.size());
  for (int64_t d : diffs) r.push_back(std::llabs(d - center));
  return Median(r) * 14826 / 10000;
}

// The prior: the median difference of same-numbered steps' starts and
// ends, and the search it allows (0.45 x the median step length).
struct Prior {
  int64_t offset_ns = 0;
  int64_t search_ns = 0;
  bool from_steps = false;
};

Prior StepPrior(const std::vector<StepSpan>* a, const std::vector<StepSpan>* b, const MatchOptions& opts) {
  Prior p;
  p.search_ns = opts.search_ns;
  if (!a || !b || a->empty() || b->empty()) return p;
  std::map<int64_t, const StepSpan*> by_step;
  for (const StepSpan& s : *a) by_step[s.step] = &s;
  std::vector<int64_t> diffs, lengths;
  for (const StepSpan& s : *b) {
    auto it = by_step.find(s.step);
    if (it == by_step.end()) continue;
    diffs.push_back(s.start_ns - it->second->start_ns);
    diffs.push_back(s.end_ns - it->second->end_ns);
    lengths.push_back(std::max<int64_t>(0, s.end_ns - s.start_ns));
  }
  if (diffs.empty()) return p;
  p.from_steps = true;
  p.offset_ns = Median(diffs);
  p.search_ns = std::max(opts.min_step_search_ns, Median(lengths) * 45 / 100);
  return p;
}

// A candidate pair: the difference of end times and the two ops.
struct Vote {
  int64_t diff;
  uint32_t a, b;  // indices into the digests' ops
};

// The ops of each (group, kind) key both digests have, by the key's text.
std::vector<std::pair<std::vector<uint32_t>, std::vector<uint32_t>>> SharedKeys(const CollectiveDigest& a,
                                                                                const CollectiveDigest& b) {
  std::map<std::string_view, std::pair<std::vector<uint32_t>, std::vector<uint32_t>>> by_key;
  for (uint32_t i = 0; i < a.ops.size(); ++i) by_key[a.keys[a.ops[i].key]].first.push_back(i);
  for (uint32_t i = 0; i < b.ops.size(); ++i) by_key[b.keys[b.ops[i].key]].second.push_back(i);
  std::vector<std::pair<std::vector<uint32_t>, std::vector<uint32_t>>> shared;
  for (auto& [key, ops] : by_key)
    if (!ops.first.empty() && !ops.second.empty()) shared.push_back(std::move(ops));
  return shared;
}

// MatchBySeq: pairs with the same key and Kineto `Seq`.
std::vector<int64_t> MatchBySeq(const CollectiveDigest& a, const CollectiveDigest& b) {
  std::map<std::pair<std::string_view, int64_t>, int64_t> end_of;
  for (const CollectiveOp& o : a.ops)
    if (o.seq >= 0) end_of.emplace(std::pair(std::string_view(a.keys[o.key]), o.seq), o.end_ns);
  std::vector<int64_t> diffs;
  for (const CollectiveOp& o : b.ops) {
    if (o.seq < 0) continue;
    auto it = end_of.find(std::pair(std::string_view(b.keys[o.key]), o.seq));
    if (it != end_of.end()) diffs.push_back(o.end_ns - it->second);
  }
  return diffs;
}

// Votes: every pair of shared-key ops within `search` of the prior.
std::vector<Vote> CollectVotes(const CollectiveDigest& a, const CollectiveDigest& b, const Prior& prior,
                               PairEstimate* e) {
  auto shared = SharedKeys(a, b);
  size_t total = 0;
  for (auto& [ia, ib] : shared) {
    e->shared_a += ia.size();
    e->shared_b += ib.size();
    total += ia.size() * ib.size();
  }
  // Ops are sorted by end time, so a window over B per op of A; when even
  // the windows are too many, every stride-th op of A votes.
  std::vector<Vote> votes;
  for (size_t stride = 1;; stride *= 2) {
    votes.clear();
    for (auto& [ia, ib] : shared) {
      size_t lo = 0;
      for (size_t k = 0; k < ia.size(); k += stride) {
        const int64_t x = a.ops[ia[k]].end_ns;
        while (lo < ib.size() && b.ops[ib[lo]].end_ns < x + prior.offset_ns - prior.search_ns) ++lo;
        for (size_t j = lo; j < ib.size() && b.ops[ib[j]].end_ns <= x + prior.offset_ns + prior.search_ns; ++j)
          votes.push_back(Vote{b.ops[ib[j]].end_ns - x, ia[k], ib[j]});
      }
    }
    if (votes.size() <= kMaxVotes || stride >= total) break;
  }
  std::sort(votes.begin(), votes.end(),
            [](const Vote& x, const Vote& y) { return x.diff != y.diff ? x.diff < y.diff : x.a != y.a ? x.a < y.a : x.b < y.b; });
  return votes;
}

// The densest window of votes (width 2 x tolerance): [begin, end) into
// `votes`, and the count of the best window at least 4 x tolerance away.
struct Mode {
  size_t begin = 0, end = 0;
  size_t rival = 0;
};

Mode DensestWindow(const std::vector<Vote>& votes, int64_t tol, int64_t prior) {
  Mode m;
  auto center = [&](size_t i, size_t j) { return votes[i].diff + (votes[j - 1].diff - votes[i].diff) / 2; };
  std::vector<std::pair<size_t, size_t>> windows;  // (begin, end) of every maximal start
  for (size_t i = 0, j = 0; i < votes.size(); ++i) {
    if (j < i) j = i;
    while (j < votes.size() && votes[j].diff - votes[i].diff <= 2 * tol) ++j;
    windows.emplace_back(i, j);
    const size_t n = j - i, best = m.end - m.begin;
    if (n > best || (n == best && n > 0 && std::llabs(center(i, j) - prior) < std::llabs(center(m.begin, m.end) - prior))) {
      m.begin = i;
      m.end = j;
    }
  }
  if (m.end == m.begin) return m;
  const int64_t c = center(m.begin, m.end);
  for (auto [i, j] : windows)
    if (std::llabs(center(i, j) - c) > 4 * tol) m.rival = std::max(m.rival, j - i);
  return m;
}

// OneToOne: pairs within `tol` of `mode`, closest first, each op used once.
std::vector<int64_t> OneToOne(const std::vector<Vote>& votes, int64_t mode, int64_t tol) {
  std::vector<const Vote*> near;
  for (const Vote& v : votes)
    if (std::llabs(v.diff - mode) <= tol) near.push_back(&v);
  std::stable_sort(near.begin(), near.end(),
                   [&](const Vote* x, const Vote* y) { return std::llabs(x->diff - mode) < std::llabs(y->diff - mode); });
  std::vector<bool> used_a, used_b;
  std::vector<int64_t> diffs;
  for (const Vote* v : near) {
    if (used_a.size() <= v->a) used_a.resize(v->a + 1);
    if (used_b.size() <= v->b) used_b.resize(v->b + 1);
    if (used_a[v->a] || used_b[v->b]) continue;
    used_a[v->a] = used_b[v->b] = true;
    diffs.push_back(v->diff);
  }
  return diffs;
}

// Finish: offset, spread and confidence from matched differences.
void Conclude(std::vector<int64_t> diffs, PairEstimate* e) {
  e->found = !diffs.empty();
  e->matched = static_cast<uint32_t>(diffs.size());
  if (!e->found) return;
  std::vector<int64_t> sorted = diffs;
  e->offset_ns = Median(sorted);
  e->spread_ns = Spread(diffs, e->offset_ns);
  if (e->matched < kMinConfidentMatches)
    e->why = absl::StrCat("only ", e->matched, " collective instances matched (", kMinConfidentMatches, " needed)");
  else if (e->spread_ns > kMaxConfidentSpreadNs)
    e->why = absl::StrCat("matched ends spread ", e->spread_ns / 1000, " us (at most ", kMaxConfidentSpreadNs / 1000,
                          " us allowed)");
  e->confident = e->why.empty();
}

}  // namespace

PairEstimate EstimatePairOffset(const CollectiveDigest& a, const CollectiveDigest& b, const std::vector<StepSpan>* steps_a,
                                const std::vector<StepSpan>* steps_b, const MatchOptions& opts) {
  PairEstimate e;
  if (a.empty() || b.empty()) {
    e.why = "no collective operations";
    return e;
  }
  if (std::vector<int64_t> seq = MatchBySeq(a, b); !seq.empty()) {
    e.by_seq = true;
    Conclude(std::move(seq), &e);
    return e;
  }
  const Prior prior = StepPrior(steps_a, steps_b, opts);
  const std::vector<Vote> votes = CollectVotes(a, b, prior, &e);
  if (votes.empty()) {
    e.why = e.shared_a ? "no collective instances end within the search range of each other"
                       : "no collective operation (process group and kind) in common";
    return e;
  }
  const Mode m = DensestWindow(votes, opts.tolerance_ns, prior.offset_ns);
  std::vector<int64_t> window;
  for (size_t i = m.begin; i < m.end; ++i) window.push_back(votes[i].diff);
  Conclude(OneToOne(votes, Median(window), opts.tolerance_ns), &e);
  if (e.confident && 2 * m.rival > m.end - m.begin) {
    e.confident = false;
    e.why = absl::StrCat("ambiguous: another offset ", m.rival, " instances support is as likely",
                         prior.from_steps ? "" : " (no step markers in common to choose)");
  }
  return e;
}

namespace {

// Place: domain `d` measured against solved domain `s` by `e`.
void Place(const ClockSolution& sol, int s, int d, const PairEstimate& e, DomainOffset* out) {
  const DomainOffset& base = sol.domains[s];
  out->estimated = true;
  out->confident = e.confident && base.confident;
  out->shift_ns = base.shift_ns - e.offset_ns;
  out->matched = e.matched;
  out->spread_ns = e.spread_ns + (s == sol.reference ? 0 : base.spread_ns);
  out->via = s;
  out->note = e.confident ? "" : e.why;
}

// CheckCycles measures each solved domain against the next solved one and
// flags edges that contradict the solution.
void CheckCycles(const std::vector<ClockDomain>& domains, const MatchOptions& opts, ClockSolution* sol) {
  std::vector<int> solved;
  for (int d = 0; d < static_cast<int>(domains.size()); ++d)
    if (d != sol->reference && sol->domains[d].confident) solved.push_back(d);
  for (size_t k = 0; k + 1 < solved.size(); ++k) {
    const int d = solved[k], d2 = solved[k + 1];
    DomainOffset &x = sol->domains[d], &y = sol->domains[d2];
    if (x.via == d2 || y.via == d) continue;  // the tree's own edge
    PairEstimate e = EstimatePairOffset(*domains[d].digest, *domains[d2].digest, domains[d].steps, domains[d2].steps, opts);
    if (!e.found || e.matched < kMinConfidentMatches) continue;
    const int64_t predicted = x.shift_ns - y.shift_ns;  // d2's clock minus d's, as solved
    const int64_t residual = e.offset_ns - predicted;
    if (std::llabs(residual) <= std::max(opts.tolerance_ns, 4 * (x.spread_ns + y.spread_ns + e.spread_ns))) continue;
    const std::string why = absl::StrCat("contradicts ", domains[d].name, " vs ", domains[d2].name, ": measured ",
                                         e.offset_ns / 1000, " us apart, ", predicted / 1000,
                                         " us through the reference");
    sol->warnings.push_back(
        absl::StrCat("clock offsets ", why, "; neither is confident (--align-clocks auto applies neither, on both)"));
    for (DomainOffset* o : {&x, &y}) {
      o->confident = false;
      o->note = why;
    }
  }
}

}  // namespace

ClockSolution SolveClockOffsets(const std::vector<ClockDomain>& domains, const MatchOptions& opts) {
  ClockSolution sol;
  const int n = static_cast<int>(domains.size());
  sol.domains.resize(n);
  for (int d = 0; d < n; ++d) {
    if (domains[d].digest && !domains[d].digest->empty()) {
      if (sol.reference < 0) sol.reference = d;
    } else {
      sol.domains[d].note = domains[d].probe_rank == INT64_MAX
                                ? std::string("no collective operations in its inputs (none has a rank)")
                                : absl::StrCat("no collective operations in its lowest rank (", domains[d].probe_rank, ")");
    }
  }
  if (sol.reference < 0) return sol;
  sol.domains[sol.reference] = DomainOffset{true, true, 0, 0, 0, -1, ""};
  std::vector<int> solved = {sol.reference};
  std::vector<PairEstimate> best(n);  // the best unconfident edge so far, for `on`
  std::vector<int> best_from(n, -1);
  std::vector<int> tries(n, 0);
  // Against the reference first, then through domains solved since (the
  // latest first), at most kMaxTries edges per domain, until none moves.
  constexpr int kMaxTries = 4;
  std::vector<std::vector<int>> tried(n);
  for (bool progress = true; progress;) {
    progress = false;
    for (int d = 0; d < n; ++d) {
      if (sol.domains[d].estimated || !domains[d].digest || domains[d].digest->empty()) continue;
      std::vector<int> order = {solved[0]};
      for (size_t k = solved.size(); k-- > 1;) order.push_back(solved[k]);
      for (int s : order) {
        if (tries[d] >= kMaxTries) break;
        if (std::find(tried[d].begin(), tried[d].end(), s) != tried[d].end()) continue;
        tried[d].push_back(s);
        ++tries[d];
        PairEstimate e = EstimatePairOffset(*domains[s].digest, *domains[d].digest, domains[s].steps, domains[d].steps, opts);
        if (e.confident) {
          Place(sol, s, d, e, &sol.domains[d]);
          solved.push_back(d);
          progress = true;
          break;
        }
        if (e.found && (!best[d].found || e.matched > best[d].matched)) {
          best[d] = e;
          best_from[d] = s;
        }
        if (!best[d].found) sol.domains[d].note = e.why;
      }
    }
  }
  for (int d = 0; d < n; ++d)
    if (!sol.domains[d].estimated && best[d].found) Place(sol, best_from[d], d, best[d], &sol.domains[d]);
  CheckCycles(domains, opts, &sol);
  return sol;
}

}  // namespace tracemill::merge
