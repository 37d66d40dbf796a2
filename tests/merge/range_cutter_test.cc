// merge/range_cutter: the ranges, each merged alone and written in order,
// give exactly KWayMerger's order (runs in memory and spilled, clock shifts,
// equal keys across runs, metadata), every range holds an event, and ranges
// stay near their target.
#include "merge/range_cutter.h"

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "merge/kway_merger.h"
#include "merge/spill_file.h"
#include "tests/merge/merge_test_util.h"

namespace tracemill::merge {
namespace {

// (run, name tag, rest bytes) of each event in order.
using Seen = std::tuple<int, uint32_t, std::string>;

const std::string& RestText() {
  static const std::string text(512, 'r');
  return text;
}

// `n` events with ts from a narrow range (many equal keys), a few metadata
// records, some with rest bytes.
std::unique_ptr<SortedRun> RandomRun(std::mt19937& rng, size_t n) {
  auto d = std::make_unique<formats::TraceData>();
  for (uint32_t i = 0; i < n; ++i) {
    formats::Event e{};
    e.phase = "XXXEBiM"[rng() % 7];
    e.ts_ns = static_cast<int64_t>(rng() % 400) * 1000;
    e.dur_ns = e.phase == 'X' ? static_cast<int64_t>(rng() % 3) * 1000 : 0;
    e.name = i;
    e.flags = e.phase == 'M' ? 0 : formats::kHasTs;
    if (rng() % 3 == 0) {
      e.rest_len = static_cast<uint32_t>(rng() % 300);
      e.rest = RestText().data() + rng() % 200;
    }
    d->events.push_back(e);
  }
  return SortedRun::Sort(std::move(d));
}

// The most events of `run` with one key (ts, tie): a range never splits them.
size_t LargestKeyGroup(SortedRun& run) {
  EXPECT_TRUE(run.Open(0).ok());
  size_t most = 0, n = 0;
  SortKey prev{};
  for (size_t i = 0; i < run.size(); ++i) {
    const SortKey& k = run.keys()[i];
    n = i && k.ts_ns == prev.ts_ns && k.tie == prev.tie ? n + 1 : 1;
    most = std::max(most, n);
    prev = k;
  }
  return most;
}

std::vector<Seen> ByMerger(const std::vector<SortedRun*>& runs, const std::vector<int64_t>& shifts) {
  for (SortedRun* r : runs) EXPECT_TRUE(r->Open(4096).ok());
  KWayMerger m(runs, shifts);
  std::vector<Seen> out;
  while (true) {
    auto [run, e] = m.Next();
    if (!e) break;
    out.emplace_back(run, e->name, std::string(e->rest, e->rest_len));
  }
  return out;
}

struct Cut {
  std::vector<Seen> order;
  std::vector<size_t> sizes;
};

Cut ByRanges(const std::vector<SortedRun*>& runs, const std::vector<int64_t>& shifts, size_t target,
             size_t max_copy_bytes) {
  for (SortedRun* r : runs) EXPECT_TRUE(r->Open(4096).ok());
  RangeCutter cutter(runs, shifts, target, max_copy_bytes);
  Cut cut;
  MergeRange range;
  while (cutter.Next(&range)) {
    size_t n = 0;
    range.ForEach([&](int run, const formats::Event& e) {
      cut.order.emplace_back(run, e.name, std::string(e.rest, e.rest_len));
      ++n;
    });
    EXPECT_EQ(n, range.size());
    cut.sizes.push_back(n);
  }
  EXPECT_EQ(range.size(), 0u);
  EXPECT_FALSE(cutter.Next(&range));  // stays at the end
  return cut;
}

TEST(RangeCutter, RangesInOrderAreTheMergersOrder) {
  auto file = SpillFile::Create(::testing::TempDir());
  ASSERT_TRUE(file.ok()) << file.status();
  for (unsigned seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    std::vector<std::unique_ptr<SortedRun>> owned;
    std::vector<SortedRun*> runs;
    std::vector<int64_t> shifts;
    const int k = 1 + static_cast<int>(rng() % 9);
    size_t group = 0;
    for (int r = 0; r < k; ++r) {
      owned.push_back(RandomRun(rng, rng() % 5 == 0 ? 0 : 1 + rng() % 400));
      group = std::max(group, LargestKeyGroup(*owned.back()));
      // Seeds 1-4 all in memory, 5-8 all spilled, 9-12 mixed.
      const bool spill = seed > 8 ? rng() % 2 == 0 : seed > 4;
      if (spill) {
        ASSERT_TRUE(owned.back()->Spill(file->get()).ok());
      }
      runs.push_back(owned.back().get());
      shifts.push_back(seed % 2 ? static_cast<int64_t>(rng() % 5) * 7000 - 14000 : 0);
    }
    const std::vector<Seen> want = ByMerger(runs, shifts);
    for (size_t target : {1, 3, 40, 5000}) {
      SCOPED_TRACE(target);
      for (size_t max_copy : {size_t{1}, size_t{2000}, size_t{1} << 20}) {
        const Cut cut = ByRanges(runs, shifts, target, max_copy);
        ASSERT_EQ(cut.order.size(), want.size());
        EXPECT_TRUE(cut.order == want);
        for (size_t n : cut.sizes) {
          EXPECT_GE(n, 1u);
          // At most twice `target` from the runs in memory (one each
          // when there are more runs than that), `target` copies, and the
          // smallest head with the events of its run that share its key.
          EXPECT_LE(n, std::max<size_t>(2 * target, k) + target + group);
        }
        if (target == 1 && !want.empty()) {
          EXPECT_GT(cut.sizes.size(), want.size() / (2 * k + 2));
        }
      }
    }
    for (auto& r : owned) r->DiscardSpill();
  }
}

// Runs whose times do not overlap (each rank's trace from another window):
// at target / runs events ahead each range held 12 events, and cutting
// cost more than merging (512 ranks: 604 K ranges, 39 s of cutting for
// one output). The look-ahead grows until the ranges reach the target.
TEST(RangeCutter, RunsApartInTimeStillGiveRangesNearTheTarget) {
  std::vector<std::unique_ptr<SortedRun>> owned;
  std::vector<SortedRun*> runs;
  for (int r = 0; r < 8; ++r) {
    auto d = std::make_unique<formats::TraceData>();
    for (uint32_t i = 0; i < 1000; ++i) {
      formats::Event e{};
      e.phase = 'i';
      e.ts_ns = (int64_t{r} * 1000 + i) * 1000;
      e.name = i;
      e.flags = formats::kHasTs;
      d->events.push_back(e);
    }
    owned.push_back(SortedRun::Sort(std::move(d)));
    runs.push_back(owned.back().get());
  }
  const std::vector<Seen> want = ByMerger(runs, {});
  const Cut cut = ByRanges(runs, {}, 100, 1 << 20);
  EXPECT_TRUE(cut.order == want);
  EXPECT_LE(cut.sizes.size(), 8000u / 50 + 16);  // 12.5 per range was 640 ranges
  for (size_t n : cut.sizes) EXPECT_LE(n, 200u);
}

// Runs in memory are cut by position: the ranges of a two-run job with
// interleaved times, exactly.
TEST(RangeCutter, CutsRunsInMemoryAtTheirKeys) {
  auto a = SortedRun::Sort(MakeTrace({{'X', 1, 0, 0}, {'X', 3, 0, 1}, {'X', 5, 0, 2}, {'X', 7, 0, 3}}));
  auto b = SortedRun::Sort(MakeTrace({{'X', 2, 0, 0}, {'X', 4, 0, 1}, {'X', 6, 0, 2}, {'X', 8, 0, 3}}));
  ASSERT_TRUE(a->Open(0).ok() && b->Open(0).ok());
  RangeCutter cutter({a.get(), b.get()}, {}, 2, 1 << 20);
  MergeRange range;
  std::vector<std::vector<std::pair<int, uint32_t>>> ranges;
  while (cutter.Next(&range)) {
    ranges.emplace_back();
    range.ForEach([&](int run, const formats::Event& e) { ranges.back().emplace_back(run, e.name); });
  }
  // Two events ahead at one per run: the bound is the smaller of a's and
  // b's second key from their positions.
  using P = std::pair<int, uint32_t>;
  ASSERT_EQ(ranges.size(), 4u);
  EXPECT_EQ(ranges[0], (std::vector<P>{{0, 0}, {1, 0}}));  // bound a@3
  EXPECT_EQ(ranges[1], (std::vector<P>{{0, 1}, {1, 1}}));  // bound a@5
  EXPECT_EQ(ranges[2], (std::vector<P>{{0, 2}, {1, 2}}));  // bound a@7
  EXPECT_EQ(ranges[3], (std::vector<P>{{0, 3}, {1, 3}}));  // one left each: to the end
}

}  // namespace
}  // namespace tracemill::merge
