#include "formats/common/cleanup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace tracemill::formats {
namespace {

constexpr int kSlots = 1024;
constexpr size_t kPathMax = 4096;

// States and paths live apart so that static initialization touches 4 KiB,
// not the 4 MiB of zero-initialized path storage.
std::atomic<int> g_state[kSlots];  // 0 free, 1 being written, 2 ready
char g_path[kSlots][kPathMax];
std::atomic<bool> g_exiting{false};
std::atomic<int> g_creating{0};  // DeferInterrupts sections in flight
std::atomic<bool> g_finish_first{false};
std::atomic<int> g_pending{0};   // finish-first: the signal recorded

// Temporary directories (windows being written): emptied and removed.
constexpr int kDirSlots = 16;
std::atomic<int> g_dir_state[kDirSlots];  // 0 free, 1 being written, 2 ready
char g_dir_path[kDirSlots][kPathMax];

// RemoveDirectoryInHandler: unlink every entry of `dir` (one level), then
// the directory; only system calls (async-signal-safe).
void RemoveDirectoryInHandler(const char* dir) {
  const int fd = ::open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  alignas(8) char buf[4096];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, fd, buf, sizeof(buf));
    if (n <= 0) break;
    for (long at = 0; at < n;) {
      // struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name.
      unsigned short reclen;
      std::memcpy(&reclen, buf + at + 16, sizeof(reclen));
      const char* name = buf + at + 19;
      if (!(name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0)))) ::unlinkat(fd, name, 0);
      at += reclen;
    }
  }
  ::close(fd);
  ::rmdir(dir);
}


void OnInterrupt(int sig) {
  // Finish first: record the first signal and return; the job polls it.
  if (g_finish_first.load()) {
    int none = 0;
    if (g_pending.compare_exchange_strong(none, sig)) {
      static constexpr char kFinish[] =
          "tracemill: interrupted: finishing the window in progress (send the signal again to stop at once)\n";
      [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, kFinish, sizeof(kFinish) - 1);
      return;
    }
  }
  // Only async-signal-safe calls here. No new creation starts once g_exiting
  // is set; wait (at most ~200 ms: the interrupted thread may be one of them)
  // for those in flight, whose paths are already recorded.
  g_exiting.store(true);
  for (int k = 0; k < 200 && g_creating.load() != 0; ++k) {
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, nullptr);
  }
  for (int i = 0; i < kSlots; ++i)
    if (g_state[i].load(std::memory_order_acquire) == 2) ::unlink(g_path[i]);
  for (int i = 0; i < kDirSlots; ++i)
    if (g_dir_state[i].load(std::memory_order_acquire) == 2) RemoveDirectoryInHandler(g_dir_path[i]);
  // Say so (write(2) is async-signal-safe): the outputs already renamed into
  // place are whole, and --resume keeps them.
  static constexpr char kInt[] = "tracemill: interrupted (SIGINT): no partial output left; ";
  static constexpr char kTerm[] = "tracemill: interrupted (SIGTERM): no partial output left; ";
  static constexpr char kKeep[] = "rerun the same command with --resume to keep the outputs already written\n";
  const char* msg = sig == SIGINT ? kInt : kTerm;
  const size_t len = sig == SIGINT ? sizeof(kInt) - 1 : sizeof(kTerm) - 1;
  [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, msg, len);
  n = ::write(STDERR_FILENO, kKeep, sizeof(kKeep) - 1);
  _exit(128 + sig);
}

// RegisterIn records `path` in a table of `slots` (states and paths) for
// removal on interrupt; returns a slot, or -1 if the table is full.
int RegisterIn(std::atomic<int>* state, char (*paths)[kPathMax], int slots, const std::string& path) {
  if (path.size() >= kPathMax) return -1;
  for (int i = 0; i < slots; ++i) {
    int expected = 0;
    if (state[i].compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
      std::memcpy(paths[i], path.c_str(), path.size() + 1);
      state[i].store(2, std::memory_order_release);
      return i;
    }
  }
  return -1;
}

// RegisterTemporary records an output temporary (see RegisterIn).
int RegisterTemporary(const std::string& path) { return RegisterIn(g_state, g_path, kSlots, path); }

}  // namespace


DeferInterrupts::DeferInterrupts() {
  g_creating.fetch_add(1);
  if (g_exiting.load()) {
    g_creating.fetch_sub(1);
    for (;;) pause();  // the handler is removing temporaries and will _exit
  }
}

DeferInterrupts::~DeferInterrupts() { g_creating.fetch_sub(1); }

int OpenTemporary(const std::string& path, int* slot) {
  DeferInterrupts defer;
  *slot = RegisterTemporary(path);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int e = errno;
  if (fd < 0) {
    UnregisterTemporary(*slot);
    *slot = -1;
  }
  errno = e;
  return fd;
}

void UnregisterTemporary(int slot) {
  if (slot >= 0 && slot < kSlots) g_state[slot].store(0, std::memory_order_release);
}

void SetFinishOnInterrupt(bool on) { g_finish_first.store(on); }

int PendingInterrupt() { return g_pending.load(); }

int RegisterTemporaryDirectory(const std::string& path) { return RegisterIn(g_dir_state, g_dir_path, kDirSlots, path); }

void UnregisterTemporaryDirectory(int slot) {
  if (slot >= 0 && slot < kDirSlots) g_dir_state[slot].store(0, std::memory_order_release);
}

void InstallInterruptCleanup() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // A file past RLIMIT_FSIZE (`ulimit -f`) fails its write with EFBIG,
  // reported as that output's error, instead of SIGXFSZ killing the process
  // with its temporaries left behind.
  sa.sa_handler = SIG_IGN;
  sigaction(SIGXFSZ, &sa, nullptr);
}

}  // namespace tracemill::formats
