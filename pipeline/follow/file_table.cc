#include "pipeline/follow/file_table.h"

#include <sys/stat.h>

#include <algorithm>
#include <string_view>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "formats/chrome/output_file.h"
#include "formats/common/read_file.h"
#include "formats/smdebug/smdebug_layout.h"
#include "pipeline/follow/duration.h"
#include "pipeline/inputs/smdebug_inputs.h"

namespace tracemill::pipeline::follow {
namespace {

using formats::SmdebugFileKind;

// A file is probed once it has been this long without a change: a writer's
// successive writes then cost one decode, not one each.
constexpr int64_t kQuietNs = 200'000'000;

// The end marker smdebug leaves in `framework/` and `system/`.
constexpr std::string_view kJobEndMarker = "training_job_end.ts";

int64_t MtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

std::string_view BaseNameOf(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// DonePathKey: what FileTable::done_ keys a file done with by.
uint64_t DonePathKey(std::string_view path) { return absl::Hash<std::string_view>{}(path); }

// InSmdebugFolder: `path` lies under a `<folder>/` of an smdebug job.
bool InSmdebugFolder(std::string_view path, std::string_view folder) {
  const std::string rel = std::string(folder) + "/";
  return path.find("/" + rel) != std::string_view::npos || path.rfind(rel, 0) == 0;
}

}  // namespace

FileTable::FileTable(const ConvertOptions& opts, const RankMatcher& ranks, std::pair<dev_t, ino_t> out_dir_id,
                     uint64_t max_inflated_bytes)
    : opts_(opts), ranks_(ranks), out_dir_id_(out_dir_id), max_inflated_bytes_(max_inflated_bytes) {}

bool FileTable::Scan(const Watcher::Change& change, Watcher* watcher, int64_t now_ns) {
  const int64_t before = last_activity_ns_;
  std::set<std::pair<dev_t, ino_t>> seen;
  if (change.full_scan) {
    for (auto& [path, f] : files_) f.in_scan = false;
    for (const std::string& root : opts_.inputs) {
      struct stat st;
      if (::stat(root.c_str(), &st) != 0) continue;  // not there yet
      if (S_ISDIR(st.st_mode)) Walk(root, &seen, watcher, now_ns);
      else if (S_ISREG(st.st_mode)) Observe(root, st, now_ns);
    }
    std::vector<std::string> gone;
    for (auto& [path, f] : files_)
      if (!f.in_scan) gone.push_back(path);
    for (const std::string& path : gone) Vanished(path, now_ns);
    return last_activity_ns_ != before;
  }
  for (const std::string& dir : change.folders) Walk(dir, &seen, watcher, now_ns);
  for (const std::string& path : change.files) {
    // Only the inputs: a root file's folder has other files too.
    const bool wanted = std::any_of(opts_.inputs.begin(), opts_.inputs.end(), [&](const std::string& root) {
      return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                              (root.back() == '/' || path[root.size()] == '/'));
    });
    if (!wanted || formats::IsTemporaryName(BaseNameOf(path))) continue;
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) Observe(path, st, now_ns);
    else if (::stat(path.c_str(), &st) != 0) Vanished(path, now_ns);
  }
  return last_activity_ns_ != before;
}

void FileTable::Walk(const std::string& dir, std::set<std::pair<dev_t, ino_t>>* seen, Watcher* watcher,
                     int64_t now_ns) {
  struct stat dst;
  if (::stat(dir.c_str(), &dst) != 0 || !S_ISDIR(dst.st_mode)) return;
  if (std::pair(dst.st_dev, dst.st_ino) == out_dir_id_) return;  // OUTDIR is never read
  if (!seen->insert({dst.st_dev, dst.st_ino}).second) return;    // a loop, or named twice
  if (watcher) watcher->AddFolder(dir);  // before the listing: nothing created after it is missed
  // A folder unchanged since the last listing has no new or removed names:
  // the files done with in it need no stat.
  int64_t& known_mtime = dir_mtime_[dir];
  const bool unchanged = known_mtime == MtimeNs(dst);
  known_mtime = MtimeNs(dst);
  const std::optional<std::vector<std::string>> names = formats::ListFolder(dir);
  if (!names) return;
  const std::string prefix = dir.back() == '/' ? dir : dir + "/";
  for (const std::string& n : *names) {
    if (formats::IsTemporaryName(n)) continue;  // our own
    const std::string path = prefix + n;
    if (unchanged && done_.contains(DonePathKey(path))) continue;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) Walk(path, seen, watcher, now_ns);
    else if (S_ISREG(st.st_mode)) Observe(path, st, now_ns);
  }
}

