#include "merge/sorted_run.h"

#include <algorithm>
#include <cstring>

#include "formats/common/varint.h"
#include "merge/io_pool.h"
#include "merge/key_sort.h"

namespace tracemill::merge {
namespace {

using formats::GetVarint;
using formats::PutVarint;
using formats::UnZigZag;
using formats::ZigZag;

constexpr size_t kMaxHeader = 2 + 9 * 10 + 10;  // flags, phase, 9 varints, rest_len

}  // namespace

SortKey MakeSortKey(const formats::Event& e, uint32_t index) {
  constexpr uint64_t kMid = uint64_t{1} << 63;
  if (e.phase == 'M') return {INT64_MIN, 0, index};
  uint64_t tie = kMid;
  if (e.phase == 'E') {
    tie = 0;
  } else if (e.phase == 'X') {
    tie = kMid - static_cast<uint64_t>(std::max<int64_t>(e.dur_ns, 0));
  }
  return {e.ts_ns, tie, index};
}

std::unique_ptr<SortedRun> SortedRun::Sort(std::unique_ptr<formats::TraceData> data) {
  auto run = std::unique_ptr<SortedRun>(new SortedRun);
  const auto& events = data->events;
  run->keys_.resize(events.size());
  bool sorted = true;
  for (uint32_t i = 0; i < events.size(); ++i) {
    run->keys_[i] = MakeSortKey(events[i], i);
    if (i && sorted && KeyLess(run->keys_[i], run->keys_[i - 1])) sorted = false;
    run->max_rest_len_ = std::max(run->max_rest_len_, events[i].rest_len);
    run->rest_bytes_ += events[i].rest_len;
  }
  if (!sorted) SortKeys(run->keys_);
  run->count_ = events.size();
  run->read_end_ = run->count_;
  run->sample_stride_ = std::clamp<size_t>(run->keys_.size() / 256, 1, kSampleStride);
  for (size_t i = 0; i < run->keys_.size(); i += run->sample_stride_)
    if (run->keys_[i].ts_ns != INT64_MIN) run->samples_.push_back(run->keys_[i]);
  run->data_ = std::move(data);
  return run;
}

size_t SortedRun::ResidentBytes() const {
  return data_->ResidentBytes() + (keys_.capacity() + samples_.capacity()) * sizeof(SortKey) + buf_.capacity() + ahead_buf_.capacity() +
         cur_rest_.capacity();
}

absl::Status SortedRun::Spill(SpillFile* file) {
  if (spilled_) return absl::OkStatus();
  begin_ = file->end_offset();
  spill_direct_ = file->direct();
  std::string rec;
  int64_t prev = 0;
  for (const SortKey& k : keys_) {
    const formats::Event& e = data_->events[k.index];
    rec.clear();
    // M events carry INT64_MIN keys but their own ts; store the event's ts.
    PutVarint(ZigZag(static_cast<int64_t>(static_cast<uint64_t>(e.ts_ns) - static_cast<uint64_t>(prev))), &rec);
    prev = e.ts_ns;
    rec.push_back(static_cast<char>(e.flags));
    rec.push_back(e.phase);
    if (e.flags & (formats::kHasDur | formats::kHasSpan)) PutVarint(static_cast<uint64_t>(e.dur_ns), &rec);
    for (uint32_t v : {e.name, e.cat, e.ph, e.pid, e.tid, e.id, e.bind_id, e.id2}) PutVarint(v, &rec);
    PutVarint(e.rest_len, &rec);
    if (absl::Status s = file->Append(rec); !s.ok()) return s;
    if (e.rest_len) {
      if (absl::Status s = file->Append(std::string_view(e.rest, e.rest_len)); !s.ok()) return s;
    }
  }
  if (absl::Status s = file->Flush(); !s.ok()) return s;
  end_ = file->end_offset();
  file_ = file;
  spilled_ = true;
  decltype(data_->events)().swap(data_->events);
  decltype(keys_)().swap(keys_);
  data_->rest_arena.Release();
  pos_ = count_;  // closed until Open()
  return absl::OkStatus();
}

absl::Status SortedRun::Open(size_t buffer_bytes) {
  pos_ = 0;
  read_end_ = count_;
  if (!spilled_) return absl::OkStatus();
  if (!file_) {
    pos_ = count_;
    return absl::FailedPreconditionError("spilled run already discarded");
  }
  if (pending_.valid()) pending_.wait();  // opened again: a read of the last opening
  pending_ = {};
  // Half the buffer for the chunk being merged, half for the one read ahead.
  chunk_bytes_ = std::max<size_t>(buffer_bytes / 2, 4096);
  file_pos_ = begin_;
  ahead_pos_ = begin_;
  buf_.clear();
  buf_pos_ = 0;
  prev_ts_ = 0;
  read_status_ = absl::OkStatus();
  ReadAhead();
  if (count_ > 0 && !DecodeNextSpilled()) {
    pos_ = count_;
    return read_status_;
  }
  return absl::OkStatus();
}

void SortedRun::Close() {
  if (pending_.valid()) pending_.wait();  // the read writes into ahead_buf_
  pending_ = {};
  std::string().swap(buf_);
  std::string().swap(ahead_buf_);
  std::string().swap(cur_rest_);
  buf_pos_ = 0;
  if (spilled_) pos_ = count_;
}

SortedRun::~SortedRun() {
  if (pending_.valid()) pending_.wait();
}

void SortedRun::DiscardSpill() {
  if (!spilled_ || !file_) return;
  Close();
  file_->Discard(begin_, end_);
  file_ = nullptr;  // Open() would fail: pos_ stays at count_
}

void SortedRun::ReadAhead() {
  if (pending_.valid() || ahead_pos_ >= end_) return;
  const size_t len = static_cast<size_t>(std::min<uint64_t>(chunk_bytes_, end_ - ahead_pos_));
  ahead_buf_.resize(len);
  pending_ = RunRead([file = file_, out = ahead_buf_.data(), at = ahead_pos_, len, direct = spill_direct_] {
    return file->ReadAt(at, out, len, direct);
  });
  ahead_pos_ += len;
}

bool SortedRun::Ensure(size_t n) {
  if (buf_.size() - buf_pos_ >= n) return true;
  // Move the unread tail to the front and append chunks read ahead.
  buf_.erase(0, buf_pos_);
  buf_pos_ = 0;
  while (buf_.size() < n) {
    if (!pending_.valid()) {
      read_status_ = absl::DataLossError("spill file ends inside a record");
      return false;
    }
    absl::StatusOr<size_t> got = pending_.get();
    if (!got.ok() || *got != ahead_buf_.size()) {
      read_status_ = got.ok() ? absl::DataLossError("short read from spill file") : got.status();
      return false;
    }
    buf_.append(ahead_buf_);
    file_pos_ += ahead_buf_.size();
    ReadAhead();  // the next chunk while this one is merged
  }
  return true;
}

bool SortedRun::DecodeNextSpilled() {
  // Headers are at most kMaxHeader bytes; near the end of the region fewer
  // bytes remain, so ask only for what is left.
  uint64_t left_total = (end_ - file_pos_) + (buf_.size() - buf_pos_);
  size_t need = static_cast<size_t>(std::min<uint64_t>(kMaxHeader, left_total));
  if (!Ensure(need)) return false;
  // Decode from a zero-padded copy of the header bytes: varints never run
  // past what we own.
  char header[kMaxHeader + 16] = {};
  std::memcpy(header, buf_.data() + buf_pos_, need);
  const char* p = header;
  formats::Event e{};
  e.ts_ns = static_cast<int64_t>(static_cast<uint64_t>(prev_ts_) + static_cast<uint64_t>(UnZigZag(GetVarint(p))));
  prev_ts_ = e.ts_ns;
  e.flags = static_cast<uint8_t>(*p++);
  e.phase = *p++;
  if (e.flags & (formats::kHasDur | formats::kHasSpan)) e.dur_ns = static_cast<int64_t>(GetVarint(p));
  e.name = static_cast<uint32_t>(GetVarint(p));
  e.cat = static_cast<uint32_t>(GetVarint(p));
  e.ph = static_cast<uint32_t>(GetVarint(p));
  e.pid = static_cast<uint32_t>(GetVarint(p));
  e.tid = static_cast<uint32_t>(GetVarint(p));
  e.id = static_cast<uint32_t>(GetVarint(p));
  e.bind_id = static_cast<uint32_t>(GetVarint(p));
  e.id2 = static_cast<uint32_t>(GetVarint(p));
  e.rest_len = static_cast<uint32_t>(GetVarint(p));
  size_t header_len = static_cast<size_t>(p - header);
  buf_pos_ += header_len;
  if (e.rest_len) {
    if (!Ensure(e.rest_len)) return false;
    e.rest = buf_.data() + buf_pos_;  // copied out by Next() before any refill
    buf_pos_ += e.rest_len;
  }
  next_ = e;
  next_key_ = MakeSortKey(e, 0);
  return true;
}

const formats::Event* SortedRun::Next() {
  if (pos_ >= read_end_) return nullptr;
  if (!spilled_) {
    // Sorted order visits the events (and their `rest` bytes in the arena)
    // out of memory order: fetch a few events ahead, and the rest of the
    // ones about to be written, so the writer does not wait on memory.
    const auto& events = data_->events;
    __builtin_prefetch(keys_.data() + std::min(pos_ + kPrefetchKeys, read_end_));
    if (pos_ + kPrefetchEvents < read_end_) __builtin_prefetch(&events[keys_[pos_ + kPrefetchEvents].index]);
    if (pos_ + kPrefetchRest < read_end_) {
      const formats::Event& ahead = events[keys_[pos_ + kPrefetchRest].index];
      for (uint32_t off = 0; off < ahead.rest_len && off < 4 * 64; off += 64) __builtin_prefetch(ahead.rest + off);
    }
    return &events[keys_[pos_++].index];
  }
  cur_ = next_;
  if (cur_.rest_len) {
    cur_rest_.assign(cur_.rest, cur_.rest_len);
    cur_.rest = cur_rest_.data();
  }
  ++pos_;
  if (pos_ < count_ && !DecodeNextSpilled()) pos_ = count_;  // read error: ends early
  return &cur_;
}

}  // namespace tracemill::merge
