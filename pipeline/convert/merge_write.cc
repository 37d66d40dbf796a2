#include "pipeline/convert/merge_write.h"

#include <libdeflate.h>
#include <tbb/concurrent_queue.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "merge/kway_merger.h"
#include "merge/range_cutter.h"

namespace tracemill::pipeline {
namespace {

// Bytes FormatEvent writes for an event besides its rest and name, at most
// (separator, keys, pid, tid, ts, dur, ids): only sizes the ranges.
constexpr size_t kEventOverhead = 192;
// Events per range: at least, at most.
constexpr size_t kMinRangeEvents = 64;
constexpr size_t kMaxRangeEvents = 4096;

struct Batch {
  merge::MergeRange range;  // the events (spilled runs' copies are its own)
  // The kept events in order (copies, 64 bytes each), and those not kept
  // (copies without their rest bytes) with the number of kept ones before
  // them.
  std::vector<std::pair<int, formats::Event>> events;
  struct Dropped {
    size_t kept_before;
    int run;
    formats::Event e;
  };
  std::vector<Dropped> dropped;
  // Merged by the serial stage (an output with spilled runs): `events` are
  // already merged and kept; the rest bytes of spilled runs' events are
  // copied into `spilled_rest` (their `rest` an offset there until formatted).
  bool merged = false;
  std::string spilled_rest;
  formats::ByteBuffer bytes;   // formatted, every entry with the ",\n" separator
  std::vector<uint32_t> ends;  // end offset of each event in `bytes`
  // The CRC-32 of `bytes`, computed by the formatting thread (a plain
  // output: the append stage then only combines it).
  std::optional<uint32_t> crc;
  // What the append stage left to the copy stage: `bytes`' copy into the
  // file's direct-I/O ring (none: appended already).
  formats::DirectRing::Reservation reserved;
  // Its kept events as an output in parts tracks them (OutputParts::tracks).
  OutputParts::Tracked tracked;

