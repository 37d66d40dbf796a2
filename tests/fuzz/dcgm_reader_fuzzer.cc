// Fuzzes the `dcgmi dmon` text reader (`formats/dcgm/`), both ways it is
// used: `tracemill convert`'s mapping (`DecodeDcgmToTrace`) and the DCGM
// lanes `tracemill csp` writes. Oracles: every `GPU` row is a sample or
// counted as dropped (N/A or malformed); a rejected file (no header, a
// column missing) has no samples, and convert skips it; `CheckTrace` (kept
// = samples, strict JSON args) and the sorted run writes as strict JSON;
// every sample's exact ns time and the reference's float time agree to
// within float64 rounding; the DCGM lanes written from the samples of GPU 0
// are strict JSON (no NaN or Infinity, whatever the values).
#include <cmath>

#include "formats/chrome/output_file.h"
#include "formats/common/trace_data.h"
#include "formats/dcgm/dcgm_format.h"
#include "formats/dcgm/dcgm_reader.h"
#include "formats/paddle/csp_trace.h"
#include "merge/sorted_run.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tracemill;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  formats::DcgmFile f = formats::ParseDcgmDmon(text);
  TM_FUZZ_CHECK(f.status.ok() || absl::IsInvalidArgument(f.status));
  if (!f.status.ok()) TM_FUZZ_CHECK(f.samples.empty());
  TM_FUZZ_CHECK(f.rows == f.samples.size() + f.dropped_na + f.dropped_malformed);

  formats::TraceBuilder builder;
  formats::DecodeReport conv = formats::DecodeDcgmToTrace("dcgm.3", text, &builder);
  auto trace = builder.Finish();
  // Every sample is an event, but one whose TIMESTAMP is past +-2^62 ns (bad_ts).
  TM_FUZZ_CHECK(trace->events.size() + conv.dropped[formats::DropReason::kBadTs] == f.samples.size());
  TM_FUZZ_CHECK(trace->meta.name_number_is_trainer);
  TM_FUZZ_CHECK(conv.skip_note.empty() == f.status.ok());
  if (conv.skip_note.empty()) {
    fuzz::CheckTrace(*trace, conv);
    auto run = merge::SortedRun::Sort(std::move(trace));
    fuzz::WriteAndCheck(*run, 0);
  }

  formats::CspTraceInput in;
  in.gpu = 0;
  in.unit = size % 2 ? formats::CspTimeUnit::kMicros : formats::CspTimeUnit::kReferenceNs;
  in.dcgm_lanes = true;
  formats::CspDcgmTrainer t;
  t.slot = 1;
  for (const formats::DcgmSample& s : f.samples) {
    for (double v : s.values) TM_FUZZ_CHECK(std::isfinite(v));
    const double diff = std::fabs(static_cast<double>(s.ts_ns) - static_cast<double>(s.ts_float_ns));
    TM_FUZZ_CHECK(diff <= std::fabs(static_cast<double>(s.ts_ns)) * 1e-15 + 2);
    if (s.gpu == in.gpu) t.samples.push_back(&s);
  }
  in.dcgm.push_back(std::move(t));
  static formats::CspScratch scratch;
  formats::CspTraceStats stats;
  auto out = formats::OutputFile::CreateInMemory(/*gzip=*/false);
  TM_FUZZ_CHECK(formats::WriteCspTrace(in, out.get(), &scratch, &stats).ok() && out->Commit().ok());
  TM_FUZZ_CHECK(stats.dcgm_rows == in.dcgm[0].samples.size());
  TM_FUZZ_CHECK(fuzz::StrictJson(out->memory()));
  return 0;
}
