#include "formats/common/trace_data.h"

#include <algorithm>
#include <cstring>

#include "formats/common/json_text.h"
#include "formats/common/ts_text.h"

namespace tracemill::formats {

std::string_view Arena::Copy(std::string_view bytes) {
  if (bytes.empty()) return {};
  if (bytes.size() > chunk_left_) {
    // Chunks double from 4 KiB to 1 MiB: a small input (thousands of them in
    // a directory, or a fuzz input) does not pay for a 1 MiB allocation.
    next_chunk_ = std::min(kChunk, std::max<size_t>(4096, next_chunk_ * 2));
    size_t size = bytes.size() > next_chunk_ / 4 ? bytes.size() : next_chunk_;
    chunks_.emplace_back(new char[size]);
    cursor_ = chunks_.back().get();
    chunk_left_ = size;
  }
  std::memcpy(cursor_, bytes.data(), bytes.size());
  std::string_view v(cursor_, bytes.size());
  cursor_ += bytes.size();
  chunk_left_ -= bytes.size();
  used_ += bytes.size();
  return v;
}

TraceBuilder::TraceBuilder() { Reset(); }

void TraceBuilder::Reset() {
  data_ = std::make_unique<TraceData>();
  time_base_applied_ = false;
  data_->strings.emplace_back();
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
  }
  return it->second;
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

uint64_t TraceBuilder::ApplyTimeBase() {
  if (time_base_applied_) return 0;
  time_base_applied_ = true;
  if (!data_->meta.has_base_time || data_->meta.base_time_ns == 0) return 0;
  const int64_t base = data_->meta.base_time_ns;
  auto& events = data_->events;
  size_t kept = 0;
  for (Event& e : events) {
    int64_t ts = 0;
    if ((e.flags & kHasTs) && (__builtin_add_overflow(e.ts_ns, base, &ts) || !InTimeRange(ts))) {
      if (e.phase != 'M') continue;  // dropped
      e.flags &= ~kHasTs;
      ts = 0;
    }
    if (e.flags & kHasTs) e.ts_ns = ts;
    events[kept++] = e;
  }
  uint64_t dropped = events.size() - kept;
  events.resize(kept);
  return dropped;
}

uint32_t TraceBuilder::InternIdCopy(std::string_view token) {
  if (auto it = ids_.find(token); it != ids_.end()) return it->second;
  return InternId(data_->arena.Copy(token));
}

std::unique_ptr<TraceData> TraceBuilder::Finish() {
  ApplyTimeBase();
  strings_.clear();
  tokens_.clear();
  pids_.clear();
  ids_.clear();
  auto out = std::move(data_);
  Reset();
  return out;
}

}  // namespace tracemill::formats
