#include "analysis/hta_breakdowns.h"

#include <algorithm>
#include <cmath>

namespace tracemill::analysis {
namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Python's `re.match(".*X", s)`: X in the first line (`.` stops at \n).
bool InFirstLine(std::string_view s, std::string_view x) {
  return s.substr(0, s.find('\n')).find(x) != std::string_view::npos;
}

// The analysed types' bit in a mask: COMPUTATION 0, COMMUNICATION 1, MEMORY 2
// (the order of HTA's kernel_type_to_analysis, breakdown_analysis.py:69-74).
int TypeIndex(KernelType t) {
  switch (t) {
    case KernelType::kComputation: return 0;
    case KernelType::kCommunication: return 1;
    case KernelType::kMemory: return 2;
    case KernelType::kOther: return -1;
  }
  return -1;
}

// HTA's µs rounding (trace_parser.py:371-388): ts = ceil(ts), end =
// floor(ts + dur), in µs; returned in ns.

// |exactly the types of `mask`| from the unions' measures (inclusion-exclusion).
void ExactSets(const BreakdownState& s, int64_t out[1 << kKernelTypes]) {
  constexpr int kFull = (1 << kKernelTypes) - 1;
  auto u = [&](int mask) { return mask ? s.by_mask[mask].Busy() : 0; };
  // |intersection of the types in m| = sum over nonempty subsets t of m of
  // (-1)^(|t|+1) |union of t|.
  auto inter = [&](int m) {
    int64_t v = 0;
    for (int t = m; t; t = (t - 1) & m) v += (__builtin_popcount(t) % 2 ? 1 : -1) * u(t);
    return v;
  };
  // |exactly m| = sum over supersets t of m of (-1)^(|t|-|m|) |intersection t|.
  for (int m = 1; m <= kFull; ++m) {
    int64_t v = 0;
    for (int t = m; t <= kFull; t = (t + 1) | m)
      v += ((__builtin_popcount(t) - __builtin_popcount(m)) % 2 ? -1 : 1) * inter(t);
    out[m] = v;
  }
}

double Us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

}  // namespace

KernelType ClassifyKernel(std::string_view n) {
  if (StartsWith(n, "nccl") || StartsWith(n, "hip") || StartsWith(n, "hccl") || InFirstLine(n, "ncclKernel"))
    return KernelType::kCommunication;
  if (StartsWith(n, "Memcpy") || StartsWith(n, "hipMemcpy") || StartsWith(n, "Memset") ||
      StartsWith(n, "hipMemset") || StartsWith(n, "dma"))
    return KernelType::kMemory;
  const bool cuda_launch = StartsWith(n, "cuda") && InFirstLine(n.substr(4), "LaunchKernel");
  const bool not_compute = StartsWith(n, "nccl") || InFirstLine(n, "Memcpy") || InFirstLine(n, "Memset") ||
                           InFirstLine(n, "dma") || InFirstLine(n, "Sync") || StartsWith(n, "Stream Wait Event") ||
                           cuda_launch || StartsWith(n, "runFunction") || StartsWith(n, "hip") ||
                           StartsWith(n, "job_exe") || StartsWith(n, "packet") || StartsWith(n, "pe_exe") ||
                           StartsWith(n, "cpum_exe_subgraph") || StartsWith(n, "hccl") ||
                           StartsWith(n, "collective_subgraph_execution");
  return not_compute ? KernelType::kOther : KernelType::kComputation;
}

const char* KernelTypeName(KernelType t) {
  switch (t) {
    case KernelType::kCommunication: return "COMMUNICATION";
    case KernelType::kMemory: return "MEMORY";
    case KernelType::kComputation: return "COMPUTATION";
    case KernelType::kOther: return "OTHER";
  }
  return "OTHER";
}

void IntervalUnion::Add(int64_t start, int64_t end) {
  if (!open) {
    open = true;
    first_start = group_start = start;
    group_end = end;
  } else if (start > group_end) {
    busy += group_end - group_start;
    group_start = start;
    group_end = end;
  } else {
    group_end = std::max(group_end, end);
  }
}

