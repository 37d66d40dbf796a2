#pragma once
// Paddle profile -> Trace Event Format events, for `tracemill convert`
// (Paddle profile bytes -> TraceBuilder). `tracemill csp` writes
// CrossStackProfiler's layout instead (csp_trace.h); this is the generic
// mapping, with correct microseconds:
//
// - one process per lane, as CrossStackProfiler names them: `cuda_api`
//   (device_id -1), `cpu:block:<d>` (other CPU events), `gpu:<d>` (GPU
//   kernels), `memory usage on <place>:<d>` (memory counters); the writer
//   prefixes the rank ("rank 5 · gpu:5");
// - every Event is an `X` event: ts = start_ns, dur = end_ns - start_ns, tid =
//   sub_device_id, cat `Op`, args {name, mem_bytes if > 0, detail_info if
//   set}; an event ending before it starts is dropped (`bad_dur`), one
//   starting past 2^62 ns (year 2116, every input's time range: ts_text.h)
//   as `bad_ts`;
// - MemEvents become one `Memory` counter per (place, device): the running
//   total of bytes allocated (+bytes at start_ns, -bytes at end_ns), one
//   sample per distinct time (a MemEvent past 2^62 ns is dropped as
//   `bad_ts`; totals are exact, written within int64).
// The rank comes from the file name (`profile.5`), as for any input without
// `distributedInfo`.
#include <string_view>

#include "formats/chrome/tef_decoder.h"
#include "formats/common/trace_data.h"

namespace tracemill::formats {

// DecodePaddleToTrace decodes the serialized Profile in `bytes` into
// `builder`. `bytes` must stay alive until `builder->Finish()`. The report's
// status is OK or kDataLoss (damaged protobuf: everything before the damage
// is kept; see paddle_profile.h); events_read counts Events + MemEvents.
DecodeReport DecodePaddleToTrace(std::string_view bytes, TraceBuilder* builder);

}  // namespace tracemill::formats
