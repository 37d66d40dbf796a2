// RankWriter's file head (deviceProperties, distributedInfo) and trailer
// (metadata events, Spans, Kineto's string-pid instants) (rank_writer.h).
#include <charconv>
#include <string>

#include "rank_writer.h"

namespace tracemill::tools::gen_kineto {

void RankWriter::Header(Out* o) {
  *o << "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n";
  for (int d = 0; d < c_.gpus_per_node; ++d) {
    *o << "    {\n      \"id\": ";
    o->Int(d) << ", \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85029158912,\n"
                 "      \"computeMajor\": 9, \"computeMinor\": 0,\n"
                 "      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n"
                 "      \"regsPerBlock\": 65536, \"warpSize\": 32,\n"
                 "      \"sharedMemPerBlock\": 49152, \"numSms\": 132\n"
                 "    , \"regsPerMultiprocessor\": 65536, \"sharedMemPerBlockOptin\": 232448, "
                 "\"sharedMemPerMultiprocessor\": 233472\n    }";
    *o << (d + 1 < c_.gpus_per_node ? ",\n" : "\n");
  }
  *o << "  ],\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": ";
  o->Int(rank_) << ", \"world_size\": ";
  o->Int(c_.ranks) << "},\n  \"record_shapes\": " << (c_.dense ? "0" : "1") << ",\n  \"traceEvents\": [\n";
}

void RankWriter::Meta(Out& o, std::string_view name, std::string_view pid, int64_t tid, std::string_view key,
          std::string_view str_value, int64_t int_value, bool last) {
  o << "  {\n    \"name\": ";
  o.Str(name) << ", \"ph\": \"M\", \"ts\": ";
  Ts(o, start_ns_);
  o << ", \"pid\": " << pid << ", \"tid\": ";
  o.Int(tid) << ",\n    \"args\": {\n      ";
  o.Str(key) << ": ";
  if (str_value.data())
    o.Str(str_value);
  else
    o.Int(int_value);
  o << (last ? "\n    }\n  }\n" : "\n    }\n  },\n");
}

void RankWriter::Trailer(Out* o) {
  auto num = [](int64_t v) {
    char b[24];
    auto r = std::to_chars(b, b + sizeof b, v);
    return std::string(b, r.ptr);
  };
  const std::string cpu_pid = num(pid_);
  Meta(*o, "process_name", cpu_pid, 0, "name", "python3.10", 0);
  Meta(*o, "process_labels", cpu_pid, 0, "labels", "CPU", 0);
  Meta(*o, "process_sort_index", cpu_pid, 0, "sort_index", {}, pid_);
  for (int d = 0; d < c_.gpus_per_node; ++d) {
    const std::string p = num(d);
    const std::string label = "GPU " + p;
    Meta(*o, "process_name", p, 0, "name", "python3.10", 0);
    Meta(*o, "process_labels", p, 0, "labels", label, 0);
    Meta(*o, "process_sort_index", p, 0, "sort_index", {}, 16777216 + d);
  }
  for (int th = 0; th < kCpuThreads; ++th) {
    const std::string label = "thread " + num(tids_[th]) + " (python3.10)";
    Meta(*o, "thread_name", cpu_pid, tids_[th], "name", label, 0);
    Meta(*o, "thread_sort_index", cpu_pid, tids_[th], "sort_index", {}, tids_[th]);
  }
  const std::string dev = num(dev_);
  for (int s : kStreams) {
    const std::string label = "stream " + num(s) + " ";
    Meta(*o, "thread_name", dev, s, "name", label, 0);
    Meta(*o, "thread_sort_index", dev, s, "sort_index", {}, s);
  }
  *o << "  {\n    \"ph\": \"X\", \"cat\": \"Trace\", \"ts\": ";
  Ts(*o, start_ns_);
  *o << ", \"dur\": ";
  Dur(*o, end_ns_ - start_ns_);
  *o << ",\n    \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",\n"
        "    \"name\": \"PyTorch Profiler (0)\",\n    \"args\": {\n      \"Op count\": 0\n    }\n  },\n";
  Meta(*o, "process_sort_index", "\"Spans\"", 0, "sort_index", {}, 536870912);
  *o << "  {\n    \"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\",\n"
        "    \"pid\": \"Traces\", \"tid\": \"Trace PyTorch Profiler\", \"ts\": ";
  Ts(*o, start_ns_);
  *o << "\n  },\n  {\n    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n"
        "    \"pid\": \"\", \"tid\": \"\", \"ts\": ";
  Ts(*o, end_ns_);
  *o << "\n  }\n  ],\n  \"traceName\": \"/tmp/rank";
  o->Int(rank_) << ".pt.trace.json\",\n  \"displayTimeUnit\": \"ms\"\n}\n";
}

}  // namespace tracemill::tools::gen_kineto
