#include "formats/common/trace_data.h"

#include <algorithm>
#include <cstring>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "formats/common/json_text.h"
#include "formats/common/ts_text.h"

namespace tracemill::formats {

void Arena::NewChunk(size_t n) {
  size_t grow = std::min<size_t>(kChunk, size_t{64} << 10 << std::min<size_t>(chunks_.size(), 5));
  size_t size = n > grow / 4 ? std::max(n, grow) : grow;
  chunks_.v.push_back({static_cast<char*>(AllocateLarge(size)), size});
  if (size >= kPooledMinBytes) Prefault(chunks_.v.back().p, size);  // filled from its start on
  reserved_ += size;
  cursor_ = chunks_.v.back().p;
  chunk_left_ = size;
}

std::string_view Arena::Copy(std::string_view bytes) {
  if (bytes.empty()) return {};
  std::memcpy(Reserve(bytes.size()), bytes.data(), bytes.size());
  return Keep(bytes.size());
}

TraceBuilder::TraceBuilder() { Reset(); }

bool IsHtaKernelCategory(std::string_view cat) {
  for (std::string_view k : {"kernel", "Kernel", "gpu_memset", "Memset", "gpu_memcpy", "Memcpy", "mtia_ccp_events"})
    if (cat == k) return true;
  return false;
}

void TraceBuilder::PrefaultEvents() {
  auto& v = data_->events;
  const size_t ahead = std::min(v.capacity() - v.size(), kPrefaultEvents);
  if (ahead > 0 && v.capacity() * sizeof(Event) >= kPooledMinBytes)
    Prefault(v.data() + v.size(), ahead * sizeof(Event));
  prefaulted_ = v.size() + std::max<size_t>(ahead, 1);
}

void TraceBuilder::Reset() {
  data_ = std::make_unique<TraceData>();
  prefaulted_ = 0;
  time_base_applied_ = false;
  data_->strings.emplace_back();
  step_of_name_.clear();
  hook_of_name_.clear();
  kernel_cat_.clear();
  memory_counter_name_.clear();
  counter_ph_ = 0;
  strings_.clear();
  tokens_.clear();
  pids_.clear();
  ids_.clear();
}

uint32_t TraceBuilder::InternString(std::string_view raw_body) {
  auto [it, inserted] = strings_.try_emplace(raw_body, 0);
  if (inserted) {
    std::string* buf = data_->arena.AppendBuffer();
    AppendSanitizedStringBody(raw_body, buf);
    it->second = static_cast<uint32_t>(data_->strings.size());
    data_->strings.push_back(data_->arena.Commit());
    if (auto step = MatchStepName(data_->strings.back())) {
      step_of_name_.resize(it->second + 1, kNotAStep);
      step_of_name_[it->second] = *step;
      Hook(it->second, kStepHook);
    }
    if (data_->strings.back().substr(0, 8) == "[memory]") Hook(it->second, kMemoryHook);
    if (IsHtaKernelCategory(data_->strings.back())) {
      kernel_cat_.resize(it->second + 1, 0);
      kernel_cat_[it->second] = 1;
    }
    // Collectives are digested after the sort (pipeline/convert/decode_input.cc):
    // here only the class of the name, once.
    if (CollectiveClass c = ClassifyCollectiveName(data_->strings.back()); c != CollectiveClass::kNone) {
      data_->collective_of_name.resize(it->second + 1, 0);
      data_->collective_of_name[it->second] = static_cast<uint8_t>(c);
    }
  }
  return it->second;
}

void TraceBuilder::NoteKernel(const Event& e) {
  if (e.phase != 'X') return;
  std::vector<uint64_t>& first = data_->first_kernel_of_tid;
  if (first.size() <= e.tid) first.resize(e.tid + 1, 0);
  if (!first[e.tid]) first[e.tid] = data_->events.size();  // 1 + its index
}

void TraceBuilder::Hook(uint32_t name, NameHook hook) {
  if (hook_of_name_.size() <= name) hook_of_name_.resize(name + 1, 0);
  hook_of_name_[name] |= hook;
}

void TraceBuilder::OnHookedName(const Event& e) {
  const uint8_t hooks = hook_of_name_[e.name];
  if (hooks & kStepHook) NoteStep(e);
  if ((hooks & kMemoryHook) && derive_memory_counters_) NoteMemory(e);
}

namespace {
// c10::DeviceType (c10/core/DeviceType.h), the `Device Type` arg of
// PyTorch's `[memory]` events: the device names PyTorch prints.
std::string_view DeviceTypeName(std::string_view raw) {
  static constexpr std::string_view kNames[] = {
      "cpu", "cuda", "mkldnn", "opengl", "opencl", "ideep", "hip", "fpga", "maia", "xla", "vulkan",
      "metal", "xpu", "mps", "meta", "hpu", "ve", "lazy", "ipu", "mtia", "privateuseone"};
  auto v = ParseInt64(raw);
  if (v && *v >= 0 && *v < static_cast<int64_t>(std::size(kNames))) return kNames[*v];
  return {};
}
}  // namespace

void TraceBuilder::NoteMemory(const Event& e) {
  // PyTorch writes its allocator events as thread-scoped instants
  // (torch/csrc/autograd/profiler_kineto.cpp, AddGenericMetadata for
  // ExtraFields<EventType::Allocation>; tests/data/kineto-2026/PROVENANCE.md).
  if ((e.phase != 'i' && e.phase != 'I') || !(e.flags & kHasTs)) return;
  const std::string_view rest(e.rest, e.rest_len);
  // Before PyTorch 2.0 only `Bytes`, no totals: most such events stop at a
  // search for the key's text (RestArgValues finds nothing without it). Its
  // first byte is rare in these events' rest (`Device Type`, `Total ...`):
  // std::string_view::find, a memchr then a compare per `T`, took a fifth
  // of glibc memmem's instructions here.
  if (rest.find("Total Allocated\":") == std::string_view::npos) return;
  static constexpr std::string_view kKeys[] = {"Total Allocated", "Total Reserved", "Device Type", "Device Id"};
  std::string_view values[std::size(kKeys)];
  RestArgValues(rest, kKeys, values);
  const std::string_view allocated = values[0];
  if (allocated.empty()) return;
  const std::string_view reserved = values[1];
  auto unquoted = [](std::string_view raw) { return JsonStringBody(raw).value_or(raw); };
  const std::string_view type = unquoted(values[2]);
  const std::string_view id = unquoted(values[3]);
  scratch_.assign(type);
  scratch_.push_back('|');
  scratch_.append(id);
  auto [it, fresh] = memory_counter_name_.try_emplace(scratch_, 0);
  if (fresh) {
    // "memory cuda:0", "memory cpu" (Device Id -1), "memory device 42:1".
    std::string name = "memory ";
    std::string_view type_name = DeviceTypeName(type);
    if (type_name.empty()) {
      name.append("device ");
      AppendSanitizedStringBody(type.substr(0, 40), &name);
    } else {
      name.append(type_name);
    }
    if (auto dev = ParseInt64(id); dev && *dev >= 0) absl::StrAppend(&name, ":", *dev);
    it->second = InternString(data_->arena.Copy(name));
  }
  if (!counter_ph_) counter_ph_ = InternString("C");
  Event c{};
  c.ts_ns = e.ts_ns;
  c.phase = 'C';
  c.ph = counter_ph_;
  c.name = it->second;
  c.pid = e.pid;
  c.flags = kHasTs | (e.flags & kHasPid);
  scratch_.assign("\"args\":{\"Total Allocated\":");
  scratch_.append(allocated);
  if (!reserved.empty()) {
    scratch_.append(",\"Total Reserved\":");
    scratch_.append(reserved);
  }
  scratch_.push_back('}');
  std::string_view stored = data_->rest_arena.Copy(scratch_);
  c.rest = stored.data();
  c.rest_len = static_cast<uint32_t>(stored.size());
  data_->events.push_back(c);
  ++data_->derived_events;
}

void TraceBuilder::NoteStep(const Event& e) {
  // Complete events only; Kineto repeats each step on the GPU timeline as
  // `gpu_user_annotation`, which would stretch the step to the last kernel.
  if (e.phase != 'X' || !(e.flags & kHasTs)) return;
  std::string_view cat = data_->strings[e.cat];
  if (cat.substr(0, 4) == "gpu_") return;
  // A step ends within +-2^62 ns, as an input's span does (decode_input.cc).
  int64_t end = e.ts_ns;
  if ((e.flags & kHasDur) && __builtin_add_overflow(e.ts_ns, e.dur_ns, &end)) end = kMaxAbsTimeNs;
  data_->timeline.steps.push_back(StepSpan{step_of_name_[e.name], e.ts_ns, std::min(end, kMaxAbsTimeNs)});
}

namespace {
// Sanitizes a raw scalar token (number or quoted string) into `out`.
void SanitizeToken(std::string_view raw, std::string* out) {
  if (AppendSanitizedJson(raw, out) == SanitizeResult::kMalformed) {
    out->push_back('"');
    AppendSanitizedStringBody(raw, out);
    out->push_back('"');
  }
}
}  // namespace

uint32_t TraceBuilder::InternToken(std::string_view raw_token) {
  auto [it, inserted] = tokens_.try_emplace(raw_token, 0);
  if (inserted) {
    std::string* buf = data_->arena.AppendBuffer();
    SanitizeToken(raw_token, buf);
    it->second = static_cast<uint32_t>(data_->strings.size());
    data_->strings.push_back(data_->arena.Commit());
  }
  return it->second;
}

uint32_t TraceBuilder::InternPid(std::string_view raw_token) {
  auto [it, inserted] = pids_.try_emplace(raw_token, 0);
  if (inserted) {
    std::string* buf = data_->arena.AppendBuffer();
    SanitizeToken(raw_token, buf);
    it->second = static_cast<uint32_t>(data_->processes.size());
    ProcessInfo info;
    info.pid_token = data_->arena.Commit();
    data_->processes.push_back(info);
  }
  return it->second;
}

uint32_t TraceBuilder::InternId(std::string_view raw_token) {
  auto [it, inserted] = ids_.try_emplace(raw_token, 0);
  if (inserted) it->second = ++data_->id_count;
  return it->second;
}

uint64_t ShiftEventTimes(std::vector<Event, LargeAllocator<Event>>* events, int64_t offset_ns) {
  size_t kept = 0;
  for (Event& e : *events) {
    int64_t ts = 0;
    if ((e.flags & kHasTs) && (__builtin_add_overflow(e.ts_ns, offset_ns, &ts) || !InTimeRange(ts))) {
      if (e.phase != 'M') continue;  // dropped
      e.flags &= ~kHasTs;
      ts = 0;
    }
    if (e.flags & kHasTs) e.ts_ns = ts;
    (*events)[kept++] = e;
  }
  const uint64_t dropped = events->size() - kept;
  events->resize(kept);
  return dropped;
}

uint64_t DropEmptyProcesses(TraceData* data) {
  std::vector<uint8_t> has_events(data->processes.size(), 0);
  for (const Event& e : data->events)
    if ((e.flags & kHasPid) && e.phase != 'M') has_events[e.pid] = 1;
  if (std::all_of(has_events.begin(), has_events.end(), [](uint8_t v) { return v != 0; })) return 0;
  for (size_t p = 0; p < has_events.size(); ++p) data->processes[p].empty = !has_events[p];
  auto& events = data->events;
  const size_t before = events.size();
  events.erase(std::remove_if(events.begin(), events.end(),
                              [&](const Event& e) { return (e.flags & kHasPid) && !has_events[e.pid]; }),
               events.end());
  return before - events.size();
}

uint64_t TraceBuilder::ApplyTimeBase() {
  if (time_base_applied_) return 0;
  time_base_applied_ = true;
  if (!data_->meta.has_base_time || data_->meta.base_time_ns == 0) return 0;
  const int64_t base = data_->meta.base_time_ns;
  const uint64_t dropped = ShiftEventTimes(&data_->events, base);
  auto shift = [base](std::vector<StepSpan>* steps) {
    size_t k = 0;
    for (StepSpan st : *steps) {
      if (__builtin_add_overflow(st.start_ns, base, &st.start_ns) || !InTimeRange(st.start_ns))
        continue;  // its events were dropped as bad_ts
      // Both within +-2^62: the sum fits; the end is held to the range.
      st.end_ns = std::clamp(st.end_ns + base, -kMaxAbsTimeNs, kMaxAbsTimeNs);
      (*steps)[k++] = st;
    }
    steps->resize(k);
  };
  shift(&data_->timeline.steps);
  for (TrackTimeline& t : data_->timeline.tracks) shift(&t.steps);
  return dropped;
}

uint32_t TraceBuilder::InternIdCopy(std::string_view token) {
  if (auto it = ids_.find(token); it != ids_.end()) return it->second;
  return InternId(data_->arena.Copy(token));
}

std::unique_ptr<TraceData> TraceBuilder::Finish() {
  ApplyTimeBase();
  data_->timeline.steps_dropped += NormalizeSteps(&data_->timeline.steps);
  for (TrackTimeline& t : data_->timeline.tracks) data_->timeline.steps_dropped += NormalizeSteps(&t.steps);
  step_of_name_.clear();
  hook_of_name_.clear();
  kernel_cat_.clear();
  memory_counter_name_.clear();
  strings_.clear();
  tokens_.clear();
  pids_.clear();
  ids_.clear();
  auto out = std::move(data_);
  Reset();
  return out;
}

}  // namespace tracemill::formats