  void Clear() {
    events.clear();
    dropped.clear();
    spilled_rest.clear();
    bytes.Clear();
    ends.clear();
    crc.reset();
    reserved = {};
    tracked.Clear();
  }
  // Drop records an event not kept (its rest not kept either: valid only
  // until its run's next event when the run is spilled).
  void Drop(int run, const formats::Event& e) {
    formats::Event copy = e;
    copy.rest = nullptr;
    copy.rest_len = 0;
    dropped.push_back({events.size(), run, copy});
  }
};

// The two writers' steps: one file (ChromeWriter) or an output in parts
// (OutputParts, which also sees the events to place its cuts).
absl::Status WriteOne(formats::ChromeWriter& w, int, formats::WriterInput& in, const formats::Event& e) {
  return w.WriteEvent(in, e);
}
absl::Status WriteOne(OutputParts& w, int run, formats::WriterInput& in, const formats::Event& e) {
  return w.WriteEvent(run, in, e);
}
absl::Status AppendBatch(formats::ChromeWriter& w, Batch& b) {
  return w.AppendFormatted(b.bytes.view(), b.ends, b.crc, &b.reserved);
}
absl::Status AppendBatch(OutputParts& w, Batch& b) {
  return w.AppendFormatted(b.bytes.view(), b.ends, b.events, b.crc, &b.reserved, w.tracks() ? &b.tracked : nullptr);
}
// TrackBatch (the parallel stage): what an output in parts tracks of the
// batch's kept events; a single file tracks nothing.
void TrackBatch(const formats::ChromeWriter&, const std::vector<formats::WriterInput>&, Batch*) {}
void TrackBatch(const OutputParts& w, const std::vector<formats::WriterInput>& winputs, Batch* b) {
  if (!w.tracks()) return;
  for (const auto& [run, e] : b->events) b->tracked.Add(run, e, winputs[run].clock_shift_ns);
}

template <typename Writer>
absl::Status WriteSerial(const std::vector<merge::SortedRun*>& runs, const std::vector<int64_t>& shifts_ns,
                         std::vector<formats::WriterInput>& winputs, Writer& w, const MergeHooks& hooks) {
  merge::KWayMerger merger(runs, shifts_ns);
  while (true) {
    auto [run, e] = merger.Next();
    if (!e) return absl::OkStatus();
    const bool kept = hooks.Keeps(run, *e);
    if (hooks.seen) hooks.seen(run, *e, kept);
    if (!kept) continue;
    if (absl::Status st = WriteOne(w, run, winputs[run], *e); !st.ok()) return st;
  }
}

// RangeEvents: events per range, so that a range formats to about
// kRangeBytes (from the runs' average rest).
size_t RangeEvents(const std::vector<merge::SortedRun*>& runs) {
  uint64_t events = 0, rest = 0;
  for (const merge::SortedRun* r : runs) {
    events += r->size();
    rest += r->rest_bytes();
  }
  const uint64_t per_event = kEventOverhead + (events ? rest / events : 0);
  return std::clamp<size_t>(kRangeBytes / per_event, kMinRangeEvents, kMaxRangeEvents);
}

// FormatEvents (the parallel stage): merges `b`'s range, keeps and formats;
// for a batch merged by the serial stage, formats its events.
void FormatEvents(Batch* b, const std::vector<formats::WriterInput>& winputs, int64_t ts_offset_ns,
                  const MergeHooks& hooks) {
  formats::MicrosText ts_text;
  auto format = [&](int run, const formats::Event& e) {
    formats::ChromeWriter::FormatEvent(winputs[run], e, ts_offset_ns, /*first=*/false, &b->bytes, &ts_text);
    b->ends.push_back(static_cast<uint32_t>(b->bytes.size()));
  };
  if (b->merged) {
    for (const auto& [run, e] : b->events) format(run, e);
    return;
  }
  b->range.ForEach([&](int run, const formats::Event& e) {
    if (!hooks.Keeps(run, e)) {
      b->Drop(run, e);
      return;
    }
    b->events.emplace_back(run, e);
    format(run, e);
  });
}

// FormatRange: FormatEvents, and the CRC-32 of the bytes if `with_crc`.
void FormatRange(Batch* b, const std::vector<formats::WriterInput>& winputs, int64_t ts_offset_ns,
                 const MergeHooks& hooks, bool with_crc) {
  FormatEvents(b, winputs, ts_offset_ns, hooks);
  if (with_crc) b->crc = libdeflate_crc32(0, b->bytes.data(), b->bytes.size());
}

// MergeBatch (the first stage, for an output with spilled runs): the next
// ~kBatchBytes of events from the serial merge, filtered and copied.
// Returns false when nothing is left.
bool MergeBatch(merge::KWayMerger& merger, const std::vector<char>& spilled, const MergeHooks& hooks, Batch* b) {
  b->Clear();
  b->merged = true;
  size_t estimate = 0;
  bool any = false;
  while (estimate < kBatchBytes && b->events.size() < kMaxRangeEvents) {
    auto [run, e] = merger.Next();
    if (!e) break;
    any = true;
    if (!hooks.Keeps(run, *e)) {
      b->Drop(run, *e);
      continue;
    }
    formats::Event& copy = b->events.emplace_back(run, *e).second;
    if (spilled[run] && e->rest_len) {
      copy.rest = reinterpret_cast<const char*>(uintptr_t{b->spilled_rest.size()});
      b->spilled_rest.append(e->rest, e->rest_len);
    }
    estimate += e->rest_len + kEventOverhead;
  }
  for (auto& [run, e] : b->events)
    if (spilled[run] && e.rest_len) e.rest = b->spilled_rest.data() + reinterpret_cast<uintptr_t>(e.rest);
  return any;
}

// CountRange (the last stage, before the append): counts the kept events
// in order, calls `seen` in merge order, and fixes the separator of the
// array's first entry.
template <typename Writer>
void CountRange(Batch* b, std::vector<formats::WriterInput>& winputs, Writer& w, const MergeHooks& hooks) {
  const bool see = static_cast<bool>(hooks.seen);
  size_t d = 0;
  for (size_t i = 0; i <= b->events.size(); ++i) {
    for (; see && d < b->dropped.size() && b->dropped[d].kept_before == i; ++d)
      hooks.seen(b->dropped[d].run, b->dropped[d].e, false);
    if (i == b->events.size()) break;
    auto& [run, e] = b->events[i];
    if (w.CountEvent(winputs[run])) {  // only ever events[0]: "\n", not ",\n"
      b->bytes.EraseFront(1);
      for (uint32_t& end : b->ends) --end;
      if (b->crc) b->crc = libdeflate_crc32(0, b->bytes.data(), b->bytes.size());
    }
    if (see) hooks.seen(run, e, true);
  }
}

template <typename Writer>
absl::Status WriteParallel(const std::vector<merge::SortedRun*>& runs, const std::vector<int64_t>& shifts_ns,
                           std::vector<formats::WriterInput>& winputs, Writer& w, const MergeHooks& hooks,
                           int threads, MergeStats& stats) {
  // Under kMinRangeThreads threads, or with a spilled run, the first stage
  // merges (KWayMerger), as before ranges (see merge_write.h).
  std::vector<char> spilled(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) spilled[i] = runs[i]->spilled();
  std::optional<merge::KWayMerger> merger;
  std::optional<merge::RangeCutter> cutter;  // otherwise
  if (threads < kMinRangeThreads || std::find(spilled.begin(), spilled.end(), 1) != spilled.end())
    merger.emplace(runs, shifts_ns);
  else
    cutter.emplace(runs, shifts_ns, RangeEvents(runs), kRangeCopyBytes);
  stats.merged_serially = merger.has_value();
  // As many ranges in flight as threads can merge them (at least 4: the
  // serial stages' turns).
  const size_t tokens = std::clamp<size_t>(static_cast<size_t>(threads), kBatchTokens, kMaxBatchTokens);
  // Batches are reused: each token holds one from the cut stage until the
  // copy stage gives it back, so `tokens` of them are enough.
  std::vector<std::unique_ptr<Batch>> owned;
  tbb::concurrent_queue<Batch*> free_batches;
  for (size_t i = 0; i < tokens; ++i) {
    owned.push_back(std::make_unique<Batch>());
    free_batches.push(owned.back().get());
  }
  // Called by the (serial) cut stage only. The copy stage gives a batch
  // back before its token is released, so one is always free; a new one
  // only if that ever failed to hold.
  auto take = [&]() -> Batch* {
    Batch* b = nullptr;
    if (free_batches.try_pop(b)) return b;
    owned.push_back(std::make_unique<Batch>());
    return owned.back().get();
  };

  std::atomic<bool> failed{false};
  absl::Status status;  // the first write error; set by the append stage only
  // Stage 1 (serial, in order): cut the next range.
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point t0) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
  };
  auto cut_stage = [&](tbb::flow_control& fc) -> Batch* {
    const auto t0 = Clock::now();
    Batch* b = failed.load(std::memory_order_relaxed) ? nullptr : take();
    bool cut = false;
    if (b && merger) {
      cut = MergeBatch(*merger, spilled, hooks, b);
    } else if (b) {
      b->Clear();
      b->merged = false;
      cut = cutter->Next(&b->range);
    }
    stats.cut_ns += since(t0);
    if (cut) {
      ++stats.ranges;
      return b;
    }
    if (b) free_batches.push(b);
    fc.stop();
    return nullptr;
  };
  // Stage 2 (parallel): merge, keep and format a range into its own buffer.
  const int64_t offset = w.ts_offset_ns();
  const bool with_crc = !w.gzip();  // a gzip file's CRC is of its members
  auto format_stage = [&](Batch* b) {
    FormatRange(b, winputs, offset, hooks, with_crc);
    TrackBatch(w, winputs, b);
    return b;
  };
  // Stage 3 (serial, in order): count, see, append to the file (a plain
  // direct-I/O file: reserve the bytes' place, the copy is stage 4's).
  auto append_stage = [&](Batch* b) {
    if (status.ok()) {
      auto t0 = Clock::now();
      CountRange(b, winputs, w, hooks);
      stats.count_ns += since(t0);
      t0 = Clock::now();
      if (!b->events.empty()) status = AppendBatch(w, *b);
      stats.append_ns += since(t0);
      if (!status.ok()) failed.store(true, std::memory_order_relaxed);
    }
    return b;
  };
  // Stage 4 (parallel): copy the range's bytes into the file's direct-I/O
  // ring where the append stage reserved their place (a write error shows
  // at a later append or at Finish), then give the batch back.
  auto copy_stage = [&](Batch* b) {
    if (b->reserved.ring) b->reserved.ring->Copy(b->reserved);
    free_batches.push(b);
  };
  // Isolated: while this thread waits for the pipeline it runs only the
  // pipeline's tasks, not a decode of the flow graph around it (which would
  // hold up this output's serial stages); other threads still take the
  // merge tasks when they are free.
  tbb::this_task_arena::isolate([&] {
    tbb::parallel_pipeline(
        tokens, tbb::make_filter<void, Batch*>(tbb::filter_mode::serial_in_order, cut_stage) &
                          tbb::make_filter<Batch*, Batch*>(tbb::filter_mode::parallel, format_stage) &
                          tbb::make_filter<Batch*, Batch*>(tbb::filter_mode::serial_in_order, append_stage) &
                          tbb::make_filter<Batch*, void>(tbb::filter_mode::parallel, copy_stage));
  });
  stats.disk_wait_ns = w.disk_wait_ns();
  return status;
}

}  // namespace

