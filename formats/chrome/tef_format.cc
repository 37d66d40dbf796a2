#include "formats/chrome/tef_format.h"

#include <memory>

#include "absl/status/status.h"
#include "formats/chrome/tef_head.h"

namespace tracemill::formats {
namespace {

class TefFormatDecoder final : public FormatDecoder {
 public:
  DecodeReport Decode(const InputBytes& in, const DecodeSettings&, TraceBuilder* out) override {
    return tef_.Decode(in.data, in.capacity, out);
  }

  // Kineto writes `distributedInfo` and `deviceProperties` before
  // `traceEvents` (tef_head.h), so the head usually tells the rank.
  HeadPlan PlanHead(std::string_view head, bool whole) override {
    TefHead h = ScanTefHead(head, whole, &tef_);
    HeadPlan p;
    p.device_count = h.device_count;
    p.bytes_per_event = HeadBytesPerEvent(head);
    p.times_before_2000 = HeadTimesBefore2000(head);
    if (h.shape == TefHead::Shape::kArray) {
      p.kind = HeadPlan::Kind::kOutput;  // no top-level keys: the file name tells
    } else if (h.malformed) {
      p.kind = HeadPlan::Kind::kUndetermined;
    } else if (h.rank && h.reached_events) {
      p.kind = HeadPlan::Kind::kOutput;
      p.rank = h.rank;
    } else if (h.complete) {
      p.kind = HeadPlan::Kind::kOutput;  // the whole document: its rank, else the file name's
      p.rank = h.rank;
    } else {
      p.kind = h.reached_events || whole ? HeadPlan::Kind::kUndetermined : HeadPlan::Kind::kReadMore;
    }
    return p;
  }

  TefDecoder& tef() { return tef_; }

 private:
  TefDecoder tef_;
};

std::unique_ptr<FormatDecoder> CreateTefDecoder() { return std::make_unique<TefFormatDecoder>(); }

bool IsArray(FormatId shape, std::string_view) { return shape == FormatId::kTraceEventArray; }
bool IsObject(FormatId shape, std::string_view) { return shape == FormatId::kTraceEventObject; }

}  // namespace

const InputFormat& TefArrayFormat() {
  static const InputFormat f{"trace_event_json_array", IsArray, CreateTefDecoder};
  return f;
}

const InputFormat& TefObjectFormat() {
  static const InputFormat f{"trace_event_json_object", IsObject, CreateTefDecoder};
  return f;
}

TefDecoder& TefDecoderOf(DecoderSet& set) {
  return static_cast<TefFormatDecoder&>(set.For(TefObjectFormat())).tef();
}

}  // namespace tracemill::formats
