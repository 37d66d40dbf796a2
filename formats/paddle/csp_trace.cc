#include "formats/paddle/csp_trace.h"

#include <string.h>

#include <algorithm>

#include "absl/strings/str_format.h"
#include "formats/common/json_out.h"
#include "formats/common/ts_text.h"

namespace tracemill::formats {
namespace {

using namespace json_out;

// CrossStackProfiler's fixed pids: pid 0 pipeline, 1..5 DCGM, 6..7 network
// (which the reference never writes), ops from 8 (PIPELINEINFO_TRACE_NUM +
// DCGMINFO_TRACE_NUM + NETINFO_TRACE_NUM); lane names count from 09 for
// every rank.
constexpr int64_t kNetTxPid = 6;
constexpr int64_t kNetRxPid = 7;
constexpr int64_t kFirstOpPid = 8;
constexpr int kFirstLaneNumber = 9;

using Kind = CspLanes::Kind;

// Event framing: one event per line, comma-separated.
class Events {
 public:
  Events(JsonOut* out, CspTimeUnit unit) : out_(out), micros_(unit == CspTimeUnit::kMicros) {}
  char* Begin(size_t n) {
    char* p = out_->Reserve(n + 2);
    if (!first_) *p++ = ',';
    *p++ = '\n';
    first_ = false;
    return p;
  }
  void End(char* p) {
    out_->Commit(p);
    ++count_;
  }
  char* Time(char* p, int64_t ns) const { return micros_ ? FormatNanosAsMicros(ns, p) : I64(p, ns); }
  void ProcessName(int64_t pid, std::string_view name) {
    char* p = Begin(96 + MaxStringBytes(name.size()));
    p = Lit(p, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":");
    p = I64(p, pid);
    p = Lit(p, ",\"args\":{\"name\":");
    p = String(p, name);
    p = Lit(p, "}}");
    End(p);
  }
  uint64_t count() const { return count_; }

 private:
  JsonOut* out_;
  bool micros_;
  bool first_ = true;
  uint64_t count_ = 0;
};

void WriteSpans(const std::vector<PipelineSpan>& spans, Events* ev) {
  ev->ProcessName(0, "01_pipeLineInfo");
  for (const PipelineSpan& s : spans) {
    const bool fwd = s.stage == PipelineStage::kForward;
    char* p = ev->Begin(256);
    p = fwd ? Lit(p, "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"forward\",\"pid\":0,\"tid\":")
            : Lit(p, "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"backward\",\"pid\":0,\"tid\":");
    p = I64(p, s.rank);
    p = Lit(p, ",\"ts\":");
    p = ev->Time(p, static_cast<int64_t>(s.ts_ns));
    p = Lit(p, ",\"dur\":");
    p = ev->Time(p, s.dur_ns);
    p = fwd ? Lit(p, ",\"args\":{\"name\":\"forward\"") : Lit(p, ",\"args\":{\"name\":\"backward\"");
    if (s.mem_bytes > 0) {
      p = Lit(p, ",\"mem_bytes\":");
      p = U64(p, s.mem_bytes);
    }
    p = fwd ? Lit(p, ",\"detail_info\":\"forward\"},\"cname\":\"bad\"}")
            : Lit(p, ",\"detail_info\":\"backward\"},\"cname\":\"good\"}");
    ev->End(p);
  }
}

// Second pass over a displayed rank: every Event as an X event on its lane,
// MemEvents collected for the counters (written after every rank's ops, as
// the reference orders them).
class OpWriter {
 public:
  OpWriter(Events* ev, const CspLanes& lanes, int64_t pid_base, int64_t gpu,
           std::vector<CspScratch::MemEntry>* mem, CspRankStats* st)
      : ev_(ev), lanes_(lanes), pid_base_(pid_base), gpu_(gpu), mem_(mem), st_(st) {}

