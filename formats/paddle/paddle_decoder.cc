#include "formats/paddle/paddle_decoder.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "formats/common/json_text.h"
#include "formats/common/ts_text.h"
#include "formats/paddle/csp_trace.h"
#include "formats/paddle/paddle_profile.h"

namespace tracemill::formats {
namespace {

// Pushes decoded messages into the builder (PaddleProfile -> TraceBuilder).
class TraceSink {
 public:
  explicit TraceSink(TraceBuilder* b) : b_(b) {
    ph_x_ = b_->InternString("X");
    ph_c_ = b_->InternString("C");
    cat_op_ = b_->InternString("Op");
    memory_ = b_->InternString("Memory");
  }

  void OnEvent(const PaddleEvent& e) {
    ++events_;
    // Times are uint64 on the wire; kept ones are within 2^62 ns like every
    // input's (ts_text.h), so the duration fits too.
    if (!InRange(e.start_ns)) {
      ++bad_ts_;
      return;
    }
    if (PipelineMarker m; AsPipelineMarker(e, &m)) {
      m.seq = static_cast<uint32_t>(markers_.size());
      markers_.push_back(m);
    }
    if (e.end_ns < e.start_ns || !InRange(e.end_ns)) {
      ++bad_dur_;
      return;
    }
    const bool cpu = e.type == PaddleEventType::kCpu;
    const uint32_t pid = Lane(cpu ? (e.device_id == -1 ? "cuda_api" : "cpu:block:") : "gpu:",
                              e.device_id, cpu && e.device_id == -1);
    auto [it, inserted] = names_.try_emplace(e.name, 0);
    if (inserted) {
      scratch_.clear();
      AppendJsonString(e.name, &scratch_);  // quoted, escaped, U+FFFD for bad UTF-8
      std::string_view quoted = b_->arena().Copy(scratch_);
      it->second = static_cast<uint32_t>(quoted_.size());
      quoted_.push_back(quoted);
      ids_.push_back(b_->InternString(quoted.substr(1, quoted.size() - 2)));
    }
    std::string& rest = *b_->arena().AppendBuffer();
    rest.append("\"args\":{\"name\":");
    rest.append(quoted_[it->second]);
    if (e.memcopy_bytes > 0) absl::StrAppend(&rest, ",\"mem_bytes\":", e.memcopy_bytes);
    if (!e.detail_info.empty()) {
      rest.append(",\"detail_info\":");
      AppendJsonString(e.detail_info, &rest);
    }
    rest.push_back('}');
    std::string_view r = b_->arena().Commit();
    Event ev{};
    ev.ts_ns = static_cast<int64_t>(e.start_ns);
    ev.dur_ns = static_cast<int64_t>(e.end_ns - e.start_ns);
    ev.rest = r.data();
    ev.rest_len = static_cast<uint32_t>(r.size());
    ev.name = ids_[it->second];
    ev.cat = cat_op_;
    ev.ph = ph_x_;
    ev.pid = pid;
    ev.tid = Tid(e.sub_device_id);
    ev.phase = 'X';
    ev.flags = kHasTs | kHasDur | kHasPid | kHasTid;
    b_->AddEvent(ev);
  }

  void OnMemEvent(const PaddleMemEvent& m) {
    ++mem_events_;
    if (!InRange(m.start_ns) || !InRange(m.end_ns)) {
      ++bad_ts_;
      return;
    }
    const char* place = m.place == PaddleMemPlace::kCpuPlace          ? "memory usage on cpu:"
                        : m.place == PaddleMemPlace::kCudaPinnedPlace ? "memory usage on cudapinnedplace:"
                                                                      : "memory usage on gpu:";
    const uint32_t pid = Lane(place, m.device_id, false);
    mem_.push_back({m.start_ns, seq_++, pid, static_cast<__int128>(m.bytes)});
    mem_.push_back({m.end_ns, seq_++, pid, -static_cast<__int128>(m.bytes)});
  }

