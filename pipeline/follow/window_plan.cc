#include "pipeline/follow/window_plan.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "analysis/tables_text.h"
#include "pipeline/follow/duration.h"

namespace tracemill::pipeline::follow {
namespace {

constexpr int64_t kNsPerSecond = 1'000'000'000;

// UtcText: `ns` as YYYYMMDDTHHMMSS[.ffffff]Z (analysis::FormatIsoTime without its
// separators); `round_up`: to the next µs.
std::string UtcText(int64_t ns, bool micros, bool round_up) {
  if (round_up && ns % 1000 != 0) ns = (analysis::FloorDiv(ns, 1000) + 1) * 1000;
  char iso[48];
  const int n = analysis::FormatIsoTime(ns, iso);  // 2020-06-03T05:04:59.457089Z
  std::string out;
  for (int i = 0; i < n; ++i) {
    if (iso[i] == '-' || iso[i] == ':') continue;
    if (iso[i] == '.' && !micros) {
      while (i + 1 < n && iso[i + 1] != 'Z') ++i;
      continue;
    }
    out.push_back(iso[i]);
  }
  return out;
}

}  // namespace

std::string WindowName(int64_t start_ns, int64_t end_ns, bool micros) {
  micros = micros || start_ns % kNsPerSecond != 0 || end_ns % kNsPerSecond != 0;
  return absl::StrCat(UtcText(start_ns, micros, false), "-", UtcText(end_ns, micros, true));
}

std::string LateWindowName(int n) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "late-%04d", n);
  return buf;
}

bool WindowPlanner::NextSpan(FileTable& table, int64_t* start, int64_t* end) const {
  // Ready files with events not covered yet, by their first such start.
  struct Span {
    int64_t lo, hi;
  };
  std::vector<Span> spans;
  for (const auto& [path, f] : table.files()) {
    if (f.stage != FileStage::kReady || !f.has_events()) continue;
    if (written_until_ns_ != kNoTime && f.max_ns() < written_until_ns_) continue;
    int64_t lo = written_until_ns_ == kNoTime ? f.min_ns() : std::max(f.min_ns(), written_until_ns_);
    if (f.next_start_after_ns != kNoTime && f.next_start_after_ns == f.covered_until_ns && !f.rewritten) {
      if (f.next_start_ns == INT64_MAX) continue;  // nothing of it left for later windows
      lo = std::max(lo, f.next_start_ns);
    }
    spans.push_back({lo, f.max_ns()});
  }
  if (spans.empty()) return false;
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.lo < b.lo; });
  if (!opts_.per_cycle) {
    *start = analysis::FloorDiv(spans[0].lo, opts_.window_ns) * opts_.window_ns;
    if (written_until_ns_ != kNoTime) *start = std::max(*start, written_until_ns_);
    *end = *start + opts_.window_ns;
    return true;
  }
  // A cycle: the spans that overlap the first one, transitively.
  int64_t hi = spans[0].hi;
  for (const Span& s : spans) {
    if (s.lo > hi) break;
    hi = std::max(hi, s.hi);
  }
  *start = spans[0].lo;
  *end = hi + 1;
  return true;
}

std::optional<PlannedWindow> WindowPlanner::Next(FileTable& table, int64_t now_ns, bool flush) {
  // 1. Late files: ready, with events before the windows written, not covered.
  if (written_until_ns_ != kNoTime) {
    PlannedWindow late;
    for (const auto& [path, f] : table.files())
      if (f.stage == FileStage::kReady && f.has_events() && f.covered_until_ns == kNoTime &&
          f.min_ns() < written_until_ns_)
        late.files.push_back(path);
    if (!late.files.empty()) {
      late.window = FollowWindow{LateWindowName(late_windows_ + 1), kNoTime, written_until_ns_, true};
      return late;
    }
  }
  // 2. The next regular window, once its sources are past it.
  int64_t start = 0, end = 0;
  if (!NextSpan(table, &start, &end)) return std::nullopt;
  // Time windows: every source past the end; a cycle: every source has its
  // file of the cycle (or a later one).
  const int64_t must_reach = opts_.per_cycle ? start : end;
  if (!flush) {
    std::vector<std::string> behind;
    bool someone_past = false;
    for (const auto& [key, s] : table.sources()) {
      if (s.progress_ns != kNoTime && s.progress_ns >= must_reach) someone_past = true;
      else if (!s.stalled) behind.push_back(key);
    }
    if (!behind.empty()) {
      if (!someone_past) return std::nullopt;
      if (due_end_ns_ != end) {
        due_end_ns_ = end;
        due_since_ns_ = now_ns;
      }
      if (now_ns - due_since_ns_ < opts_.grace_ns) return std::nullopt;
      // Waited --grace: write it without them, and stop waiting for them.
      for (const std::string& key : behind) {
        table.sources()[key].stalled = true;
        notes_.push_back(absl::StrCat(key, " is behind by --grace ", DurationText(opts_.grace_ns),
                                      ": windows no longer wait for it (what it writes later goes to a late window)"));
      }
    }
  }
  PlannedWindow w;
  w.window = FollowWindow{WindowName(start, end, opts_.per_cycle), start, end, false};
  for (const auto& [path, f] : table.files())
    if (f.stage == FileStage::kReady && f.has_events() && f.min_ns() < end && f.max_ns() >= start)
      w.files.push_back(path);
  w.context_files = ContextFiles(w.files, table);
  return w;
}

