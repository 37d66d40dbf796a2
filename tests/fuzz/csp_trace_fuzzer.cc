// Fuzzes `tracemill csp`'s path for one displayed rank: the Paddle profile
// in the input -> `PlanCspRank` (lanes, markers, span) -> marker pairing ->
// `WriteCspTrace` into memory, in nanoseconds as the reference writes them
// (even input size) or exact microseconds (odd). Oracles: the plan's decode
// agrees with `DecodePaddleProfile`; every marker is paired or dropped
// (markers == 2 x spans + dropped); every Event and MemEvent is written or
// counted as another device's (csp's read = written + dropped); the output
// is strict JSON.
#include "formats/chrome/output_file.h"
#include "formats/paddle/csp_trace.h"
#include "formats/paddle/paddle_profile.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tracemill;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  constexpr int64_t kRank = 3, kGpu = 3;
  static formats::CspRankPlan plan;
  formats::PlanCspRank(bytes, kGpu, &plan);
  static formats::PaddleProfile profile;
  formats::PaddleParseResult full = formats::DecodePaddleProfile(bytes, &profile);
  TM_FUZZ_CHECK(plan.parse.status.code() == full.status.code() && plan.parse.events == full.events &&
                plan.parse.mem_events == full.mem_events);

  std::vector<formats::PipelineMarker> markers = plan.markers;
  std::vector<formats::PipelineSpan> spans;
  formats::MarkerPairing pairing = formats::PairPipelineMarkers(kRank, &markers, &spans);
  TM_FUZZ_CHECK(pairing.markers == plan.markers.size() && spans.size() == pairing.spans &&
                pairing.markers == 2 * pairing.spans + pairing.dropped());

  formats::CspTraceInput in;
  in.group = 0;
  in.gpu = kGpu;
  in.unit = size % 2 ? formats::CspTimeUnit::kMicros : formats::CspTimeUnit::kReferenceNs;
  in.spans = &spans;
  in.ranks.push_back({kRank, bytes, &plan});
  in.other_data_json = "{\"fuzz\":true}";
  static formats::CspScratch scratch;
  formats::CspTraceStats stats;
  auto out = formats::OutputFile::CreateInMemory(/*gzip=*/false);
  TM_FUZZ_CHECK(formats::WriteCspTrace(in, out.get(), &scratch, &stats).ok() && out->Commit().ok());
  const formats::CspRankStats& rs = stats.ranks.at(0);
  TM_FUZZ_CHECK(rs.events_written == full.events);
  TM_FUZZ_CHECK(rs.mem_events_written + rs.mem_events_other_device == full.mem_events);
  TM_FUZZ_CHECK(fuzz::StrictJson(out->memory()));
  return 0;
}
