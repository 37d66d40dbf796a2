#pragma once
// The CPUs this process may use: the affinity mask (taskset, Slurm's
// --cpus-per-task binding) and the cgroup CPU quota (Kubernetes limits,
// Slurm's cgroup plugin), not the host's CPU count.

#include <string>

namespace tracemill::pipeline {

// AvailableCpus returns max(1, min(affinity count, CgroupCpuLimit)).
int AvailableCpus();

// CgroupCpuLimit: the smallest ceil(quota / period) of the process's own
// cgroup and its parents (cgroup.h): v2 cpu.max, v1 cpu.cfs_quota_us /
// cpu.cfs_period_us; 0 if none is set. `root` is "" but in tests.
int CgroupCpuLimit(const std::string& root);

// ThreadsThatStart returns how many threads, the caller included, can run at
// once, at most `wanted` (>= 1): it starts wanted - 1 threads that wait for
// each other, then joins them. Fewer when RLIMIT_NPROC (`ulimit -u`) or a
// cgroup's pids.max leaves no room; oneTBB aborts the process when it cannot
// create a worker, so the job runs with what starts.
int ThreadsThatStart(int wanted);

// ThreadsToUse returns the job's thread count: `requested` (--threads) if
// positive, else AvailableCpus(), cut to ThreadsThatStart. When cut, `*note`
// says so in one line ("only 1 of 2 threads can start ..."), else it is
// cleared.
int ThreadsToUse(int requested, std::string* note);

}  // namespace tracemill::pipeline
