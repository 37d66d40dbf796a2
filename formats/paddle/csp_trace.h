#pragma once
// The Chrome trace Paddle's CrossStackProfiler (tools/CrossStackProfiler in
// PaddlePaddle/Paddle: CspReporter.py, ProfileFileReader.py,
// DCGMFileReader.py) writes for one (group g, local GPU n):
// `traceFile_<g>_<n>.json`, event for event, with the deliberate deviations
// listed in README.md ("Paddle CrossStackProfiler").
//
// Layout of one file, in the order written:
//   pid 0   `01_pipeLineInfo`: forward/backward spans from paired
//           `marker/compute/MarkerCUDA` events of every trainer of the group
//           on GPU n (tid = global rank; cname `bad` forward, `good` backward);
//   pids 8+ per displayed rank, lanes in order of first appearance, named
//           `NN_trainerRank.RRR:cuda_api` (device_id -1), `:cpu:block:<d>`,
//           `:gpu:<d>`, `NN_memory usage on trainerRank.RRR:<place>:<d>`
//           (NN restarts at 09 for every rank, pids do not); then every op as
//           an X event (tid = sub_device_id, args {name, mem_bytes if > 0,
//           detail_info if set}), then the memory counters;
//   pids 1-5 DCGM counters of the displayed trainers on GPU n
//           (`02_gpuUtility` ... `06_calUtility`, tid `<g>_<slot>`, id slot);
//   pids 6-7 network counters of the group's displayed trainers
//           (formats/paddle/net_log.h), every GPU's file alike: `01_tx`
//           and `02_rx` (NetFileReader.py's names), counter `tx`/`rx`, id
//           trainer, args the line's `args`. Deviation: the reference's
//           reader (never called by its reporter) puts them on pids 1 and 2,
//           the first two DCGM lanes; here they take the pids its layout
//           leaves for them (8 = 1 pipeline + 5 DCGM + 2 network).
// Times: `kReferenceNs` writes integer nanoseconds into the µs fields `ts`/`dur`
// as the reference does (timelines look 1000x longer); `kMicros` writes exact
// decimal microseconds.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "formats/chrome/output_file.h"
#include "formats/common/byte_buffer.h"
#include "formats/common/timeline.h"
#include "formats/dcgm/dcgm_reader.h"
#include "formats/paddle/net_log.h"
#include "formats/paddle/paddle_profile.h"

