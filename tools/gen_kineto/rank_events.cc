// RankWriter's events, one kind each (rank_writer.h). Each is written as
// `  {...},\n`; the trailer closes the array.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "rank_writer.h"

namespace tracemill::tools::gen_kineto {

// A timestamp: true time `ns` on this node's clock (the offset is 0 unless
// the job is synchronized).
void RankWriter::Ts(Out& o, int64_t ns) {
  ns += clock_offset_ns_;
  if (frac_) {
    o.Fixed(ns, 3);
  } else {
    o.Int(ns / kUs);
  }
}
void RankWriter::Dur(Out& o, int64_t ns) {
  if (frac_) {
    o.Fixed(ns, 3);
  } else {
    o.Int(ns / kUs);
  }
}


void RankWriter::BeginX(Out& o, std::string_view cat, std::string_view name, int64_t pid, int64_t tid,
            int64_t ts, int64_t dur) {
  o << "  {\n    \"ph\": \"X\", \"cat\": ";
  o.Str(cat) << ", \"name\": ";
  o.Str(name) << ", \"pid\": ";
  o.Int(pid) << ", \"tid\": ";
  o.Int(tid) << ",\n    \"ts\": ";
  Ts(o, ts);
  o << ", \"dur\": ";
  Dur(o, dur);
  o << ",\n    \"args\": {\n      ";
}

// Kineto's `Input Dims` / `Input type` / `Input Strides` / `Concrete Inputs`.
void RankWriter::ShapeArgs(Out& o) {
  const int n = 1 + static_cast<int>(rng_.Below(4));
  int dims[4][4];
  int ranks[4];
  for (int i = 0; i < n; ++i) {
    ranks[i] = static_cast<int>(rng_.Below(4));
    for (int d = 0; d < ranks[i]; ++d) dims[i][d] = rng_.Pick(kDims);
  }
  o << ", \"Input Dims\": [";
  for (int i = 0; i < n; ++i) {
    if (i) o << ", ";
    o << '[';
    for (int d = 0; d < ranks[i]; ++d) {
      if (d) o << ", ";
      o.Int(dims[i][d]);
    }
    o << ']';
  }
  o << "], \"Input type\": [";
  for (int i = 0; i < n; ++i) {
    if (i) o << ", ";
    o.Str(ranks[i] ? kInputTypes[rng_.Below(3)] : kInputTypes[3 + rng_.Below(4)]);
  }
  o << "], \"Input Strides\": [";
  for (int i = 0; i < n; ++i) {
    if (i) o << ", ";
    o << '[';
    int64_t stride = 1;
    int64_t strides[4];
    for (int d = ranks[i] - 1; d >= 0; --d) {
      strides[d] = stride;
      stride *= dims[i][d];
    }
    for (int d = 0; d < ranks[i]; ++d) {
      if (d) o << ", ";
      o.Int(strides[d]);
    }
    o << ']';
  }
  o << "], \"Concrete Inputs\": [";
  for (int i = 0; i < n; ++i) {
    if (i) o << ", ";
    if (ranks[i] == 0 && rng_.Percent(50)) {
      o << '"';
      o.Int(rng_.Range(0, 8));
      o << '"';
    } else {
      o << "\"\"";
    }
  }
  o << ']';
}

void RankWriter::CpuOpEvent(int th, std::string_view cat, std::string_view name, int64_t ts, int64_t dur,
                bool shapes, int64_t seq) {
  Out& o = cpu_[th];
  BeginX(o, cat, name, pid_, tids_[th], ts, dur);
  o << "\"External id\": ";
  o.Int(++external_id_) << ",\"Record function id\": ";
  o.Int(++record_function_id_);
  if (seq >= 0) {
    o << ", \"Sequence number\": ";
    o.Int(seq) << ", \"Fwd thread id\": 1";
  }
  o << ", \"Ev Idx\": ";
  o.Int(ev_idx_++);
  // --dense writes them into a scratch buffer: the random stream, and so
  // every other event, stays that of the default layout.
  Out& extra = c_.dense ? dense_scratch_ : o;
  if (shapes) ShapeArgs(extra);
  if (th == 0 && cat == "cpu_op") {
    extra << ", \"Call stack\": \"";
    const uint32_t frames = 3 + rng_.Below(5);
    for (uint32_t i = 0; i < frames; ++i) extra << rng_.Pick(kFrames) << ';';
    extra << "/workspace/train.py(268): main;train.py(301): <module>\"";
  }
  dense_scratch_.str().clear();
  EndEvent(o);
}

// A kernel (or memcpy/memset) launched at `at` from thread `th`: a runtime
// event, the GPU event and an ac2g flow pair (4 events). `kind`: 0 a
// kernel, 1 a memcpy, 2 a memset, 3 an NCCL kernel: `coll`'s when given (a
// synchronized job), ending at `coll->end_ns`. Returns where the thread
// goes on (the runtime call's end), ns.
int64_t RankWriter::Launch(int th, int64_t at, int kind, const CollectiveInstance* coll) {
  const int64_t corr = ++correlation_;
  const int64_t ext = external_id_;
  const int64_t rt_dur = rng_.Range(3000, 18000);
  std::string_view rt_name = kind == 1   ? std::string_view("cudaMemcpyAsync")
                             : kind == 2 ? std::string_view("cudaMemsetAsync")
                             : rng_.Percent(90) ? std::string_view("cudaLaunchKernel")
                                                : std::string_view("cudaLaunchKernelExC");
  const int cbid = kind == 1 ? 41 : kind == 2 ? 51 : rt_name == "cudaLaunchKernel" ? 211 : 430;
  BeginX(runtime_, "cuda_runtime", rt_name, pid_, tids_[th], at, rt_dur);
  runtime_ << "\"External id\": ";
  runtime_.Int(ext) << ",      \"cbid\": ";
  runtime_.Int(cbid) << ", \"correlation\": ";
  runtime_.Int(corr);
  EndEvent(runtime_);

  const int si = kind == 3 ? 3 : rng_.Percent(85) ? 0 : 1 + static_cast<int>(rng_.Below(2));
  const int stream = kStreams[si];
  int64_t k_ts = std::max(stream_free_[si] + rng_.Range(1000, 4000), at + rng_.Range(6000, 40000));
  int64_t k_dur;
  std::string_view cat, name;
  if (kind == 1) {
    cat = "gpu_memcpy";
    name = rng_.Pick(kMemcpyNames);
    k_dur = rng_.Range(1500, 60000);
  } else if (kind == 2) {
    cat = "gpu_memset";
    name = "Memset (Device)";
    k_dur = rng_.Range(1000, 8000);
  } else if (kind == 3 && coll) {
    cat = "kernel";
    name = kNcclKernels[static_cast<size_t>(kSyncCollectives[static_cast<size_t>(coll->op)].kernel)];
    k_dur = SyncCollectiveDur(*coll, &k_ts);
  } else if (kind == 3) {
    cat = "kernel";
    name = rng_.Pick(kNcclKernels);
    k_dur = rng_.Range(20000, 900000);
  } else {
    cat = "kernel";
    name = rng_.Pick(kKernels);
    k_dur = rng_.Percent(80) ? rng_.Range(1500, 40000) : rng_.Range(40000, 600000);
  }
  stream_free_[si] = k_ts + k_dur;
  BeginX(gpu_, cat, name, dev_, stream, k_ts, k_dur);
  gpu_ << "\"External id\": ";
  gpu_.Int(ext) << ",      \"queued\": 0, \"device\": ";
  gpu_.Int(dev_) << ", \"context\": 1,      \"stream\": ";
  gpu_.Int(stream) << ", \"correlation\": ";
  gpu_.Int(corr);
  if (kind == 1 || kind == 2) {
    const int64_t bytes = int64_t{1} << rng_.Range(2, 27);
    gpu_ << ",      \"bytes\": ";
    gpu_.Int(bytes) << ", \"memory bandwidth (GB/s)\": ";
    gpu_.Fixed(bytes * 1000000 / std::max<int64_t>(k_dur, 1), 6);  // bytes/ns = GB/s
  } else {
    const int64_t grid = int64_t{1} << rng_.Range(0, 14);
    const int64_t block = int64_t{32} << rng_.Range(0, 5);
    constexpr int64_t kSms = 132;
    gpu_ << ",      \"registers per thread\": ";
    gpu_.Int(16 + 8 * rng_.Range(0, 28)) << ",      \"shared memory\": ";
    gpu_.Int(rng_.Percent(50) ? 0 : 1024 * rng_.Range(1, 200)) << ",      \"blocks per SM\": ";
    gpu_.Fixed(grid * 1000000 / kSms, 6) << ",      \"warps per SM\": ";
    gpu_.Fixed(grid * (block / 32) * 1000000 / kSms, 6) << ",      \"grid\": [";
    gpu_.Int(grid) << ", 1, 1],      \"block\": [";
    gpu_.Int(block) << ", 1, 1],      \"est. achieved occupancy %\": ";
    gpu_.Int(rng_.Range(0, 100));
    if (coll) CollectiveArgs(*coll);
  }
  EndEvent(gpu_);

  flows_ << "  {\n    \"ph\": \"s\", \"id\": ";
  flows_.Int(corr) << ", \"pid\": ";
  flows_.Int(pid_) << ", \"tid\": ";
  flows_.Int(tids_[th]) << ", \"ts\": ";
  Ts(flows_, at);
  flows_ << ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  },\n";
  flows_ << "  {\n    \"ph\": \"f\", \"id\": ";
  flows_.Int(corr) << ", \"pid\": ";
  flows_.Int(dev_) << ", \"tid\": ";
  flows_.Int(stream) << ", \"ts\": ";
  Ts(flows_, k_ts);
  flows_ << ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  },\n";
  remaining_ -= 4;
  return at + rt_dur;
}

