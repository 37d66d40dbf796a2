#include "formats/smdebug/system_metrics_decoder.h"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "formats/common/json_text.h"
#include "formats/common/status_macros.h"
#include "formats/common/ts_text.h"

namespace tracemill::formats {
namespace od = simdjson::ondemand;

struct SystemMetricsDecoder::Parser {
  od::parser parser;
};

bool LooksLikeSystemMetrics(std::string_view head) {
  std::string_view line = head.substr(0, head.find('\n'));
  return line.find("\"Dimension\"") != std::string_view::npos &&
         line.find("\"Timestamp\"") != std::string_view::npos;
}

SystemMetricsDecoder::SystemMetricsDecoder(TraceBuilder* out, double low_gpu_threshold)
    : out_(out), threshold_(low_gpu_threshold), parser_(new Parser) {
  // No process_name of its own: the writer names it "<node> · system metrics".
  metrics_pid_ = out_->InternPid("\"system metrics\"");
  ph_c_ = out_->InternString("C");
  ph_x_ = out_->InternString("X");
  slice_name_ = out_->InternString("low GPU utilization");
}

SystemMetricsDecoder::~SystemMetricsDecoder() { delete parser_; }

DecodeReport SystemMetricsDecoder::AddFile(std::string_view file_name, std::string_view text,
                                           size_t capacity, bool context) {
  DecodeReport rep;
  size_t pos = 0;
  uint64_t line_no = 0;
  auto fail = [&](DropReason why, uint64_t line, size_t offset, std::string_view what, bool last_cut) {
    rep.dropped.Add(last_cut ? DropReason::kTruncated : why);
    if (last_cut) {
      rep.warnings.push_back(absl::StrCat(AbslView(file_name), ":", line,
                                          ": last line cut off (the writer was stopped); ignored"));
    } else if (rep.status.ok()) {
      rep.status = absl::DataLossError(absl::StrCat("system metrics: ", AbslView(file_name), ":", line,
                                                    ": ", AbslView(what)));
      rep.error_offset = offset;
    }
  };
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    const bool has_nl = nl != std::string_view::npos;
    size_t end = has_nl ? nl : text.size();
    std::string_view line = text.substr(pos, end - pos);
    const size_t offset = pos;
    pos = has_nl ? nl + 1 : text.size();
    ++line_no;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.remove_suffix(1);
    if (SkipWhitespace(line, 0) == line.size()) continue;
    ++rep.events_read;
    // The cut last line of a killed writer: nothing after it, and no closing brace.
    const bool last = !has_nl || SkipWhitespace(text, pos) == text.size();
    od::document doc;
    od::object obj;
    std::string_view name, dim, value_raw;
    std::optional<int64_t> ts;
    bool ok = !parser_->parser.iterate(line.data(), line.size(), capacity - offset).get(doc) &&
              !doc.get_object().get(obj);
    if (ok) {
      for (auto field : obj) {
        std::string_view key;
        od::value v;
        if (field.unescaped_key().get(key) || field.value().get(v)) {
          ok = false;
          break;
        }
        if (key == "Name" || key == "Dimension") {
          // The escaped body, kept as written (sanitized below).
          std::string_view raw = v.raw_json_token();
          while (!raw.empty() && raw.back() == ' ') raw.remove_suffix(1);
          if (raw.size() >= 2 && raw.front() == '"' && raw.back() == '"')
            (key == "Name" ? name : dim) = raw.substr(1, raw.size() - 2);
        } else if (key == "Value") {
          value_raw = v.raw_json_token();
        } else if (key == "Timestamp") {
          ts = ParseSecondsToNanos(v.raw_json_token());
        }
      }
    }
    if (!ok) {
      bool cut = last && line.back() != '}';
      fail(DropReason::kMalformed, line_no, offset, "not a JSON object", cut);
      continue;
    }
    while (!value_raw.empty() && value_raw.back() == ' ') value_raw.remove_suffix(1);
    double value = 0;
    // The whole token must be the number (On-Demand's raw token runs to the
    // next structural character: `14"x"` is one token).
    const char* value_end = value_raw.data() + value_raw.size();
    auto parsed = std::from_chars(value_raw.data(), value_end, value);
    bool numeric = !value_raw.empty() && parsed.ec == std::errc() && parsed.ptr == value_end;
    // Kept times are within +-2^62 ns, as every input's (ts_text.h).
    const bool ts_ok = ts && InTimeRange(*ts);
    if (!ts_ok || name.empty() || !numeric) {
      fail(DropReason::kBadSample, line_no, offset,
           !ts      ? "no decimal Timestamp"
           : !ts_ok ? "Timestamp out of range (more than 2^62 ns from the epoch)"
           : name.empty() ? "no string Name"
                          : "Value is not a number",
           false);
      continue;
    }
    Event e{};
    e.ts_ns = *ts;
    e.phase = 'C';
    e.ph = ph_c_;
    e.pid = metrics_pid_;
    e.flags = kHasTs | kHasPid;
    rest_.clear();
    AppendSanitizedStringBody(name, &rest_);
    e.name = out_->InternString(out_->arena().Copy(rest_));
    rest_.assign("\"args\":{\"");
    AppendSanitizedStringBody(dim.empty() ? std::string_view("value") : dim, &rest_);
    rest_.append("\":");
    AppendSanitizedJson(value_raw, &rest_);
    rest_.push_back('}');
    std::string_view stored = out_->rest_arena().Copy(rest_);
    e.rest = stored.data();
    e.rest_len = static_cast<uint32_t>(stored.size());
    if (!context) out_->AddEvent(e);
    if (dim == "GPUUtilization") gpu_.push_back(GpuSample{e.name, e.ts_ns, value < threshold_, context});
  }
  return rep;
}

