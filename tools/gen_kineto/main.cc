// gen_kineto: writes synthetic Kineto-like (PyTorch profiler) rank files for
// benchmarks, seeded and deterministic.
//
//   gen_kineto --ranks N --events M --seed S --out DIR [--gzip] [--gpus-per-node 8] [--dense]
//
// Each rank r gets DIR/rank<r>.pt.trace.json (or .json.gz, one gzip member)
// in Kineto's JSON Object Format, laid out the way libkineto's
// ChromeTraceLogger writes it (pretty-printed, ", " separators, ~450 bytes
// per event on average, like the real Kineto files in tests/data):
//
//   { "schemaVersion", "deviceProperties" (gpus-per-node entries),
//     "distributedInfo" {backend nccl, rank, world_size}, "record_shapes",
//     "traceEvents": [ sections, in this order:
//        CPU ops       X cat cpu_op / user_annotation, pid 4000+r, two tids,
//                      per thread and in completion order (children before
//                      their parent), so not sorted even within a thread;
//        CUDA runtime  X cat cuda_runtime on the launching thread;
//        GPU           X cat kernel / gpu_memcpy / gpu_memset, pid = local
//                      device ordinal (r % gpus-per-node), tid = stream (int);
//        flows         s/f pairs, cat ac2g, id = correlation, f with bp "e";
//        instants      i "[memory]" (s t);
//        metadata      M process_name/process_labels/process_sort_index for
//                      the CPU process and every local GPU, thread_name and
//                      thread_sort_index, a "Spans" string-pid X event, and
//                      the "Traces" / "" string-pid instants Kineto writes ],
//     "traceName", "displayTimeUnit" }
//
// Every file holds exactly --events trace events (metadata included), so a
// reader's event count can be checked against ranks x events. Timestamps
// are epoch microseconds around 1.68e15: with --ts=frac as Kineto 2.x writes
// them (3 decimals, `1682725898236567.123`), with --ts=int as older Kineto
// (integers); --ts=mixed (default) alternates per rank. The same seed gives
// the same bytes whatever --jobs is. One line of JSON on stdout sums up what
// was written (files, events, json_bytes, file_bytes).
//
// Synchronized jobs (--clock-offsets-us 0,1500,-800,3250), for testing
// clock alignment (tracemill --align-clocks): node n = rank / gpus-per-node
// has its own clock. Then, for every rank:
//   - the k-th NCCL collective kernel is the same operation on every rank:
//     the same kernel name (kind), `Collective name` and process group
//     (Kineto 2.x's `Process Group Name` "0", `Process Group Description`
//     "default_pg", `Process Group Ranks` "[0, 1, ..., N-1]"; `Seq` k only
//     with --collective-seq), and the k-th collective is in step k / 6
//     (ProfilerStep#N numbers steps from 0 on every rank);
//   - it ends at the same true instant on every rank, within +-J µs
//     (--collective-jitter-us, default 2): a kernel starts when its rank
//     launches it and ends when the collective does, so early ranks show a
//     longer kernel, and the rank waits for that end;
//   - every `ts` of a rank in node n is its true time + offset[n] µs.
// The true schedule comes from a stream seeded by --seed only
// (collective_schedule.h). --events is honored exactly all the same, so
// ranks may hold different numbers of collectives (a prefix of the same
// sequence). Without --clock-offsets-us the bytes are those of earlier
// versions.
//
// Files: main.cc (flags, worker threads, writing files), rank_writer.*
// (one rank's file: step layout, events, head and trailer),
// collective_schedule.h (the synchronized job's true schedule), names.h,
// rng.h, text_out.h.
#include <libdeflate.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "rank_writer.h"

