// Building blocks of issue 4: smdebug path names, window bounds, B/E pairing.
#include <limits>
#include <string>

#include "gtest/gtest.h"
#include "formats/common/time_window.h"
#include "formats/common/ts_text.h"
#include "formats/smdebug/smdebug_layout.h"

namespace tracemill::formats {
namespace {

TEST(SmdebugLayout, FrameworkFileNames) {
  SmdebugPath p = ClassifySmdebugPath("job/framework/pevents/2020051923/1589930988000000_4487_0000_pythontimeline.json");
  EXPECT_EQ(p.kind, SmdebugFileKind::kFramework);
  EXPECT_EQ(p.node, "4487_0000");
  EXPECT_EQ(p.suffix, "pythontimeline");
  EXPECT_EQ(p.time_us, 1589930988000000);
  p = ClassifySmdebugPath("x/1594662624558411_905-b88ab1bb8259_model_timeline.json");
  EXPECT_EQ(p.kind, SmdebugFileKind::kFramework);
  EXPECT_EQ(p.node, "905-b88ab1bb8259");
  p = ClassifySmdebugPath("x/framework/pevents/1/1594662624558411_905-host_horovod_timeline.json.tmp");
  EXPECT_EQ(p.kind, SmdebugFileKind::kInProgress);
  EXPECT_EQ(ClassifySmdebugPath("x/rank-0.json").kind, SmdebugFileKind::kNone);
}

TEST(SmdebugLayout, MarkerSystemAndTfNames) {
  SmdebugPath m = ClassifySmdebugPath("80807-8c859046be41.ant.amazon.com_1596659864545103_1596659864854168.metadata");
  EXPECT_EQ(m.kind, SmdebugFileKind::kMetadataMarker);
  EXPECT_EQ(m.node, "80807-8c859046be41.ant.amazon.com");
  EXPECT_EQ(m.time_us, 1596659864545103);
  EXPECT_EQ(m.end_us, 1596659864854168);
  SmdebugPath s = ClassifySmdebugPath("job/system/incremental/2020060300/1591160699.algo-1.json");
  EXPECT_EQ(s.kind, SmdebugFileKind::kSystemMetrics);
  EXPECT_EQ(s.node, "algo-1");
  // Outside a system/ folder a sample file is recognized by content instead.
  EXPECT_EQ(ClassifySmdebugPath("1591160699.algo-1.json").kind, SmdebugFileKind::kNone);
  EXPECT_EQ(ClassifySmdebugPath("a/plugins/profile/2020_08_05/host.trace.json.gz").kind,
            SmdebugFileKind::kTfProfilerTrace);
}

TEST(SmdebugLayout, NodeRankAndPhaseOrder) {
  EXPECT_EQ(SmdebugNodeRank("4487_0003"), 3);  // <pid>_<rank>
  EXPECT_EQ(SmdebugNodeRank("0001"), 1);
  EXPECT_EQ(SmdebugNodeRank("905-b88ab1bb8259"), std::nullopt);  // rank or pid: unknown
  EXPECT_LT(SmdebugPhaseOrder("Step:ModeKeys.TRAIN"), SmdebugPhaseOrder("Forward-pass"));
  EXPECT_LT(SmdebugPhaseOrder("Backward"), SmdebugPhaseOrder("DataIterator"));
  EXPECT_LT(SmdebugPhaseOrder("/device:GPU:0"), SmdebugPhaseOrder("/host:CPU"));
  EXPECT_LT(SmdebugPhaseOrder("cpu_functions"), SmdebugPhaseOrder("Adam_Allreduce/HorovodAllreduce_x"));
  EXPECT_LT(SmdebugPhaseOrder("Adam_Allreduce/HorovodAllreduce_x"), SmdebugPhaseOrder("NcclManager"));
}

TEST(TimeArg, MicrosAndIso8601WithZone) {
  EXPECT_EQ(*ParseTimeArg("1589930980000000"), 1589930980000000000);
  EXPECT_EQ(*ParseTimeArg("1589930980000000.5"), 1589930980000000500);
  EXPECT_EQ(*ParseTimeArg("2020-05-19T23:29:40Z"), 1589930980000000000);
  EXPECT_EQ(*ParseTimeArg("2020-05-20T01:29:40.000001+02:00"), 1589930980000001000);
  EXPECT_FALSE(ParseTimeArg("2020-05-19T23:29:40").ok());  // no zone
  EXPECT_FALSE(ParseTimeArg("yesterday").ok());
}

TEST(TimeWindow, OverlapIsInclusiveAndUnclipped) {
  TimeWindow w{100, 200};
  Event x{};
  x.phase = 'X';
  x.flags = kHasTs | kHasDur;
  x.ts_ns = 50;
  x.dur_ns = 50;  // ends exactly at the start: kept
  EXPECT_TRUE(w.Keeps(x));
  x.dur_ns = 49;
  EXPECT_FALSE(w.Keeps(x));
  Event m{};
  m.phase = 'M';
  EXPECT_TRUE(w.Keeps(m));
  Event i{};
  i.phase = 'i';
  i.flags = kHasTs;
  i.ts_ns = 201;
  EXPECT_FALSE(w.Keeps(i));
}

// A span whose end would pass int64's range saturates rather than wraps
// (wrapped, the B below would end before 100 and be dropped).
TEST(TimeWindow, SpanPastInt64Saturates) {
  Event b{};
  b.phase = 'B';
  b.flags = kHasTs | kHasSpan;
  b.ts_ns = 5;
  b.dur_ns = std::numeric_limits<int64_t>::max() - 1;
  EXPECT_TRUE((TimeWindow{100, 200}.Keeps(b)));
  Event e = b;
  e.phase = 'E';
  e.ts_ns = -5;
  EXPECT_TRUE((TimeWindow{-200, -100}.Keeps(e)));
  EXPECT_FALSE((TimeWindow{0, 10}.Keeps(e)));
}

// PairBeginEnd: an open B at the bottom of the range spans to the top
// (2^62 - 1 + 2^62 - 1 ns) without overflow.
TEST(PairBeginEnd, OpenSpanAcrossTheWholeRange) {
  TraceBuilder b;
  uint32_t pid = b.InternPid("1");
  uint32_t name = b.InternString("a");
  Event x{};
  x.phase = 'X';
  x.name = name;
  x.pid = pid;
  x.ts_ns = kMaxAbsTimeNs;
  x.dur_ns = kMaxAbsTimeNs;
  x.flags = kHasTs | kHasDur | kHasPid;
  b.AddEvent(x);
  Event o{};
  o.phase = 'B';
  o.ph = b.InternString("B");
  o.name = name;
  o.pid = pid;
  o.ts_ns = -kMaxAbsTimeNs;
  o.flags = kHasTs | kHasPid;
  b.AddEvent(o);
  auto data = b.Finish();
  DropCounts dropped;
  std::vector<std::string> warnings;
  PairBeginEnd(data.get(), &dropped, &warnings);
  ASSERT_EQ(data->events.size(), 2u);
  EXPECT_EQ(data->events[1].dur_ns, 2 * kMaxAbsTimeNs);  // to the top of the range
}

TEST(PairBeginEnd, NamelessSurplusAndOpen) {
  TraceBuilder b;
  uint32_t pid = b.InternPid("1");
  uint32_t name = b.InternString("NEGOTIATE");
  uint32_t ph_b = b.InternString("B"), ph_e = b.InternString("E");
  auto add = [&](char phase, int64_t ts, uint32_t n) {
    Event e{};
    e.phase = phase;
    e.ph = phase == 'B' ? ph_b : ph_e;
    e.name = n;
    e.pid = pid;
    e.ts_ns = ts;
    e.flags = kHasTs | kHasPid;
    b.AddEvent(e);
  };
  add('E', 5, 0);      // surplus: nothing open
  add('B', 10, name);
  add('E', 30, 0);     // nameless: closes the B at 10
  add('B', 40, name);  // never closed
  add('X', 0, name);   // (not a B/E: untouched)
  auto data = b.Finish();
  data->events.back().flags |= kHasDur;
  data->events.back().dur_ns = 100;  // the input's latest time: 100
  DropCounts dropped;
  std::vector<std::string> warnings;
  PairBeginEnd(data.get(), &dropped, &warnings);
  ASSERT_EQ(data->events.size(), 4u);
  EXPECT_EQ(dropped[DropReason::kUnmatchedEnd], 1u);
  EXPECT_EQ(data->events[1].name, name);  // the nameless E got its B's name
  EXPECT_EQ(data->events[0].dur_ns, 20);
  EXPECT_EQ(data->events[2].dur_ns, 60);  // open B: to the input's end
  EXPECT_EQ(warnings.size(), 3u);
}

}  // namespace
}  // namespace tracemill::formats
