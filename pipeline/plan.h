#pragma once
// The pre-scan and the plan of a run: which output each input will go to,
// known before decoding, so that a shard reads only what its outputs need.
//
// The pre-scan reads, in parallel, each input's size and its head (the first
// 64 KiB, then up to 256 KiB; a gzip file's head is inflated with zlib's
// streaming inflater, never the whole file) and finds there the shape of the
// document, `distributedInfo.rank` and the number of `deviceProperties`
// entries that precede `traceEvents` (formats/chrome/tef_head.h). An input is
// then planned:
// - `kOutput` by its head rank (a Kineto file: the keys come first);
// - `kOutput` by its file-name rank, or to `unranked`, when its content cannot
//   carry a rank (JSON Array Format, Paddle protobuf profiles) or the head
//   holds the whole document and it has none;
// - `kUndetermined` for JSON Lines (run event logs, smdebug system metrics:
//   only their decode tells where they go);
// - `kUndetermined` otherwise (a JSON Object Format file whose
//   `distributedInfo` may come after `traceEvents`): every shard decodes it
//   and keeps it only if its actual output is the shard's;
// - `kNoOutput` when the head is not a trace (READMEs, empty files, files
//   that cannot be read): shard 0 reads and reports it.
// `--gpus-per-node` defaults to the largest `deviceProperties` count the
// pre-scan found (else 8) in every mode, sharded or not, so that a sharded
// run and a single run group alike. The decoded rank stays the truth for
// grouping; a shard that decodes a planned input into another shard's output
// reports it as an error (see graph.cc).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/chrome/tef_head.h"
#include "pipeline/inputs/input_record.h"
#include "pipeline/inputs/rank_name.h"
#include "pipeline/options.h"

namespace tracemill::pipeline {

// Bytes per event of a Trace Event Format head (formats/chrome/tef_head.h).
using formats::HeadBytesPerEvent;
using formats::kDensitySampleEvents;

// Head bytes read by the pre-scan: a first try, then the most it reads.
inline constexpr size_t kHeadFirstBytes = 64 << 10;
inline constexpr size_t kHeadMaxBytes = 256 << 10;

// OutputKey: one output, ordered as outputs are listed (numbered by number,
// then `unranked`).
struct OutputKey {
  int kind = 0;        // 0: numbered (gpuN, rankN, nodeN, all), 1: unranked
  int64_t number = 0;  // N (0 for all and unranked)
  std::string stem;    // "gpu3", "rank12", "node1", "all", "unranked"
  bool operator<(const OutputKey& o) const {
    return kind != o.kind ? kind < o.kind : number != o.number ? number < o.number : stem < o.stem;
  }
  bool operator==(const OutputKey& o) const { return kind == o.kind && number == o.number && stem == o.stem; }
};

// GroupByName: the --group-by value of `g` ("local-gpu", "rank", ...).
std::string GroupByName(GroupBy g);
// KeyFor: the output of an input of rank `rank` (nullopt: unranked).
OutputKey KeyFor(std::optional<int64_t> rank, GroupBy group_by, int gpus_per_node);
// OutputFileName: "<stem>.trace.json", or ".trace.json.gz" with `compress`.
std::string OutputFileName(const OutputKey& key, bool compress);
// RangeFileName: the file of time range `range` (0-based) of `ranges` of
// output file `name`: "gpu3.trace.json" -> "gpu3.time-2-of-4.trace.json"
// (1-based in the name); `name` itself when `ranges` is 1.
std::string RangeFileName(const std::string& name, int range, int ranges);
// ParseRangeName: (range, ranges) of a time range's file name (or of one of
// its parts), range 0-based; nullopt if it is not one.
std::optional<std::pair<int, int>> ParseRangeName(std::string_view file_name);
// OutputNameOf: the output a file belongs to: "gpu3.time-2-of-4.trace.json"
// -> "gpu3.trace.json" (".gz" kept); any other name as it is.
std::string OutputNameOf(const std::string& file_name);
// OutputRangeOf: the 0-based time range of an output file name, 0 if none
// (outputs of one key are listed in this order).
inline int OutputRangeOf(std::string_view file_name) {
  auto r = ParseRangeName(file_name);
  return r ? r->first : 0;
}
// ParseOutputName: the key of an output file name (or of one of its time
// parts, "gpu3.part-002.trace.json", or time ranges,
// "gpu3.time-2-of-4.trace.json", or a part of one); nullopt if it is not one.
std::optional<OutputKey> ParseOutputName(std::string_view file_name);

enum class PlanKind { kOutput, kUndetermined, kNoOutput };

// InputPlan: what the pre-scan found about one input.
struct InputPlan {
  PlanKind kind = PlanKind::kNoOutput;
  std::optional<int64_t> rank;  // the planned rank (kOutput), if any
  bool rank_from_head = false;  // `rank` came from distributedInfo in the head
  int device_count = -1;        // deviceProperties entries in the head
  // JSON bytes per event in the head's traceEvents (a sample of at least
  // kDensitySampleEvents events), for the decode cost (budget.h); 0 unknown.
  uint32_t bytes_per_event = 0;
  uint64_t bytes = 0;           // size on disk
  int64_t mtime_ns = 0;         // for the job fingerprint
  // Its times count from its own start (no epoch base: PyTorch 1.x): every
  // time in the head before 2000, no baseTimeNanoseconds in the head nor in
  // the last 4 KiB of a plain file (a gzip file's tail is not read: false).
  // Such a rank is a clock domain of its own (pipeline/clocks/clocks.h).
  bool relative_clock = false;
};

// PreScan plans every input of `records` (in parallel; records already
// rejected by ExpandInputs are kNoOutput). Never fails: an input whose head
// cannot be read is planned kNoOutput (its full read will fail the same way).
std::vector<InputPlan> PreScan(const std::vector<InputRecord>& records, const RankMatcher& ranks);

// JobPlan: outputs and owners, the same in every shard of a job.
struct JobPlan {
  int gpus_per_node = 8;
  // Every input that can have an output lists no GPU in its head (Kineto's
  // `"deviceProperties": []`): a CPU-only job (gloo on CPUs).
  bool cpu_only = false;
  // The grouping used: opts.group_by, but one output per rank for a
  // CPU-only job under the per-GPU default (there is no GPU to group by).
  GroupBy group_by = GroupBy::kLocalGpu;
  int shard_count = 1;
  std::vector<InputPlan> inputs;
  std::vector<std::optional<OutputKey>> planned_key;  // per input (kOutput only)
  std::map<OutputKey, uint64_t> planned_bytes;        // planned outputs
  std::map<OutputKey, int> planned_owner;             // planned output -> shard (of its first range)
  // --time-ranges: each output is written as this many files, each range
  // assigned to a shard as an output of its own.
  int time_ranges = 1;
  std::map<OutputKey, std::vector<int>> planned_range_owner;  // planned output -> shard of each range
  std::string fingerprint;                            // 8 hex digits