  void OnEvent(const PaddleEvent& e) {
    const int32_t lane =
        lanes_.Find(e.type == PaddleEventType::kCpu ? Kind::kCpu : Kind::kGpu, e.device_id);
    char* p = ev_->Begin(160 + 2 * MaxStringBytes(e.name.size()) +
                         MaxStringBytes(e.detail_info.size()));
    p = Lit(p, "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":");
    char* const name = p;
    p = String(p, e.name);
    const size_t name_len = static_cast<size_t>(p - name);
    p = Lit(p, ",\"pid\":");
    p = I64(p, pid_base_ + lane);
    p = Lit(p, ",\"tid\":");
    p = I64(p, e.sub_device_id);
    p = Lit(p, ",\"ts\":");
    p = ev_->Time(p, static_cast<int64_t>(e.start_ns));
    p = Lit(p, ",\"dur\":");
    p = ev_->Time(p, static_cast<int64_t>(e.end_ns - e.start_ns));
    p = Lit(p, ",\"args\":{\"name\":");
    std::memcpy(p, name, name_len);  // the escaped name, once more
    p += name_len;
    if (e.memcopy_bytes > 0) {
      p = Lit(p, ",\"mem_bytes\":");
      p = U64(p, e.memcopy_bytes);
    }
    if (!e.detail_info.empty()) {
      p = Lit(p, ",\"detail_info\":");
      p = String(p, e.detail_info);
    }
    p = Lit(p, "}}");
    ev_->End(p);
    ++st_->events_written;
  }

  // CUDA and pinned memory of another GPU is skipped, as the reference does.
  void OnMemEvent(const PaddleMemEvent& m) {
    Kind kind = m.place == PaddleMemPlace::kCpuPlace          ? Kind::kMemCpu
                : m.place == PaddleMemPlace::kCudaPinnedPlace ? Kind::kMemPinned
                                                              : Kind::kMemGpu;
    if (kind != Kind::kMemCpu && static_cast<int64_t>(m.device_id) != gpu_) {
      ++st_->mem_events_other_device;
      return;
    }
    const uint32_t lane = static_cast<uint32_t>(lanes_.Find(kind, m.device_id));
    // Sizes past int64 are corrupt; held at INT64_MAX so the delta negates.
    const int64_t bytes = static_cast<int64_t>(std::min<uint64_t>(m.bytes, INT64_MAX));
    mem_->push_back({m.start_ns, seq_++, lane, bytes});
    mem_->push_back({m.end_ns, seq_++, lane, -bytes});
    ++st_->mem_events_written;
  }

 private:
  Events* ev_;
  const CspLanes& lanes_;
  int64_t pid_base_, gpu_;
  std::vector<CspScratch::MemEntry>* mem_;
  CspRankStats* st_;
  uint32_t seq_ = 0;
};

// Memory counters. Deviation from the reference (which sums every place of
// a rank into one total and writes it on the pid of whichever entry came
// last at that time, and only for trainer < display_size, i.e. group 0):
// one running total per lane (rank, place, device), for every group.
// Allocation at start_ns (+bytes), release at end_ns (-bytes); entries at the
// same ts are merged (one counter per touched lane), as the reference merges
// its single total.
void WriteMemory(std::vector<CspScratch::MemEntry>& mem, size_t lane_count, int64_t pid_base,
                 Events* ev, CspScratch* sc, CspRankStats* st) {
  if (mem.empty()) return;
  std::sort(mem.begin(), mem.end(), [](const CspScratch::MemEntry& a, const CspScratch::MemEntry& b) {
    return a.ts_ns != b.ts_ns ? a.ts_ns < b.ts_ns : a.seq < b.seq;
  });
  sc->totals.assign(lane_count, 0);
  auto& touched = sc->touched;
  for (size_t i = 0; i < mem.size();) {
    const uint64_t ts = mem[i].ts_ns;
    touched.clear();
    for (; i < mem.size() && mem[i].ts_ns == ts; ++i) {
      int64_t& total = sc->totals[mem[i].lane];
      if (__builtin_add_overflow(total, mem[i].delta, &total))  // corrupt sizes: saturate
        total = mem[i].delta > 0 ? INT64_MAX : INT64_MIN;
      touched.push_back(mem[i].lane);
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (uint32_t lane : touched) {
      char* p = ev->Begin(160);
      p = Lit(p, "{\"ph\":\"C\",\"cat\":\"Memory\",\"name\":\"Memory\",\"pid\":");
      p = I64(p, pid_base + lane);
      p = Lit(p, ",\"tid\":0,\"ts\":");
      p = ev->Time(p, static_cast<int64_t>(ts));
      p = Lit(p, ",\"args\":{\"0\":");
      p = I64(p, sc->totals[lane]);
      p = Lit(p, "}}");
      ev->End(p);
      ++st->counters_written;
    }
  }
}

struct DcgmArg {
  std::string_view name;
  int column;  // DcgmColumn, or -1 for FB_USED_RATIO
};
struct DcgmMetric {
  std::string_view name;
  int64_t pid;
  int nargs;
  DcgmArg args[4];
};

void WriteDcgm(const CspTraceInput& in, Events* ev, CspTraceStats* stats) {
  // dcgmMetricParameterMap of CspFileReader.py, in its order; pids 1..5.
  static const DcgmMetric kMetrics[] = {
      {"02_gpuUtility", 1, 2, {{"GPUTL", static_cast<int>(DcgmColumn::kGputl)},
                            {"GRACT", static_cast<int>(DcgmColumn::kGract)}}},
      {"03_smUtility", 2, 2, {{"SMACT", static_cast<int>(DcgmColumn::kSmact)},
                           {"SMOCC", static_cast<int>(DcgmColumn::kSmocc)}}},
      {"04_memUtility", 3, 2, {{"FB_USED_RATIO", -1}, {"DRAMA", static_cast<int>(DcgmColumn::kDrama)}}},
      {"05_txUtility", 4, 4, {{"NVLTX", static_cast<int>(DcgmColumn::kNvltx)},
                           {"NVLRX", static_cast<int>(DcgmColumn::kNvlrx)},
                           {"PCITX", static_cast<int>(DcgmColumn::kPcitx)},
                           {"PCIRX", static_cast<int>(DcgmColumn::kPcirx)}}},
      {"06_calUtility", 5, 3, {{"FP32A", static_cast<int>(DcgmColumn::kFp32a)},
                            {"FP16A", static_cast<int>(DcgmColumn::kFp16a)},
                            {"TENSO", static_cast<int>(DcgmColumn::kTenso)}}},
  };
  for (const DcgmMetric& m : kMetrics) ev->ProcessName(m.pid, m.name);
  const bool micros = in.unit == CspTimeUnit::kMicros;
  for (const CspDcgmTrainer& t : in.dcgm) {
    for (const DcgmSample* s : t.samples) {
      const double fbttl = s->value(DcgmColumn::kFbttl);
      // Deviation: FBTTL = 0 gives null, never Infinity/NaN.
      const double ratio = fbttl != 0 ? s->value(DcgmColumn::kFbusd) / fbttl : NAN;
      if (fbttl == 0) ++stats->fb_ratio_null;
      const int64_t ts = micros ? s->ts_ns : s->ts_float_ns;
      for (const DcgmMetric& m : kMetrics) {
        char* p = ev->Begin(512);
        p = Lit(p, "{\"name\":\"");
        p = Bytes(p, m.name);
        p = Lit(p, "\",\"pid\":");
        p = I64(p, m.pid);
        p = Lit(p, ",\"ts\":");
        p = ev->Time(p, ts);
        p = Lit(p, ",\"cat\":\"");
        p = Bytes(p, m.name);
        p = Lit(p, "\",\"tid\":\"");
        p = I64(p, in.group);
        *p++ = '_';
        p = I64(p, t.slot);
        p = Lit(p, "\",\"ph\":\"C\",\"id\":");
        p = I64(p, t.slot);
        p = Lit(p, ",\"args\":{");
        bool first = true;
        for (int a = 0; a < m.nargs; ++a) {
          const int col = m.args[a].column;
          if (!first) *p++ = ',';
          first = false;
          *p++ = '"';
          p = Bytes(p, m.args[a].name);
          p = Lit(p, "\":");
          double v = col < 0 ? ratio : s->values[col];
          if (col == static_cast<int>(DcgmColumn::kGputl)) v = v / 100.0;  // percent -> ratio
          p = Double(p, v);
        }
        p = Lit(p, "}}");
        ev->End(p);
      }
      ++stats->dcgm_rows;
    }
  }
}

// Network counters: NetFileReader.py's lanes and events (`pid`, `ts` in ns
// and `id` = trainer set on the line's own object), on pids 6 and 7.
void WriteNet(const CspTraceInput& in, Events* ev, CspTraceStats* stats) {
  ev->ProcessName(kNetTxPid, "01_tx");
  ev->ProcessName(kNetRxPid, "02_rx");
  for (const CspNetTrainer& t : in.net) {
    for (const NetSample& s : t.file->samples) {
      const std::string_view args = t.file->args(s);
      const bool tx = s.dir == NetDirection::kTx;
      char* p = ev->Begin(128 + args.size());
      p = tx ? Lit(p, "{\"name\":\"tx\",\"ph\":\"C\",\"pid\":") : Lit(p, "{\"name\":\"rx\",\"ph\":\"C\",\"pid\":");
      p = I64(p, tx ? kNetTxPid : kNetRxPid);
      p = Lit(p, ",\"ts\":");
      p = ev->Time(p, s.ts_ns);
      p = Lit(p, ",\"id\":");
      p = I64(p, t.trainer);
      if (!args.empty()) {
        p = Lit(p, ",\"args\":");
        p = Bytes(p, args);
      }
      *p++ = '}';
      ev->End(p);
      ++stats->net_rows;
    }
  }
}

}  // namespace

CspLanes::CspLanes() { Clear(); }

void CspLanes::Clear() {
  std::fill(&fast_[0][0], &fast_[0][0] + static_cast<int>(Kind::kCount) * kFast, -1);
  lanes_.clear();
}

int32_t CspLanes::FindSlow(Kind kind, int64_t device) const {
  for (size_t i = 0; i < lanes_.size(); ++i)
    if (lanes_[i].kind == kind && lanes_[i].device == device) return static_cast<int32_t>(i);
  return -1;
}

int32_t CspLanes::Add(Kind kind, int64_t device) {
  int32_t i = Find(kind, device);
  if (i >= 0) return i;
  i = static_cast<int32_t>(lanes_.size());
  lanes_.push_back({kind, device, kFirstLaneNumber + i});
  if (device >= -1 && device < kFast - 1) fast_[static_cast<int>(kind)][device + 1] = i;
  return i;
}

std::string CspLanes::Name(size_t i, int64_t rank) const {
  const Lane& l = lanes_[i];
  const std::string label = CspRankLabel(rank);
  switch (l.kind) {
    case Kind::kCpu:
      return l.device == -1 ? absl::StrFormat("%02d_%s:cuda_api", l.line, label)
                            : absl::StrFormat("%02d_%s:cpu:block:%d", l.line, label, l.device);
    case Kind::kGpu:
      return absl::StrFormat("%02d_%s:gpu:%d", l.line, label, l.device);
    case Kind::kMemGpu:
      return absl::StrFormat("%02d_memory usage on %s:gpu:%d", l.line, label, l.device);
    case Kind::kMemCpu:
      return absl::StrFormat("%02d_memory usage on %s:cpu:%d", l.line, label, l.device);
    default:
      return absl::StrFormat("%02d_memory usage on %s:cudapinnedplace:%d", l.line, label, l.device);
  }
}

namespace {

// First pass: lanes as CrossStackProfiler's `_allocate_pids` (ops in order
// of first appearance, then memory lanes, each MemEvent also creating the
// `cpu:0`, `gpu:0` and `cudapinnedplace:0` lanes), markers, time span.
// Deviation: a GPU kernel on a device other than this output's GPU gets a
// `gpu:<d>` lane (the reference raises KeyError).
class PlanSink {
 public:
  PlanSink(int64_t gpu, CspRankPlan* plan) : gpu_(gpu), plan_(plan) {}
  void OnEvent(const PaddleEvent& e) {
    if (e.type == PaddleEventType::kCpu) {
      plan_->lanes.Add(Kind::kCpu, e.device_id);
    } else if (plan_->lanes.Find(Kind::kGpu, e.device_id) < 0) {
      if (e.device_id != gpu_) ++plan_->gpu_lanes_other_device;
      plan_->lanes.Add(Kind::kGpu, e.device_id);
    }
    PipelineMarker m;
    if (AsPipelineMarker(e, &m)) {
      m.seq = static_cast<uint32_t>(plan_->markers.size());
      plan_->markers.push_back(m);
    }
    plan_->first_ns = std::min(plan_->first_ns, e.start_ns);
    plan_->last_ns = std::max(plan_->last_ns, e.end_ns);
  }
  void OnMemEvent(const PaddleMemEvent& m) {
    plan_->first_ns = std::min(plan_->first_ns, m.start_ns);  // its counter samples: at start and end
    plan_->last_ns = std::max(plan_->last_ns, m.end_ns);
    const int64_t dev = m.device_id;
    auto request = [&](Kind k, int64_t d) {
      // Deduplicated in order of first request (checked against the few
      // requested so far: a rank has a handful of memory lanes).
      for (const auto& r : plan_->mem_order)
        if (r.first == k && r.second == d) return;
      plan_->mem_order.emplace_back(k, d);
    };
    switch (m.place) {
      case PaddleMemPlace::kCudaPlace:
        if (dev == gpu_) request(Kind::kMemGpu, dev);
        break;
      case PaddleMemPlace::kCpuPlace:
        request(Kind::kMemCpu, dev);
        break;
      case PaddleMemPlace::kCudaPinnedPlace:
        if (dev == gpu_) request(Kind::kMemPinned, dev);
        break;
    }
    request(Kind::kMemCpu, 0);
    request(Kind::kMemGpu, 0);
    request(Kind::kMemPinned, 0);
  }