std::vector<std::string> ContextFiles(const std::vector<std::string>& files, const FileTable& table) {
  // Per series of the window: its files' first and last name start, and
  // the nearest files before and after them (name start, path).
  struct Around {
    int64_t first = INT64_MAX, last = INT64_MIN;
    std::pair<int64_t, const std::string*> before{INT64_MIN, nullptr}, after{INT64_MAX, nullptr};
  };
  std::map<std::string, Around> series;
  const std::set<std::string> own(files.begin(), files.end());
  const auto& all = table.files();
  for (const std::string& path : files) {
    const FollowFile& f = all.at(path);
    if (f.series.empty() || f.name_time_ns == kNoTime) continue;
    Around& a = series[f.series];
    a.first = std::min(a.first, f.name_time_ns);
    a.last = std::max(a.last, f.name_time_ns);
  }
  if (series.empty()) return {};
  for (const auto& [path, f] : all) {
    auto it = series.find(f.series);
    if (it == series.end() || own.count(path) || f.name_time_ns == kNoTime) continue;
    Around& a = it->second;
    if (f.name_time_ns < a.first && f.name_time_ns > a.before.first) a.before = {f.name_time_ns, &path};
    if (f.name_time_ns > a.last && f.name_time_ns < a.after.first) a.after = {f.name_time_ns, &path};
  }
  std::vector<std::string> out;
  for (auto& [name, a] : series) {
    int64_t done_time = kNoTime;
    if (const std::string* done = table.LastDoneInSeries(name, &done_time);
        done && done_time < a.first && done_time > a.before.first)
      a.before = {done_time, done};
    if (a.before.second) out.push_back(*a.before.second);
    if (a.after.second) out.push_back(*a.after.second);
  }
  return out;
}

void WindowPlanner::Written(const PlannedWindow& w, FileTable& table) {
  const int64_t until = w.window.late ? written_until_ns_ : w.window.end_ns;
  std::vector<std::string> done;
  for (const std::string& path : w.files) {
    auto it = table.files().find(path);
    if (it == table.files().end()) continue;
    FollowFile& f = it->second;
    f.covered_until_ns = until;
    f.rewritten = false;
    f.next_start_ns = f.next_start_after_ns = kNoTime;  // NextStarts sets them after a regular window
    if (f.max_ns() < until) done.push_back(path);
  }
  for (const std::string& path : done) table.Done(path);
  if (w.window.late) {
    ++late_windows_;
  } else {
    written_until_ns_ = w.window.end_ns;
    due_end_ns_ = kNoTime;
  }
}

void WindowPlanner::NextStarts(const PlannedWindow& w, const RunSummary& s, FileTable& table) const {
  if (w.window.late) return;
  for (const InputRecord& r : s.inputs) {
    auto it = table.files().find(r.path);
    if (it == table.files().end() || it->second.covered_until_ns != w.window.end_ns) continue;
    it->second.next_start_ns = r.window_next_start_ns;
    it->second.next_start_after_ns = w.window.end_ns;
  }
}

int64_t WindowPlanner::NextDeadline() const {
  return due_end_ns_ == kNoTime ? kNoTime : due_since_ns_ + opts_.grace_ns;
}

std::vector<std::string> WindowPlanner::TakeNotes() {
  std::vector<std::string> out;
  out.swap(notes_);
  return out;
}

}  // namespace tracemill::pipeline::follow