namespace tracemill::formats {

// The event name and detail_info values that mark pipeline stages.
inline constexpr std::string_view kCspMarkerName = "marker/compute/MarkerCUDA";

enum class PipelineStage : uint8_t { kForward, kBackward };

// PipelineMarker: one `marker_<stage>_<B|E>` event.
struct PipelineMarker {
  uint64_t ts_ns = 0;      // the event's start_ns
  uint64_t mem_bytes = 0;  // memcopy.bytes (kept in a span's args, as the reference does)
  uint32_t seq = 0;        // position among the rank's markers (stable sort)
  PipelineStage stage = PipelineStage::kForward;
  bool begin = false;
};

// AsPipelineMarker returns true and fills `*m` (seq excluded) if `e` is a
// pipeline marker: name `marker/compute/MarkerCUDA` and detail_info one of
// `marker_forward_B`, `marker_forward_E`, `marker_backward_B`,
// `marker_backward_E`.
bool AsPipelineMarker(const PaddleEvent& e, PipelineMarker* m);

// ScanPipelineMarkers appends the pipeline markers of the serialized Profile
// in `bytes` to `markers` (seq = order among them) without decoding the
// other messages: memmem finds every occurrence of the marker name, and only
// the Events whose body holds one are decoded (a marker's name field lies
// inside its body, so none is missed). The framing of every message is
// still checked: the result (counts, status, offsets) is the one
// ParsePaddleProfile would give, except that damage inside a skipped body
// goes unseen. For ranks read only for their markers: 10x less work than a
// full decode (bench/RESULTS.md).
PaddleParseResult ScanPipelineMarkers(std::string_view bytes, std::vector<PipelineMarker>* markers);

// PipelineSpan: a paired forward or backward stage of one rank.
struct PipelineSpan {
  int64_t rank = 0;
  uint64_t ts_ns = 0;  // the B marker's start_ns
  int64_t dur_ns = 0;  // E.start_ns - B.start_ns
  uint64_t mem_bytes = 0;
  PipelineStage stage = PipelineStage::kForward;
};

// MarkerPairing: what pairing one rank's markers found. Every marker is
// either in a span or dropped: markers == 2 * spans + dropped_*.
struct MarkerPairing {
  uint64_t markers = 0;
  uint64_t spans = 0;
  uint64_t dropped_end_without_begin = 0;  // E with no open B (also a repeated E)
  uint64_t dropped_begin_without_end = 0;  // B followed by another B (nested), or never closed
  uint64_t dropped_mismatched = 0;         // B and E of different stages (both dropped)
  uint64_t dropped() const {
    return dropped_end_without_begin + dropped_begin_without_end + dropped_mismatched;
  }
};

// PairPipelineMarkers sorts one rank's `markers` by ts (ties in file order,
// as the reference's stable sort) and pairs each B with the next marker if
// that is the E of the same stage, appending spans to `spans`. Anything else
// is dropped and counted (the reference overwrites an open B silently,
// pairs a forward B with a backward E, and raises IndexError on two E in a
// row).
MarkerPairing PairPipelineMarkers(int64_t rank, std::vector<PipelineMarker>* markers,
                                  std::vector<PipelineSpan>* spans);

// StepsOfPipelineSpans appends the steps of one rank's pipeline spans
// (`spans[0..n)`, in time order as PairPipelineMarkers appends them) to
// `steps`: step N (0-based) is the N-th forward span, from its B marker to
// the end of the last backward span before the next forward span (the
// forward span's own end if none). What convert's --start-step and both
// commands' run reports use for Paddle jobs, whose profiles have no
// `ProfileStep#N` of their own. Times are clamped to +-kMaxAbsTimeNs.
void StepsOfPipelineSpans(const PipelineSpan* spans, size_t n, std::vector<StepSpan>* steps);

enum class CspTimeUnit {
  kReferenceNs,  // ns in the µs fields, as CrossStackProfiler (drop-in default)
  kMicros,       // exact decimal µs (`--time-unit us`)
};

// CspLanes: the lanes (pids) of one displayed rank, as CrossStackProfiler's
// `_allocate_pids` creates them: op lanes in order of first appearance of
// (device_id, type) among the Events, then memory lanes in order of first
// appearance among the MemEvents (each MemEvent also creating `cpu:0`,
// `gpu:0`, `cudapinnedplace:0`). Indices are local to the rank; the writer
// turns them into pids (8 + lanes of the ranks before + index).
class CspLanes {
 public:
  enum class Kind : uint8_t { kCpu, kGpu, kMemGpu, kMemCpu, kMemPinned, kCount };
  struct Lane {
    Kind kind;
    int64_t device;
    int line;  // the NN of the name: 9, 10, ... per rank
  };
  CspLanes();
  // Find returns the local index of (kind, device), or -1.
  int32_t Find(Kind kind, int64_t device) const {
    if (device >= -1 && device < kFast - 1) return fast_[static_cast<int>(kind)][device + 1];
    return FindSlow(kind, device);
  }
  // Add creates the lane if new; returns its index.
  int32_t Add(Kind kind, int64_t device);
  const std::vector<Lane>& lanes() const { return lanes_; }
  void Clear();
  // Name returns the reference's name of lane `i` of rank `rank`
  // ("12_trainerRank.003:cuda_api", "15_memory usage on trainerRank.003:gpu:3").
  std::string Name(size_t i, int64_t rank) const;

