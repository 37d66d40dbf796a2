#include "formats/orchestrator/run_event_log_format.h"

#include <memory>

#include "formats/orchestrator/run_event_log_decoder.h"

namespace tracemill::formats {
namespace {

class RunEventLogFormatDecoder final : public FormatDecoder {
 public:
  DecodeReport Decode(const InputBytes& in, const DecodeSettings&, TraceBuilder* out) override {
    return decoder_.Decode(in.data, out);
  }

 private:
  RunEventLogDecoder decoder_;
};

std::unique_ptr<FormatDecoder> CreateRunEventLogDecoder() {
  return std::make_unique<RunEventLogFormatDecoder>();
}

bool IsJsonLines(FormatId shape, std::string_view) { return shape == FormatId::kJsonLines; }

}  // namespace

const InputFormat& RunEventLogFormat() {
  static const InputFormat f{"run_event_log", IsJsonLines, CreateRunEventLogDecoder};
  return f;
}

}  // namespace tracemill::formats
