// RankWriter: the file and the shape of a training step (rank_writer.h).
#include "rank_writer.h"

#include <algorithm>
#include <charconv>

namespace tracemill::tools::gen_kineto {

RankWriter::RankWriter(const Config& c, int rank, Sections* sections)
    : c_(c),
      rank_(rank),
      rng_(c.seed * 0x100000001b3ULL + static_cast<uint64_t>(rank) * 0x9e3779b97f4a7c15ULL + 1),
      dev_(rank % c.gpus_per_node),
      pid_(4000 + rank),
      frac_(c.ts == "frac" || (c.ts == "mixed" && rank % 2 == 0)),
      cpu_(sections->cpu),
      cpu_all_(sections->cpu_all),
      runtime_(sections->runtime),
      gpu_(sections->gpu),
      flows_(sections->flows),
      instants_(sections->instants) {
  sections->Clear();
  tids_[0] = pid_;                                                    // main thread: forward, optimizer
  tids_[1] = pid_ + 1000 + static_cast<int64_t>(rng_.Below(30000));  // autograd thread
  // Ranks start within a couple of ms of each other (kStartSpreadNs), like
  // a real job.
  start_ns_ = JobStartNs(c.seed) + rng_.Range(0, 2000) * kUs + rng_.Range(0, 999);
  if (c.sync.on()) {
    clock_offset_ns_ = c.sync.node_offsets_us[static_cast<size_t>(rank / c.gpus_per_node)] * kUs;
    schedule_.emplace(c.seed, c.sync.jitter_us, LateArrivals{c.sync.late_us, c.sync.late_percent});
  }
}

void RankWriter::Build(std::string* file) {
  const int64_t fixed = FixedEvents(c_.gpus_per_node);
  remaining_ = c_.events - fixed;
  const size_t guess = static_cast<size_t>(c_.events) * 460;
  for (auto& t : cpu_) t.Reserve(guess / 4);
  runtime_.Reserve(guess / 6);
  gpu_.Reserve(guess / 4);
  flows_.Reserve(guess / 6);
  instants_.Reserve(guess / 16);
  cpu_all_.Reserve(guess / 2);

  for (auto& f : stream_free_) f = start_ns_;
  now_[0] = start_ns_ + rng_.Range(50, 400) * kUs;
  now_[1] = now_[0];
  int64_t step = 0;
  while (remaining_ > 0) Iteration(step++);
  FlushCpu();
  end_ns_ = std::max({now_[0], now_[1], stream_free_[0], stream_free_[1], stream_free_[2], stream_free_[3]}) +
            50 * kUs;

  Out head;
  Header(&head);
  Out tail;
  Trailer(&tail);
  file->clear();
  file->reserve(head.size() + cpu_all_.size() + runtime_.size() + gpu_.size() + flows_.size() +
                instants_.size() + tail.size());
  file->append(head.str());
  file->append(cpu_all_.str());
  file->append(runtime_.str());
  file->append(gpu_.str());
  file->append(flows_.str());
  file->append(instants_.str());
  file->append(tail.str());
}

// A CPU op and its subtree on thread `th`, starting at `start`; written
// after its children (completion order). Returns its end.
int64_t RankWriter::Op(int th, std::string_view name, int depth, int64_t start, int64_t seq, bool may_launch) {
  if (remaining_ <= 0) return start;
  --remaining_;  // this op, written once its children are
  int64_t t = start + rng_.Range(1000, 6000);
  if (remaining_ > 0 && rng_.Percent(12)) {
    MemoryInstant(th, t);
    t += rng_.Range(200, 1500);
  }
  const uint32_t children = depth >= 3 ? 0 : rng_.Below(depth == 0 ? 4 : 3);
  for (uint32_t i = 0; i < children && remaining_ > 0; ++i) {
    std::string_view child = th == 1 ? rng_.Pick(kBackwardOps) : rng_.Pick(kAtenOps);
    t = Op(th, child, depth + 1, t, -1, may_launch) + rng_.Range(500, 3000);
  }
  if (children == 0 && may_launch) {
    if (remaining_ >= 4 && rng_.Percent(65)) {
      const int kind = rng_.Percent(92) ? 0 : rng_.Percent(60) ? 1 : 2;
      t = Launch(th, t + rng_.Range(2000, 9000), kind);
    } else if (remaining_ >= 1 && rng_.Percent(25)) {
      RuntimeOnly(th, t + rng_.Range(1000, 5000));
      t += rng_.Range(2000, 6000);
    } else {
      t += rng_.Range(2000, 30000);
    }
  }
  const int64_t end = t + rng_.Range(1000, 8000);
  CpuOpEvent(th, "cpu_op", name, start, end - start, depth > 0 || children == 0, seq);
  return end;
}

// A user annotation (cat user_annotation) around `body`, which takes its
// start and returns its end.
template <typename Body>
int64_t RankWriter::Annotated(int th, std::string_view name, int64_t start, Body body) {
  if (remaining_ <= 0) return start;
  --remaining_;
  int64_t end = body(start + rng_.Range(1000, 4000)) + rng_.Range(1000, 4000);
  CpuOpEvent(th, "user_annotation", name, start, end - start, false, -1);
  return end;
}

// One ProfilerStep#N: forward and optimizer on the main thread, backward on
// the autograd thread, as in torch.autograd.
void RankWriter::Iteration(int64_t step) {
  char step_name[32];
  auto r = std::to_chars(step_name, step_name + sizeof step_name, step);
  std::string name = "ProfilerStep#" + std::string(step_name, r.ptr);
  now_[0] = Annotated(0, name, now_[0], [this](int64_t t) { return StepBody(t); });
  now_[1] = std::max(now_[1], now_[0]);
  // Kineto's CPU buffers come out a few steps at a time.
  if (step % 2 == 1) FlushCpu();
}

// Inside a step: forward, backward (starting a little after), optimizer.
int64_t RankWriter::StepBody(int64_t t) {
  t = Annotated(0, "## forward ##", t, [this](int64_t t) { return Forward(t); });
  now_[1] = std::max(now_[1], t + rng_.Range(20000, 80000));
  now_[1] = Annotated(1, "## backward ##", now_[1], [this](int64_t t) { return Backward(t); });
  t = std::max(t, now_[1]) + rng_.Range(5000, 20000);
  return Annotated(0, "Optimizer.step#AdamW.step", t, [this](int64_t t) { return Optimizer(t); });
}

int64_t RankWriter::Forward(int64_t t) {
  for (int layer = 0; layer < kLayers && remaining_ > 0; ++layer) {
    const int ops = 8 + static_cast<int>(rng_.Below(8));
    for (int i = 0; i < ops && remaining_ > 0; ++i)
      t = Op(0, rng_.Pick(kAtenOps), 0, t, ++seq_nr_, true) + rng_.Range(2000, 15000);
  }
  return t;
}

// Per layer: autograd nodes, and every fourth layer an NCCL collective.
int64_t RankWriter::Backward(int64_t t) {
  for (int layer = 0; layer < kLayers && remaining_ > 0; ++layer) {
    const int nodes = 6 + static_cast<int>(rng_.Below(6));
    for (int i = 0; i < nodes && remaining_ > 0; ++i) t = BackwardNode(t);
    if (remaining_ > 0 && layer % kLayersPerCollective == kLayersPerCollective - 1) t = Collective(t);
  }
  return t;
}

// An NCCL collective: its c10d annotation around the launch, on the autograd
// thread. In a synchronized job it is the schedule's next instance (the
// same operation on every rank), its kernel ends at the instance's true end
// plus this rank's jitter, and the thread waits for that end (a stream
// synchronize), so its next work starts at most J after the true end.
int64_t RankWriter::Collective(int64_t t) {
  if (!schedule_) {
    return Annotated(1, rng_.Pick(kNcclAnnotations), t, [this](int64_t t) {
      if (remaining_ >= 4) t = Launch(1, t + rng_.Range(5000, 20000), 3);
      return t;
    });
  }
  CollectiveInstance coll = schedule_->Next();
  // The late rank waits (CPU work the others do not have) until the latest
  // launch that still makes the collective (collective_schedule.h).
  const int64_t late_at = coll.late && rank_ == c_.sync.late_rank ? schedule_->LateLaunchNs(coll) : INT64_MIN;
  coll.end_ns += rng_.Range(-c_.sync.jitter_us, c_.sync.jitter_us) * kUs;
  bool launched = false;
  t = Annotated(1, kSyncCollectives[static_cast<size_t>(coll.op)].annotation, t, [&](int64_t t) {
    if (remaining_ < 4) return t;
    launched = true;
    return Launch(1, std::max(t + rng_.Range(5000, 20000), late_at), 3, &coll);
  });
  return launched ? std::max(t, coll.end_ns) : t;
}

// evaluate_function -> node -> ops (the node is written first, as Kineto
// does: both end together). Returns where the next node starts.
int64_t RankWriter::BackwardNode(int64_t t) {
  std::string_view node = rng_.Pick(kBackwardNodes);
  std::string eval = "autograd::engine::evaluate_function: " + std::string(node);
  const int64_t seq = seq_nr_ - rng_.Range(0, 300);
  if (remaining_ < 2) return Op(1, node, 1, t, seq, true);
  --remaining_;  // the evaluate_function wrapper
  const int64_t start = t;
  const int64_t end = Op(1, node, 1, t + rng_.Range(500, 2000), seq, true) + rng_.Range(500, 3000);
  CpuOpEvent(1, "cpu_op", eval, start, end - start, false, seq);
  return end + rng_.Range(1000, 6000);
}

int64_t RankWriter::Optimizer(int64_t t) {
  const int ops = 10 + static_cast<int>(rng_.Below(10));
  for (int i = 0; i < ops && remaining_ > 0; ++i)
    t = Op(0, rng_.Pick(kOptimizerOps), 1, t, -1, true) + rng_.Range(1000, 5000);
  return t;
}

void RankWriter::FlushCpu() {
  for (auto& t : cpu_) {
    cpu_all_ << t.str();
    t.str().clear();
  }
}

}  // namespace tracemill::tools::gen_kineto
