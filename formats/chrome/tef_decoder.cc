#include "formats/chrome/tef_decoder.h"

#include <simdjson.h>

#include <deque>

#include "absl/strings/str_cat.h"
#include "formats/common/json_text.h"
#include "formats/common/status_macros.h"
#include "formats/common/ts_text.h"

namespace tracemill::formats {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;
using simdjson::SUCCESS;

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// Raw JSON text of any value (objects and arrays consume the value).
error_code RawValue(od::value& v, std::string_view* raw) {
  od::json_type t;
  if (auto e = v.type().get(t)) return e;
  if (t == od::json_type::object) {
    od::object o;
    if (auto e = v.get_object().get(o)) return e;
    return o.raw_json().get(*raw);
  }
  if (t == od::json_type::array) {
    od::array a;
    if (auto e = v.get_array().get(a)) return e;
    return a.raw_json().get(*raw);
  }
  *raw = TrimRight(v.raw_json_token());
  return SUCCESS;
}

// The body of a raw string token `"..."`, or nullopt if it is not a string.
std::optional<std::string_view> StringBody(std::string_view raw) {
  if (raw.size() >= 2 && raw.front() == '"' && raw.back() == '"') return raw.substr(1, raw.size() - 2);
  return std::nullopt;
}

// Text of a numeric token or of a string holding a number (`"ts": "12.5"`).
std::string_view NumberText(std::string_view raw) {
  if (auto body = StringBody(raw)) return *body;
  return raw;
}

enum class Outcome { kEvent, kDropped, kSimdjsonError };

}  // namespace

struct TefDecoder::Impl {
  od::parser parser;       // the document, or one object on the tolerant path
  od::parser meta_parser;  // small side documents: M args, top-level values
  std::string rest;        // scratch: an event's `rest` members
  std::string side;        // scratch: a padded copy for meta_parser
  std::deque<std::string> repaired;  // tolerant path: repaired objects (interned keys point here)

  TraceBuilder* b = nullptr;
  DecodeReport* report = nullptr;
  const char* base = nullptr;  // start of the input, for offsets
  bool warned_repair = false;  // one warning per input for repaired values

  void Warn(std::string msg) {
    if (report->warnings.size() < 20) report->warnings.push_back(std::move(msg));
  }
  void Error(absl::Status s, uint64_t offset) {
    if (report->status.ok()) {
      report->status = std::move(s);
      report->error_offset = offset;
    }
  }

  // Parses `json` (copied with padding) with meta_parser.
  simdjson::simdjson_result<od::document> ParseSide(std::string_view json) {
    side.assign(json);
    side.reserve(side.size() + simdjson::SIMDJSON_PADDING);
    return meta_parser.iterate(side.data(), side.size(), side.capacity());
  }

  // Process metadata (`process_name`, ...): read args into the process table.
  void ReadProcessMeta(std::string_view name, std::string_view args_json, uint32_t pid) {
    if (args_json.empty()) return;
    od::document doc;
    if (ParseSide(args_json).get(doc)) return;
    od::object o;
    if (doc.get_object().get(o)) return;
    ProcessInfo& p = b->process(pid);
    for (auto field : o) {
      od::raw_json_string key;
      od::value v;
      if (field.key().get(key) || field.value().get(v)) return;
      std::string_view raw;
      if (RawValue(v, &raw)) return;
      if (name == "process_name" && key == "name") {
        if (auto body = StringBody(raw)) {
          p.name = b->arena().Copy(*body);
          p.has_name = true;
        }
      } else if (name == "process_sort_index" && key == "sort_index") {
        if (auto v64 = ParseInt64(NumberText(raw))) {
          p.sort_index = *v64;
          p.has_sort_index = true;
        }
      } else if (name == "process_labels" && key == "labels") {
        if (auto body = StringBody(raw)) p.labels = b->arena().Copy(*body);
      }
    }
  }

