#pragma once
// Per-input sort: TraceData -> SortedRun, in memory or spilled.
//
// Kineto traces are not sorted by ts, not even within one thread (it writes
// CPU ops, then GPU activity, then flows, in sections), so every input gets a
// full sort. We sort compact 24-byte keys `(ts_ns, tie, index)`, not the
// 64-byte events: less data moved, and `index` makes the order total, so the
// result is deterministic whatever the sort algorithm.
//
// Tie-break at equal ts, following Perfetto's trace sorter: `E` before
// anything else (a slice ends before the next one begins), then `X` by longer
// `dur` first (the parent before its children), then input order. Metadata
// (`M`) sorts before every timed event, in input order.
//
// When the memory budget says so, a run is spilled: its events are written in
// order to a SpillFile in a compact binary form and freed, keeping only the
// small tables (strings, processes, metadata). The merge then streams it back
// through a bounded read buffer. Both forms yield identical events, so
// outputs are byte-identical whether or not anything was spilled.
//
// Spill record, one per event, in run order:
//   varint zigzag(ts - previous ts) | u8 flags | u8 phase | [varint dur]
//   | varint name cat ph pid tid id bind_id id2 | varint rest_len | rest bytes
#include <algorithm>
#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "formats/common/large_alloc.h"
#include "formats/common/trace_data.h"
#include "merge/spill_file.h"

namespace tracemill::merge {

// SortKey: the order of one event inside its run.
struct SortKey {
  int64_t ts_ns;
  uint64_t tie;
  uint32_t index;  // into TraceData::events
};
static_assert(sizeof(SortKey) == 24);

// KeyAllocator: the block pool's allocator (formats/common/large_alloc.h)
// whose elements start uninitialized: keys are always written before they
// are read, so resizing a key vector does not zero it first. Key vectors
// are sized to their run and written whole: their pages are made at once
// (formats::PrefaultAllocator).
template <typename T>
struct KeyAllocator : formats::PrefaultAllocator<T> {
  KeyAllocator() = default;
  template <typename U>
  KeyAllocator(const KeyAllocator<U>&) {}
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using SortKeyVector = std::vector<SortKey, KeyAllocator<SortKey>>;

// MakeSortKey computes the key of `e` at position `index` (see file comment).
SortKey MakeSortKey(const formats::Event& e, uint32_t index);

// Returns true if `a` sorts before `b` (ts, then tie, then index).
inline bool KeyLess(const SortKey& a, const SortKey& b) {
  if (a.ts_ns != b.ts_ns) return a.ts_ns < b.ts_ns;
  if (a.tie != b.tie) return a.tie < b.tie;
  return a.index < b.index;
}

// SortedRun: the events of one input in output order, behind `Next()`.
// Owns the TraceData (strings, arena) the events point into.
class SortedRun {
 public:
  // Sort takes the decoded input and returns its run (TraceData -> SortedRun).
  static std::unique_ptr<SortedRun> Sort(std::unique_ptr<formats::TraceData> data);
  ~SortedRun();  // waits for a read ahead in flight

  // Spill writes the run to `file` (through the page cache or not, as the
  // file is set: SpillFile::UseDirect) and frees its events, keys and rest
  // bytes. Errors: those of SpillFile (kResourceExhausted when the disk is full).
  absl::Status Spill(SpillFile* file);

  // Open prepares reading from the first event; a spilled run reads its
  // region in chunks of `buffer_bytes` / 2, the next one read ahead on an
  // I/O thread (io_pool.h) while the current one is merged (about
  // `buffer_bytes` held; more only for a single larger event).
  absl::Status Open(size_t buffer_bytes);
  // Close frees the read buffers, after the read in flight (the run can be
  // opened again).
  void Close();
  // DiscardSpill frees a spilled run's region of its SpillFile (the run can
  // no longer be opened). Call it when the run has been merged, while the
  // SpillFile is still alive. No-op for a run in memory.
  void DiscardSpill();

