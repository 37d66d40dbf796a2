#include "formats/common/mapped_input.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

namespace tracemill::formats {
namespace {

constexpr int kMappedSlots = 256;
constexpr size_t kMappedNotShrunk = SIZE_MAX;

// A registered mapping: [begin, end) of the file part, and the first offset
// that read as zeros. Lock-free: the SIGBUS handler reads it.
struct MappedSlot {
  std::atomic<uintptr_t> begin{0};  // 0: free
  std::atomic<uintptr_t> end{0};
  std::atomic<size_t> shrunk{kMappedNotShrunk};
};
MappedSlot g_mapped_slots[kMappedSlots];
struct sigaction g_previous_sigbus;

size_t MappedPageSize() {
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

void OnSigbus(int sig, siginfo_t* info, void* context) {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);
  for (MappedSlot& s : g_mapped_slots) {
    const uintptr_t b = s.begin.load(std::memory_order_acquire);
    const uintptr_t e = s.end.load(std::memory_order_acquire);
    if (b == 0 || addr < b || addr >= e) continue;
    // The file ends before this page now: from here on, zero pages. mmap is
    // a plain system call (no lock in glibc), safe here in practice.
    const uintptr_t page = addr & ~(MappedPageSize() - 1);
    int saved = errno;
    void* p = ::mmap(reinterpret_cast<void*>(page), e - page, PROT_READ,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    errno = saved;
    if (p == MAP_FAILED) break;
    size_t off = page > b ? page - b : 0;
    size_t cur = s.shrunk.load(std::memory_order_relaxed);
    while (off < cur && !s.shrunk.compare_exchange_weak(cur, off, std::memory_order_relaxed)) {
    }
    return;  // the faulting read runs again and reads zeros
  }
  // Not ours: the previous handler, or the default action (the fault
  // repeats and the process dies of SIGBUS, as without this handler).
  if (g_previous_sigbus.sa_flags & SA_SIGINFO) {
    if (g_previous_sigbus.sa_sigaction) return g_previous_sigbus.sa_sigaction(sig, info, context);
  } else if (g_previous_sigbus.sa_handler != SIG_DFL && g_previous_sigbus.sa_handler != SIG_IGN) {
    return g_previous_sigbus.sa_handler(sig);
  }
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGBUS, &dfl, nullptr);
  ::raise(sig);  // pending until this handler returns, also when sent by kill(2)
}

void InstallSigbusHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = OnSigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, &g_previous_sigbus);
  });
}

// PopulateIfCached maps the pages of the file mapped at `base` (`size`
// bytes) into the process at once (MADV_POPULATE_READ, one call) if at
// least 7/8 of them are in the page cache: read as they are, they took a
// fault every 16 pages (fault-around), ~10 us each on this project's VMs
// (8.6 k faults for the 537 MiB real16 job). Not only a wholly cached file:
// a few pages of files read and left cached go missing (the real16 inputs,
// each 0.2-2.4 % of its pages, after runs of the job). A file mostly not
// cached is left to fault in as it is read, so that its readahead overlaps
// the decode rather than a read of the whole file coming first. A file
// truncated meanwhile fails the call (EFAULT), not SIGBUS.
void PopulateIfCached(void* base, size_t size) {
  const size_t page = MappedPageSize();
  std::vector<unsigned char> cached((size + page - 1) / page);
  if (::mincore(base, size, cached.data()) != 0) return;
  size_t n = 0;
  for (unsigned char c : cached) n += c & 1;
  if (n * 8 >= cached.size() * 7) ::madvise(base, size, MADV_POPULATE_READ);
}

}  // namespace

bool ShouldMapInput(int fd, const struct stat& st) {
  if (!S_ISREG(st.st_mode) || static_cast<size_t>(st.st_size) < kMinMappedBytes) return false;
  struct statfs fs;
  if (::fstatfs(fd, &fs) != 0) return false;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case 0xEF53:      // ext2/3/4
    case 0x58465342:  // XFS
    case 0x9123683E:  // btrfs
    case 0x01021994:  // tmpfs
    case 0x794C7630:  // overlayfs (containers)
    case 0x2FC12FC1:  // ZFS
    case 0xF2F52010:  // F2FS
      return true;
    default:
      return false;
  }
}

bool MappedInput::Map(int fd, size_t size, size_t padding) {
  Unmap();
  InstallSigbusHandler();
  int slot = -1;
  for (int k = 0; k < kMappedSlots && slot < 0; ++k) {
    uintptr_t expected = 0;
    // Claimed with a marker that no address equals; set for real below.
    if (g_mapped_slots[k].begin.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) slot = k;
  }
  if (slot < 0) {
    errno = EMFILE;
    return false;
  }
  const size_t page = MappedPageSize();
  const size_t length = (size + padding + page - 1) & ~(page - 1);
  // Anonymous zero pages for the whole length, then the file over its start:
  // the padding past the file's last page stays anonymous.
  void* base = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED || ::mmap(base, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) {
    int e = errno;
    if (base != MAP_FAILED) ::munmap(base, length);
    g_mapped_slots[slot].begin.store(0, std::memory_order_release);
    errno = e;
    return false;
  }
  ::madvise(base, size, MADV_SEQUENTIAL);
  PopulateIfCached(base, size);
  const uintptr_t b = reinterpret_cast<uintptr_t>(base);
  g_mapped_slots[slot].shrunk.store(kMappedNotShrunk, std::memory_order_relaxed);
  g_mapped_slots[slot].end.store(b + ((size + page - 1) & ~(page - 1)), std::memory_order_release);
  g_mapped_slots[slot].begin.store(b, std::memory_order_release);
  data_ = static_cast<const char*>(base);
  size_ = size;
  padding_ = padding;
  length_ = length;
  slot_ = slot;
  return true;
}

std::optional<size_t> MappedInput::shrunk_at() const {
  if (slot_ < 0) return std::nullopt;
  size_t s = g_mapped_slots[slot_].shrunk.load(std::memory_order_relaxed);
  if (s == kMappedNotShrunk) return std::nullopt;
  return s < size_ ? s : size_;
}

void MappedInput::Unmap() {
  if (slot_ < 0) return;
  MappedSlot& s = g_mapped_slots[slot_];
  s.end.store(0, std::memory_order_release);
  s.begin.store(0, std::memory_order_release);
  ::munmap(const_cast<char*>(data_), length_);
  data_ = nullptr;
  size_ = padding_ = length_ = 0;
  slot_ = -1;
}

}  // namespace tracemill::formats
