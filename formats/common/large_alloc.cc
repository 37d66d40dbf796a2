#include "formats/common/large_alloc.h"

#include <sys/mman.h>

#include <cstdlib>

namespace tracemill::formats {

void* AllocateLarge(size_t bytes) {
  if (bytes < kHugePage) {
    void* p = std::malloc(bytes ? bytes : 1);
    if (!p) throw std::bad_alloc();
    return p;
  }
  size_t len = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  ::madvise(p, len, MADV_HUGEPAGE);
  return p;
}

void FreeLarge(void* p, size_t bytes) noexcept {
  if (!p) return;
  if (bytes < kHugePage) {
    std::free(p);
    return;
  }
  size_t len = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  ::munmap(p, len);
}

}  // namespace tracemill::formats
