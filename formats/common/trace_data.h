#pragma once
// TraceData: everything decoded from one input file, and TraceBuilder, the
// event sink decoders push into.
//
// A decoder reads its input buffer (zero-copy: field values are views into
// it) and pushes events into a TraceBuilder. Strings (names, categories, pid
// and tid tokens, ids) are interned per input, so a kernel name repeated 30k
// times is stored once; anything that outlives the input buffer (interned
// strings, each event's `rest` members) is copied, sanitized, into the
// builder's arena. After `Finish()` the input buffer can be freed.
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"
#include "formats/common/collectives.h"
#include "formats/common/event.h"
#include "formats/common/large_alloc.h"
#include "formats/common/timeline.h"

namespace tracemill::formats {

// Arena: append-only byte storage with stable addresses. Chunks grow from
// 64 KiB to 2 MiB (pooled blocks, large_alloc.h), so 4,096 small inputs do not each pin a megabyte.
class Arena {
 public:
  // Copy `bytes` into the arena; the view stays valid for the arena's life.
  std::string_view Copy(std::string_view bytes);
  // Starts an append; `AppendBuffer()` is a scratch string the caller fills,
  // then `Commit()` copies it in and returns the stable view.
  std::string* AppendBuffer() { scratch_.clear(); return &scratch_; }
  std::string_view Commit() { return Copy(scratch_); }
  // Reserve returns room for at least `n` bytes at the arena's end, which
  // the caller fills and then keeps with Keep(k), k <= n (or leaves unkept:
  // the next Reserve or Copy reuses it). Writing there directly saves the
  // copy from a scratch string (the Kineto decoder's rest, bench/RESULTS.md).
  char* Reserve(size_t n) {
    if (n > chunk_left_) NewChunk(n);
    return cursor_;
  }
  // Keep keeps the first `k` bytes written at Reserve's pointer and returns
  // them; valid for the arena's life.
  std::string_view Keep(size_t k) {
    std::string_view v(cursor_, k);
    cursor_ += k;
    chunk_left_ -= k;
    used_ += k;
    return v;
  }
  size_t bytes_used() const { return used_; }
  size_t bytes_reserved() const { return reserved_; }
  // Release frees every chunk (views into the arena become invalid).
  void Release() {
    chunks_.clear();
    chunk_left_ = 0;
    cursor_ = nullptr;
    used_ = reserved_ = 0;
  }

 private:
  static constexpr size_t kChunk = kHugePage;
  // NewChunk starts a chunk with room for `n` bytes at least.
  void NewChunk(size_t n);
  size_t reserved_ = 0;
  struct Chunk {
    char* p;
    size_t n;
  };
  struct ChunkList {
    std::vector<Chunk> v;
    ~ChunkList() { clear(); }
    void clear() {
      for (auto& c : v) FreeLarge(c.p, c.n);
      v.clear();
    }
    size_t size() const { return v.size(); }
  };
  ChunkList chunks_;
  size_t chunk_left_ = 0;
  char* cursor_ = nullptr;
  size_t used_ = 0;
  std::string scratch_;
};

// ProcessInfo: what an input says about one of its processes (pid).
struct ProcessInfo {
  std::string_view pid_token;  // the raw JSON token (`26`, `"Spans"`), sanitized
  std::string_view name;       // process_name args.name (JSON string body), if any
  bool has_name = false;
  bool has_sort_index = false;
  int64_t sort_index = 0;      // process_sort_index args.sort_index
  std::string_view labels;     // process_labels args.labels body, if any
  // No event but metadata (DropEmptyProcesses): listed in no output.
  bool empty = false;
};

// InputMetadata: top-level facts of one input (Kineto's JSON Object Format).
struct InputMetadata {
  std::optional<int64_t> rank;        // distributedInfo.rank
  std::optional<int64_t> world_size;  // distributedInfo.world_size
  std::string backend;                // distributedInfo.backend
  int device_count = -1;              // number of deviceProperties entries
  int64_t base_time_ns = 0;           // baseTimeNanoseconds (added to every ts)
  bool has_base_time = false;
  std::string display_time_unit;      // displayTimeUnit, if given
  // The number in the file name counts trainers (nodes), not ranks (Paddle
  // network logs, `net/<name>.<trainer>`): the pipeline files the input
  // under rank trainer x GPUs per node, the trainer's first GPU.
  bool name_number_is_trainer = false;
  // Every top-level key other than traceEvents, in input order:
  // (sanitized key body, sanitized JSON value).
  std::vector<std::pair<std::string, std::string>> top_level;
};

// TraceData: the decoded content of one input.
struct TraceData {
  std::vector<Event, LargeAllocator<Event>> events;
  std::vector<std::string_view> strings;  // string id -> body; [0] = ""
  std::vector<ProcessInfo> processes;     // local pid index -> info
  // string id -> CollectiveClass of an event of that name (collectives.h);
  // only as long as the highest id of a collective name.
  std::vector<uint8_t> collective_of_name;
  // tid string id -> 1 + the index, in file order, of the first `X` event
  // with that tid whose category is one HTA counts as a kernel in its idle
  // time breakdown (`kernel`, `Kernel`, `gpu_memset`, `Memset`,
  // `gpu_memcpy`, `Memcpy`, `mtia_ccp_events`); 0 none. Only as long as the
  // highest such tid: HTA lists a rank's streams in the order of their first
  // kernel in the file (analysis/hta_breakdowns.h), which the sort loses.
  std::vector<uint64_t> first_kernel_of_tid;
  Timeline timeline;                      // steps (and tracks) for the run report
  uint32_t id_count = 0;                  // ids are 1..id_count
  // Events a builder added that the input does not hold (memory counters
  // derived from `[memory]` instants): decoders count them as events read.
  uint64_t derived_events = 0;
  InputMetadata meta;
  Arena arena;       // strings, tokens, process names: kept while the input is in a run
  Arena rest_arena;  // each event's `rest`: freed when the run is spilled