void FileTable::Observe(const std::string& path, const struct stat& st, int64_t now_ns) {
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const int64_t mtime = MtimeNs(st);
  bool rewrite = false;
  if (auto d = done_.find(DonePathKey(path)); d != done_.end()) {
    if (d->second == std::pair(size, mtime)) return;
    done_.erase(d);  // every event of it was written: a change is a rewrite
    rewrite = true;
  }
  auto [it, fresh] = files_.try_emplace(path);
  FollowFile& f = it->second;
  f.in_scan = true;
  if (!fresh && f.size == size && f.mtime_ns == mtime) return;
  if (fresh) {
    f.path = path;
    Classify(&f);
  } else if (f.covered_until_ns != kNoTime) {
    rewrite = true;
  }
  if (rewrite) {
    // Windows read an earlier content: what it holds before the windows
    // written so far goes to a late window (follow/window_plan.h).
    f.rewritten = true;
    f.covered_until_ns = kNoTime;
    notes_.push_back(absl::StrCat(path, ": changed after a window read it; its events before the last window "
                                        "written go to a late window (events read twice are counted twice)"));
  }
  if (f.stage == FileStage::kReady) f.stage = FileStage::kWaiting;
  if (f.stage == FileStage::kIgnored && f.smdebug_kind != static_cast<int>(SmdebugFileKind::kInProgress) &&
      f.smdebug_kind != static_cast<int>(SmdebugFileKind::kMetadataMarker) && BaseNameOf(path) != kJobEndMarker &&
      !(f.smdebug_kind == static_cast<int>(SmdebugFileKind::kSystemMetrics) && opts_.no_system_metrics))
    f.stage = FileStage::kWaiting;  // not a trace before; it changed, so look again
  f.size = size;
  f.mtime_ns = mtime;
  f.probed = false;
  f.changed_at_ns = now_ns;
  // Where its events go on was read from the old content (window_plan.h).
  f.next_start_ns = f.next_start_after_ns = kNoTime;
  last_activity_ns_ = now_ns;
}

void FileTable::Classify(FollowFile* f) {
  const std::string_view base = BaseNameOf(f->path);
  if (base == kJobEndMarker) {
    f->stage = FileStage::kIgnored;
    for (std::string_view folder : {"framework", "system"}) {
      if (!InSmdebugFolder(f->path, folder)) continue;
      SmdebugRoot& root = roots_[SmdebugJobRoot(f->path, folder)];
      (folder == "framework" ? root.framework_end : root.system_end) = true;
      notes_.push_back(absl::StrCat("job end marker: ", f->path));
    }
    return;
  }
  const formats::SmdebugPath p = formats::ClassifySmdebugPath(f->path);
  f->smdebug_kind = static_cast<int>(p.kind);
  switch (p.kind) {
    case SmdebugFileKind::kInProgress:
    case SmdebugFileKind::kFramework: {
      const std::string root = SmdebugJobRoot(f->path, "framework");
      roots_[root].framework = true;
      if (!p.node.empty()) f->source = absl::StrCat("smdebug framework ", root, " node ", p.node);
      if (p.kind == SmdebugFileKind::kInProgress) {
        f->stage = FileStage::kIgnored;  // never read: smdebug renames it when complete
        f->probe.note = "still being written (*.tmp)";
      } else {
        f->name_time_ns = p.time_us * 1000;  // the file's end
        f->hint_ns = f->name_time_ns;
      }
      break;
    }
    case SmdebugFileKind::kSystemMetrics: {
      const std::string root = SmdebugJobRoot(f->path, "system");
      roots_[root].system = true;
      if (opts_.no_system_metrics) {
        f->stage = FileStage::kIgnored;
        break;
      }
      f->source = absl::StrCat("smdebug system ", root, " node ", p.node);
      f->series = absl::StrCat(root, " ", p.node);
      f->name_time_ns = p.time_us * 1000;  // the file's start
      series_[f->series].insert(f->name_time_ns);
      break;
    }
    case SmdebugFileKind::kMetadataMarker:
      f->stage = FileStage::kIgnored;
      break;
    default:
      break;
  }
  // A source is waited for from its first file, complete or not.
  if (!f->source.empty()) AddSource(f->source, f->changed_at_ns);
}