  // Decodes one event object. `offset` is its position in the input.
  Outcome DecodeEvent(od::object obj, uint64_t offset, error_code* err) {
    Event e{};
    rest.clear();
    size_t args_begin = 0, args_end = 0;
    bool have_ph = false, ts_bad = false, dur_bad = false, any_field = false;
    std::string_view ts_text, dur_text;
    for (auto field : obj) {
      any_field = true;
      od::raw_json_string key;
      od::value v;
      if ((*err = field.key().get(key))) return Outcome::kSimdjsonError;
      if ((*err = field.value().get(v))) return Outcome::kSimdjsonError;
      std::string_view raw;
      if ((*err = RawValue(v, &raw))) return Outcome::kSimdjsonError;
      // Core keys first; everything else goes to `rest`.
      const char* k = key.raw();
      bool handled = true;
      if (key == "ph") {
        if (auto body = StringBody(raw); body && !body->empty()) {
          e.ph = b->InternString(*body);
          e.phase = (*body)[0];
          have_ph = true;
        }
      } else if (key == "ts") {
        ts_text = raw;
      } else if (key == "dur") {
        dur_text = raw;
      } else if (key == "name" && StringBody(raw)) {
        e.name = b->InternString(*StringBody(raw));
      } else if (key == "cat" && StringBody(raw)) {
        e.cat = b->InternString(*StringBody(raw));
      } else if (key == "pid" && !raw.empty() && raw[0] != '{' && raw[0] != '[') {
        e.pid = b->InternPid(raw);
        e.flags |= kHasPid;
      } else if (key == "tid" && !raw.empty() && raw[0] != '{' && raw[0] != '[') {
        e.tid = b->InternToken(raw);
        e.flags |= kHasTid;
      } else if (key == "id" && !raw.empty() && raw[0] != '{' && raw[0] != '[') {
        e.id = b->InternId(raw);
        e.flags |= kHasId;
      } else if (key == "bind_id" && !raw.empty() && raw[0] != '{' && raw[0] != '[') {
        e.bind_id = b->InternId(raw);
        e.flags |= kHasBindId;
      } else if (key == "id2" && raw.find("\"global\"") != std::string_view::npos) {
        // {"global": x}: process-independent, so made unique per input.
        od::document doc;
        od::object o;
        std::string_view g;
        handled = false;
        if (!ParseSide(raw).get(doc) && !doc.get_object().get(o)) {
          od::value gv;
          if (!o.find_field_unordered("global").get(gv) && !RawValue(gv, &g) && !g.empty() &&
              g[0] != '{' && g[0] != '[') {
            e.id2 = b->InternId(g);
            e.flags |= kHasId2Global;
            handled = true;
          }
        }
      } else {
        handled = false;
      }
      if (handled) continue;
      // A `rest` member: `"key":value`, repaired.
      const char* key_begin = k;  // raw() points after the opening quote
      size_t key_len = 0;
      while (key_begin[key_len] != '"') key_len += key_begin[key_len] == '\\' ? 2 : 1;
      if (!rest.empty()) rest.push_back(',');
      rest.push_back('"');
      AppendSanitizedStringBody(std::string_view(key_begin, key_len), &rest);
      rest.append("\":");
      bool is_args = key == "args";
      if (is_args) args_begin = rest.size();
      SanitizeResult sr = AppendSanitizedJson(raw, &rest);
      if (sr == SanitizeResult::kRepaired && !warned_repair) {
        warned_repair = true;
        Warn(absl::StrCat("repaired a value strict JSON parsers reject (bare word such as NaN, invalid "
                          "escape or UTF-8, control character or trailing comma) in the event at byte ",
                          offset, "; later repairs are not listed"));
      }
      if (sr == SanitizeResult::kMalformed) {
        report->dropped.Add(DropReason::kMalformed);
        Error(absl::DataLossError(absl::StrCat("malformed value of \"",
                                               AbslView(std::string_view(key_begin, key_len)), "\"")),
              offset);
        return Outcome::kDropped;
      }
      if (is_args) args_end = rest.size();
    }
    if (!any_field) {
      report->dropped.Add(DropReason::kEmptyObject);
      return Outcome::kDropped;
    }
    if (!have_ph) {
      report->dropped.Add(DropReason::kMissingPh);
      return Outcome::kDropped;
    }
    if (!ts_text.empty()) {
      if (auto ns = ParseMicrosToNanos(NumberText(ts_text))) {
        e.ts_ns = *ns;
        e.flags |= kHasTs;
      } else {
        ts_bad = true;
      }
    }
    if (!dur_text.empty()) {
      auto ns = ParseMicrosToNanos(NumberText(dur_text));
      if (ns && *ns >= 0) {
        e.dur_ns = *ns;
        e.flags |= kHasDur;
      } else {
        dur_bad = true;
      }
    }
    if (e.phase != 'M') {
      if (ts_bad) {
        report->dropped.Add(DropReason::kBadTs);
        return Outcome::kDropped;
      }
      if (!(e.flags & kHasTs)) {
        report->dropped.Add(DropReason::kMissingTs);
        return Outcome::kDropped;
      }
      if (dur_bad) {
        report->dropped.Add(DropReason::kBadDur);
        return Outcome::kDropped;
      }
    }
    if (!rest.empty()) {
      std::string_view stored = b->rest_arena().Copy(rest);
      e.rest = stored.data();
      e.rest_len = static_cast<uint32_t>(stored.size());
    }
    if (e.phase == 'M' && (e.flags & kHasPid) && args_end > args_begin) {
      std::string_view name = b->InternedString(e.name);
      if (name == "process_name" || name == "process_sort_index" || name == "process_labels") {
        ReadProcessMeta(name, std::string_view(rest).substr(args_begin, args_end - args_begin), e.pid);
      }
    }
    b->AddEvent(e);
    return Outcome::kEvent;
  }

