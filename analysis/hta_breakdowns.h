#pragma once
// HolisticTraceAnalysis's (HTA, facebookresearch/HolisticTraceAnalysis at
// f4d0062) per-rank breakdowns, computed in one pass over a rank's events in
// time order, in memory that depends on the number of distinct kernel names
// and streams, not on the number of events.
//
// What HTA does (/work/shared/reference/hta-breakdowns.md; file:line below
// are inside HTA's repository):
// - device rows: `X` events whose `args.stream` is a number other than -1,
//   category present and not `Trace` (trace_parser.py:305-350,
//   breakdown_analysis.py:666), after the iteration filter (trace.py:801-894);
// - intervals `[ts, ts+dur)` merged when they overlap or touch, all streams
//   together (utils.py:125-139): kernel_time = last group's end - first
//   group's start, idle = kernel_time - busy, compute = busy of the
//   COMPUTATION rows alone, non_compute = kernel - compute - idle
//   (breakdown_analysis.py:641-680);
// - kernel types by HTA's regexes on the full name (utils.py:104-112,
//   types.py:109-133);
// - the GPU kernel breakdown: time where exactly a set of the types
//   {COMPUTATION, COMMUNICATION, MEMORY} runs (each merged first), and per
//   type the per-name sum/max/min/mean/std with HTA's "others" grouping
//   (breakdown_analysis.py:36-215, 505-640);
// - comm/comp overlap: |merged comm ∩ merged comp| / |merged comm|
//   (communication_analysis.py:29-85).
// - the idle time breakdown (IdleGaps): per stream, the gaps between
//   consecutive kernels and whether the next was launched after the gap began
//   (breakdown_analysis.py:746-945).
// Our intervals are exact ns. HTA works in the file's µs and, when any `ts`
// is a JSON float, rounds every event (ceil ts, floor ts+dur,
// trace_parser.py:371-388) as float64 values of the file's µs
// (HtaRoundedUs); a second state and second per-name statistics keep those
// rounded intervals and durations, and the `(us)` columns use them when the
// rank has sub-µs times.
#include <cstdint>
#include <deque>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace tracemill::analysis {

// KernelType: HTA's classes, in the order HTA tests them.
enum class KernelType : uint8_t { kCommunication, kMemory, kComputation, kOther };
inline constexpr int kKernelTypes = 3;  // the analysed ones: COMPUTATION, COMMUNICATION, MEMORY

// ClassifyKernel: HTA's `get_kernel_type` on a plain (unescaped) name.
KernelType ClassifyKernel(std::string_view name);
// KernelTypeName: "COMPUTATION", "COMMUNICATION", "MEMORY", "OTHER".
const char* KernelTypeName(KernelType t);

// IntervalUnion: HTA's merge of intervals given in non-decreasing start
// order (utils.py:125-139): a new group when start > the groups' max end.
struct IntervalUnion {
  bool open = false;
  int64_t group_start = 0, group_end = 0;  // the open group
  int64_t first_start = 0;                 // the first group's start
  int64_t busy = 0;                        // closed groups' lengths
  void Add(int64_t start, int64_t end);
  bool empty() const { return !open; }
  int64_t Busy() const { return busy + (open ? group_end - group_start : 0); }
  // KernelTime: last group's end - first group's start (0 if empty).
  int64_t Span() const { return open ? group_end - first_start : 0; }
};

// KernelStats: one kernel name's durations (ns).
struct KernelStats {
  uint64_t count = 0;
  int64_t sum_ns = 0, max_ns = INT64_MIN, min_ns = INT64_MAX;
  __int128 sum_sq = 0;  // ns^2, exact
  void Add(int64_t dur_ns);
};

// BreakdownState: the merges of one rank (one rounding).
struct BreakdownState {
  IntervalUnion all;                    // every device row
  IntervalUnion by_mask[1 << kKernelTypes];  // union of the rows whose type is in the mask (bit: type index)
  void Add(int type_index, int64_t start, int64_t end);  // type_index: -1 for OTHER
};

// KernelRow: one row of HTA's kernel breakdown (µs as HTA reports them).
struct KernelRow {
  KernelType type;
  std::string name;  // "others" for HTA's grouped row
  double sum_us, max_us, min_us, mean_us, stddev;
  uint64_t count;    // kernels in the row
  int64_t sum_ns;    // their exact total
};

