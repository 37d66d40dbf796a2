#include "pipeline/output/overview.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "absl/strings/str_cat.h"
#include "formats/chrome/output_file.h"
#include "formats/common/json_text.h"
#include "formats/common/read_file.h"
#include "formats/common/ts_text.h"
#include "tracemill/version.h"

namespace tracemill::pipeline {
namespace {

void AppendMicros(int64_t ns, std::string* out) {
  char buf[32];
  out->append(buf, formats::FormatNanosAsMicros(ns, buf) - buf);
}

bool ShorterFirst(const OverviewTap::Span& a, const OverviewTap::Span& b) { return a.dur_ns > b.dur_ns; }

// The tids of an input's overview process: steps, collectives, then one
// per track that kept spans.
constexpr int kStepsTid = 1;
constexpr int kCollectivesTid = 2;
constexpr int kFirstTrackTid = 3;

// One `X` event of the overview.
void AppendX(int64_t pid, int tid, std::string_view name_body, std::string_view cat_body, int64_t ts, int64_t dur,
             int64_t offset, std::string* out) {
  absl::StrAppend(out, ",{\"ph\":\"X\",\"pid\":", pid, ",\"tid\":", tid, ",\"name\":\"");
  out->append(name_body);
  out->append("\"");
  if (!cat_body.empty()) {
    out->append(",\"cat\":\"");
    out->append(cat_body);
    out->append("\"");
  }
  out->append(",\"ts\":");
  AppendMicros(ts - offset, out);
  out->append(",\"dur\":");
  AppendMicros(std::max<int64_t>(dur, 0), out);
  out->append("}");
}

void AppendThreadName(int64_t pid, int tid, const std::string& name, std::string* out) {
  absl::StrAppend(out, ",{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":", pid, ",\"tid\":", tid, ",\"args\":{\"name\":");
  formats::AppendJsonString(name, out);
  out->append("}}");
}

// A track's label: its process (name, or pid token) and tid token.
std::string TrackLabel(const formats::TraceData& d, uint32_t pid, uint32_t tid) {
  const formats::ProcessInfo& p = d.processes[pid];
  std::string label = p.has_name ? formats::UnescapeJsonStringBody(p.name) : std::string(p.pid_token);
  label.append(" / tid ");
  label.append(d.strings[tid]);
  return label;
}

}  // namespace

OverviewLimits OverviewLimits::For(size_t inputs) {
  const uint64_t per_input = std::max<uint64_t>(kOverviewBytes / std::max<size_t>(inputs, 1) / kOverviewBytesPerEvent, 16);
  OverviewLimits l;
  l.steps = std::clamp<size_t>(per_input / 4, 4, 4096);
  l.collectives = std::clamp<size_t>(per_input / 4, 2, 4096);
  l.spans = std::clamp<size_t>(per_input / 3, 4, 8192);
  l.spans_per_track = std::clamp<size_t>(per_input / 64, 1, 64);
  l.series = std::clamp<size_t>(per_input / 256, 1, 16);
  l.points_per_series = std::clamp<size_t>(per_input / 16 / l.series, 2, 256);
  return l;
}

std::string OverviewLimits::Json() const {
  return absl::StrCat("{\"steps_per_rank\":", steps, ",\"collectives_per_rank\":", collectives,
                      ",\"spans_per_rank\":", spans, ",\"spans_per_track\":", spans_per_track,
                      ",\"counter_series_per_rank\":", series, ",\"points_per_series\":", points_per_series, "}");
}

void OverviewTap::Event(const formats::Event& e, int64_t shift_ns) {
  if (!(e.flags & formats::kHasTs)) return;
  const int64_t ts = e.ts_ns + shift_ns;
  if (e.phase == 'C') return KeepCounter(e, ts);
  if (e.phase != 'X' || !(e.flags & formats::kHasDur) || !(e.flags & formats::kHasPid)) return;
  const auto& cls = data_->collective_of_name;
  if (e.name < cls.size() && cls[e.name] == static_cast<uint8_t>(formats::CollectiveClass::kGpuKernel)) {
    if (collectives_.size() < limits_.collectives)
      collectives_.push_back(Span{ts, e.dur_ns, e.name, e.cat, e.pid, e.tid});
    return;
  }
  KeepSpan(e, ts);
}

std::vector<OverviewTap::Span>& OverviewTap::OtherTrack(uint64_t key) {
  std::swap(recent_[0], recent_[1]);
  if (recent_[0].index == UINT32_MAX || recent_[0].key != key) {
    auto [it, fresh] = tracks_.try_emplace(key, static_cast<uint32_t>(heaps_.size()));
    if (fresh) heaps_.emplace_back();
    recent_[0] = {key, it->second};
  }
  return heaps_[recent_[0].index];
}

void OverviewTap::KeepSpan(const formats::Event& e, int64_t ts) {
  std::vector<Span>& heap = Track((uint64_t{e.pid} << 32) | e.tid);
  if (heap.size() == limits_.spans_per_track && e.dur_ns <= heap.front().dur_ns) return;
  heap.push_back(Span{ts, e.dur_ns, e.name, e.cat, e.pid, e.tid});
  std::push_heap(heap.begin(), heap.end(), ShorterFirst);
  if (heap.size() > limits_.spans_per_track) {
    std::pop_heap(heap.begin(), heap.end(), ShorterFirst);
    heap.pop_back();
  }
}

void OverviewTap::KeepCounter(const formats::Event& e, int64_t ts) {
  if (!(e.flags & formats::kHasPid)) return;
  const auto key = std::make_pair(e.pid, e.name);
  auto it = series_.find(key);
  if (it == series_.end()) {
    if (series_.size() >= limits_.series) return;
    it = series_.emplace(key, Series{}).first;
  }
  Series& s = it->second;
  // Every stride-th sample; when the points fill up, every other one goes
  // and the stride doubles (the same samples whatever the thread count).
  if (s.seen++ % s.stride != 0) return;
  s.points.emplace_back(ts, std::string(e.rest, e.rest_len));
  if (s.points.size() < 2 * limits_.points_per_series) return;
  size_t k = 0;
  for (size_t j = 0; j < s.points.size(); j += 2) s.points[k++] = std::move(s.points[j]);
  s.points.resize(k);
  s.stride *= 2;
}

std::string OverviewCollector::FileName(int shard_index, int shard_count) {
  if (shard_count <= 1) return kOverviewFileName;
  return absl::StrCat("overview.shard-", shard_index, "-of-", shard_count, ".json");
}

OverviewCollector::OverviewCollector(size_t inputs, const int64_t& ts_offset_ns)
    : inputs_(inputs), ts_offset_ns_(ts_offset_ns), limits_(OverviewLimits::For(inputs)), blocks_(inputs) {}

void OverviewCollector::AddBlock(const InputRecord& r, const OverviewTap* tap) {
  const int64_t pid = r.index + 1;
  std::string b = absl::StrCat("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":", pid, ",\"args\":{\"name\":");
  formats::AppendJsonString(absl::StrCat(r.label.empty() ? r.path : r.label, " (overview)"), &b);
  absl::StrAppend(&b, "}},{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":", pid, ",\"args\":{\"sort_index\":",
                  pid, "}}");
  AppendThreadName(pid, kStepsTid, "steps", &b);
  for (size_t k = 0; k < r.timeline.steps.size() && k < limits_.steps; ++k) {
    const formats::StepSpan& s = r.timeline.steps[k];
    AppendX(pid, kStepsTid, absl::StrCat("step ", s.step), "step", s.start_ns, s.end_ns - s.start_ns, ts_offset_ns_, &b);
  }
  if (tap) {
    const formats::TraceData& d = *tap->data_;
    if (!tap->collectives_.empty()) AppendThreadName(pid, kCollectivesTid, "collectives", &b);
    for (const OverviewTap::Span& s : tap->collectives_)
      AppendX(pid, kCollectivesTid, d.strings[s.name], d.strings[s.cat], s.ts_ns, s.dur_ns, ts_offset_ns_, &b);
    // Tracks in a fixed order (pid, tid), the longest spans over all of
    // them up to the input's limit, each track's in time order.
    std::vector<std::pair<uint64_t, const std::vector<OverviewTap::Span>*>> tracks;
    for (const auto& [key, index] : tap->tracks_) tracks.emplace_back(key, &tap->heaps_[index]);
    std::sort(tracks.begin(), tracks.end());
    std::vector<OverviewTap::Span> all;
    for (const auto& [key, heap] : tracks) all.insert(all.end(), heap->begin(), heap->end());
    std::stable_sort(all.begin(), all.end(), ShorterFirst);
    const int64_t min_dur = all.size() > limits_.spans ? all[limits_.spans - 1].dur_ns : INT64_MIN;
    size_t kept = 0;
    int tid = kFirstTrackTid;
    for (const auto& [key, heap] : tracks) {
      std::vector<OverviewTap::Span> spans;
      for (const OverviewTap::Span& s : *heap)
        if (s.dur_ns > min_dur || (s.dur_ns == min_dur && kept < limits_.spans)) spans.push_back(s);
      if (spans.empty()) continue;
      kept += spans.size();
      std::sort(spans.begin(), spans.end(), [](const auto& x, const auto& y) { return x.ts_ns < y.ts_ns; });
      AppendThreadName(pid, tid, absl::StrCat("longest: ", TrackLabel(d, spans[0].pid, spans[0].tid)), &b);
      for (const OverviewTap::Span& s : spans)
        AppendX(pid, tid, d.strings[s.name], d.strings[s.cat], s.ts_ns, s.dur_ns, ts_offset_ns_, &b);
      ++tid;
    }
    for (const auto& [key, series] : tap->series_) {
      for (const auto& [ts, args] : series.points) {
        absl::StrAppend(&b, ",{\"ph\":\"C\",\"pid\":", pid, ",\"name\":\"");
        b.append(d.strings[key.second]);
        b.append("\",\"ts\":");
        AppendMicros(ts - ts_offset_ns_, &b);
        if (!args.empty()) {
          b.push_back(',');
          b.append(args);
        }
        b.push_back('}');
      }
    }
  }
  blocks_[static_cast<size_t>(r.index)] = std::move(b);
}

namespace {

// LastArrivalsLine: the overview's line of `marks` (Write).
std::string LastArrivalsLine(const std::vector<analysis::LastArrival>& marks, int64_t pid, int64_t offset) {
  std::string o = absl::StrCat("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":", pid,
                               ",\"args\":{\"name\":\"collectives: last arrivals\"}},{\"ph\":\"M\",\"name\":"
                               "\"process_sort_index\",\"pid\":", pid, ",\"args\":{\"sort_index\":-1}}");
  std::set<int64_t> named;
  for (const analysis::LastArrival& m : marks) {
    const int64_t tid = m.rank ? *m.rank : -1;
    if (named.insert(tid).second)
      AppendThreadName(pid, static_cast<int>(tid), m.rank ? absl::StrCat("rank ", *m.rank, " last") : "no rank last",
                       &o);
    std::string name = absl::StrCat(m.collective, " #", m.instance, ": ");
    absl::StrAppend(&name, m.rank ? absl::StrCat("rank ", *m.rank) : std::string("no rank"), " last of ", m.ranks);
    std::string body;
    formats::AppendJsonString(name, &body);
    AppendX(pid, static_cast<int>(tid), std::string_view(body).substr(1, body.size() - 2), "collective", m.first_ns,
            m.last_ns - m.first_ns, offset, &o);
    o.pop_back();  // the X's closing brace: its args follow
    absl::StrAppend(&o, ",\"args\":{\"instance\":", m.instance, ",\"skew_ns\":", m.last_ns - m.first_ns);
    if (m.seq) absl::StrAppend(&o, ",\"seq\":", *m.seq);
    o.append(",\"process_group\":");
    formats::AppendJsonString(m.process_group, &o);
    o.append("}}");
  }
  return o;
}

}  // namespace

absl::Status OverviewCollector::Write(const std::string& dir, const std::string& file_name,
                                      const std::map<int64_t, std::string>& previous,
                                      const std::vector<analysis::LastArrival>& marks) const {
  std::string o = absl::StrCat("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"tracemill_version\":\"", kVersion,
                               "\",\"overview\":{\"inputs\":", inputs_, ",\"bound_bytes\":", kOverviewBytes,
                               ",\"limits\":", limits_.Json(),
                               ",\"note\":\"per rank: steps, the first collective kernels, the longest spans of "
                               "each track, counters thinned to a few points; the per-GPU outputs hold every "
                               "event\"},\"time_base\":{\"unit\":\"us\",\"offset_ns\":",
                               ts_offset_ns_, "}},\"traceEvents\":[");
  bool first = true;
  for (size_t i = 0; i < inputs_; ++i) {
    const std::string* block = &blocks_[i];
    if (block->empty()) {
      auto it = previous.find(static_cast<int64_t>(i) + 1);
      if (it == previous.end()) continue;
      block = &it->second;
    }
    o.append(first ? "\n" : ",\n");
    o.append(*block);
    first = false;
  }
  if (!marks.empty()) {
    o.append(first ? "\n" : ",\n");
    o.append(LastArrivalsLine(marks, static_cast<int64_t>(inputs_) + 1, ts_offset_ns_));
  }
  o.append("\n]}\n");
  auto file = formats::OutputFile::Create(dir + "/" + file_name, /*gzip=*/false);
  if (!file.ok()) return file.status();
  if (absl::Status st = (*file)->Append(o); !st.ok()) return st;
  return (*file)->Commit();
}

std::map<int64_t, std::string> OverviewCollector::BlocksOf(const std::string& path) {
  std::map<int64_t, std::string> blocks;
  const std::optional<std::string> file = formats::ReadTextFile(path);
  if (!file) return blocks;
  const std::string& text = *file;
  constexpr std::string_view kHead = "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":";
  size_t at = 0;
  while ((at = text.find('\n', at)) != std::string::npos) {
    const size_t start = at + 1;
    at = start;
    if (text.compare(start, kHead.size(), kHead) != 0) continue;
    int64_t pid = 0;
    const char* p = text.data() + start + kHead.size();
    auto [end, ec] = std::from_chars(p, text.data() + text.size(), pid);
    if (ec != std::errc()) continue;
    size_t stop = text.find('\n', start);
    if (stop == std::string::npos) break;
    size_t len = stop - start;
    if (len && text[start + len - 1] == ',') --len;  // the separator before the next line
    blocks[pid] = text.substr(start, len);
  }
  return blocks;
}

}  // namespace tracemill::pipeline
