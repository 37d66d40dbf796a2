#include "formats/common/large_alloc.h"

#include <mutex>
#include <vector>

namespace tracemill::formats {
namespace {

struct ChunkPool {
  std::mutex mu;
  std::vector<void*> free;  // 2 MiB-aligned chunks of kHugePageBytes
  size_t limit = 0;         // bytes
};

ChunkPool& Pool() {
  static ChunkPool* pool = new ChunkPool;  // never destroyed: frees may come late
  return *pool;
}

}  // namespace

void SetChunkPoolLimit(size_t bytes) {
  ChunkPool& pool = Pool();
  std::vector<void*> drop;
  {
    std::lock_guard<std::mutex> lock(pool.mu);
    pool.limit = bytes;
    while (pool.free.size() * kHugePageBytes > bytes) {
      drop.push_back(pool.free.back());
      pool.free.pop_back();
    }
  }
  for (void* p : drop) ::munmap(p, kHugePageBytes);
}

size_t ChunkPoolBytes() {
  ChunkPool& pool = Pool();
  std::lock_guard<std::mutex> lock(pool.mu);
  return pool.free.size() * kHugePageBytes;
}

void* TakePooledChunk() {
  ChunkPool& pool = Pool();
  std::lock_guard<std::mutex> lock(pool.mu);
  if (pool.free.empty()) return nullptr;
  void* p = pool.free.back();
  pool.free.pop_back();
  return p;
}

bool PoolChunk(void* p) {
  ChunkPool& pool = Pool();
  std::lock_guard<std::mutex> lock(pool.mu);
  if ((pool.free.size() + 1) * kHugePageBytes > pool.limit) return false;
  pool.free.push_back(p);
  return true;
}

}  // namespace tracemill::formats
