// BM_Convert: `tracemill convert` end to end, in process (RunConvert): read,
// inflate, decode, sort, merge and write every output plus the manifest.
// `--group-by local-gpu`, as the CLI's default. The `tables:summary` and
// `tables:full` variants add `--tables` (OUTDIR/tables.sqlite, issue 23);
// `group:all` is `--group-by all`: one output, whose merge and write run on
// one thread (issue 34's 1 -> 2 threads row).
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "bench/end_to_end/input.h"
#include "bench/end_to_end/measure.h"
#include "pipeline/convert/convert.h"
#include "pipeline/options.h"

namespace tracemill::bench {
namespace {

// Fixture: the options of one convert job and what it must produce.
struct ConvertFixture {
  pipeline::ConvertOptions opts;
  bool gzip = false;
  uint64_t events = 0;
  uint64_t json_bytes = 0;
  size_t outputs = 0;

  ConvertFixture(const GeneratedInput& in, bool gz, int threads, pipeline::TablesMode tables, pipeline::GroupBy group)
      : gzip(gz) {
    opts.inputs = {gz ? in.gzip_dir : in.json_dir};
    opts.out_dir = absl::StrCat(in.root, "/out-", gz ? "gzip" : "json", "-t", threads, "-tables",
                                static_cast<int>(tables), "-group", static_cast<int>(group));
    opts.tables = tables;
    opts.group_by = group;
    opts.threads = threads;
    opts.memory_limit = in.memory_limit;
    opts.quiet = true;
    events = in.events;
    json_bytes = in.json_bytes;
    // gen_kineto's rank r runs on local GPU r % gpus_per_node; a real
    // template's GPUs are its own (outputs not checked).
    std::set<int> gpus;
    for (int r = 0; r < in.ranks; ++r) gpus.insert(r % in.gpus_per_node);
    outputs = group == pipeline::GroupBy::kAll ? 1 : in.real ? 0 : gpus.size();
  }

  // Empty if `s` is what the generated input must give.
  std::string Check(const pipeline::RunSummary& s) const {
    if (s.exit_code != pipeline::kExitOk) return absl::StrCat("exit code ", s.exit_code);
    uint64_t read = 0, written = 0, dropped = 0, empty = 0, decoded = 0;
    for (const auto& r : s.inputs) {
      read += r.events_read;
      written += r.events_written;
      // Kineto lists every GPU of the host: the unused ones' metadata is
      // left out (empty_process), by design.
      dropped += r.dropped.Total() - r.dropped[formats::DropReason::kEmptyProcess];
      empty += r.dropped[formats::DropReason::kEmptyProcess];
      decoded += r.decoded_bytes;
      if (gzip != (r.format.rfind("gzip+", 0) == 0))
        return absl::StrCat(r.path, ": detected as ", r.format);
    }
    uint64_t output_events = 0;
    for (const auto& o : s.outputs) output_events += o.events;
    // Kineto's `[memory]` instants each add a memory counter event, counted
    // as read (issue 25): more events read than generated, all written.
    if (read < events || written + empty != read || output_events != written || dropped != 0)
      return absl::StrCat("events: generated ", events, ", read ", read, ", written ", written,
                          " (outputs say ", output_events, "), dropped ", dropped);
    if (decoded != json_bytes)
      return absl::StrCat("decoded ", decoded, " bytes of JSON, generated ", json_bytes);
    if (outputs && s.outputs.size() != outputs)
      return absl::StrCat(s.outputs.size(), " outputs, expected ", outputs);
    if (opts.tables != pipeline::TablesMode::kOff && ::access((opts.out_dir + "/tables.sqlite").c_str(), R_OK) != 0)
      return "no tables.sqlite";
    return "";
  }
};

void BM_Convert(benchmark::State& state, bool gzip, int threads, pipeline::TablesMode tables,
                pipeline::GroupBy group) {
  const GeneratedInput& in = Input();
  ConvertFixture f(in, gzip, threads, tables, group);
  // Check before timing (this run also warms the page cache).
  if (std::string err = f.Check(pipeline::RunConvert(f.opts)); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  IterationTimer timer;
  for (auto _ : state) {
    // Untimed: earlier runs' outputs written back now, not by kernel threads
    // on the same cores while this run is timed. (Dropping the page cache
    // as well, to start every run as on a fresh node, made runs slower and
    // no steadier: on this VM, memory the guest freed is costly to touch again.)
    // The last run's outputs go first, as a batch job writes into a fresh
    // directory (replacing them timed the deletion of the old files too).
    std::error_code rm_error;
    std::filesystem::remove_all(f.opts.out_dir, rm_error);
    ::sync();
    timer.Start();
    pipeline::RunSummary s = pipeline::RunConvert(f.opts);
    timer.Stop(state);
    if (s.exit_code != pipeline::kExitOk) {
      state.SkipWithError("convert failed while timing");
      break;
    }
  }
  timer.Report(state, in.json_bytes, in.events);
  // The outputs are not needed again: give their page cache back.
  std::error_code ec;
  std::filesystem::remove_all(f.opts.out_dir, ec);
}

}  // namespace

void RegisterConvert(const GeneratedInput& in) {
  for (bool gzip : {false, true}) {
    for (int threads : {1, 2}) {
      std::string name =
          absl::StrCat("BM_Convert/", in.label, "/", gzip ? "gzip" : "json", "/threads:", threads);
      benchmark::RegisterBenchmark(name.c_str(), BM_Convert, gzip, threads, pipeline::TablesMode::kOff,
                                   pipeline::GroupBy::kLocalGpu)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  // --group-by all: JSON input, 1 and 2 threads.
  for (int threads : {1, 2}) {
    std::string name = absl::StrCat("BM_Convert/", in.label, "/json/group:all/threads:", threads);
    benchmark::RegisterBenchmark(name.c_str(), BM_Convert, false, threads, pipeline::TablesMode::kOff,
                                 pipeline::GroupBy::kAll)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  // --tables: JSON input, 2 threads (what RESULTS.md compares).
  for (auto [mode, label] : {std::pair{pipeline::TablesMode::kSummary, "summary"},
                             std::pair{pipeline::TablesMode::kFull, "full"}}) {
    std::string name = absl::StrCat("BM_Convert/", in.label, "/json/threads:2/tables:", label);
    benchmark::RegisterBenchmark(name.c_str(), BM_Convert, false, 2, mode, pipeline::GroupBy::kLocalGpu)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace tracemill::bench