  // ResidentBytes estimates the heap this input holds (bytes).
  size_t ResidentBytes() const {
    // Events by size, not capacity: a reserved vector (ReserveEvents) is
    // address space until it is written.
    return events.size() * sizeof(Event) + strings.capacity() * sizeof(std::string_view) +
           processes.capacity() * sizeof(ProcessInfo) + arena.bytes_reserved() +
           rest_arena.bytes_reserved();
  }
};

// TraceBuilder: the event sink of one input (decoder -> TraceBuilder ->
// TraceData). Not thread-safe: one per input being decoded.
// ShiftEventTimes adds `offset_ns` to the ts of every timed event. Events
// it moves out of +-kMaxAbsTimeNs (ts_text.h) are removed, except metadata
// (`M`) events, which lose their ts. Returns the number removed (the
// callers count them as dropped `bad_ts`). Steps are not touched.
uint64_t ShiftEventTimes(std::vector<Event, LargeAllocator<Event>>* events, int64_t offset_ns);

// DropEmptyProcesses removes the metadata (`M`) events of every process
// that has no other event (Kineto lists all eight GPUs of a host on every
// rank, used or not: "GPU 1".."GPU 7" of a one-GPU rank, all eight of a
// CPU-only one) and marks those processes `empty`, so that no output lists
// them. Returns the number of events removed (the callers count them as
// dropped `empty_process`).
uint64_t DropEmptyProcesses(TraceData* data);

// IsHtaKernelCategory: `cat` (a sanitized JSON string body) is a category
// HTA's idle time breakdown counts as a kernel (HolisticTraceAnalysis
// breakdown_analysis.py:852-860: kernel, Kernel, gpu_memset, Memset,
// gpu_memcpy, Memcpy, mtia_ccp_events).
bool IsHtaKernelCategory(std::string_view cat);

class TraceBuilder {
 public:
  TraceBuilder();

  // InternString returns the id of the JSON string body `raw_body` (escaped,
  // without quotes, a view into the input), sanitizing it on first sight.
  uint32_t InternString(std::string_view raw_body);
  // InternToken: like InternString, for a raw JSON token kept with its quotes
  // if it is a string (tids: `7`, `"stream 7"`).
  uint32_t InternToken(std::string_view raw_token);
  // InternPid returns the local process index of the raw pid token.
  uint32_t InternPid(std::string_view raw_token);
  // InternId returns the 1-based local id of a raw `id`/`bind_id` token.
  // Like every Intern*, it keeps `raw_token` as its key: the bytes must live
  // until Finish() (the input buffer, or the decoder's repaired copies).
  uint32_t InternId(std::string_view raw_token);
  // InternIdCopy: InternId for a token in a scratch buffer; a new key is
  // copied into the arena first.
  uint32_t InternIdCopy(std::string_view token);

  ProcessInfo& process(uint32_t pid) { return data_->processes[pid]; }
  // ReserveIds reserves `n` fresh ids and returns the first minus one (ids
  // base+1..base+n), for a decoder that merges several files' id spaces.
  uint32_t ReserveIds(uint32_t n) {
    uint32_t base = data_->id_count;
    data_->id_count += n;
    return base;
  }
  // The sanitized body of string id `id`.
  std::string_view InternedString(uint32_t id) const { return data_->strings[id]; }
  InputMetadata& meta() { return data_->meta; }
  Arena& arena() { return data_->arena; }
  Arena& rest_arena() { return data_->rest_arena; }

