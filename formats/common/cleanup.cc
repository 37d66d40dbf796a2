#include "formats/common/cleanup.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace tracemill::formats {
namespace {

constexpr int kSlots = 1024;
constexpr size_t kPathMax = 4096;

// States and paths live apart so that static initialization touches 4 KiB,
// not the 4 MiB of zero-initialized path storage.
std::atomic<int> g_state[kSlots];  // 0 free, 1 being written, 2 ready
char g_path[kSlots][kPathMax];

void OnInterrupt(int sig) {
  // Only async-signal-safe calls here.
  for (int i = 0; i < kSlots; ++i)
    if (g_state[i].load(std::memory_order_acquire) == 2) ::unlink(g_path[i]);
  _exit(128 + sig);
}

}  // namespace

int RegisterTemporary(const std::string& path) {
  if (path.size() >= kPathMax) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (g_state[i].compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
      std::memcpy(g_path[i], path.c_str(), path.size() + 1);
      g_state[i].store(2, std::memory_order_release);
      return i;
    }
  }
  return -1;
}

void UnregisterTemporary(int slot) {
  if (slot >= 0 && slot < kSlots) g_state[slot].store(0, std::memory_order_release);
}

void InstallInterruptCleanup() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

}  // namespace tracemill::formats
