#pragma once
// The CPUs this process may use: the affinity mask (taskset, Slurm's
// --cpus-per-task binding) and the cgroup CPU quota (Kubernetes limits,
// Slurm's cgroup plugin), not the host's CPU count.

namespace tracemill::pipeline {

// AvailableCpus returns max(1, min(affinity count, ceil(cgroup quota/period))).
// Reads /sys/fs/cgroup/cpu.max (v2) or cpu.cfs_quota_us/cpu.cfs_period_us (v1).
int AvailableCpus();

}  // namespace tracemill::pipeline
