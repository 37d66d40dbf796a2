#pragma once
// smdebug system metrics (JSON Lines) of one node -> counter tracks and
// low-GPU-utilisation slices in a TraceBuilder.
//
// Input (smdebug's `SystemMetricsWriter`, `system/incremental/<epoch_s>.<node>.json`),
// one sample per line:
//   {"Type":"gpu","Name":"gpu1","Dimension":"GPUUtilization","Value":74.76,
//    "NodeId":"algo-1","Timestamp":1591168699.4578894}
// `Timestamp` is float seconds since the epoch, parsed as an exact decimal
// (`ParseSecondsToNanos`); `Value` is a percentage, kept as written.
//
// Output, per node:
// - process `system metrics`: one `C` event per sample, name = `Name`
//   (`cpu0`, `gpu1`), args `{<Dimension>: Value}`: one counter track per
//   device with one series per dimension. Every sample is written (smdebug's
//   MergedTimeline stops writing counters after the last low-GPU sample);
// - process `GPU bottlenecks`, one thread per GPU: an `X` slice named
//   `low GPU utilization` over each run of consecutive `GPUUtilization`
//   samples below the threshold, from the first low sample to the next
//   sample that is not low (or to the last low one). These slices are
//   derived, not read: they are added to `events_read` so that read =
//   written + dropped still holds, and a warning line counts them.
// Lines: a line that is not a JSON object, or lacks a decimal `Timestamp`
// or `Value` or a string `Name`, is dropped (`malformed` / `bad_sample`)
// and is an error (kDataLoss, `<file>:<line>`); every good line is kept. A
// torn last line (no newline, cut mid-object, as a killed writer leaves
// it) is only a warning (`truncated`).
#include <cstdint>
#include <string>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "formats/common/decode_report.h"
#include "formats/common/trace_data.h"

namespace tracemill::formats {

// LooksLikeSystemMetrics: the first line of `head` has smdebug's sample
// keys (`"Dimension"` and `"Timestamp"`), telling these JSON Lines from a
// run event log.
bool LooksLikeSystemMetrics(std::string_view head);

// SystemMetricsDecoder: the sample files of one node -> `out`
// (JSON Lines... -> TraceBuilder). One instance per node being decoded.
class SystemMetricsDecoder {
 public:
  // `low_gpu_threshold` is in percent (GPUUtilization below it is low).
  SystemMetricsDecoder(TraceBuilder* out, double low_gpu_threshold);
  ~SystemMetricsDecoder();

  // AddFile decodes one file (`text` needs SIMDJSON_PADDING readable bytes
  // past its end: `capacity` >= text.size() + padding). `file_name` names
  // it in messages (`<file_name>:<line>`). `text` may be freed afterwards.
  // `context`: a neighbour of a follow window's files (the node's file
  // before or after them): its GPUUtilization samples only tell where the
  // low runs that cross the window's edges begin and end; it adds no event
  // (the report is to be ignored).
  DecodeReport AddFile(std::string_view file_name, std::string_view text, size_t capacity, bool context = false);

  // CutSlicesAt: low-utilisation slices are cut at these times (a follow
  // window's edges; INT64_MIN: none): a run crossing one becomes two slices.
  // A slice made of context samples alone (AddFile) is left out unless it
  // starts inside the window [cuts[0], cuts[1]): each window then holds
  // exactly its part of a one-shot convert's slice.
  void CutSlicesAt(std::array<int64_t, 2> cuts_ns) {
    if (cuts_ns[1] < cuts_ns[0]) std::swap(cuts_ns[0], cuts_ns[1]);
    cuts_ns_ = cuts_ns;
  }

  // Finish adds the low-utilisation slices (call once, after every file);
  // returns how many it added (already counted in `*report`'s events_read).
  uint64_t Finish(DecodeReport* report);

 private:
  // AddLowSlice adds one low-utilisation slice of `device` [from, to).
  void AddLowSlice(uint32_t device, int64_t from_ns, int64_t to_ns, size_t samples, const std::string& thr_text);

  struct GpuSample {
    uint32_t device;  // string id of Name
    int64_t ts_ns;
    bool low;
    bool context;  // from a context file (AddFile)
  };
  // InWindow: `t` is inside the cuts' window (no cuts: everywhere).
  bool InWindow(int64_t t) const;
  TraceBuilder* out_;
  double threshold_;
  std::array<int64_t, 2> cuts_ns_ = {INT64_MIN, INT64_MIN};
  uint32_t metrics_pid_;
  uint32_t bottleneck_pid_ = UINT32_MAX;
  uint32_t ph_c_, ph_x_, slice_name_;
  std::vector<GpuSample> gpu_;
  std::string rest_;
  struct Parser;
  Parser* parser_;
};

}  // namespace tracemill::formats
