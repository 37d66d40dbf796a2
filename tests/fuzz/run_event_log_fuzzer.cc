// Fuzzes the run event log decoder (`formats/orchestrator/`: JSON Lines of
// an orchestrator's scheduler and workers). Oracles: status OK, DataLoss or
// InvalidArgument (nothing kept then); `CheckTrace` (every line read is an
// event kept or dropped with a reason; strict JSON args; times within
// +-2^62 ns; steps and tracks well-formed); the sorted run writes as strict
// JSON, with relative times when the input's size is odd (`WriteAndCheck`).
#include "formats/common/trace_data.h"
#include "formats/orchestrator/run_event_log_decoder.h"
#include "merge/sorted_run.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tracemill;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  static formats::RunEventLogDecoder decoder;
  formats::TraceBuilder builder;
  formats::DecodeReport rep = decoder.Decode(text, &builder);
  TM_FUZZ_CHECK(rep.status.ok() || absl::IsDataLoss(rep.status) || absl::IsInvalidArgument(rep.status));
  TM_FUZZ_CHECK(rep.error_offset <= size);
  auto trace = builder.Finish();
  if (absl::IsInvalidArgument(rep.status)) {
    TM_FUZZ_CHECK(trace->events.empty());
    return 0;
  }
  fuzz::CheckTrace(*trace, rep);
  int64_t first = INT64_MAX;
  for (const auto& e : trace->events)
    if ((e.flags & formats::kHasTs) && e.phase != 'M') first = std::min(first, e.ts_ns);
  auto run = merge::SortedRun::Sort(std::move(trace));
  fuzz::WriteAndCheck(*run, size % 2 && first != INT64_MAX ? first : 0);
  return 0;
}