void FileTable::AddSource(const std::string& key, int64_t now_ns) {
  auto [it, fresh] = sources_.try_emplace(key);
  if (fresh) it->second.advanced_at_ns = now_ns;
}

void FileTable::Vanished(const std::string& path, int64_t now_ns) {
  auto it = files_.find(path);
  if (it == files_.end()) {
    done_.erase(DonePathKey(path));
    return;
  }
  FollowFile& f = it->second;
  if (f.stage == FileStage::kReady && f.has_events() && f.covered_until_ns != kNoTime &&
      f.covered_until_ns <= f.max_ns())
    notes_.push_back(absl::StrCat(path, ": removed before every window of it was written; its events from ",
                                  f.covered_until_ns, " ns on are not converted"));
  if (!f.series.empty()) series_[f.series].erase(f.name_time_ns);
  files_.erase(it);
  last_activity_ns_ = now_ns;
}

bool FileTable::NewerInSeries(const FollowFile& f, int64_t* next_start_ns) const {
  auto s = series_.find(f.series);
  if (s == series_.end()) return false;
  auto next = s->second.upper_bound(f.name_time_ns);
  if (next == s->second.end()) return false;
  *next_start_ns = *next;
  return true;
}

bool FileTable::Unchanged(FollowFile* f, int64_t now_ns) {
  struct stat st;
  if (::stat(f->path.c_str(), &st) != 0) return false;  // the next scan says it is gone
  if (static_cast<uint64_t>(st.st_size) == f->size && MtimeNs(st) == f->mtime_ns) return true;
  f->size = static_cast<uint64_t>(st.st_size);
  f->mtime_ns = MtimeNs(st);
  f->changed_at_ns = now_ns;
  f->probed = false;
  last_activity_ns_ = now_ns;
  return false;
}

void FileTable::Probe(FollowFile* f) {
  f->probe = ProbeFile(f->path, opts_, ranks_, max_inflated_bytes_);
  f->probed = true;
  // Non-smdebug traces: the rank is the source, and the world size names
  // the ranks still to come, so the first windows wait for them too.
  if (f->smdebug_kind == static_cast<int>(SmdebugFileKind::kNone) && f->probe.rank) {
    f->source = absl::StrCat("rank ", *f->probe.rank);
    if (!sources_.count(f->source)) AddSource(f->source, f->changed_at_ns);
    if (f->probe.world_size)
      for (int64_t r = 0; r < std::min<int64_t>(*f->probe.world_size, 1 << 16); ++r) {
        const std::string key = absl::StrCat("rank ", r);
        if (!sources_.count(key)) AddSource(key, f->changed_at_ns);
      }
  }
}

void FileTable::Settle(int64_t now_ns, bool flush) {
  std::vector<std::string> done_now;
  for (auto& [path, f] : files_) {
    if (f.stage != FileStage::kWaiting) continue;
    const bool grace_over = now_ns - f.changed_at_ns >= opts_.follow->grace_ns;
    int64_t next_start = kNoTime;
    if (f.smdebug_kind == static_cast<int>(SmdebugFileKind::kSystemMetrics)) {
      // Appended while its minute runs: read once a later file exists.
      if (!flush && !NewerInSeries(f, &next_start) && !grace_over) continue;
    } else if (!flush && now_ns - f.changed_at_ns < kQuietNs) {
      continue;
    }
    if (!f.probed) {
      if (!flush && !Unchanged(&f, now_ns)) continue;
      Probe(&f);
      if (!flush && !Unchanged(&f, now_ns)) continue;  // written while probed: look again
    }
    if (f.probe.result == FileProbe::Result::kComplete) {
      if (next_start != kNoTime) f.hint_ns = next_start;  // its events start before the next file
      MakeReady(&f, now_ns);
    } else if (flush || grace_over) {
      if (f.probe.result == FileProbe::Result::kIncomplete) {
        notes_.push_back(absl::StrCat(path, ": taken as it is (", flush ? "the job ended" : "unchanged for --grace",
                                      "): ", f.probe.note));
        MakeReady(&f, now_ns);
      } else {
        f.stage = FileStage::kIgnored;
        if (f.size > 0) notes_.push_back(absl::StrCat(path, ": ignored, not a trace (", f.probe.note, ")"));
      }
    }
    if (f.stage == FileStage::kReady && !f.has_events() && f.covered_until_ns == kNoTime) done_now.push_back(path);
  }
  for (const std::string& path : done_now) Done(path);
}

