#pragma once
// FileTable: every file under the followed folders, what is known of it,
// and the sources that write them (the follow job's memory of the inputs).
//
// Readiness, per file (never read half-way):
// - smdebug's `*.tmp` names are never read (a framework file is complete
//   once smdebug renames it); `training_job_end.ts` in `framework/` and
//   `system/` is the job's end; `.metadata` markers are names, not data.
// - An smdebug system-metrics file (one per node and minute, appended while
//   its minute runs) is read once a later file of the same node exists.
// - Any other file is probed (follow/probe.h) once it has been quiet for a
//   moment: complete, it is ready; a decode error (JSON cut short, a gzip
//   member without its trailer) means still being written: probed again
//   when it changes.
// - A file that stays unfinished (or not a trace) and unchanged for
//   --grace, or when the job ends, is taken as it is: convert reads what it
//   can and reports the damage; a file no format recognizes is ignored.
//
// Sources: what must move past a window's end before the window is written.
// An smdebug node's framework files and its system metrics are two sources
// (known from their names, even before a file is complete); any other
// trace's rank is one (its world size names the ranks still to come).
// A source's progress is the time before which all its events are in ready
// files: its ready files' latest start, an smdebug framework file's end
// time (its name), the start of a node's newest system-metrics file.
//
// Memory: one entry per file still needed by a window (a few hundred
// bytes), and, for files done with, a 64-bit hash of the path and the
// signature (size, mtime): 25-55 bytes each as the table doubles (a path in
// a node took ~200, the only state of a long job that still grew with each
// window once the cumulative manifest's steps were full).
#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "pipeline/follow/probe.h"
#include "pipeline/follow/watcher.h"
#include "pipeline/inputs/rank_name.h"
#include "pipeline/options.h"

namespace tracemill::pipeline::follow {

inline constexpr int64_t kNoTime = std::numeric_limits<int64_t>::min();

enum class FileStage {
  kWaiting,  // not read yet: being written, or not known to be complete
  kReady,    // complete (or taken as it is): windows read it
  kIgnored,  // never read: not a trace, an smdebug `.tmp`, a marker
};

// FollowFile: one file the follow job knows.
struct FollowFile {
  std::string path;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  FileStage stage = FileStage::kWaiting;
  bool probed = false;             // `probe` is of this size and mtime
  FileProbe probe;
  std::string source;              // the source it belongs to; empty: none (never waited for)
  int smdebug_kind = 0;            // formats::SmdebugFileKind from its name
  std::string series;              // smdebug system metrics: "<root> <node>"
  int64_t name_time_ns = kNoTime;  // smdebug: framework file's end, system file's start (from the name)
  int64_t hint_ns = kNoTime;       // progress its source has made once it is ready (beyond its events)
  int64_t changed_at_ns = 0;       // steady time of the last change seen
  // Its events that start before this are in written windows (kNoTime: none).
  int64_t covered_until_ns = kNoTime;
  bool rewritten = false;          // changed after a window had read it
  // The earliest event start at or after `next_start_after_ns` (the end of
  // the last window that read it), INT64_MAX if none: the next window with
  // its events starts there, so a file whose span crosses years of nothing
  // (a counter at ts 0 beside events of today) does not make a window per
  // minute of them. kNoTime: not known.
  int64_t next_start_ns = kNoTime;
  int64_t next_start_after_ns = kNoTime;
  bool in_scan = false;            // seen by the current full scan

  bool has_events() const { return probe.has_events; }
  int64_t min_ns() const { return probe.min_start_ns; }
  int64_t max_ns() const { return probe.max_start_ns; }
};

// Source: a writer whose progress windows wait for.
struct Source {
  int64_t progress_ns = kNoTime;  // every event it writes before this is in ready files
  bool stalled = false;           // left behind for --grace: windows no longer wait for it
  int64_t advanced_at_ns = 0;     // steady time its progress last moved
};

class FileTable {
 public:
  // `opts`: the follow job's options (decode options for probes, the OUTDIR
  // never read, --grace); `out_dir_id`: OUTDIR's (device, inode).
  FileTable(const ConvertOptions& opts, const RankMatcher& ranks, std::pair<dev_t, ino_t> out_dir_id,
            uint64_t max_inflated_bytes);

