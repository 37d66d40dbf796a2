#include "pipeline/shard.h"

#include <algorithm>
#include <charconv>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "formats/common/status_macros.h"

namespace tracemill::pipeline {
namespace {

constexpr int64_t kMaxShards = 100000;

std::optional<int64_t> ParseNonNegative(std::string_view s) {
  int64_t v = 0;
  if (s.empty() || s.size() > 12) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

// Reads a variable as a non-negative integer: nullopt if unset,
// kInvalidArgument if set to anything else.
absl::StatusOr<std::optional<int64_t>> EnvInt(const EnvLookup& env, const char* name) {
  const char* v = env(name);
  if (v == nullptr || *v == '\0') return std::optional<int64_t>();
  auto n = ParseNonNegative(v);
  if (!n) return absl::InvalidArgumentError(absl::StrCat(name, "=", v, " is not a non-negative integer"));
  return std::optional<int64_t>(*n);
}

absl::Status CheckRange(int64_t index, int64_t count, const std::string& source) {
  if (count < 1 || count > kMaxShards || index < 0 || index >= count)
    return absl::InvalidArgumentError(absl::StrCat(
        "shard ", index, "/", count, " from ", source,
        " is not a valid shard (0 <= index < count); pass --shard INDEX/COUNT"));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ShardSpec> ParseShardArg(std::string_view text) {
  size_t slash = text.find('/');
  std::optional<int64_t> i, n;
  if (slash != std::string_view::npos) {
    i = ParseNonNegative(text.substr(0, slash));
    n = ParseNonNegative(text.substr(slash + 1));
  }
  if (!i || !n || *n < 1 || *n > kMaxShards || *i >= *n)
    return absl::InvalidArgumentError(absl::StrCat(
        "--shard ", AbslView(text), ": expected INDEX/COUNT with 0 <= INDEX < COUNT (e.g. 0/4)"));
  ShardSpec s;
  s.index = static_cast<int>(*i);
  s.count = static_cast<int>(*n);
  s.source = "--shard";
  return s;
}

absl::StatusOr<ShardSpec> DetectShard(const EnvLookup& env, int shard_count_flag) {
  ShardSpec s;
  auto agree = [&](int64_t count, const std::string& source) -> absl::Status {
    if (shard_count_flag > 0 && shard_count_flag != count)
      return absl::InvalidArgumentError(absl::StrCat("--shard-count ", shard_count_flag,
                                                     " disagrees with ", source));
    return absl::OkStatus();
  };
  TM_ASSIGN_OR_RETURN(auto id, EnvInt(env, "SLURM_ARRAY_TASK_ID"));
  if (id) {
    TM_ASSIGN_OR_RETURN(auto count, EnvInt(env, "SLURM_ARRAY_TASK_COUNT"));
    TM_ASSIGN_OR_RETURN(auto min, EnvInt(env, "SLURM_ARRAY_TASK_MIN"));
    TM_ASSIGN_OR_RETURN(auto max, EnvInt(env, "SLURM_ARRAY_TASK_MAX"));
    TM_ASSIGN_OR_RETURN(auto step, EnvInt(env, "SLURM_ARRAY_TASK_STEP"));
    int64_t lo = min.value_or(0), st = std::max<int64_t>(step.value_or(1), 1);
    std::string source = absl::StrCat("SLURM_ARRAY_TASK_ID=", *id);
    if (min) absl::StrAppend(&source, " SLURM_ARRAY_TASK_MIN=", *min);
    if (step && *step != 1) absl::StrAppend(&source, " SLURM_ARRAY_TASK_STEP=", *step);
    int64_t n = 0;
    if (count) {
      n = *count;
      absl::StrAppend(&source, " SLURM_ARRAY_TASK_COUNT=", *count);
    } else if (max && *max >= lo) {
      n = (*max - lo) / st + 1;
      absl::StrAppend(&source, " SLURM_ARRAY_TASK_MAX=", *max);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          source, " is set but neither SLURM_ARRAY_TASK_COUNT nor SLURM_ARRAY_TASK_MAX is: pass "
                  "--shard INDEX/COUNT"));
    }
    if (*id < lo || (*id - lo) % st != 0)
      return absl::InvalidArgumentError(absl::StrCat(
          source, ": array task ids are not an evenly stepped range from SLURM_ARRAY_TASK_MIN; "
                  "use --array=0-<N-1> or pass --shard INDEX/COUNT"));
    TM_RETURN_IF_ERROR(CheckRange((*id - lo) / st, n, source));
    TM_RETURN_IF_ERROR(agree(n, source));
    s.index = static_cast<int>((*id - lo) / st);
    s.count = static_cast<int>(n);
    s.source = std::move(source);
    return s;
  }
  TM_ASSIGN_OR_RETURN(auto procid, EnvInt(env, "SLURM_PROCID"));
  TM_ASSIGN_OR_RETURN(auto ntasks, EnvInt(env, "SLURM_NTASKS"));
  if (procid && ntasks) {
    std::string source = absl::StrCat("SLURM_PROCID=", *procid, " SLURM_NTASKS=", *ntasks);
    TM_RETURN_IF_ERROR(CheckRange(*procid, *ntasks, source));
    TM_RETURN_IF_ERROR(agree(*ntasks, source));
    s.index = static_cast<int>(*procid);
    s.count = static_cast<int>(*ntasks);
    s.source = std::move(source);
    return s;
  }
  TM_ASSIGN_OR_RETURN(auto completion, EnvInt(env, "JOB_COMPLETION_INDEX"));
  if (completion) {
    std::string source = absl::StrCat("JOB_COMPLETION_INDEX=", *completion);
    int64_t n = shard_count_flag;
    if (n > 0) {
      absl::StrAppend(&source, " --shard-count ", n);
    } else {
      TM_ASSIGN_OR_RETURN(auto env_count, EnvInt(env, "TRACEMILL_SHARD_COUNT"));
      if (!env_count)
        return absl::InvalidArgumentError(absl::StrCat(
            source, " is set (a Kubernetes Indexed Job) but the shard count is not: pass "
                    "--shard-count N or set TRACEMILL_SHARD_COUNT (= the Job's completions)"));
      n = *env_count;
      absl::StrAppend(&source, " TRACEMILL_SHARD_COUNT=", n);
    }
    TM_RETURN_IF_ERROR(CheckRange(*completion, n, source));
    s.index = static_cast<int>(*completion);
    s.count = static_cast<int>(n);
    s.source = std::move(source);
    return s;
  }
  if (shard_count_flag > 0)
    return absl::InvalidArgumentError(
        "--shard-count is the count for JOB_COMPLETION_INDEX (a Kubernetes Indexed Job), which "
        "is not set; pass --shard INDEX/COUNT instead");
  return s;
}

std::vector<int> AssignOutputs(const std::vector<std::string>& names,
                               const std::vector<uint64_t>& bytes, int count) {
  std::vector<size_t> order(names.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (bytes[a] != bytes[b]) return bytes[a] > bytes[b];
    return names[a] < names[b];
  });
  std::vector<uint64_t> load(static_cast<size_t>(std::max(count, 1)), 0);
  std::vector<int> owner(names.size(), 0);
  for (size_t k : order) {
    // The least loaded shard; min_element keeps the first (lowest index) on ties.
    size_t s = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    owner[k] = static_cast<int>(s);
    load[s] += bytes[k];
  }
  return owner;
}

}  // namespace tracemill::pipeline
