// gen_paddle: a seeded generator of synthetic Paddle CrossStackProfiler input
// (trainers x GPUs rank profiles and one dcgmi dmon log per trainer), for
// benchmarks and tests:
//   OUT/profile/profile.<rank>   one serialized proto2 paddle.platform.proto.Profile
//   OUT/dcgm/dcgm.<trainer>      dmon text with a TIMESTAMP column
//
// The event mix follows the CrossStackProfiler reference data
// (tests/data/paddle-csp/small): ~32% CUDA runtime calls (device_id -1, a
// 10-byte varint), ~38% GPU kernels on device rank % gpus (streams 7/13/14/15,
// memcpy kernels with memcopy.bytes), ~30% CPU ops on blocks 0-3, ~8% with a
// detail_info, pipeline markers (one forward and one backward B/E pair per
// 200 events), events in shuffled order, MemEvents on CUDAPlace / CPUPlace /
// CUDAPinnedPlace; about 50 bytes per message, so 64 ranks x (50k events +
// 5k mem events) is ~175 MB. The same seed gives the same bytes.
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace {

// A minimal protobuf wire writer (the generator's own: tests cross-check the
// reader against protobuf's serializer, not against this).
class Wire {
 public:
  void Varint(uint64_t v) {
    while (v >= 0x80) {
      s_.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    s_.push_back(static_cast<char>(v));
  }
  void Tag(uint32_t field, uint32_t wt) { Varint((static_cast<uint64_t>(field) << 3) | wt); }
  void U64(uint32_t field, uint64_t v) {
    Tag(field, 0);
    Varint(v);
  }
  void Str(uint32_t field, std::string_view v) {
    Tag(field, 2);
    Varint(v.size());
    s_.append(v);
  }
  void Msg(uint32_t field, const Wire& m) { Str(field, m.s_); }
  void Clear() { s_.clear(); }
  const std::string& str() const { return s_; }

 private:
  std::string s_;
};

constexpr const char* kCpuOps[] = {
    "elementwise_add", "matmul", "softmax", "dropout", "relu", "scale", "concat",
    "split", "cast", "reshape2", "transpose2", "reduce_sum", "adam", "gelu",
    "c_allreduce_sum", "layer_norm", "fill_constant"};
constexpr const char* kCudaApi[] = {"cudaLaunchKernel", "cudaMemcpyAsync",
                                    "cudaStreamSynchronize", "cudaEventRecord", "cudaMalloc"};
constexpr const char* kKernels[] = {"volta_sgemm_128x64_nn", "void phi::SoftmaxKernel<float>",
                                    "ncclAllReduceRingLLKernel_sum_f32",
                                    "void phi::funcs::ElementwiseKernel<float>",
                                    "void cub::DeviceReduceKernel"};
constexpr int64_t kStreams[] = {7, 13, 14, 15};
constexpr uint64_t kBaseNs = 1700000000000000000ull;

struct Options {
  std::string out;
  int trainers = 8;
  int gpus = 8;
  int events = 50000;
  int mem_events = 5000;
  int dcgm_samples = 600;  // per GPU per trainer, every 0.1 s
  uint64_t seed = 1;
};

bool MakeDir(const std::string& p) { return ::mkdir(p.c_str(), 0755) == 0 || errno == EEXIST; }

std::string Profile(const Options& o, int rank, std::mt19937_64& rng) {
  const int gpu = rank % o.gpus;
  const uint64_t span_ns = static_cast<uint64_t>(o.events) * 2500 + 1000000;
  std::uniform_int_distribution<uint64_t> when(0, span_ns);
  std::uniform_int_distribution<uint64_t> dur(1000, 200000);
  std::uniform_int_distribution<int> pct(0, 99);
  Wire ev, mc, out;
  std::vector<std::string> msgs;
  msgs.reserve(o.events);
  // Pipeline markers: per iteration forward B/E then backward B/E (500 ns each).
  const int iterations = std::max(1, o.events / 200);
  const uint64_t period = span_ns / iterations;
  int marker_events = 0;
  for (int i = 0; i < iterations && marker_events + 4 <= o.events; ++i) {
    const uint64_t t0 = kBaseNs + i * period + 40000 + rank * 1000;
    const std::pair<uint64_t, const char*> marks[] = {
        {t0, "marker_forward_B"}, {t0 + period * 2 / 5, "marker_forward_E"},
        {t0 + period * 9 / 20, "marker_backward_B"}, {t0 + period * 4 / 5, "marker_backward_E"}};
    for (const auto& [t, d] : marks) {
      ev.Clear();
      ev.Str(1, "marker/compute/MarkerCUDA");
      ev.U64(2, t);
      ev.U64(3, t + 500);
      ev.U64(5, 0);
      ev.U64(6, 0);
      ev.U64(8, 0);
      ev.Str(9, d);
      msgs.push_back(ev.str());
      ++marker_events;
    }
  }
  char detail[32];
  for (int i = marker_events; i < o.events; ++i) {
    ev.Clear();
    const int kind = pct(rng);
    const uint64_t start = kBaseNs + when(rng);
    if (kind < 32) {  // CUDA runtime API call
      ev.Str(1, kCudaApi[rng() % 5]);
      ev.U64(2, start);
      ev.U64(3, start + dur(rng) / 20);
      ev.U64(5, static_cast<uint64_t>(int64_t{-1}));  // plain varint: 10 bytes
      ev.U64(6, rng() % 4);
      ev.U64(8, 0);
    } else if (kind < 70) {  // GPU kernel (some are memcpys)
      const bool memcpy = pct(rng) < 25;
      ev.Str(1, memcpy ? (rng() & 1 ? "memcpy DtoH" : "memcpy HtoD") : kKernels[rng() % 5]);
      ev.U64(2, start);
      ev.U64(3, start + dur(rng));
      ev.U64(5, gpu);
      ev.U64(6, kStreams[rng() % 4]);
      if (memcpy) {
        mc.Clear();
        mc.U64(1, 1000 + rng() % 64000000);
        ev.Msg(7, mc);
      }
      ev.U64(8, 1);
    } else {  // CPU op on block 0-3
      ev.Str(1, kCpuOps[rng() % 17]);
      ev.U64(2, start);
      ev.U64(3, start + dur(rng));
      ev.U64(5, rng() % 4);
      ev.U64(6, rng() % 4);
      ev.U64(8, 0);
      if (pct(rng) < 27) {
        std::snprintf(detail, sizeof(detail), "op_detail_%d", static_cast<int>(rng() % 10));
        ev.Str(9, detail);
      }
    }
    msgs.push_back(ev.str());
  }
  std::shuffle(msgs.begin(), msgs.end(), rng);
  std::string bytes;
  bytes.reserve(static_cast<size_t>(o.events) * 56 + static_cast<size_t>(o.mem_events) * 64);
  for (const auto& m : msgs) {
    out.Clear();
    out.Str(1, m);
    bytes += out.str();
  }
  for (int i = 0; i < o.mem_events; ++i) {
    ev.Clear();
    const uint64_t start = kBaseNs + when(rng);
    const int place = static_cast<int>(rng() % 3);
    ev.U64(1, start);
    ev.U64(2, start + dur(rng) * 4);
    ev.U64(3, 1024 + rng() % 64000000);
    ev.U64(4, place);
    ev.U64(5, rng() % 64);
    ev.U64(6, place == 1 ? 0 : gpu);
    ev.Str(7, kCpuOps[rng() % 17]);
    ev.Str(8, kCpuOps[rng() % 17]);
    out.Clear();
    out.Msg(4, ev);
    bytes += out.str();
  }
  out.Clear();
  out.U64(2, kBaseNs);
  out.U64(3, kBaseNs + span_ns);
  bytes += out.str();
  return bytes;
}

std::string Dcgm(const Options& o, int trainer, std::mt19937_64& rng) {
  std::string s =
      "Started host engine version 2.2.9 using socket path /tmp/nv-hostengine\n"
      "Host Engine Listener Started\n";
  const char* header =
      "# Entity  TIMESTAMP  GPUTL  GRACT  SMACT  SMOCC  FBUSD  FBTTL  DRAMA  NVLTX  NVLRX  PCITX  "
      "PCIRX  FP32A  FP16A  TENSO\n      Id\n";
  std::uniform_real_distribution<double> frac(0, 1);
  char line[512];
  for (int k = 0; k < o.dcgm_samples; ++k) {
    if (k % 50 == 0) s += header;  // dmon repeats its header
    const double ts = 1700000000.0 + k * 0.1 + trainer * 0.003;
    for (int g = 0; g < o.gpus; ++g) {
      std::snprintf(line, sizeof(line),
                    "    GPU %d  %.3f  %d  %.3f  %.3f  %.3f  %d  32510  %.3f  %llu  %llu  %llu  "
                    "%llu  %.3f  %.3f  %.3f\n",
                    g, ts, static_cast<int>(rng() % 101), frac(rng), frac(rng), frac(rng),
                    static_cast<int>(rng() % 32510), frac(rng),
                    static_cast<unsigned long long>(rng() % 1000000000),
                    static_cast<unsigned long long>(rng() % 1000000000),
                    static_cast<unsigned long long>(rng() % 100000000),
                    static_cast<unsigned long long>(rng() % 100000000), frac(rng), frac(rng),
                    frac(rng));
      s += line;
    }
  }
  s += "dmon finished\n";
  return s;
}

bool WriteFile(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"gen_paddle: seeded synthetic Paddle CrossStackProfiler input "
               "(OUT/profile/profile.<rank>, OUT/dcgm/dcgm.<trainer>)"};
  app.add_option("-o,--out", o.out, "Output folder")->required();
  app.add_option("--trainers", o.trainers, "Trainers (nodes)")->check(CLI::PositiveNumber);
  app.add_option("--gpus", o.gpus, "GPUs (ranks) per trainer")->check(CLI::PositiveNumber);
  app.add_option("--events", o.events, "Events per rank")->check(CLI::NonNegativeNumber);
  app.add_option("--mem-events", o.mem_events, "Memory events per rank")->check(CLI::NonNegativeNumber);
  app.add_option("--dcgm-samples", o.dcgm_samples, "DCGM samples per GPU per trainer (0: no dcgm/)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--seed", o.seed, "Random seed");
  CLI11_PARSE(app, argc, argv);
  if (!MakeDir(o.out) || !MakeDir(o.out + "/profile") ||
      (o.dcgm_samples > 0 && !MakeDir(o.out + "/dcgm"))) {
    std::perror("gen_paddle: mkdir");
    return 1;
  }
  uint64_t total = 0;
  for (int r = 0; r < o.trainers * o.gpus; ++r) {
    std::mt19937_64 rng(o.seed * 1000003 + r);
    std::string bytes = Profile(o, r, rng);
    total += bytes.size();
    if (!WriteFile(o.out + "/profile/profile." + std::to_string(r), bytes)) {
      std::perror("gen_paddle: write");
      return 1;
    }
  }
  for (int t = 0; o.dcgm_samples > 0 && t < o.trainers; ++t) {
    std::mt19937_64 rng(o.seed * 7919 + t);
    std::string text = Dcgm(o, t, rng);
    total += text.size();
    if (!WriteFile(o.out + "/dcgm/dcgm." + std::to_string(t), text)) {
      std::perror("gen_paddle: write");
      return 1;
    }
  }
  std::fprintf(stderr, "gen_paddle: %d ranks, %.1f MB in %s\n", o.trainers * o.gpus, total / 1e6,
               o.out.c_str());
  return 0;
}
