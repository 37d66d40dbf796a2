#pragma once
// `dcgmi dmon` text logs, as Paddle's CrossStackProfiler collects them
// (`<root>/dcgm/<anything>.<trainer>`): one file per trainer (node), every
// GPU of the node sampled at a fixed period, with an added TIMESTAMP column
// in seconds since the epoch.
//
// Layout and the quirks tolerated (tests/data/paddle-csp/small/data/dcgm):
//   Started host engine version 2.2.9 using socket path /tmp/nv-hostengine   <- noise
//   Host Engine Listener Started                                              <- noise
//   # Entity  TIMESTAMP  GPUTL  GRACT ...       <- header; repeated later (ignored)
//         Id                                    <- units line (ignored)
//       GPU 0  1700000000.000  81  0.494 ...    <- one sample of GPU 0
//       GPU 1  1700000000.000  N/A  0.809 ...   <- N/A: the whole row is dropped
//   dmon finished                               <- noise
// Lines containing `nv-hostengine`, `dmon` or `Host Engine Listener Started`
// are noise (CrossStackProfiler's DCGMFileReader skips them the same way);
// any other line that is neither a header nor a `GPU` row is ignored.
// Columns are found by the name in the first header, so their order may
// vary; the ones CrossStackProfiler uses must all be present.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "formats/common/large_alloc.h"
#include "formats/common/timeline.h"

namespace tracemill::formats {

// The sample columns CrossStackProfiler plots, in its order.
enum class DcgmColumn : uint8_t {
  kGputl, kGract, kSmact, kSmocc, kFbusd, kFbttl, kDrama,
  kNvltx, kNvlrx, kPcitx, kPcirx, kFp32a, kFp16a, kTenso,
  kCount
};
inline constexpr int kNumDcgmColumns = static_cast<int>(DcgmColumn::kCount);

// DcgmColumnName returns the header name of `c` ("GPUTL", ...).
std::string_view DcgmColumnName(DcgmColumn c);

// DcgmSample: one `GPU <n>` row.
struct DcgmSample {
  int64_t ts_ns = 0;        // TIMESTAMP (decimal seconds) -> ns, exactly
  int64_t ts_float_ns = 0;  // int(float(TIMESTAMP) * 1e9), truncated toward zero: what
                            // CrossStackProfiler computes (pandas float64), off by up to
                            // ~128 ns (1700000000.003 s -> ...003000064 ns)
  int64_t gpu = 0;          // the Entity id
  double values[kNumDcgmColumns] = {};  // as written (GPUTL in percent)
  double value(DcgmColumn c) const { return values[static_cast<int>(c)]; }
};

// DcgmFile: the parsed content of one dmon log.
struct DcgmFile {
  std::vector<DcgmSample, LargeAllocator<DcgmSample>> samples;  // in file order
  uint64_t rows = 0;             // `GPU` rows seen (samples + dropped)
  uint64_t dropped_na = 0;       // rows with N/A (or any non-numeric value): dropped
  uint64_t dropped_malformed = 0;  // rows with the wrong number of columns, or before a header
  uint64_t headers = 0;          // `# Entity` lines (the first one is used)
  uint64_t noise_lines = 0;      // host-engine / dmon lines skipped
  // OK, or kInvalidArgument (no `# Entity` header, a needed column missing):
  // then `samples` is empty.
  absl::Status status;
};

// LooksLikeDcgmDmon: `head` (the first bytes of a file) is a dmon log: a
// line that begins, after spaces, with `# Entity` and names `TIMESTAMP`, or
// dcgmi's own first line `Started host engine` (the registry's test for
// `dcgm_dmon`, formats/dcgm/dcgm_format.h).
bool LooksLikeDcgmDmon(std::string_view head);

// ParseDcgmDmon parses the text of one dmon log (see the file comment).
// Never fails on a single row: bad rows are counted and dropped.
DcgmFile ParseDcgmDmon(std::string_view text);

// SummarizeDcgm: per GPU (sorted), the sums of the samples of `f` that the
// report shows (formats::GpuUtilization).
std::vector<GpuUtilization> SummarizeDcgm(const DcgmFile& f);

// DcgmDropWarnings: a warning per kind of row `f` dropped ("3 GPU rows with
// N/A ..."), each after `prefix` (a file name and ": ", or nothing).
std::vector<std::string> DcgmDropWarnings(const DcgmFile& f, std::string_view prefix);

// ParseSecondsToNanos parses decimal seconds (`-`? digits (`.` digits)?
// ([eE] [+-]? digits)?) into int64 ns exactly; digits past the nanosecond
// round half away from zero. nullopt-like: returns false on anything else or
// overflow.
bool ParseSecondsToNanos(std::string_view text, int64_t* ns);

}  // namespace tracemill::formats