void KernelStats::Add(int64_t dur_ns) {
  ++count;
  sum_ns += dur_ns;
  max_ns = std::max(max_ns, dur_ns);
  min_ns = std::min(min_ns, dur_ns);
  sum_sq += static_cast<__int128>(dur_ns) * dur_ns;
}

void BreakdownState::Add(int type_index, int64_t start, int64_t end) {
  all.Add(start, end);
  if (type_index < 0) return;
  for (int m = 1; m < (1 << kKernelTypes); ++m)
    if (m & (1 << type_index)) by_mask[m].Add(start, end);
}

double HtaPctg(double x, double total, int digits) {
  const double scale = digits == 1 ? 10.0 : 100.0;
  const double v = 100.0 * (x / total);
  return std::nearbyint(v * scale) / scale;  // numpy.round: rint(v * 10^d) / 10^d
}

double MicrosAsParsed(int64_t ns) {
  if (ns == 0) return 0.0;
  const bool negative = ns < 0;
  const uint64_t a = negative ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  // M = round-half-even(a / 1000 * 2^s) with 2^52 <= M < 2^53 (the double
  // is then M * 2^-s): s from a's bit length (1000 ~ 2^10), then
  // corrected. |ns| <= 2^62 (ts_text.h), so s >= 0 and a * 2^s < 2^73.
  const unsigned __int128 lo = static_cast<unsigned __int128>(1000) << 52, hi = lo << 1;
  int s = std::max(0, 63 - (64 - __builtin_clzll(a)));
  unsigned __int128 num = static_cast<unsigned __int128>(a) << s;
  while (num < lo) num = static_cast<unsigned __int128>(a) << ++s;
  while (num >= hi && s > 0) num = static_cast<unsigned __int128>(a) << --s;
  unsigned __int128 m = num / 1000;
  const unsigned __int128 r = num % 1000;
  if (r > 500 || (r == 500 && (m & 1))) ++m;  // to nearest, ties to even (strtod)
  const double v = std::ldexp(static_cast<double>(static_cast<uint64_t>(m)), -s);
  return negative ? -v : v;
}

std::pair<int64_t, int64_t> HtaRoundedUs(int64_t file_ts_ns, int64_t dur_ns) {
  const double ts = MicrosAsParsed(file_ts_ns);
  const double end = ts + MicrosAsParsed(dur_ns);  // float64 addition, as pandas
  return {static_cast<int64_t>(std::ceil(ts)), static_cast<int64_t>(std::floor(end))};
}

void HtaTap::Row(const RowFacts& row) {
  const int64_t ts_ns = row.ts_ns, dur_ns = row.dur_ns, stream = row.stream, correlation = row.correlation;
  const bool gpu_row = (stream >= 0 && correlation >= 0) || row.sync_name;
  if (ts_ns % 1000 != 0) sub_us_ = true;  // HTA: a float `ts` column is rounded
  stream_min_ = std::min(stream_min_, stream);
  stream_max_ = std::max(stream_max_, stream);
  if (filter_end_ns_ != INT64_MIN) {
    // HTA's iteration filter (trace.py:801-846): CPU rows before the last
    // ProfilerStep's start, and the GPU rows launched by one of them.
    if (!gpu_row) {
      if (ts_ns >= filter_end_ns_) return;
      if (correlation >= 0) kept_correlations_.insert(correlation);
      else kept_uncorrelated_ = true;
    } else if (correlation >= 0 ? !kept_correlations_.contains(correlation) : !kept_uncorrelated_) {
      return;
    }
  }
  // HTA's rounded rows are in the file's own µs (its time base and our
  // clock shift not applied): an offset common to the rank's rows, except
  // where the double's steps fall.
  if (!gpu_row && correlation >= 0) Launch(correlation, ts_ns, HtaRoundedUs(row.file_ts_ns, dur_ns).first);
  if (stream == -1) return;
  const auto [start_us, end_us] = HtaRoundedUs(row.file_ts_ns, dur_ns);
  ++device_rows_;
  const int t = TypeIndex(row.type);
  exact_.Add(t, ts_ns, ts_ns + dur_ns);
  rounded_.Add(t, start_us * 1000, end_us * 1000);
  auto& [u, rows] = streams_[stream];
  u.Add(ts_ns, ts_ns + dur_ns);
  ++rows;
  if (row.idle_kernel) IdleKernel(row, start_us, end_us);
  if (t >= 0) {
    auto [it, fresh] = stats_.try_emplace(row.name_id, PerName{row.type, {}, {}});
    it->second.stats.Add(dur_ns);
    it->second.rounded.Add((end_us - start_us) * 1000);
  }
}

