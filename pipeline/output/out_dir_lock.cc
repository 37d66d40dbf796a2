#include "pipeline/output/out_dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "pipeline/options.h"

namespace tracemill::pipeline {

int CreateOutputDirectory(const std::string& dir, bool* created, std::string* error) {
  std::error_code ec;
  *created = std::filesystem::create_directories(dir, ec);
  struct stat sb;
  const bool exists = ::stat(dir.c_str(), &sb) == 0;
  if (!ec && exists && S_ISDIR(sb.st_mode)) return 0;
  if (!ec) ec = std::make_error_code(std::errc::not_a_directory);
  *error = ec.message();
  const int e = ec.value();
  const bool users = (exists && !S_ISDIR(sb.st_mode)) || e == EROFS || e == EACCES || e == EPERM ||
                     e == ENOTDIR || e == ENOENT || e == EEXIST;
  return users ? kExitUsage : kExitInternal;
}

OutDirLock::~OutDirLock() { Release(); }

void OutDirLock::Release() {
  if (fd_ >= 0) ::close(fd_);
  if (name_socket_ >= 0) ::close(name_socket_);
  fd_ = name_socket_ = -1;
}

bool OutDirLock::Acquire(const std::string& dir, const ShardSpec& shard, int64_t wait_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  for (int attempt = 0;; ++attempt) {
    if (TryOnce(dir, shard)) return true;
    if (std::chrono::steady_clock::now() >= deadline) break;
    Release();
    std::this_thread::sleep_for(std::chrono::milliseconds(attempt < 10 ? 10 : 100));
  }
  struct stat ds;
  holder_ = flock_busy_ && ::fstat(fd_, &ds) == 0 ? FlockHolder(ds.st_dev, ds.st_ino) : "";
  Release();
  return false;
}

bool OutDirLock::TryOnce(const std::string& dir, const ShardSpec& shard) {
  struct stat ds;
  flock_busy_ = false;
  fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) {
    // A directory this user may write but not read (mode 0333): no flock
    // without a descriptor, so only a name, and one for every job and shard
    // (exclusive).
    if (::stat(dir.c_str(), &ds) != 0 || !S_ISDIR(ds.st_mode)) return true;
    return BindName(absl::StrCat("tracemill-outdir-", ds.st_dev, "-", ds.st_ino, "-unreadable"));
  }
  flock_busy_ = ::flock(fd_, (shard.sharded() ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0;
  if (flock_busy_) return errno != EWOULDBLOCK;
  if (!shard.sharded()) return true;
  if (::fstat(fd_, &ds) != 0) return true;
  return BindName(absl::StrCat("tracemill-outdir-", ds.st_dev, "-", ds.st_ino, "-shard-", shard.index, "-of-",
                               shard.count));
}

std::string FlockHolder(uint64_t dev, uint64_t ino) {
  // A line: "1: FLOCK  ADVISORY  WRITE 1234 fe:00:247066 0 EOF" (device as
  // hex major:minor, inode decimal); a waiter's has "->" after "1:".
  const std::string file = absl::StrCat(absl::Hex(major(dev), absl::kZeroPad2), ":",
                                        absl::Hex(minor(dev), absl::kZeroPad2), ":", ino);
  std::ifstream locks("/proc/locks");
  std::string line;
  while (std::getline(locks, line)) {
    const std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    int64_t pid = 0;
    if (f.size() < 6 || f[1] != "FLOCK" || f[5] != file || !absl::SimpleAtoi(f[4], &pid)) continue;
    if (pid <= 0 || pid == ::getpid()) continue;
    std::ifstream comm_file(absl::StrCat("/proc/", pid, "/comm"));
    std::string comm;
    if (std::getline(comm_file, comm) && !comm.empty()) return absl::StrCat("process ", pid, " (", comm, ")");
    return absl::StrCat("process ", pid);
  }
  return "";
}

bool OutDirLock::BindName(const std::string& name) {
  name_socket_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (name_socket_ < 0) return true;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const size_t n = std::min(name.size(), sizeof(addr.sun_path) - 1);
  std::memcpy(addr.sun_path + 1, name.data(), n);  // sun_path[0] = 0: abstract
  return ::bind(name_socket_, reinterpret_cast<sockaddr*>(&addr),
                static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n)) == 0 ||
         errno != EADDRINUSE;
}

std::string OutDirLock::InUseMessage(const std::string& dir) const {
  const std::string who = holder_.empty() ? "another process" : holder_;
  return absl::StrCat(dir, " is in use by another tracemill job (", who, " held the directory's lock through a ",
                      kLockWaitMs / 1000, " s wait); wait for it or write to another directory");
}

}  // namespace tracemill::pipeline
