#include "tests/testing/output_trace.h"

#include <simdjson.h>
#include <zlib.h>

#include <cstdio>

namespace tracemill::testing {
namespace {

namespace od = simdjson::ondemand;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// Raw JSON text of `v` (objects and arrays are consumed).
simdjson::error_code Raw(od::value v, std::string* out) {
  od::json_type t;
  if (auto e = v.type().get(t)) return e;
  std::string_view raw;
  if (t == od::json_type::object) {
    od::object o;
    if (auto e = v.get_object().get(o)) return e;
    if (auto e = o.raw_json().get(raw)) return e;
  } else if (t == od::json_type::array) {
    od::array a;
    if (auto e = v.get_array().get(a)) return e;
    if (auto e = a.raw_json().get(raw)) return e;
  } else {
    raw = v.raw_json_token();
  }
  out->assign(Trim(raw));
  return simdjson::SUCCESS;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

int Hex4(std::string_view s, size_t i) {
  if (i + 4 > s.size()) return -1;
  int v = 0;
  for (size_t k = i; k < i + 4; ++k) {
    char c = s[k];
    int h = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

// Reads otherData.inputs[].
simdjson::error_code ReadInputs(std::string_view other_data, std::vector<OutInput>* inputs) {
  od::parser parser;
  simdjson::padded_string text(other_data);
  od::document doc;
  if (auto e = parser.iterate(text).get(doc)) return e;
  od::object top;
  if (auto e = doc.get_object().get(top)) return e;
  for (auto field : top) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return e;
    od::value v;
    if (auto e = field.value().get(v)) return e;
    if (key != "inputs") {
      std::string ignored;
      if (auto e = Raw(v, &ignored)) return e;
      continue;
    }
    od::array arr;
    if (auto e = v.get_array().get(arr)) return e;
    for (auto elem : arr) {
      od::object o;
      if (auto e = elem.get_object().get(o)) return e;
      OutInput in;
      for (auto f : o) {
        std::string_view k;
        if (auto e = f.unescaped_key().get(k)) return e;
        od::value fv;
        if (auto e = f.value().get(fv)) return e;
        std::string raw;
        if (auto e = Raw(fv, &raw)) return e;
        if (k == "path") {
          in.path = UnescapeJsonString(raw).value_or("");
        } else if (k == "label") {
          in.label = UnescapeJsonString(raw).value_or("");
        } else if (k == "rank") {
          if (raw != "null") in.rank = std::stoll(raw);
        } else if (k == "pids") {
          // [lo,hi]
          size_t comma = raw.find(',');
          if (raw.size() < 5 || comma == std::string::npos) return simdjson::INCORRECT_TYPE;
          in.pid_lo = std::stoll(raw.substr(1, comma - 1));
          in.pid_hi = std::stoll(raw.substr(comma + 1, raw.size() - comma - 2));
        } else if (k == "metadata") {
          in.metadata = raw;
        }
      }
      inputs->push_back(std::move(in));
    }
  }
  return simdjson::SUCCESS;
}

}  // namespace

std::optional<std::string> UnescapeJsonString(std::string_view raw) {
  if (raw.size() < 2 || raw.front() != '"' || raw.back() != '"') return std::nullopt;
  std::string_view s = raw.substr(1, raw.size() - 2);
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (++i >= s.size()) return std::nullopt;
    switch (s[i]) {
      case '"': out.push_back('"'); break;
      case '\\': out.push_back('\\'); break;
      case '/': out.push_back('/'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'u': {
        int v = Hex4(s, i + 1);
        if (v < 0) return std::nullopt;
        i += 4;
        uint32_t cp = static_cast<uint32_t>(v);
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          int lo = (i + 2 < s.size() && s[i + 1] == '\\' && s[i + 2] == 'u') ? Hex4(s, i + 3) : -1;
          if (lo < 0xDC00 || lo > 0xDFFF) return std::nullopt;  // lone high surrogate
          cp = 0x10000 + ((cp - 0xD800) << 10) + (static_cast<uint32_t>(lo) - 0xDC00);
          i += 6;
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          return std::nullopt;  // lone low surrogate
        }
        AppendUtf8(cp, &out);
        break;
      }
      default: return std::nullopt;
    }
  }
  return out;
}

std::optional<std::string> ReadMaybeGzip(const std::string& path) {
  // gzread reads plain files as they are and inflates every gzip member.
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return std::nullopt;
  std::string out;
  char buf[1 << 16];
  while (true) {
    int n = gzread(f, buf, sizeof(buf));
    if (n < 0) {
      gzclose(f);
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  int rc = gzclose(f);
  if (rc != Z_OK) return std::nullopt;
  return out;
}

std::optional<std::string> OutEvent::Member(std::string_view key) const {
  for (const auto& [k, v] : members)
    if (k == key) return v;
  return std::nullopt;
}

std::string OutEvent::ArgsName() const {
  if (args.empty()) return "";
  od::parser parser;
  simdjson::padded_string text(args);
  od::document doc;
  if (parser.iterate(text).get(doc)) return "";
  od::object o;
  if (doc.get_object().get(o)) return "";
  for (auto field : o) {
    std::string_view key;
    od::value v;
    if (field.unescaped_key().get(key) || field.value().get(v)) return "";
    std::string raw;
    if (Raw(v, &raw)) return "";
    if (key == "name") return UnescapeJsonString(raw).value_or("");
  }
  return "";
}

std::unique_ptr<OutputTrace> OutputTrace::Load(const std::string& path, std::string* error) {
  auto bytes = ReadMaybeGzip(path);
  if (!bytes) {
    *error = "cannot read " + path;
    return nullptr;
  }
  auto t = std::make_unique<OutputTrace>();
  od::parser parser;
  simdjson::padded_string text(*bytes);
  od::document doc;
  auto fail = [&](simdjson::error_code e, const char* what) {
    *error = path + ": " + what + ": " + simdjson::error_message(e);
    return nullptr;
  };
  if (auto e = parser.iterate(text).get(doc)) return fail(e, "iterate");
  od::object top;
  if (auto e = doc.get_object().get(top)) return fail(e, "top level is not an object");
  for (auto field : top) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return fail(e, "top-level key");
    t->top_level_keys.emplace_back(key);
    od::value v;
    if (auto e = field.value().get(v)) return fail(e, "top-level value");
    if (key == "traceEvents") {
      od::array arr;
      if (auto e = v.get_array().get(arr)) return fail(e, "traceEvents");
      for (auto elem : arr) {
        od::object o;
        if (auto e = elem.get_object().get(o)) return fail(e, "event is not an object");
        OutEvent ev;
        for (auto f : o) {
          std::string_view k;
          if (auto e = f.unescaped_key().get(k)) return fail(e, "event key");
          od::value fv;
          if (auto e = f.value().get(fv)) return fail(e, "event value");
          std::string raw;
          if (auto e = Raw(fv, &raw)) return fail(e, "event value");
          if (k == "ph") ev.ph = UnescapeJsonString(raw).value_or("<not a string>");
          else if (k == "name") ev.name = UnescapeJsonString(raw).value_or("<not a string>");
          else if (k == "cat") ev.cat = UnescapeJsonString(raw).value_or("<not a string>");
          else if (k == "pid") {
            char* end = nullptr;
            long long p = std::strtoll(raw.c_str(), &end, 10);
            if (end && *end == '\0' && !raw.empty()) ev.pid = p;
          } else if (k == "tid") ev.tid = raw;
          else if (k == "ts") ev.ts = raw;
          else if (k == "dur") ev.dur = raw;
          else if (k == "id") ev.id = raw;
          else if (k == "bind_id") ev.bind_id = raw;
          else if (k == "id2") ev.id2 = raw;
          else if (k == "args") ev.args = raw;
          ev.members.emplace_back(std::string(k), std::move(raw));
        }
        t->events.push_back(std::move(ev));
      }
    } else {
      std::string raw;
      if (auto e = Raw(v, &raw)) return fail(e, "top-level value");
      if (key == "displayTimeUnit") t->display_time_unit = UnescapeJsonString(raw).value_or("");
      if (key == "otherData") t->other_data = raw;
    }
  }
  if (!t->other_data.empty()) {
    if (auto e = ReadInputs(t->other_data, &t->inputs)) return fail(e, "otherData.inputs");
  }
  return t;
}

std::map<int64_t, std::string> OutputTrace::ProcessNames() const {
  std::map<int64_t, std::string> names;
  for (const auto& e : events)
    if (e.ph == "M" && e.name == "process_name" && e.pid) names[*e.pid] = e.ArgsName();
  return names;
}

int OutputTrace::InputOfPid(int64_t pid) const {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (pid >= inputs[i].pid_lo && pid <= inputs[i].pid_hi) return static_cast<int>(i);
  return -1;
}

size_t OutputTrace::CountPh(std::string_view ph) const {
  size_t n = 0;
  for (const auto& e : events) n += e.ph == ph;
  return n;
}

std::vector<const OutEvent*> OutputTrace::Named(std::string_view name) const {
  std::vector<const OutEvent*> v;
  for (const auto& e : events)
    if (e.name == name) v.push_back(&e);
  return v;
}

}  // namespace tracemill::testing
