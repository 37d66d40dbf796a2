// Fuzzes the Paddle network log reader (`formats/paddle/net_log.*`), both
// ways it is used: `tracemill convert`'s mapping (`DecodeNetLogToTrace`) and
// the network lanes `tracemill csp` writes (`WriteCspTrace`). Oracles:
// status OK or DataLoss with an offset inside the input; every non-blank
// line is a sample or counted as dropped; `CheckTrace` (kept = samples,
// strict JSON args, times within +-2^62 ns) and the sorted run writes as
// strict JSON; the csp lanes hold one counter per sample and are strict
// JSON, in ns or exact µs.
#include "formats/chrome/output_file.h"
#include "formats/common/trace_data.h"
#include "formats/common/ts_text.h"
#include "formats/paddle/csp_trace.h"
#include "formats/paddle/net_log.h"
#include "formats/paddle/net_log_format.h"
#include "merge/sorted_run.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tracemill;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  formats::NetLogFile f = formats::ParseNetLog("net.3", text);
  const formats::DecodeReport& rep = f.report;
  TM_FUZZ_CHECK(rep.status.ok() || absl::IsDataLoss(rep.status));
  TM_FUZZ_CHECK(rep.error_offset <= size);
  TM_FUZZ_CHECK(rep.events_read == f.samples.size() + rep.dropped.Total());
  for (const formats::NetSample& s : f.samples) TM_FUZZ_CHECK(formats::InTimeRange(s.ts_ns));

  formats::TraceBuilder builder;
  formats::DecodeReport conv = formats::DecodeNetLogToTrace("net.3", text, &builder);
  auto trace = builder.Finish();
  TM_FUZZ_CHECK(trace->events.size() == f.samples.size());
  TM_FUZZ_CHECK(trace->meta.name_number_is_trainer);
  fuzz::CheckTrace(*trace, conv);
  auto run = merge::SortedRun::Sort(std::move(trace));
  fuzz::WriteAndCheck(*run, 0);

  formats::CspTraceInput in;
  in.unit = size % 2 ? formats::CspTimeUnit::kMicros : formats::CspTimeUnit::kReferenceNs;
  in.net_lanes = true;
  in.net.push_back({3, &f});
  static formats::CspScratch scratch;
  formats::CspTraceStats stats;
  auto out = formats::OutputFile::CreateInMemory(/*gzip=*/false);
  TM_FUZZ_CHECK(formats::WriteCspTrace(in, out.get(), &scratch, &stats).ok() && out->Commit().ok());
  TM_FUZZ_CHECK(stats.net_rows == f.samples.size());
  TM_FUZZ_CHECK(fuzz::StrictJson(out->memory()));
  return 0;
}
