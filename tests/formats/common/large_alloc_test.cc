// The 2 MiB chunk pool (formats/common/large_alloc.h).
#include "formats/common/large_alloc.h"

#include <gtest/gtest.h>

#include <vector>

#include "formats/common/trace_data.h"

namespace tracemill::formats {
namespace {

// Empties the pool when a test ends, whatever it asserted.
struct PoolLimit {
  explicit PoolLimit(size_t bytes) { SetChunkPoolLimit(bytes); }
  ~PoolLimit() { SetChunkPoolLimit(0); }
};

TEST(ChunkPool, OffByDefaultAChunkIsUnmapped) {
  ASSERT_EQ(ChunkPoolBytes(), 0u);
  void* p = AllocateLarge(kHugePageBytes);
  FreeLarge(p, kHugePageBytes);
  EXPECT_EQ(ChunkPoolBytes(), 0u);
  EXPECT_EQ(TakePooledChunk(), nullptr);
}

TEST(ChunkPool, AFreedChunkIsHandedToTheNextAllocation) {
  PoolLimit limit(2 * kHugePageBytes);
  char* a = static_cast<char*>(AllocateLarge(kHugePageBytes));
  a[0] = 'x';
  a[kHugePageBytes - 1] = 'y';
  FreeLarge(a, kHugePageBytes);
  EXPECT_EQ(ChunkPoolBytes(), kHugePageBytes);
  void* small = AllocateLarge(kHugePageBytes - 100);  // below 2 MiB: operator new, not the pool
  EXPECT_EQ(ChunkPoolBytes(), kHugePageBytes);
  FreeLarge(small, kHugePageBytes - 100);
  char* b = static_cast<char*>(AllocateLarge(kHugePageBytes));
  EXPECT_EQ(b, a);
  EXPECT_EQ(ChunkPoolBytes(), 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % kHugePageBytes, 0u);
  EXPECT_EQ(b[kHugePageBytes - 1], 'y');  // the same memory, not zeroed again
  FreeLarge(b, kHugePageBytes);
}

TEST(ChunkPool, KeepsNoMoreThanItsLimitAndOtherSizesBypassIt) {
  PoolLimit limit(2 * kHugePageBytes);
  std::vector<void*> chunks;
  for (int i = 0; i < 3; ++i) chunks.push_back(AllocateLarge(kHugePageBytes));
  for (void* p : chunks) FreeLarge(p, kHugePageBytes);
  EXPECT_EQ(ChunkPoolBytes(), 2 * kHugePageBytes);  // the third went back to the OS
  void* big = AllocateLarge(2 * kHugePageBytes);  // two chunks' size: its own mapping
  EXPECT_EQ(ChunkPoolBytes(), 2 * kHugePageBytes);
  FreeLarge(big, 2 * kHugePageBytes);
  EXPECT_EQ(ChunkPoolBytes(), 2 * kHugePageBytes);
  SetChunkPoolLimit(kHugePageBytes);  // lowering the limit releases the excess
  EXPECT_EQ(ChunkPoolBytes(), kHugePageBytes);
}

TEST(ChunkPool, AnArenaReleasedIntoThePoolIsReusedByTheNext) {
  PoolLimit limit(64 * kHugePageBytes);
  Arena first;
  for (int i = 0; i < 40; ++i) first.Copy(std::string(100'000, 'a'));  // 4 MB: 64K..1M, then 2 MiB chunks
  const size_t reserved = first.bytes_reserved();
  first.Release();
  const size_t pooled = ChunkPoolBytes();
  EXPECT_GE(pooled, kHugePageBytes);
  Arena second;
  std::string_view v;
  for (int i = 0; i < 40; ++i) v = second.Copy(std::string(100'000, 'b'));
  EXPECT_EQ(second.bytes_reserved(), reserved);
  EXPECT_EQ(v, std::string(100'000, 'b'));
  EXPECT_EQ(ChunkPoolBytes(), 0u);  // every pooled chunk was taken again
}

}  // namespace
}  // namespace tracemill::formats
