#pragma once
// The registry of input formats: for each format, how it is recognized from
// content, how the pre-scan plans it from its head, and how it decodes into a
// TraceBuilder. The pipeline knows formats only through this table
// (pipeline/convert/decode_input.cc decodes, pipeline/plan.cc pre-scans), as
// Perfetto's trace processor knows its importers through
// `builtin_trace_importers.h`.
//
//   bytes --Sniff (detect.h: gzip, protobuf or JSON shape)--> shape
//         --RecognizeFormat (first entry of Formats() that accepts)--> InputFormat
//         --DecoderSet::For(format) (one decoder per worker)--> FormatDecoder
//         --Decode--> TraceBuilder + DecodeReport      (full decode)
//         --PlanHead--> HeadPlan                         (pre-scan of the first KiB)
//
// Adding a format: a folder in formats/ with its decoder and a
// `<name>_format.{h,cc}` defining its `InputFormat` (a `recognizes`
// function over the content and a `FormatDecoder` subclass), one line in
// `Formats()` in registry.cc (the order is the recognition order), its
// sources in the top-level CMakeLists.txt, and a fuzz target
// (tests/FUZZING.md). A new container or JSON shape also needs a rule in
// detect.cc.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <array>
#include <cstdint>

#include "formats/common/decode_report.h"
#include "formats/common/trace_data.h"
#include "formats/detect.h"

namespace tracemill::formats {

// DecodeSettings: the job's options that change how an input decodes.
struct DecodeSettings {
  double low_gpu_threshold = 85;   // smdebug system metrics: percent
  bool no_system_metrics = false;  // skip smdebug system metrics (loose files too)
  // A follow window's edges (ns; INT64_MIN: none): low-GPU slices are cut
  // there, so each window holds the part of a low run that starts in it.
  std::array<int64_t, 2> low_gpu_cuts_ns = {INT64_MIN, INT64_MIN};
};

// InputBytes: one whole input, inflated, ready for a decoder.
struct InputBytes {
  std::string_view data;
  // The size of `data`'s allocation: at least data.size() +
  // SIMDJSON_PADDING lets simdjson parse in place (the fast path).
  size_t capacity = 0;
  std::string_view path;  // the input's path, for messages (`<file>:<line>`)
};

// HeadPlan: what the head of an input (its first 64-256 KiB, inflated)
// tells the pre-scan about the output its events go to (pipeline/plan.h).
struct HeadPlan {
  enum class Kind {
    kOutput,        // the head decides the output: by `rank`, else by the file name
    kUndetermined,  // only a full decode can tell (every shard decodes it)
    kReadMore,      // a longer head might tell (else: undetermined)
  };
  Kind kind = Kind::kUndetermined;
  // kOutput: the rank read from the head's content; nullopt: the rank comes
  // from the file name (or there is none: unranked).
  std::optional<int64_t> rank;
  int device_count = -1;         // GPUs described in the head (Kineto deviceProperties), -1 unknown
  uint32_t bytes_per_event = 0;  // JSON bytes per event in the head, 0 unknown (pipeline/budget.h)
  // Every event time in the head is before 2000 and no epoch base was seen
  // (tef_head.h HeadTimesBefore2000): the input may count from its own start.
  bool times_before_2000 = false;
};

// FormatDecoder: decodes inputs of one format (InputBytes -> TraceBuilder).
// One instance per worker thread, reused across inputs (it may hold parsers
// and scratch buffers); never shared between threads.
class FormatDecoder {
 public:
  virtual ~FormatDecoder() = default;

  // Decode pushes the events of `in` into `out` (which may keep views into
  // `in.data` until `out->Finish()`). The report's status: OK; kDataLoss
  // (damaged: what was readable is in `out`); kInvalidArgument (not a
  // document of this format after all: nothing kept, the input is rejected).
  // A non-empty `skip_note` skips the input (nothing decoded).
  virtual DecodeReport Decode(const InputBytes& in, const DecodeSettings& settings,
                              TraceBuilder* out) = 0;

  // PlanHead looks at the first bytes of an input (inflated; all of it when
  // `whole`). The default: only a full decode tells.
  virtual HeadPlan PlanHead(std::string_view head, bool whole) { return HeadPlan{}; }
};

// InputFormat: one registry entry.
struct InputFormat {
  // Stable name in the manifest's `format` ("trace_event_json_object").
  std::string_view name;
  // Recognizes an input from its inflated bytes and their shape (Sniff).
  bool (*recognizes)(FormatId shape, std::string_view data);
  // Makes a decoder. Entries with the same factory share one decoder per
  // worker (Trace Event Format's array and object forms share a parser).
  std::unique_ptr<FormatDecoder> (*create_decoder)();
};

// Formats: every registered format, in recognition order.
const std::vector<const InputFormat*>& Formats();

// RecognizeFormat: the first format of Formats() that recognizes `data`
// (inflated bytes) of shape `shape` (= Sniff(data)); nullptr if none does
// (not a trace: gzip inside gzip, empty, unknown bytes).
const InputFormat* RecognizeFormat(FormatId shape, std::string_view data);

// DecoderSet: a worker's decoders, one per decoder factory, made on first
// use. Not thread-safe: one per worker thread.
class DecoderSet {
 public:
  FormatDecoder& For(const InputFormat& format);

 private:
  using Factory = std::unique_ptr<FormatDecoder> (*)();
  std::vector<std::pair<Factory, std::unique_ptr<FormatDecoder>>> decoders_;
};

}  // namespace tracemill::formats
