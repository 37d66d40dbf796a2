// Fuzzes the Paddle profile reader (`formats/paddle/`: the direct protobuf
// wire reader) and its `tracemill convert` mapping. Oracles:
// - `DecodePaddleProfile`: status OK or DataLoss with an offset inside the
//   input; `LooksLikePaddleProfile` never crashes;
// - the marker scan (`ScanPipelineMarkers`, which skips most bodies) agrees
//   with the full decode whenever the full decode is clean: same counts, and
//   exactly the markers `AsPipelineMarker` finds among the decoded events;
// - `DecodePaddleToTrace` into a TraceBuilder passes `CheckTrace` (read =
//   kept + dropped, strict JSON args, times within +-2^62 ns), and the sorted
//   run writes as strict JSON (`WriteAndCheck`).
#include "formats/common/trace_data.h"
#include "formats/paddle/csp_trace.h"
#include "formats/paddle/paddle_decoder.h"
#include "formats/paddle/paddle_profile.h"
#include "merge/sorted_run.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tracemill;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)formats::LooksLikePaddleProfile(bytes, /*complete=*/true);

  static formats::PaddleProfile profile;
  formats::PaddleParseResult full = formats::DecodePaddleProfile(bytes, &profile);
  TM_FUZZ_CHECK(full.status.ok() || absl::IsDataLoss(full.status));
  TM_FUZZ_CHECK(full.error_offset <= size);
  TM_FUZZ_CHECK(full.events == profile.events.size() && full.mem_events == profile.mem_events.size());

  std::vector<formats::PipelineMarker> scanned;
  formats::PaddleParseResult scan = formats::ScanPipelineMarkers(bytes, &scanned);
  if (full.status.ok()) {
    TM_FUZZ_CHECK(scan.status.ok() && scan.events == full.events && scan.mem_events == full.mem_events);
    std::vector<formats::PipelineMarker> expected;
    for (const formats::PaddleEvent& e : profile.events) {
      formats::PipelineMarker m;
      if (formats::AsPipelineMarker(e, &m)) expected.push_back(m);
    }
    TM_FUZZ_CHECK(scanned.size() == expected.size());
    for (size_t i = 0; i < expected.size(); ++i)
      TM_FUZZ_CHECK(scanned[i].ts_ns == expected[i].ts_ns && scanned[i].stage == expected[i].stage &&
                    scanned[i].begin == expected[i].begin &&
                    scanned[i].mem_bytes == expected[i].mem_bytes);
  }

  formats::TraceBuilder builder;
  formats::DecodeReport rep = formats::DecodePaddleToTrace(bytes, &builder);
  TM_FUZZ_CHECK(rep.status.code() == full.status.code());
  auto trace = builder.Finish();
  fuzz::CheckTrace(*trace, rep);
  auto run = merge::SortedRun::Sort(std::move(trace));
  fuzz::WriteAndCheck(*run, 0);
  return 0;
}
