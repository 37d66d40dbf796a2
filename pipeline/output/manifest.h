#pragma once
// OUTDIR/manifest.json: what a run read, wrote and dropped, per input and
// per output, with totals. Conservation holds per input and in total:
// events_read == events_written + events_dropped.
//
// A shard of a sharded run (pipeline/shard.h) writes
// `manifest.shard-<i>-of-<n>.json` instead: the same shape, plus a `shard`
// object and, per input, its `index` in the job's input list; an input the
// shard decoded but whose output another shard writes is listed with
// `owner_shard` and left out of the totals. `tracemill manifest merge`
// (pipeline/output/manifest_merge.h) joins the shard manifests into manifest.json.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pipeline/inputs/input_record.h"
#include "pipeline/shard.h"

namespace tracemill::pipeline {

// OutputPart: one time part of an output written in parts
// (pipeline/output/output_parts.h).
struct OutputPart {
  std::string path;                // file name inside OUTDIR
  uint64_t events = 0;             // entries written in it (its replayed metadata not counted)
  uint64_t bytes = 0;              // size on disk
  uint32_t crc32 = 0;
  bool has_span = false;           // first/last below are set
  int64_t first_ts_ns = 0;         // its first event's start (absolute ns, as written)
  int64_t last_ts_ns = 0;          // its latest event end (a long span may run past later parts' starts)
  int64_t last_start_ns = 0;       // its last event's start: [first_ts_ns, last_start_ns] are the
                                   // starts it holds, which do not overlap the next part's
  uint64_t flows_across_parts = 0; // flow events in it whose flow began in an earlier part
  uint64_t spans_cut = 0;          // B/E pairs still open when it was closed
};

// OutputRecord: one output file.
struct OutputRecord {
  std::string path;                // file name inside OUTDIR
  std::vector<int64_t> ranks;      // ranks it holds (sorted, unique)
  std::vector<std::string> inputs; // input paths it holds, in output order
  uint64_t events = 0;             // input events written
  uint64_t metadata_added = 0;     // process_name / process_sort_index synthesized
  uint64_t bytes = 0;              // size on disk
  uint32_t crc32 = 0;              // CRC-32 of the file on disk (gzip's polynomial)
  bool reused = false;             // complete from an earlier run (--resume), not rewritten
  std::string error;               // non-empty if it could not be written
  std::vector<OutputPart> parts;   // written in parts: `path` names none of them
};

// ShardRun: one shard's line in a merged manifest.
struct ShardRun {
  int index = 0;
  int exit_code = 0;
  double wall_seconds = 0;
  int threads = 0;
  std::string source;
  std::string command_line;
};

// RunSummary: the whole run.
struct RunSummary {
  std::vector<InputRecord> inputs;
  std::vector<OutputRecord> outputs;
  double wall_seconds = 0;
  int threads = 0;
  int gpus_per_node = 0;
  std::string group_by;
  bool cpu_only = false;  // no input lists a GPU (pipeline/plan.h JobPlan::cpu_only)
  std::string command_line;
  int64_t first_ts_ns = 0, last_ts_ns = 0;  // the job's time span (absolute ns)
  bool has_span = false;
  int exit_code = 0;
  // Clock alignment (pipeline/clocks/clocks.h): empty or `,\n"clocks":{...}`.
  std::string clocks_json;
  bool clocks_shift = false;  // `tracemill clocks`: the solution shifts some node
  // Extra top-level members, appended last: empty or `,\n"key":value...`
  // (tracemill csp adds its parameters and pipeline-marker counts).
  std::string extra_members;
  std::string fingerprint;  // the job's inputs and options (pipeline/plan.h)
  // Warnings that change the meaning of the outputs (pipeline/job_notes.h).
  std::vector<std::string> notices;
  ShardSpec shard;          // count > 1: a shard manifest
  uint64_t inputs_in_job = 0;   // shard manifests: inputs of the whole job
  bool resumed = false;         // --resume was given
  uint64_t outputs_reused = 0;  // --resume: outputs kept from an earlier run
  uint64_t inputs_not_read = 0; // --resume: inputs of those outputs
  std::vector<ShardRun> shards;  // a merged manifest: one per shard
  // tracemill csp: ranks of the job without a profile file, for the summary
  // line (the manifest lists them in its `csp` section, not from here).
  uint64_t ranks_missing = 0;
};

// ManifestFileName: "manifest.json", or "manifest.shard-<i>-of-<n>.json".
std::string ManifestFileName(const ShardSpec& shard);

// ManifestJson renders `s` as the manifest (a JSON object, UTF-8, ends in \n).
std::string ManifestJson(const RunSummary& s);

// WriteManifest writes OUTDIR/ManifestFileName(s.shard) (temporary name, then rename).
absl::Status WriteManifest(const std::string& out_dir, const RunSummary& s);

// AppendInputJson / AppendOutputJson: one record as written in the manifest
// (also the journal's lines, pipeline/journal.h). `with_index` adds `index`.
void AppendInputJson(const InputRecord& r, bool with_index, std::string* out);
void AppendOutputJson(const OutputRecord& out, std::string* o);

// ParseManifest reads a manifest written by ManifestJson back (for --resume
// and `manifest merge`): every field of every record, the shard object, the
// exit code. Errors: kDataLoss for text that is not such a manifest.
absl::StatusOr<RunSummary> ParseManifest(std::string_view json);

// ParseRecordsJson reads `{"output":{...},"inputs":[{...},...]}` (a journal
// line). Errors: kDataLoss.
absl::Status ParseRecordsJson(std::string_view json, OutputRecord* out,
                              std::vector<InputRecord>* inputs);

}  // namespace tracemill::pipeline
