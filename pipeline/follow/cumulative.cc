#include "pipeline/follow/cumulative.h"

#include <sys/stat.h>

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <optional>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "formats/common/json_text.h"
#include "formats/common/status_macros.h"
#include "pipeline/follow/duration.h"
#include "report/html_report.h"

namespace tracemill::pipeline::follow {
namespace {

constexpr size_t kMaxFoldedWarnings = 20;

// Unranked sources (keys "b|..."): past this many, the newest fold into
// one record (kOverflowKey), so a follow job's state stays bounded whatever
// its files are called.
constexpr size_t kMaxPathSources = 4096;
constexpr const char* kOverflowKey = "c|";

// CycleFreePath: `path` with every run of 10 or more digits in its file
// name replaced by `#`: a Unix time in s, ms, us or ns, which PyTorch's
// tensorboard_trace_handler puts in each cycle's file name
// (`<host>_<pid>.<ms>.pt.trace.json`), so one process's cycles are one
// source. Shorter numbers (ranks, pids, counters) are kept.
std::string CycleFreePath(const std::string& path) {
  const size_t base = path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1;
  std::string out = path.substr(0, base);
  for (size_t i = base; i < path.size();) {
    size_t j = i;
    while (j < path.size() && path[j] >= '0' && path[j] <= '9') ++j;
    if (j - i >= 10) {
      out += '#';
      i = j;
    } else if (j > i) {
      out.append(path, i, j - i);
      i = j;
    } else {
      out += path[i++];
    }
  }
  return out;
}

// SourceKey: the record a window's input folds into, sorted by rank: a
// rank, an smdebug node and kind (its path names both), or an unranked
// input's path without its cycle's time stamp.
std::string SourceKey(const InputRecord& r) {
  const bool smdebug = r.format.rfind("smdebug", 0) == 0;
  if (r.rank && !smdebug) {
    char buf[48];  // ranks from -2^62 sort as text
    std::snprintf(buf, sizeof(buf), "a%020lld%s", static_cast<long long>(*r.rank + (int64_t{1} << 62)),
                  r.trainer ? "t" : "");
    return buf;
  }
  return absl::StrCat("b|", smdebug ? r.path : CycleFreePath(r.path));
}

// WithoutWindowDrops: a window's record, less what it left to other windows
// and, for a file an earlier window read already (`reread`), less what that
// window counted: its lost events and its error.
InputRecord WithoutWindowDrops(const InputRecord& r, bool reread = false) {
  InputRecord c = r;
  c.dropped.n[static_cast<int>(formats::DropReason::kWindow)] = 0;
  if (reread) {
    for (int k = 0; k < formats::kNumDropReasons; ++k)
      if (formats::DropReasonKind(static_cast<formats::DropReason>(k)) == formats::DropKind::kLoss) c.dropped.n[k] = 0;
    c.status = absl::OkStatus();
  }
  c.events_read = c.events_written + c.dropped.Total();
  c.owner_shard = -1;
  c.index = -1;
  return c;
}

// LeadingCount: the count a warning starts with ("3 low GPU utilization
// slices ...": each window counts its own), its digits in `*digits`.
std::optional<uint64_t> LeadingCount(std::string_view w, size_t* digits) {
  size_t d = 0;
  while (d < w.size() && w[d] >= '0' && w[d] <= '9') ++d;
  uint64_t n = 0;
  if (d == 0 || d >= w.size() || w[d] != ' ' || std::from_chars(w.data(), w.data() + d, n).ec != std::errc())
    return std::nullopt;
  *digits = d;
  return n;
}

// FoldWarning adds window warning `w` to a source's `warnings`: once, and
// a counted one into the one with the same words after the count, the
// counts added (the low-GPU line was repeated for every window).
void FoldWarning(const std::string& w, std::vector<std::string>* warnings) {
  size_t d = 0;
  if (const std::optional<uint64_t> n = LeadingCount(w, &d)) {
    const std::string_view words = std::string_view(w).substr(d);
    for (std::string& have : *warnings) {
      size_t hd = 0;
      const std::optional<uint64_t> hn = LeadingCount(have, &hd);
      if (!hn || std::string_view(have).substr(hd) != words) continue;
      have = absl::StrCat(*hn + *n, AbslView(words));
      return;
    }
  }
  if (warnings->size() < kMaxFoldedWarnings && std::find(warnings->begin(), warnings->end(), w) == warnings->end())
    warnings->push_back(w);
}

// Fold adds window record `r` to the source's record `agg`; its steps go
// to `steps`, the source's history (the record keeps none).
void Fold(const InputRecord& r, bool reread, InputRecord* agg, StepHistory* steps) {
  const InputRecord c = WithoutWindowDrops(r, reread);
  agg->path = c.path;  // the newest file
  agg->bytes += c.bytes;
  agg->decoded_bytes += c.decoded_bytes;
  agg->format = c.format;
  if (c.rank) {
    agg->rank = c.rank;
    agg->rank_source = c.rank_source;
  }
  if (c.world_size) agg->world_size = c.world_size;
  agg->label = c.label;
  if (!c.output.empty()) agg->output = c.output;
  agg->events_written += c.events_written;
  for (int k = 0; k < formats::kNumDropReasons; ++k) agg->dropped.n[k] += c.dropped.n[k];
  agg->events_read = agg->events_written + agg->dropped.Total();
  for (const std::string& w : c.warnings) FoldWarning(w, &agg->warnings);
  if (agg->status.ok() && !c.status.ok()) {
    agg->status = c.status;
    agg->error_offset = c.error_offset;
    agg->error_file = c.error_file.empty() ? c.path : c.error_file;
  }
  agg->rejected = agg->rejected && c.rejected;
  agg->skipped = agg->skipped && c.skipped;
  if (c.has_span) {
    agg->first_ts_ns = agg->has_span ? std::min(agg->first_ts_ns, c.first_ts_ns) : c.first_ts_ns;
    agg->last_ts_ns = agg->has_span ? std::max(agg->last_ts_ns, c.last_ts_ns) : c.last_ts_ns;
    agg->has_span = true;
  }
  agg->timeline.steps_dropped += c.timeline.steps_dropped;
  agg->timeline.bytes_pushed += c.timeline.bytes_pushed;
  agg->timeline.bytes_pulled += c.timeline.bytes_pulled;
  if (!c.timeline.tracks.empty()) agg->timeline.tracks = c.timeline.tracks;
  // A DCGM log is summarized whole by each window that reads it (it grows):
  // the latest summary is the job's.
  if (!c.timeline.gpus.empty()) agg->timeline.gpus = c.timeline.gpus;
  agg->timeline.steps_dropped += steps->Add(c.timeline.steps, c.timeline.steps_stride);
}

// TextBytes: the heap a string holds (0 within its small-string buffer).
size_t TextBytes(const std::string& t) { return t.capacity() > 15 ? t.capacity() + 1 : 0; }

size_t StringsBytes(const std::vector<std::string>& v) {
  size_t n = v.capacity() * sizeof(std::string);
  for (const std::string& t : v) n += TextBytes(t);
  return n;
}

// RecordHeldBytes: the heap an input record holds (strings, steps, tracks).
size_t RecordHeldBytes(const InputRecord& r) {
  size_t n = TextBytes(r.path) + TextBytes(r.format) + TextBytes(r.rank_source) + TextBytes(r.label) +
             TextBytes(r.output) + TextBytes(r.node) + TextBytes(r.error_file) + TextBytes(r.clock_domain) +
             TextBytes(r.clock_note) + StringsBytes(r.warnings) + StringsBytes(r.files) + r.status.message().size();
  n += r.collectives.ops.capacity() * sizeof(formats::CollectiveOp) + StringsBytes(r.collectives.keys);
  n += r.timeline.steps.capacity() * sizeof(formats::StepSpan);
  n += r.timeline.tracks.capacity() * sizeof(formats::TrackTimeline);
  for (const formats::TrackTimeline& t : r.timeline.tracks)
    n += t.steps.capacity() * sizeof(formats::StepSpan) + TextBytes(t.name) + TextBytes(t.failure);
  return n;
}

// RereadBytes: the bytes of window record `r` that an earlier window read
// already (`reread`: files read whole, unchanged since): all of them for a
// file read again, the members read again of an smdebug node's record. The
// job's input bytes count each file once.
uint64_t RereadBytes(const InputRecord& r, const std::set<std::string>& reread) {
  if (reread.count(r.path)) return r.bytes;
  uint64_t n = 0;
  struct stat st;
  for (const std::string& f : r.files)
    if (reread.count(f) && ::stat(f.c_str(), &st) == 0) n += static_cast<uint64_t>(st.st_size);
  return std::min(n, r.bytes);
}

}  // namespace

uint64_t WindowEvents(std::string_view manifest_json) {
  simdjson::dom::parser parser;
  simdjson::padded_string text(manifest_json);
  simdjson::dom::element root;
  uint64_t events = 0;
  if (parser.parse(text).get(root) || root["follow"]["events"].get(events)) return 0;
  return events;
}

void CumulativeManifest::Add(const FollowWindow& w, const RunSummary& window, uint64_t events,
                             const std::set<std::string>& reread) {
  ++windows_;
  events_ += events;
  if (w.late) {
    ++late_windows_;
    late_events_ += events;
  } else {
    latest_ = w.name;
  }
  if (window.exit_code == kExitInternal || (window.exit_code == kExitSomeRejected && exit_code_ != kExitInternal))
    exit_code_ = window.exit_code;
  if (window.gpus_per_node) gpus_per_node_ = window.gpus_per_node;
  group_by_ = window.group_by;
  cpu_only_ = window.cpu_only;
  if (window.has_span) {
    first_ts_ns_ = has_span_ ? std::min(first_ts_ns_, window.first_ts_ns) : window.first_ts_ns;
    last_ts_ns_ = has_span_ ? std::max(last_ts_ns_, window.last_ts_ns) : window.last_ts_ns;
    has_span_ = true;
  }
  for (const InputRecord& r : window.inputs) {
    std::string key = SourceKey(r);
    if (key[0] == 'b' && path_sources_ >= kMaxPathSources && !inputs_.count(key)) key = kOverflowKey;
    auto [it, fresh] = inputs_.try_emplace(key);
    Source& src = it->second;
    if (fresh && key[0] == 'b') ++path_sources_;
    const bool again = reread.count(r.path) > 0;
    const uint64_t again_bytes = RereadBytes(r, reread);
    if (fresh) {
      src.record = WithoutWindowDrops(r, again);
      src.record.bytes -= again_bytes;
      if (key == kOverflowKey)
        src.record.warnings.push_back(absl::StrCat("unranked files past the first ", kMaxPathSources,
                                                   " sources of this follow job are folded into this record"));
      src.record.timeline.steps_dropped += src.steps.Add(src.record.timeline.steps, src.record.timeline.steps_stride);
      std::vector<formats::StepSpan>().swap(src.record.timeline.steps);
    } else {
      Fold(r, again, &src.record, &src.steps);
      src.record.bytes -= again_bytes;
    }
  }
  for (const OutputRecord& o : window.outputs) {
    auto [it, fresh] = outputs_.try_emplace(o.path);
    OutputRecord& agg = it->second;
    const std::string name = o.path;
    if (fresh) agg = o;
    else {
      agg.events += o.events;
      agg.bytes += o.bytes;
      agg.metadata_added += o.metadata_added;
      for (int64_t r : o.ranks) agg.ranks.push_back(r);
      std::sort(agg.ranks.begin(), agg.ranks.end());
      agg.ranks.erase(std::unique(agg.ranks.begin(), agg.ranks.end()), agg.ranks.end());
      agg.inputs = o.inputs;
      if (!o.error.empty()) agg.error = o.error;
    }
    // The newest window's file of this output, for the report's link.
    agg.path = absl::StrCat("windows/", w.name, "/", name);
    agg.crc32 = 0;
    agg.parts = o.parts;
    for (OutputPart& p : agg.parts) p.path = absl::StrCat("windows/", w.name, "/", p.path);
  }
  for (const std::string& n : window.notices) {
    // A window may hold none of the ranks --ranks asks for: not the job's news.
    if (absl::StartsWith(n, "--ranks selects none")) continue;
    if (notices_.size() < kMaxFoldedWarnings && std::find(notices_.begin(), notices_.end(), n) == notices_.end())
      notices_.push_back(n);
  }
}

RunSummary CumulativeManifest::TakeSummary(const std::string& state, double wall_seconds, int threads) {
  RunSummary s;
  s.inputs.reserve(inputs_.size());
  for (auto& [key, src] : inputs_) {
    s.inputs.push_back(std::move(src.record));
    s.inputs.back().timeline.steps = src.steps.Steps();
    s.inputs.back().timeline.steps_stride = src.steps.stride();
  }
  for (const auto& [name, o] : outputs_) s.outputs.push_back(o);
  s.wall_seconds = wall_seconds;
  s.threads = threads;
  s.gpus_per_node = gpus_per_node_;
  s.group_by = group_by_;
  s.cpu_only = cpu_only_;
  s.command_line = opts_.command_line;
  s.has_span = has_span_;
  s.first_ts_ns = first_ts_ns_;
  s.last_ts_ns = last_ts_ns_;
  s.exit_code = exit_code_;
  s.notices = notices_;
  std::string latest;
  formats::AppendJsonString(latest_.empty() ? "" : absl::StrCat("windows/", latest_), &latest);
  std::string st;
  formats::AppendJsonString(state, &st);
  absl::StrAppend(&s.extra_members, ",\n\"follow\":{\"windows\":", windows_ - late_windows_,
                  ",\"late_windows\":", late_windows_, ",\"events\":", events_, ",\"late_events\":", late_events_,
                  ",\"window\":\"", opts_.follow->per_cycle ? "cycle" : DurationText(opts_.follow->window_ns),
                  "\",\"latest\":", latest, ",\"state\":", st, "}");
  s.extra_members += tables_member_;
  return s;
}

void CumulativeManifest::GiveBack(RunSummary* s) {
  auto it = inputs_.begin();
  for (InputRecord& r : s->inputs) {
    std::vector<formats::StepSpan>().swap(r.timeline.steps);
    (it++)->second.record = std::move(r);
  }
}

absl::Status CumulativeManifest::Write(const std::string& state, double wall_seconds, int threads) {
  // The records are lent to the summary, not copied: each refresh would
  // otherwise copy every rank's kept steps.
  RunSummary s = TakeSummary(state, wall_seconds, threads);
  absl::Status ws = WriteManifest(opts_.out_dir, s);
  GiveBack(&s);
  if (!ws.ok()) return ws;
  if (!opts_.write_report) return absl::OkStatus();
  return report::WriteReport(opts_.out_dir);
}

void CumulativeManifest::SetTables(uint64_t windows, const std::string& error) {
  tables_member_ = absl::StrCat(",\n\"tables\":{\"path\":\"tables.sqlite\",\"mode\":\"",
                                opts_.tables == TablesMode::kFull ? "full" : "summary", "\",\"windows\":", windows);
  if (!error.empty()) {
    tables_member_ += ",\"error\":";
    formats::AppendJsonString(error, &tables_member_);
  }
  tables_member_ += "}";
}

size_t CumulativeManifest::KeptBytes() const {
  size_t n = 0;
  for (const std::string& t : notices_) n += TextBytes(t);
  for (const auto& [key, src] : inputs_) n += TextBytes(key) + RecordHeldBytes(src.record) + src.steps.HeldBytes();
  for (const auto& [name, o] : outputs_) {
    n += TextBytes(name) + TextBytes(o.path) + TextBytes(o.error) + o.ranks.capacity() * sizeof(int64_t);
    n += o.inputs.capacity() * sizeof(std::string) + o.parts.capacity() * sizeof(OutputPart);
    for (const std::string& i : o.inputs) n += TextBytes(i);
    for (const OutputPart& p : o.parts) n += TextBytes(p.path);
  }
  return n;
}

}  // namespace tracemill::pipeline::follow