template <typename V>
RecentLaunches<V>::RecentLaunches() = default;
template <typename V>
RecentLaunches<V>::~RecentLaunches() = default;
template <typename V>
RecentLaunches<V>::RecentLaunches(RecentLaunches&&) noexcept = default;
template <typename V>
RecentLaunches<V>& RecentLaunches<V>::operator=(RecentLaunches&&) noexcept = default;

template <typename V>
void RecentLaunches<V>::Add(int64_t correlation, int64_t ts_ns, V value) {
  Expire(ts_ns);
  map_[correlation] = Entry{ts_ns, value};
  order_.emplace_back(ts_ns, correlation);
}

template <typename V>
const V* RecentLaunches<V>::Find(int64_t correlation, int64_t now_ns) {
  Expire(now_ns);
  auto it = map_.find(correlation);
  return it == map_.end() ? nullptr : &it->second.value;
}

template <typename V>
size_t RecentLaunches<V>::size() const {
  return map_.size();
}

template <typename V>
void RecentLaunches<V>::Expire(int64_t now_ns) {
  while (!order_.empty() && order_.front().first < now_ns - kHorizonNs) {
    auto it = map_.find(order_.front().second);
    if (it != map_.end() && it->second.ts_ns == order_.front().first) map_.erase(it);
    order_.pop_front();
  }
}

template class RecentLaunches<int64_t>;

void HtaTap::Launch(int64_t correlation, int64_t ts_ns, int64_t ts_us) {
  // HTA joins a kernel to its CPU row's ts (index_correlation): the last
  // such row in the file; here the last in time.
  launch_us_.Add(correlation, ts_ns, ts_us);
  ExpirePending(ts_ns);
  auto it = pending_.find(correlation);
  if (it == pending_.end()) return;
  for (const PendingGap& p : it->second) ++idle_[p.stream].gaps[{ts_us > p.prev_end_us, p.gap_us}];
  pending_.erase(it);
}

void HtaTap::IdleKernel(const RowFacts& row, int64_t start_us, int64_t end_us) {
  // _analyze_idle_time_for_stream (breakdown_analysis.py:746-817), rows in
  // time order (HTA sorts each stream's rows by ts): the gap is ts minus
  // the previous row's end (end_ts.shift(1)); a host wait when the launch's
  // ts is after that end (a NaN ts: no launch, never one).
  IdleStream& s = idle_[row.stream];
  if (row.file_order) s.file_order = std::min(s.file_order, row.file_order);
  const int64_t prev_end = s.prev_end_us;
  s.prev_end_us = end_us;
  if (s.kernels++ == 0) return;  // the first: no gap (NaN), category other
  const int64_t gap = start_us - prev_end;
  if (row.correlation < 0) {
    ++s.gaps[{false, gap}];
  } else if (const int64_t* launch = launch_us_.Find(row.correlation, row.ts_ns)) {
    ++s.gaps[{*launch > prev_end, gap}];
  } else {
    ExpirePending(row.ts_ns);
    pending_[row.correlation].push_back(PendingGap{row.ts_ns, row.stream, prev_end, gap});
    pending_order_.emplace_back(row.ts_ns, row.correlation);
  }
}

void HtaTap::ExpirePending(int64_t now_ns) {
  while (!pending_order_.empty() && pending_order_.front().first < now_ns - RecentLaunches<int64_t>::kHorizonNs) {
    const auto [kernel_ns, correlation] = pending_order_.front();
    pending_order_.pop_front();
    auto it = pending_.find(correlation);
    if (it == pending_.end()) continue;  // its launch came
    std::vector<PendingGap>& gaps = it->second;
    size_t k = 0;
    for (; k < gaps.size() && gaps[k].kernel_ns <= kernel_ns; ++k)
      ++idle_[gaps[k].stream].gaps[{false, gaps[k].gap_us}];
    gaps.erase(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(k));
    if (gaps.empty()) pending_.erase(it);
  }
}

