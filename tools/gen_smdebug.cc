// gen_smdebug: a seeded generator of a synthetic SageMaker Debugger profiler
// folder (nodes x hours), for benchmarks and tests:
//   OUT/framework/pevents/YYYYMMDDHH/<end_us>_<pid>_<rank>_pythontimeline.json
//       one file per node and minute (smdebug rotates by time): the pid-0
//       base record, then phases Step:ModeKeys.TRAIN, Forward, Backward,
//       DataIterator and a Horovod allreduce lane, declared by process_name in
//       a per-file pid order (as smdebug does), one training step per
//       `--step-ms`, `--events` records per file, ts relative to the base;
//   OUT/system/incremental/YYYYMMDDHH/<epoch_s>.algo-<n>.json
//       one file per node and minute: every `--sample-s` seconds one sample
//       per CPU and two per GPU (GPUUtilization, GPUMemoryUtilization), with
//       Timestamp as float seconds (smdebug writes Python floats).
// Node n is `<pid>_<rank>` = `<1000+n>_<n as 4 digits>` (rank n) on host
// `algo-<n+1>`. The same seed gives the same bytes.
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <random>
#include <string>

namespace {

void MakeDirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i)
    if (i == path.size() || path[i] == '/') ::mkdir(path.substr(0, i).c_str(), 0755);
}

std::string HourFolder(int64_t epoch_s) {
  std::time_t t = static_cast<std::time_t>(epoch_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof(buf), "%Y%m%d%H", &tm);
  return buf;
}

bool WriteFile(const std::string& path, const std::string& s) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  bool ok = std::fwrite(s.data(), 1, s.size(), f) == s.size();
  return std::fclose(f) == 0 && ok;
}

// Options: the command line.
struct Options {
  std::string out;
  int nodes = 4, hours = 1, events = 200, cpus = 8, gpus = 8, sample_s = 10, step_ms = 500;
  uint64_t seed = 1;
  int64_t start_s = 1594660800;  // 2020-07-13T17:20:00Z
};

void AddFlags(CLI::App* app, Options* o) {
  app->add_option("-o,--out", o->out, "Output folder")->required();
  app->add_option("--nodes", o->nodes, "Nodes (one rank each)")->check(CLI::PositiveNumber);
  app->add_option("--hours", o->hours, "Hours of profile per node (60 files per hour per kind)")
      ->check(CLI::PositiveNumber);
  app->add_option("--events", o->events, "Framework records per file")->check(CLI::PositiveNumber);
  app->add_option("--cpus", o->cpus, "CPUs per node")->check(CLI::PositiveNumber);
  app->add_option("--gpus", o->gpus, "GPUs per node")->check(CLI::PositiveNumber);
  app->add_option("--sample-s", o->sample_s, "Seconds between system samples")->check(CLI::PositiveNumber);
  app->add_option("--step-ms", o->step_ms, "Training step length (ms)")->check(CLI::PositiveNumber);
  app->add_option("--seed", o->seed, "Random seed");
  app->add_option("--start", o->start_s, "Job start (s since the epoch)");
}

const char* const kPhases[] = {"Step:ModeKeys.TRAIN", "Forward", "Backward", "DataIterator",
                               "Adam_Allreduce/HorovodAllreduce_grad_0"};

// NodeState: one node's generator, carried from minute to minute.
struct NodeState {
  int n = 0;                 // node index (rank n)
  std::string name;          // "<1000+n>_<n as 4 digits>"
  std::mt19937_64 rng;
  int64_t base_us = 0;       // the timeline's start_time_since_epoch_in_micros
  int64_t step = 0;          // the next training step
};

NodeState StartNode(const Options& o, int n) {
  NodeState s{n, "", std::mt19937_64(o.seed * 1000003 + static_cast<uint64_t>(n))};
  char node[32];
  std::snprintf(node, sizeof(node), "%d_%04d", 1000 + n, n);
  s.name = node;
  s.base_us = o.start_s * 1000000 + static_cast<int64_t>(s.rng() % 1000000);
  return s;
}

