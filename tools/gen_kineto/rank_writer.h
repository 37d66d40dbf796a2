#pragma once
// RankWriter: one rank's Kineto-like trace file (the layout is described in
// main.cc), built section by section into reusable buffers.
//
// Its methods live in three files: rank_writer.cc (the file and the shape
// of a training step: forward, backward, optimizer), rank_events.cc (one
// event of each kind: CPU ops, launches, runtime calls, memory instants) and
// rank_frame.cc (the file's head and its metadata trailer). Every random
// draw happens in a fixed order, so a seed gives the same bytes.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collective_schedule.h"
#include "names.h"
#include "rng.h"
#include "text_out.h"

namespace tracemill::tools::gen_kineto {

// SyncConfig: a synchronized job (--clock-offsets-us), checked and
// expanded from the flags by main.cc.
struct SyncConfig {
  std::vector<int64_t> node_offsets_us;  // per node (rank / gpus_per_node); empty: not synchronized
  int64_t jitter_us = 2;                 // J: each collective ends within +-J µs of its true end
  bool seq = false;                      // write `Seq` on the collective kernels
  int late_rank = -1;                    // --late-rank: this rank arrives late at some collectives
  int64_t late_us = 0;                   // --late-us: by at least this much (minus 35 µs) after every other
  int late_percent = 0;                  // --late-percent: of the instances, drawn job-wide
  std::string group_ranks;               // `Process Group Ranks`: "[0, 1, ..., ranks-1]"
  bool on() const { return !node_offsets_us.empty(); }
};

// Config: the command line of gen_kineto.
struct Config {
  int ranks = 8;
  int64_t events = 50000;
  uint64_t seed = 1;
  std::string out;
  bool gzip = false;
  int gzip_level = 6;
  int gpus_per_node = 8;
  std::string ts = "mixed";  // int | frac | mixed
  int jobs = 0;
  std::string clock_offsets_us;  // --clock-offsets-us as given ("" : not synchronized)
  // --dense: ~210 bytes per event, as smdebug and Horovod timelines: no
  // shapes or call stacks (record_shapes off) and no insignificant whitespace.
  bool dense = false;
  SyncConfig sync;
};

constexpr int kCpuThreads = 2;  // the main (Python) thread and the autograd thread

// The sections of one file, reused from rank to rank by a worker thread (no
// fresh pages to fault in for every file).
struct Sections {
  Out cpu[kCpuThreads];  // per thread, flushed into cpu_all a few steps at a time
  Out cpu_all, runtime, gpu, flows, instants;
  void Clear() {
    for (auto& t : cpu) t.str().clear();
    for (Out* o : {&cpu_all, &runtime, &gpu, &flows, &instants}) o->str().clear();
  }
};

// Generates one rank's file content.
class RankWriter {
 public:
  // Rank `rank` of the job `c`, writing into `sections` (cleared here).
  RankWriter(const Config& c, int rank, Sections* sections);

  // Number of events in the fixed trailer (metadata, Spans, Kineto's
  // string-pid instants).
  static int64_t FixedEvents(int gpus_per_node) {
    return 3 + 3 * gpus_per_node + 2 * (kCpuThreads + static_cast<int64_t>(kStreams.size())) + 4;
  }

  // Builds the whole file into `file`: exactly `c.events` trace events.
  void Build(std::string* file);

 private:
  // rank_writer.cc: training steps until the event budget is spent.
  int64_t Op(int th, std::string_view name, int depth, int64_t start, int64_t seq, bool may_launch);
  template <typename Body>
  int64_t Annotated(int th, std::string_view name, int64_t start, Body body);
  void Iteration(int64_t step);
  int64_t StepBody(int64_t t);
  int64_t Forward(int64_t t);
  int64_t Backward(int64_t t);
  int64_t BackwardNode(int64_t t);
  int64_t Collective(int64_t t);
  int64_t Optimizer(int64_t t);
  void FlushCpu();

  // rank_events.cc: one event (or group of events) each.
  void Ts(Out& o, int64_t ns);
  void Dur(Out& o, int64_t ns);
  void BeginX(Out& o, std::string_view cat, std::string_view name, int64_t pid, int64_t tid, int64_t ts,
              int64_t dur);
  static void EndEvent(Out& o) { o << "\n    }\n  },\n"; }
  void ShapeArgs(Out& o);
  void CpuOpEvent(int th, std::string_view cat, std::string_view name, int64_t ts, int64_t dur, bool shapes,
                  int64_t seq);
  int64_t Launch(int th, int64_t at, int kind, const CollectiveInstance* coll = nullptr);
  int64_t SyncCollectiveDur(const CollectiveInstance& coll, int64_t* k_ts);
  void CollectiveArgs(const CollectiveInstance& coll);
  void RuntimeOnly(int th, int64_t at);
  void MemoryInstant(int th, int64_t at);

  // rank_frame.cc: the file's head and trailer.
  void Header(Out* o);
  void Meta(Out& o, std::string_view name, std::string_view pid, int64_t tid, std::string_view key,
            std::string_view str_value, int64_t int_value, bool last = false);
  void Trailer(Out* o);

  const Config& c_;
  const int rank_;
  Rng rng_;
  const int dev_;
  const int64_t pid_;
  const bool frac_;
  int64_t clock_offset_ns_ = 0;  // added to every `ts`: this node's clock (synchronized jobs)
  std::optional<CollectiveSchedule> schedule_;  // synchronized jobs only
  int64_t tids_[kCpuThreads];
  int64_t start_ns_ = 0, end_ns_ = 0;
  int64_t now_[kCpuThreads] = {};
  std::array<int64_t, kStreams.size()> stream_free_{};
  int64_t remaining_ = 0;
  int64_t external_id_ = 0, record_function_id_ = 0, ev_idx_ = 0, correlation_ = 0, seq_nr_ = 0;
  int64_t allocated_ = 0;
  Out (&cpu_)[kCpuThreads];
  Out dense_scratch_;  // --dense: the args it leaves out (rank_events.cc)
  Out& cpu_all_;
  Out& runtime_;
  Out& gpu_;
  Out& flows_;
  Out& instants_;
};

}  // namespace tracemill::tools::gen_kineto
