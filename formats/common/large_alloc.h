#pragma once
// Large allocations backed by transparent huge pages.
//
// On the machines we measured (a VM with THP in `madvise` mode), first-touch
// page faults cost more than parsing: converting 280 MB of Kineto JSON took
// 87k minor faults and 1.0 s of system time against 1.4 s of user time.
// Buffers of 2 MiB and more are therefore mmap'd with MADV_HUGEPAGE (one
// fault per 2 MiB instead of per 4 KiB) and munmap'd when freed, so their
// memory also goes straight back to the OS (peak RSS follows the budget).
#include <cstddef>
#include <new>

namespace tracemill::formats {

inline constexpr size_t kHugePage = size_t{2} << 20;

// AllocateLarge returns `bytes` of uninitialized memory (huge-page backed
// when bytes >= kHugePage). Throws std::bad_alloc on failure.
void* AllocateLarge(size_t bytes);
// FreeLarge releases memory from AllocateLarge; `bytes` must be the size asked.
void FreeLarge(void* p, size_t bytes) noexcept;

// LargeAllocator: std allocator over AllocateLarge, for big vectors (events, keys).
template <class T>
struct LargeAllocator {
  using value_type = T;
  LargeAllocator() = default;
  template <class U>
  LargeAllocator(const LargeAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(AllocateLarge(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { FreeLarge(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const LargeAllocator<U>&) const { return true; }
  template <class U>
  bool operator!=(const LargeAllocator<U>&) const { return false; }
};

}  // namespace tracemill::formats
