#pragma once
// smdebug system metrics given as loose files (JSON Lines of samples
// outside an smdebug `system/` folder, which pipeline/inputs/smdebug_inputs.h
// groups per node instead) in the format registry (formats/registry.h).
#include <string_view>

#include "formats/common/decode_report.h"
#include "formats/common/trace_data.h"
#include "formats/registry.h"

namespace tracemill::formats {

// SystemMetricsFormat: "smdebug_system_metrics": JSON Lines whose first line
// has the sample keys (LooksLikeSystemMetrics). Skipped under
// --no-system-metrics; planned undetermined (only the decode tells the node).
const InputFormat& SystemMetricsFormat();

// DecodeSystemMetricsFile decodes one system-metrics file given on its own
// into `builder`, with its low-GPU slices. `name` is its path (its last
// component names it in messages); `capacity` as InputBytes; the threshold is
// in percent. Status: OK, kDataLoss (bad lines dropped and counted) or
// kInvalidArgument (no sample at all). `cuts_ns`: DecodeSettings::low_gpu_cuts_ns.
DecodeReport DecodeSystemMetricsFile(std::string_view name, std::string_view text, size_t capacity,
                                     double low_gpu_threshold, TraceBuilder* builder,
                                     std::array<int64_t, 2> cuts_ns = {INT64_MIN, INT64_MIN});

}  // namespace tracemill::formats