  // Emits the memory counters: per lane, the running total at each distinct time.
  void Finish() {
    std::sort(mem_.begin(), mem_.end());
    // Exact running totals (uint64 sizes cannot overflow 128 bits), written
    // within int64 (a total past it comes from corrupt sizes).
    std::map<uint32_t, __int128> total;
    for (size_t i = 0; i < mem_.size();) {
      const uint64_t ts = std::get<0>(mem_[i]);
      std::map<uint32_t, bool> touched;
      for (; i < mem_.size() && std::get<0>(mem_[i]) == ts; ++i) {
        total[std::get<2>(mem_[i])] += std::get<3>(mem_[i]);
        touched[std::get<2>(mem_[i])] = true;
      }
      for (const auto& [pid, unused] : touched) {
        std::string& rest = *b_->arena().AppendBuffer();
        const __int128 t = std::clamp<__int128>(total[pid], INT64_MIN, INT64_MAX);
        absl::StrAppend(&rest, "\"args\":{\"bytes\":", static_cast<int64_t>(t), "}");
        std::string_view r = b_->arena().Commit();
        Event ev{};
        ev.ts_ns = static_cast<int64_t>(ts);
        ev.rest = r.data();
        ev.rest_len = static_cast<uint32_t>(r.size());
        ev.name = memory_;
        ev.ph = ph_c_;
        ev.pid = pid;
        ev.phase = 'C';
        ev.flags = kHasTs | kHasPid;
        b_->AddEvent(ev);
      }
    }
  }

  uint64_t events() const { return events_; }
  uint64_t mem_events() const { return mem_events_; }
  uint64_t bad_ts() const { return bad_ts_; }
  std::vector<PipelineMarker>& markers() { return markers_; }
  uint64_t bad_dur() const { return bad_dur_; }

 private:
  static bool InRange(uint64_t ns) { return ns <= static_cast<uint64_t>(kMaxAbsTimeNs); }

  // The process of lane `prefix` + device ("gpu:3"), by a string pid token.
  uint32_t Lane(const char* prefix, int64_t device, bool no_device) {
    auto key = std::make_pair(std::string_view(prefix), device);
    auto it = lanes_.find(key);
    if (it != lanes_.end()) return it->second;
    std::string token = absl::StrCat("\"", prefix, no_device ? "" : absl::StrCat(device), "\"");
    const uint32_t pid = b_->InternPid(b_->arena().Copy(token));
    lanes_.emplace(key, pid);
    return pid;
  }
  uint32_t Tid(int64_t sub_device) {
    auto it = tids_.find(sub_device);
    if (it != tids_.end()) return it->second;
    const uint32_t id = b_->InternToken(b_->arena().Copy(absl::StrCat(sub_device)));
    tids_.emplace(sub_device, id);
    return id;
  }

  TraceBuilder* b_;
  uint32_t ph_x_, ph_c_, cat_op_, memory_;
  absl::flat_hash_map<std::string_view, uint32_t> names_;  // raw name -> index
  std::vector<std::string_view> quoted_;                   // index -> quoted JSON string
  std::vector<uint32_t> ids_;                              // index -> string id
  std::map<std::pair<std::string_view, int64_t>, uint32_t> lanes_;
  std::map<int64_t, uint32_t> tids_;
  std::vector<std::tuple<uint64_t, uint32_t, uint32_t, __int128>> mem_;  // (ts, seq, pid, delta)
  uint32_t seq_ = 0;
  std::string scratch_;
  std::vector<PipelineMarker> markers_;  // forward/backward markers, file order
  uint64_t events_ = 0, mem_events_ = 0, bad_ts_ = 0, bad_dur_ = 0;
};

// PaddleSteps appends the steps of one rank's pipeline markers to `steps`
// (StepsOfPipelineSpans).
void PaddleSteps(std::vector<PipelineMarker>* markers, std::vector<StepSpan>* steps) {
  std::vector<PipelineSpan> spans;
  PairPipelineMarkers(0, markers, &spans);
  StepsOfPipelineSpans(spans.data(), spans.size(), steps);
}

}  // namespace

DecodeReport DecodePaddleToTrace(std::string_view bytes, TraceBuilder* builder) {
  DecodeReport rep;
  TraceSink sink(builder);
  PaddleParseResult r = ParsePaddleProfile(bytes, sink);
  sink.Finish();
  if (!sink.markers().empty() && builder->timeline().steps.empty())
    PaddleSteps(&sink.markers(), &builder->timeline().steps);
  // Read = written + dropped per input: the events of this input are the X
  // events plus the counter samples the MemEvents became.
  rep.dropped.Add(DropReason::kBadTs, sink.bad_ts());
  rep.dropped.Add(DropReason::kBadDur, sink.bad_dur());
  if (r.damaged_event || r.damaged_mem_event) rep.dropped.Add(DropReason::kCorruptMessage);
  rep.events_read = builder->event_count() + rep.dropped.Total();
  if (sink.mem_events())
    rep.warnings.push_back(absl::StrCat(sink.mem_events(),
                                        " memory events became per-place Memory counter samples"));
  rep.status = r.status;
  rep.error_offset = r.error_offset;
  return rep;
}

}  // namespace tracemill::formats