  // Scan lists the input folders (all of them on a full scan, else what the
  // watcher named) and records what changed. New folders are given to
  // `watcher` to watch. Returns true if anything changed.
  bool Scan(const Watcher::Change& change, Watcher* watcher, int64_t now_ns);

  // Settle probes the files due for it and decides which are ready (see
  // the file comment); `flush`: the job is ending, take everything as it is.
  void Settle(int64_t now_ns, bool flush);

  // NextDeadline: the steady time at which Settle has something to do
  // without a change (a quiet file to probe, a file's grace ending), or
  // kNoTime.
  int64_t NextDeadline() const;

  // JobEnded: every smdebug job folder followed has its end markers
  // (`training_job_end.ts` in `framework/` and in `system/`, for each of the
  // two it has).
  bool JobEnded() const;
  // The number of files done with (every event in written windows).
  size_t done_files() const { return done_.size(); }
  // Steady time of the last change seen (new data or a file written).
  int64_t last_activity_ns() const { return last_activity_ns_; }

  // The files not done with, by path; and the sources.
  std::map<std::string, FollowFile>& files() { return files_; }
  const std::map<std::string, FollowFile>& files() const { return files_; }
  std::map<std::string, Source>& sources() { return sources_; }

  // Done moves a file whose every event is in written windows out of the
  // table (its signature stays: a later change is a rewrite).
  void Done(const std::string& path);
  // LastDoneInSeries: the path of the latest file (by its name's start)
  // of an smdebug system-metrics `series` done with, or null (a window's
  // context file before its own: window_plan.h).
  const std::string* LastDoneInSeries(const std::string& series, int64_t* name_time_ns) const;
  // Restore re-enters a file from the follow journal (--resume): ready as
  // `f` says (the next scan finds out whether it changed since), or, with
  // `done`, done with; either way its source's progress counts it.
  void Restore(FollowFile f, bool done, int64_t now_ns);

  // Lines for the console (new sources, ignored files, rewrites), taken.
  std::vector<std::string> TakeNotes();

 private:
  void Walk(const std::string& dir, std::set<std::pair<dev_t, ino_t>>* seen, Watcher* watcher, int64_t now_ns);
  // Observe: `path` exists with `st`; Vanished: it does not any more.
  void Observe(const std::string& path, const struct stat& st, int64_t now_ns);
  void Vanished(const std::string& path, int64_t now_ns);
  void Classify(FollowFile* f);
  void Probe(FollowFile* f);
  void MakeReady(FollowFile* f, int64_t now_ns);
  void AddSource(const std::string& key, int64_t now_ns);
  bool NewerInSeries(const FollowFile& f, int64_t* next_start_ns) const;
  bool Unchanged(FollowFile* f, int64_t now_ns);

  const ConvertOptions& opts_;
  const RankMatcher& ranks_;
  const std::pair<dev_t, ino_t> out_dir_id_;
  const uint64_t max_inflated_bytes_;
  std::map<std::string, FollowFile> files_;
  // Files done with: a 64-bit hash of the path -> (size, mtime_ns). Two
  // paths of one hash (odds ~n^2 / 2^65 for n files) would make a new file
  // look like a rewrite of a done one (its events go to a late window), or,
  // with the same size and mtime too, done.
  absl::flat_hash_map<uint64_t, std::pair<uint64_t, int64_t>> done_;
  std::map<std::string, Source> sources_;
  // smdebug system metrics: per series, the start times of its files; and
  // the latest file done with (name start, path): one per series.
  std::map<std::string, std::set<int64_t>> series_;
  std::map<std::string, std::pair<int64_t, std::string>> last_done_in_series_;
  // smdebug job folders: (has framework/, has system/, framework ended, system ended).
  struct SmdebugRoot {
    bool framework = false, system = false, framework_end = false, system_end = false;
  };
  std::map<std::string, SmdebugRoot> roots_;
  std::unordered_map<std::string, int64_t> dir_mtime_;  // full scans: folders unchanged since
  int64_t last_activity_ns_ = 0;
  std::vector<std::string> notes_;
};

}  // namespace tracemill::pipeline::follow
