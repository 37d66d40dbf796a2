#pragma once
// CumulativeManifest: the whole follow job so far, as one manifest
// (OUTDIR/manifest.json) and report (OUTDIR/report.html), refreshed after
// every window (window manifests -> one RunSummary).
//
// Each window's convert reads a file again for every window it overlaps,
// so its records are folded per source, not added up blindly: one record
// per rank (smdebug: per node and kind; unranked inputs: per path without
// the Unix time a per-cycle file name holds, at most 4,096, the rest in
// one record), with
// the events written in every window summed and the drops summed except
// `window` (what one window leaves to the next is written there). Steps
// are merged by number and the last 4,096 kept per record, so the report
// shows the latest part of a long job and the work per refresh stays
// bounded however long it runs. Outputs are summed per name and link the
// newest window's file. The `follow` member says how many windows, late
// windows and events, and whether the job is still being followed.
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "pipeline/follow/step_history.h"
#include "pipeline/options.h"
#include "pipeline/output/manifest.h"

namespace tracemill::pipeline::follow {

// WindowEvents: a window's own events from its manifest's `follow` member
// (events written minus the metadata every window repeats); 0 if absent.
uint64_t WindowEvents(std::string_view manifest_json);

class CumulativeManifest {
 public:
  explicit CumulativeManifest(const ConvertOptions& opts) : opts_(opts) {}

  // Add folds in window `w`'s manifest, whose own events are `events`.
  // `reread`: the files (paths) an earlier window read already, unchanged:
  // each window reads a file whole, so their lost events (bad timestamps,
  // truncation) and their error were counted then, and are not again.
  void Add(const FollowWindow& w, const RunSummary& window, uint64_t events,
           const std::set<std::string>& reread = {});

  // Write writes OUTDIR/manifest.json and, unless --no-report,
  // OUTDIR/report.html; `state` says where the job is ("following",
  // "stopped: ...").
  absl::Status Write(const std::string& state, double wall_seconds, int threads);

  // SetTables: what OUTDIR/tables.sqlite holds (--tables): the windows
  // appended, or why appending failed; the manifest's `tables` member.
  void SetTables(uint64_t windows, const std::string& error);

  // KeptBytes: the heap bytes the folded records hold (strings, steps,
  // ranks, warnings; not the fixed part of each record). Bounded however
  // many windows are added, as long as the ranks and smdebug nodes are
  // (unranked sources are at most 4,096): what the regression test
  // watches.
  size_t KeptBytes() const;

  uint64_t windows() const { return windows_; }
  uint64_t late_windows() const { return late_windows_; }
  uint64_t events() const { return events_; }
  uint64_t late_events() const { return late_events_; }
  // The worst exit status of a window: 1, else 3, else 0.
  int exit_code() const { return exit_code_; }
  const std::string& latest() const { return latest_; }

 private:
  // TakeSummary moves the folded records into a RunSummary for writing;
  // GiveBack moves them back.
  RunSummary TakeSummary(const std::string& state, double wall_seconds, int threads);
  void GiveBack(RunSummary* s);

  // Source: one source's folded record (its timeline.steps empty) and its
  // kept steps.
  struct Source {
    InputRecord record;
    StepHistory steps;
  };

  const ConvertOptions& opts_;
  std::map<std::string, Source> inputs_;         // by source key
  std::map<std::string, OutputRecord> outputs_;  // by output name
  std::vector<std::string> notices_;
  size_t path_sources_ = 0;  // unranked sources (keys "b|...")
  uint64_t windows_ = 0, late_windows_ = 0, events_ = 0, late_events_ = 0;
  int exit_code_ = 0;
  int gpus_per_node_ = 0;
  std::string group_by_;
  bool cpu_only_ = false;
  std::string latest_;
  std::string tables_member_;  // ",\n\"tables\":{...}" or empty
  bool has_span_ = false;
  int64_t first_ts_ns_ = 0, last_ts_ns_ = 0;
};

}  // namespace tracemill::pipeline::follow
