// bench_tef_decode (issue 38): TefDecoder over one real Kineto trace, with
// and without its scan path, in one process (interleave the repetitions:
// --benchmark_enable_random_interleaving=true).
//
//   bench_tef_decode [--trace=PATH.json[.gz]] [Google Benchmark flags]
//
// The input (default: the PyTorch TensorBoard plugin's ResNet-50 trace in
// tests/data, the rank the real16 job is made of) is read once into a
// padded buffer; each iteration decodes it into a fresh TraceBuilder.
// - BM_Decode/scan:0: the fast path (simdjson On-Demand), as before the
//   scan path;
// - BM_Decode/scan:1: the scan path (byte loops, no simdjson), which the
//   product tries first.
// Bytes/s of input and events/s; the label says which path decoded it.
#include <benchmark/benchmark.h>
#include <simdjson.h>
#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "formats/chrome/tef_decoder.h"
#include "formats/common/trace_data.h"

namespace {

std::string g_path = TRACEMILL_SOURCE_DIR
    "/tests/data/kineto-tb-plugin/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz";

// Text: the trace's bytes followed by simdjson's padding (zeros).
const std::string& Text() {
  static std::string text = [] {
    std::string r;
    gzFile f = gzopen(g_path.c_str(), "rb");
    if (!f) {
      std::fprintf(stderr, "cannot open %s\n", g_path.c_str());
      std::exit(2);
    }
    char buf[1 << 16];
    for (int n; (n = gzread(f, buf, sizeof buf)) > 0;) r.append(buf, static_cast<size_t>(n));
    gzclose(f);
    return r;
  }();
  return text;
}

void BM_Decode(benchmark::State& state) {
  const std::string& text = Text();
  std::string padded(text);
  padded.append(simdjson::SIMDJSON_PADDING, '\0');
  const std::string_view json(padded.data(), text.size());
  tracemill::formats::TefDecoder decoder;
  decoder.set_scan_path(state.range(0) != 0);
  uint64_t events = 0;
  for (auto _ : state) {
    tracemill::formats::TraceBuilder builder;
    const auto report = decoder.Decode(json, padded.size(), &builder);
    events = report.events_read;
    benchmark::DoNotOptimize(builder.Finish());
  }
  state.SetLabel(decoder.scanned() ? "scan path" : "fast path");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * events));
}
BENCHMARK(BM_Decode)->ArgName("scan")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--trace=", 8) == 0) g_path = argv[i] + 8;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
