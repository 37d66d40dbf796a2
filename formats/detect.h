#pragma once
// Shape detection from content, never from the file name (Perfetto's
// GuessTraceType is the model): gzip magic, the protobuf wire shape of a
// Paddle profile, then the first non-space JSON token of the (inflated)
// bytes. Which format of that shape an input is, and how it decodes, is the
// registry's (formats/registry.h).
#include <string_view>

namespace tracemill::formats {

enum class FormatId {
  kUnknown,
  kGzip,             // 1f 8b: inflate, then detect again
  kTraceEventArray,  // `[`: Trace Event Format, JSON Array Format
  kTraceEventObject, // `{`: JSON Object Format (`traceEvents` is checked by the decoder)
  kEmpty,            // nothing but whitespace
  kPaddleProfile,    // protobuf wire shape of a Paddle `Profile` (formats/paddle)
  kJsonLines,        // `{...}\n{`: one JSON object per line (run event logs)
};

// Sniff looks at the first bytes of `head` (a UTF-8 BOM and JSON whitespace
// skipped) and returns the container or JSON shape it sees. The protobuf
// wire shape of a Paddle profile is checked before JSON (its first byte is
// often 0x0A, a newline; see LooksLikePaddleProfile).
// JSON Lines: the
// first line is a complete JSON object (no newline inside it), followed by a
// newline and, after blank lines, another `{`; the first object must end
// within the first 64 KiB. A one-line file is a JSON Object Format trace.
FormatId Sniff(std::string_view head);

// FormatName: stable name for the manifest ("trace_event_json", "gzip", ...).
std::string_view FormatName(FormatId id);

}  // namespace tracemill::formats
