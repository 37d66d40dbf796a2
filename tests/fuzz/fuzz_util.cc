// The fuzz oracles (fuzz_util.h), compiled once for every target.
#include "tests/fuzz/fuzz_util.h"

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <string_view>

#include "formats/chrome/chrome_writer.h"
#include "formats/chrome/output_file.h"
#include "formats/chrome/tef_decoder.h"
#include "formats/common/byte_buffer.h"
#include "formats/common/ts_text.h"
#include "merge/kway_merger.h"
#include "merge/namespacer.h"
#include "pipeline/convert/decode_input.h"

namespace tracemill::fuzz {

void Padded(std::string_view prefix, std::string_view data, formats::ByteBuffer* out) {
  std::string bytes;
  if (!prefix.empty() && data.substr(0, prefix.size()) != prefix) bytes.assign(prefix);
  bytes.append(data);
  out->Clear();
  out->Reserve(bytes.size() + simdjson::SIMDJSON_PADDING);
  out->Resize(bytes.size());
  std::copy(bytes.begin(), bytes.end(), out->data());
  std::fill_n(out->data() + bytes.size(), simdjson::SIMDJSON_PADDING, '\0');
}

bool StrictJson(std::string_view t) {
  if (!simdjson::validate_utf8(t.data(), t.size())) return false;
  size_t i = 0, n = t.size();
  auto ws = [&] { while (i < n && (t[i] == ' ' || t[i] == '\n' || t[i] == '\r' || t[i] == '\t')) ++i; };
  auto hex4 = [&](size_t k) {
    int v = 0;
    for (size_t j = k; j < k + 4; ++j) {
      if (j >= n || !std::isxdigit(static_cast<unsigned char>(t[j]))) return -1;
      v = v * 16 + (std::isdigit(static_cast<unsigned char>(t[j])) ? t[j] - '0' : (t[j] | 32) - 'a' + 10);
    }
    return v;
  };
  auto str = [&] {  // at '"'
    for (++i; i < n; ++i) {
      unsigned char c = static_cast<unsigned char>(t[i]);
      if (c == '"') { ++i; return true; }
      if (c < 0x20) return false;
      if (c != '\\') continue;
      if (++i >= n) return false;
      if (std::strchr("\"\\/bfnrt", t[i]) && t[i]) continue;
      if (t[i] != 'u') return false;
      int v = hex4(i + 1);
      if (v < 0 || (v >= 0xDC00 && v <= 0xDFFF)) return false;
      i += 4;
      if (v >= 0xD800 && v <= 0xDBFF) {
        if (i + 2 >= n || t[i + 1] != '\\' || t[i + 2] != 'u') return false;
        int lo = hex4(i + 3);
        if (lo < 0xDC00 || lo > 0xDFFF) return false;
        i += 6;
      }
    }
    return false;
  };
  auto scalar = [&] {
    size_t s = i;
    while (i < n && std::strchr("+-.0123456789eEtruefalsn", t[i]) && t[i]) ++i;
    std::string_view tok = t.substr(s, i - s);
    if (tok == "true" || tok == "false" || tok == "null") return true;
    size_t k = 0;
    auto digits = [&] { size_t b = k; while (k < tok.size() && std::isdigit(static_cast<unsigned char>(tok[k]))) ++k; return k > b; };
    if (k < tok.size() && tok[k] == '-') ++k;
    if (k < tok.size() && tok[k] == '0') ++k; else if (!digits()) return false;
    if (k < tok.size() && tok[k] == '.') { ++k; if (!digits()) return false; }
    if (k < tok.size() && (tok[k] == 'e' || tok[k] == 'E')) {
      ++k;
      if (k < tok.size() && (tok[k] == '+' || tok[k] == '-')) ++k;
      if (!digits()) return false;
    }
    return k == tok.size() && !tok.empty();
  };
  std::string stack;  // open containers
  ws();
  while (true) {  // at a value
    ws();
    if (i >= n) return false;
    if (t[i] == '{' || t[i] == '[') {
      stack.push_back(t[i++]);
      ws();
      if (i < n && t[i] == (stack.back() == '{' ? '}' : ']')) { ++i; stack.pop_back(); goto after; }
      if (stack.back() == '{') {
        if (i >= n || t[i] != '"' || !str()) return false;
        ws();
        if (i >= n || t[i++] != ':') return false;
      }
      continue;
    }
    if (t[i] == '"' ? !str() : !scalar()) return false;
  after:
    ws();
    if (stack.empty()) return i == n;
    if (i >= n) return false;
    if (t[i] == ',') {
      ++i;
      if (stack.back() == '{') {
        ws();
        if (i >= n || t[i] != '"' || !str()) return false;
        ws();
        if (i >= n || t[i++] != ':') return false;
      }
      continue;
    }
    if (t[i] != (stack.back() == '{' ? '}' : ']')) return false;
    ++i;
    stack.pop_back();
    goto after;
  }
}

void CheckTrace(const formats::TraceData& data, const formats::DecodeReport& rep) {
  if (!absl::IsInvalidArgument(rep.status))
    TM_FUZZ_CHECK(rep.events_read == data.events.size() + rep.dropped.Total());
  for (const auto& e : data.events) {
    TM_FUZZ_CHECK(e.ph != 0 && e.ph < data.strings.size() && e.name < data.strings.size());
    if (e.flags & formats::kHasTs) TM_FUZZ_CHECK(formats::InTimeRange(e.ts_ns));
    if (e.flags & formats::kHasDur) TM_FUZZ_CHECK(e.dur_ns >= 0 && formats::InTimeRange(e.dur_ns));
    if (e.rest_len) {
      std::string object = "{";
      object.append(e.rest, e.rest_len).push_back('}');
      TM_FUZZ_CHECK(StrictJson(object));
    }
  }
  for (const auto& [key, value] : data.meta.top_level) TM_FUZZ_CHECK(StrictJson(value));
  auto check_steps = [](const std::vector<formats::StepSpan>& steps) {
    TM_FUZZ_CHECK(steps.size() <= formats::kMaxStepsKept);
    for (size_t i = 0; i < steps.size(); ++i) {
      TM_FUZZ_CHECK(formats::InTimeRange(steps[i].start_ns) && formats::InTimeRange(steps[i].end_ns));
      if (i) TM_FUZZ_CHECK(steps[i - 1].step < steps[i].step);
    }
  };
  check_steps(data.timeline.steps);
  for (const auto& t : data.timeline.tracks) {
    check_steps(t.steps);
    if (t.failed_at_ns) TM_FUZZ_CHECK(formats::InTimeRange(*t.failed_at_ns));
  }
}

std::string DecodeDump(const formats::TraceData& d, const formats::DecodeReport& r) {
  std::ostringstream s;
  auto str = [&](uint32_t id) { return id < d.strings.size() ? d.strings[id] : std::string_view("?"); };
  for (const formats::Event& e : d.events) {
    s << "E " << str(e.ph) << "|" << str(e.name) << "|" << str(e.cat) << "|" << e.pid << "|" << e.tid << "|" << e.id
      << "|" << e.bind_id << "|" << e.id2 << "|" << e.ts_ns << "|" << e.dur_ns << "|" << static_cast<int>(e.flags)
      << "|" << std::string_view(e.rest, e.rest_len) << "\n";
  }
  s << "strings " << d.strings.size() << " ids " << d.id_count << " derived " << d.derived_events << "\n";
  for (const formats::ProcessInfo& p : d.processes) {
    s << "P " << p.pid_token << "|" << p.name << "|" << p.has_name << "|" << p.sort_index << "|" << p.labels << "|"
      << p.empty << "\n";
  }
  const formats::InputMetadata& m = d.meta;
  s << "M " << m.rank.value_or(-1) << "|" << m.world_size.value_or(-1) << "|" << m.backend << "|" << m.device_count
    << "|" << m.base_time_ns << "|" << m.display_time_unit << "\n";
  for (const auto& [k, v] : m.top_level) s << "T " << k << "=" << v << "\n";
  s << "R read " << r.events_read << " dropped " << r.dropped.Total() << " tolerant " << r.tolerant << " status "
    << r.status.ToString() << " at " << r.error_offset << "\n";
  for (int k = 0; k < formats::kNumDropReasons; ++k) {  // by reason: empty_object is not missing_ph
    if (r.dropped.n[k]) s << "D " << k << " " << r.dropped.n[k] << "\n";
  }
  for (const std::string& w : r.warnings) s << "W " << w << "\n";
  return s.str();
}

namespace {

// Decodes `json` once with `capacity`, checks it (`CheckTrace`) and returns
// the report; `*kept` is the number of events kept.
formats::DecodeReport DecodeOnce(formats::TefDecoder& decoder, std::string_view json,
                                 size_t capacity, size_t* kept) {
  formats::TraceBuilder builder;
  formats::DecodeReport rep = decoder.Decode(json, capacity, &builder);
  auto data = builder.Finish();
  *kept = data->events.size();
  CheckTrace(*data, rep);
  return rep;
}

}  // namespace

void DecodeAndCheck(std::string_view prefix, std::string_view data) {
  static formats::TefDecoder decoder;
  formats::ByteBuffer buf;
  Padded(prefix, data, &buf);
  {  // the scan path takes the input as the fast path decodes it, or declines
    std::string dumps[2];
    bool scanned = false;
    for (int scan = 1; scan >= 0; --scan) {
      decoder.set_scan_path(scan != 0);
      formats::TraceBuilder builder;
      formats::DecodeReport rep = decoder.Decode(buf.view(), buf.capacity(), &builder);
      if (scan) scanned = decoder.scanned();
      dumps[scan] = DecodeDump(*builder.Finish(), rep);
    }
    decoder.set_scan_path(true);
    if (scanned) TM_FUZZ_CHECK(dumps[1] == dumps[0]);
  }
  size_t fast_kept = 0, tolerant_kept = 0;
  formats::DecodeReport fast = DecodeOnce(decoder, buf.view(), buf.capacity(), &fast_kept);
  formats::DecodeReport tolerant = DecodeOnce(decoder, buf.view(), buf.size(), &tolerant_kept);
  TM_FUZZ_CHECK(tolerant.tolerant);
  if (!fast.tolerant && fast.status.ok()) {
    TM_FUZZ_CHECK(tolerant.events_read == fast.events_read);
    TM_FUZZ_CHECK(tolerant_kept == fast_kept);
  }
}

// The input is labelled "rank 3"; the output is read back with On-Demand,
// which parses only the numbers it is asked for.
void WriteAndCheck(merge::SortedRun& run, int64_t ts_offset_ns) {
  merge::Namespacer ns;
  merge::InputNamespace ids = ns.Add(run.data());
  formats::WriterInput in;
  in.data = &run.data();
  in.SetOutPids(std::move(ids.out_pid));
  in.pid_order = std::move(ids.pid_order);
  in.id_base = ids.id_base;
  in.label = "rank 3";
  auto out = formats::OutputFile::CreateInMemory(/*gzip=*/false);
  formats::ChromeWriter w(out.get(), ts_offset_ns);
  TM_FUZZ_CHECK(w.Begin("ms", "{}").ok());
  TM_FUZZ_CHECK(w.WriteProcessMetadata(in).ok());
  merge::KWayMerger merger({&run});
  for (auto [k, e] = merger.Next(); e; std::tie(k, e) = merger.Next())
    TM_FUZZ_CHECK(w.WriteEvent(in, *e).ok());
  TM_FUZZ_CHECK(w.Finish().ok() && out->Commit().ok());
  TM_FUZZ_CHECK(in.events_written == run.size());
  // The output: strict JSON, timed events in non-decreasing ts.
  const std::string& text = out->memory();
  TM_FUZZ_CHECK(StrictJson(text));
  static thread_local simdjson::ondemand::parser parser;
  simdjson::padded_string padded(text);
  simdjson::ondemand::document doc;
  TM_FUZZ_CHECK(parser.iterate(padded).get(doc) == simdjson::SUCCESS);
  simdjson::ondemand::array events;
  TM_FUZZ_CHECK(doc["traceEvents"].get_array().get(events) == simdjson::SUCCESS);
  size_t count = 0;
  double last_ts = -1e300;
  for (auto element : events) {
    simdjson::ondemand::object e;
    TM_FUZZ_CHECK(element.get_object().get(e) == simdjson::SUCCESS);
    ++count;
    double ts;
    if (e.find_field_unordered("ts").get_double().get(ts) != simdjson::SUCCESS) continue;
    TM_FUZZ_CHECK(ts >= last_ts);
    last_ts = ts;
  }
  TM_FUZZ_CHECK(count == run.size() + w.metadata_added());
}

void ConvertAndCheck(std::string_view data, uint64_t max_decoded_bytes) {
  static pipeline::DecodeWorker worker;
  static auto ranks = pipeline::RankMatcher::Create("");
  formats::ByteBuffer buf;
  Padded("", data, &buf);
  pipeline::InputRecord r;
  r.path = "fuzz/rank-3.json";
  auto run = pipeline::DecodeInput(buf.view(), buf.capacity(), worker, *ranks, r, max_decoded_bytes);
  if (!run) return;
  TM_FUZZ_CHECK(!r.rejected);
  TM_FUZZ_CHECK(r.events_read == run->size() + r.dropped.Total());
  if (r.has_span) TM_FUZZ_CHECK(r.first_ts_ns <= r.last_ts_ns && formats::InTimeRange(r.last_ts_ns));
  WriteAndCheck(*run, r.has_span && data.size() % 2 ? r.first_ts_ns : 0);
}

}  // namespace tracemill::fuzz
