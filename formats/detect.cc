#include "formats/detect.h"

#include "formats/gzip/gzip_reader.h"
#include "formats/paddle/paddle_profile.h"

namespace tracemill::formats {

FormatId Sniff(std::string_view head) {
  if (IsGzip(head)) return FormatId::kGzip;
  constexpr size_t kSniffBytes = 4096;
  if (LooksLikePaddleProfile(head.substr(0, kSniffBytes), head.size() <= kSniffBytes))
    return FormatId::kPaddleProfile;
  size_t i = 0;
  if (head.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
  while (i < head.size() &&
         (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
    ++i;
  if (i >= head.size()) return FormatId::kEmpty;
  if (head[i] == '[') return FormatId::kTraceEventArray;
  if (head[i] == '{') return FormatId::kTraceEventObject;
  return FormatId::kUnknown;
}

std::string_view FormatName(FormatId id) {
  switch (id) {
    case FormatId::kGzip: return "gzip";
    case FormatId::kTraceEventArray: return "trace_event_json_array";
    case FormatId::kTraceEventObject: return "trace_event_json_object";
    case FormatId::kEmpty: return "empty";
    case FormatId::kPaddleProfile: return "paddle_profile";
    case FormatId::kUnknown: break;
  }
  return "unknown";
}

}  // namespace tracemill::formats