// A synchronized collective's kernel: starts on the whole µs at or after
// `*k_ts` (updated), ends at `coll.end_ns`. Returns its duration (ns).
// Aborts if that leaves less than kMinCollectiveNs: the schedule's bound
// (collective_schedule.h) no longer matches the generator.
int64_t RankWriter::SyncCollectiveDur(const CollectiveInstance& coll, int64_t* k_ts) {
  *k_ts = (*k_ts + kUs - 1) / kUs * kUs;
  if (coll.end_ns - *k_ts < kMinCollectiveNs) {
    std::fprintf(stderr,
                 "gen_kineto: internal error: rank %d launches collective %lld %lld ns before its end; "
                 "the bound in collective_schedule.h is too small\n",
                 rank_, static_cast<long long>(coll.index), static_cast<long long>(coll.end_ns - *k_ts));
    std::abort();
  }
  return coll.end_ns - *k_ts;
}

// Kineto 2.x's NCCL metadata on a collective kernel's args: one process
// group of every rank ("0", default_pg), and `Seq` (the instance in that
// group) with --collective-seq.
void RankWriter::CollectiveArgs(const CollectiveInstance& coll) {
  gpu_ << ",      \"Collective name\": ";
  gpu_.Str(kSyncCollectives[static_cast<size_t>(coll.op)].collective_name)
      << ", \"Process Group Name\": \"0\", \"Process Group Description\": \"default_pg\", "
         "\"Process Group Ranks\": ";
  gpu_.Str(c_.sync.group_ranks);
  if (!c_.sync.seq) return;
  gpu_ << ", \"Seq\": ";
  gpu_.Int(coll.index);
}