  // A top-level member other than traceEvents: kept for the output's
  // metadata; Kineto's known keys are read.
  void TopLevel(std::string_view key_body, std::string_view raw_value) {
    std::string key, value;
    AppendSanitizedStringBody(key_body, &key);
    if (AppendSanitizedJson(raw_value, &value) == SanitizeResult::kMalformed) {
      Warn(absl::StrCat("top-level key \"", key, "\" holds malformed JSON; ignored"));
      return;
    }
    InputMetadata& m = b->meta();
    od::document doc;
    if (key == "distributedInfo") {
      od::object o;
      if (!ParseSide(value).get(doc) && !doc.get_object().get(o)) {
        for (auto field : o) {
          od::raw_json_string k;
          od::value v;
          std::string_view raw;
          if (field.key().get(k) || field.value().get(v) || RawValue(v, &raw)) break;
          if (k == "rank") {
            if (auto r = ParseInt64(NumberText(raw)); r && *r >= 0) m.rank = *r;
          } else if (k == "world_size") {
            if (auto r = ParseInt64(NumberText(raw)); r && *r > 0) m.world_size = *r;
          } else if (k == "backend") {
            if (auto body = StringBody(raw)) m.backend = UnescapeJsonStringBody(*body);
          }
        }
      }
    } else if (key == "deviceProperties") {
      od::array a;
      size_t n = 0;
      if (!ParseSide(value).get(doc) && !doc.get_array().get(a) && !a.count_elements().get(n))
        m.device_count = static_cast<int>(n);
    } else if (key == "baseTimeNanoseconds") {
      if (auto v = ParseInt64(NumberText(value))) {
        m.base_time_ns = *v;
        m.has_base_time = true;
      } else {
        Warn("baseTimeNanoseconds is not an integer; ignored");
      }
    } else if (key == "displayTimeUnit") {
      if (auto body = StringBody(value)) m.display_time_unit = UnescapeJsonStringBody(*body);
    }
    m.top_level.emplace_back(std::move(key), std::move(value));
  }

  // ---------------- fast path ----------------

  // Returns SUCCESS, or the simdjson error that stopped it (then the caller
  // restarts on the tolerant path).
  error_code Fast(std::string_view json, size_t capacity, bool* is_trace) {
    od::document doc;
    if (auto e = parser.iterate(json.data(), json.size(), capacity).get(doc)) return e;
    od::json_type t;
    if (auto e = doc.type().get(t)) return e;
    if (t == od::json_type::array) {
      od::array events;
      if (auto e = doc.get_array().get(events)) return e;
      *is_trace = true;
      return FastEvents(events);
    }
    if (t != od::json_type::object) return simdjson::TAPE_ERROR;
    od::object top;
    if (auto e = doc.get_object().get(top)) return e;
    for (auto field : top) {
      od::raw_json_string key;
      od::value v;
      if (auto e = field.key().get(key)) return e;
      if (auto e = field.value().get(v)) return e;
      if (key == "traceEvents") {
        od::array events;
        if (v.get_array().get(events)) {
          std::string_view raw;
          if (auto e = RawValue(v, &raw)) return e;
          Warn("traceEvents is not an array; ignored");
          continue;
        }
        *is_trace = true;
        if (auto e = FastEvents(events)) return e;
      } else {
        std::string_view raw;
        if (auto e = RawValue(v, &raw)) return e;
        const char* kb = key.raw();
        size_t kl = 0;
        while (kb[kl] != '"') kl += kb[kl] == '\\' ? 2 : 1;
        TopLevel(std::string_view(kb, kl), raw);
      }
    }
    return SUCCESS;
  }

