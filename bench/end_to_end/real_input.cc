#include "bench/end_to_end/real_input.h"

#include <libdeflate.h>
#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string_view>

#include "absl/strings/str_cat.h"

namespace tracemill::bench {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// Inflates every gzip member of `gz` (libdeflate inflates one per call).
bool Gunzip(const std::string& gz, std::string* out) {
  std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor*)> d(libdeflate_alloc_decompressor(),
                                                                                 libdeflate_free_decompressor);
  size_t in_at = 0;
  out->clear();
  while (in_at < gz.size()) {
    size_t room = 64 << 20, in_used = 0, got = 0;
    for (;;) {
      const size_t base = out->size();
      out->resize(base + room);
      const libdeflate_result r = libdeflate_gzip_decompress_ex(d.get(), gz.data() + in_at, gz.size() - in_at,
                                                                out->data() + base, room, &in_used, &got);
      out->resize(base + (r == LIBDEFLATE_SUCCESS ? got : 0));
      if (r == LIBDEFLATE_SUCCESS) break;
      if (r != LIBDEFLATE_INSUFFICIENT_SPACE) return false;
      room *= 2;
    }
    in_at += in_used;
  }
  return true;
}

bool ReadTemplate(const std::string& path, std::string* json) {
  std::string bytes = Slurp(path);
  if (bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f && static_cast<unsigned char>(bytes[1]) == 0x8b)
    return Gunzip(bytes, json);
  *json = std::move(bytes);
  return !json->empty();
}

// The number of traceEvents elements, or -1 if `json` is no Kineto object.
int64_t CountEvents(const std::string& json) {
  simdjson::dom::parser parser;
  simdjson::dom::array events;
  if (parser.parse(json).get_object()["traceEvents"].get_array().get(events)) return -1;
  return static_cast<int64_t>(events.size());
}

bool WriteFile(const std::string& path, const std::string& json, bool gzip, uint64_t* disk_bytes) {
  std::string bytes = json;
  if (gzip) {
    std::unique_ptr<libdeflate_compressor, void (*)(libdeflate_compressor*)> c(libdeflate_alloc_compressor(6),
                                                                               libdeflate_free_compressor);
    bytes.resize(libdeflate_gzip_compress_bound(c.get(), json.size()));
    bytes.resize(libdeflate_gzip_compress(c.get(), json.data(), json.size(), bytes.data(), bytes.size()));
    if (bytes.empty()) return false;
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  *disk_bytes += bytes.size();
  return static_cast<bool>(f);
}

// The end of the JSON object that starts at text[at] == '{' (strings skipped).
size_t ObjectEnd(std::string_view text, size_t at) {
  int depth = 0;
  for (size_t i = at; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}' && --depth == 0) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

// Calls f(offset of the number, its value, offset past it) for every
// integer `"ts": ` value of `text`.
template <typename F>
void ForEachTs(std::string_view text, F f) {
  for (size_t at = text.find("\"ts\":"); at != std::string_view::npos; at = text.find("\"ts\":", at + 1)) {
    size_t num = at + 5;
    while (num < text.size() && text[num] == ' ') ++num;
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data() + num, text.data() + text.size(), v);
    if (ec == std::errc()) f(num, v, static_cast<size_t>(end - text.data()));  // else a string: left as written
  }
}

int64_t MinTs(const std::string& json) {
  int64_t lo = INT64_MAX;
  ForEachTs(json, [&](size_t, int64_t v, size_t) { lo = std::min(lo, v); });
  return lo;
}

}  // namespace

std::string ShiftTs(const std::string& json, int64_t shift_us) {
  std::string out;
  out.reserve(json.size() + json.size() / 64);
  size_t from = 0;
  ForEachTs(json, [&](size_t num, int64_t v, size_t end) {
    out.append(json, from, num - from);
    absl::StrAppend(&out, v + shift_us);
    from = end;
  });
  out.append(json, from);
  return out;
}

std::string WithDistributedInfo(const std::string& json, int rank, int world_size) {
  std::string text = json;
  if (size_t key = text.find("\"distributedInfo\""); key != std::string::npos) {
    const size_t open = text.find('{', key);
    size_t end = open == std::string::npos ? open : ObjectEnd(text, open);
    if (end != std::string::npos) {
      while (end < text.size() && (text[end] == ',' || text[end] == ' ' || text[end] == '\n')) ++end;
      text.erase(key, end - key);
    }
  }
  const size_t first = text.find('{');
  text.insert(first + 1, absl::StrCat("\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": ", rank,
                                      ", \"world_size\": ", world_size, "},"));
  return text;
}

bool ReplicateKineto(const RealSpec& spec, const std::string& dir, bool gzip, RealOutput* out) {
  std::vector<std::string> templates;
  std::vector<int64_t> counts, starts;
  for (const std::string& path : spec.templates) {
    std::string json;
    const int64_t n = ReadTemplate(path, &json) ? CountEvents(json) : -1;
    if (n < 0) {
      std::fprintf(stderr, "bench: %s is not a readable Kineto JSON file with traceEvents\n", path.c_str());
      return false;
    }
    starts.push_back(MinTs(json));
    templates.push_back(std::move(json));
    counts.push_back(n);
  }
  if (templates.empty()) return false;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  *out = RealOutput{};
  for (int r = 0; r < spec.ranks; ++r) {
    const size_t t = static_cast<size_t>(r) % templates.size();
    // Every rank starts at template 0's first ts + r x shift_us.
    const int64_t shift = starts[0] - starts[t] + r * spec.shift_us;
    const std::string json = WithDistributedInfo(ShiftTs(templates[t], shift), r, spec.ranks);
    const std::string path = absl::StrCat(dir, "/rank", r, ".pt.trace.json", gzip ? ".gz" : "");
    if (!WriteFile(path, json, gzip, &out->file_bytes)) {
      std::fprintf(stderr, "bench: cannot write %s\n", path.c_str());
      return false;
    }
    out->events += static_cast<uint64_t>(counts[t]);
    out->json_bytes += json.size();
  }
  return true;
}

}  // namespace tracemill::bench