  // AddEvent appends `e`. Name hooks, decided once per distinct name when it
  // is interned, so that the check per event is one compare:
  // - step: an `X` event whose name is a step name (`MatchStepName`) also
  //   becomes a step span;
  // - memory (with `DeriveMemoryCounters`): an instant event whose name
  //   starts with `[memory]` (PyTorch's allocator events) and whose args
  //   hold `Total Allocated` is followed by a derived `C` event on the same
  //   pid, `memory <device>` (`memory cuda:0`, `memory cpu`, from the
  //   `Device Type` and `Device Id` args), args `{"Total Allocated": ..,
  //   "Total Reserved": ..}` as written (bytes), counted in
  //   `TraceData::derived_events`.
  void AddEvent(const Event& e) {
    if (data_->events.size() >= prefaulted_) PrefaultEvents();
    data_->events.push_back(e);
    if (e.name < hook_of_name_.size() && hook_of_name_[e.name]) OnHookedName(e);
    if (e.cat < kernel_cat_.size() && kernel_cat_[e.cat]) NoteKernel(e);
  }
  // DeriveMemoryCounters turns the memory hook on or off (off by default:
  // a decoder that copies events from another builder, as smdebug's does,
  // must not derive them twice). Survives `Reset`.
  void DeriveMemoryCounters(bool on) { derive_memory_counters_ = on; }
  uint64_t derived_events() const { return data_->derived_events; }
  Timeline& timeline() { return data_->timeline; }
  // ReserveEvents reserves room for `n` events up front, so that the vector
  // is not regrown (and its pages faulted in twice) while decoding. Large
  // reservations are mapped lazily (large_alloc.h): untouched room costs
  // address space, not memory (AddEvent makes the pages present 256 KiB
  // ahead of the last event).
  void ReserveEvents(size_t n) { data_->events.reserve(n); }
  size_t event_count() const { return data_->events.size(); }
  // The events added so far (valid until the next AddEvent).
  const std::vector<Event, LargeAllocator<Event>>& events() const { return data_->events; }

  // Discard every event and table (the tolerant decoder restarts an input).
  void Reset();

  // ApplyTimeBase adds `meta().base_time_ns` to every event's ts and every
  // step, once. Timed events whose ts leaves the range of `kMaxAbsTimeNs`
  // (ts_text.h) are removed and counted in the result, which the decoder
  // reports as dropped `bad_ts`; metadata events just lose their ts; steps
  // that leave the range are removed.
  uint64_t ApplyTimeBase();

  // Finish applies the time base if the decoder has not (events it removes
  // then go uncounted: decoders call ApplyTimeBase), normalizes the steps
  // (`NormalizeSteps`), drops the intern maps (their keys point into the
  // input buffer) and hands over the data.
  std::unique_ptr<TraceData> Finish();

 private:
  static constexpr int64_t kNotAStep = INT64_MIN;
  enum NameHook : uint8_t { kStepHook = 1, kMemoryHook = 2 };
  void OnHookedName(const Event& e);
  void NoteStep(const Event& e);
  void NoteMemory(const Event& e);
  void Hook(uint32_t name, NameHook hook);
  // NoteKernel: TraceData::first_kernel_of_tid for `e` (just added).
  void NoteKernel(const Event& e);

  // PrefaultEvents: the events vector's next kPrefaultEvents slots made
  // present at once (formats::Prefault), not one page fault each; up to
  // `prefaulted_` they are (or the vector grows first).
  void PrefaultEvents();
  static constexpr size_t kPrefaultEvents = (size_t{256} << 10) / sizeof(Event);

  std::unique_ptr<TraceData> data_;
  size_t prefaulted_ = 0;
  bool time_base_applied_ = false;
  // string id -> step number, or kNotAStep; only as long as the highest id
  // of a step name, so empty for inputs without steps.
  std::vector<int64_t> step_of_name_;
  // string id -> NameHook bits; only as long as the highest hooked id.
  std::vector<uint8_t> hook_of_name_;
  // string id -> 1 if HTA's idle breakdown counts that category as a
  // kernel; only as long as the highest such id.
  std::vector<uint8_t> kernel_cat_;
  bool derive_memory_counters_ = false;
  // Memory counters: "<Device Type>|<Device Id>" raw args -> counter name id.
  absl::flat_hash_map<std::string, uint32_t> memory_counter_name_;
  uint32_t counter_ph_ = 0;  // "C", interned on first use
  std::string scratch_;
  // Abseil's string hash: Debian's Abseil is built without
  // std::string_view as absl::string_view, and its default hasher then falls
  // back to std::hash (libstdc++'s _Hash_bytes, ~3x the instructions on the
  // short names and tokens interned here).
  struct ViewHash {
    size_t operator()(std::string_view s) const {
      return absl::Hash<absl::string_view>{}(absl::string_view(s.data(), s.size()));
    }
  };
  // From the block pool, a large table made present at once when it grows
  // (a rehash writes all of it): ids_ grows to megabytes, ~2 k page faults
  // of the real16 job otherwise.
  using ViewMap = absl::flat_hash_map<std::string_view, uint32_t, ViewHash, std::equal_to<std::string_view>,
                                      PrefaultAllocator<std::pair<const std::string_view, uint32_t>>>;
  ViewMap strings_;
  ViewMap tokens_;
  ViewMap pids_;
  ViewMap ids_;
};

}  // namespace tracemill::formats
