#pragma once
// InputRecord: what happened to one input, feeding the manifest, the exit
// status and the report (which reads it back from the manifest).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "formats/common/collectives.h"
#include "formats/common/stats.h"
#include "formats/common/timeline.h"

namespace tracemill::pipeline {

struct InputRecord {
  std::string path;
  uint64_t bytes = 0;             // size on disk
  uint64_t decoded_bytes = 0;     // after gzip
  std::string format;             // "trace_event_json_object", "gzip+trace_event_json_array"
  std::optional<int64_t> rank;
  std::string rank_source;        // "distributedInfo", "file name", ""
  std::optional<int64_t> trainer; // a trainer's file (Paddle network log): `rank` is its first GPU
  std::optional<int64_t> world_size;
  std::string label;              // "rank 3" or the file name for unranked inputs
  std::string output;             // output file name it went to
  uint64_t events_read = 0;
  uint64_t events_written = 0;
  uint64_t metadata_written = 0;  // follow windows: the `M` events among events_written
  // Follow windows (by start): the earliest start at or after the window's
  // end among the events left to later windows, INT64_MAX if none; the next
  // window with events of this input starts there (never written to the
  // manifest).
  int64_t window_next_start_ns = INT64_MAX;
  formats::DropCounts dropped;
  std::vector<std::string> warnings;
  absl::Status status;            // OK, or the first error
  uint64_t error_offset = 0;      // byte offset of the error (decoded bytes for gzip input)
  bool rejected = false;          // nothing of it was converted
  bool has_span = false;          // first/last below are set
  int64_t first_ts_ns = 0;        // earliest event start (absolute ns)
  int64_t last_ts_ns = 0;         // latest event end (absolute ns)
  // The most bytes its events take in an output (SortDecoded): the sum of
  // ChromeWriter::FormatBound over its events but the process metadata
  // records, whose positions in its events are listed (their bytes depend
  // on the output's labels: ChromeWriter::EntryBound at the write), and of
  // how many events (all of them, unless they changed since).
  uint64_t entry_bound_bytes = 0;
  uint64_t entry_bound_events = 0;
  std::vector<uint32_t> process_meta_events;
  bool from_directory = false;    // found by walking a directory argument
  bool skipped = false;           // found in a directory and not a trace: ignored, not an error
  // Sharded and resumed runs (pipeline/plan.h, pipeline/journal.h):
  int64_t index = -1;             // position in the job's input list
  int owner_shard = -1;           // -1: this run reports it; else the shard that does
  bool reused = false;            // carried over from an earlier run by --resume (not read)
  formats::Timeline timeline;     // steps, tracks, bytes pushed/pulled: for the report
  // smdebug profiler folders (pipeline/inputs/smdebug_inputs.h): one record per node
  // and kind holds that node's files; `path` then names the group.
  std::vector<std::string> files;  // member files in time order; empty: `path` is the file
  // smdebug system metrics in a follow window: the node's files just before
  // and after the window's (read for the low-GPU runs crossing its edges only).
  std::vector<std::string> context_files;
  std::string node;                // smdebug node id: labels the output's processes
  // SageMaker host `algo-<n>` of an smdebug node without a rank of its own
  // (formats::SageMakerHost): n, 0 for none. The plan gives it node n - 1's
  // first GPU, rank (n - 1) x GPUs per node (MakePlan).
  int64_t sagemaker_host = 0;
  int smdebug_kind = 0;            // formats::SmdebugFileKind of the members
  std::optional<int64_t> base_ns;  // TF profiler trace: start from its `.metadata` marker
  std::string error_file;          // the member file `status` is about (else `path`)
  // Clock alignment (pipeline/clocks/clocks.h): the input's collectives, kept
  // while the job needs them; and what was decided for it.
  formats::CollectiveDigest collectives;
  bool clock_probe = false;        // its domain's probe candidate: digest up to kMaxProbeCollectives
  bool clock_decided = false;      // the fields below are set (the job spans several domains)
  std::string clock_domain;        // "node 3"; empty: not in any domain (unranked)
  int64_t clock_offset_ns = 0;     // added to its times to put them on the reference clock
  bool clock_applied = false;      // clock_offset_ns was applied (to its events, steps and span)
  std::string clock_note;          // how the offset was found, or why none was applied
  bool clock_unaligned = false;    // the job spans clock domains and --align-clocks is off
  std::optional<int64_t> clock_disagrees_ns;  // its own collectives vs its node's probe, when they disagree

  // Conservation: every event read was written or dropped with a reason.
  bool Balanced() const { return events_read == events_written + dropped.Total(); }
  // DropUnaccounted counts the events read but neither written nor dropped
  // yet under `why` (an input rejected before writing, an output that failed).
  void DropUnaccounted(formats::DropReason why) {
    const uint64_t accounted = events_written + dropped.Total();
    if (events_read > accounted) dropped.Add(why, events_read - accounted);
  }
};

// ErrorLine formats the one-line stderr message for a failed input:
// "tracemill: <path>: at byte <offset>: <message> (<N> events read intact)",
// or "(input rejected)". N counts the events decoded without error, before
// --ranks and --start/--end leave any out (said in the summary; the line
// once said "kept", also of a rank --ranks then left out whole).
std::string ErrorLine(const InputRecord& r);

}  // namespace tracemill::pipeline