bool FormatsInParallel(const std::vector<merge::SortedRun*>& runs, int threads) {
  // A range holds whole events, twice (a copy of a spilled one's rest, and
  // formatted), and up to kMaxBatchTokens of them are in flight: runs with larger
  // events are written by the serial loop, which holds one at a time.
  if (threads <= 1) return false;
  for (const merge::SortedRun* r : runs)
    if (r->max_rest_len() > kMaxParallelRestBytes) return false;
  return true;
}

absl::Status WriteMerged(const std::vector<merge::SortedRun*>& runs, const std::vector<int64_t>& shifts_ns,
                         std::vector<formats::WriterInput>& winputs, formats::ChromeWriter& w, int threads,
                         const MergeHooks& hooks, MergeStats* stats) {
  if (!FormatsInParallel(runs, threads)) return WriteSerial(runs, shifts_ns, winputs, w, hooks);
  MergeStats local;
  return WriteParallel(runs, shifts_ns, winputs, w, hooks, threads, stats ? *stats : local);
}

absl::Status WriteMerged(const std::vector<merge::SortedRun*>& runs, const std::vector<int64_t>& shifts_ns,
                         std::vector<formats::WriterInput>& winputs, OutputParts& w, int threads,
                         const MergeHooks& hooks, MergeStats* stats) {
  if (!FormatsInParallel(runs, threads)) return WriteSerial(runs, shifts_ns, winputs, w, hooks);
  MergeStats local;
  return WriteParallel(runs, shifts_ns, winputs, w, hooks, threads, stats ? *stats : local);
}

}  // namespace tracemill::pipeline
