// TablesTap: one input's events -> per-event rows and aggregates (tables.h).
#include "analysis/tables.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "analysis/tables_text.h"
#include "formats/common/collectives.h"
#include "formats/common/json_text.h"
#include "formats/common/ts_text.h"

namespace tracemill::analysis {

// A span's args: its own (`X`, or the `B` of a pair) and, for a pair, its
// `E`'s, which the Trace Event Format merges into the span's (an `E` value
// wins: smdebug writes `step_num` and `layer_name` on the `E`).
struct SpanArgs {
  std::string_view own, end;
  // The raw JSON value of args.<key>, "" if neither has it.
  std::string_view Value(std::string_view key) const {
    std::string_view v = end.empty() ? std::string_view() : formats::RestArgValue(end, key);
    return v.empty() ? formats::RestArgValue(own, key) : v;
  }
};

namespace {

constexpr size_t kBatchBytes = 1 << 20;  // a batch handed to the writer thread

// An integer argument (`"step_num": 3`, `"step_num": "3"`), or `fallback`.
int64_t IntArg(const SpanArgs& args, std::string_view key, int64_t fallback) {
  std::string_view v = args.Value(key);
  if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
  if (auto n = formats::ParseInt64(v)) return *n;
  return fallback;
}
int64_t IntArg(std::string_view rest, std::string_view key, int64_t fallback) {
  return IntArg(SpanArgs{rest, {}}, key, fallback);
}

// A string argument, unescaped; nullopt if absent or not a string.
std::optional<std::string> StringArg(const SpanArgs& args, std::string_view key) {
  std::string_view v = args.Value(key);
  if (v.size() < 2 || v.front() != '"') return std::nullopt;
  return formats::UnescapeJsonStringBody(v.substr(1, v.size() - 2));
}

bool Contains(std::string_view haystack, std::string_view needle) {
  if (haystack.size() < needle.size()) return false;  // also an empty haystack's null data()
  return ::memmem(haystack.data(), haystack.size(), needle.data(), needle.size()) != nullptr;
}

// KeysSeen / ScanKeys: whether `rest` may hold the keys `"stream"` (and, if
// asked, `"correlation"`), found by their last letter followed by `":`,
// 16 positions at a time (SSE2, x86-64's baseline); RestArgValue then confirms
// a hit (top-level args only). Searching the keys' text instead (memmem,
// string_view::find, memchr over colons) or walking every member cost 6-8 %
// of a 64-rank job's CPU: Kineto's `Call stack` strings are long and full
// of `"` and `:`.
struct KeysSeen {
  bool stream = false, correlation = false;
};
void CheckKeyEnd(const char* s, size_t j, bool want_correlation, KeysSeen* k) {
  if (s[j] == 'm' && j >= 6 && std::memcmp(s + j - 6, "\"strea", 6) == 0) k->stream = true;
  else if (want_correlation && s[j] == 'n' && j >= 11 && std::memcmp(s + j - 11, "\"correlatio", 11) == 0)
    k->correlation = true;
}
KeysSeen ScanKeys(std::string_view rest, bool want_correlation) {
  KeysSeen k;
  const char* s = rest.data();
  const size_t n = rest.size();
  size_t i = 0;  // candidate position of a key's last letter
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), colon = _mm_set1_epi8(':');
  const __m128i m = _mm_set1_epi8('m'), last_n = _mm_set1_epi8(want_correlation ? 'n' : 'm');
  for (; i + 18 <= n; i += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 1));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 2));
    const __m128i hit = _mm_and_si128(_mm_and_si128(_mm_cmpeq_epi8(b, quote), _mm_cmpeq_epi8(c, colon)),
                                      _mm_or_si128(_mm_cmpeq_epi8(a, m), _mm_cmpeq_epi8(a, last_n)));
    for (int mask = _mm_movemask_epi8(hit); mask; mask &= mask - 1)
      CheckKeyEnd(s, i + static_cast<size_t>(__builtin_ctz(mask)), want_correlation, &k);
  }
#endif
  for (; i + 2 < n; ++i)
    if (s[i + 1] == '"' && s[i + 2] == ':') CheckKeyEnd(s, i, want_correlation, &k);
  return k;
}

