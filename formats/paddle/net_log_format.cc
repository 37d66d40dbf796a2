#include "formats/paddle/net_log_format.h"

#include <memory>
#include <string>

#include "formats/paddle/net_log.h"

namespace tracemill::formats {
namespace {

class NetLogFormatDecoder final : public FormatDecoder {
 public:
  DecodeReport Decode(const InputBytes& in, const DecodeSettings&, TraceBuilder* out) override {
    const size_t slash = in.path.rfind('/');
    return DecodeNetLogToTrace(slash == std::string_view::npos ? in.path : in.path.substr(slash + 1), in.data, out);
  }
};

std::unique_ptr<FormatDecoder> CreateNetLogDecoder() { return std::make_unique<NetLogFormatDecoder>(); }

// JSON Lines; or a JSON object by Sniff's rule when the second line is not
// an object (a bad line) or there is one line only: the first line decides.
bool IsNetLog(FormatId shape, std::string_view data) {
  return (shape == FormatId::kJsonLines || shape == FormatId::kTraceEventObject) && LooksLikeNetLog(data);
}

}  // namespace

const InputFormat& NetLogFormat() {
  static const InputFormat f{"paddle_net_log", IsNetLog, CreateNetLogDecoder};
  return f;
}

DecodeReport DecodeNetLogToTrace(std::string_view name, std::string_view text, TraceBuilder* out) {
  NetLogFile f = ParseNetLog(name, text);
  out->meta().name_number_is_trainer = true;
  if (f.samples.empty()) return std::move(f.report);
  const uint32_t pid = out->InternPid("\"network\"");
  const uint32_t ph = out->InternString("C");
  const uint32_t names[2] = {out->InternString("tx"), out->InternString("rx")};
  std::string rest;
  out->ReserveEvents(f.samples.size());
  for (const NetSample& s : f.samples) {
    Event e{};
    e.ts_ns = s.ts_ns;
    e.phase = 'C';
    e.ph = ph;
    e.name = names[s.dir == NetDirection::kTx ? 0 : 1];
    e.pid = pid;
    e.flags = kHasTs | kHasPid;
    if (s.args_len) {
      rest.assign("\"args\":");
      rest.append(f.args(s));
      std::string_view stored = out->rest_arena().Copy(rest);
      e.rest = stored.data();
      e.rest_len = static_cast<uint32_t>(stored.size());
    }
    out->AddEvent(e);
  }
  return std::move(f.report);
}

}  // namespace tracemill::formats
