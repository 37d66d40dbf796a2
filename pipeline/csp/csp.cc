#include "pipeline/csp/csp.h"

#include <tbb/flow_graph.h>

#include "absl/strings/str_cat.h"
#include "pipeline/csp/csp_account.h"
#include "pipeline/csp/csp_inputs.h"
#include "pipeline/csp/csp_output.h"
#include "pipeline/job.h"
#include "pipeline/output/earlier_run.h"
#include "pipeline/output/output_dir.h"

namespace tracemill::pipeline {
namespace {

// CheckOptions: the option values CrossStackProfiler would choke on.
bool CheckOptions(const CspOptions& opts, Job& job) {
  const char* bad = opts.gpus_per_trainer < 1                     ? "--gpus-per-trainer must be >= 1"
                    : opts.display_size < 1                        ? "--display-size must be >= 1"
                    : opts.trainer_num < 0 || opts.group_size < 0 ? "--trainer-num and --group-size must be >= 1"
                                                                   : nullptr;
  if (bad) job.UsageError(bad);
  return !bad;
}

// WriteOutputs: the flow graph, one task per output, at most `threads` in
// flight (each holds display_size rank files).
void WriteOutputs(CspOutputs& outputs, int threads) {
  using namespace tbb::flow;
  graph g;
  size_t next = 0;
  input_node<size_t> source(g, [&](tbb::flow_control& fc) -> size_t {
    if (next < outputs.size()) return next++;
    fc.stop();
    return 0;
  });
  limiter_node<size_t> limiter(g, static_cast<size_t>(threads));
  function_node<size_t, continue_msg> write(g, unlimited, [&](size_t k) {
    outputs.Write(k);
    return continue_msg();
  });
  make_edge(source, limiter);
  make_edge(limiter, write);
  make_edge(write, limiter.decrementer());
  source.activate();
  g.wait_for_all();
}

}  // namespace

RunSummary RunCsp(const CspOptions& opts) {
  Job job("tracemill csp", opts.progress && !opts.quiet, opts.command_line);
  job.summary().group_by = "csp";
  job.summary().gpus_per_node = opts.gpus_per_trainer;
  if (!CheckOptions(opts, job)) return job.summary();
  // 1. Inputs, and the job's shape.
  CspInputs in;
  CspShape shape;
  if (!ListCspInputs(opts, job, &in) || !ShapeCspJob(opts, in, job, &shape)) return job.summary();
  // 2. The output folder, by convert's rules; then its stale temporaries go.
  OutputDirectory out_dir(job, opts.timeline_path);
  if (!out_dir.Open("", "", ShardSpec{})) return job.summary();
  const std::vector<std::string> earlier = EarlierRunFiles(opts.timeline_path, "manifest.json");
  RemoveStaleFiles(opts.timeline_path, [](std::string_view) { return true; }, /*shard_files_too=*/false);
  // 3. One task per (group, GPU), group-major, in parallel.
  CspOutputs outputs(opts, shape, in, job);
  WriteOutputs(outputs, job.StartThreads(opts.threads, opts.quiet));
  job.console().EndProgress();
  // 4. Account: DCGM rows, error lines, the csp section, the earlier run's
  // files not written again, the manifest, the report.
  AccountForCsp(opts, in, shape, outputs, earlier, job);
  return job.summary();
}

}  // namespace tracemill::pipeline
