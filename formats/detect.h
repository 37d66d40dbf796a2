#pragma once
// Format detection from content, never from the file name (Perfetto's
// GuessTraceType is the model): gzip magic, then the first non-space JSON
// token of the (inflated) bytes.
#include <string_view>

namespace tracemill::formats {

enum class FormatId {
  kUnknown,
  kGzip,             // 1f 8b: inflate, then detect again
  kTraceEventArray,  // `[`: Trace Event Format, JSON Array Format
  kTraceEventObject, // `{`: JSON Object Format (`traceEvents` is checked by the decoder)
  kEmpty,            // nothing but whitespace
  kPaddleProfile,    // protobuf wire shape of a Paddle `Profile` (formats/paddle)
};

// Sniff looks at the first bytes of `head` (a UTF-8 BOM and JSON whitespace
// skipped) and returns the container or JSON shape it sees. The protobuf
// wire shape of a Paddle profile is checked before JSON (its first byte is
// often 0x0A, a newline; see LooksLikePaddleProfile).
FormatId Sniff(std::string_view head);

// FormatName: stable name for the manifest ("trace_event_json", "gzip", ...).
std::string_view FormatName(FormatId id);

}  // namespace tracemill::formats
