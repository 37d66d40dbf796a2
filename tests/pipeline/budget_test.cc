// pipeline/budget: how --memory-limit is split between the stages (the rule
// in budget.h), and the byte sizes it parses.
#include "pipeline/budget.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "pipeline/cpus.h"
#include "pipeline/plan.h"

namespace tracemill::pipeline {
namespace {

constexpr uint64_t kMiB = 1 << 20;

TEST(MemoryPlan, StagedSplitIs60For40) {
  MemoryPlan p = PlanMemory(1000 * kMiB);
  EXPECT_EQ(p.decode, 600 * kMiB);
  EXPECT_EQ(p.runs, 400 * kMiB);
  EXPECT_EQ(p.merge, 600 * kMiB);
  EXPECT_FALSE(p.overlap);
}

TEST(MemoryPlan, OverlapDecodeKeepsWhatEveryThreadsInputNeedsAndRunsTheRest) {
  // 4 GiB, 2 threads, inputs of 181 MiB: 50% would hold 11 of them, but only
  // two decode at once; the runs get the rest (the 512-rank job spilled 290
  // of its runs at 40%, 84 at 85%).
  MemoryPlan p = PlanMemory(4096 * kMiB).ForOverlap(181 * kMiB, 2);
  EXPECT_TRUE(p.overlap);
  EXPECT_EQ(p.decode, 2 * 181 * kMiB);
  EXPECT_EQ(p.merge, 4096 * kMiB / 10);
  EXPECT_EQ(p.runs, 4096 * kMiB - 4096 * kMiB / 10 - 2 * 181 * kMiB);
  EXPECT_EQ(p.Describe(),
            "memory limit 4096 MiB: decode 362 MiB (9%), in-memory runs 3324 MiB (81%, the rest "
            "spills), merge buffers 410 MiB (10%, while decoding)");
  // Nothing known of the inputs: 50/40/10.
  MemoryPlan unknown = PlanMemory(4096 * kMiB).ForOverlap(0, 2);
  EXPECT_EQ(unknown.decode, 4096 * kMiB / 10 * 5);
  EXPECT_EQ(unknown.runs, 4096 * kMiB / 10 * 4);
  EXPECT_EQ(unknown.merge, 4096 * kMiB / 10);
}

TEST(MemoryPlan, OverlapDecodeGrowsSoBothThreadsDecode) {
  // The scale bench: --memory-limit 512M, 62 MB inputs (DecodeCost 180 MiB):
  // 50% (256 MiB) holds one; 75% (384 MiB) holds two, and runs keep the rest.
  const uint64_t limit = 512 * kMiB, cost = DecodeCost(62'582'084);
  EXPECT_EQ(cost >> 20, 180u);
  MemoryPlan p = PlanMemory(limit).ForOverlap(cost, 2);
  EXPECT_EQ(p.decode, 2 * cost);
  EXPECT_EQ(p.merge, limit / 10);
  EXPECT_EQ(p.runs, limit - limit / 10 - 2 * cost);
  EXPECT_EQ(p.decode + p.runs + p.merge, limit);
  EXPECT_GE(p.runs, limit / 100 * 15);
  EXPECT_EQ(p.Describe(),
            "memory limit 512 MiB: decode 360 MiB (70%), in-memory runs 101 MiB (20%, the rest "
            "spills), merge buffers 51 MiB (10%, while decoding)");
}

TEST(MemoryPlan, OverlapDecodeGrowsNoFurtherThan75Percent) {
  const uint64_t limit = 512 * kMiB;
  // Two of 200 MiB need 78%: one it is, the runs get the rest.
  MemoryPlan one = PlanMemory(limit).ForOverlap(200 * kMiB, 2);
  EXPECT_EQ(one.decode, 200 * kMiB);
  EXPECT_EQ(one.runs, limit - limit / 10 - 200 * kMiB);
  // None fits 75%: 50/40/10 (the caller does not overlap).
  MemoryPlan none = PlanMemory(limit).ForOverlap(400 * kMiB, 2);
  EXPECT_EQ(none.decode, limit / 10 * 5);
  EXPECT_EQ(none.runs, limit / 10 * 4);

  // 8 threads, 100 MiB inputs: 50% holds 2, 75% holds 3 (not 8).
  MemoryPlan three = PlanMemory(limit).ForOverlap(100 * kMiB, 8);
  EXPECT_EQ(three.decode, 300 * kMiB);
  EXPECT_EQ(three.runs, limit - limit / 10 - 300 * kMiB);
  // One thread: its one input's cost, the runs the rest.
  MemoryPlan single = PlanMemory(limit).ForOverlap(180 * kMiB, 1);
  EXPECT_EQ(single.decode, 180 * kMiB);
  EXPECT_EQ(single.runs, limit - limit / 10 - 180 * kMiB);
}

// Dense events cost more than 3x their text (found by a helper: two 30 MB
// files of 60-byte events under 256M peaked at 294 MiB with two decoding).
TEST(DecodeCost, GrowsForDenseEvents) {
  EXPECT_EQ(DecodeFactor(0), 3.0);    // unknown
  EXPECT_EQ(DecodeFactor(444), 3.0);  // gen_kineto's Kineto-like events
  EXPECT_EQ(DecodeFactor(150), 3.0);
  EXPECT_EQ(DecodeFactor(100), 3.5);
  EXPECT_EQ(DecodeFactor(60), 4.5);
  EXPECT_EQ(DecodeFactor(10), 8.0);  // capped
  EXPECT_EQ(DecodeCost(30'000'000, 60), 135'000'000u + (1u << 20));
  // 256M: 50% is 128 MiB; two of these (130 MiB each) do not fit 75%, so
  // one decodes at a time (it was two, by the 3x estimate: 88 MiB each).
  MemoryPlan p = PlanMemory(256 * kMiB).ForOverlap(DecodeCost(30'000'000, 60), 2);
  EXPECT_EQ(p.decode, DecodeCost(30'000'000, 60));
  EXPECT_EQ(p.decode / DecodeCost(30'000'000, 60), 1u);
}

TEST(HeadBytesPerEvent, CountsPhKeysFromTraceEvents) {
  std::string head = R"({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "padding padding"}], )";
  const size_t start = head.size();
  head += R"("traceEvents": [)";
  const std::string ev = R"({"ph": "X", "name": "a", "pid": 0, "tid": 1, "ts": 1, "dur": 1}, )";
  for (int i = 0; i < 20; ++i) head += ev;
  EXPECT_EQ(HeadBytesPerEvent(head), (head.size() - start) / 20);
  // The JSON Array Format has no key: from the start.
  std::string array = "[" + ev + ev;
  EXPECT_EQ(HeadBytesPerEvent(array), 0u);  // 2 events: too few to tell
  for (int i = 0; i < 30; ++i) array += ev;
  EXPECT_EQ(HeadBytesPerEvent(array), array.size() / 32);
  EXPECT_EQ(HeadBytesPerEvent(""), 0u);
}

TEST(ParseBytes, SuffixesArePowersOf1024) {
  EXPECT_EQ(ParseBytes("512M"), 512 * kMiB);
  EXPECT_EQ(ParseBytes("4G"), uint64_t{4} << 30);
  EXPECT_EQ(ParseBytes("64KiB"), uint64_t{64} << 10);
  EXPECT_EQ(ParseBytes("1048576"), kMiB);
  EXPECT_EQ(ParseBytes("0"), std::nullopt);
  EXPECT_EQ(ParseBytes("12X"), std::nullopt);
  EXPECT_EQ(ParseBytes("M"), std::nullopt);
}

}  // namespace
}  // namespace tracemill::pipeline

