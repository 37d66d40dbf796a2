// Building blocks of formats/paddle/csp_trace.h: the marker scan that skips
// the events it does not need, and marker pairing.
#include "formats/paddle/csp_trace.h"

#include <gtest/gtest.h>

#include "tests/csp/test_util.h"

namespace tracemill::formats {
namespace {

using testing::Wire;

std::vector<PipelineMarker> FullDecodeMarkers(const std::string& bytes, PaddleParseResult* r) {
  PaddleProfile p;
  *r = DecodePaddleProfile(bytes, &p);
  std::vector<PipelineMarker> v;
  for (const auto& e : p.events) {
    PipelineMarker m;
    if (AsPipelineMarker(e, &m)) {
      m.seq = static_cast<uint32_t>(v.size());
      v.push_back(m);
    }
  }
  return v;
}

bool Same(const std::vector<PipelineMarker>& a, const std::vector<PipelineMarker>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].ts_ns != b[i].ts_ns || a[i].seq != b[i].seq || a[i].begin != b[i].begin ||
        a[i].stage != b[i].stage || a[i].mem_bytes != b[i].mem_bytes)
      return false;
  return true;
}

TEST(ScanPipelineMarkers, SameAsFullDecodeOnReferenceProfiles) {
  for (int rank = 0; rank < 16; ++rank) {
    const std::string bytes = testing::ReadFile(std::string(PADDLE_CSP_DATA) +
                                                "/small/data/profile/profile." + std::to_string(rank));
    PaddleParseResult full, scan;
    std::vector<PipelineMarker> a = FullDecodeMarkers(bytes, &full), b;
    scan = ScanPipelineMarkers(bytes, &b);
    ASSERT_TRUE(scan.status.ok()) << scan.status;
    EXPECT_EQ(a.size(), 40u);
    EXPECT_TRUE(Same(a, b)) << "rank " << rank;
    EXPECT_EQ(scan.events, full.events);
    EXPECT_EQ(scan.mem_events, full.mem_events);
  }
}

// The name inside other strings, a marker name overridden by a later name
// field (proto2: last wins), and a marker whose name comes last.
TEST(ScanPipelineMarkers, TrickyNames) {
  const std::string name(kCspMarkerName);
  Wire e1, e2, e3, e4, mem, file;
  e1.Str(1, "op").Str(9, name).U64(2, 10);                                // name only in detail
  e2.Str(1, name).Str(9, "marker_forward_B").U64(2, 20).Str(1, "later");  // overridden: not a marker
  e3.Str(1, "first").U64(2, 30).Str(9, "marker_forward_B").Str(1, name);  // last name wins: a marker
  e4.Str(1, name).U64(2, 40).Str(9, "marker_forward_E");
  mem.Str(7, name).U64(3, 1);
  file.Msg(4, mem).Msg(1, e1).Msg(1, e2).Msg(1, e3).Msg(1, e4);
  PaddleParseResult full, scan;
  std::vector<PipelineMarker> a = FullDecodeMarkers(file.bytes(), &full), b;
  scan = ScanPipelineMarkers(file.bytes(), &b);
  ASSERT_TRUE(scan.status.ok()) << scan.status;
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].ts_ns, 30u);
  EXPECT_TRUE(b[0].begin);
  EXPECT_EQ(b[1].ts_ns, 40u);
  EXPECT_FALSE(b[1].begin);
  EXPECT_TRUE(Same(a, b));
  EXPECT_EQ(scan.events, 4u);
  EXPECT_EQ(scan.mem_events, 1u);
}

// Framing damage is reported exactly as by a full decode.
TEST(ScanPipelineMarkers, TruncationReportedLikeAFullDecode) {
  const std::string bytes =
      testing::ReadFile(std::string(PADDLE_CSP_DATA) + "/small/data/profile/profile.0");
  const std::string cut = bytes.substr(0, bytes.size() / 2);
  PaddleParseResult full, scan;
  std::vector<PipelineMarker> a = FullDecodeMarkers(cut, &full), b;
  scan = ScanPipelineMarkers(cut, &b);
  EXPECT_EQ(scan.status, full.status);
  EXPECT_EQ(scan.error_offset, full.error_offset);
  EXPECT_EQ(scan.events, full.events);
  EXPECT_TRUE(Same(a, b));
  EXPECT_EQ(scan.status.code(), absl::StatusCode::kDataLoss);
}

TEST(PairPipelineMarkers, PairsInTimeOrder) {
  std::vector<PipelineMarker> m;
  auto add = [&](uint64_t ts, PipelineStage st, bool begin) {
    PipelineMarker x;
    x.ts_ns = ts;
    x.stage = st;
    x.begin = begin;
    x.seq = static_cast<uint32_t>(m.size());
    m.push_back(x);
  };
  add(300, PipelineStage::kBackward, false);
  add(100, PipelineStage::kForward, true);
  add(200, PipelineStage::kBackward, true);   // nested inside forward: forward B dropped
  add(250, PipelineStage::kForward, false);   // mismatched with backward B: both dropped
  add(400, PipelineStage::kForward, true);
  add(400, PipelineStage::kForward, false);   // same ts: file order decides, B first
  std::vector<PipelineSpan> spans;
  MarkerPairing r = PairPipelineMarkers(7, &m, &spans);
  EXPECT_EQ(r.markers, 6u);
  EXPECT_EQ(r.spans, 1u);
  EXPECT_EQ(r.dropped_begin_without_end, 1u);
  EXPECT_EQ(r.dropped_mismatched, 2u);
  EXPECT_EQ(r.dropped_end_without_begin, 1u);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].rank, 7);
  EXPECT_EQ(spans[0].ts_ns, 400u);
  EXPECT_EQ(spans[0].dur_ns, 0);
  EXPECT_EQ(r.markers, 2 * r.spans + r.dropped());
}

}  // namespace
}  // namespace tracemill::formats