 private:
  int64_t gpu_;
  CspRankPlan* plan_;
};

}  // namespace

void PlanCspRank(std::string_view bytes, int64_t gpu, CspRankPlan* plan) {
  plan->lanes.Clear();
  plan->markers.clear();
  plan->mem_order.clear();
  plan->first_ns = UINT64_MAX;
  plan->last_ns = 0;
  plan->gpu_lanes_other_device = 0;
  PlanSink sink(gpu, plan);
  plan->parse = ParsePaddleProfile(bytes, sink);
  for (const auto& [kind, dev] : plan->mem_order) plan->lanes.Add(kind, dev);
}

bool AsPipelineMarker(const PaddleEvent& e, PipelineMarker* m) {
  if (e.name != kCspMarkerName) return false;
  const std::string_view d = e.detail_info;
  if (d == "marker_forward_B") {
    m->stage = PipelineStage::kForward;
    m->begin = true;
  } else if (d == "marker_forward_E") {
    m->stage = PipelineStage::kForward;
    m->begin = false;
  } else if (d == "marker_backward_B") {
    m->stage = PipelineStage::kBackward;
    m->begin = true;
  } else if (d == "marker_backward_E") {
    m->stage = PipelineStage::kBackward;
    m->begin = false;
  } else {
    return false;
  }
  m->ts_ns = e.start_ns;
  m->mem_bytes = e.memcopy_bytes;
  return true;
}

namespace {

// Decodes only the Events whose body holds the marker name (see header).
class MarkerScanSink {
 public:
  MarkerScanSink(std::string_view bytes, std::vector<PipelineMarker>* out)
      : bytes_(bytes), out_(out) {
    Find(reinterpret_cast<const uint8_t*>(bytes.data()));
  }
  bool WantEvent(const uint8_t* body, const uint8_t* body_end) {
    if (next_ < body) Find(body);
    return next_ < body_end;
  }
  void SkipMemEvents() {}
  void OnEvent(const PaddleEvent& e) {
    PipelineMarker m;
    if (AsPipelineMarker(e, &m)) {
      m.seq = seq_++;
      out_->push_back(m);
    }
  }
  void OnMemEvent(const PaddleMemEvent&) {}

