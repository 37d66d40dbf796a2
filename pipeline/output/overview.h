#pragma once
// overview.trace.json: one small trace of the whole job that always opens,
// whatever the number of ranks: per input (rank) its steps, its collective
// kernels and the longest spans of each of its tracks, and its counters
// down-sampled to a fixed number of points per series. It is the first file
// to open on a 4,096-rank job; the per-GPU outputs (or their parts) hold
// every event.
//
// Bounded: the limits (OverviewLimits::For) split kOverviewBytes between the
// job's inputs at about kOverviewBytesPerEvent each, and are written into
// the file's otherData. Built by a tap on the merge loop of each output (the
// events an output writes, in aligned time), one block per input, formatted
// once its output is written; every block is one line of the file, starting
// with its process_name record (pid = input index + 1), so a sharded job's
// `manifest merge` and a resumed job take blocks from earlier files by pid
// and write the same bytes as one process.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "analysis/collectives.h"
#include "formats/common/event.h"
#include "formats/common/trace_data.h"
#include "pipeline/inputs/input_record.h"

namespace tracemill::pipeline {

inline constexpr uint64_t kOverviewBytes = 64ull << 20;
inline constexpr uint64_t kOverviewBytesPerEvent = 256;
inline constexpr char kOverviewFileName[] = "overview.trace.json";

// OverviewLimits: what one input may put in the overview.
struct OverviewLimits {
  size_t steps = 0;               // steps per input
  size_t collectives = 0;         // collective kernels per input (the first ones)
  size_t spans = 0;               // longest spans per input, over its tracks
  size_t spans_per_track = 0;     // longest spans per track
  size_t points_per_series = 0;   // counter samples per series (evenly thinned)
  size_t series = 0;              // counter series per input
  // For a job of `inputs` inputs: kOverviewBytes / inputs each.
  static OverviewLimits For(size_t inputs);
  std::string Json() const;  // for otherData
};

// OverviewTap: what the overview keeps of one input while its output is
// merged. Single-threaded (one output's merge loop).
class OverviewTap {
 public:
  OverviewTap(const OverviewLimits& limits, const formats::TraceData* data) : limits_(limits), data_(data) {}
  // Event: one event of the input as written (`ts_ns` aligned: shift added).
  void Event(const formats::Event& e, int64_t shift_ns);

  // A kept span (string ids of the input's table; ts aligned, ns).
  struct Span {
    int64_t ts_ns, dur_ns;
    uint32_t name, cat, pid, tid;
  };

 private:
  friend class OverviewCollector;
  struct Series {
    std::vector<std::pair<int64_t, std::string>> points;  // (ts, args JSON)
    uint64_t seen = 0;
    uint64_t stride = 1;
  };
  void KeepSpan(const formats::Event& e, int64_t ts);
  void KeepCounter(const formats::Event& e, int64_t ts);
  // Track: the heap of track `key`, made empty the first time. The last two
  // tracks asked for are found without a lookup (an input has few tracks,
  // and its spans in time order come from one or two at a time: the real
  // tb-plugin rank's 44,666 spans are on 4 tracks, 99.96 % of them on one of
  // the last two asked for).
  std::vector<Span>& Track(uint64_t key) {
    return recent_[0].index != UINT32_MAX && recent_[0].key == key ? heaps_[recent_[0].index] : OtherTrack(key);
  }
  std::vector<Span>& OtherTrack(uint64_t key);  // Track, not the last one

  const OverviewLimits& limits_;
  const formats::TraceData* data_;
  // The tracks, (pid << 32 | tid) -> index in heaps_ (a min-heap by dur each).
  absl::flat_hash_map<uint64_t, uint32_t> tracks_;
  std::vector<std::vector<Span>> heaps_;
  struct Recent {
    uint64_t key = 0;
    uint32_t index = UINT32_MAX;  // none yet
  };
  Recent recent_[2];  // the last track asked for first
  std::vector<Span> collectives_;
  std::map<std::pair<uint32_t, uint32_t>, Series> series_;  // (pid, name)
};

// OverviewCollector: the job's overview, block by block.
class OverviewCollector {
 public:
  // `inputs`: the job's input count (every shard alike); `ts_offset_ns`
  // as the outputs' (--relative-time; read when blocks are formatted, so it
  // may be set after construction).
  OverviewCollector(size_t inputs, const int64_t& ts_offset_ns);

  // The file name a job writes: overview.trace.json, or a shard's
  // overview.shard-<i>-of-<n>.json (a trace too; joined by `manifest merge`).
  static std::string FileName(int shard_index, int shard_count);

  // Has: input `i` has a block; Block: it ("" if none).
  bool Has(size_t i) const { return !blocks_[i].empty(); }
  const std::string& Block(size_t i) const { return blocks_[i]; }

  // Tap: a fresh tap for input `i` (one output at a time holds it).
  OverviewTap Tap(size_t i, const formats::TraceData* data) const { return OverviewTap(limits_, data); }
  // AddBlock formats input `r`'s block from its tap (null: steps only, for
  // an input read but not written) and keeps it. Thread-safe for distinct
  // inputs.
  void AddBlock(const InputRecord& r, const OverviewTap* tap);

  // Write writes `<dir>/<file_name>` (temporary name, then rename) with the
  // blocks kept, in input order, and those of `previous` (the lines of an
  // earlier overview or shard overviews, by pid) for inputs not kept here.
  // Errors: of the write.
  // `marks` (convert --tables, not a shard's own file): the collectives'
  // last arrivals, one more line: a process "collectives: last arrivals"
  // (pid inputs + 1, sorted first) with a thread per late rank, an `X` from
  // each instance's first arrival to its last (at most kMaxLastArrivals, the
  // largest skews; ~200 bytes each beside kOverviewBytes).
  absl::Status Write(const std::string& dir, const std::string& file_name,
                     const std::map<int64_t, std::string>& previous,
                     const std::vector<analysis::LastArrival>& marks = {}) const;

  // BlocksOf: the blocks of an overview file written by Write, by pid
  // (empty if `path` cannot be read).
  static std::map<int64_t, std::string> BlocksOf(const std::string& path);

  const OverviewLimits& limits() const { return limits_; }

 private:
  const size_t inputs_;
  const int64_t& ts_offset_ns_;
  const OverviewLimits limits_;
  std::vector<std::string> blocks_;  // by input index; "" if none
};

}  // namespace tracemill::pipeline