void RankWriter::RuntimeOnly(int th, int64_t at) {
  BeginX(runtime_, "cuda_runtime", rng_.Pick(kRuntimeOnly), pid_, tids_[th], at,
         rng_.Range(500, 4000));
  runtime_ << "\"External id\": ";
  runtime_.Int(external_id_) << ",      \"cbid\": ";
  runtime_.Int(rng_.Range(1, 400)) << ", \"correlation\": ";
  runtime_.Int(++correlation_);
  EndEvent(runtime_);
  --remaining_;
}

void RankWriter::MemoryInstant(int th, int64_t at) {
  Out& o = instants_;
  o << "  {\n    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\",\n"
       "    \"pid\": ";
  o.Int(pid_) << ", \"tid\": ";
  o.Int(tids_[th]) << ",\n    \"ts\": ";
  Ts(o, at);
  const int64_t bytes = (rng_.Percent(20) ? -1 : 1) * (int64_t{512} << rng_.Range(0, 20));
  allocated_ = std::max<int64_t>(0, allocated_ + bytes);
  o << ",\n    \"args\": {\n      \"Total Reserved\": ";
  o.Int(allocated_ + (int64_t{1} << 31)) << ", \"Total Allocated\": ";
  o.Int(allocated_) << ", \"Bytes\": ";
  o.Int(bytes) << ", \"Addr\": ";
  o.Int(139800000000000LL + rng_.Range(0, 1LL << 36)) << ", \"Device Id\": ";
  o.Int(dev_) << ", \"Device Type\": 1";
  EndEvent(o);
  --remaining_;
}

}  // namespace tracemill::tools::gen_kineto
