#include "formats/smdebug/system_metrics_format.h"

#include <memory>

#include "formats/smdebug/system_metrics_decoder.h"

namespace tracemill::formats {
namespace {

std::string_view FileNameOf(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

class SystemMetricsFormatDecoder final : public FormatDecoder {
 public:
  DecodeReport Decode(const InputBytes& in, const DecodeSettings& s, TraceBuilder* out) override {
    if (s.no_system_metrics) {  // a loose sample file, outside system/
      DecodeReport rep;
      rep.skip_note = "skipped: system metrics (--no-system-metrics)";
      return rep;
    }
    return DecodeSystemMetricsFile(in.path, in.data, in.capacity, s.low_gpu_threshold, out, s.low_gpu_cuts_ns);
  }
};

std::unique_ptr<FormatDecoder> CreateSystemMetricsDecoder() {
  return std::make_unique<SystemMetricsFormatDecoder>();
}

bool IsSystemMetrics(FormatId shape, std::string_view data) {
  return shape == FormatId::kJsonLines && LooksLikeSystemMetrics(data);
}

}  // namespace

const InputFormat& SystemMetricsFormat() {
  static const InputFormat f{"smdebug_system_metrics", IsSystemMetrics, CreateSystemMetricsDecoder};
  return f;
}

DecodeReport DecodeSystemMetricsFile(std::string_view name, std::string_view text, size_t capacity,
                                     double low_gpu_threshold, TraceBuilder* builder,
                                     std::array<int64_t, 2> cuts_ns) {
  SystemMetricsDecoder dec(builder, low_gpu_threshold);
  dec.CutSlicesAt(cuts_ns);
  DecodeReport rep = dec.AddFile(FileNameOf(name), text, capacity);
  dec.Finish(&rep);
  return rep;
}

}  // namespace tracemill::formats
