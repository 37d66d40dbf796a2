#pragma once
// WriteWindow: one planned window -> OUTDIR/windows/<name>/, a normal
// tracemill output folder (traces, manifest.json with a `follow` member,
// report.html, overview.trace.json, tables.sqlite with --tables) made by
// the convert job itself (pipeline/convert/convert.h) on the files that overlap the
// window, keeping the events that start in it.
//
// Written into `windows/.<name>.tmp.<pid>/` (registered with the interrupt
// cleanup: a second SIGINT/SIGTERM removes it) and renamed into place with
// the journal line in one section an interrupt waits for, so a window on
// disk is whole and journaled, or absent.
#include <cstdint>
#include <functional>
#include <string>

#include "pipeline/follow/window_plan.h"
#include "pipeline/options.h"
#include "pipeline/output/manifest.h"

namespace tracemill::pipeline::follow {

// WindowWrite: how writing one window went.
struct WindowWrite {
  RunSummary summary;     // the window's convert, as its manifest says
  uint64_t events = 0;    // its own events: written minus repeated metadata
  std::string error;      // non-empty: not written, and why
  // Its convert wrote no event of its own (only the inputs' repeated
  // metadata): not written, so that a resumed job, which re-plans it,
  // makes the same windows as one never stopped.
  bool empty = false;
  double seconds = 0;
};

// WindowsFolder: OUTDIR/windows.
std::string WindowsFolder(const std::string& out_dir);

// WriteWindow converts `w` with the follow job's options `opts` (its
// --group-by, --compress, --tables, ...; never clock alignment: each window
// would be aligned on its own). `renamed` runs right after the rename,
// before an interrupt may end the process (the journal line).
WindowWrite WriteWindow(const ConvertOptions& opts, const PlannedWindow& w,
                        const std::function<void(const WindowWrite&)>& renamed);

// PointLatest makes OUTDIR/latest a symlink to windows/<name> (a new link
// renamed over the old one: never missing).
void PointLatest(const std::string& out_dir, const std::string& name);

// RemoveWindowFolder removes a window folder (its files, then itself).
void RemoveWindowFolder(const std::string& dir);

// RemoveStaleWindowTemporaries removes what a killed follow job left:
// `windows/.<name>.tmp.<pid>/` folders, `.latest.tmp.<pid>` and the
// journal's temporary.
void RemoveStaleWindowTemporaries(const std::string& out_dir);

}  // namespace tracemill::pipeline::follow