  // OwnerOf: the shard that writes `key`: the AssignOutputs rule for planned
  // outputs; for outputs found only by decoding undetermined inputs, a rule
  // that depends on nothing but the key: number % shard_count (unranked:
  // shard 0).
  int OwnerOf(const OutputKey& key) const;
  // OwnerOfRange: the shard that writes time range `range` of `key`
  // (OwnerOf for the first range, which reports the output's inputs):
  // planned, or (number * time_ranges + range) % shard_count.
  int OwnerOfRange(const OutputKey& key, int range) const;
  // ReporterRange: the time range whose writer reports input `i` (counts
  // and taps its events: overview, tables): i % time_ranges, so that the
  // inputs' taps and tables rows spread over the ranges' shards.
  int ReporterRange(size_t i) const { return static_cast<int>(i % static_cast<size_t>(std::max(time_ranges, 1))); }
  // WritesAnyRange: whether `shard` writes some range of `key` (and so
  // decodes its inputs).
  bool WritesAnyRange(const OutputKey& key, int shard) const;

  // OwnerOfInput: the shard that reports input `i`, as planned: the owner
  // of its planned output's ReporterRange(i) (kOutput), shard 0 (kNoOutput), or -1 when only
  // its decode tells (kUndetermined).
  int OwnerOfInput(size_t i) const;
};

// MakePlan groups the pre-scan's planned inputs into outputs and assigns
// them to `shard_count` shards. `gpus_per_node` is `opts.gpus_per_node`, or
// the largest pre-scanned deviceProperties count, else 8. The fingerprint
// covers the version, every option that changes outputs and each input's
// path, size and mtime: shards (and a resumed run) check they run one job.
JobPlan MakePlan(const std::vector<InputRecord>& records, std::vector<InputPlan> plans,
                 const ConvertOptions& opts, int shard_count);

}  // namespace tracemill::pipeline