std::vector<IdleGaps> HtaTap::IdleRows() const {
  // A launch never seen: HTA's index_correlation 0 joins the ts of the
  // file's first row (README: not reproduced); here no host wait.
  absl::flat_hash_map<int64_t, IdleStream> idle = idle_;
  for (const auto& [correlation, gaps] : pending_)
    for (const PendingGap& p : gaps) ++idle[p.stream].gaps[{false, p.gap_us}];
  std::vector<IdleGaps> out;
  for (const auto& [stream, s] : idle) {
    if (!s.kernels) continue;
    IdleGaps& g = out.emplace_back();
    g.stream = stream;
    g.file_order = s.file_order == UINT64_MAX ? 0 : s.file_order;
    g.kernels = s.kernels;
    for (const auto& [key, count] : s.gaps) g.gaps.push_back(IdleGaps::Gap{key.first, key.second, count});
    std::sort(g.gaps.begin(), g.gaps.end(), [](const IdleGaps::Gap& a, const IdleGaps::Gap& b) {
      return a.host_wait != b.host_wait ? a.host_wait < b.host_wait : a.gap_us < b.gap_us;
    });
  }
  // HTA's order: each stream's first kernel in the file; unknown ones last.
  std::sort(out.begin(), out.end(), [](const IdleGaps& a, const IdleGaps& b) {
    const uint64_t fa = a.file_order ? a.file_order : UINT64_MAX, fb = b.file_order ? b.file_order : UINT64_MAX;
    return fa != fb ? fa < fb : a.stream < b.stream;
  });
  return out;
}

std::string HtaTap::StreamDtype() const {
  // normalize_gpu_stream_numbers, then pd.to_numeric(downcast="integer").
  for (auto [bits, name] : {std::pair{7, "int8"}, {15, "int16"}, {31, "int32"}})
    if (stream_min_ >= -(int64_t{1} << bits) && stream_max_ < (int64_t{1} << bits)) return name;
  return "int64";
}

HtaResult HtaTap::Summarize() const {
  HtaResult r;
  r.has_device_rows = device_rows_ > 0;
  r.device_rows = device_rows_;
  r.iteration_filter = filter_end_ns_ != INT64_MIN;
  r.rounded = sub_us_;
  const BreakdownState& e = exact_;
  r.kernel_ns = e.all.Span();
  r.idle_ns = r.kernel_ns - e.all.Busy();
  r.compute_ns = e.by_mask[1].Busy();
  r.non_compute_ns = r.kernel_ns - r.compute_ns - r.idle_ns;
  ExactSets(e, r.exact_ns);
  r.comp_ns = e.by_mask[1].Busy();
  r.comm_ns = e.by_mask[2].Busy();
  r.comm_comp_overlap_ns = e.by_mask[1].Busy() + e.by_mask[2].Busy() - e.by_mask[3].Busy();
  const BreakdownState& h = sub_us_ ? rounded_ : exact_;
  r.kernel_us = Us(h.all.Span());
  r.idle_us = Us(h.all.Span() - h.all.Busy());
  r.compute_us = Us(h.by_mask[1].Busy());
  r.non_compute_us = Us(h.all.Span() - h.by_mask[1].Busy() - (h.all.Span() - h.all.Busy()));
  int64_t exact_h[1 << kKernelTypes] = {};
  ExactSets(h, exact_h);
  for (int m = 0; m < (1 << kKernelTypes); ++m) r.exact_us[m] = Us(exact_h[m]);
  r.comm_us = Us(h.by_mask[2].Busy());
  r.comm_comp_overlap_us = Us(h.by_mask[1].Busy() + h.by_mask[2].Busy() - h.by_mask[3].Busy());
  for (const auto& [stream, su] : streams_)
    r.streams.push_back(HtaResult::Stream{stream, su.first.Span(), su.first.Busy(), su.second});
  std::sort(r.streams.begin(), r.streams.end(), [](const auto& a, const auto& b) { return a.stream < b.stream; });
  r.idle = IdleRows();
  r.stream_dtype = StreamDtype();
  return r;
}

