#pragma once
// The process's own cgroup, as /proc/self/cgroup names it: the folders that
// hold its limits, from its own up to the mount root.
//
// Slurm's cgroup plugin and systemd put a job several levels down while the
// whole hierarchy stays mounted, so the mount root's files say "max" there
// and the job's limits sit below; in a container with its own cgroup
// namespace the path is "/" and the root's files are the container's. The
// effective limit is the smallest on the way up.
#include <string>
#include <vector>

namespace tracemill::pipeline {

// CgroupDirs: for cgroup v2 ("0::/path") the folders under
// `root`/sys/fs/cgroup, and for v1 the folders of the hierarchy that holds
// `v1_controller` ("memory", "cpu") under `root`/sys/fs/cgroup/<controller>,
// each from the process's own cgroup up to the mount root, own first (each
// ends in '/'). `root` is "" but in tests. Empty lists where
// /proc/self/cgroup names none.
struct CgroupDirs {
  std::vector<std::string> v2, v1;
};
CgroupDirs FindCgroupDirs(const std::string& root, const std::string& v1_controller);

}  // namespace tracemill::pipeline
