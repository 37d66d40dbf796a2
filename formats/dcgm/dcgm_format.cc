#include "formats/dcgm/dcgm_format.h"

#include <charconv>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "formats/common/status_macros.h"
#include "formats/common/ts_text.h"
#include "formats/dcgm/dcgm_reader.h"

namespace tracemill::formats {
namespace {

class DcgmFormatDecoder final : public FormatDecoder {
 public:
  DecodeReport Decode(const InputBytes& in, const DecodeSettings&, TraceBuilder* out) override {
    const size_t slash = in.path.rfind('/');
    return DecodeDcgmToTrace(slash == std::string_view::npos ? in.path : in.path.substr(slash + 1), in.data, out);
  }
};

std::unique_ptr<FormatDecoder> CreateDcgmDecoder() { return std::make_unique<DcgmFormatDecoder>(); }

// Text, not JSON: Sniff sees no shape, or (a first byte such as `#` or `S`)
// the start of a protobuf field.
bool IsDcgm(FormatId shape, std::string_view data) {
  return (shape == FormatId::kUnknown || shape == FormatId::kPaddleProfile) && LooksLikeDcgmDmon(data.substr(0, 4096));
}

// AppendNumber: the shortest decimal that reads back as `v` (finite).
void AppendNumber(double v, std::string* out) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, ec == std::errc() ? end : buf);
}

}  // namespace

const InputFormat& DcgmFormat() {
  static const InputFormat f{"dcgm_dmon", IsDcgm, CreateDcgmDecoder};
  return f;
}

DecodeReport DecodeDcgmToTrace(std::string_view name, std::string_view text, TraceBuilder* out) {
  DecodeReport rep;
  DcgmFile f = ParseDcgmDmon(text);
  out->meta().name_number_is_trainer = true;
  if (!f.status.ok()) {
    rep.skip_note = absl::StrCat("skipped: dcgmi dmon output that tracemill cannot draw: ", f.status.message());
    return rep;
  }
  rep.events_read = f.rows;
  rep.dropped.Add(DropReason::kNaSample, f.dropped_na);
  rep.dropped.Add(DropReason::kBadRow, f.dropped_malformed);
  for (std::string& w : DcgmDropWarnings(f, absl::StrCat(AbslView(name), ": "))) rep.warnings.push_back(std::move(w));
  out->timeline().gpus = SummarizeDcgm(f);
  if (f.samples.empty()) return rep;
  const uint32_t pid = out->InternPid("\"DCGM\"");
  const uint32_t ph = out->InternString("C");
  std::map<int64_t, uint32_t> gpu_name;  // Entity id -> interned "GPU <n>"
  std::string rest;
  out->ReserveEvents(f.samples.size());
  uint64_t bad_ts = 0;
  for (const DcgmSample& s : f.samples) {
    if (!InTimeRange(s.ts_ns)) {  // as every format: kept times are within +-2^62 ns
      ++bad_ts;
      continue;
    }
    auto [it, fresh] = gpu_name.try_emplace(s.gpu, 0);
    if (fresh) it->second = out->InternString(out->arena().Copy(absl::StrCat("GPU ", s.gpu)));
    Event e{};
    e.ts_ns = s.ts_ns;
    e.phase = 'C';
    e.ph = ph;
    e.name = it->second;
    e.pid = pid;
    e.flags = kHasTs | kHasPid;
    rest.assign("\"args\":{");
    for (int c = 0; c < kNumDcgmColumns; ++c) {
      if (c) rest.push_back(',');
      absl::StrAppend(&rest, "\"", AbslView(DcgmColumnName(static_cast<DcgmColumn>(c))), "\":");
      AppendNumber(s.values[c], &rest);
    }
    rest.push_back('}');
    std::string_view stored = out->rest_arena().Copy(rest);
    e.rest = stored.data();
    e.rest_len = static_cast<uint32_t>(stored.size());
    out->AddEvent(e);
  }
  if (bad_ts) {
    rep.dropped.Add(DropReason::kBadTs, bad_ts);
    rep.warnings.push_back(absl::StrCat(AbslView(name), ": ", bad_ts, bad_ts == 1 ? " GPU row" : " GPU rows",
                                        " with a TIMESTAMP more than 2^62 ns from the epoch dropped"));
  }
  return rep;
}

}  // namespace tracemill::formats