// IdleGaps: the input of HTA's get_idle_time_breakdown
// (breakdown_analysis.py:746-945) for one stream of a rank. HTA takes the
// rows of a kernel category (formats::IsHtaKernelCategory) on a stream other
// than -1, sorts each stream's by ts and looks at each kernel's gap to the
// previous one's end (HTA's µs: the file's, rounded as HtaRoundedUs): a host
// wait when its launch (the CPU row of the same correlation) started after
// that end; else the category follows from the gap and the caller's
// `consecutive_kernel_delay`, so the gaps are kept by value, not summed.
struct IdleGaps {
  int64_t stream = 0;
  // 1 + the file position of the stream's first kernel
  // (TraceData::first_kernel_of_tid): HTA lists streams in that order
  // (`gpu_kernels.stream.unique()` over the file's rows), not by time.
  uint64_t file_order = 0;
  uint64_t kernels = 0;  // the first has no gap (HTA's NaN, category other)
  struct Gap {
    bool host_wait;
    int64_t gap_us;   // ts - the previous kernel's end, HTA's µs (may be < 0)
    uint64_t count;
  };
  std::vector<Gap> gaps;  // by (host_wait, gap_us)
};

// HtaResult: a rank's numbers (ns exact; `*_us` as HTA computes them).
struct HtaResult {
  bool has_device_rows = false;  // HTA raises IndexError without any
  bool rounded = false;          // the `_us` figures use HTA's µs rounding
  bool iteration_filter = false; // HTA's last-step filter was applied
  uint64_t device_rows = 0;
  int64_t kernel_ns = 0, idle_ns = 0, compute_ns = 0, non_compute_ns = 0;
  double kernel_us = 0, idle_us = 0, compute_us = 0, non_compute_us = 0;
  // Time where exactly a set of types runs, by mask (bit 0 COMPUTATION,
  // 1 COMMUNICATION, 2 MEMORY): ns exact and HTA's µs.
  int64_t exact_ns[1 << kKernelTypes] = {};
  double exact_us[1 << kKernelTypes] = {};
  // comm/comp overlap: |comm ∩ comp| and |comm| (ns; HTA's µs).
  int64_t comm_ns = 0, comm_comp_overlap_ns = 0, comp_ns = 0;
  double comm_us = 0, comm_comp_overlap_us = 0;
  std::vector<KernelRow> kernels;
  // Per stream: (stream, span of its rows, busy) in ns.
  struct Stream {
    int64_t stream;
    int64_t span_ns, busy_ns;
    uint64_t rows;
  };
  std::vector<Stream> streams;
  // HTA's idle time breakdown (IdleGaps), one entry per stream with a
  // kernel, in HTA's order of streams.
  std::vector<IdleGaps> idle;
  // The dtype of HTA's `stream` column for this rank (pandas' integer
  // downcast of every row's stream, -1 for none): int8 .. int64.
  std::string stream_dtype;
};

// MicrosAsParsed: the float64 a JSON parser makes of `ns` / 1000 written
// as a decimal µs number (nearest double, ties to even), computed exactly
// from the ns. HTA's columns are such doubles: at epoch magnitudes
// (~1.7e15 µs) a double steps by 0.25 µs.
double MicrosAsParsed(int64_t ns);

// HtaRoundedUs: HTA's rounding of a row of a trace with float `ts`
// (trace_parser.py:371-388) as float64 does it: ts and dur parsed from the
// file's µs, end = ts + dur in double, then (ceil(ts), floor(end)) in µs.
// `file_ts_ns`: the ts as the file writes it (before its time base).
std::pair<int64_t, int64_t> HtaRoundedUs(int64_t file_ts_ns, int64_t dur_ns);

// HtaPctg: HTA's `round(100 * x / total, 2)` (numpy's round half to even
// on the scaled double); `digits` 1 for the kernel-type table.
double HtaPctg(double x, double total, int digits = 2);

// RecentLaunches: correlation -> a value of the CPU row that launched GPU
// work (its HTA µs ts; its iteration), for the kernels that follow it.
// HTA joins a kernel to its launch however far apart they are; a kernel
// starts within milliseconds of its launch (seconds behind a deep queue), so
// a launch is kept for kHorizonNs after it started, and memory is bounded by
// the launches of that long, not by those of the whole trace (an hour of
// training launches millions; many runtime calls carry a correlation and
// launch nothing). Rows come in time order (`now_ns`, aligned ns).
//
// Its members are defined in hta_breakdowns.cc, instantiated there for
// int64_t only: a test built without sanitizers (the asan preset builds
// tests with -fno-sanitize=all) that instantiated Abseil's hash map code
// inline would give the linker unsanitized copies of it, and ASan would
// then see writes into slots the sanitized copies poisoned.
template <typename V>
class RecentLaunches {
 public:
  static constexpr int64_t kHorizonNs = 60'000'000'000;  // one minute
  RecentLaunches();
  ~RecentLaunches();
  RecentLaunches(RecentLaunches&&) noexcept;
  RecentLaunches& operator=(RecentLaunches&&) noexcept;
  // Add: `correlation`'s launch started at `ts_ns` (a later one replaces it).
  void Add(int64_t correlation, int64_t ts_ns, V value);
  // Find: the value of `correlation`'s launch if it started within the
  // horizon before `now_ns`, else null.
  const V* Find(int64_t correlation, int64_t now_ns);
  size_t size() const;

