// bench_end_to_end: `tracemill convert` end to end on synthetic Kineto-like
// input, and the machine's limit on the same bytes, in one binary
// (STYLE.md section 7; figures in bench/RESULTS.md).
//
//   bench_end_to_end [--ranks=8] [--events=50000] [--seed=1] [--tmpdir=DIR]
//                    [--keep_input] [--gen_kineto=PATH] [--real[=A.json.gz,B.json]]
//                    [--dense] [--memory_limit=MiB]
//                    [Google Benchmark flags]
//
// --real: real Kineto traces replicated to --ranks ranks instead of
// gen_kineto's synthetic ones (real_input.h; --events is then unused).
// --dense: gen_kineto --dense (~210 bytes per event, as smdebug and Horovod
// timelines). --memory_limit: convert's --memory-limit in MiB.
//
// The input is generated once per run by tools/gen_kineto (plain JSON and a
// gzip copy of the same bytes) into a temporary directory under --tmpdir
// ($TMPDIR, else /tmp), which is removed at exit unless --keep_input.
#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/end_to_end/input.h"
#include "tracemill/version.h"

namespace tracemill::bench {
void RegisterConvert(const GeneratedInput& in);
void RegisterLimit(const GeneratedInput& in);
}  // namespace tracemill::bench

#define TM_STRINGIFY2(x) #x
#define TM_STRINGIFY(x) TM_STRINGIFY2(x)

namespace {

// Takes our own `--name=value` flags out of argv; the rest is Google
// Benchmark's.
bool TakeFlag(int* argc, char** argv, int* i, std::string_view name, std::string* value) {
  std::string_view a = argv[*i];
  std::string prefix = "--" + std::string(name);
  if (a == prefix) {
    *value = std::string(1, '1');
  } else if (a.substr(0, prefix.size() + 1) == prefix + "=") {
    *value = std::string(a.substr(prefix.size() + 1));
  } else {
    return false;
  }
  for (int j = *i; j + 1 < *argc; ++j) argv[j] = argv[j + 1];
  --*argc;
  --*i;
  return true;
}

// --real: the two ResNet-50 traces of tests/data/kineto-tb-plugin;
// --real=A,B: those files.
std::vector<std::string> RealTemplates(const std::string& value) {
  if (value == "1") {
    const std::string dir = std::string(TRACEMILL_SOURCE_DIR) + "/tests/data/kineto-tb-plugin/";
    return {dir + "resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
            dir + "resnet50_run2/worker0.1623143566756.pt.trace.json.gz"};
  }
  return absl::StrSplit(value, ',', absl::SkipEmpty());
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tracemill::bench;
  InputSpec spec;
#ifdef TRACEMILL_GEN_KINETO
  spec.gen_kineto = TRACEMILL_GEN_KINETO;
#endif
  if (const char* t = std::getenv("TMPDIR"); t && *t) spec.tmp_root = t;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    if (TakeFlag(&argc, argv, &i, "ranks", &v)) spec.ranks = std::atoi(v.c_str());
    else if (TakeFlag(&argc, argv, &i, "events", &v)) spec.events = std::atoll(v.c_str());
    else if (TakeFlag(&argc, argv, &i, "seed", &v)) spec.seed = std::strtoull(v.c_str(), nullptr, 10);
    else if (TakeFlag(&argc, argv, &i, "tmpdir", &v)) spec.tmp_root = v;
    else if (TakeFlag(&argc, argv, &i, "keep_input", &v)) spec.keep = true;
    else if (TakeFlag(&argc, argv, &i, "gen_kineto", &v)) spec.gen_kineto = v;
    else if (TakeFlag(&argc, argv, &i, "real", &v)) spec.real = RealTemplates(v);
    else if (TakeFlag(&argc, argv, &i, "dense", &v)) spec.dense = true;
    else if (TakeFlag(&argc, argv, &i, "memory_limit", &v)) spec.memory_limit = std::stoull(v) << 20;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  if (spec.ranks < 1 || spec.events < 100 || spec.gen_kineto.empty()) {
    std::fprintf(stderr, "bench_end_to_end: need --ranks >= 1, --events >= 100 and gen_kineto\n");
    return 2;
  }

  GeneratedInput in;
  if (!Generate(spec, &in)) {
    Cleanup(spec, in);
    return 1;
  }
  SetInput(in);
  benchmark::AddCustomContext("tracemill_version", tracemill::kVersion);
  benchmark::AddCustomContext(
      "input", absl::StrCat(in.label, ": ", in.events, " events, ", in.json_bytes,
                            " bytes JSON (", in.gzip_bytes, " gzipped), seed ", spec.seed, ", in ",
                            in.root));
  // On-Demand's stage 2 (iteration, strings, numbers) is the kernel compiled
  // into our code: SIMDJSON_BUILTIN_IMPLEMENTATION as this build's -march
  // sets it. simdjson::builtin_implementation() is not that: it is defined in
  // libsimdjson.so and names the library's own builtin (Debian: fallback).
  // Stage 1 (structural indexing) of both APIs is dispatched at run time
  // (get_active_implementation()).
  benchmark::AddCustomContext("simdjson_ondemand_builtin",
                              TM_STRINGIFY(SIMDJSON_BUILTIN_IMPLEMENTATION));
  benchmark::AddCustomContext("simdjson_library_builtin",
                              simdjson::builtin_implementation()->name());
  benchmark::AddCustomContext("simdjson_active_stage1",
                              simdjson::get_active_implementation()->name());
  RegisterConvert(in);
  RegisterLimit(in);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  Cleanup(spec, in);
  return 0;
}