namespace {

// One row of HTA's per-name table before grouping (µs as HTA).
struct NameRow {
  std::string name;
  const KernelStats* s;  // HTA's durations: exact, or rounded for a float-ts rank
  const KernelStats* exact;
  double sum_us;
};

double StdDev(const KernelStats& s) {
  if (s.count < 2) return 0;  // pandas' NaN, filled with 0 (breakdown_analysis.py:607)
  const __int128 n = s.count;
  const __int128 num = n * s.sum_sq - static_cast<__int128>(s.sum_ns) * s.sum_ns;  // n(n-1) var, ns^2
  const double var = static_cast<double>(num) / (static_cast<double>(n) * static_cast<double>(n - 1));
  return std::sqrt(std::max(var, 0.0)) / 1000.0;
}

// numpy's linear quantile (np.quantile, method "linear", with its _lerp).
double Quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double t = pos - static_cast<double>(lo), a = sorted[lo], b = sorted[hi];
  return t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t;
}

}  // namespace

void HtaTap::KernelRows(HtaResult* r) const {
  constexpr size_t kNumKernels = 10;     // get_gpu_kernel_breakdown's num_kernels
  constexpr double kDurationRatio = 0.8;  // and duration_ratio
  for (KernelType type : {KernelType::kComputation, KernelType::kCommunication, KernelType::kMemory}) {
    std::vector<NameRow> rows;
    for (const auto& [id, name] : names_) {
      const PerName& p = stats_.at(id);
      const KernelStats& h = sub_us_ ? p.rounded : p.stats;
      if (p.type == type) rows.push_back(NameRow{name, &h, &p.stats, Us(h.sum_ns)});
    }
    // HTA sorts by sum with an unstable sort; ties here go by name.
    std::sort(rows.begin(), rows.end(), [](const NameRow& a, const NameRow& b) {
      return a.sum_us != b.sum_us ? a.sum_us > b.sum_us : a.name < b.name;
    });
    if (rows.size() <= kNumKernels) {
      for (const NameRow& n : rows)
        r->kernels.push_back(KernelRow{type, n.name, n.sum_us, Us(n.s->max_ns), Us(n.s->min_ns),
                                       n.sum_us / static_cast<double>(n.s->count), StdDev(*n.s), n.exact->count,
                                       n.exact->sum_ns});
      continue;
    }
    // More than num_kernels names: past the 80% quantile of the running sum,
    // or past the first ten, a name joins "others"; then every row is
    // re-aggregated over its `sum` column (a named row: sum = max = min =
    // mean, std 0; "others": the statistics of its names' sums).
    std::vector<double> cumsum;
    double run = 0;
    for (const NameRow& n : rows) cumsum.push_back(run += n.sum_us);
    std::vector<double> sorted = cumsum;
    std::sort(sorted.begin(), sorted.end());
    const double q = Quantile(sorted, kDurationRatio);
    KernelStats others;
    std::vector<double> other_sums;
    for (size_t k = 0; k < rows.size(); ++k) {
      const NameRow& n = rows[k];
      if (cumsum[k] > q || k >= kNumKernels) {
        others.count += n.exact->count;
        others.sum_ns += n.exact->sum_ns;
        other_sums.push_back(n.sum_us);
        continue;
      }
      r->kernels.push_back(KernelRow{type, n.name, n.sum_us, n.sum_us, n.sum_us, n.sum_us, 0, n.exact->count,
                                     n.exact->sum_ns});
    }
    if (other_sums.empty()) continue;
    double sum = 0, mx = other_sums[0], mn = other_sums[0];
    for (double v : other_sums) sum += v, mx = std::max(mx, v), mn = std::min(mn, v);
    const double mean = sum / static_cast<double>(other_sums.size());
    double ss = 0;
    for (double v : other_sums) ss += (v - mean) * (v - mean);
    const double sd = other_sums.size() > 1 ? std::sqrt(ss / static_cast<double>(other_sums.size() - 1)) : 0;
    r->kernels.push_back(KernelRow{type, "others", sum, mx, mn, mean, sd, others.count, others.sum_ns});
  }
}

}  // namespace tracemill::analysis