 private:
  void Expire(int64_t now_ns);
  struct Entry {
    int64_t ts_ns;
    V value;
  };
  absl::flat_hash_map<int64_t, Entry> map_;
  std::deque<std::pair<int64_t, int64_t>> order_;  // (ts, correlation) as added
};
extern template class RecentLaunches<int64_t>;

// HtaTap: one rank's events (in time order) -> HtaResult.
class HtaTap {
 public:
  // `last_step_start_ns`: the start of the rank's last ProfilerStep (aligned
  // ns) when HTA's iteration filter applies (the rank has two or more
  // ProfilerStep#N names), else INT64_MIN.
  explicit HtaTap(int64_t last_step_start_ns) : filter_end_ns_(last_step_start_ns) {}
  // Whether the iteration filter applies (rows need their correlation).
  bool filtering() const { return filter_end_ns_ != INT64_MIN; }

  // Row: an `X` event with a category other than `Trace` (aligned ts;
  // `file_ts_ns`: its ts as the file writes it, for HTA's rounding).
  // `stream`/`correlation`: its args, -1 when absent or not numbers;
  // `type`: ClassifyKernel of its name (cached by the caller); `name_id`
  // keys the per-kernel statistics; `sync_name`: "Event Sync"/"Context Sync".
  // `idle_kernel`: its category is one of HTA's idle breakdown
  // (formats::IsHtaKernelCategory); `file_order`: 1 + the file position of
  // the first such kernel of its tid (TraceData::first_kernel_of_tid), 0 if
  // unknown.
  struct RowFacts {
    int64_t ts_ns = 0, file_ts_ns = 0, dur_ns = 0;
    int64_t stream = -1, correlation = -1;
    KernelType type = KernelType::kOther;
    uint32_t name_id = 0;
    bool sync_name = false;
    bool idle_kernel = false;
    uint64_t file_order = 0;
  };
  void Row(const RowFacts& row);

  // Finish: the results; `name_of(id)` gives a kernel's plain name.
  template <typename NameOf>
  HtaResult Finish(NameOf name_of) {
    HtaResult r = Summarize();
    for (auto& [id, s] : stats_) names_.emplace_back(id, name_of(id));
    KernelRows(&r);
    return r;
  }

 private:
  struct PerName {
    KernelType type;
    KernelStats stats;    // exact durations
    KernelStats rounded;  // HTA's rounded ones (HtaRoundedUs), for the `(us)` columns of a float-ts rank
  };
  HtaResult Summarize() const;
  void KernelRows(HtaResult* r) const;
  // Launch: a kept CPU row of `correlation` started at `ts_ns` (aligned),
  // `ts_us` in HTA's µs.
  void Launch(int64_t correlation, int64_t ts_ns, int64_t ts_us);
  // ExpirePending: gaps waiting longer than the launches' horizon before
  // `now_ns` are taken as without launch (no host wait).
  void ExpirePending(int64_t now_ns);
  // IdleKernel: a kept kernel of HTA's idle breakdown, [start_us, end_us].
  void IdleKernel(const RowFacts& row, int64_t start_us, int64_t end_us);
  std::vector<IdleGaps> IdleRows() const;
  std::string StreamDtype() const;

  // HTA's idle breakdown, per stream: the previous kernel's end and the
  // gaps by (host wait, µs).
  struct IdleStream {
    uint64_t file_order = UINT64_MAX;
    uint64_t kernels = 0;
    int64_t prev_end_us = 0;
    absl::flat_hash_map<std::pair<bool, int64_t>, uint64_t> gaps;
  };
  // A gap whose kernel's launch has not been seen yet (later in time: a
  // clock skew, or none in the trace).
  struct PendingGap {
    int64_t kernel_ns;  // the kernel's start (aligned), for the horizon
    int64_t stream, prev_end_us, gap_us;
  };

  const int64_t filter_end_ns_;
  absl::flat_hash_set<int64_t> kept_correlations_;  // of CPU rows before the filter's end
  bool kept_uncorrelated_ = false;                   // a CPU row without correlation was kept
  BreakdownState exact_, rounded_;
  bool sub_us_ = false;
  uint64_t device_rows_ = 0;
  absl::flat_hash_map<uint32_t, PerName> stats_;  // by name id
  absl::flat_hash_map<int64_t, std::pair<IntervalUnion, uint64_t>> streams_;
  absl::flat_hash_map<int64_t, IdleStream> idle_;
  // correlation -> the HTA µs ts of its CPU row (HTA's index_correlation,
  // within RecentLaunches' horizon), and the gaps waiting for one (in
  // kernel order; `pending_order_`: their correlations, for the horizon).
  RecentLaunches<int64_t> launch_us_;
  absl::flat_hash_map<int64_t, std::vector<PendingGap>> pending_;
  std::deque<std::pair<int64_t, int64_t>> pending_order_;
  int64_t stream_min_ = -1, stream_max_ = -1;  // over every row (HTA's dtype)
  std::vector<std::pair<uint32_t, std::string>> names_;
};

}  // namespace tracemill::analysis