namespace tracemill::pipeline {
namespace {

// A fake root with /proc/self/cgroup and the cgroup files under it.
class FakeCgroupRoot {
 public:
  // One folder per test: ctest runs the tests as parallel processes.
  FakeCgroupRoot()
      : root_(::testing::TempDir() + "/cgroup-root-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" + std::to_string(++count_)) {
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ + "/proc/self");
  }
  ~FakeCgroupRoot() { std::filesystem::remove_all(root_); }
  void Write(const std::string& path, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(root_ + path).parent_path());
    std::ofstream(root_ + path) << text;
  }
  const std::string& root() const { return root_; }

 private:
  static inline int count_ = 0;  // several roots in one test
  std::string root_;
};

// Slurm (cgroup v1): the job step's limit is three levels down; the mount
// root's file says unlimited. The step's 6 GiB is what holds.
TEST(CgroupMemoryLimit, V1SlurmJobStepIsFoundBelowTheRoot) {
  FakeCgroupRoot r;
  r.Write("/proc/self/cgroup", "12:pids:/slurm/uid_0/job_7/step_0\n4:memory:/slurm/uid_0/job_7/step_0\n");
  r.Write("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  r.Write("/sys/fs/cgroup/memory/slurm/uid_0/job_7/memory.limit_in_bytes", "8589934592\n");
  r.Write("/sys/fs/cgroup/memory/slurm/uid_0/job_7/step_0/memory.limit_in_bytes", "6442450944\n");
  EXPECT_EQ(CgroupMemoryLimit(r.root()), std::optional<uint64_t>(6442450944));
}

// cgroup v2: the smallest limit on the way up (the job's 4 GiB, the step
// says max).
TEST(CgroupMemoryLimit, V2SmallestAncestorLimitHolds) {
  FakeCgroupRoot r;
  r.Write("/proc/self/cgroup", "0::/system.slice/slurmstepd.scope/job_9/step_batch/user/task_0\n");
  r.Write("/sys/fs/cgroup/system.slice/slurmstepd.scope/job_9/memory.max", "4294967296\n");
  r.Write("/sys/fs/cgroup/system.slice/slurmstepd.scope/job_9/step_batch/memory.max", "max\n");
  r.Write("/sys/fs/cgroup/system.slice/slurmstepd.scope/job_9/step_batch/user/task_0/memory.max", "max\n");
  EXPECT_EQ(CgroupMemoryLimit(r.root()), std::optional<uint64_t>(4294967296));
}

// A container with its own cgroup namespace: "0::/", the limit at the root.
TEST(CgroupMemoryLimit, ContainerRootFileHolds) {
  FakeCgroupRoot r;
  r.Write("/proc/self/cgroup", "0::/\n");
  r.Write("/sys/fs/cgroup/memory.max", "2147483648\n");
  EXPECT_EQ(CgroupMemoryLimit(r.root()), std::optional<uint64_t>(2147483648));
}

// No limit anywhere (and a path not mounted here): none.
TEST(CgroupMemoryLimit, NoneWhenUnlimited) {
  FakeCgroupRoot r;
  r.Write("/proc/self/cgroup", "4:memory:/elsewhere/not/mounted\n");
  r.Write("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_EQ(CgroupMemoryLimit(r.root()), std::nullopt);
}

// The CPU quota the same way (pipeline/cpus.h): v1 Slurm step 2.5 CPUs
// below an unlimited root -> 3; v2, the job's 4 CPUs under a step's 8 -> 4.
TEST(CgroupCpuLimit, SmallestQuotaOnTheWayUp) {
  FakeCgroupRoot v1;
  v1.Write("/proc/self/cgroup", "3:cpu,cpuacct:/slurm/uid_0/job_7/step_0\n4:memory:/slurm/uid_0/job_7/step_0\n");
  v1.Write("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
  v1.Write("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
  v1.Write("/sys/fs/cgroup/cpu/slurm/uid_0/job_7/step_0/cpu.cfs_quota_us", "250000\n");
  v1.Write("/sys/fs/cgroup/cpu/slurm/uid_0/job_7/step_0/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(CgroupCpuLimit(v1.root()), 3);
  FakeCgroupRoot v2;
  v2.Write("/proc/self/cgroup", "0::/kubepods/pod1/ctr\n");
  v2.Write("/sys/fs/cgroup/kubepods/pod1/cpu.max", "400000 100000\n");
  v2.Write("/sys/fs/cgroup/kubepods/pod1/ctr/cpu.max", "800000 100000\n");
  EXPECT_EQ(CgroupCpuLimit(v2.root()), 4);
  FakeCgroupRoot none;
  none.Write("/proc/self/cgroup", "0::/\n");
  none.Write("/sys/fs/cgroup/cpu.max", "max 100000\n");
  EXPECT_EQ(CgroupCpuLimit(none.root()), 0);
}

}  // namespace
}  // namespace tracemill::pipeline
