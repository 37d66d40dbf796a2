#pragma once
// What the analyses need to know of a job besides its events: one value
// type per input and per output, filled by the job that ran them
// (pipeline/table_facts.h converts the manifest's records). analysis/ reads
// only these and the merged events, never a job's own types.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "formats/common/timeline.h"

namespace tracemill::analysis {

// TablesMode: `--tables [summary|full]`.
enum class TablesMode {
  kOff,      // no tables
  kSummary,  // every table but the per-event framework_metrics
  kFull,     // every table
};

// InputFacts: one input as the tables see it (the `inputs` table's row and
// the keys of its per-input rows). Times are absolute int64 ns.
struct InputFacts {
  int64_t index = -1;                    // position in the job's input list
  std::optional<int64_t> rank;
  std::string node;                      // smdebug node id, "" if none
  std::string format;                    // "trace_event_json_object", "smdebug_framework_json", ...
  int smdebug_kind = 0;                  // formats::SmdebugFileKind of its member files
  std::vector<formats::StepSpan> steps;  // its steps (aligned ns), in the decoder's order
  std::string path, label, output;       // output: file name it went to, "" if none
  uint64_t events_read = 0, events_written = 0, dropped = 0;
  bool has_span = false;                 // first/last below are set
  int64_t first_ts_ns = 0, last_ts_ns = 0;
  int64_t clock_offset_ns = 0;           // added to its times (clocks)
  bool clock_applied = false;
  bool on_job_clock = true;              // its times are on the job's one clock (one domain, or aligned)
  std::optional<std::string> error;      // the first error's message
  bool reused = false;                   // carried over by --resume (not read)
  bool skipped = false;                  // found in a folder and not a trace
  int owner_shard = -1;                  // -1: this run reports it; else the shard that does
};

// OutputFacts: one output file (the `outputs` table's row).
struct OutputFacts {
  std::string path;             // file name inside OUTDIR
  std::vector<int64_t> ranks;   // sorted, unique
  uint64_t inputs = 0;          // inputs it holds
  uint64_t events = 0, bytes = 0;
  uint32_t crc32 = 0;           // of the file on disk
  uint64_t parts = 0;           // written in parts: how many
  std::string error;            // non-empty if it could not be written
  bool reused = false;          // kept from an earlier run (--resume)
};

// JobFacts: the whole job's inputs and outputs, and its fingerprint
// (pipeline/plan.h: the job's inputs and options).
struct JobFacts {
  std::string fingerprint;
  std::vector<InputFacts> inputs;
  std::vector<OutputFacts> outputs;
};

}  // namespace tracemill::analysis
