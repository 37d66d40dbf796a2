#include "pipeline/follow/watcher.h"

#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace tracemill::pipeline::follow {
namespace {

// File systems where inotify only sees this machine's writes (statfs(2)
// f_type): another node's files would never wake us.
const char* NetworkFileSystemName(long type) {
  switch (static_cast<unsigned long>(type)) {
    case 0x6969: return "NFS";
    case 0x0BD00BD0: return "Lustre";
    case 0x47504653: return "GPFS";
    case 0xFF534D42: return "CIFS";
    case 0xFE534D42: return "SMB2";
    case 0x517B: return "SMB";
    case 0x65735546: return "FUSE";
    case 0x00C36400: return "CephFS";
    case 0x013111A8: return "IBRIX";
    case 0x6B414653: return "AFS";
    case 0x19830326: return "FhGFS/BeeGFS";
    case 0x24051905: return "UBIFS";
    default: return nullptr;
  }
}

// The folder a root is watched through: itself, or a file's parent.
std::string FolderOfRoot(const std::string& root, bool* exists) {
  struct stat st;
  *exists = ::stat(root.c_str(), &st) == 0;
  if (*exists && S_ISDIR(st.st_mode)) return root;
  const size_t slash = root.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : root.substr(0, slash);
}

constexpr uint32_t kWatchMask = IN_CREATE | IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
                                IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;

}  // namespace

Watcher::~Watcher() { StopInotify(); }

void Watcher::StopInotify() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  folder_of_.clear();
  watch_of_.clear();
}

std::string Watcher::Start(const std::vector<std::string>& roots, bool force_poll) {
  if (force_poll) return "polling the input folders (--poll)";
  for (const std::string& root : roots) {
    bool exists = false;
    const std::string dir = FolderOfRoot(root, &exists);
    if (!exists) return absl::StrCat("polling the input folders (", root, " does not exist yet)");
    struct statfs fs;
    if (::statfs(dir.c_str(), &fs) == 0)
      if (const char* name = NetworkFileSystemName(fs.f_type))
        return absl::StrCat("polling the input folders (", dir, " is on ", name,
                            ", where inotify does not see other machines' writes)");
  }
  fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0) return absl::StrCat("polling the input folders (inotify: ", std::strerror(errno), ")");
  for (const std::string& root : roots) {
    bool exists = false;
    AddFolder(FolderOfRoot(root, &exists));
  }
  if (lost_) {
    StopInotify();
    return "polling the input folders (inotify: no watch left; raise fs.inotify.max_user_watches)";
  }
  return "watching the input folders with inotify";
}

void Watcher::AddFolder(const std::string& dir) {
  if (fd_ < 0 || watch_of_.count(dir)) return;
  const int wd = ::inotify_add_watch(fd_, dir.c_str(), kWatchMask);
  if (wd < 0) {
    if (errno == ENOSPC || errno == ENOMEM) lost_ = true;  // out of watches: poll instead
    return;  // gone already (ENOENT), or not a folder: the next scan says
  }
  folder_of_[wd] = dir;
  watch_of_[dir] = wd;
}

Watcher::Change Watcher::Wait(int64_t timeout_ns) {
  Change c;
  if (timeout_ns < 0) timeout_ns = 0;
  if (fd_ >= 0 && lost_) StopInotify();  // out of watches since: poll from now on
  if (fd_ < 0) {
    struct timespec ts = {static_cast<time_t>(timeout_ns / 1'000'000'000), static_cast<long>(timeout_ns % 1'000'000'000)};
    ::nanosleep(&ts, nullptr);  // a signal ends it early
    c.full_scan = true;
    return c;
  }
  struct pollfd p = {fd_, POLLIN, 0};
  const int ms = static_cast<int>(std::min<int64_t>(timeout_ns / 1'000'000 + 1, 1 << 30));
  if (::poll(&p, 1, ms) <= 0) return c;
  alignas(struct inotify_event) char buf[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd_, buf, sizeof(buf));
    if (n <= 0) break;
    for (ssize_t at = 0; at < n;) {
      const auto* ev = reinterpret_cast<const struct inotify_event*>(buf + at);
      at += static_cast<ssize_t>(sizeof(struct inotify_event) + ev->len);
      if (ev->mask & IN_Q_OVERFLOW) {
        c.full_scan = true;
        continue;
      }
      auto it = folder_of_.find(ev->wd);
      if (it == folder_of_.end()) continue;
      if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
        if (ev->mask & IN_IGNORED) {
          watch_of_.erase(it->second);
          folder_of_.erase(it);
        }
        c.full_scan = true;  // a watched folder went away or moved
        continue;
      }
      if (ev->len == 0) continue;
      const std::string path = absl::StrCat(it->second, it->second.back() == '/' ? "" : "/", ev->name);
      if (ev->mask & IN_ISDIR) {
        if (ev->mask & (IN_CREATE | IN_MOVED_TO)) c.folders.push_back(path);
        else if (ev->mask & IN_MOVED_FROM) c.full_scan = true;
      } else {
        c.files.push_back(path);
      }
    }
  }
  return c;
}

}  // namespace tracemill::pipeline::follow
