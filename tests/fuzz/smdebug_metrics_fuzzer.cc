// Fuzzes the smdebug system-metrics decoder (`formats/smdebug/`, JSON Lines
// of samples, through `pipeline::DecodeSystemMetricsFile` as a loose file
// is decoded). Oracles: status OK, DataLoss or InvalidArgument (nothing kept
// then); `CheckTrace` (every sample read, and every derived low-GPU slice,
// is an event kept or dropped with a reason; strict JSON args; times within
// +-2^62 ns); the sorted run writes as strict JSON (`WriteAndCheck`). The
// low-GPU threshold varies with the input's size (0..100 %).
#include <simdjson.h>

#include <string>

#include "formats/common/trace_data.h"
#include "merge/sorted_run.h"
#include "pipeline/inputs/smdebug_inputs.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tracemill;
  std::string buf(reinterpret_cast<const char*>(data), size);
  buf.reserve(size + simdjson::SIMDJSON_PADDING);
  formats::TraceBuilder builder;
  formats::DecodeReport rep = pipeline::DecodeSystemMetricsFile(
      "fuzz.json", std::string_view(buf.data(), size), buf.capacity(), static_cast<double>(size % 101),
      &builder);
  TM_FUZZ_CHECK(rep.status.ok() || absl::IsDataLoss(rep.status) || absl::IsInvalidArgument(rep.status));
  TM_FUZZ_CHECK(rep.error_offset <= size);
  auto trace = builder.Finish();
  if (absl::IsInvalidArgument(rep.status)) return 0;
  fuzz::CheckTrace(*trace, rep);
  auto run = merge::SortedRun::Sort(std::move(trace));
  fuzz::WriteAndCheck(*run, 0);
  return 0;
}
