// Shard detection from the environment (pipeline/shard.h): Slurm arrays,
// Slurm steps, Kubernetes Indexed Jobs, in that order.
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "pipeline/shard.h"

namespace tracemill::pipeline {
namespace {

// A fake environment.
EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* k) -> const char* {
    auto it = vars.find(k);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(ShardEnv, NothingSetIsOneShard) {
  auto s = DetectShard(Env({}), 0);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->index, 0);
  EXPECT_EQ(s->count, 1);
  EXPECT_EQ(s->source, "");
}

// `sbatch --array=5-8`: ids 5..8 are shards 0..3.
TEST(ShardEnv, SlurmArrayWithMinNotZero) {
  auto s = DetectShard(Env({{"SLURM_ARRAY_TASK_ID", "7"},
                            {"SLURM_ARRAY_TASK_MIN", "5"},
                            {"SLURM_ARRAY_TASK_MAX", "8"},
                            {"SLURM_ARRAY_TASK_COUNT", "4"},
                            {"SLURM_PROCID", "0"},
                            {"SLURM_NTASKS", "1"}}),
                       0);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->index, 2);
  EXPECT_EQ(s->count, 4);
  EXPECT_NE(s->source.find("SLURM_ARRAY_TASK_ID=7"), std::string::npos);
  EXPECT_NE(s->source.find("SLURM_ARRAY_TASK_MIN=5"), std::string::npos);
}

// `--array=0-6:2`: ids 0,2,4,6 are shards 0..3.
TEST(ShardEnv, SlurmArrayWithStep) {
  auto s = DetectShard(Env({{"SLURM_ARRAY_TASK_ID", "4"},
                            {"SLURM_ARRAY_TASK_MIN", "0"},
                            {"SLURM_ARRAY_TASK_STEP", "2"},
                            {"SLURM_ARRAY_TASK_COUNT", "4"}}),
                       0);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->index, 2);
  EXPECT_EQ(s->count, 4);
}

// Without SLURM_ARRAY_TASK_COUNT (older Slurm), the count comes from MAX.
TEST(ShardEnv, SlurmArrayCountFromMax) {
  auto s = DetectShard(
      Env({{"SLURM_ARRAY_TASK_ID", "11"}, {"SLURM_ARRAY_TASK_MIN", "10"}, {"SLURM_ARRAY_TASK_MAX", "12"}}), 0);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->index, 1);
  EXPECT_EQ(s->count, 3);
}

// `--array=1,5,9`: not an evenly stepped range, so no shard can be derived.
TEST(ShardEnv, SlurmArrayListIsAnError) {
  auto s = DetectShard(Env({{"SLURM_ARRAY_TASK_ID", "9"},
                            {"SLURM_ARRAY_TASK_MIN", "1"},
                            {"SLURM_ARRAY_TASK_MAX", "9"},
                            {"SLURM_ARRAY_TASK_COUNT", "3"}}),
                       0);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.status().message()).find("--shard"), std::string::npos);
}

// `srun -n 4 tracemill ...`: one shard per task.
TEST(ShardEnv, SlurmSteps) {
  auto s = DetectShard(Env({{"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "4"}, {"JOB_COMPLETION_INDEX", "1"}}), 0);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->index, 3);
  EXPECT_EQ(s->count, 4);
  EXPECT_EQ(s->source, "SLURM_PROCID=3 SLURM_NTASKS=4");
}

TEST(ShardEnv, SlurmStepsDisagreeingWithShardCount) {
  EXPECT_FALSE(DetectShard(Env({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "4"}}), 3).ok());
}

TEST(ShardEnv, KubernetesIndexedJobCountFromEnvironment) {
  auto s = DetectShard(Env({{"JOB_COMPLETION_INDEX", "2"}, {"TRACEMILL_SHARD_COUNT", "3"}}), 0);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->index, 2);
  EXPECT_EQ(s->count, 3);
  EXPECT_EQ(s->source, "JOB_COMPLETION_INDEX=2 TRACEMILL_SHARD_COUNT=3");
}

TEST(ShardEnv, KubernetesIndexedJobCountFromFlag) {
  auto s = DetectShard(Env({{"JOB_COMPLETION_INDEX", "0"}, {"TRACEMILL_SHARD_COUNT", "9"}}), 5);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->index, 0);
  EXPECT_EQ(s->count, 5);
}

TEST(ShardEnv, KubernetesIndexedJobWithoutCountIsAnError) {
  auto s = DetectShard(Env({{"JOB_COMPLETION_INDEX", "2"}}), 0);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.status().message()).find("TRACEMILL_SHARD_COUNT"), std::string::npos);
}

TEST(ShardEnv, IndexOutsideCountIsAnError) {
  EXPECT_FALSE(DetectShard(Env({{"JOB_COMPLETION_INDEX", "3"}, {"TRACEMILL_SHARD_COUNT", "3"}}), 0).ok());
  EXPECT_FALSE(DetectShard(Env({{"SLURM_PROCID", "x"}, {"SLURM_NTASKS", "3"}}), 0).ok());
}

TEST(ShardArg, Parses) {
  auto s = ParseShardArg("2/7");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->index, 2);
  EXPECT_EQ(s->count, 7);
  EXPECT_FALSE(ParseShardArg("7/7").ok());
  EXPECT_FALSE(ParseShardArg("1").ok());
  EXPECT_FALSE(ParseShardArg("-1/3").ok());
  EXPECT_FALSE(ParseShardArg("0/0").ok());
}

}  // namespace
}  // namespace tracemill::pipeline
