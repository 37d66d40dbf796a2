#include "formats/common/large_alloc.h"

#include <atomic>
#include <iterator>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)  // GCC
#define TRACEMILL_ASAN 1
#elif defined(__has_feature)  // Clang
#if __has_feature(address_sanitizer)
#define TRACEMILL_ASAN 1
#endif
#endif
#if defined(TRACEMILL_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace tracemill::formats {
namespace {

// Unpoison: under ASan, a block's bytes made addressable again. A container
// may poison parts of its block (Abseil's hash tables poison their empty
// slots) and hand it back so: the next user of the block, pooled or mapped
// afresh at the same addresses (ASan keeps the shadow of unmapped memory),
// is another container.
void Unpoison([[maybe_unused]] void* p, [[maybe_unused]] size_t len) {
#if defined(TRACEMILL_ASAN)
  ASAN_UNPOISON_MEMORY_REGION(p, len);
#endif
}

struct ChunkPool {
  std::mutex mu;
  // Free blocks by length; among equal lengths, the most recently pooled
  // last (multimap keeps insertion order within a key).
  std::multimap<size_t, void*> free;
  size_t bytes = 0;  // sum of their lengths
  size_t limit = 0;  // bytes
};

ChunkPool& Pool() {
  static ChunkPool* pool = new ChunkPool;  // never destroyed: frees may come late
  return *pool;
}

std::atomic<uint64_t> g_fresh_bytes{0};

}  // namespace

void SetChunkPoolLimit(size_t bytes) {
  ChunkPool& pool = Pool();
  std::vector<std::pair<void*, size_t>> drop;
  {
    std::lock_guard<std::mutex> lock(pool.mu);
    pool.limit = bytes;
    while (pool.bytes > bytes) {  // the shortest first
      auto it = pool.free.begin();
      drop.emplace_back(it->second, it->first);
      pool.bytes -= it->first;
      pool.free.erase(it);
    }
  }
  for (auto [p, len] : drop) ::munmap(p, len);
}

size_t ChunkPoolBytes() {
  ChunkPool& pool = Pool();
  std::lock_guard<std::mutex> lock(pool.mu);
  return pool.bytes;
}

uint64_t FreshMappedBytes() { return g_fresh_bytes.load(std::memory_order_relaxed); }

void* TakePooled(size_t len) {
  ChunkPool& pool = Pool();
  std::lock_guard<std::mutex> lock(pool.mu);
  auto fit = pool.free.lower_bound(len);
  if (fit == pool.free.end()) return nullptr;
  // The most recently pooled block of the length that fits: the likeliest
  // in cache.
  const size_t block = fit->first;
  auto it = std::prev(pool.free.upper_bound(block));
  char* p = static_cast<char*>(it->second);
  pool.free.erase(it);
  pool.bytes -= block;
  if (block > len) {  // both parts are whole pages (lengths are 64 KiB multiples)
    pool.free.emplace(block - len, p + len);
    pool.bytes += block - len;
  }
  Unpoison(p, len);
  return p;
}

bool PoolBlock(void* p, size_t len) {
  ChunkPool& pool = Pool();
  std::lock_guard<std::mutex> lock(pool.mu);
  if (pool.bytes + len > pool.limit) return false;
  pool.free.emplace(len, p);
  pool.bytes += len;
  return true;
}

bool Prefault(void* p, size_t n) {
  if (n == 0) return true;
  constexpr uintptr_t kPage = 4096;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p) & ~(kPage - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n + kPage - 1) & ~(kPage - 1);
  return ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE) == 0;
}

void* MapFresh(size_t len) {
  ChunkPool& pool = Pool();
  std::vector<std::pair<void*, size_t>> drop;
  {
    std::lock_guard<std::mutex> lock(pool.mu);
    size_t given = 0;
    while (given < len && !pool.free.empty()) {
      auto it = pool.free.begin();
      drop.emplace_back(it->second, it->first);
      given += it->first;
      pool.bytes -= it->first;
      pool.free.erase(it);
    }
  }
  for (auto [q, l] : drop) ::munmap(q, l);
  void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  g_fresh_bytes.fetch_add(len, std::memory_order_relaxed);
  Unpoison(p, len);  // the addresses of an unmapped block may come back
  return p;
}

}  // namespace tracemill::formats
