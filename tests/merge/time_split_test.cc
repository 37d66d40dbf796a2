// merge/time_split: an output's runs split into consecutive time ranges:
// the ranges of the events in merge order never go back (each range is a
// consecutive stretch of KWayMerger's order, metadata in the first), the
// split is the same whether runs spilled, and ranges hold about the same
// number of events.
#include "merge/time_split.h"

#include <memory>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "merge/kway_merger.h"
#include "merge/spill_file.h"

namespace tracemill::merge {
namespace {

// `n` events, ts in [0, span) us (many equal keys when span is small),
// about 1 in 20 a metadata record.
std::unique_ptr<SortedRun> MakeRun(std::mt19937& rng, size_t n, int64_t span_us) {
  auto d = std::make_unique<formats::TraceData>();
  for (uint32_t i = 0; i < n; ++i) {
    formats::Event e{};
    e.phase = rng() % 20 == 0 ? 'M' : "XXBEi"[rng() % 5];
    e.ts_ns = static_cast<int64_t>(rng() % static_cast<uint64_t>(span_us)) * 1000;
    e.dur_ns = e.phase == 'X' ? static_cast<int64_t>(rng() % 4) * 1000 : 0;
    e.name = i;
    e.flags = e.phase == 'M' ? 0 : formats::kHasTs;
    d->events.push_back(e);
  }
  return SortedRun::Sort(std::move(d));
}

// The range of each event in merge order.
std::vector<int> RangesInMergeOrder(const std::vector<SortedRun*>& runs, const std::vector<int64_t>& shifts,
                                    const TimeSplit& split) {
  for (SortedRun* r : runs) EXPECT_TRUE(r->Open(4096).ok());
  KWayMerger m(runs, shifts);
  std::vector<int> out;
  while (true) {
    auto [run, e] = m.Next();
    if (!e) break;
    out.push_back(split.RangeOf(*e, run, shifts[static_cast<size_t>(run)]));
    if (e->phase == 'M') {
      EXPECT_EQ(out.back(), 0);
    }
  }
  for (SortedRun* r : runs) r->Close();
  return out;
}

TEST(TimeSplit, RangesAreConsecutiveInMergeOrderAndEven) {
  auto file = SpillFile::Create(::testing::TempDir());
  ASSERT_TRUE(file.ok()) << file.status();
  for (unsigned seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    std::vector<std::unique_ptr<SortedRun>> owned;
    std::vector<SortedRun*> runs;
    std::vector<int64_t> shifts;
    const int k = 1 + static_cast<int>(rng() % 6);
    for (int r = 0; r < k; ++r) {
      owned.push_back(MakeRun(rng, 2000 + rng() % 30000, seed % 3 == 0 ? 50 : 1'000'000));
      runs.push_back(owned.back().get());
      shifts.push_back(seed % 2 ? static_cast<int64_t>(rng() % 5) * 7000 - 14000 : 0);
    }
    for (int n : {1, 2, 3, 7}) {
      SCOPED_TRACE(n);
      const TimeSplit split = SplitRuns(runs, shifts, n);
      ASSERT_EQ(split.bounds.size(), static_cast<size_t>(n - 1));
      const std::vector<int> ranges = RangesInMergeOrder(runs, shifts, split);
      std::vector<size_t> sizes(static_cast<size_t>(n));
      for (size_t i = 0; i < ranges.size(); ++i) {
        ASSERT_GE(ranges[i], 0);
        ASSERT_LT(ranges[i], n);
        if (i) {
          ASSERT_GE(ranges[i], ranges[i - 1]) << "event " << i;  // never back
        }
        ++sizes[static_cast<size_t>(ranges[i])];
      }
      // About the same number each (samples every <= 256 events per run;
      // with 50 distinct times, keys of many events each).
      const size_t even = ranges.size() / static_cast<size_t>(n);
      for (size_t s : sizes)
        if (seed % 3 != 0) {
          EXPECT_NEAR(static_cast<double>(s), static_cast<double>(even), 0.05 * ranges.size() + 300);
        }
    }
    // Spilled, the same split.
    const TimeSplit before = SplitRuns(runs, shifts, 5);
    for (auto& r : owned) ASSERT_TRUE(r->Spill(file->get()).ok());
    const TimeSplit after = SplitRuns(runs, shifts, 5);
    ASSERT_EQ(before.bounds.size(), after.bounds.size());
    for (size_t b = 0; b < before.bounds.size(); ++b) {
      EXPECT_EQ(before.bounds[b].ts_ns, after.bounds[b].ts_ns);
      EXPECT_EQ(before.bounds[b].tie, after.bounds[b].tie);
      EXPECT_EQ(before.bounds[b].run, after.bounds[b].run);
    }
    const std::vector<int> spilled = RangesInMergeOrder(runs, shifts, after);
    for (size_t i = 1; i < spilled.size(); ++i) ASSERT_GE(spilled[i], spilled[i - 1]);
    for (auto& r : owned) r->DiscardSpill();
  }
}

// Runs with nothing timed (metadata only), or none at all: every event in
// the first range, the later ones empty.
TEST(TimeSplit, NothingTimedIsAllInTheFirstRange) {
  auto d = std::make_unique<formats::TraceData>();
  for (uint32_t i = 0; i < 10; ++i) {
    formats::Event e{};
    e.phase = 'M';
    e.name = i;
    d->events.push_back(e);
  }
  auto run = SortedRun::Sort(std::move(d));
  std::vector<SortedRun*> runs = {run.get()};
  const TimeSplit split = SplitRuns(runs, {0}, 4);
  ASSERT_EQ(split.bounds.size(), 3u);
  EXPECT_EQ(split.bounds[0].ts_ns, INT64_MAX);
  EXPECT_EQ(SplitRuns({}, {}, 3).bounds.size(), 2u);
  formats::Event timed{};
  timed.phase = 'X';
  timed.ts_ns = 5;
  EXPECT_EQ(split.RangeOf(timed, 0, 0), 0);
}

// A key equal to a bound starts that bound's range.
TEST(TimeSplit, AnEventAtABoundIsInTheRangeItStarts) {
  TimeSplit split;
  split.ranges = 3;
  split.bounds = {{1000, uint64_t{1} << 63, 1}, {5000, uint64_t{1} << 63, 0}};
  formats::Event e{};
  e.phase = 'i';
  e.ts_ns = 1000;
  EXPECT_EQ(split.RangeOf(e, 0, 0), 0);  // run 0 sorts before run 1 at that key
  EXPECT_EQ(split.RangeOf(e, 1, 0), 1);
  EXPECT_EQ(split.RangeOf(e, 2, 0), 1);
  EXPECT_EQ(split.RangeOf(e, 0, 4000), 2);  // its aligned ts
  e.phase = 'M';
  EXPECT_EQ(split.RangeOf(e, 2, 4000), 0);
}

}  // namespace
}  // namespace tracemill::merge