// A token as a table value: an integer when it is one, else its text.
void TokenCell(std::string_view token, formats::RowBatch* b) {
  if (auto n = formats::ParseInt64(token)) return b->Int(*n);
  if (token.size() >= 2 && token.front() == '"') return b->Text(formats::UnescapeJsonStringBody(token.substr(1, token.size() - 2)));
  b->Text(token);
}

// Data loading by name: PyTorch's DataLoader spans
// (`enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__`), smdebug's.
bool IsDataloaderName(std::string_view name) {
  return name.find("DataLoader") != std::string_view::npos || name.find("dataloader") != std::string_view::npos;
}

// smdebug's data-loader events carry args worker_id / num_workers.
bool HasDataloaderArgs(const SpanArgs& args) {
  for (std::string_view rest : {args.own, args.end})
    if (Contains(rest, "\"worker_id\":") || Contains(rest, "\"num_workers\":")) return true;
  return false;
}

// A span's PandasFrame time cells: start_time, end_time (ISO-8601),
// start_time_us, end_time_us.
void TimeCells(int64_t ts, int64_t dur, formats::RowBatch* b) {
  AppendIsoTime(ts, b);
  AppendIsoTime(ts + dur, b);
  b->Int(FloorDiv(ts, 1000));
  b->Int(FloorDiv(ts + dur, 1000));
}

}  // namespace

std::string PandasFrameNodeId(std::string_view node) {
  const size_t dash = node.rfind("-algo");
  if (dash == std::string_view::npos) return std::string(node);
  std::string swapped(node.substr(dash + 1));
  swapped.push_back('-');
  swapped.append(node.substr(0, dash));
  return swapped;
}

