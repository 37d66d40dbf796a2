#include "pipeline/cgroup.h"

#include <fstream>

namespace tracemill::pipeline {
namespace {

// UpFrom: `mount` + path, then each parent of path up to `mount` itself.
std::vector<std::string> UpFrom(const std::string& mount, std::string path) {
  std::vector<std::string> dirs;
  while (!path.empty() && path.back() == '/') path.pop_back();
  while (true) {
    dirs.push_back(mount + path + "/");
    if (path.empty()) break;
    path = path.substr(0, path.rfind('/'));
  }
  return dirs;
}

}  // namespace

CgroupDirs FindCgroupDirs(const std::string& root, const std::string& v1_controller) {
  // Lines: "0::/path" (v2), "N:memory:/path" or "N:cpu,cpuacct:/path" (v1).
  CgroupDirs dirs;
  std::ifstream self(root + "/proc/self/cgroup");
  for (std::string line; std::getline(self, line);) {
    const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = "," + line.substr(a + 1, b - a - 1) + ",";
    const std::string path = line.substr(b + 1);
    if (controllers == ",,") dirs.v2 = UpFrom(root + "/sys/fs/cgroup", path);
    else if (controllers.find("," + v1_controller + ",") != std::string::npos)
      dirs.v1 = UpFrom(root + "/sys/fs/cgroup/" + v1_controller, path);
  }
  return dirs;
}

}  // namespace tracemill::pipeline
