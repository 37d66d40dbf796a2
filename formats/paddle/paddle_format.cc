#include "formats/paddle/paddle_format.h"

#include <memory>

#include "formats/paddle/paddle_decoder.h"

namespace tracemill::formats {
namespace {

class PaddleFormatDecoder final : public FormatDecoder {
 public:
  DecodeReport Decode(const InputBytes& in, const DecodeSettings&, TraceBuilder* out) override {
    return DecodePaddleToTrace(in.data, out);
  }
  HeadPlan PlanHead(std::string_view, bool) override {
    HeadPlan p;
    p.kind = HeadPlan::Kind::kOutput;  // rank from the file name
    return p;
  }
};

std::unique_ptr<FormatDecoder> CreatePaddleDecoder() { return std::make_unique<PaddleFormatDecoder>(); }

bool IsPaddleProfile(FormatId shape, std::string_view) { return shape == FormatId::kPaddleProfile; }

}  // namespace

const InputFormat& PaddleProfileFormat() {
  static const InputFormat f{"paddle_profile", IsPaddleProfile, CreatePaddleDecoder};
  return f;
}

}  // namespace tracemill::formats
