// DecodedRuns: which spilled runs go through the page cache and which
// bypass it (the page-cache allowance of decoded_runs.h), and that freeing
// a run gives its share of the allowance back.
#include "pipeline/convert/decoded_runs.h"

#include <memory>
#include <string>

#include "formats/common/direct_io.h"
#include "gtest/gtest.h"
#include "tests/testing/direct_io_probe.h"

namespace tracemill::pipeline {
namespace {

std::unique_ptr<merge::SortedRun> SpillableRun() {
  auto d = std::make_unique<formats::TraceData>();
  static const std::string rest(500, 'r');
  for (uint32_t i = 0; i < 2000; ++i) {
    formats::Event e{};
    e.phase = 'X';
    e.ts_ns = (i * 7919 % 2000) * 1000;
    e.dur_ns = 500;
    e.flags = formats::kHasTs | formats::kHasDur;
    std::string_view v = d->rest_arena.Copy(rest);
    e.rest = v.data();
    e.rest_len = static_cast<uint32_t>(v.size());
    d->events.push_back(e);
  }
  return merge::SortedRun::Sort(std::move(d));
}

// Allowance of one run: the first spills through the page cache, the second
// (one run's bytes already there) direct; once the first is freed, the third
// goes through the page cache again. Nothing fits the (zero) runs budget.
TEST(DecodedRuns, SpillBypassesThePageCachePastItsAllowance) {
  const uint64_t one_run = SpillableRun()->ResidentBytes();
  const bool can = tracemill::testing::DirTakesDirectIo(::testing::TempDir());
  DecodedRuns runs(3, /*budget_bytes=*/0, ::testing::TempDir(), /*page_cache_bytes=*/one_run, /*direct_io=*/true);
  std::unique_ptr<merge::SpillFile> spill;
  ASSERT_TRUE(runs.Keep(0, SpillableRun(), &spill).ok());
  ASSERT_TRUE(runs.Keep(1, SpillableRun(), &spill).ok());
  ASSERT_TRUE(runs.get(0)->spilled() && runs.get(1)->spilled());
  EXPECT_FALSE(runs.get(0)->spill_direct());
  EXPECT_EQ(runs.get(1)->spill_direct(), can);
  runs.Free(0);
  ASSERT_TRUE(runs.Keep(2, SpillableRun(), &spill).ok());
  EXPECT_FALSE(runs.get(2)->spill_direct());
  EXPECT_EQ(runs.spilled_runs(), 3u);
  EXPECT_EQ(runs.direct_runs(), can ? 1u : 0u);
  // Both forms read back every event.
  for (size_t i : {1, 2}) {
    ASSERT_TRUE(runs.get(i)->Open(1 << 16).ok());
    size_t n = 0;
    while (runs.get(i)->Next()) ++n;
    EXPECT_EQ(n, 2000u) << "run " << i;
    EXPECT_TRUE(runs.get(i)->read_status().ok());
  }
  runs.Free(1);
  runs.Free(2);
}

// --no-direct-io: every run through the page cache, whatever the allowance.
TEST(DecodedRuns, NoDirectIoNeverBypassesThePageCache) {
  DecodedRuns runs(2, 0, ::testing::TempDir(), /*page_cache_bytes=*/0, /*direct_io=*/false);
  std::unique_ptr<merge::SpillFile> spill;
  ASSERT_TRUE(runs.Keep(0, SpillableRun(), &spill).ok());
  ASSERT_TRUE(runs.Keep(1, SpillableRun(), &spill).ok());
  EXPECT_FALSE(runs.get(0)->spill_direct());
  EXPECT_FALSE(runs.get(1)->spill_direct());
  EXPECT_EQ(runs.direct_runs(), 0u);
  runs.Free(0);
  runs.Free(1);
}

}  // namespace
}  // namespace tracemill::pipeline
