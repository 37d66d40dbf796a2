#include "formats/common/large_alloc.h"

#include <mutex>
#include <utility>
#include <vector>

namespace tracemill::formats {
namespace {

struct ChunkPool {
  std::mutex mu;
  std::vector<std::pair<void*, size_t>> free;  // 2 MiB-aligned blocks and their lengths
  size_t bytes = 0;                            // sum of their lengths
  size_t limit = 0;                            // bytes
};

ChunkPool& Pool() {
  static ChunkPool* pool = new ChunkPool;  // never destroyed: frees may come late
  return *pool;
}

}  // namespace

void SetChunkPoolLimit(size_t bytes) {
  ChunkPool& pool = Pool();
  std::vector<std::pair<void*, size_t>> drop;
  {
    std::lock_guard<std::mutex> lock(pool.mu);
    pool.limit = bytes;
    while (pool.bytes > bytes) {
      drop.push_back(pool.free.back());
      pool.bytes -= pool.free.back().second;
      pool.free.pop_back();
    }
  }
  for (auto [p, len] : drop) ::munmap(p, len);
}

size_t ChunkPoolBytes() {
  ChunkPool& pool = Pool();
  std::lock_guard<std::mutex> lock(pool.mu);
  return pool.bytes;
}

void* TakePooled(size_t len) {
  ChunkPool& pool = Pool();
  std::lock_guard<std::mutex> lock(pool.mu);
  // Newest first: the most recently freed block is the likeliest in cache.
  for (size_t k = pool.free.size(); k-- > 0;) {
    if (pool.free[k].second != len) continue;
    void* p = pool.free[k].first;
    pool.free.erase(pool.free.begin() + static_cast<std::ptrdiff_t>(k));
    pool.bytes -= len;
    return p;
  }
  return nullptr;
}

bool PoolBlock(void* p, size_t len) {
  ChunkPool& pool = Pool();
  std::lock_guard<std::mutex> lock(pool.mu);
  if (pool.bytes + len > pool.limit) return false;
  pool.free.emplace_back(p, len);
  pool.bytes += len;
  return true;
}

}  // namespace tracemill::formats
