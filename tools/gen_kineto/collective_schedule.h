#pragma once
// CollectiveSchedule: the true (job-wide) schedule of the NCCL collectives
// of a synchronized job (`--clock-offsets-us`), for testing clock alignment.
//
// Every rank draws its work from its own stream, so no rank can know when
// another launches collective k. The schedule instead fixes each
// collective's true end E_k in advance, from a job-level stream seeded by
// --seed only (every rank runs its own copy of the same stream, so all
// agree), leaving room for the slowest rank the generator can produce:
//
//   release k-1           launch k (<= bound)       E_k
//   |---- rank's work ----|-- launch delay --|-min-|
//   ^ E_{k-1} + J at most                           ^ + slack, jitter +-J
//
// After each collective the autograd thread waits for the kernel's end (a
// stream synchronize), so a rank's work between two collectives starts at
// most J after E_{k-1}, and the bound below (the largest value of every
// draw in rank_writer.cc and rank_events.cc, summed over the most ops the
// step can hold) says how long it can last. A rank that would launch too
// late is a bug in this bound: RankWriter aborts rather than write a
// collective shorter than kMinCollectiveNs.
//
// Times are int64 ns; E_k, jitters and offsets are whole µs, and the
// collective kernel starts on a whole µs, so `ts` and `dur` are exact in
// both --ts formats (integer µs too) and `ts + dur` is the true end plus
// the node's offset exactly.
#include <array>
#include <cstdint>
#include <string_view>

#include "names.h"
#include "rng.h"

namespace tracemill::tools::gen_kineto {

constexpr int64_t kUs = 1000;  // ns per µs

// The step's shape (rank_writer.cc): kLayers layers forward and backward,
// an NCCL collective after every kLayersPerCollective-th backward layer.
inline constexpr int kLayers = 24;
inline constexpr int kLayersPerCollective = 4;
inline constexpr int kCollectivesPerStep = kLayers / kLayersPerCollective;

// JobStartNs: the instant (epoch ns) ranks start from; each rank adds up to
// kStartSpreadNs of its own (RankWriter's constructor).
inline int64_t JobStartNs(uint64_t seed) {
  return 1682725897000000000LL + static_cast<int64_t>(seed % 1000) * 1000000LL * kUs;
}
inline constexpr int64_t kStartSpreadNs = 2000 * kUs + 999;

// SyncCollective: one kind of collective as a synchronized job writes it:
// its kernel (index into kNcclKernels), the c10d annotation on the autograd
// thread and Kineto's `Collective name` arg.
struct SyncCollective {
  int kernel;
  std::string_view annotation;
  std::string_view collective_name;
};
inline constexpr std::array<SyncCollective, 6> kSyncCollectives = {{
    {0, "nccl:all_reduce", "allreduce"},
    {1, "nccl:all_reduce", "allreduce"},
    {2, "nccl:_reduce_scatter_base", "_reduce_scatter_base"},
    {3, "nccl:_all_gather_base", "_allgather_base"},
    {4, "nccl:broadcast", "broadcast"},
    {5, "nccl:all_to_all", "all_to_all"},  // ncclSend/ncclRecv in a group
}};

namespace bound {
// Upper bounds (ns) of the CPU time of each piece of a rank's step: the
// largest value of every draw, the most children and ops. Keep in step with
// rank_writer.cc (a violation aborts the generator, see above).

// Op at `depth`: start gap 6000, memory-instant gap 1500, end gap 8000;
// a leaf's work 30000 (idle 30000 > launch 9000 + runtime call 18000 >
// runtime-only 6000); children: at most 3 at depth 0, 2 at depths 1-2,
// none at 3, each followed by a gap of 3000.
constexpr int64_t OpNs(int depth) {
  constexpr int64_t kSelf = 6000 + 1500 + 8000;
  constexpr int64_t kLeaf = kSelf + 30000;
  if (depth >= 3) return kLeaf;
  const int64_t children = depth == 0 ? 3 : 2;
  const int64_t inner = kSelf + children * (OpNs(depth + 1) + 3000);
  return inner > kLeaf ? inner : kLeaf;
}
inline constexpr int64_t kAnnotationNs = 4000;  // each margin of an Annotated
// evaluate_function: 2000 before its node (an Op at depth 1), 3000 after,
// then 6000 to the next node.
inline constexpr int64_t kBackwardNodeNs = 2000 + OpNs(1) + 3000 + 6000;
// The layers between two collectives: 4 layers of at most 11 nodes.
inline constexpr int64_t kBackwardSpanNs = kLayersPerCollective * 11 * kBackwardNodeNs;
// The collective's annotation opens, then the launch, 20000 later.
inline constexpr int64_t kToLaunchNs = kAnnotationNs + 20000;
// Forward: 24 layers of at most 15 ops at depth 0, each followed by 15000.
inline constexpr int64_t kForwardNs = kLayers * 15 * (OpNs(0) + 15000);
// A step's start to its first collective's launch: the step and forward
// annotations open, the forward, its annotation closes, the backward starts
// 80000 later and its annotation opens, 4 layers, the collective.
inline constexpr int64_t kStepHeadNs =
    2 * kAnnotationNs + kForwardNs + kAnnotationNs + 80000 + kAnnotationNs + kBackwardSpanNs + kToLaunchNs;
// A step's last release to the next step's start: the backward annotation
// closes, the optimizer starts 20000 later (19 ops at depth 1, each followed
// by 5000, inside its annotation), the step annotation closes.
inline constexpr int64_t kStepTailNs = kAnnotationNs + 20000 + 2 * kAnnotationNs + 19 * (OpNs(1) + 5000) + kAnnotationNs;
// A release to the next collective's launch within one backward.
inline constexpr int64_t kMidStepNs = kBackwardSpanNs + kToLaunchNs;
// A rank's start (at most kStartSpreadNs after JobStartNs) to its first
// step (RankWriter::Build: 400 µs).
inline constexpr int64_t kFirstStepNs = kStartSpreadNs + 400 * kUs;

// The numbers: an op tree 0.764 ms, within a backward 11.354 ms, a step's
// tail + head 296.7 ms (the forward's 360 op trees are most of it). A
// rank's typical work is 5-10x less, so every rank waits: collective
// kernels last ~9-13 ms, a step's first ~270 ms (seed 1, 8 ranks).
static_assert(OpNs(0) == 764'000 && kMidStepNs == 11'354'000);
static_assert(kStepHeadNs == 291'890'000 && kStepTailNs == 4'814'500);
}  // namespace bound

// The launch to the kernel's start: 40 µs at most (RankWriter::Launch; the
// NCCL stream is free by then), rounded up to a whole µs.
inline constexpr int64_t kLaunchDelayMaxNs = 41 * kUs;
// The shortest collective kernel the schedule leaves room for.
inline constexpr int64_t kMinCollectiveNs = 20 * kUs;
// Each gap gets up to this much more, drawn job-wide, so that the ends are
// not periodic (a periodic schedule would let a shifted match vote).
inline constexpr int64_t kMaxSlackUs = 2000;

// One collective instance of the job.
struct CollectiveInstance {
  int64_t index = 0;   // k: its position in every rank's sequence (`Seq`)
  int op = 0;          // index into kSyncCollectives
  int64_t end_ns = 0;  // E_k, true time, a whole µs
  bool late = false;   // the late rank (--late-rank) arrives late at this one
};

// A late arrival (--late-rank, --late-us, --late-percent): at a late
// instance the schedule leaves `late_us` more before E_k, and the late rank
// launches its kernel only at LateLaunchNs, the latest instant that still
// leaves kMinCollectiveNs: its kernel starts at least late_us - 35 µs after
// every other rank's (theirs start by E_k - late_us - slack - min - J at the
// latest, see Next). Which instances are late is drawn from a stream of its
// own, so a job without a late rank is written as before.
struct LateArrivals {
  int64_t late_us = 0;
  int percent = 0;
  bool on() const { return late_us > 0 && percent > 0; }
};

// CollectiveSchedule: yields E_0, E_1, ... in order. Every rank makes its
// own copy from the same seed and jitter and gets the same sequence.
class CollectiveSchedule {
 public:
  // `seed`: --seed; `jitter_us`: J, --collective-jitter-us (the schedule
  // leaves room for a release J late and an end J early).
  CollectiveSchedule(uint64_t seed, int64_t jitter_us, LateArrivals late = {})
      : rng_(seed * 0x100000001b3ULL + 0x5851f42d4c957f2dULL),
        late_rng_(seed * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL),
        jitter_ns_(jitter_us * kUs),
        end_ns_(JobStartNs(seed)),
        late_(late) {}

