#pragma once
// An output folder holds the result of one run. When a run reuses a folder
// (a 4-rank job, then one rank into the same OUTDIR), the files of the
// earlier run that this one does not write (an output of a rank no longer
// given, tables.sqlite without --tables, report.html with --no-report) are
// removed once this run's own files are written, and listed in its manifest
// (`removed`) and on the terminal. Only files the earlier run's manifest
// names are touched: nothing else in OUTDIR is ever removed.
#include <set>
#include <string>
#include <vector>

namespace tracemill::pipeline {

// EarlierRunFiles: the file names (inside `out_dir`) that the earlier run's
// manifest `out_dir/manifest_name` lists: each output, or its parts when it
// was written in parts, and overview.trace.json, report.html and
// tables.sqlite when they are there. Empty if there is no such manifest or
// it cannot be read as one.
std::vector<std::string> EarlierRunFiles(const std::string& out_dir, const std::string& manifest_name);

// RemoveFilesNotWritten unlinks each of `earlier` (names inside `out_dir`)
// that is not in `written`; returns the names it removed, in `earlier`'s
// order (a name already gone is not listed).
std::vector<std::string> RemoveFilesNotWritten(const std::string& out_dir, const std::vector<std::string>& earlier,
                                               const std::set<std::string>& written);

class Job;

// RemoveEarlierRunsFiles removes each of `earlier` not in `written` (as
// RemoveFilesNotWritten), lists them in the manifest (`removed`, appended to
// the job summary's extra members) and, unless `quiet`, says so once on the
// terminal, naming the first five.
void RemoveEarlierRunsFiles(const std::string& out_dir, const std::vector<std::string>& earlier,
                            const std::set<std::string>& written, bool quiet, Job& job);

}  // namespace tracemill::pipeline
