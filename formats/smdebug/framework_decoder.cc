#include "formats/smdebug/framework_decoder.h"

#include "absl/strings/str_cat.h"
#include "formats/common/json_text.h"
#include "formats/common/status_macros.h"
#include "formats/common/ts_text.h"
#include "formats/smdebug/smdebug_layout.h"

namespace tracemill::formats {
namespace {

// The raw token of member `"key":` in compact sanitized JSON members (a
// string keeps its quotes), or empty.
std::string_view MemberToken(std::string_view compact, std::string_view key) {
  std::string pat = absl::StrCat("\"", AbslView(key), "\":");
  size_t at = compact.find(pat);
  if (at == std::string_view::npos) return {};
  size_t begin = at + pat.size();
  size_t end = SkipJsonValue(compact, begin);
  if (end == std::string_view::npos) return {};
  return compact.substr(begin, end - begin);
}

// A string token's body, any other token as it is.
std::string_view Unquote(std::string_view token) { return JsonStringBody(token).value_or(token); }

}  // namespace

std::optional<int64_t> SmdebugStepNumber(std::string_view name, std::string_view rest) {
  if (name != "Step:ModeKeys.TRAIN" && name != "Step:ModeKeys.GLOBAL") return std::nullopt;
  std::string_view tok = MemberToken(rest, "step_num");
  if (tok.empty()) return std::nullopt;
  return ParseInt64(Unquote(tok));
}

uint32_t FrameworkNodeDecoder::Cached(absl::flat_hash_map<std::string, uint32_t>& cache, std::string_view key,
                                      uint32_t (TraceBuilder::*intern)(std::string_view)) {
  auto it = cache.find(AbslView(key));
  if (it != cache.end()) return it->second;
  // The builder keys its map on the view it is given: give it one into its
  // own arena, which lives as long as the node's data.
  uint32_t id = (out_->*intern)(out_->arena().Copy(key));
  cache.emplace(std::string(key), id);
  return id;
}

uint32_t FrameworkNodeDecoder::Intern(std::string_view body) {
  return body.empty() ? 0 : Cached(strings_, body, &TraceBuilder::InternString);
}

uint32_t FrameworkNodeDecoder::InternToken(std::string_view token) {
  return Cached(tokens_, token, &TraceBuilder::InternToken);
}

uint32_t FrameworkNodeDecoder::PhasePid(std::string_view phase) {
  auto it = phase_pid_.find(AbslView(phase));
  if (it != phase_pid_.end()) return it->second;
  scratch_.clear();  // not assign("\""): gcc 12 -Wrestrict false positive
  scratch_.push_back('"');
  scratch_.append(phase);
  scratch_.push_back('"');
  uint32_t pid = out_->InternPid(out_->arena().Copy(scratch_));
  ProcessInfo& p = out_->process(pid);
  p.name = out_->arena().Copy(phase);
  p.has_name = true;
  p.has_sort_index = true;
  p.sort_index = SmdebugPhaseOrder(UnescapeJsonStringBody(phase));
  phase_pid_.emplace(std::string(phase), pid);
  return pid;
}

DecodeReport FrameworkNodeDecoder::AddFile(std::string_view json, size_t capacity,
                                           std::optional<int64_t> base_ns, TefDecoder* tef) {
  TraceBuilder fb;
  DecodeReport rep = tef->Decode(json, capacity, &fb);
  std::unique_ptr<TraceData> fd = fb.Finish();
  if (absl::IsInvalidArgument(rep.status)) return rep;
  const auto& s = fd->strings;

  // The pseudo-process holding the time base: pid 0 with a process_name
  // whose args carry `start_time_since_epoch_in_micros`.
  uint32_t base_pid = UINT32_MAX;
  std::optional<int64_t> file_base;
  for (const Event& e : fd->events) {
    if (e.phase != 'M' || !(e.flags & kHasPid) || s[e.name] != "process_name") continue;
    std::string_view tok = MemberToken(std::string_view(e.rest, e.rest_len), "start_time_since_epoch_in_micros");
    if (tok.empty()) continue;
    base_pid = e.pid;
    if (!file_base) file_base = ParseMicrosToNanos(tok);
  }
  int64_t base = 0;
  if (base_ns && InTimeRange(*base_ns)) {
    base = *base_ns;
  } else if (file_base && InTimeRange(*file_base)) {
    base = *file_base;
  } else if (!fd->events.empty()) {
    rep.warnings.push_back(
        "no start_time_since_epoch_in_micros record (pid 0 process_name): times kept relative");
  }

  // File pid -> node process, by phase name.
  std::vector<uint32_t> pid_map(fd->processes.size(), UINT32_MAX);
  for (uint32_t p = 0; p < fd->processes.size(); ++p) {
    if (p == base_pid) continue;
    const ProcessInfo& info = fd->processes[p];
    std::string_view phase = info.has_name ? info.name : info.pid_token;
    if (!info.has_name && phase.size() >= 2 && phase.front() == '"') phase = Unquote(phase);
    if (!info.has_name) phase = scratch_ = absl::StrCat("pid ", AbslView(phase));
    pid_map[p] = PhasePid(std::string(phase));
  }
  const uint32_t id_base = fd->id_count ? out_->ReserveIds(fd->id_count) : 0;

  for (const Event& fe : fd->events) {
    std::string_view name = s[fe.name];
    std::string_view rest(fe.rest, fe.rest_len);
    if (fe.phase == 'M') {
      if ((fe.flags & kHasPid) && fe.pid == base_pid) {
        rep.dropped.Add(DropReason::kTimeBase);
        continue;
      }
      std::string key = absl::StrCat(AbslView(name), "|",
                                     (fe.flags & kHasPid) ? pid_map[fe.pid] : UINT32_MAX, "|",
                                     (fe.flags & kHasTid) ? AbslView(s[fe.tid]) : "");
      if (!metadata_seen_.insert(std::move(key)).second) {
        rep.dropped.Add(DropReason::kDuplicateMetadata);
        continue;
      }
    }
    Event e = fe;
    // Both within +-2^62 ns, so the sum fits int64; kept only if it is too.
    if (e.flags & kHasTs) {
      e.ts_ns += base;
      if (!InTimeRange(e.ts_ns)) {
        rep.dropped.Add(DropReason::kBadTs);
        continue;
      }
    }
    e.name = Intern(name);
    e.cat = Intern(s[fe.cat]);
    e.ph = Intern(s[fe.ph]);
    if (e.flags & kHasPid) e.pid = pid_map[fe.pid];
    if (e.flags & kHasTid) e.tid = InternToken(s[fe.tid]);
    if (e.flags & kHasId) e.id += id_base;
    if (e.flags & kHasBindId) e.bind_id += id_base;
    if (e.flags & kHasId2Global) e.id2 += id_base;
    if (fe.phase == 'M' && name == "thread_name") {
      // `<node>_<thread>`: the node's name on every thread it owns.
      std::string_view orig = Unquote(MemberToken(rest, "name"));
      scratch_ = "\"args\":{\"name\":\"";
      AppendSanitizedStringBody(node_, &scratch_);
      scratch_.push_back('_');
      scratch_.append(orig.empty() && (fe.flags & kHasTid) ? Unquote(s[fe.tid]) : orig);
      scratch_.append("\"}");
      rest = scratch_;
    }
    if (!rest.empty()) {
      std::string_view stored = out_->rest_arena().Copy(rest);
      e.rest = stored.data();
      e.rest_len = static_cast<uint32_t>(stored.size());
    }
    out_->AddEvent(e);
    if (e.phase == 'X' && (e.flags & kHasTs)) {
      if (auto step = SmdebugStepNumber(name, rest)) {
        out_->timeline().steps.push_back(
            StepSpan{*step, e.ts_ns, e.ts_ns + ((e.flags & kHasDur) ? e.dur_ns : 0)});
      }
    }
  }
  // Steps named `ProfilerStep#N`/`Step:N` were noted by `out_->AddEvent`.
  return rep;
}

}  // namespace tracemill::formats