  error_code FastEvents(od::array events) {
    for (auto element : events) {
      od::value v;
      if (auto e = element.get(v)) return e;
      const char* loc = nullptr;
      if (auto e = v.current_location().get(loc)) return e;
      ++report->events_read;
      od::json_type t;
      if (auto e = v.type().get(t)) return e;
      if (t != od::json_type::object) {
        std::string_view raw;
        if (auto e = RawValue(v, &raw)) return e;
        report->dropped.Add(DropReason::kNotAnObject);
        continue;
      }
      od::object obj;
      if (auto e = v.get_object().get(obj)) return e;
      error_code err = SUCCESS;
      if (DecodeEvent(obj, static_cast<uint64_t>(loc - base), &err) == Outcome::kSimdjsonError)
        return err;
    }
    return SUCCESS;
  }

  // ---------------- tolerant path ----------------

  // Decodes the object text at [pos, end) after repairing it.
  void TolerantObject(std::string_view json, size_t pos, size_t end) {
    std::string& fixed = repaired.emplace_back();
    fixed.reserve(end - pos + simdjson::SIMDJSON_PADDING);
    if (AppendSanitizedJson(json.substr(pos, end - pos), &fixed) == SanitizeResult::kMalformed) {
      report->dropped.Add(DropReason::kMalformed);
      Error(absl::DataLossError("malformed event object"), pos);
      return;
    }
    fixed.reserve(fixed.size() + simdjson::SIMDJSON_PADDING);
    od::document doc;
    od::object obj;
    error_code err = SUCCESS;
    if (!parser.iterate(fixed.data(), fixed.size(), fixed.capacity()).get(doc) &&
        !doc.get_object().get(obj) && DecodeEvent(obj, pos, &err) != Outcome::kSimdjsonError) {
      return;
    }
    report->dropped.Add(DropReason::kMalformed);
    Error(absl::DataLossError("malformed event object"), pos);
  }

  // Scans a traceEvents array body from `pos` (after `[`). Returns the offset
  // after `]`, or npos if the input ended first.
  size_t TolerantEvents(std::string_view json, size_t pos) {
    const size_t n = json.size();
    while (true) {
      pos = SkipWhitespace(json, pos);
      if (pos >= n) {
        Warn("event array is not closed (no `]`); every complete event was kept");
        return std::string_view::npos;
      }
      char c = json[pos];
      if (c == ',') { ++pos; continue; }
      if (c == ']') return pos + 1;
      size_t end = SkipJsonValue(json, pos);
      if (end == std::string_view::npos) {
        ++report->events_read;
        report->dropped.Add(DropReason::kTruncated);
        Error(absl::DataLossError("input ends inside an event object (truncated)"), pos);
        return std::string_view::npos;
      }
      if (end == pos) {  // a stray `}` or `:`
        Error(absl::DataLossError(absl::StrCat("unexpected '", AbslView(std::string_view(&json[pos], 1)),
                                               "' in event array")),
              pos);
        ++pos;
        continue;
      }
      ++report->events_read;
      if (c == '{') {
        TolerantObject(json, pos, end);
      } else {
        report->dropped.Add(DropReason::kNotAnObject);
      }
      pos = end;
    }
  }