  // Next returns the next event in order, or nullptr at the end. For a
  // spilled run the event's `rest` stays valid until the next call.
  const formats::Event* Next();
  // PeekKey returns the key of the next event (ts and tie; index is not
  // meaningful across forms); only valid if !done().
  const SortKey& PeekKey() const { return spilled_ ? next_key_ : keys_[pos_]; }
  bool done() const { return pos_ >= read_end_; }
  // A run in memory, read by position (merge/range_cutter.h): the events
  // from position `pos()` on are `event(key(i))` for i in [pos(), size());
  // SkipTo moves the read position forward without visiting the events.
  // Not for a spilled run.
  size_t pos() const { return pos_; }
  const SortKey* keys() const { return keys_.data(); }
  const formats::Event* events() const { return data_->events.data(); }
  void SkipTo(size_t pos) { pos_ = pos; }
  // The read end of a run in memory: size() until SetEnd(pos) makes the
  // run end at `pos` (an output's time range, merge/time_split.h) until
  // the next Open. For a spilled run, size().
  size_t end() const { return read_end_; }
  void SetEnd(size_t pos) {
    if (!spilled_) read_end_ = std::min(pos, count_);
  }
  // The status of the last spilled read (a read error ends the run early).
  const absl::Status& read_status() const { return read_status_; }

  const formats::TraceData& data() const { return *data_; }
  size_t size() const { return count_; }
  // The longest `rest` of its events (bytes); kept when spilled.
  uint32_t max_rest_len() const { return max_rest_len_; }
  // The `rest` bytes of all its events; kept when spilled.
  uint64_t rest_bytes() const { return rest_bytes_; }
  bool spilled() const { return spilled_; }
  // A spilled run's bytes in its file, and whether they bypassed the page
  // cache (SpillFile::UseDirect when it was spilled).
  uint64_t spill_bytes() const { return end_ - begin_; }
  bool spill_direct() const { return spill_direct_; }
  // Bytes of heap the run holds now.
  size_t ResidentBytes() const;
  // Every sample_stride()-th key of the run in order (from the first), timed
  // events only (metadata keys left out); kept when spilled. What an
  // output's split into time ranges is chosen from (merge/time_split.h):
  // the same whether or not the run spilled. The stride is the run's size /
  // 256, at least 1 and at most kSampleStride: at least ~256 samples of a
  // run, at most one per kSampleStride events (24 bytes each).
  static constexpr size_t kSampleStride = 256;
  const std::vector<SortKey>& samples() const { return samples_; }
  size_t sample_stride() const { return sample_stride_; }

 private:
  // Spilled form: decodes the record at the read cursor into next_.
  bool DecodeNextSpilled();
  // Ensure makes `n` bytes from the read cursor available in buf_.
  bool Ensure(size_t n);
  // ReadAhead starts reading the next chunk into ahead_buf_ (none in flight).
  void ReadAhead();

  // How far ahead Next() prefetches an event, the first 256 bytes of its
  // `rest`, and the keys (in events). The keys' own prefetch matters when
  // many runs interleave: at 128 runs the hardware's stream prefetchers
  // lose track of each run's keys (BM_KWayMerge/runs:128: 72 -> 64 ns per
  // event; runs:4 29 -> 27).
  static constexpr size_t kPrefetchEvents = 8, kPrefetchRest = 4, kPrefetchKeys = 32;
  std::unique_ptr<formats::TraceData> data_;
  SortKeyVector keys_;
  std::vector<SortKey> samples_;
  size_t sample_stride_ = 1;
  size_t pos_ = 0;
  size_t count_ = 0;
  size_t read_end_ = 0;  // see end()
  uint32_t max_rest_len_ = 0;
  uint64_t rest_bytes_ = 0;

  bool spilled_ = false;
  bool spill_direct_ = false;
  SpillFile* file_ = nullptr;
  uint64_t begin_ = 0, end_ = 0;  // region in file_
  uint64_t file_pos_ = 0;         // file offset of buf_'s end
  uint64_t ahead_pos_ = 0;        // next byte to read ahead
  std::string buf_;               // bytes being decoded
  size_t buf_pos_ = 0;
  size_t chunk_bytes_ = 0;
  std::string ahead_buf_;         // the chunk read ahead
  std::future<absl::StatusOr<size_t>> pending_;  // its read
  int64_t prev_ts_ = 0;
  formats::Event next_{};
  SortKey next_key_{};
  formats::Event cur_{};
  std::string cur_rest_;
  absl::Status read_status_;
};

}  // namespace tracemill::merge