 private:
  // next_ = the first occurrence of the name at or after `from` (or the end).
  void Find(const uint8_t* from) {
    const char* base = bytes_.data();
    const size_t off = static_cast<size_t>(reinterpret_cast<const char*>(from) - base);
    const void* hit = off < bytes_.size() ? ::memmem(base + off, bytes_.size() - off,
                                                     kCspMarkerName.data(), kCspMarkerName.size())
                                          : nullptr;
    next_ = hit ? static_cast<const uint8_t*>(hit)
                : reinterpret_cast<const uint8_t*>(base + bytes_.size());
  }

  std::string_view bytes_;
  std::vector<PipelineMarker>* out_;
  const uint8_t* next_ = nullptr;
  uint32_t seq_ = 0;
};

}  // namespace

PaddleParseResult ScanPipelineMarkers(std::string_view bytes, std::vector<PipelineMarker>* markers) {
  MarkerScanSink sink(bytes, markers);
  return ParsePaddleProfile(bytes, sink);
}

MarkerPairing PairPipelineMarkers(int64_t rank, std::vector<PipelineMarker>* markers,
                                  std::vector<PipelineSpan>* spans) {
  MarkerPairing r;
  r.markers = markers->size();
  std::sort(markers->begin(), markers->end(), [](const PipelineMarker& a, const PipelineMarker& b) {
    return a.ts_ns != b.ts_ns ? a.ts_ns < b.ts_ns : a.seq < b.seq;
  });
  const PipelineMarker* open = nullptr;
  for (const PipelineMarker& m : *markers) {
    if (m.begin) {
      if (open) ++r.dropped_begin_without_end;  // nested or repeated B
      open = &m;
      continue;
    }
    if (!open) {
      ++r.dropped_end_without_begin;  // also the second of two E in a row
      continue;
    }
    if (open->stage != m.stage) {
      r.dropped_mismatched += 2;
      open = nullptr;
      continue;
    }
    PipelineSpan s;
    s.rank = rank;
    s.ts_ns = open->ts_ns;
    s.dur_ns = static_cast<int64_t>(m.ts_ns - open->ts_ns);
    s.mem_bytes = open->mem_bytes;
    s.stage = m.stage;
    spans->push_back(s);
    ++r.spans;
    open = nullptr;
  }
  if (open) ++r.dropped_begin_without_end;
  return r;
}

void StepsOfPipelineSpans(const PipelineSpan* spans, size_t n, std::vector<StepSpan>* steps) {
  int64_t step = -1;
  for (size_t k = 0; k < n; ++k) {
    const PipelineSpan& sp = spans[k];
    const int64_t start = static_cast<int64_t>(std::min<uint64_t>(sp.ts_ns, kMaxAbsTimeNs));
    const int64_t end = std::clamp(start + sp.dur_ns, -kMaxAbsTimeNs, kMaxAbsTimeNs);
    if (sp.stage == PipelineStage::kForward) {
      steps->push_back(StepSpan{++step, start, end});
    } else if (step >= 0) {
      steps->back().end_ns = std::max(steps->back().end_ns, end);
    }
  }
}

std::string CspRankLabel(int64_t rank) { return absl::StrFormat("trainerRank.%03d", rank); }

absl::Status WriteCspTrace(const CspTraceInput& in, OutputFile* out, CspScratch* scratch,
                           CspTraceStats* stats) {
  JsonOut json(out, &scratch->json);
  {
    std::string head = "{\"otherData\":";
    head.append(in.other_data_json.empty() ? "{}" : in.other_data_json);
    head.append(",\"traceEvents\":[");
    json.Append(head);
  }
  Events ev(&json, in.unit);
  stats->ranks.assign(in.ranks.size(), CspRankStats{});
  if (in.spans) {
    WriteSpans(*in.spans, &ev);
    stats->spans = in.spans->size();
  }
  // Lanes of every displayed rank first (all metadata before the events, as
  // the reference's per-output formatter does); pids run on across ranks.
  std::vector<int64_t> pid_base(in.ranks.size());
  int64_t next_pid = kFirstOpPid;
  for (size_t k = 0; k < in.ranks.size(); ++k) {
    pid_base[k] = next_pid;
    const CspLanes& lanes = in.ranks[k].plan->lanes;
    for (size_t i = 0; i < lanes.lanes().size(); ++i)
      ev.ProcessName(next_pid + static_cast<int64_t>(i), lanes.Name(i, in.ranks[k].rank));
    next_pid += static_cast<int64_t>(lanes.lanes().size());
  }
  // Second pass over each rank: its ops; memory counters after all ops.
  if (scratch->mem.size() < in.ranks.size()) scratch->mem.resize(in.ranks.size());
  for (size_t k = 0; k < in.ranks.size(); ++k) {
    scratch->mem[k].clear();
    OpWriter w(&ev, in.ranks[k].plan->lanes, pid_base[k], in.gpu, &scratch->mem[k], &stats->ranks[k]);
    ParsePaddleProfile(in.ranks[k].bytes, w);
  }
  for (size_t k = 0; k < in.ranks.size(); ++k)
    WriteMemory(scratch->mem[k], in.ranks[k].plan->lanes.lanes().size(), pid_base[k], &ev, scratch,
                &stats->ranks[k]);
  if (in.dcgm_lanes) WriteDcgm(in, &ev, stats);
  if (in.net_lanes) WriteNet(in, &ev, stats);
  json.Append("\n]}\n");
  json.Flush();
  stats->events = ev.count();
  return json.status();
}

}  // namespace tracemill::formats
