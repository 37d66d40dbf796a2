#pragma once
// Large buffers on transparent huge pages.
//
// First touch of a fresh 4 KiB page costs a page fault, and on this VM a
// fault is several microseconds: a worker's buffers for one Paddle rank (file
// bytes, decoded events: ~15 MB) cost ~4,000 faults, 16% of `tracemill csp`'s
// CPU time on the 64-rank job (perf; bench/RESULTS.md). Allocations of 2 MiB
// and more are therefore mapped 2 MiB-aligned with MADV_HUGEPAGE (honoured
// when /sys/kernel/mm/transparent_hugepage/enabled is `madvise` or `always`;
// harmless otherwise): one fault per 2 MiB. Smaller ones are mapped on
// plain pages from 256 KiB, and come from operator new below that.
//
// Chunk pool: on this VM first-touching memory runs at 0.16-0.35 GB/s, so the
// rest arenas (2 MiB chunks, ~0.85 x the input) cost more to fault in than
// to decode. Freed blocks (arena chunks, and the larger event and key
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
// TakePooled returns a free block of exactly `len` bytes (a BlockLength()),
// or nullptr if the pool has none.
void* TakePooled(size_t len);
// PoolBlock keeps the block `p` of `len` bytes if the pool has room; false
// if it has not (the caller unmaps it).
bool PoolBlock(void* p, size_t len);
inline void* TakePooledChunk() { return TakePooled(kHugePageBytes); }
inline bool PoolChunk(void* p) { return PoolBlock(p, kHugePageBytes); }

// Blocks from kPooledMinBytes up are mapped by AllocateLarge itself and can
// be pooled: below 2 MiB (an arena's 256 KiB-1 MiB chunks) rounded up to 64
// KiB, on plain pages; from 2 MiB rounded up to 2 MiB, on huge pages. glibc
// would map and unmap the mid-size ones afresh for every input (211 fresh
// mappings, ~500 MiB, for a 64-rank job on 2 threads).
inline constexpr size_t kPooledMinBytes = size_t{256} << 10;

// BlockLength: the length AllocateLarge(n) maps for n >= kPooledMinBytes.
inline size_t BlockLength(size_t n) {
  const size_t unit = n < kHugePageBytes ? size_t{64} << 10 : kHugePageBytes;
  return (n + unit - 1) & ~(unit - 1);
}

// AllocateLarge returns `n` bytes (uninitialized); free with FreeLarge(p, n).
// Throws std::bad_alloc on failure, as operator new.
inline void* AllocateLarge(size_t n) {
  if (n < kPooledMinBytes) return ::operator new(n);
  const size_t len = BlockLength(n);
  if (void* p = TakePooled(len)) return p;
  if (len < kHugePageBytes) {
    void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return p;
  }
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
  if (n < kPooledMinBytes) {
    ::operator delete(p);
    return;
  }
  const size_t len = BlockLength(n);
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