uint64_t SystemMetricsDecoder::Finish(DecodeReport* report) {
  std::stable_sort(gpu_.begin(), gpu_.end(), [](const GpuSample& a, const GpuSample& b) {
    return a.device != b.device ? a.device < b.device : a.ts_ns < b.ts_ns;
  });
  uint64_t added = 0;
  const std::string thr_text = absl::StrCat(threshold_);
  for (size_t i = 0; i < gpu_.size();) {
    if (!gpu_[i].low) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < gpu_.size() && gpu_[j].device == gpu_[i].device && gpu_[j].low) ++j;
    const bool closed = j < gpu_.size() && gpu_[j].device == gpu_[i].device;
    const int64_t end_ns = closed ? gpu_[j].ts_ns : gpu_[j - 1].ts_ns;
    // The run, cut at the window edges that fall inside it (follow windows).
    int64_t from = gpu_[i].ts_ns;
    size_t k = i;  // the run's samples before `from` are in earlier pieces
    for (size_t c = 0; c <= cuts_ns_.size(); ++c) {
      const bool last = c == cuts_ns_.size();
      if (!last && !(cuts_ns_[c] > from && cuts_ns_[c] < end_ns)) continue;
      const int64_t to = last ? end_ns : cuts_ns_[c];
      size_t samples = 0;
      bool own = false;  // a sample of the window's own files
      while (k < j && (last || gpu_[k].ts_ns < to)) own |= !gpu_[k].context, ++k, ++samples;
      if (own || InWindow(from)) {
        AddLowSlice(gpu_[i].device, from, to, samples, thr_text);
        ++added;
      }
      from = to;
    }
    i = j;
  }
  gpu_.clear();
  if (added) {
    report->events_read += added;
    report->warnings.push_back(absl::StrCat(added, " low GPU utilization slices derived from GPUUtilization "
                                            "samples below ", thr_text, "% (counted as events read)"));
  }
  return added;
}

bool SystemMetricsDecoder::InWindow(int64_t t) const {
  return (cuts_ns_[0] == INT64_MIN || t >= cuts_ns_[0]) && (cuts_ns_[1] == INT64_MIN || t < cuts_ns_[1]);
}

void SystemMetricsDecoder::AddLowSlice(uint32_t device, int64_t from_ns, int64_t to_ns, size_t samples,
                                       const std::string& thr_text) {
  if (bottleneck_pid_ == UINT32_MAX) {
    bottleneck_pid_ = out_->InternPid("\"GPU bottlenecks\"");
  }
  Event e{};
  e.ts_ns = from_ns;
  e.dur_ns = to_ns - from_ns;
  e.phase = 'X';
  e.ph = ph_x_;
  e.name = slice_name_;
  e.pid = bottleneck_pid_;
  rest_.clear();  // not assign("\""): gcc 12 -Wrestrict false positive
  rest_.push_back('"');
  rest_.append(out_->InternedString(device));
  rest_.push_back('"');
  e.tid = out_->InternToken(out_->arena().Copy(rest_));
  e.flags = kHasTs | kHasDur | kHasPid | kHasTid;
  rest_ = absl::StrCat("\"args\":{\"device\":\"", AbslView(out_->InternedString(device)),
                       "\",\"threshold_percent\":", thr_text, ",\"low_samples\":", samples, "}");
  std::string_view stored = out_->rest_arena().Copy(rest_);
  e.rest = stored.data();
  e.rest_len = static_cast<uint32_t>(stored.size());
  out_->AddEvent(e);
}

}  // namespace tracemill::formats
