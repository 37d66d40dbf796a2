#pragma once
// The CPUs this process may use: the affinity mask (taskset, Slurm's
// --cpus-per-task binding) and the cgroup CPU quota (Kubernetes limits,
// Slurm's cgroup plugin), not the host's CPU count.

#include <cstdint>

namespace tracemill::pipeline {

// AvailableCpus returns max(1, min(affinity count, ceil(cgroup quota/period))).
// Reads /sys/fs/cgroup/cpu.max (v2) or cpu.cfs_quota_us/cpu.cfs_period_us (v1).
int AvailableCpus();

// AvailableMemoryBytes returns the memory this process may use: the cgroup
// limit (v2 memory.max, v1 memory.limit_in_bytes) if lower than physical
// memory, else physical memory. Until `--memory-limit` (issue 5) it bounds
// what one gzip input may inflate to, so a decompression bomb is rejected
// instead of getting the process OOM-killed.
uint64_t AvailableMemoryBytes();

}  // namespace tracemill::pipeline