 private:
  static constexpr int kFast = 64;
  int32_t FindSlow(Kind kind, int64_t device) const;
  int32_t fast_[static_cast<int>(Kind::kCount)][kFast];
  std::vector<Lane> lanes_;
};

// CspRankPlan: what the first pass over a displayed rank found.
struct CspRankPlan {
  CspLanes lanes;
  std::vector<PipelineMarker> markers;  // in file order (seq set)
  uint64_t first_ns = UINT64_MAX, last_ns = 0;  // span of its Events and MemEvents (start .. end)
  uint64_t gpu_lanes_other_device = 0;          // kernels on a GPU other than the output's
  PaddleParseResult parse;
  // Memory lane requests in MemEvent order, turned into lanes after the
  // Events (the reference's second loop).
  std::vector<std::pair<CspLanes::Kind, int64_t>> mem_order;
};

// PlanCspRank is the first of two passes over a displayed rank's bytes: it
// allocates the lanes, collects the pipeline markers and the time span, and
// reports the decode (the second pass, in WriteCspTrace, sees the same
// events). Nothing is stored per event: a displayed rank costs its file
// buffer only, not ~80 bytes per decoded event (fresh memory is the dearest
// thing on the benchmark VM: bench/RESULTS.md).
void PlanCspRank(std::string_view bytes, int64_t gpu, CspRankPlan* plan);

// CspDisplayedRank: one displayed rank of an output (trainer % group_size <
// display_size, on this GPU): its bytes (alive until written) and its plan.
struct CspDisplayedRank {
  int64_t rank = 0;
  std::string_view bytes;
  const CspRankPlan* plan = nullptr;
};

// CspDcgmTrainer: the DCGM rows of one displayed trainer for this GPU.
struct CspDcgmTrainer {
  int64_t slot = 0;  // trainer % group_size
  std::vector<const DcgmSample*> samples;  // file order
};

// CspNetTrainer: the network log of one displayed trainer of the group.
struct CspNetTrainer {
  int64_t trainer = 0;
  const NetLogFile* file = nullptr;  // its samples, in file order
};

// CspTraceInput: everything one output holds.
struct CspTraceInput {
  int64_t group = 0;
  int64_t gpu = 0;
  CspTimeUnit unit = CspTimeUnit::kReferenceNs;
  const std::vector<PipelineSpan>* spans = nullptr;  // rank order, then ts
  std::vector<CspDisplayedRank> ranks;               // rank order
  bool dcgm_lanes = false;  // write the five DCGM lanes (some DCGM file was read)
  std::vector<CspDcgmTrainer> dcgm;
  bool net_lanes = false;  // write the two network lanes (some network log was read)
  std::vector<CspNetTrainer> net;  // trainer order
  std::string other_data_json;  // a JSON object for `otherData`
};

// CspRankStats: per displayed rank, for the manifest (the caller adds them up
// with what decoding found: read = written + dropped).
struct CspRankStats {
  uint64_t events_written = 0;
  uint64_t mem_events_written = 0;       // mem events in the counters
  uint64_t mem_events_other_device = 0;  // CUDA / pinned mem events of another GPU
  uint64_t counters_written = 0;         // `Memory` counter events
};

// CspTraceStats: per output.
struct CspTraceStats {
  std::vector<CspRankStats> ranks;  // parallel to `CspTraceInput::ranks`
  uint64_t events = 0;              // JSON events written, metadata included
  uint64_t spans = 0;
  uint64_t dcgm_rows = 0;           // samples written (5 counters each)
  uint64_t fb_ratio_null = 0;       // samples with FBTTL = 0: FB_USED_RATIO written as null
  uint64_t net_rows = 0;            // network samples written (one counter event each)
};

// CspScratch: per-worker buffers reused across outputs.
struct CspScratch {
  struct MemEntry {
    uint64_t ts_ns;
    uint32_t seq;
    uint32_t lane;  // local lane index
    int64_t delta;
  };
  std::vector<std::vector<MemEntry>> mem;  // per displayed rank
  std::vector<int64_t> totals;
  std::vector<uint32_t> touched;
  ByteBuffer json;  // the output buffer
};

// WriteCspTrace writes one `traceFile_<g>_<n>.json` to `out` (which the caller
// commits). Errors: those of `OutputFile::Append` (kInternal and friends).
absl::Status WriteCspTrace(const CspTraceInput& in, OutputFile* out, CspScratch* scratch,
                           CspTraceStats* stats);

// CspRankLabel returns `trainerRank.003` for rank 3 (the reference's key).
std::string CspRankLabel(int64_t rank);

}  // namespace tracemill::formats
