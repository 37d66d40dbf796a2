#include "formats/chrome/tef_head.h"

#include <simdjson.h>

#include <string>

#include "formats/common/json_text.h"
#include "formats/common/trace_data.h"

namespace tracemill::formats {

TefHead ScanTefHead(std::string_view json, bool head_is_whole, TefDecoder* decoder) {
  TefHead h;
  const size_t n = json.size();
  constexpr size_t npos = std::string_view::npos;
  size_t pos = json.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  pos = SkipWhitespace(json, pos);
  if (pos >= n) return h;
  if (json[pos] == '[') {
    h.shape = TefHead::Shape::kArray;
    h.reached_events = true;
    return h;
  }
  if (json[pos] != '{') return h;
  h.shape = TefHead::Shape::kObject;
  ++pos;
  // The members before `traceEvents` (and after it, if the whole array is in
  // the head), as raw `"key":value,` text.
  std::string members;
  bool ran_out = false;  // the bytes ended before the object did
  while (true) {
    pos = SkipWhitespace(json, pos);
    if (pos >= n) {
      ran_out = true;
      break;
    }
    char c = json[pos];
    if (c == ',') {
      ++pos;
      continue;
    }
    if (c == '}') {
      h.complete = true;
      h.reached_events = true;
      break;
    }
    if (c != '"') {
      h.malformed = true;
      break;
    }
    size_t key_end = SkipJsonValue(json, pos);
    if (key_end == npos) {
      ran_out = true;
      break;
    }
    std::string_view key = json.substr(pos, key_end - pos);
    pos = SkipWhitespace(json, key_end);
    if (pos >= n) {
      ran_out = true;
      break;
    }
    if (json[pos] != ':') {
      h.malformed = true;
      break;
    }
    pos = SkipWhitespace(json, pos + 1);
    if (pos >= n) {
      ran_out = true;
      break;
    }
    size_t end = SkipJsonValue(json, pos);
    if (key == "\"traceEvents\"") {
      // The events are skipped, never decoded: the head only wants the keys.
      h.reached_events = true;
      if (end == npos) {
        ran_out = true;
        break;
      }
      pos = end;
      continue;
    }
    if (end == npos) {
      ran_out = true;
      break;
    }
    if (end == pos) {
      h.malformed = true;
      break;
    }
    members.append(key);
    members.push_back(':');
    members.append(json.substr(pos, end - pos));
    members.push_back(',');
    pos = end;
  }
  // A whole document cut short (a truncated file) is complete too: the full
  // decode stops at the same byte and sees no more members than we did.
  if (ran_out && head_is_whole && !h.malformed) h.complete = true;
  if (members.empty()) return h;
  std::string doc = "{" + members + "\"traceEvents\":[]}";
  doc.reserve(doc.size() + simdjson::SIMDJSON_PADDING);
  TraceBuilder builder;
  DecodeReport rep = decoder->Decode(doc, doc.capacity(), &builder);
  std::unique_ptr<TraceData> data = builder.Finish();
  if (!rep.status.ok() && !absl::IsDataLoss(rep.status)) {
    h.malformed = true;
    return h;
  }
  h.rank = data->meta.rank;
  h.device_count = data->meta.device_count;
  return h;
}

uint32_t HeadBytesPerEvent(std::string_view data) {
  size_t start = data.find("\"traceEvents\"");
  if (start == std::string_view::npos) start = 0;  // JSON Array Format
  size_t events = 0;
  for (size_t at = data.find("\"ph\"", start); at != std::string_view::npos; at = data.find("\"ph\"", at + 4))
    ++events;
  if (events < kDensitySampleEvents) return 0;
  return static_cast<uint32_t>((data.size() - start) / events);
}

bool HeadTimesBefore2000(std::string_view data) {
  constexpr int64_t kYear2000Us = int64_t{946684800} * 1000000;
  if (data.find("\"baseTimeNanoseconds\"") != std::string_view::npos) return false;
  size_t start = data.find("\"traceEvents\"");
  if (start == std::string_view::npos) start = 0;  // JSON Array Format
  size_t seen = 0;
  for (size_t at = data.find("\"ts\"", start); at != std::string_view::npos; at = data.find("\"ts\"", at + 4)) {
    size_t v = at + 4;
    while (v < data.size() && (data[v] == ' ' || data[v] == ':' || data[v] == '"' || data[v] == '\t')) ++v;
    size_t end = v + (v < data.size() && data[v] == '-');
    int64_t whole = 0;
    bool digits = false;
    while (end < data.size() && data[end] >= '0' && data[end] <= '9' && whole < kYear2000Us) {
      whole = whole * 10 + (data[end++] - '0');
      digits = true;
    }
    if (!digits || end == data.size()) continue;  // not a number, or cut by the head's end
    if (whole >= kYear2000Us) return false;
    ++seen;
  }
  return seen > 0;
}

}  // namespace tracemill::formats
