#pragma once
// Large buffers, mapped directly and kept for reuse.
//
// Allocations from kPooledMinBytes (256 KiB) up are mmap'd on plain 4 KiB
// pages; smaller ones come from operator new. They used to be mapped 2 MiB-
// aligned with MADV_HUGEPAGE (one fault per 2 MiB), but on this project's
// VMs (free page reporting of 8 MiB blocks to the host,
// page_reporting.page_reporting_order=11) a huge page taken from memory the
// host has reclaimed costs ~20x what 4 KiB pages cost: first-touching 512 MiB
// ran at 0.09-0.10 GB/s on huge pages against 2.2 GB/s on 4 KiB pages, five
// runs each, 3 s apart (2026-12-01); a real16 convert job spent 0.7-1.5 s of
// system time on it (bench/RESULTS.md, session 8). On 4 KiB pages the same
// job's system time is ~0.2 s. Blocks about to be filled (arena chunks,
// key vectors, intern tables, output rings, the events vector a window
// ahead) are made present in one call each (Prefault), not one page fault a
// page.
//
// Chunk pool: on this VM first-touching memory runs at 0.16-0.35 GB/s, so the
// rest arenas (2 MiB chunks, ~0.85 x the input) cost more to fault in than
// to decode. Freed blocks (arena chunks, and the larger event and key
// vectors of a run) are therefore kept, up to a limit the caller sets
// (`SetChunkPoolLimit`; 0, the default, keeps none), and handed to the next
// allocation that fits: a block of the same length, else the shortest longer
// one, split (its tail stays pooled). An allocation that no pooled block fits
// first gives back as many pooled bytes as it maps (the shortest blocks), so
// the pool never makes the process hold more than it held before: what it
// keeps is memory that was in use a moment ago. A convert job whose outputs
// are written while later inputs decode touches its memory once: the
// 512-rank job mapped 6.4 GB afresh with the pool at half the runs budget
// and exact lengths only, 2.3 GB (its peak RSS: 1.9 GB) with this
// (bench/RESULTS.md, session 22).
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
// FreshMappedBytes: bytes AllocateLarge has mapped afresh (not from the
// pool) since the process started: memory first touched, not reused.
uint64_t FreshMappedBytes();
// TakePooled returns `len` bytes (a BlockLength()) of a pooled block: one of
// exactly that length (the most recently pooled), else the head of the
// shortest longer one, whose tail stays pooled; nullptr if no block is that
// long.
void* TakePooled(size_t len);
// PoolBlock keeps the block `p` of `len` bytes if the pool has room; false
// if it has not (the caller unmaps it).
bool PoolBlock(void* p, size_t len);
// MapFresh maps `len` new bytes, first unmapping pooled blocks (the
// shortest first) of at least `len` bytes in all, or every pooled one.
// Throws std::bad_alloc on failure.
void* MapFresh(size_t len);
inline void* TakePooledChunk() { return TakePooled(kHugePageBytes); }
inline bool PoolChunk(void* p) { return PoolBlock(p, kHugePageBytes); }

// Blocks from kPooledMinBytes up are mapped by AllocateLarge itself and can
// be pooled: below 2 MiB (an arena's 256 KiB-1 MiB chunks) rounded up to 64
// KiB; from 2 MiB rounded up to 2 MiB (so that similar lengths match). glibc
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
  return MapFresh(len);
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

// Prefault makes the pages that [p, p + n) touches present and writable at
// once, for memory about to be filled (MADV_POPULATE_WRITE): one call where
// first touching them took one page fault each, ~10 us a 4 KiB page on this
// project's VMs (a real16 convert job at 2 threads: 62 k faults, 0.45-0.61 s
// of its 1.1-1.3 s of CPU time in the kernel). [p, p + n) must lie inside
// one mapped block (AllocateLarge of kPooledMinBytes or more: whole pages).
// Best effort: false where the kernel could not (it lacks it before Linux
// 5.14): the pages then fault in as they are touched.
bool Prefault(void* p, size_t n);

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

// PrefaultAllocator: LargeAllocator for containers that fill a block as
// soon as they take it (sized vectors, hash tables rehashed into it): a
// block from kPooledMinBytes up is made present at once (Prefault).
template <typename T>
struct PrefaultAllocator : LargeAllocator<T> {
  PrefaultAllocator() = default;
  template <typename U>
  PrefaultAllocator(const PrefaultAllocator<U>&) {}
  T* allocate(size_t n) {
    T* p = LargeAllocator<T>::allocate(n);
    if (n * sizeof(T) >= kPooledMinBytes) Prefault(p, n * sizeof(T));
    return p;
  }
};

}  // namespace tracemill::formats
