#pragma once
// RunModel: OUTDIR/manifest.json read back, everything the report shows.
//
// The report is built from the manifest alone (never from the traces), so
// `tracemill report OUTDIR` rebuilds the same page from a finished run, and
// every number on the page is a number of the manifest. Times in the
// manifest are exact decimal microseconds; they are read from their text
// into int64 ns (`ParseMicrosToNanos`), never through a double. Keys a
// manifest lacks (one written before the report existed) are left at their
// defaults.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "formats/common/stats.h"
#include "formats/common/timeline.h"

namespace tracemill::report {

// InputClock: an input's `clock` object (pipeline/clocks/clocks.h).
struct InputClock {
  std::string domain;  // "node 1"; empty: none
  int64_t offset_ns = 0;
  bool applied = false;
  std::string note;
  std::optional<int64_t> disagrees_ns;  // its own collectives vs its node's probe
};

// ClockDomainModel: one entry of the manifest's `clocks.domains`.
struct ClockDomainModel {
  std::string domain;
  std::optional<int64_t> probe_rank;
  std::string probe;
  uint64_t collectives = 0;
  bool estimated = false, confident = false, applied = false;
  int64_t offset_ns = 0;
  uint64_t matched = 0;
  int64_t spread_ns = 0;
  std::string via;
  std::string note;
};

// ClocksModel: the manifest's `clocks` section (present when the inputs
// span more than one clock domain and --align-clocks was not off).
struct ClocksModel {
  bool present = false;
  std::string mode;  // auto, on
  bool applied = false;
  std::string reference;
  std::vector<ClockDomainModel> domains;
  std::vector<std::string> warnings;
};

// TablesModel: the manifest's `tables` member (`convert --tables`,
// pipeline/convert/tables_job.h): the file, and per rank HTA's temporal breakdown
// (exact ns) that the report draws.
struct TablesModel {
  bool present = false;
  std::string path, mode, error;
  struct Breakdown {
    int64_t input = -1;
    std::optional<int64_t> rank;
    int64_t kernel_ns = 0, compute_ns = 0, non_compute_ns = 0, idle_ns = 0;
  };
  std::vector<Breakdown> temporal_breakdown;
  // smdebug's system samples per node and dimension (utilization percents).
  struct System {
    std::string node, dimension;
    int64_t samples = 0;
    double mean = 0, max = 0;
  };
  std::vector<System> system;
  // Per node, its longest phases (smdebug's process, else the category):
  // the time of the spans touching each step, summed, over `steps` steps.
  struct Phase {
    std::string node, phase;
    int64_t time_ns = 0, steps = 0;
  };
  std::vector<Phase> phases;
  // Per node, the data loader's spans.
  struct Loader {
    std::string node;
    int64_t spans = 0, time_ns = 0, longest_ns = 0;
  };
  std::vector<Loader> dataloader;
  // Collectives matched across ranks (analysis/collectives.h), summed up:
  // absent (present false) when the job has none.
  struct Collectives {
    bool present = false;
    int64_t instances = 0, shared = 0, unaligned = 0;  // shared: held by two or more ranks
    struct Rank {
      std::optional<int64_t> rank;
      int64_t instances = 0, times_last = 0, caused_ns = 0, waited_ns = 0;
    };
    std::vector<Rank> ranks;  // by caused_ns, most first
    struct Instance {
      int64_t instance = 0, ranks = 0, first_arrival_ns = 0, skew_ns = 0, latency_ns = 0;
      std::string collective, process_group;
      std::optional<int64_t> seq, last_rank;
      bool aligned = true;
    };
    std::vector<Instance> worst;  // by skew, largest first
    struct SkewBin {
      int64_t start_ns = 0, instances = 0, mean_skew_ns = 0, max_skew_ns = 0;
    };
    std::vector<SkewBin> skew;  // by time
    struct Bandwidth {
      std::string collective, size;
      int64_t instances = 0, mean_latency_ns = 0;
      std::optional<double> algbw_gbps, busbw_gbps;
    };
    std::vector<Bandwidth> bandwidth;
    // Per step, the rank whose late arrivals kept the others waiting
    // longest: the skews of the `times_last` instances (of the step's
    // `instances`) it arrived last at, summed.
    struct StepLate {
      int64_t step = 0, rank = 0, late_ns = 0, times_last = 0, instances = 0;
    };
    std::vector<StepLate> steps;  // by step
  };
  Collectives collectives;
};

// InputModel: one entry of the manifest's `inputs`.
struct InputModel {
  std::string path;
  uint64_t bytes = 0;
  uint64_t decoded_bytes = 0;
  std::string format;
  std::optional<int64_t> rank;
  std::string rank_source;
  std::optional<int64_t> world_size;
  std::string label;
  bool skipped = false;
  std::string output;
  uint64_t events_read = 0, events_written = 0, events_dropped = 0;
  std::vector<std::pair<std::string, uint64_t>> dropped_by_reason;
  std::vector<std::string> warnings;
  bool has_error = false;
  std::string error_message, error_code;
  uint64_t error_offset = 0;
  bool rejected = false;
  std::optional<std::pair<int64_t, int64_t>> span_ns;  // first event start, last event end
  formats::Timeline timeline;
  std::optional<InputClock> clock;
};

// PartModel: one time part of an output written in parts.
struct PartModel {
  std::string path;
  uint64_t events = 0;
  uint64_t bytes = 0;
  std::optional<std::pair<int64_t, int64_t>> span_ns;  // first event start, last event end
  std::optional<std::pair<int64_t, int64_t>> starts_ns;  // first and last event start
};

// OutputModel: one entry of the manifest's `outputs`.
struct OutputModel {
  std::string path;
  std::vector<int64_t> ranks;
  size_t inputs = 0;
  uint64_t events = 0;
  uint64_t bytes = 0;
  std::string error;
  std::vector<PartModel> parts;  // empty: one file, `path`
};

// Totals: the manifest's `totals`.
struct Totals {
  uint64_t inputs = 0, inputs_rejected = 0, inputs_with_errors = 0, inputs_skipped = 0;
  uint64_t input_bytes = 0;
  uint64_t events_read = 0, events_written = 0, events_dropped = 0;
  // Of the dropped: lost to bad input or failures, left out on purpose
  // (formats/common/stats.h's kinds). A manifest without them (older than
  // issue 21) gets them from `dropped_by_reason` (ParseManifest).
  uint64_t events_lost = 0, events_left_out = 0;
  std::vector<std::pair<std::string, uint64_t>> dropped_by_reason;
  uint64_t bytes_pushed = 0, bytes_pulled = 0;
  uint64_t outputs = 0, output_bytes = 0;
  bool balanced = true;
};

// RunModel: the whole manifest.
struct RunModel {
  std::string version;
  std::string command_line;
  int exit_code = 0;
  double wall_seconds = 0;  // shown rounded; the manifest has 3 decimals
  std::string wall_seconds_text;  // as written in the manifest ("0.108")
  int threads = 0;
  std::string group_by;
  int gpus_per_node = 0;
  bool cpu_only = false;  // the manifest's cpu_only: no input lists a GPU
  std::optional<std::pair<int64_t, int64_t>> span_ns;  // the job's time span
  Totals totals;
  std::vector<InputModel> inputs;
  std::vector<OutputModel> outputs;
  ClocksModel clocks;
  // One-line warnings that change the meaning of the outputs (different
  // jobs, mixed time bases, duplicate ranks, ...; pipeline/job_notes.h).
  std::vector<std::string> notices;
  TablesModel tables;
};

// DropKindOfKey: the kind of the drop reason with manifest key `key`
// (formats/common/stats.h); a key this version does not know counts as
// lost (kLoss), the side that warns.
formats::DropKind DropKindOfKey(std::string_view key);

// ParseManifest reads the text of a manifest.json.
// Errors: kInvalidArgument if it is not JSON or not a tracemill manifest
// (no `inputs` array), with the simdjson error or the missing key.
absl::StatusOr<RunModel> ParseManifest(std::string_view json);

// kMaxManifestBytes: the largest manifest.json read (4,096 ranks with
// 4,096 steps each write ~0.7 GB).
inline constexpr uint64_t kMaxManifestBytes = uint64_t{2} << 30;

// ReadManifest reads and parses `<out_dir>/manifest.json`, naming that path
// in its errors. Errors: kNotFound if there is none (or OUTDIR is no
// folder); kInvalidArgument if it is not a regular file, is larger than
// kMaxManifestBytes, or as ParseManifest; else the errno of stat(2) or
// read(2) (kPermissionDenied, ...).
absl::StatusOr<RunModel> ReadManifest(const std::string& out_dir);

}  // namespace tracemill::report
