// bench_byte_kernels (issue 38): json_text's byte loops per byte kernel
// (formats/common/byte_kernel.h) on real Kineto text, against memcpy of the
// same bytes (the machine's limit for a copy that looks at every byte).
//
//   bench_byte_kernels [--trace=PATH.json[.gz]] [Google Benchmark flags]
//
// The input (default: the PyTorch TensorBoard plugin's ResNet-50 trace in
// tests/data, 7,580 kernels) is read once; every event's `args` object, as
// the file writes it, is one value.
// - BM_CopyCleanArgs/<kernel>: CopyCleanJsonValue over every args value
//   (the decoder's one-pass copy of clean args, CopyCleanJson), bytes/s of
//   input;
// - BM_SanitizeNames/<kernel>: AppendSanitizedStringBody over every `name`
//   string body (the interning path's scan);
// - BM_MemcpyArgs: memcpy of the same args values.
// Kernels the CPU does not run are skipped (state.SkipWithError).
#include <benchmark/benchmark.h>
#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/byte_kernel.h"
#include "formats/common/json_text.h"

namespace {

using tracemill::formats::ByteKernel;

std::string g_path = TRACEMILL_SOURCE_DIR
    "/tests/data/kineto-tb-plugin/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz";

struct Input {
  std::string text;
  std::vector<std::string_view> args, names;
  size_t args_bytes = 0, names_bytes = 0;
};

// Load: the file's text (gzip or plain) and its args values and names.
const Input& Load() {
  static Input in = [] {
    Input r;
    gzFile f = gzopen(g_path.c_str(), "rb");
    if (!f) {
      std::fprintf(stderr, "cannot open %s\n", g_path.c_str());
      std::exit(2);
    }
    char buf[1 << 16];
    for (int n; (n = gzread(f, buf, sizeof buf)) > 0;) r.text.append(buf, static_cast<size_t>(n));
    gzclose(f);
    const std::string_view t = r.text;
    for (size_t at = t.find("\"args\":"); at != std::string_view::npos; at = t.find("\"args\":", at + 1)) {
      size_t v = at + 7;
      while (v < t.size() && t[v] == ' ') ++v;
      const size_t end = tracemill::formats::SkipJsonValue(t, v);
      if (end == std::string_view::npos) break;
      r.args.push_back(t.substr(v, end - v));
      r.args_bytes += end - v;
    }
    for (size_t at = t.find("\"name\": \""); at != std::string_view::npos; at = t.find("\"name\": \"", at + 1)) {
      const size_t b = at + 9, e = tracemill::formats::JsonStringEnd(t, b);
      r.names.push_back(t.substr(b, e - b));
      r.names_bytes += e - b;
    }
    return r;
  }();
  return in;
}

bool Use(benchmark::State& state) {
  const auto k = static_cast<ByteKernel>(state.range(0));
  state.SetLabel(tracemill::formats::ByteKernelName(k));
  if (!tracemill::formats::SetByteKernel(k)) {
    state.SkipWithError("this CPU does not run the kernel");
    return false;
  }
  return true;
}

void BM_CopyCleanArgs(benchmark::State& state) {
  const Input& in = Load();
  if (!Use(state)) return;
  std::string out(in.args_bytes + 64, '\0');
  size_t clean = 0;
  for (auto _ : state) {
    char* o = out.data();
    clean = 0;
    for (std::string_view a : in.args) {
      char* end = tracemill::formats::CopyCleanJsonValue(a, o);
      if (end) o = end, ++clean;
    }
    benchmark::DoNotOptimize(o);
  }
  state.counters["values"] = static_cast<double>(in.args.size());
  state.counters["clean"] = static_cast<double>(clean);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * in.args_bytes));
}

void BM_SanitizeNames(benchmark::State& state) {
  const Input& in = Load();
  if (!Use(state)) return;
  std::string out;
  for (auto _ : state) {
    out.clear();
    for (std::string_view n : in.names) tracemill::formats::AppendSanitizedStringBody(n, &out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["names"] = static_cast<double>(in.names.size());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * in.names_bytes));
}

void BM_MemcpyArgs(benchmark::State& state) {
  const Input& in = Load();
  std::string out(in.args_bytes + 64, '\0');
  for (auto _ : state) {
    char* o = out.data();
    for (std::string_view a : in.args) {
      std::memcpy(o, a.data(), a.size());
      o += a.size();
    }
    benchmark::DoNotOptimize(o);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * in.args_bytes));
}

BENCHMARK(BM_CopyCleanArgs)->DenseRange(0, tracemill::formats::kByteKernelCount - 1);
BENCHMARK(BM_SanitizeNames)->DenseRange(0, tracemill::formats::kByteKernelCount - 1);
BENCHMARK(BM_MemcpyArgs);

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--trace=", 8) == 0) {
      g_path = argv[i] + 8;
      for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      --i;
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
