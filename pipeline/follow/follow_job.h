#pragma once
// `tracemill convert --follow`: convert a job's profiler folders while the
// job writes them, window by window, until it ends. The loop:
//
//   watch     watcher.h        inotify, or polling (network file systems, --poll)
//   scan      file_table.h     what changed; which files are complete; sources
//   plan      window_plan.h    the next window whose sources are past it (or
//                              whose --grace is over); late windows
//   write     window_writer.h  the convert job on the files overlapping it ->
//                              OUTDIR/windows/<start>-<end>/, OUTDIR/latest
//   journal   follow_journal.h one line per window (--resume)
//   tables    job_tables.h     --tables: the window's rows appended to OUTDIR/tables.sqlite
//   report    cumulative.h     OUTDIR/manifest.json and report.html, the whole job
//
// Stops on smdebug's end markers, after --idle-timeout without new data
// (then every window left is written), or on SIGINT/SIGTERM (the window in
// progress is finished; a second signal discards it; exit 130/143).
// Memory: one window's convert at a time within --memory-limit, plus the
// file table and the cumulative manifest (bounded: 4,096 steps per rank);
// per window, only the files that overlap it are read, and after it the
// heap's free pages are given back.
#include "pipeline/options.h"
#include "pipeline/output/manifest.h"

namespace tracemill::pipeline {

// RunFollow runs a follow job (`opts.follow` set) and returns its summary:
// `exit_code` 0, 3 (some window had damaged inputs), 1 (a window could not
// be written), 2 (usage), or 128 + the signal that stopped it. Says its
// lines on stderr (one per window unless `opts.quiet`).
RunSummary RunFollow(const ConvertOptions& opts);

}  // namespace tracemill::pipeline
