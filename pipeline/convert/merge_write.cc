#include "pipeline/convert/merge_write.h"

#include <tbb/concurrent_queue.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <memory>
#include <string>
#include <utility>

namespace tracemill::pipeline {
namespace {

// Bytes FormatEvent writes for an event besides its rest and name, at most
// (separator, keys, pid, tid, ts, dur, ids): only sizes the batches.
constexpr size_t kEventOverhead = 192;
// Events per batch at most (events without args).
constexpr size_t kMaxBatchEvents = 4096;

struct Batch {
  // Copies of the events (64 bytes each). An event of a spilled run is
  // valid only until its run's next event, so its rest bytes are copied to
  // `spilled_rest` and its `rest` holds their offset there until formatted.
  std::vector<std::pair<int, formats::Event>> events;
  std::string spilled_rest;
  bool first = false;  // events[0] is the first entry of the traceEvents array
  std::string bytes;   // formatted
  std::vector<uint32_t> ends;  // end offset of each event in `bytes`
};

// The two writers' steps: one file (ChromeWriter) or an output in parts
// (OutputParts, which also sees the events to place its cuts).
absl::Status WriteOne(formats::ChromeWriter& w, int, formats::WriterInput& in, const formats::Event& e) {
  return w.WriteEvent(in, e);
}
absl::Status WriteOne(OutputParts& w, int run, formats::WriterInput& in, const formats::Event& e) {
  return w.WriteEvent(run, in, e);
}
absl::Status AppendBatch(formats::ChromeWriter& w, const Batch& b) { return w.AppendFormatted(b.bytes, b.ends); }
absl::Status AppendBatch(OutputParts& w, const Batch& b) { return w.AppendFormatted(b.bytes, b.ends, b.events); }

template <typename Writer>
absl::Status WriteSerial(merge::KWayMerger& merger, std::vector<formats::WriterInput>& winputs, Writer& w,
                         const std::function<bool(int, const formats::Event&)>& keep) {
  while (true) {
    auto [run, e] = merger.Next();
    if (!e) return absl::OkStatus();
    if (!keep(run, *e)) continue;
    if (absl::Status st = WriteOne(w, run, winputs[run], *e); !st.ok()) return st;
  }
}

template <typename Writer>
absl::Status WriteParallel(merge::KWayMerger& merger, const std::vector<merge::SortedRun*>& runs,
                           std::vector<formats::WriterInput>& winputs, Writer& w,
                           const std::function<bool(int run, const formats::Event& e)>& keep);

}  // namespace

bool FormatsInParallel(const std::vector<merge::SortedRun*>& runs, int threads) {
  // A batch holds whole events, twice (a copy of a spilled one's rest, and
  // formatted), and kBatchTokens of them are in flight: runs with larger
  // events are written by the serial loop, which holds one at a time.
  if (threads <= 1) return false;
  for (const merge::SortedRun* r : runs)
    if (r->max_rest_len() > kMaxParallelRestBytes) return false;
  return true;
}

absl::Status WriteMerged(merge::KWayMerger& merger, const std::vector<merge::SortedRun*>& runs,
                         std::vector<formats::WriterInput>& winputs, formats::ChromeWriter& w, int threads,
                         const std::function<bool(int run, const formats::Event& e)>& keep) {
  if (!FormatsInParallel(runs, threads)) return WriteSerial(merger, winputs, w, keep);
  return WriteParallel(merger, runs, winputs, w, keep);
}

absl::Status WriteMerged(merge::KWayMerger& merger, const std::vector<merge::SortedRun*>& runs,
                         std::vector<formats::WriterInput>& winputs, OutputParts& w, int threads,
                         const std::function<bool(int run, const formats::Event& e)>& keep) {
  if (!FormatsInParallel(runs, threads)) return WriteSerial(merger, winputs, w, keep);
  return WriteParallel(merger, runs, winputs, w, keep);
}

namespace {

template <typename Writer>
absl::Status WriteParallel(merge::KWayMerger& merger, const std::vector<merge::SortedRun*>& runs,
                           std::vector<formats::WriterInput>& winputs, Writer& w,
                           const std::function<bool(int run, const formats::Event& e)>& keep) {
  std::vector<char> spilled(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) spilled[i] = runs[i]->spilled();

  // Batches are reused: each token holds one from the input stage until the
  // output stage gives it back, so kBatchTokens of them are enough.
  std::vector<std::unique_ptr<Batch>> owned;
  tbb::concurrent_queue<Batch*> free_batches;
  for (size_t i = 0; i < kBatchTokens; ++i) {
    owned.push_back(std::make_unique<Batch>());
    owned.back()->bytes.reserve(kBatchBytes + (64 << 10));
    free_batches.push(owned.back().get());
  }
  // Called by the (serial) merge stage only. The append stage gives a batch
  // back before its token is released, so one is always free; a new one
  // only if that ever failed to hold.
  auto take = [&]() -> Batch* {
    Batch* b = nullptr;
    if (free_batches.try_pop(b)) return b;
    owned.push_back(std::make_unique<Batch>());
    return owned.back().get();
  };

  std::atomic<bool> failed{false};
  absl::Status status;  // the first write error; set by the output stage only
  bool merged_all = false;
  // Stage 1 (serial, in order): the next ~kBatchBytes of events, counted.
  auto merge_stage = [&](tbb::flow_control& fc) -> Batch* {
    if (merged_all || failed.load(std::memory_order_relaxed)) {
      fc.stop();
      return nullptr;
    }
    Batch* b = take();
    b->events.clear();
    b->spilled_rest.clear();
    b->bytes.clear();
    b->ends.clear();
    b->first = false;
    size_t estimate = 0;
    while (estimate < kBatchBytes && b->events.size() < kMaxBatchEvents) {
      auto [run, e] = merger.Next();
      if (!e) {
        merged_all = true;
        break;
      }
      if (!keep(run, *e)) continue;
      const bool first = w.CountEvent(winputs[run]);
      if (b->events.empty()) b->first = first;
      formats::Event& copy = b->events.emplace_back(run, *e).second;
      if (spilled[run] && e->rest_len) {
        copy.rest = reinterpret_cast<const char*>(uintptr_t{b->spilled_rest.size()});
        b->spilled_rest.append(e->rest, e->rest_len);
      }
      estimate += e->rest_len + kEventOverhead;
    }
    if (b->events.empty()) {
      free_batches.push(b);
      fc.stop();
      return nullptr;
    }
    return b;
  };
  // Stage 2 (parallel): format a batch into its own buffer.
  auto format_stage = [&](Batch* b) {
    const int64_t offset = w.ts_offset_ns();
    for (size_t i = 0; i < b->events.size(); ++i) {
      auto& [run, e] = b->events[i];
      if (spilled[run] && e.rest_len) e.rest = b->spilled_rest.data() + reinterpret_cast<uintptr_t>(e.rest);
      formats::ChromeWriter::FormatEvent(winputs[run], e, offset, i == 0 && b->first, &b->bytes);
      b->ends.push_back(static_cast<uint32_t>(b->bytes.size()));
    }
    return b;
  };
  // Stage 3 (serial, in order): append to the file.
  auto append_stage = [&](Batch* b) {
    if (status.ok()) {
      status = AppendBatch(w, *b);
      if (!status.ok()) failed.store(true, std::memory_order_relaxed);
    }
    free_batches.push(b);
  };
  // Isolated: while this thread waits for the pipeline it runs only the
  // pipeline's tasks, not a decode of the flow graph around it (which would
  // hold up this output's serial stages); other threads still take the
  // format tasks when they are free.
  tbb::this_task_arena::isolate([&] {
    tbb::parallel_pipeline(
        kBatchTokens, tbb::make_filter<void, Batch*>(tbb::filter_mode::serial_in_order, merge_stage) &
                          tbb::make_filter<Batch*, Batch*>(tbb::filter_mode::parallel, format_stage) &
                          tbb::make_filter<Batch*, void>(tbb::filter_mode::serial_in_order, append_stage));
  });
  return status;
}

}  // namespace
}  // namespace tracemill::pipeline
