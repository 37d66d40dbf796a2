// merge/sorted_run: the per-input sort and its tie-break (Perfetto's trace
// sorter rule: at equal ts, E first, then X by longer dur, then input order;
// metadata before everything, in input order).
#include "merge/sorted_run.h"

#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "merge/spill_file.h"
#include "tests/merge/merge_test_util.h"

namespace tracemill::merge {
namespace {

using ::testing::ElementsAre;

std::vector<uint32_t> Drain(SortedRun& run) {
  std::vector<uint32_t> tags;
  while (const formats::Event* e = run.Next()) tags.push_back(e->name);
  return tags;
}

// PaddedRun: 4,000 X events with 1,000 bytes of rest each (about 4 MB
// spilled), event i at base + (i * 7919) % 4000 us (a permutation).
std::unique_ptr<SortedRun> PaddedRun(int64_t base) {
  auto d = std::make_unique<formats::TraceData>();
  static const std::string pad(1000, 'p');
  for (uint32_t i = 0; i < 4000; ++i) {
    formats::Event e{};
    e.phase = 'X';
    e.ts_ns = (base + (i * 7919) % 4000) * 1000;
    e.dur_ns = 1000;
    e.name = i;
    e.flags = formats::kHasTs | formats::kHasDur;
    std::string_view v = d->rest_arena.Copy(pad);
    e.rest = v.data();
    e.rest_len = static_cast<uint32_t>(v.size());
    d->events.push_back(e);
  }
  return SortedRun::Sort(std::move(d));
}

// The k-th event out of a PaddedRun is the i with ts k.
void ExpectPaddedOrder(const std::vector<uint32_t>& order) {
  ASSERT_EQ(order.size(), 4000u);
  for (uint32_t k = 0; k < 4000; ++k) ASSERT_EQ(order[k] * 7919u % 4000u, k) << "position " << k;
}

TEST(SortedRun, TieBreakAtEqualTs) {
  auto run = SortedRun::Sort(MakeTrace({
      {'B', 100, 0, 0},
      {'X', 100, 5, 1},
      {'i', 100, 0, 2},
      {'X', 100, 50, 3},
      {'E', 100, 0, 4},
      {'X', 100, 0, 5},
      {'X', 99, 1, 6},
      {'M', 0, 0, 7},
      {'E', 100, 0, 8},
      {'X', 100, 50, 9},
  }));
  // M; the earlier ts; the Es in input order; X by longer dur (equal durs in
  // input order); then everything else (B, i, the zero-length X) in input order.
  EXPECT_THAT(Drain(*run), ElementsAre(7, 6, 4, 8, 3, 9, 1, 0, 2, 5));
}

TEST(SortedRun, MetadataFirstInInputOrderWhateverItsTs) {
  auto run = SortedRun::Sort(MakeTrace({
      {'X', -5, 1, 0},
      {'M', 500, 0, 1},
      {'X', 3, 1, 2},
      {'M', 0, 0, 3},
      {'M', -100, 0, 4},
  }));
  EXPECT_THAT(Drain(*run), ElementsAre(1, 3, 4, 0, 2));
}

TEST(SortedRun, KinetoSectionsAreSortedByTs) {
  // CPU ops, then GPU kernels, then flows: unsorted as a whole.
  auto run = SortedRun::Sort(MakeTrace({
      {'X', 10, 30, 0}, {'X', 20, 5, 1}, {'X', 50, 2, 2},
      {'X', 15, 3, 3}, {'X', 25, 3, 4},
      {'s', 10, 0, 5}, {'f', 15, 0, 6},
  }));
  EXPECT_THAT(Drain(*run), ElementsAre(0, 5, 3, 6, 1, 4, 2));
}

TEST(SortedRun, PeekReopenAndSize) {
  auto run = SortedRun::Sort(MakeTrace({{'X', 2, 1, 0}, {'X', 1, 1, 1}}));
  EXPECT_EQ(run->size(), 2u);
  ASSERT_FALSE(run->done());
  EXPECT_EQ(run->PeekKey().ts_ns, 1000);
  EXPECT_THAT(Drain(*run), ElementsAre(1, 0));
  EXPECT_TRUE(run->done());
  EXPECT_EQ(run->Next(), nullptr);
  ASSERT_TRUE(run->Open(0).ok());
  EXPECT_THAT(Drain(*run), ElementsAre(1, 0));
}

// A spilled run streams back the same events, rest bytes included, even
// through a read buffer smaller than one event.
TEST(SortedRun, SpilledRunYieldsTheSameEvents) {
  auto make = [] {
    auto d = MakeTrace({{'X', 5, 2, 0}, {'E', 5, 0, 1}, {'M', 9, 0, 2}, {'X', 1, 7, 3}, {'B', -3, 0, 4}});
    static const std::string big(70000, 'a');
    const std::string rests[] = {"\"args\":{\"k\":1}", "", "\"args\":{\"name\":\"x\"}", big, "\"s\":\"t\""};
    for (size_t i = 0; i < d->events.size(); ++i) {
      std::string_view v = d->rest_arena.Copy(rests[i]);
      d->events[i].rest = v.data();
      d->events[i].rest_len = static_cast<uint32_t>(v.size());
      d->events[i].pid = static_cast<uint32_t>(i * 1000);
      d->events[i].id = static_cast<uint32_t>(i + 1);
    }
    return SortedRun::Sort(std::move(d));
  };
  auto mem = make();
  auto spilled = make();
  auto file = SpillFile::Create(::testing::TempDir());
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_TRUE(spilled->Spill(file->get()).ok());
  EXPECT_TRUE(spilled->spilled());
  ASSERT_TRUE(spilled->Open(4096).ok());
  ASSERT_TRUE(mem->Open(0).ok());
  size_t n = 0;
  while (true) {
    const formats::Event* a = mem->Next();
    const formats::Event* b = spilled->Next();
    ASSERT_EQ(a == nullptr, b == nullptr);
    if (!a) break;
    ++n;
    EXPECT_EQ(a->ts_ns, b->ts_ns);
    EXPECT_EQ(a->dur_ns, b->dur_ns);
    EXPECT_EQ(a->phase, b->phase);
    EXPECT_EQ(a->flags, b->flags);
    EXPECT_EQ(a->name, b->name);
    EXPECT_EQ(a->pid, b->pid);
    EXPECT_EQ(a->id, b->id);
    EXPECT_EQ(std::string(a->rest, a->rest_len), std::string(b->rest, b->rest_len));
  }
  EXPECT_EQ(n, 5u);
  EXPECT_TRUE(spilled->read_status().ok());
}

// Once merged, a spilled run's region goes back to the file system (so the
// spill bytes of a long job never pile up in the page cache and on disk),
// and the next run in the same file still reads back whole.
TEST(SortedRun, DiscardedSpillFreesItsRegionOnly) {
  auto file = SpillFile::Create(::testing::TempDir());
  ASSERT_TRUE(file.ok()) << file.status();
  auto first = PaddedRun(0), second = PaddedRun(100000);
  ASSERT_TRUE(first->Spill(file->get()).ok());
  ASSERT_TRUE(second->Spill(file->get()).ok());
  const uint64_t before = (*file)->AllocatedBytes();
  ASSERT_GE(before, 2u * 4000 * 1000);
  first->DiscardSpill();
  EXPECT_FALSE(first->Open(4096).ok());  // gone, and says so
  EXPECT_TRUE(first->done());
  const uint64_t after = (*file)->AllocatedBytes();
  if (after == before) GTEST_SKIP() << "this file system does not punch holes";
  EXPECT_LE(after, before - 3900u * 1000);  // the first run's ~4 MB, less partial blocks
  ASSERT_TRUE(second->Open(4096).ok());
  ExpectPaddedOrder(Drain(*second));
  EXPECT_TRUE(second->read_status().ok());
}

// Opened again midway (a read ahead in flight), a spilled run starts over
// from its first event, not from the chunk that was being read.
TEST(SortedRun, SpilledRunOpenedAgainMidwayStartsOver) {
  auto file = SpillFile::Create(::testing::TempDir());
  ASSERT_TRUE(file.ok()) << file.status();
  auto run = PaddedRun(0);
  ASSERT_TRUE(run->Spill(file->get()).ok());
  ASSERT_TRUE(run->Open(8192).ok());
  for (int i = 0; i < 10; ++i) ASSERT_NE(run->Next(), nullptr);
  ASSERT_TRUE(run->Open(8192).ok());
  ExpectPaddedOrder(Drain(*run));
  EXPECT_TRUE(run->read_status().ok());
  run->DiscardSpill();
}

TEST(SortedRun, EmptyInput) {
  auto run = SortedRun::Sort(MakeTrace({}));
  EXPECT_TRUE(run->done());
  EXPECT_EQ(run->Next(), nullptr);
}

TEST(SortedRun, ManyEventsComeOutOrderedAndStable) {
  std::mt19937 rng(7);
  auto d = std::make_unique<formats::TraceData>();
  const char phases[] = {'X', 'X', 'E', 'B', 'i', 'f', 's'};
  for (uint32_t i = 0; i < 20000; ++i) {
    formats::Event e{};
    e.phase = phases[rng() % 7];
    e.ts_ns = static_cast<int64_t>(rng() % 2000) * 1000;
    e.dur_ns = e.phase == 'X' ? static_cast<int64_t>(rng() % 4) * 1000 : 0;
    e.name = i;
    e.flags = formats::kHasTs;
    d->events.push_back(e);
  }
  auto run = SortedRun::Sort(std::move(d));
  std::vector<bool> seen(20000, false);
  SortKey prev{INT64_MIN, 0, 0};
  bool first = true;
  size_t n = 0;
  while (!run->done()) {
    SortKey k = run->PeekKey();
    const formats::Event* e = run->Next();
    ASSERT_EQ(k.index, e->name);
    ASSERT_FALSE(seen[e->name]);
    seen[e->name] = true;
    if (!first) {
      ASSERT_TRUE(KeyLess(prev, k)) << "event " << e->name;
    }
    EXPECT_EQ(KeyLess(k, MakeSortKey(*e, k.index)), false);
    prev = k;
    first = false;
    ++n;
  }
  EXPECT_EQ(n, 20000u);
}

TEST(MakeSortKey, OrdersPhasesAtEqualTs) {
  formats::Event e{}, x_long{}, x_short{}, other{};
  e.phase = 'E';
  x_long.phase = 'X';
  x_long.dur_ns = 500;
  x_short.phase = 'X';
  x_short.dur_ns = 5;
  other.phase = 'B';
  EXPECT_TRUE(KeyLess(MakeSortKey(e, 9), MakeSortKey(x_long, 0)));
  EXPECT_TRUE(KeyLess(MakeSortKey(x_long, 9), MakeSortKey(x_short, 0)));
  EXPECT_TRUE(KeyLess(MakeSortKey(x_short, 9), MakeSortKey(other, 0)));
  EXPECT_TRUE(KeyLess(MakeSortKey(other, 1), MakeSortKey(other, 2)));
}

}  // namespace
}  // namespace tracemill::merge