namespace tracemill::tools::gen_kineto {
namespace {

bool WriteAll(const std::string& path, const char* data, size_t size, std::string* err) {
  std::string tmp = path + ".partial";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) {
    *err = "cannot create " + tmp + ": " + std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(data, 1, size, f) == size;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    *err = "cannot write " + path + ": " + std::strerror(errno);
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

// Minify: `json` without whitespace outside strings (--dense). The
// generator's strings hold no escaped quotes other than `\"`.
void Minify(std::string* json) {
  size_t o = 0;
  bool in_string = false;
  for (size_t i = 0; i < json->size(); ++i) {
    const char ch = (*json)[i];
    if (in_string) {
      if (ch == '\\') {
        (*json)[o++] = ch;
        (*json)[o++] = (*json)[++i];
        continue;
      }
      in_string = ch != '"';
    } else if (ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r') {
      continue;
    } else {
      in_string = ch == '"';
    }
    (*json)[o++] = ch;
  }
  json->resize(o);
}

struct Totals {
  std::atomic<uint64_t> json_bytes{0};
  std::atomic<uint64_t> file_bytes{0};
  std::mutex mu;
  std::string error;
};

void Worker(const Config& c, std::atomic<int>* next, Totals* totals) {
  std::string json;
  std::vector<char> gz;
  Sections sections;
  libdeflate_compressor* comp = c.gzip ? libdeflate_alloc_compressor(c.gzip_level) : nullptr;
  while (true) {
    const int r = next->fetch_add(1);
    if (r >= c.ranks) break;
    RankWriter(c, r, &sections).Build(&json);
    if (c.dense) Minify(&json);
    std::string path = c.out + "/rank" + std::to_string(r) + ".pt.trace.json";
    const char* data = json.data();
    size_t size = json.size();
    if (comp) {
      gz.resize(libdeflate_gzip_compress_bound(comp, json.size()));
      size = libdeflate_gzip_compress(comp, json.data(), json.size(), gz.data(), gz.size());
      data = gz.data();
      path += ".gz";
    }
    std::string err;
    if (size == 0) err = "gzip compression failed for " + path;
    if (err.empty()) WriteAll(path, data, size, &err);
    if (!err.empty()) {
      std::lock_guard<std::mutex> lock(totals->mu);
      if (totals->error.empty()) totals->error = err;
      break;
    }
    totals->json_bytes += json.size();
    totals->file_bytes += size;
  }
  if (comp) libdeflate_free_compressor(comp);
}

void AddFlags(CLI::App* app, Config* c) {
  app->add_option("--ranks", c->ranks, "Number of rank files")->check(CLI::Range(1, 1 << 20));
  app->add_option("--events", c->events, "Trace events per file (metadata included)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  app->add_option("--seed", c->seed, "Random seed: the same seed writes the same bytes");
  app->add_option("--out", c->out, "Output directory (created if missing)")->required();
  app->add_flag("--gzip", c->gzip, "Write rank<r>.pt.trace.json.gz (one gzip member, libdeflate)");
  app->add_option("--gzip-level", c->gzip_level, "libdeflate level")->check(CLI::Range(1, 12));
  app->add_option("--gpus-per-node", c->gpus_per_node,
                  "deviceProperties entries; a rank's GPU pid is rank % gpus-per-node")
      ->check(CLI::Range(1, 1024));
  app->add_option("--ts", c->ts,
                  "int: integer µs (older Kineto); frac: µs with 3 decimals (Kineto 2.x); mixed: "
                  "frac on even ranks, int on odd ranks")
      ->check(CLI::IsMember({"int", "frac", "mixed"}));
  app->add_option("--jobs", c->jobs, "Worker threads (default: hardware threads); output is the same");
  app->add_option("--clock-offsets-us", c->clock_offsets_us,
                  "Synchronized job for clock-alignment tests: comma-separated clock offsets of the nodes "
                  "(node = rank / gpus-per-node; one integer µs per node, may be negative, e.g. "
                  "0,1500,-800,3250). The k-th NCCL collective is then the same operation on every rank, "
                  "ends at the same true instant within +-J µs, and node n's timestamps are true + offset[n]");
  app->add_option("--collective-jitter-us", c->sync.jitter_us,
                  "J: each collective kernel's end is its true end + a uniform whole-µs jitter in [-J, J] "
                  "(with --clock-offsets-us; default 2)")
      ->check(CLI::Range(int64_t{0}, int64_t{1000000}));
  app->add_flag("--dense", c->dense,
                "About 210 bytes per event, as smdebug and Horovod timelines: no shapes or call stacks "
                "(record_shapes 0), no whitespace outside strings");
  app->add_option("--late-rank", c->sync.late_rank,
                  "A straggler for collective tests: this rank launches its NCCL kernel late at some "
                  "collectives (with --clock-offsets-us, --late-us and --late-percent); the instances and "
                  "the truth are written to OUT/late_arrivals.json")
      ->check(CLI::Range(0, 1 << 20));
  app->add_option("--late-us", c->sync.late_us,
                  "How late: the rank's kernel starts at least this many µs, less 35, after every other rank's")
      ->check(CLI::Range(int64_t{100}, int64_t{1000000}));
  app->add_option("--late-percent", c->sync.late_percent,
                  "Of the collective instances, the share (drawn job-wide from --seed) the rank is late at")
      ->check(CLI::Range(1, 100));
  app->add_flag("--collective-seq", c->sync.seq,
                "Write Kineto's \"Seq\" (the instance number in its process group) on collective kernels "
                "(with --clock-offsets-us)");
}

// ParseSyncFlags checks --clock-offsets-us (one integer µs per node, at
// most 10^9 in size) and fills `c->sync`. Returns "" or the usage error.
std::string ParseSyncFlags(const CLI::App& app, Config* c) {
  const bool late = app.count("--late-rank") || app.count("--late-us") || app.count("--late-percent");
  if (c->clock_offsets_us.empty()) {
    if (app.count("--collective-jitter-us") || c->sync.seq || late)
      return "--collective-jitter-us, --collective-seq and --late-* need --clock-offsets-us";
    return "";
  }
  if (late && (!app.count("--late-rank") || !app.count("--late-us") || !app.count("--late-percent")))
    return "--late-rank, --late-us and --late-percent go together";
  if (late && c->sync.late_rank >= c->ranks)
    return "--late-rank " + std::to_string(c->sync.late_rank) + " is not a rank of the job (--ranks " +
           std::to_string(c->ranks) + ")";
  const int64_t nodes = (int64_t{c->ranks} + c->gpus_per_node - 1) / c->gpus_per_node;
  std::vector<int64_t>& offsets = c->sync.node_offsets_us;
  std::string_view rest = c->clock_offsets_us;
  while (true) {
    const size_t comma = std::min(rest.find(','), rest.size());
    const std::string_view item = rest.substr(0, comma);
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || v < -1000000000 ||
        v > 1000000000)
      return "--clock-offsets-us: \"" + std::string(item) + "\" is not an integer in [-10^9, 10^9] (µs)";
    offsets.push_back(v);
    if (comma == rest.size()) break;
    rest.remove_prefix(comma + 1);
  }
  if (static_cast<int64_t>(offsets.size()) != nodes)
    return "--clock-offsets-us has " + std::to_string(offsets.size()) + " offsets, but the job has " +
           std::to_string(nodes) + " nodes (--ranks " + std::to_string(c->ranks) + " / --gpus-per-node " +
           std::to_string(c->gpus_per_node) + ", rounded up): give one per node";
  c->sync.group_ranks = "[";
  for (int r = 0; r < c->ranks; ++r) c->sync.group_ranks += (r ? ", " : "") + std::to_string(r);
  c->sync.group_ranks += "]";
  return "";
}

// WriteLateTruth writes OUT/late_arrivals.json: the late rank, how late, and
// the late instances k (`Seq`) of the job-wide schedule, for every k a rank
// of --events events could hold (each collective is at least one event).
bool WriteLateTruth(const Config& c) {
  CollectiveSchedule s(c.seed, c.sync.jitter_us, LateArrivals{c.sync.late_us, c.sync.late_percent});
  std::string o = "{\"rank\": " + std::to_string(c.sync.late_rank) + ", \"late_us\": " +
                  std::to_string(c.sync.late_us) + ", \"min_lead_us\": " + std::to_string(c.sync.late_us - 35) +
                  ", \"late_instances\": [";
  bool first = true;
  for (int64_t k = 0; k < c.events; ++k) {
    if (!s.Next().late) continue;
    o += (first ? "" : ", ") + std::to_string(k);
    first = false;
  }
  o += "]}\n";
  const std::string path = c.out + "/late_arrivals.json";
  FILE* f = std::fopen(path.c_str(), "w");
  const bool ok = f && std::fwrite(o.data(), 1, o.size(), f) == o.size();
  if (f) std::fclose(f);
  if (!ok) std::fprintf(stderr, "gen_kineto: cannot write %s\n", path.c_str());
  return ok;
}

// Writes every rank file on `c.jobs` threads and prints the JSON summary
// line. Returns the exit status: 0, 1 (a file or the folder could not be
// written), 2 (--events too small for the metadata).
int WriteRankFiles(const Config& c) {
  const int64_t fixed = RankWriter::FixedEvents(c.gpus_per_node);
  if (c.events <= fixed) {
    std::fprintf(stderr, "gen_kineto: --events must be more than %lld (the metadata of one file)\n",
                 static_cast<long long>(fixed));
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(c.out, ec);
  if (ec) {
    std::fprintf(stderr, "gen_kineto: cannot create %s: %s\n", c.out.c_str(), ec.message().c_str());
    return 1;
  }
  const auto t0 = std::chrono::steady_clock::now();
  int jobs = c.jobs > 0 ? c.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  jobs = std::min(jobs, c.ranks);
  std::atomic<int> next{0};
  Totals totals;
  std::vector<std::thread> workers;
  for (int j = 1; j < jobs; ++j) workers.emplace_back(Worker, std::cref(c), &next, &totals);
  Worker(c, &next, &totals);
  for (auto& w : workers) w.join();
  if (!totals.error.empty()) {
    std::fprintf(stderr, "gen_kineto: %s\n", totals.error.c_str());
    return 1;
  }
  if (c.sync.late_rank >= 0 && !WriteLateTruth(c)) return 1;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "{\"files\": %d, \"events_per_file\": %lld, \"events\": %lld, \"json_bytes\": %llu, "
      "\"file_bytes\": %llu, \"gzip\": %s, \"seed\": %llu, \"seconds\": %.3f}\n",
      c.ranks, static_cast<long long>(c.events), static_cast<long long>(c.events) * c.ranks,
      static_cast<unsigned long long>(totals.json_bytes.load()),
      static_cast<unsigned long long>(totals.file_bytes.load()), c.gzip ? "true" : "false",
      static_cast<unsigned long long>(c.seed), secs);
  return 0;
}

}  // namespace
}  // namespace tracemill::tools::gen_kineto

int main(int argc, char** argv) {
  tracemill::tools::gen_kineto::Config c;
  CLI::App app{
      "gen_kineto: write synthetic Kineto-like (PyTorch profiler) rank files, seeded and "
      "deterministic, in Kineto's sectional, unsorted order."};
  tracemill::tools::gen_kineto::AddFlags(&app, &c);
  CLI11_PARSE(app, argc, argv);
  const std::string usage = tracemill::tools::gen_kineto::ParseSyncFlags(app, &c);
  if (!usage.empty()) {
    std::fprintf(stderr, "gen_kineto: %s\n", usage.c_str());
    return 2;
  }
  return tracemill::tools::gen_kineto::WriteRankFiles(c);
}