void FileTable::MakeReady(FollowFile* f, int64_t now_ns) {
  f->stage = FileStage::kReady;
  if (f->source.empty()) return;
  Source& s = sources_[f->source];
  const int64_t reached = std::max(f->has_events() ? f->max_ns() : kNoTime, f->hint_ns);
  if (reached > s.progress_ns) {
    s.progress_ns = reached;
    s.advanced_at_ns = now_ns;
    if (s.stalled) {
      s.stalled = false;
      notes_.push_back(absl::StrCat(f->source, " writes again: windows wait for it again"));
    }
  }
}

int64_t FileTable::NextDeadline() const {
  int64_t next = kNoTime;
  auto consider = [&](int64_t t) {
    if (next == kNoTime || t < next) next = t;
  };
  for (const auto& [path, f] : files_) {
    if (f.stage != FileStage::kWaiting) continue;
    if (f.smdebug_kind != static_cast<int>(SmdebugFileKind::kSystemMetrics) && !f.probed)
      consider(f.changed_at_ns + kQuietNs);
    consider(f.changed_at_ns + opts_.follow->grace_ns);
  }
  return next;
}

bool FileTable::JobEnded() const {
  if (roots_.empty()) return false;
  for (const auto& [root, r] : roots_) {
    if (!r.framework_end && !r.system_end) return false;
    if ((r.framework && !r.framework_end) || (r.system && !r.system_end)) return false;
  }
  return true;
}

void FileTable::Done(const std::string& path) {
  auto it = files_.find(path);
  if (it == files_.end()) return;
  done_[DonePathKey(path)] = {it->second.size, it->second.mtime_ns};
  if (!it->second.series.empty()) {
    series_[it->second.series].erase(it->second.name_time_ns);
    auto [last, fresh] = last_done_in_series_.try_emplace(it->second.series, it->second.name_time_ns, path);
    if (!fresh && it->second.name_time_ns >= last->second.first) last->second = {it->second.name_time_ns, path};
  }
  files_.erase(it);
}

const std::string* FileTable::LastDoneInSeries(const std::string& series, int64_t* name_time_ns) const {
  auto it = last_done_in_series_.find(series);
  if (it == last_done_in_series_.end()) return nullptr;
  *name_time_ns = it->second.first;
  return &it->second.second;
}

void FileTable::Restore(FollowFile f, bool done, int64_t now_ns) {
  FollowFile known = std::move(f);
  FollowFile classified;  // what its name says (series, smdebug job folder)
  classified.path = known.path;
  classified.changed_at_ns = now_ns;
  Classify(&classified);
  known.series = classified.series;
  known.smdebug_kind = classified.smdebug_kind;
  known.name_time_ns = classified.name_time_ns;
  known.stage = FileStage::kReady;
  known.probed = true;
  known.probe.result = FileProbe::Result::kComplete;
  known.changed_at_ns = now_ns;
  if (!known.source.empty()) {
    AddSource(known.source, now_ns);
    Source& s = sources_[known.source];
    s.progress_ns = std::max(s.progress_ns, std::max(known.has_events() ? known.max_ns() : kNoTime, known.hint_ns));
  }
  const std::string path = known.path;
  files_[path] = std::move(known);
  if (done) Done(path);
}

std::vector<std::string> FileTable::TakeNotes() {
  std::vector<std::string> out;
  out.swap(notes_);
  return out;
}

}  // namespace tracemill::pipeline::follow
