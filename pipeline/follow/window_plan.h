#pragma once
// WindowPlanner: which window the follow job writes next, and when
// (FileTable -> PlannedWindow).
//
// Windows are consecutive in trace time: --window W cuts it at multiples
// of W since the epoch ([k W, (k+1) W), by event start: every event in
// exactly one window); --window cycle makes one window per profiling cycle
// (the files whose event spans overlap, as PyTorch's profiler writes one
// file per rank and cycle, with a gap of untraced steps between cycles).
//
// A window is written once every source (file_table.h) has moved past its
// end (cycle: has its file of that cycle or a later one). When some source
// has and others have not, the window waits --grace (wall time) for them,
// then is written without them; those sources are "stalled" and no longer
// waited for until they write again. A window no ready file overlaps is
// skipped, not written; so is one inside a file's span without any of its
// events: once a window has read a file, the file's next window starts at
// its earliest event start after it (NextStarts).
//
// Late data: a file that becomes ready after windows covering its events
// were written (a stalled source, a file rewritten) is not dropped: its
// events that start before the end of the last window written go to a late
// window `late-<n>` (start: none), written before the next regular one;
// its later events go to regular windows as usual.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/follow/file_table.h"
#include "pipeline/options.h"
#include "pipeline/output/manifest.h"

namespace tracemill::pipeline::follow {

// PlannedWindow: a window to write, and the files it reads (sorted).
struct PlannedWindow {
  FollowWindow window;
  std::vector<std::string> files;
  std::vector<std::string> context_files;  // ContextFiles (regular windows)
};

// WindowName: the folder name of window [start_ns, end_ns): UTC times
// `YYYYMMDDTHHMMSSZ-YYYYMMDDTHHMMSSZ`, with `.ffffff` (µs: start rounded
// down, end up) when either is not a whole second or `micros` is set.
std::string WindowName(int64_t start_ns, int64_t end_ns, bool micros);

// LateWindowName: "late-0001", ... (`n` from 1).
std::string LateWindowName(int n);

// ContextFiles: for each smdebug system-metrics series (a node's stream of
// files) among a regular window's `files`, the series' file just before
// them (still in the table, or the last one done with) and just after them
// (if it exists yet, complete or not): the window's decode reads their GPU
// samples so that a low-GPU run crossing the window's edges is cut exactly
// where a one-shot convert's slice crosses them (ConvertOptions::follow_context_files).
std::vector<std::string> ContextFiles(const std::vector<std::string>& files, const FileTable& table);

class WindowPlanner {
 public:
  explicit WindowPlanner(const FollowOptions& opts) : opts_(opts) {}

  // Next: the window to write now, if any (late windows first). `flush`:
  // the job is ending: every window with data, nobody waited for.
  std::optional<PlannedWindow> Next(FileTable& table, int64_t now_ns, bool flush);
  // Written records that `w` is on disk: its files' events up to its end
  // are covered; files with nothing left go out of the table.
  void Written(const PlannedWindow& w, FileTable& table);

  // NextStarts records, after regular window `w` was written by a convert
  // that said `s`, where each of its files' events go on (see FollowFile's
  // next_start_ns): windows with none of its events are not planned.
  void NextStarts(const PlannedWindow& w, const RunSummary& s, FileTable& table) const;

  // NextDeadline: the steady time a waiting window's grace ends, or kNoTime.
  int64_t NextDeadline() const;
  // The end of the last regular window written (kNoTime: none yet).
  int64_t written_until_ns() const { return written_until_ns_; }
  int late_windows() const { return late_windows_; }
  // Restore: the state of a resumed job (the follow journal).
  void Restore(int64_t written_until_ns, int late_windows) {
    written_until_ns_ = written_until_ns;
    late_windows_ = late_windows;
  }
  // Lines for the console (sources no longer waited for), taken.
  std::vector<std::string> TakeNotes();

 private:
  // Candidates: the next regular window [*start, *end) from the ready
  // files; false if no ready file has events left.
  bool NextSpan(FileTable& table, int64_t* start, int64_t* end) const;

  const FollowOptions& opts_;
  int64_t written_until_ns_ = kNoTime;
  int late_windows_ = 0;
  int64_t due_end_ns_ = kNoTime;  // the window waiting for lagging sources
  int64_t due_since_ns_ = 0;      // since when (steady)
  std::vector<std::string> notes_;
};

}  // namespace tracemill::pipeline::follow
