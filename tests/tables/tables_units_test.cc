// Building blocks of --tables (issue 23): ISO-8601 text, HTA's kernel types,
// percent rounding and interval merge.
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <tuple>
#include <vector>
#include <utility>

#include "analysis/collectives.h"
#include "analysis/hta_breakdowns.h"
#include "analysis/schema.h"
#include "analysis/tables.h"
#include "analysis/tables_text.h"
#include "gtest/gtest.h"

namespace tracemill::analysis {
namespace {

std::string Iso(int64_t ns) {
  char buf[48];
  return std::string(buf, static_cast<size_t>(FormatIsoTime(ns, buf)));
}

TEST(TablesText, IsoTimeIsUtcWithMicroseconds) {
  EXPECT_EQ(Iso(1591160699457089400), "2020-06-03T05:04:59.457089Z");
  EXPECT_EQ(Iso(0), "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(Iso(-1), "1969-12-31T23:59:59.999999Z");  // toward the past
  EXPECT_EQ(Iso(951782400000000000), "2000-02-29T00:00:00.000000Z");
  EXPECT_EQ(FloorDiv(-1, 1000), -1);
  EXPECT_EQ(FloorDiv(1999, 1000), 1);
}

TEST(TablesHta, KernelTypesAreHtas) {
  EXPECT_EQ(ClassifyKernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"), KernelType::kCommunication);
  EXPECT_EQ(ClassifyKernel("void foo<ncclKernel>()"), KernelType::kCommunication);
  EXPECT_EQ(ClassifyKernel("hipMemcpy"), KernelType::kCommunication);  // `^hip` is tested first
  EXPECT_EQ(ClassifyKernel("Memcpy DtoD (Device -> Device)"), KernelType::kMemory);
  EXPECT_EQ(ClassifyKernel("Memset (Device)"), KernelType::kMemory);
  EXPECT_EQ(ClassifyKernel("ampere_sgemm_128x64_nn"), KernelType::kComputation);
  EXPECT_EQ(ClassifyKernel("Event Sync"), KernelType::kOther);
  EXPECT_EQ(ClassifyKernel("cudaLaunchKernel"), KernelType::kOther);
  EXPECT_EQ(ClassifyKernel("x\nSync"), KernelType::kComputation);  // `.` stops at a newline
}

// smdebug's re.match("(.*)-(algo.*)", node_id) and its swap, case by case.
TEST(TablesPandasFrame, NodeIdIsSwappedAsSmdebugDoes) {
  EXPECT_EQ(PandasFrameNodeId("1234-algo-1"), "algo-1-1234");
  EXPECT_EQ(PandasFrameNodeId("a-algo-b-algo-c"), "algo-c-a-algo-b");  // greedy: the last "-algo"
  EXPECT_EQ(PandasFrameNodeId("-algo-1"), "algo-1-");
  EXPECT_EQ(PandasFrameNodeId("algo-1"), "algo-1");  // a system file's node: no "-algo"
  EXPECT_EQ(PandasFrameNodeId("905-b88ab1bb8259"), "905-b88ab1bb8259");
  EXPECT_EQ(PandasFrameNodeId(""), "");
}

// MicrosAsParsed equals strtod on the decimal µs text (what Python's json
// gives HTA), at every magnitude a trace has: epoch µs (0.25 µs steps),
// relative µs, sub-µs durations, negatives, exact ties.
TEST(TablesHta, MicrosAsParsedIsTheParsersDouble) {
  std::mt19937_64 rng(7);
  auto text = [](int64_t ns) {
    const uint64_t a = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
    char buf[48];
    std::snprintf(buf, sizeof(buf), "%s%llu.%03llu", ns < 0 ? "-" : "", static_cast<unsigned long long>(a / 1000),
                  static_cast<unsigned long long>(a % 1000));
    return std::strtod(buf, nullptr);
  };
  for (int64_t scale : {int64_t{1000}, int64_t{1} << 30, int64_t{4458676522690655}, int64_t{1712195495519689047},
                        (int64_t{1} << 62) - 1}) {
    for (int k = 0; k < 20000; ++k) {
      const int64_t ns = static_cast<int64_t>(rng() % static_cast<uint64_t>(scale)) * (k % 3 == 0 ? -1 : 1);
      ASSERT_EQ(MicrosAsParsed(ns), text(ns)) << ns;
    }
  }
  EXPECT_EQ(MicrosAsParsed(1712195495519689125), 1712195495519689.0);  // a tie: to the even step
  EXPECT_EQ(MicrosAsParsed(1712195495519689375), 1712195495519689.5);
  EXPECT_EQ(MicrosAsParsed(0), 0.0);
  // HTA's rounding of a 0.1 µs kernel at 1712195495519689.1: the double is
  // ...689.0, so HTA keeps [689, 689]; the exact ns would give [690, 689].
  EXPECT_EQ(HtaRoundedUs(1712195495519689100, 100), (std::pair<int64_t, int64_t>{1712195495519689, 1712195495519689}));
}

TEST(TablesHta, PercentRoundsHalfToEvenLikeNumpy) {
  EXPECT_EQ(HtaPctg(321378, 600058), 53.56);
  EXPECT_EQ(HtaPctg(1, 8), 12.5);
  EXPECT_EQ(HtaPctg(56747, 551683, 1), 10.3);
}

TEST(TablesHta, IntervalsMergeWhenTheyTouch) {
  IntervalUnion u;
  u.Add(0, 10);
  u.Add(10, 20);  // touches: one group
  u.Add(5, 8);
  u.Add(30, 35);
  EXPECT_EQ(u.Busy(), 25);
  EXPECT_EQ(u.Span(), 35);
}

// Issue 39: HTA's idle time breakdown's gaps (breakdown_analysis.py:746-945),
// rows in time order as the tap gets them, integer µs (ns = µs * 1000).
// A launch is kept a minute (RecentLaunches: memory bounded by the launches
// of a minute, not of the trace): a kernel a minute and more after its launch
// is taken as launched by nothing; so is a kernel whose launch comes more
// than a minute after it.
TEST(TablesHta, LaunchesAreKeptAMinute) {
  RecentLaunches<int64_t> l;
  constexpr int64_t kMin = RecentLaunches<int64_t>::kHorizonNs;
  l.Add(7, 1000, 70);
  l.Add(8, 2000, 80);
  ASSERT_NE(l.Find(7, 1000 + kMin), nullptr);
  EXPECT_EQ(*l.Find(7, 1000 + kMin), 70);
  EXPECT_EQ(l.Find(7, 1001 + kMin), nullptr);  // expired
  EXPECT_EQ(*l.Find(8, 1001 + kMin), 80);
  l.Add(8, 3 * kMin, 81);  // a later launch of the same correlation
  EXPECT_EQ(*l.Find(8, 3 * kMin), 81);
  EXPECT_EQ(l.size(), 1u);

  HtaTap tap(INT64_MIN);
  auto row = [&](int64_t ts_ns, int64_t stream, int64_t correlation, bool kernel) {
    HtaTap::RowFacts r;
    r.ts_ns = r.file_ts_ns = ts_ns;
    r.dur_ns = 1000;
    r.stream = stream;
    r.correlation = correlation;
    r.idle_kernel = kernel;
    r.file_order = 1;
    tap.Row(r);
  };
  constexpr int64_t kS = 1'000'000'000;
  row(0, 9, -1, true);              // stream 9's first kernel, ends at 1 us
  row(10 * kS, -1, 1, false);       // launch of 1, after that end
  row(71 * kS, 9, 1, true);         // 61 s later: its launch is forgotten
  row(72 * kS, 9, 2, true);         // no launch yet ...
  row(133 * kS + 2000, -1, 2, false);  // ... and it comes 61 s later: too late
  row(134 * kS, 9, 3, true);        // launch of 3 comes 1 s later: a host wait
  row(135 * kS, -1, 3, false);
  const HtaResult r = tap.Finish([](uint32_t) { return std::string(); });
  ASSERT_EQ(r.idle.size(), 1u);
  std::vector<std::pair<bool, int64_t>> gaps;
  for (const auto& g : r.idle[0].gaps) gaps.emplace_back(g.host_wait, g.gap_us);
  EXPECT_EQ(gaps, (std::vector<std::pair<bool, int64_t>>{
                      {false, 1'000'000 - 1}, {false, 71 * 1'000'000 - 1}, {true, 62 * 1'000'000 - 1}}));
}

TEST(TablesHta, IdleGapsAreHtasPerStreamGaps) {
  HtaTap tap(INT64_MIN);
  auto row = [&](int64_t ts_us, int64_t dur_us, int64_t stream, int64_t correlation, bool kernel, uint64_t order) {
    HtaTap::RowFacts r;
    r.ts_ns = r.file_ts_ns = ts_us * 1000;
    r.dur_ns = dur_us * 1000;
    r.stream = stream;
    r.correlation = correlation;
    r.type = KernelType::kComputation;
    r.idle_kernel = kernel;
    r.file_order = order;
    tap.Row(r);
  };
  row(100, 5, -1, 1, false, 0);   // launch of 1
  row(110, 10, 7, 1, true, 50);   // stream 7's first kernel (no gap), ends 120
  row(118, 2, -1, 2, false, 0);   // launch of 2 before 120: not a host wait
  row(125, 5, 7, 2, true, 50);    // gap 5 (< 30: kernel wait), ends 130
  row(140, 3, -1, 3, false, 0);   // launch of 3 after 130: host wait
  row(150, 5, 7, 3, true, 50);    // gap 20, host wait, ends 155
  row(200, 1, 3, 9, true, 20);    // stream 3: first in the file (order 20), later in time
  row(300, 1, 3, 8, true, 20);    // gap 299 - ... = 99; launch of 8 comes later in time:
  row(350, 1, -1, 8, false, 0);   //   launched at 350 > 201: a host wait once seen
  row(400, 1, 3, 77, true, 20);   // gap 99, launch never seen: not a host wait
  row(500, 1, 3, -1, true, 20);   // gap 99, no correlation: not a host wait
  row(600, 9, 3, 10, false, 20);  // not a kernel category (e.g. gpu_user_annotation): no gap
  row(700, 1, 5, -1, true, 0);    // stream 5: order unknown, listed last
  row(90, 1, 0, -1, false, 0);    // (out of order on purpose: only min/max of streams)
  const HtaResult r = tap.Finish([](uint32_t) { return std::string("k"); });
  ASSERT_EQ(r.idle.size(), 3u);
  EXPECT_EQ(r.idle[0].stream, 3);  // file order, not time
  EXPECT_EQ(r.idle[1].stream, 7);
  EXPECT_EQ(r.idle[2].stream, 5);
  EXPECT_EQ(r.idle[0].kernels, 4u);
  auto gaps = [](const IdleGaps& g) {
    std::vector<std::tuple<bool, int64_t, uint64_t>> v;
    for (const auto& x : g.gaps) v.emplace_back(x.host_wait, x.gap_us, x.count);
    return v;
  };
  using G = std::vector<std::tuple<bool, int64_t, uint64_t>>;
  EXPECT_EQ(gaps(r.idle[0]), (G{{false, 99, 2}, {true, 99, 1}}));
  EXPECT_EQ(gaps(r.idle[1]), (G{{false, 5, 1}, {true, 20, 1}}));
  EXPECT_EQ(gaps(r.idle[2]), G{});
  EXPECT_EQ(r.idle[2].kernels, 1u);
  EXPECT_EQ(r.stream_dtype, "int8");
  HtaTap wide(INT64_MIN);
  HtaTap::RowFacts big;
  big.stream = 203;
  wide.Row(big);
  EXPECT_EQ(wide.Finish([](uint32_t) { return std::string(); }).stream_dtype, "int16");
}

}  // namespace
}  // namespace tracemill::analysis

namespace tracemill::analysis {
namespace {

// Issue 35: the `collective` column's names, sizes and NCCL's bus factors.
TEST(CollectiveNames, KindsOfEveryRecordAreCanonical) {
  EXPECT_EQ(CanonicalCollective("AllReduce"), "allreduce");
  EXPECT_EQ(CanonicalCollective("nccl:all_reduce"), "allreduce");
  EXPECT_EQ(CanonicalCollective("gloo:all_gather"), "allgather");
  EXPECT_EQ(CanonicalCollective("NCCL_ALLREDUCE"), "allreduce");
  EXPECT_EQ(CanonicalCollective("MPI_BCAST"), "broadcast");
  EXPECT_EQ(CanonicalCollective("_allgather_base"), "allgather");
  EXPECT_EQ(CanonicalCollective("reduce_scatter_tensor_coalesced"), "reducescatter");
  EXPECT_EQ(CanonicalCollective("ReduceScatter"), "reducescatter");
  EXPECT_EQ(CanonicalCollective("SendRecv"), "sendrecv");
  EXPECT_EQ(CanonicalCollective("send"), "sendrecv");
  EXPECT_EQ(CanonicalCollective("Reduce"), "reduce");
  EXPECT_EQ(CanonicalCollective("all_to_all"), "alltoall");
  EXPECT_EQ(CanonicalCollective("Generic"), "generic");
}

TEST(CollectiveNames, BytesAndBusBandwidthFactors) {
  EXPECT_EQ(DtypeBytes("Float"), 4);
  EXPECT_EQ(DtypeBytes("BFloat16"), 2);
  EXPECT_EQ(DtypeBytes("Long"), 8);
  EXPECT_EQ(DtypeBytes("Float8_e4m3fn"), 1);
  EXPECT_EQ(DtypeBytes("Quantum"), 0);
  EXPECT_EQ(CollectiveBytes("\"args\":{\"In msg nelems\":1024,\"Out msg nelems\":8192,\"dtype\":\"Half\"}"), 16384);
  EXPECT_EQ(CollectiveBytes("\"args\":{\"In msg nelems\":1024}"), -1);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("allreduce", 8), 1.75);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("allgather", 4), 0.75);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("broadcast", 4), 1.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("barrier", 4), 0.0);
}

// Runs `sql` on `db` and returns its rows, cells as SQLite's text ("NULL").
std::vector<std::string> Rows(sqlite3* db, const char* sql) {
  std::vector<std::string> out;
  auto add = [](void* p, int n, char** cells, char**) {
    std::string row;
    for (int i = 0; i < n; ++i) row += (i ? "|" : "") + std::string(cells[i] ? cells[i] : "NULL");
    static_cast<std::vector<std::string>*>(p)->push_back(row);
    return 0;
  };
  char* err = nullptr;
  if (sqlite3_exec(db, sql, add, &out, &err) != SQLITE_OK) ADD_FAILURE() << sql << ": " << (err ? err : "?");
  sqlite3_free(err);
  return out;
}

// Issue 35 at scale: rank_waits and the notices come from the matching walk
// itself (no second pass over the rows). Group g is matched by Seq: rank 0's
// Seq 2 arrives before its Seq 1 (goes back), ranks disagree on g's size
// (3, 4) and on Seq 1's kind, only Seq 0 has a size, the unranked input is
// not on the job's clock. Group h has no Seq: matched by time. Rows are
// written inputs 1, 0, 2 and come back in input order.
TEST(MatchCollectives, WaitsAndNoticesFromTheWalk) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  for (Table t : {Table::kCollectives, Table::kCollectiveInstances, Table::kRankWaits})
    ASSERT_EQ(sqlite3_exec(db, TableSpecs()[static_cast<size_t>(TableIndex(t))].CreateSql().c_str(), nullptr,
                           nullptr, nullptr), SQLITE_OK);
  // instance, process_group, seq, collective, rank, arrival_ns, end_ns,
  // wait_ns, bytes, aligned, input, group_size, step
  Rows(db, "BEGIN; INSERT INTO collectives VALUES "
           "(NULL,'g',0,'allreduce',1,1500,1600,NULL,NULL,1,1,3,NULL),"
           "(NULL,'g',1,'allgather',1,3200,3300,NULL,NULL,1,1,3,NULL),"
           "(NULL,'h',NULL,'allreduce',1,9500,10010,NULL,NULL,1,1,NULL,NULL),"
           "(NULL,'g',0,'allreduce',0,1000,1100,NULL,100,1,0,3,NULL),"
           "(NULL,'g',1,'allreduce',0,3000,3100,NULL,NULL,1,0,3,NULL),"
           "(NULL,'g',2,'allreduce',0,2000,2100,NULL,NULL,1,0,3,NULL),"
           "(NULL,'h',NULL,'allreduce',0,9000,10000,NULL,NULL,1,0,NULL,NULL),"
           "(NULL,'g',0,'allreduce',NULL,1200,1300,NULL,NULL,0,2,4,NULL)");
  std::vector<std::string> notices;
  ASSERT_TRUE(MatchCollectives(db, &notices).ok());
  Rows(db, "COMMIT");
  // Instances by first arrival: g/0 (1000), g/2 (2000), g/1 (3000), h (9000).
  EXPECT_EQ(Rows(db, "SELECT \"input\", seq, instance, wait_ns FROM collectives"),
            (std::vector<std::string>{"0|0|0|500", "0|1|2|200", "0|2|1|0", "0|NULL|3|500", "1|0|0|0", "1|1|2|0",
                                      "1|NULL|3|0", "2|0|0|300"}));
  EXPECT_EQ(Rows(db, "SELECT instance, process_group, seq, collective, ranks, last_rank, skew_ns, latency_ns, bytes, "
                     "aligned FROM collective_instances"),
            (std::vector<std::string>{"0|g|0|allreduce|3|1|500|100|100|0", "1|g|2|allreduce|1|0|0|100|NULL|1",
                                      "2|g|1|allreduce|2|1|200|100|NULL|1", "3|h|NULL|allreduce|2|1|500|510|NULL|1"}));
  // rank, instances, times_last, caused_ns, waited_ns; no rank first.
  EXPECT_EQ(Rows(db, "SELECT * FROM rank_waits"),
            (std::vector<std::string>{"NULL|1|0|0|300", "0|4|0|0|1200", "1|3|3|1500|0"}));
  EXPECT_EQ(notices.size(), 6u);
  const std::string all = ::testing::PrintToString(notices);
  for (const char* want : {"collectives: 3 of 4 instances are missing on some ranks of their process group",
                           "collectives: 1 process group's ranks disagree on its size",
                           "collectives: 1 op repeats or goes back in its rank's Seq",
                           "collectives: at 1 instance the ranks disagree on the collective's kind",
                           "collectives: 3 of 4 instances have no message size",
                           "collectives: 1 of 4 instances involve ranks whose clock is not aligned"})
    EXPECT_NE(all.find(want), std::string::npos) << want << " not in " << all;
  sqlite3_close(db);
}

}  // namespace
}  // namespace tracemill::analysis
