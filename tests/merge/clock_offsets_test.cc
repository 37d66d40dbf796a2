// Clock offsets from collectives (merge/clock_offsets.h) and the digest they
// are measured from (formats/common/collectives.h).
#include "merge/clock_offsets.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "formats/common/collectives.h"

namespace tracemill::merge {
namespace {

using formats::CollectiveClass;
using formats::CollectiveCollector;
using formats::CollectiveDigest;
using formats::StepSpan;

constexpr int64_t kUs = 1000;
constexpr int64_t kMs = 1000 * kUs;
constexpr int64_t kT0 = int64_t{1682725898} * 1000 * kMs;  // an epoch time, ns

// The true end times of a job's collectives: one every 1-3 ms (seeded).
std::vector<int64_t> TrueEnds(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int64_t> ends;
  int64_t t = kT0;
  for (int i = 0; i < n; ++i) {
    t += kMs + static_cast<int64_t>(rng() % (2 * kMs));
    ends.push_back(t);
  }
  return ends;
}

// A rank's digest: the ends seen on a clock `offset` ahead, with jitter of
// up to `jitter` either way, keeping the ops `keep(i)` says.
template <typename Keep>
CollectiveDigest Rank(const std::vector<int64_t>& ends, int64_t offset, int64_t jitter, uint32_t seed, Keep keep,
                      std::string_view group = "") {
  std::mt19937 rng(seed);
  CollectiveCollector c;
  std::string rest = group.empty() ? "" : "\"args\":{\"Process Group Name\":\"" + std::string(group) + "\"}";
  for (size_t i = 0; i < ends.size(); ++i) {
    const int64_t j = jitter ? static_cast<int64_t>(rng() % (2 * jitter + 1)) - jitter : 0;
    if (!keep(i)) continue;
    c.Add(CollectiveClass::kGpuKernel, "AllReduce", rest, ends[i] + offset + j - 300 * kUs, ends[i] + offset + j);
  }
  return c.Finish(4096);
}

CollectiveDigest Rank(const std::vector<int64_t>& ends, int64_t offset, int64_t jitter, uint32_t seed) {
  return Rank(ends, offset, jitter, seed, [](size_t) { return true; });
}

TEST(EstimatePairOffset, RecoversAnOffsetWithinTheJitter) {
  const auto ends = TrueEnds(300, 1);
  CollectiveDigest a = Rank(ends, 0, 3 * kUs, 2), b = Rank(ends, -1'234'567, 3 * kUs, 3);
  PairEstimate e = EstimatePairOffset(a, b, nullptr, nullptr);
  EXPECT_TRUE(e.confident) << e.why;
  EXPECT_EQ(e.matched, 300u);
  EXPECT_NEAR(static_cast<double>(e.offset_ns), -1'234'567.0, 6 * kUs);
  EXPECT_LE(e.spread_ns, 6 * kUs);
}

// Sampled traces and profiler windows that start later: instances missing
// on either side, so the k-th ops are not the same operation.
TEST(EstimatePairOffset, MissingInstancesOnBothSides) {
  const auto ends = TrueEnds(400, 4);
  CollectiveDigest a = Rank(ends, 0, 2 * kUs, 5, [](size_t i) { return i % 3 != 0; });
  CollectiveDigest b = Rank(ends, 2 * kMs + 345 * kUs, 2 * kUs, 6, [](size_t i) { return i >= 50 && i % 5 != 1; });
  ASSERT_NE(a.ops.size(), b.ops.size());
  PairEstimate e = EstimatePairOffset(a, b, nullptr, nullptr);
  EXPECT_TRUE(e.confident) << e.why;
  EXPECT_NEAR(static_cast<double>(e.offset_ns), 2'345'000.0, 4 * kUs);
  EXPECT_GT(e.matched, 150u);
}

// Periodic collectives (the same pattern every step) and windows that start
// one step apart: without step markers an offset one step off is as likely
// (ambiguous, not confident); with them the right one is found.
TEST(EstimatePairOffset, StepMarkersResolveWholeStepShifts) {
  std::vector<int64_t> ends;
  std::vector<StepSpan> steps;
  const int64_t period = 100 * kMs;
  const std::vector<int64_t> in_step = TrueEnds(20, 14);  // 20 per step, 1-3 ms apart, the same in every step
  for (int s = 0; s < 10; ++s) {
    steps.push_back(StepSpan{s, kT0 + s * period, kT0 + (s + 1) * period - kMs});
    for (int64_t e : in_step) ends.push_back(e + s * period);
  }
  const int64_t offset = 700 * kUs;
  CollectiveDigest a = Rank(ends, 0, kUs, 7, [](size_t i) { return i < 120; });               // steps 0-5
  CollectiveDigest b = Rank(ends, offset, kUs, 8, [](size_t i) { return i >= 40 && i < 200; });  // steps 2-9
  PairEstimate blind = EstimatePairOffset(a, b, nullptr, nullptr);
  EXPECT_FALSE(blind.confident);
  EXPECT_NE(blind.why.find("ambiguous"), std::string::npos) << blind.why;
  std::vector<StepSpan> steps_a(steps.begin(), steps.begin() + 6), steps_b(steps.begin() + 2, steps.end());
  for (StepSpan& s : steps_b) {
    s.start_ns += offset + 2 * kMs;  // a rank's step starts are skewed by ms
    s.end_ns += offset;
  }
  PairEstimate e = EstimatePairOffset(a, b, &steps_a, &steps_b);
  EXPECT_TRUE(e.confident) << e.why;
  EXPECT_NEAR(static_cast<double>(e.offset_ns), static_cast<double>(offset), 2 * kUs);
  EXPECT_EQ(e.matched, 80u);
}

TEST(EstimatePairOffset, KinetoSeqMatchesExactly) {
  CollectiveCollector ca, cb;
  for (int i = 0; i < 20; ++i) {
    const std::string rest = "\"args\":{\"Process Group Name\":\"0\",\"Process Group Ranks\":[0,1],\"Seq\":" +
                             std::to_string(i) + "}";
    ca.Add(CollectiveClass::kGpuKernel, "AllReduce", rest, kT0 + i * kMs, kT0 + i * kMs + 100 * kUs);
    if (i % 2) cb.Add(CollectiveClass::kGpuKernel, "AllReduce", rest, kT0 + i * kMs + 5 * kMs, kT0 + i * kMs + 5100 * kUs);
  }
  CollectiveDigest a = ca.Finish(4096), b = cb.Finish(4096);
  PairEstimate e = EstimatePairOffset(a, b, nullptr, nullptr);
  EXPECT_TRUE(e.by_seq);
  EXPECT_TRUE(e.confident) << e.why;
  EXPECT_EQ(e.matched, 10u);
  EXPECT_EQ(e.offset_ns, 5 * kMs);
  EXPECT_EQ(e.spread_ns, 0);
}

TEST(EstimatePairOffset, NothingInCommon) {
  const auto ends = TrueEnds(50, 9);
  CollectiveDigest a = Rank(ends, 0, 0, 1, [](size_t) { return true; }, "pg0");
  CollectiveDigest b = Rank(ends, 0, 0, 1, [](size_t) { return true; }, "pg1");
  PairEstimate e = EstimatePairOffset(a, b, nullptr, nullptr);
  EXPECT_FALSE(e.found);
  EXPECT_EQ(e.why, "no collective operation (process group and kind) in common");
  e = EstimatePairOffset(a, CollectiveDigest{}, nullptr, nullptr);
  EXPECT_EQ(e.why, "no collective operations");
}

TEST(SolveClockOffsets, FourNodesOneOfThemBehind) {
  const auto ends = TrueEnds(500, 10);
  const int64_t offsets[] = {0, 1'500 * kUs, -800 * kUs, 3'250 * kUs};
  std::vector<CollectiveDigest> digests;
  for (int n = 0; n < 4; ++n) digests.push_back(Rank(ends, offsets[n], 3 * kUs, 20 + n));
  std::vector<ClockDomain> domains;
  for (int n = 0; n < 4; ++n) domains.push_back(ClockDomain{"node " + std::to_string(n), n * 8, &digests[n], nullptr});
  ClockSolution sol = SolveClockOffsets(domains);
  ASSERT_EQ(sol.reference, 0);
  EXPECT_TRUE(sol.warnings.empty());
  for (int n = 0; n < 4; ++n) {
    EXPECT_TRUE(sol.domains[n].confident) << n << ": " << sol.domains[n].note;
    EXPECT_NEAR(static_cast<double>(sol.domains[n].shift_ns), -static_cast<double>(offsets[n]), 6 * kUs) << n;
  }
}

// A node that shares no group with the reference is placed through one that
// does; a node without collectives is not placed.
TEST(SolveClockOffsets, ThroughAnotherNodeAndWithoutCollectives) {
  const auto ends = TrueEnds(200, 11);
  CollectiveDigest d0 = Rank(ends, 0, kUs, 1, [](size_t) { return true; }, "g01");
  CollectiveCollector c1;
  for (size_t i = 0; i < ends.size(); ++i) {
    c1.Add(CollectiveClass::kGpuKernel, "AllReduce", "\"args\":{\"Process Group Name\":\"g01\"}", ends[i] + 400 * kUs - 10,
           ends[i] + 400 * kUs);
    c1.Add(CollectiveClass::kGpuKernel, "AllReduce", "\"args\":{\"Process Group Name\":\"g12\"}",
           ends[i] + 400 * kUs + 500 * kUs - 10, ends[i] + 400 * kUs + 500 * kUs);
  }
  CollectiveDigest d1 = c1.Finish(4096);
  std::vector<int64_t> ends2;
  for (int64_t e : ends) ends2.push_back(e + 500 * kUs);
  CollectiveDigest d2 = Rank(ends2, -2 * kMs, kUs, 3, [](size_t) { return true; }, "g12");
  CollectiveDigest none;
  std::vector<ClockDomain> domains = {{"node 0", 0, &d0, nullptr}, {"node 1", 8, &d1, nullptr},
                                      {"node 2", 16, &d2, nullptr}, {"node 3", 24, &none, nullptr}};
  ClockSolution sol = SolveClockOffsets(domains);
  EXPECT_NEAR(static_cast<double>(sol.domains[1].shift_ns), -400'000.0, 2 * kUs);
  EXPECT_TRUE(sol.domains[2].confident) << sol.domains[2].note;
  EXPECT_EQ(sol.domains[2].via, 1);
  EXPECT_NEAR(static_cast<double>(sol.domains[2].shift_ns), 2'000'000.0, 4 * kUs);
  EXPECT_FALSE(sol.domains[3].estimated);
  EXPECT_EQ(sol.domains[3].note, "no collective operations in its lowest rank (24)");
}

// Offsets that contradict each other around a cycle: node 1 and node 2 each
// agree with the reference, but not with each other.
TEST(SolveClockOffsets, ContradictionAroundACycle) {
  const auto ends = TrueEnds(200, 12);
  auto add = [&](CollectiveCollector& c, std::string_view group, int64_t offset) {
    for (int64_t e : ends)
      c.Add(CollectiveClass::kGpuKernel, "AllReduce",
            "\"args\":{\"Process Group Name\":\"" + std::string(group) + "\"}", e + offset - 10, e + offset);
  };
  CollectiveCollector c0, c1, c2;
  add(c0, "a", 0);
  add(c0, "b", 0);
  add(c1, "a", 100 * kUs);
  add(c1, "c", 0);
  add(c2, "b", 300 * kUs);
  add(c2, "c", 900 * kUs);  // 1 -> 2 says 900 us; through the reference 200 us
  CollectiveDigest d0 = c0.Finish(4096), d1 = c1.Finish(4096), d2 = c2.Finish(4096);
  std::vector<ClockDomain> domains = {{"node 0", 0, &d0, nullptr}, {"node 1", 8, &d1, nullptr}, {"node 2", 16, &d2, nullptr}};
  ClockSolution sol = SolveClockOffsets(domains);
  ASSERT_EQ(sol.warnings.size(), 1u);
  EXPECT_EQ(sol.warnings[0],
            "clock offsets contradicts node 1 vs node 2: measured 900 us apart, 200 us through the reference; neither is "
            "confident (--align-clocks auto applies neither, on both)");
  EXPECT_FALSE(sol.domains[1].confident);
  EXPECT_FALSE(sol.domains[2].confident);
  EXPECT_TRUE(sol.domains[0].confident);
}

TEST(CollectiveDigest, ClassifiesNamesAndKinds) {
  using formats::ClassifyCollectiveName;
  using formats::CollectiveKind;
  EXPECT_EQ(ClassifyCollectiveName("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"), CollectiveClass::kGpuKernel);
  EXPECT_EQ(ClassifyCollectiveName("ncclDevKernel_Generic_1(ncclDevComm*, unsigned long, ncclWork*)"),
            CollectiveClass::kGpuKernel);
  EXPECT_EQ(ClassifyCollectiveName("nccl:all_reduce"), CollectiveClass::kCpuRecord);
  EXPECT_EQ(ClassifyCollectiveName("gloo:all_gather"), CollectiveClass::kCpuRecord);
  EXPECT_EQ(ClassifyCollectiveName("NCCL_ALLREDUCE"), CollectiveClass::kCpuRecord);
  EXPECT_EQ(ClassifyCollectiveName("record_param_comms"), CollectiveClass::kCpuWrapper);
  EXPECT_EQ(ClassifyCollectiveName("aten::mm"), CollectiveClass::kNone);
  EXPECT_EQ(ClassifyCollectiveName("ncclKernel_"), CollectiveClass::kNone);
  EXPECT_EQ(CollectiveKind(CollectiveClass::kGpuKernel, "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)", ""),
            "SendRecv");
  EXPECT_EQ(CollectiveKind(CollectiveClass::kGpuKernel, "ncclDevKernel_Generic_1(ncclDevComm*)", ""), "Generic");
  EXPECT_EQ(CollectiveKind(CollectiveClass::kCpuWrapper, "record_param_comms",
                           "\"args\":{\"Collective name\":\"allreduce\",\"dtype\":\"Float\"}"),
            "\"allreduce\"");
}

// GPU kernels win over CPU records; the group comes from the args.
TEST(CollectiveDigest, KeepsTheBestClassAndTheGroups) {
  CollectiveCollector c;
  c.Add(CollectiveClass::kCpuRecord, "nccl:all_reduce", "", 100, 200);
  c.Add(CollectiveClass::kGpuKernel, "AllReduce",
        "\"args\":{\"External id\":3,\"Process Group Name\":\"7\",\"Process Group Ranks\":\"[0, 1]\"},\"s\":\"t\"", 150,
        400);
  c.Add(CollectiveClass::kGpuKernel, "AllReduce", "\"args\":{\"device\":0}", 50, 90);
  CollectiveDigest d = c.Finish(10);
  EXPECT_TRUE(d.gpu);
  EXPECT_EQ(d.seen, 2u);
  ASSERT_EQ(d.ops.size(), 2u);
  EXPECT_EQ(d.ops[0].end_ns, 90);
  EXPECT_EQ(d.keys[d.ops[0].key], "\x1f" "AllReduce");
  EXPECT_EQ(d.keys[d.ops[1].key], "\"7\"/\"[0, 1]\"\x1f" "AllReduce");
}

// Bounded: past `max_ops`, the ops kept end in the first 1/2^k of each
// 2^26 ns window, and a coarser sample is a subset of a finer one.
TEST(CollectiveDigest, SamplesTheSameInstantsOnEveryRank) {
  const auto ends = TrueEnds(5000, 13);
  CollectiveDigest fine = Rank(ends, 0, 0, 1), coarse;
  {
    CollectiveCollector c;
    for (int64_t e : ends) c.Add(CollectiveClass::kGpuKernel, "AllReduce", "", e - 10, e);
    coarse = c.Finish(500);
  }
  EXPECT_EQ(fine.sample_shift, 1);  // 5000 ops, 4096 allowed
  EXPECT_LE(coarse.ops.size(), 500u);
  EXPECT_GE(coarse.sample_shift, 3);
  EXPECT_EQ(coarse.seen, 5000u);
  size_t found = 0;
  for (const auto& o : coarse.ops)
    for (const auto& f : fine.ops) found += f.end_ns == o.end_ns;
  EXPECT_EQ(found, coarse.ops.size());
}

}  // namespace
}  // namespace tracemill::merge
