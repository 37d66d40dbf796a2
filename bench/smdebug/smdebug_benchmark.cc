// BM_MergeSmdebug/<nodes>: `tracemill convert` (in process) on a synthetic
// smdebug job of <nodes> x 1 hour (tools/gen_smdebug, seed 1: 60 framework
// files and 60 system-metrics files per node), --group-by node, one output
// per node. Checked before timing: exit status 0 and every event read is
// written (no window). Peak RSS of the CLI on the same jobs: smdebug_rss.sh.
#include <benchmark/benchmark.h>
#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include "pipeline/convert/convert.h"
#include "pipeline/options.h"

namespace {

std::string Job(int nodes) {
  const char* t = std::getenv("TMPDIR");
  std::string dir = std::string(t ? t : "/tmp") + "/tracemill-bench-smdebug-" + std::to_string(nodes);
  struct stat st;
  if (::stat((dir + ".complete").c_str(), &st) != 0) {
    std::string cmd = std::string(TRACEMILL_GEN_SMDEBUG) + " -o " + dir + " --nodes " + std::to_string(nodes) +
                      " --hours 1 --seed 1 && touch " + dir + ".complete";
    if (std::system(cmd.c_str()) != 0) return "";
  }
  return dir;
}

void BM_MergeSmdebug(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  std::string job = Job(nodes);
  if (job.empty()) {
    state.SkipWithError("gen_smdebug failed");
    return;
  }
  tracemill::pipeline::ConvertOptions opts;
  opts.inputs = {job};
  opts.out_dir = job + "-out";
  opts.group_by = tracemill::pipeline::GroupBy::kNode;
  opts.gpus_per_node = 1;  // one rank per node: one output per node
  opts.quiet = true;
  opts.write_report = false;
  uint64_t events = 0, bytes = 0;
  for (auto _ : state) {
    tracemill::pipeline::RunSummary s = tracemill::pipeline::RunConvert(opts);
    uint64_t read = 0, dropped = 0;
    events = bytes = 0;
    for (const auto& r : s.inputs) {
      read += r.events_read;
      dropped += r.dropped.Total();
      events += r.events_written;
      bytes += r.bytes;
    }
    if (s.exit_code != 0 || s.outputs.size() != static_cast<size_t>(nodes) + 1 || events == 0 ||
        read != events + dropped) {
      state.SkipWithError("conversion failed or did not balance");
      return;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(events) * state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
  state.counters["files"] = static_cast<double>(nodes * 120);
}
BENCHMARK(BM_MergeSmdebug)->Arg(16)->Arg(64)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
