#pragma once
// OUTDIR/manifest.json: what a run read, wrote and dropped, per input and
// per output, with totals. Conservation holds per input and in total:
// events_read == events_written + events_dropped.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "pipeline/input_record.h"

namespace tracemill::pipeline {

// OutputRecord: one output file.
struct OutputRecord {
  std::string path;                // file name inside OUTDIR
  std::vector<int64_t> ranks;      // ranks it holds (sorted, unique)
  std::vector<std::string> inputs; // input paths it holds, in output order
  uint64_t events = 0;             // input events written
  uint64_t metadata_added = 0;     // process_name / process_sort_index synthesized
  uint64_t bytes = 0;              // size on disk
  std::string error;               // non-empty if it could not be written
};

// RunSummary: the whole run.
struct RunSummary {
  std::vector<InputRecord> inputs;
  std::vector<OutputRecord> outputs;
  double wall_seconds = 0;
  int threads = 0;
  int gpus_per_node = 0;
  std::string group_by;
  std::string command_line;
  int64_t first_ts_ns = 0, last_ts_ns = 0;  // the job's time span (absolute ns)
  bool has_span = false;
  int exit_code = 0;
  // Extra top-level members, appended last: empty or `,\n"key":value...`
  // (tracemill csp adds its parameters and pipeline-marker counts).
  std::string extra_members;
};

// ManifestJson renders `s` as the manifest (a JSON object, UTF-8, ends in \n).
std::string ManifestJson(const RunSummary& s);

// WriteManifest writes OUTDIR/manifest.json (temporary name, then rename).
absl::Status WriteManifest(const std::string& out_dir, const RunSummary& s);

}  // namespace tracemill::pipeline
