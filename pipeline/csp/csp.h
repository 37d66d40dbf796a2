#pragma once
// `tracemill csp`: a drop-in for Paddle's CrossStackProfiler (CspReporter.py):
// `<profile_path>/profile/<anything>.<rank>` (one serialized Profile per
// rank) and `<profile_path>/dcgm/<anything>.<trainer>` (dcgmi dmon logs) ->
// `<timeline_path>/traceFile_<group>_<gpu>.json` for every group and local
// GPU, plus `manifest.json` and `report.html` (convert's run report: steps
// are the ranks' pipeline spans). Files of an earlier run in the folder that
// this one does not write are removed, as convert removes them.
//
// Ranks and trainers come from the `.N` file-name suffix: rank r is trainer
// r / gpus_per_trainer, local GPU r % gpus_per_trainer; trainer t is in
// group t / group_size and displayed if t % group_size < display_size.
// Output (g, n) needs the displayed ranks of group g on GPU n (decoded in
// full), the other ranks of that group on GPU n (scanned for pipeline
// markers only) and the DCGM rows of the displayed trainers for GPU n; every
// rank file belongs to exactly one output, so each is read once.
//
// Parallelism and memory: a oneTBB flow graph runs one task per output,
// at most `threads` at a time (`limiter_node`); a task holds only its
// displayed ranks' file buffers (each parsed twice, for lanes and markers and
// then for the write; nothing is stored per event) and streams its JSON
// through a 2 MiB buffer flushed every MiB, so peak memory is about
// threads x (display_size x rank file + 2 MiB) plus the DCGM rows of the
// groups in flight (136 bytes per row), whatever the job's size. Each DCGM
// log is parsed once, by the first output that needs it, and a group's rows
// are freed after its last output. 64 ranks x 55k messages: 35 MiB peak RSS
// (bench/RESULTS.md).
#include <string>

#include "formats/paddle/csp_trace.h"
#include "pipeline/output/manifest.h"

namespace tracemill::pipeline {

struct CspOptions {
  std::string profile_path = ".";   // holds profile/ and (optional) dcgm/
  std::string timeline_path = ".";  // output directory (created if missing)
  int gpus_per_trainer = 8;
  int trainer_num = 0;   // 0: from the highest rank file
  int group_size = 0;    // 0: trainer_num (one group)
  int display_size = 2;  // trainers shown per group (t % group_size < display_size)
  formats::CspTimeUnit unit = formats::CspTimeUnit::kReferenceNs;
  int threads = 0;       // 0: the CPUs this process may use
  bool compress = false; // write traceFile_<g>_<n>.json.gz
  bool write_report = true;  // <timeline_path>/report.html after the manifest (--no-report: false)
  bool quiet = false;
  bool verbose = false;
  bool progress = false;
  // Benchmarking switch (hidden `--stop-after decode`): read, decode and pair
  // markers, but write no output (bench/ times the stages apart).
  bool stop_after_decode = false;
  std::string command_line;
};

// RunCsp runs the whole job and returns its summary (also written to
// `<timeline_path>/manifest.json`). `exit_code`: 0 all converted; 1 an output
// could not be written (or internal error); 2 bad parameters, or no
// profile/ folder or no rank file in it; 3 some input damaged, unreadable,
// duplicated or missing (every other input converted). Never throws.
RunSummary RunCsp(const CspOptions& opts);

}  // namespace tracemill::pipeline
