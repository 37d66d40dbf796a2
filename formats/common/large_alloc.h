#pragma once
// Large buffers on transparent huge pages.
//
// First touch of a fresh 4 KiB page costs a page fault, and on this VM a
// fault is several microseconds: a worker's buffers for one Paddle rank (file
// bytes, decoded events: ~15 MB) cost ~4,000 faults, 16% of `tracemill csp`'s
// CPU time on the 64-rank job (perf; bench/RESULTS.md). Allocations of 2 MiB
// and more are therefore mapped 2 MiB-aligned with MADV_HUGEPAGE (honoured
// when /sys/kernel/mm/transparent_hugepage/enabled is `madvise` or `always`;
// harmless otherwise): one fault per 2 MiB. Smaller ones use operator new.
//
// Chunk pool: on this VM first-touching memory runs at 0.16-0.35 GB/s, so the
// rest arenas (2 MiB chunks, ~0.85 x the input) cost more to fault in than
// to decode. Freed blocks (2 MiB arena chunks, and the larger event and key
// vectors of a run) can therefore be kept, up to a limit the caller sets
// (`SetChunkPoolLimit`; 0, the default, keeps none), and handed to the next
// allocation of the same length (rank files of one job are of similar size,
// so their vectors round to the same multiple of 2 MiB): a convert job whose
// outputs are written while later inputs decode touches its memory once.
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>

namespace tracemill::formats {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;
inline constexpr size_t kHugePage = kHugePageBytes;

// SetChunkPoolLimit sets the most bytes of free blocks kept for reuse (0
// releases the pooled ones and keeps none). Thread-safe.
void SetChunkPoolLimit(size_t bytes);
// ChunkPoolBytes: bytes of free blocks in the pool now.
size_t ChunkPoolBytes();
// TakePooled returns a free block of exactly `len` bytes (a multiple of
// kHugePageBytes), or nullptr if the pool has none.
void* TakePooled(size_t len);
// PoolBlock keeps the block `p` of `len` bytes if the pool has room; false
// if it has not (the caller unmaps it).
bool PoolBlock(void* p, size_t len);
inline void* TakePooledChunk() { return TakePooled(kHugePageBytes); }
inline bool PoolChunk(void* p) { return PoolBlock(p, kHugePageBytes); }

// AllocateLarge returns `n` bytes (uninitialized); free with FreeLarge(p, n).
// Throws std::bad_alloc on failure, as operator new.
inline void* AllocateLarge(size_t n) {
  if (n < kHugePageBytes) return ::operator new(n);
  const size_t len = (n + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  if (void* p = TakePooled(len)) return p;
  void* raw = ::mmap(nullptr, len + kHugePageBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  if (aligned > start) ::munmap(raw, aligned - start);
  const uintptr_t tail = aligned + len, map_end = start + len + kHugePageBytes;
  if (map_end > tail) ::munmap(reinterpret_cast<void*>(tail), map_end - tail);
  ::madvise(reinterpret_cast<void*>(aligned), len, MADV_HUGEPAGE);
  return reinterpret_cast<void*>(aligned);
}

// FreeLarge releases what AllocateLarge(n) returned.
inline void FreeLarge(void* p, size_t n) noexcept {
  if (!p) return;
  if (n < kHugePageBytes) {
    ::operator delete(p);
    return;
  }
  const size_t len = (n + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  if (PoolBlock(p, len)) return;
  ::munmap(p, len);
}

// LargeAllocator: an STL allocator over AllocateLarge, for vectors that grow
// to megabytes and are reused (decoded Paddle events).
template <typename T>
struct LargeAllocator {
  using value_type = T;
  LargeAllocator() = default;
  template <typename U>
  LargeAllocator(const LargeAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(AllocateLarge(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { FreeLarge(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const LargeAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const LargeAllocator<U>&) const { return false; }
};

}  // namespace tracemill::formats
