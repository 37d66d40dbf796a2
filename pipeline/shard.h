#pragma once
// Sharding a job over a batch system's tasks: which shard this process is,
// and which shard writes each output.
//
// A shard is an index in [0, count). The scheduler (Slurm, Kubernetes) starts
// `count` copies of the same command line; each writes a disjoint set of
// outputs and `manifest.shard-<index>-of-<count>.json`, and
// `tracemill manifest merge` joins the manifests. The union of the outputs is
// byte-identical to a single run because every shard plans the same way from
// the same inputs (pipeline/plan.h) and decodes with the same rules.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tracemill::pipeline {

// ShardSpec: this process's shard.
struct ShardSpec {
  int index = 0;
  int count = 1;
  // Where it came from, for the one stderr line and the manifest:
  // "--shard", "SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_MIN=4 ...", or "".
  std::string source;
  bool sharded() const { return count > 1; }
};

// ParseShardArg parses `--shard INDEX/COUNT` ("2/4": 0-based index 2 of 4).
// Errors: kInvalidArgument unless 0 <= INDEX < COUNT <= 100000.
absl::StatusOr<ShardSpec> ParseShardArg(std::string_view text);

// EnvLookup returns an environment variable's value, or nullptr (getenv).
using EnvLookup = std::function<const char*(const char*)>;

// DetectShard finds the shard from the environment, in this order:
// 1. Slurm job arrays: SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT (else
//    (MAX - MIN) / STEP + 1), SLURM_ARRAY_TASK_MIN (array ids need not start
//    at 0: `--array=5-8` is shards 0..3), SLURM_ARRAY_TASK_STEP (default 1);
//    index = (ID - MIN) / STEP.
// 2. Slurm job steps (`srun -n 4 tracemill ...`): SLURM_PROCID of SLURM_NTASKS.
// 3. Kubernetes Indexed Jobs: JOB_COMPLETION_INDEX, with the count from
//    `shard_count_flag` (`--shard-count`, 0 if not given) or
//    TRACEMILL_SHARD_COUNT.
// 4. Otherwise 0/1 with an empty `source`.
// `shard_count_flag`, when given, must agree with a count found in 1 or 2.
// Errors: kInvalidArgument naming the variables (an index outside the count,
// array ids that are not an evenly stepped range, JOB_COMPLETION_INDEX
// without a count).
absl::StatusOr<ShardSpec> DetectShard(const EnvLookup& env, int shard_count_flag);

// AssignOutputs: the shard rule for outputs known before decoding.
// `bytes[k]` is the size on disk of the inputs planned to output k and
// `names[k]` its file name. Outputs are taken by planned bytes (descending,
// then by name) and each goes to the shard with the fewest bytes so far
// (ties: the lowest index). Returns the shard of each output, in input order.
std::vector<int> AssignOutputs(const std::vector<std::string>& names,
                               const std::vector<uint64_t>& bytes, int count);

}  // namespace tracemill::pipeline
