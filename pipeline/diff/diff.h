#pragma once
// `tracemill diff CONTROL TEST -o OUTDIR` (issue 36): what changed between two
// runs, as HTA's TraceDiff.compare_traces reports it.
//
// Each side is what `convert` takes (trace files or folders), converted with
// `--tables=summary` into OUTDIR/control/ and OUTDIR/test/, or the output
// folder of an earlier `convert --tables` (its tables.sqlite is read, nothing
// is decoded again). Both sides' `op_summary` rows (HTA's get_ops_summary,
// analysis/tables.h) of the chosen ranks, iterations and device are summed
// per name and joined into OUTDIR/diff.sqlite, table `compare_traces`, with
// HTA's columns: name, Control_counts, Control_total_duration, Test_counts,
// Test_total_duration, diff_counts, diff_duration (µs, test minus control),
// counts_change_categories (+, -, =); in HTA's order. Table `diff_meta`
// (key, value) says what was compared (sides, tables, ranks, iterations,
// device) and the dtype HTA's `dur` column has on each side. Beyond HTA:
// `step_times` (per side and rank: steps, total, mean, min, max ns),
// `kernel_type_time` (the job's GPU time per set of kernel types running at
// once, side by side), `rank_time` (per rank: kernel and idle time of both),
// and the views `new_names` / `vanished_names`.
#include <cstdint>
#include <string>
#include <vector>

namespace tracemill::pipeline {

// DiffOptions: the command line of `tracemill diff`.
struct DiffOptions {
  std::string control, test;  // trace files/folders, or a `convert --tables` output folder
  std::string out_dir;
  // HTA's defaults when empty: the first rank, the first iteration (ProfilerStep#N) of each side.
  std::vector<int64_t> control_ranks, test_ranks, control_iterations, test_iterations;
  std::string device = "all";  // all, cpu (stream -1), gpu
  bool short_names = false;    // group by HTA's shorten_name (column `short_name`)
  int threads = 0;             // for the conversions (0: every CPU this process may use)
  bool quiet = false;
};

// DiffRow: one row of `compare_traces`.
struct DiffRow {
  std::string name;
  int64_t control_counts = 0, control_us = 0, test_counts = 0, test_us = 0;
};

// DiffResult: the exit status (pipeline/options.h's codes: 0, 1 an output or
// a conversion failed, 2 usage: a rank or iteration that does not exist, a
// side without traces) with its one-line reason, and the rows written.
struct DiffResult {
  int exit_code = 0;
  std::string error;
  std::vector<DiffRow> rows;
  size_t common = 0;  // names both sides have
  std::string control_tables, test_tables;  // the tables.sqlite files compared
};

// HtaShortName: HTA's shorten_name (hta/utils/utils.py): a memory kernel's
// name (Memcpy, Memset, hipMemcpy, hipMemset, dma...) and a name without
// `<` or `(` unchanged; otherwise `->` removed, template arguments `<...>`
// and arguments `(...)` dropped (innermost first, unbalanced ones kept), and
// the last space-separated word. Works on bytes: the brackets are ASCII.
std::string HtaShortName(const std::string& name);

// RunDiff converts what needs converting, compares and writes
// OUTDIR/diff.sqlite (under a temporary name, renamed when complete).
DiffResult RunDiff(const DiffOptions& opts);

}  // namespace tracemill::pipeline