  void Tolerant(std::string_view json, bool* is_trace) {
    const size_t n = json.size();
    size_t pos = json.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
    pos = SkipWhitespace(json, pos);
    if (pos >= n) return;
    if (json[pos] == '[') {
      *is_trace = true;
      size_t end = TolerantEvents(json, pos + 1);
      if (end != std::string_view::npos) CheckTrailing(json, end);
      return;
    }
    if (json[pos] != '{') {
      Error(absl::InvalidArgumentError("not JSON: expected `[` or `{`"), pos);
      return;
    }
    ++pos;
    while (true) {
      pos = SkipWhitespace(json, pos);
      if (pos >= n) {
        Error(absl::DataLossError("input ends inside the top-level object (truncated)"), pos);
        return;
      }
      char c = json[pos];
      if (c == ',') { ++pos; continue; }
      if (c == '}') {
        CheckTrailing(json, pos + 1);
        return;
      }
      if (c != '"') {
        Error(absl::DataLossError("expected a key in the top-level object"), pos);
        return;
      }
      size_t key_end = SkipJsonValue(json, pos);
      if (key_end == std::string_view::npos) {
        Error(absl::DataLossError("input ends inside a top-level key (truncated)"), pos);
        return;
      }
      std::string_view key_body = json.substr(pos + 1, key_end - pos - 2);
      pos = SkipWhitespace(json, key_end);
      if (pos >= n || json[pos] != ':') {
        Error(absl::DataLossError("expected `:` after a top-level key"), pos);
        return;
      }
      pos = SkipWhitespace(json, pos + 1);
      if (key_body == "traceEvents" && pos < n && json[pos] == '[') {
        *is_trace = true;
        pos = TolerantEvents(json, pos + 1);
        if (pos == std::string_view::npos) {
          // A closed object format whose array was cut: an error unless the
          // array merely lacks `]` at the very end of the input.
          if (report->status.ok())
            Error(absl::DataLossError("input ends inside traceEvents (truncated)"), n);
          return;
        }
        continue;
      }
      size_t end = SkipJsonValue(json, pos);
      if (end == std::string_view::npos) {
        Error(absl::DataLossError(absl::StrCat("input ends inside top-level key \"", AbslView(key_body),
                                               "\" (truncated)")),
              pos);
        return;
      }
      TopLevel(key_body, json.substr(pos, end - pos));
      pos = end;
    }
  }

  void CheckTrailing(std::string_view json, size_t pos) {
    pos = SkipWhitespace(json, pos);
    // NUL padding after the document (preallocated files) is not an error.
    while (pos < json.size() && json[pos] == '\0') ++pos;
    pos = SkipWhitespace(json, pos);
    if (pos < json.size()) Warn(absl::StrCat("ignored ", json.size() - pos, " bytes after the JSON document"));
  }
};

TefDecoder::TefDecoder() : impl_(new Impl) {}
TefDecoder::~TefDecoder() { delete impl_; }

DecodeReport TefDecoder::Decode(std::string_view json, size_t capacity, TraceBuilder* builder) {
  DecodeReport report;
  Impl& m = *impl_;
  m.b = builder;
  m.report = &report;
  m.base = json.data();
  m.repaired.clear();
  m.warned_repair = false;
  bool is_trace = false;
  // simdjson rejects a leading BOM; a view past it keeps the padding.
  size_t skip = json.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  error_code err = capacity >= json.size() + simdjson::SIMDJSON_PADDING
                       ? m.Fast(json.substr(skip), capacity - skip, &is_trace)
                       : simdjson::INSUFFICIENT_PADDING;
  if (err != SUCCESS) {
    // Start over on the tolerant path: nothing from the fast pass is kept.
    builder->Reset();
    report = DecodeReport{};
    m.warned_repair = false;
    report.tolerant = true;
    is_trace = false;
    m.Tolerant(json, &is_trace);
    if (report.status.ok() && err != simdjson::TRAILING_CONTENT && report.warnings.empty() &&
        report.dropped.Total() == 0) {
      // simdjson refused something the tolerant path accepted silently
      // (e.g. a trailing comma, invalid UTF-8 repaired in place).
      report.warnings.push_back(absl::StrCat("repaired input that strict JSON parsing rejects (",
                                             simdjson::error_message(err), ")"));
    }
  }
  if (!is_trace && report.status.ok()) {
    report.status = absl::InvalidArgumentError(
        "not a Trace Event Format file: no traceEvents array (a JSON object without `traceEvents`)");
    builder->Reset();
    report.events_read = 0;
    report.dropped = DropCounts{};
  }
  m.b = nullptr;
  m.report = nullptr;
  return report;
}

}  // namespace tracemill::formats