// The framework timeline of the minute from `t0_us`: phases declared in a
// per-file pid order, then `o.events` records.
std::string FrameworkTimeline(const Options& o, int64_t t0_us, NodeState* node) {
  std::string s = "[\n";
  char line[512];
  std::snprintf(line, sizeof(line),
                "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"args\": "
                "{\"start_time_since_epoch_in_micros\": %" PRId64 "}},\n"
                "{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": 0, \"args\": {\"sort_index\": 0}},\n",
                node->base_us);
  s += line;
  const int shift = static_cast<int>(node->rng() % 5);
  for (int p = 0; p < 5; ++p) {
    int pid = 1 + (p + shift) % 5;
    std::snprintf(line, sizeof(line),
                  "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"args\": {\"name\": \"%s\"}},\n"
                  "{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": %d, \"args\": {\"sort_index\": %d}},\n",
                  pid, kPhases[p], pid, pid);
    s += line;
  }
  const int64_t step_us = o.step_ms * 1000LL;
  for (int k = 0; k < o.events; ++k) {
    int64_t ts = t0_us - node->base_us + (60000000LL * k) / o.events;
    int p = k % 5;
    int pid = 1 + (p + shift) % 5;
    int64_t dur = 1 + static_cast<int64_t>(node->rng() % static_cast<uint64_t>(step_us / 4));
    if (p == 0) {
      std::snprintf(line, sizeof(line),
                    "{\"name\": \"Step:ModeKeys.TRAIN\", \"pid\": %d, \"ph\": \"X\", \"ts\": %" PRId64
                    ", \"dur\": %" PRId64 ", \"args\": {\"pid\": %d, \"step_num\": \"%" PRId64 "\"}},\n",
                    pid, ts, step_us, 1000 + node->n, node->step++);
    } else if (p == 4) {
      std::snprintf(line, sizeof(line),
                    "{\"name\": \"ALLREDUCE\", \"pid\": %d, \"ph\": \"B\", \"ts\": %" PRId64 "},\n"
                    "{\"name\": \"\", \"pid\": %d, \"ph\": \"E\", \"ts\": %" PRId64 "},\n",
                    pid, ts, pid, ts + dur);
    } else {
      std::snprintf(line, sizeof(line),
                    "{\"name\": \"%s_op_%d\", \"pid\": %d, \"ph\": \"X\", \"ts\": %" PRId64 ", \"dur\": %" PRId64
                    ", \"args\": {\"step_num\": %" PRId64 "}},\n",
                    kPhases[p], static_cast<int>(node->rng() % 16), pid, ts, dur, node->step);
    }
    s += line;
  }
  s.resize(s.size() - 2);  // the last ",\n"
  s += "\n]\n\n";          // smdebug leaves blank lines after `]`
  return s;
}

// The system metrics of the minute from `t0_us`: every `o.sample_s` seconds
// one sample per CPU and two per GPU.
std::string SystemMetrics(const Options& o, int64_t t0_us, NodeState* node) {
  std::string m;
  char line[512];
  for (int64_t sec = 0; sec < 60; sec += o.sample_s) {
    uint64_t frac = node->rng() % 10000000;
    for (int c = 0; c < o.cpus; ++c) {
      std::snprintf(line, sizeof(line),
                    "{\"Type\":\"cpu\",\"Name\":\"cpu%d\",\"Dimension\":\"CPUUtilization\",\"Value\":%.2f,"
                    "\"NodeId\":\"algo-%d\",\"Timestamp\":%" PRId64 ".%07" PRIu64 "}\n",
                    c, static_cast<double>(node->rng() % 10000) / 100.0, node->n + 1, t0_us / 1000000 + sec, frac);
      m += line;
    }
    for (int g = 0; g < o.gpus; ++g) {
      for (const char* dim : {"GPUUtilization", "GPUMemoryUtilization"}) {
        std::snprintf(line, sizeof(line),
                      "{\"Type\":\"gpu\",\"Name\":\"gpu%d\",\"Dimension\":\"%s\",\"Value\":%.2f,"
                      "\"NodeId\":\"algo-%d\",\"Timestamp\":%" PRId64 ".%07" PRIu64 "}\n",
                      g, dim, static_cast<double>(60 + node->rng() % 4000 / 100.0), node->n + 1,
                      t0_us / 1000000 + sec, frac);
        m += line;
      }
    }
  }
  return m;
}

// Files and bytes written so far.
struct Written {
  uint64_t files = 0, bytes = 0;
};

// Writes `text` to `dir`/`name` (creating `dir`); false, with a message on
// stderr, if it cannot.
bool WriteInto(const std::string& dir, const std::string& name, const std::string& text, Written* w) {
  MakeDirs(dir);
  std::string path = dir + "/" + name;
  if (!WriteFile(path, text)) {
    std::fprintf(stderr, "gen_smdebug: cannot write %s\n", path.c_str());
    return false;
  }
  ++w->files;
  w->bytes += text.size();
  return true;
}

// Both files of node `node` for the minute `minute`.
bool WriteMinute(const Options& o, int minute, NodeState* node, Written* w) {
  const int64_t t0_us = o.start_s * 1000000 + minute * 60000000LL;  // file covers [t0, t0 + 60 s)
  const int64_t end_us = t0_us + 60000000LL;
  const std::string hour = HourFolder(t0_us / 1000000);
  if (!WriteInto(o.out + "/framework/pevents/" + hour,
                 std::to_string(end_us) + "_" + node->name + "_pythontimeline.json",
                 FrameworkTimeline(o, t0_us, node), w))
    return false;
  return WriteInto(o.out + "/system/incremental/" + hour,
                   std::to_string(t0_us / 1000000) + ".algo-" + std::to_string(node->n + 1) + ".json",
                   SystemMetrics(o, t0_us, node), w);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gen_smdebug: synthetic smdebug profiler folder (framework timelines + system metrics)"};
  Options o;
  AddFlags(&app, &o);
  CLI11_PARSE(app, argc, argv);
  Written w;
  for (int n = 0; n < o.nodes; ++n) {
    NodeState node = StartNode(o, n);
    for (int minute = 0; minute < o.hours * 60; ++minute)
      if (!WriteMinute(o, minute, &node, &w)) return 1;
  }
  std::fprintf(stderr, "gen_smdebug: %d nodes x %d h: %" PRIu64 " files, %" PRIu64 " bytes in %s\n", o.nodes,
               o.hours, w.files, w.bytes, o.out.c_str());
  return 0;
}