TablesTap::TablesTap(TablesCollector* collector, InputFacts facts, const formats::TraceData* data)
    : collector_(collector),
      r_(std::move(facts)),
      d_(data),
      smdebug_(r_.smdebug_kind != 0 || r_.format.find("smdebug_framework") != std::string::npos),
      system_(r_.format.find("smdebug_system_metrics") != std::string::npos),
      frame_node_(PandasFrameNodeId(r_.node)),
      file_base_ns_(data->meta.has_base_time ? data->meta.base_time_ns : 0),
      framework_(TableIndex(Table::kFrameworkMetrics)),
      system_rows_(TableIndex(Table::kSystemMetrics)),
      dataloader_(TableIndex(Table::kDataloaderMetrics)),
      low_gpu_(TableIndex(Table::kLowGpuUtilization)),
      collectives_(TableIndex(Table::kCollectives)),
      collective_rows_(r_, data),
      hta_([&] {
        // HTA's iteration filter (trace.py:873-886) needs two ProfilerStep
        // names; HTA counts them over all ranks, we per rank (README). Not
        // with include_last_profiler_step=True (--hta-last-step).
        if (collector->hta_last_step()) return INT64_MIN;
        int names = 0;
        for (std::string_view s : data->strings) names += s.rfind("ProfilerStep#", 0) == 0 && s.size() > 13;
        if (names < 2 || r_.steps.empty()) return INT64_MIN;
        int64_t last = INT64_MIN;
        for (const auto& s : r_.steps) last = std::max(last, s.start_ns);
        return last;
      }()) {
  hta_filter_ = hta_.filtering();
  steps_ = r_.steps;
  std::sort(steps_.begin(), steps_.end(), [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  plain_.resize(d_->strings.size());
  plain_set_.assign(d_->strings.size(), 0);
  kernel_type_.assign(d_->strings.size(), 0);
  step_name_.assign(d_->strings.size(), 0);
  dataloader_name_.assign(d_->strings.size(), 0);
  idle_cat_.assign(d_->strings.size(), 0);
  for (uint32_t i = 0; i < d_->strings.size(); ++i) {
    idle_cat_[i] = formats::IsHtaKernelCategory(d_->strings[i]);
    if (d_->strings[i] == "Trace") trace_cat_ = i;
    if (d_->strings[i] == "cpu_op") cpu_op_cat_ = i;
  }
  out_.tapped = true;
}

const std::string& TablesTap::Plain(uint32_t id) {
  if (!plain_set_[id]) {
    plain_[id] = formats::UnescapeJsonStringBody(d_->strings[id]);
    plain_set_[id] = 1;
  }
  return plain_[id];
}

const std::string& TablesTap::ProcessName(uint32_t pid) {
  if (process_.empty()) {
    for (const formats::ProcessInfo& p : d_->processes)
      process_.push_back(p.has_name ? formats::UnescapeJsonStringBody(p.name) : std::string(p.pid_token));
  }
  static const std::string kNone;
  return pid < process_.size() ? process_[pid] : kNone;
}

int64_t TablesTap::StepAt(int64_t ts) const {
  // The last step starting at or before `ts` that has not ended.
  auto it = std::upper_bound(steps_.begin(), steps_.end(), ts,
                             [](int64_t t, const formats::StepSpan& s) { return t < s.start_ns; });
  if (it == steps_.begin()) return -1;
  --it;
  return ts <= it->end_ns ? it->step : -1;
}

int64_t TablesTap::HtaIterationAt(int64_t ts) const {
  auto it = std::upper_bound(steps_.begin(), steps_.end(), ts,
                             [](int64_t t, const formats::StepSpan& s) { return t < s.start_ns; });
  if (it == steps_.begin()) return -1;
  --it;
  return ts < it->end_ns ? it->step : -1;
}

void TablesTap::OpSummary(const formats::Event& e, int64_t ts, int64_t dur, int64_t stream, int64_t correlation,
                          bool gpu_row) {
  // HTA's add_iteration (trace.py:209-225): CPU rows (stream < 0) and
  // stream-0 cpu_ops take the ProfilerStep holding their ts; rows of a
  // stream > 0 the iteration of the CPU row that launched them (same
  // correlation, transform_correlation_to_index), else -1; other stream-0
  // rows none (NaN). Rows without an iteration are never compared: not kept.
  int64_t iteration = -1;
  if (stream < 0 || (stream == 0 && e.cat == cpu_op_cat_)) {
    iteration = HtaIterationAt(ts);
  } else if (stream > 0 && correlation >= 0) {
    if (const int64_t* launched = launch_iteration_.Find(correlation, ts)) iteration = *launched;
  } else if (stream == 0) {
    return;
  }
  if (!gpu_row && correlation >= 0) launch_iteration_.Add(correlation, ts, iteration);
  if (iteration < 0) return;
  // HTA's µs: the file's own, rounded as HTA rounds a float-ts trace's.
  const int64_t file_ts = ts - shift_ns_ - file_base_ns_;
  const auto [start_us, end_us] = HtaRoundedUs(file_ts, dur);
  OpTotals& t = ops_[{iteration, stream != -1, e.cat, e.name}];
  ++t.counts;
  t.us += end_us - start_us;
  t.ns += dur;
}

void TablesTap::Event(const formats::Event& e, int64_t shift_ns) {
  // HTA's `dur` column type (InputTables::hta_dur_dtype): every event counts.
  if (!(e.flags & formats::kHasDur)) ops_dur_missing_ = true;
  else ops_max_dur_us_ = std::max(ops_max_dur_us_, e.dur_ns < 0 ? -e.dur_ns / 1000 + 1 : e.dur_ns / 1000);
  if (!(e.flags & formats::kHasTs)) return;
  // HTA rounds a trace whose `ts` column is float (any ts with sub-µs digits).
  if ((e.ts_ns - file_base_ns_) % 1000 != 0) ops_sub_us_ = true;
  const int64_t ts = e.ts_ns + shift_ns;
  shift_ns_ = shift_ns;
  if (e.phase == 'C') return Counter(e, ts);
  if (e.phase == 'X' && (e.flags & formats::kHasDur)) return Span(e, ts, e.dur_ns, {});
  // A B/E pair (formats/common/time_window.h) is one span, taken at its E
  // (its args merged over the B's); a B never closed, at Finish.
  if (e.phase == 'B' && (e.flags & formats::kHasSpan)) return OpenSpan(e, ts);
  if (e.phase == 'E' && (e.flags & formats::kHasSpan)) return CloseSpan(e, ts);
}

void TablesTap::OpenSpan(const formats::Event& e, int64_t ts) {
  Open& o = open_[{e.pid, e.tid}].emplace_back();
  o.b = e;
  o.ts = ts;
  o.rest.assign(e.rest, e.rest_len);  // a spilled run's rest lives as long as its event
}

void TablesTap::CloseSpan(const formats::Event& e, int64_t ts) {
  auto it = open_.find({e.pid, e.tid});
  if (it == open_.end()) return;  // its B is in another window
  std::vector<Open>& stack = it->second;
  const int64_t start = ts - e.dur_ns;  // the B's, as paired
  for (size_t k = stack.size(); k-- > 0;) {
    if (stack[k].ts != start) continue;
    Open o = std::move(stack[k]);
    stack.erase(stack.begin() + static_cast<std::ptrdiff_t>(k));
    o.b.rest = o.rest.data();
    Span(o.b, o.ts, o.b.dur_ns, std::string_view(e.rest, e.rest_len));
    return;
  }
}

void TablesTap::Span(const formats::Event& e, int64_t ts, int64_t dur, std::string_view end_rest) {
  // A system-metrics input's spans are the low GPU utilization ones derived
  // from its samples (formats/smdebug/system_metrics_decoder.h): not
  // framework events (PandasFrame has none), a table of their own.
  if (system_) return LowGpuRow(e, ts, dur);
  const std::string_view rest(e.rest, e.rest_len);
  const SpanArgs args{rest, end_rest};
  if (collective_rows_.Wants(e)) {
    collective_rows_.Add(e, ts, dur, rest, StepAt(ts), &collectives_);
    Flush(&collectives_, false);
  }
  if (e.phase == 'X' && e.cat != 0 && e.cat != trace_cat_) {
    // HTA reads `X` rows with a category (trace_parser.py:305-306).
    int64_t stream = -1, correlation = -1;
    const KeysSeen seen = ScanKeys(rest, true);
    if (seen.stream) stream = IntArg(rest, "stream", -1);
    if (seen.correlation) correlation = IntArg(rest, "correlation", -1);
    // Per name, once: its kernel type + 1, plus kSyncName for HTA's
    // "Event Sync" / "Context Sync" GPU rows.
    constexpr int8_t kSyncName = 16;
    if (!kernel_type_[e.name]) {
      const std::string& name = Plain(e.name);
      kernel_type_[e.name] = static_cast<int8_t>(static_cast<int8_t>(ClassifyKernel(name)) + 1 +
                                                 (name == "Event Sync" || name == "Context Sync" ? kSyncName : 0));
    }
    const int8_t kt = kernel_type_[e.name];
    // The file's own ts for HTA's rounding: before our shift and its time base.
    HtaTap::RowFacts row;
    row.ts_ns = ts;
    row.file_ts_ns = ts - shift_ns_ - file_base_ns_;
    row.dur_ns = dur;
    row.stream = stream;
    row.correlation = correlation;
    row.type = static_cast<KernelType>((kt & (kSyncName - 1)) - 1);
    row.name_id = e.name;
    row.sync_name = (kt & kSyncName) != 0;
    if (e.cat < idle_cat_.size() && idle_cat_[e.cat]) {
      row.idle_kernel = true;
      const auto& first = d_->first_kernel_of_tid;
      row.file_order = e.tid < first.size() ? first[e.tid] : 0;
    }
    hta_.Row(row);
    OpSummary(e, ts, dur, stream, correlation, (stream >= 0 && correlation >= 0) || (kt & kSyncName) != 0);
  }
  if (!dataloader_name_[e.name]) dataloader_name_[e.name] = IsDataloaderName(d_->strings[e.name]) ? 2 : 1;
  const bool full = collector_->mode() == TablesMode::kFull;
  const bool loader = dataloader_name_[e.name] == 2 || (smdebug_ && HasDataloaderArgs(args));
  if (full || loader) {
    const int64_t step = smdebug_ ? IntArg(args, "step_num", -1) : StepAt(ts);
    if (full) FrameworkRow(e, ts, dur, step, args);
    if (loader) DataloaderRow(e, ts, dur, step, args);
  }
  if (!steps_.empty()) Phases(e, ts, dur);
}

namespace {

// DataloaderCells: PandasFrame's data loader columns from a span's args:
// worker_id, num_workers (-1 when absent), pin_memory (True, False, NA).
void DataloaderCells(const SpanArgs& args, formats::RowBatch* b) {
  b->Int(IntArg(args, "worker_id", -1));
  b->Int(IntArg(args, "num_workers", -1));
  const std::string_view pin = args.Value("pin_memory");
  b->Text(pin.empty() ? "NA" : pin == "true" ? "True" : "False");
}

}  // namespace

void TablesTap::FrameworkRow(const formats::Event& e, int64_t ts, int64_t dur, int64_t step, const SpanArgs& args) {
  formats::RowBatch& b = framework_;
  TimeCells(ts, dur, &b);
  if (e.flags & formats::kHasTid) TokenCell(d_->strings[e.tid], &b); else b.Null();
  if (e.flags & formats::kHasPid) TokenCell(d_->processes[e.pid].pid_token, &b); else b.Null();
  // PandasFrame's framework_metric: args.layer_name, args.name, the name.
  std::optional<std::string> metric;
  if (smdebug_) metric = StringArg(args, "layer_name");
  if (smdebug_ && !metric) metric = StringArg(args, "name");
  b.Text(metric ? *metric : Plain(e.name));
  b.Int(step);
  b.Int(smdebug_ ? IntArg(args, "bytes_fetched", -1) : -1);
  if (e.flags & formats::kHasPid) b.Text(ProcessName(e.pid)); else b.Null();
  if (!frame_node_.empty()) b.Text(frame_node_); else b.Null();
  if (r_.rank) b.Int(*r_.rank); else b.Null();
  b.Int(dur);
  if (e.cat) b.Text(Plain(e.cat)); else b.Null();
  b.Int(ts);
  b.Int(r_.index);
  DataloaderCells(args, &b);
  Flush(&b, false);
}

void TablesTap::DataloaderRow(const formats::Event& e, int64_t ts, int64_t dur, int64_t step, const SpanArgs& args) {
  formats::RowBatch& b = dataloader_;
  TimeCells(ts, dur, &b);
  b.Int(FloorDiv(dur, 1000));
  if (e.flags & formats::kHasPid) TokenCell(d_->processes[e.pid].pid_token, &b); else b.Null();
  std::optional<std::string> metric = StringArg(args, "layer_name");
  if (!metric) metric = StringArg(args, "name");
  b.Text(metric ? *metric : Plain(e.name));
  b.Int(step);
  DataloaderCells(args, &b);
  if (e.flags & formats::kHasPid) b.Text(ProcessName(e.pid)); else b.Null();
  if (!frame_node_.empty()) b.Text(frame_node_); else b.Null();
  if (r_.rank) b.Int(*r_.rank); else b.Null();
  b.Int(ts);
  b.Int(dur);
  b.Int(r_.index);
  Flush(&b, false);
}

void TablesTap::LowGpuRow(const formats::Event& e, int64_t ts, int64_t dur) {
  const std::string_view rest(e.rest, e.rest_len);
  formats::RowBatch& b = low_gpu_;
  TimeCells(ts, dur, &b);
  std::optional<std::string> device = StringArg(SpanArgs{rest, {}}, "device");
  if (device) b.Text(*device); else b.Null();
  const std::string pct(formats::RestArgValue(rest, "threshold_percent"));  // a percent, not a time
  char* end = nullptr;
  const double x = std::strtod(pct.c_str(), &end);
  if (end != pct.c_str()) b.Real(x); else b.Null();
  b.Int(IntArg(rest, "low_samples", -1));
  if (!r_.node.empty()) b.Text(r_.node); else b.Null();
  if (r_.rank) b.Int(*r_.rank); else b.Null();
  b.Int(ts);
  b.Int(dur);
  b.Int(r_.index);
  Flush(&b, false);
}

void TablesTap::Counter(const formats::Event& e, int64_t ts) {
  if (!system_) return;
  // smdebug system metrics (system_metrics_decoder.h): name = Name
  // (`gpu0`), args = {Dimension: value}.
  const std::string_view rest(e.rest, e.rest_len);
  const size_t open = rest.find("\"args\":{\"");
  if (open == std::string_view::npos) return;
  const size_t key_start = open + 9;
  const size_t key_end = formats::JsonStringEnd(rest, key_start);
  if (key_end == std::string_view::npos || key_end + 1 >= rest.size()) return;
  const std::string_view value = rest.substr(key_end + 2, formats::SkipJsonValue(rest, key_end + 2) - key_end - 2);
  formats::RowBatch& b = system_rows_;
  AppendIsoTime(ts, &b);
  b.Int(FloorDiv(ts, 1000));
  char* end = nullptr;
  const std::string v(value);
  const double x = std::strtod(v.c_str(), &end);
  if (end != v.c_str()) b.Real(x); else b.Null();
  const std::string& name = Plain(e.name);
  b.Text(name);
  b.Text(formats::UnescapeJsonStringBody(rest.substr(key_start, key_end - key_start)));
  if (!r_.node.empty()) b.Text(r_.node); else b.Null();
  // smdebug's Type is the Name without its device number (`gpu`, `cpu`).
  b.Text(name.substr(0, name.find_first_of("0123456789")));
  if (r_.rank) b.Int(*r_.rank); else b.Null();
  b.Int(r_.index);
  b.Int(ts);
  Flush(&b, false);
}

void TablesTap::Phases(const formats::Event& e, int64_t ts, int64_t dur) {
  // PandasFrame's get_framework_metrics_by_begin_and_end_timesteps over the
  // rank's steps: an event counts for every step it touches (end >= step
  // start and start <= step end), except step events themselves (a name
  // holding "Step"); the key is its phase (smdebug: the process; else the
  // category).
  if (!step_name_[e.name]) step_name_[e.name] = d_->strings[e.name].find("Step") != std::string_view::npos ? 2 : 1;
  if (step_name_[e.name] == 2) return;
  const int64_t end = ts + dur;
  auto it = std::upper_bound(steps_.begin(), steps_.end(), end,
                             [](int64_t t, const formats::StepSpan& s) { return t < s.start_ns; });
  // Steps starting after `end` are out; walk back while they may overlap.
  // The phase: smdebug's process (pid + 1), else the category (string id,
  // high bit set); named at Finish.
  const uint64_t phase = smdebug_ ? ((e.flags & formats::kHasPid) ? uint64_t{e.pid} + 1 : 0)
                                  : ((uint64_t{1} << 32) | e.cat);
  for (auto s = it; s != steps_.begin();) {
    --s;
    if (s->end_ns < ts) {
      // Steps are disjoint in practice; a long earlier step may still
      // cover `ts`, so look a few further back.
      if (it - s > 4) break;
      continue;
    }
    const std::pair<int64_t, uint64_t> key{s->step, phase};
    if (!last_phase_ || key != last_phase_key_) {
      last_phase_ = &phases_[key];
      last_phase_key_ = key;
    }
    last_phase_->first += dur;
    ++last_phase_->second;
  }
}

void TablesTap::Flush(formats::RowBatch* b, bool force) {
  if (b->empty() || (!force && b->bytes() < kBatchBytes)) return;
  collector_->Push(b);
}

InputTables TablesTap::Finish() {
  for (auto& [key, stack] : open_)  // B events never closed (or closed in a later window)
    for (Open& o : stack) {
      o.b.rest = o.rest.data();
      Span(o.b, o.ts, o.b.dur_ns, {});
    }
  open_.clear();
  Flush(&framework_, true);
  Flush(&system_rows_, true);
  Flush(&dataloader_, true);
  Flush(&low_gpu_, true);
  Flush(&collectives_, true);
  out_.hta = hta_.Finish([&](uint32_t id) { return Plain(id); });
  for (const auto& [key, t] : ops_) {
    const auto& [iteration, gpu, cat, name] = key;
    // A trace of integer µs: HTA's durations are the file's, exactly.
    out_.ops.push_back(OpSummaryRow{iteration, gpu, Plain(cat), Plain(name), t.counts,
                                    ops_sub_us_ ? t.us : FloorDiv(t.ns, 1000), t.ns});
  }
  out_.hta_dur_dtype = ops_dur_missing_ ? "float64"
                       : ops_sub_us_        ? "int64"
                       : ops_max_dur_us_ < (1 << 7) ? "int8"
                       : ops_max_dur_us_ < (1 << 15) ? "int16"
                       : ops_max_dur_us_ < (int64_t{1} << 31) ? "int32" : "int64";
  std::sort(out_.ops.begin(), out_.ops.end(), [](const OpSummaryRow& a, const OpSummaryRow& b) {
    return std::tie(a.iteration, a.gpu, a.cat, a.name) < std::tie(b.iteration, b.gpu, b.cat, b.name);
  });
  for (const auto& [key, v] : phases_) {
    const uint64_t p = key.second;
    const std::string name = p >> 32 ? ((p & 0xffffffffu) ? Plain(static_cast<uint32_t>(p)) : "(none)")
                                     : (p ? ProcessName(static_cast<uint32_t>(p - 1)) : "Unknown");
    auto& [ns, n] = out_.phases[{key.first, name}];
    ns += v.first;
    n += v.second;
  }
  return std::move(out_);
}

}  // namespace tracemill::analysis