  // LateLaunchNs: when the late rank launches at late instance `c` (true
  // time): its kernel starts within kLaunchDelayMaxNs and still lasts
  // kMinCollectiveNs before the earliest end E_k - J.
  int64_t LateLaunchNs(const CollectiveInstance& c) const {
    return c.end_ns - jitter_ns_ - kMinCollectiveNs - kLaunchDelayMaxNs;
  }

  // The next instance, k = 0, 1, ...
  CollectiveInstance Next() {
    CollectiveInstance c;
    c.index = next_++;
    c.op = static_cast<int>(rng_.Below(kSyncCollectives.size()));
    const bool first_of_step = c.index % kCollectivesPerStep == 0;
    const int64_t work_ns = !first_of_step ? bound::kMidStepNs
                            : c.index == 0 ? bound::kFirstStepNs + bound::kStepHeadNs
                                           : bound::kStepTailNs + bound::kStepHeadNs;
    const int64_t release_ns = c.index == 0 ? 0 : jitter_ns_;  // the previous end, J late at most
    const int64_t gap_ns = release_ns + work_ns + kLaunchDelayMaxNs + kMinCollectiveNs + jitter_ns_;
    end_ns_ += (gap_ns + kUs - 1) / kUs * kUs + rng_.Range(0, kMaxSlackUs) * kUs;
    if (late_.on() && late_rng_.Percent(static_cast<uint32_t>(late_.percent))) {
      c.late = true;
      end_ns_ += late_.late_us * kUs;
    }
    c.end_ns = end_ns_;
    return c;
  }

 private:
  Rng rng_;
  Rng late_rng_;  // which instances are late (drawn only with a late rank)
  int64_t jitter_ns_;
  int64_t end_ns_;  // E of the last instance (JobStartNs before the first)
  int64_t next_ = 0;
  LateArrivals late_;
};

}  // namespace tracemill::tools::gen_kineto
