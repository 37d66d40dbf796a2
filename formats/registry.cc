#include "formats/registry.h"

#include "formats/chrome/tef_format.h"
#include "formats/dcgm/dcgm_format.h"
#include "formats/orchestrator/run_event_log_format.h"
#include "formats/paddle/net_log_format.h"
#include "formats/paddle/paddle_format.h"
#include "formats/smdebug/system_metrics_format.h"

namespace tracemill::formats {

const std::vector<const InputFormat*>& Formats() {
  // Recognition order: the first entry that accepts an input decodes it.
  static const std::vector<const InputFormat*> kFormats = {
      &DcgmFormat(),           // `dcgmi dmon` text (its first bytes may look like a protobuf field)
      &PaddleProfileFormat(),  // protobuf wire shape (Sniff checks it before JSON)
      &TefArrayFormat(),       // `[`
      &NetLogFormat(),         // a first line that is a tx/rx sample (Paddle network logs)
      &TefObjectFormat(),      // `{`, one document
      &SystemMetricsFormat(),  // JSON Lines with smdebug's sample keys
      &RunEventLogFormat(),    // any other JSON Lines
  };
  return kFormats;
}

const InputFormat* RecognizeFormat(FormatId shape, std::string_view data) {
  for (const InputFormat* f : Formats())
    if (f->recognizes(shape, data)) return f;
  return nullptr;
}

FormatDecoder& DecoderSet::For(const InputFormat& format) {
  for (auto& [factory, decoder] : decoders_)
    if (factory == format.create_decoder) return *decoder;
  decoders_.emplace_back(format.create_decoder, format.create_decoder());
  return *decoders_.back().second;
}

}  // namespace tracemill::formats
