// merge/kway_merger: order across runs is (ts, tie, run index); metadata of
// every run first, run 0's before run 1's.
#include "merge/kway_merger.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/merge/merge_test_util.h"

namespace tracemill::merge {
namespace {

using ::testing::ElementsAre;
using Out = std::pair<int, uint32_t>;  // (run, tag)

std::vector<Out> Drain(KWayMerger& m) {
  std::vector<Out> out;
  while (true) {
    auto [run, e] = m.Next();
    if (!e) break;
    out.emplace_back(run, e->name);
  }
  EXPECT_EQ(m.Next().second, nullptr);  // stays at the end
  return out;
}

TEST(KWayMerger, OrdersAcrossRunsByTsThenTieThenRunIndex) {
  auto a = SortedRun::Sort(MakeTrace({{'X', 1, 1, 0}, {'X', 5, 1, 1}, {'X', 9, 1, 2}, {'M', 0, 0, 3}}));
  auto b = SortedRun::Sort(MakeTrace({{'X', 2, 1, 0}, {'X', 5, 1, 1}, {'X', 7, 1, 2}, {'M', 0, 0, 3}}));
  auto empty = SortedRun::Sort(MakeTrace({}));
  auto c = SortedRun::Sort(MakeTrace({{'E', 5, 0, 0}, {'X', 5, 9, 1}, {'i', 5, 0, 2}}));
  KWayMerger m({a.get(), b.get(), empty.get(), c.get()});
  EXPECT_THAT(Drain(m), ElementsAre(Out(0, 3), Out(1, 3),                // metadata, run order
                                    Out(0, 0), Out(1, 0),                // ts 1, 2
                                    Out(3, 0),                           // ts 5: E first
                                    Out(3, 1),                           // then the longer X
                                    Out(0, 1), Out(1, 1),                // equal X: run order
                                    Out(3, 2),                           // then the rest
                                    Out(1, 2), Out(0, 2)));              // ts 7, 9
}

TEST(KWayMerger, NoRunsOrOnlyEmptyRuns) {
  KWayMerger none({});
  EXPECT_EQ(none.Next().second, nullptr);
  auto e1 = SortedRun::Sort(MakeTrace({}));
  auto e2 = SortedRun::Sort(MakeTrace({}));
  KWayMerger empties({e1.get(), e2.get()});
  EXPECT_EQ(empties.Next().first, -1);
}

TEST(KWayMerger, ManyRunsMergeIntoOneOrder) {
  std::mt19937 rng(11);
  std::vector<std::unique_ptr<SortedRun>> runs;
  std::vector<SortedRun*> ptrs;
  size_t total = 0;
  for (int r = 0; r < 64; ++r) {
    auto d = std::make_unique<formats::TraceData>();
    size_t n = rng() % 300;
    for (uint32_t i = 0; i < n; ++i) {
      formats::Event e{};
      e.phase = "XXEBi"[rng() % 5];
      e.ts_ns = static_cast<int64_t>(rng() % 500) * 1000;
      e.dur_ns = e.phase == 'X' ? static_cast<int64_t>(rng() % 3) * 1000 : 0;
      e.name = i;
      e.flags = formats::kHasTs;
      d->events.push_back(e);
    }
    total += n;
    runs.push_back(SortedRun::Sort(std::move(d)));
    ptrs.push_back(runs.back().get());
  }
  KWayMerger m(ptrs);
  size_t n = 0;
  int prev_run = -1;
  SortKey prev{};
  while (true) {
    auto [run, e] = m.Next();
    if (!e) break;
    SortKey k = MakeSortKey(*e, e->name);
    if (prev_run >= 0) {
      // Non-decreasing on (ts, tie); at equal (ts, tie) the lower run first,
      // and inside one run, input order.
      bool ordered = prev.ts_ns != k.ts_ns ? prev.ts_ns < k.ts_ns
                     : prev.tie != k.tie   ? prev.tie < k.tie
                     : prev_run != run     ? prev_run < run
                                           : prev.index < k.index;
      ASSERT_TRUE(ordered) << "event " << n;
    }
    prev = k;
    prev_run = run;
    ++n;
  }
  EXPECT_EQ(n, total);
}

// Every run count from 1 to 9 and a few past powers of two (the tree of
// losers' shape depends on it), runs of random lengths (empty, short ones
// done early, metadata in some), with and without clock shifts: the merged
// order is exactly that of all the heads' keys sorted by (shifted ts, tie,
// run, position in the run).
TEST(KWayMerger, EveryRunCountGivesTheOrderOfAllKeysSorted) {
  std::mt19937 rng(5);
  for (int k : {1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 33}) {
    for (bool shifted : {false, true}) {
      std::vector<std::unique_ptr<SortedRun>> runs;
      std::vector<SortedRun*> ptrs;
      std::vector<int64_t> shifts;
      for (int r = 0; r < k; ++r) {
        auto d = std::make_unique<formats::TraceData>();
        const uint32_t n = rng() % 4 == 0 ? rng() % 3 : rng() % 200;
        for (uint32_t i = 0; i < n; ++i) {
          formats::Event e{};
          e.phase = "XXEBiM"[rng() % 6];
          e.ts_ns = static_cast<int64_t>(rng() % 50) * 1000 - 20'000;
          e.dur_ns = e.phase == 'X' ? static_cast<int64_t>(rng() % 3) * 1000 : 0;
          e.name = i;
          e.flags = e.phase == 'M' ? 0 : formats::kHasTs;
          d->events.push_back(e);
        }
        runs.push_back(SortedRun::Sort(std::move(d)));
        ptrs.push_back(runs.back().get());
        shifts.push_back(shifted ? static_cast<int64_t>(rng() % 7) * 3000 - 9000 : 0);
      }
      // The reference: each run's keys in its own order, then all sorted.
      struct Ref {
        int64_t ts;
        uint64_t tie;
        int run;
        size_t pos;
        const formats::Event* e;
      };
      std::vector<Ref> want;
      for (int r = 0; r < k; ++r) {
        for (size_t pos = 0; !ptrs[r]->done(); ++pos) {
          const SortKey key = ptrs[r]->PeekKey();
          const int64_t ts = key.ts_ns == INT64_MIN ? key.ts_ns : key.ts_ns + shifts[r];
          want.push_back({ts, key.tie, r, pos, ptrs[r]->Next()});
        }
        ASSERT_TRUE(ptrs[r]->Open(0).ok());
      }
      std::sort(want.begin(), want.end(), [](const Ref& a, const Ref& b) {
        return std::tie(a.ts, a.tie, a.run, a.pos) < std::tie(b.ts, b.tie, b.run, b.pos);
      });
      KWayMerger m(ptrs, shifts);
      size_t n = 0;
      for (auto [run, e] = m.Next(); e; std::tie(run, e) = m.Next(), ++n) {
        ASSERT_LT(n, want.size()) << "k " << k;
        ASSERT_EQ(run, want[n].run) << "k " << k << " shifted " << shifted << " event " << n;
        ASSERT_EQ(e, want[n].e) << "k " << k << " shifted " << shifted << " event " << n;
      }
      EXPECT_EQ(n, want.size()) << "k " << k;
      EXPECT_EQ(m.Next().first, -1);
    }
  }
}

}  // namespace
}  // namespace tracemill::merge
