#include "pipeline/output/out_dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
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

OutDirLock::~OutDirLock() {
  if (fd_ >= 0) ::close(fd_);
  if (name_socket_ >= 0) ::close(name_socket_);
}

bool OutDirLock::Acquire(const std::string& dir, const ShardSpec& shard) {
  struct stat ds;
  fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) {
    // A directory this user may write but not read (mode 0333): no flock
    // without a descriptor, so only a name, and one for every job and shard
    // (exclusive).
    if (::stat(dir.c_str(), &ds) != 0 || !S_ISDIR(ds.st_mode)) return true;
    return BindName(absl::StrCat("tracemill-outdir-", ds.st_dev, "-", ds.st_ino, "-unreadable"));
  }
  if (::flock(fd_, (shard.sharded() ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0) return errno != EWOULDBLOCK;
  if (!shard.sharded()) return true;
  if (::fstat(fd_, &ds) != 0) return true;
  return BindName(absl::StrCat("tracemill-outdir-", ds.st_dev, "-", ds.st_ino, "-shard-", shard.index, "-of-",
                               shard.count));
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

std::string OutDirLock::InUseMessage(const std::string& dir) {
  return absl::StrCat(dir, " is in use by another tracemill job (it holds the directory's lock); "
                           "wait for it or write to another directory");
}

}  // namespace tracemill::pipeline
