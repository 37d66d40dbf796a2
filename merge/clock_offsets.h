#pragma once
// Clock offsets between hosts, measured from collective operations.
//
// Ranks on one host share a clock; ranks on different hosts do not (host
// and CUPTI clocks differ by hundreds of microseconds to milliseconds across
// nodes even under NTP). A collective ends at nearly the same instant on
// every member (a ring all-reduce within microseconds), so the differences
// of matched instances' end times measure the offset between two clocks.
//
// Matching never trusts ordinals alone: traces miss instances (sampled
// traces, profiler windows that start at different steps, files cut short),
// and HTA's two sampled ranks (tests/data/hta/trace_filter) hold 10 NCCL
// kernels each of which the k-th are not the same operation. So for two
// digests A and B (formats/common/collectives.h):
//   1. Where both ops of a (process group, kind) carry Kineto's `Seq`, pairs
//      are matched by Seq: exact identity.
//   2. Otherwise every pair of ops with the same (group, kind) whose end
//      times differ by at most `search_ns` around a prior (the median
//      difference of the two ranks' step markers `ProfilerStep#N` with the
//      same N, else 0) votes for its difference; the densest window of
//      width 2 x `tolerance_ns` wins (ties: nearest the prior). With a step
//      prior the search is limited to 0.45 x the median step length, so a
//      window shifted by whole steps (periodic collectives) cannot win.
//   3. Pairs within `tolerance_ns` of that mode are matched one to one,
//      closest first. The offset is the median of their differences, the
//      spread 1.4826 x the median absolute residual (a robust sigma).
// An estimate is confident when it has at least kMinConfidentMatches
// matches, a spread of at most kMaxConfidentSpreadNs, and (voting only) the
// best mode has at least twice the votes of any other mode at least
// 4 x tolerance away (otherwise it is ambiguous).
//
// Domains (the ranks of one node) are solved against the reference domain
// (the one holding the lowest rank): directly when their probes (each
// domain's lowest rank) share collectives, else through a domain already
// solved (a tree over the graph of domains that share groups). Each solved
// domain is then checked against one more solved domain; a measured edge
// that disagrees with the tree's offsets beyond the tolerance is a
// contradiction around a cycle, reported and made unconfident on both ends.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "formats/common/collectives.h"
#include "formats/common/timeline.h"

namespace tracemill::merge {

inline constexpr uint32_t kMinConfidentMatches = 8;
inline constexpr int64_t kMaxConfidentSpreadNs = 20'000;

// MatchOptions: how far and how tightly offsets are searched (ns).
struct MatchOptions {
  int64_t search_ns = 500'000'000;  // +- around the prior, without step markers
  int64_t tolerance_ns = 50'000;    // a pair matches within this of the mode
  int64_t min_step_search_ns = 5'000'000;  // the search with step markers is at least this
};

// PairEstimate: the offset of B's clock against A's.
struct PairEstimate {
  bool found = false;          // at least one pair matched
  bool confident = false;      // see the file comment
  bool by_seq = false;         // matched by Kineto `Seq`
  int64_t offset_ns = 0;       // B's clock minus A's (add -offset_ns to B's times to put them on A's clock)
  uint32_t matched = 0;        // instances matched
  int64_t spread_ns = 0;       // robust spread of the residuals
  uint32_t shared_a = 0, shared_b = 0;  // ops of a (group, kind) the other also has
  std::string why;             // when not confident: one line
};

// EstimatePairOffset measures B against A. `steps_a`/`steps_b` (may be
// null) give the step prior.
PairEstimate EstimatePairOffset(const formats::CollectiveDigest& a, const formats::CollectiveDigest& b,
                                const std::vector<formats::StepSpan>* steps_a,
                                const std::vector<formats::StepSpan>* steps_b,
                                const MatchOptions& opts = MatchOptions{});

// ClockDomain: one clock domain (a node) as the solver sees it: its probe's
// digest and steps.
struct ClockDomain {
  std::string name;                               // "node 3"
  int64_t probe_rank = 0;                         // the domain's lowest rank
  const formats::CollectiveDigest* digest = nullptr;
  const std::vector<formats::StepSpan>* steps = nullptr;
};

// DomainOffset: the solution for one domain.
struct DomainOffset {
  bool estimated = false;   // an offset was found (the reference: always)
  bool confident = false;   // every edge on its path to the reference is confident
  int64_t shift_ns = 0;     // add to the domain's times to put them on the reference clock
  uint32_t matched = 0;     // of the edge that placed it
  int64_t spread_ns = 0;    // of that edge (the path's: the sum)
  int via = -1;             // the domain it was measured against (-1: the reference itself)
  std::string note;         // why not estimated or not confident, one line
};

// ClockSolution: offsets for every domain, against `reference`.
struct ClockSolution {
  int reference = -1;  // index into the domains; -1 if no domain has collectives
  std::vector<DomainOffset> domains;
  std::vector<std::string> warnings;  // contradictions around cycles, ...
};

// SolveClockOffsets solves `domains` (sorted by probe rank: the reference
// is the first with collectives).
ClockSolution SolveClockOffsets(const std::vector<ClockDomain>& domains, const MatchOptions& opts = MatchOptions{});

}  // namespace tracemill::merge
