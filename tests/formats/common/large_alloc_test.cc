// The block pool (formats/common/large_alloc.h).
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
  void* small = AllocateLarge(kPooledMinBytes - 1);  // operator new, not the pool
  EXPECT_EQ(ChunkPoolBytes(), kHugePageBytes);
  FreeLarge(small, kPooledMinBytes - 1);
  EXPECT_EQ(ChunkPoolBytes(), kHugePageBytes);
  char* b = static_cast<char*>(AllocateLarge(kHugePageBytes - 100));  // rounds up to 2 MiB
  EXPECT_EQ(b, a);
  EXPECT_EQ(ChunkPoolBytes(), 0u);
  EXPECT_EQ(b[kHugePageBytes - 1], 'y');  // the same memory, not zeroed again
  FreeLarge(b, kHugePageBytes - 100);
  EXPECT_EQ(ChunkPoolBytes(), kHugePageBytes);
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

// An arena's mid-size chunks (256 KiB-1 MiB) are pooled too, by their
// 64 KiB-rounded length: a 512 KiB chunk is handed to the next 512 KiB
// allocation (the same memory, written before), not to a 1 MiB one.
TEST(ChunkPool, MidSizeBlocksArePooledByTheirLength) {
  PoolLimit limit(2 * kHugePageBytes);
  const size_t half = size_t{512} << 10;
  EXPECT_EQ(BlockLength(half - 1000), half);
  EXPECT_EQ(BlockLength(kPooledMinBytes + 1), kPooledMinBytes + (size_t{64} << 10));
  char* a = static_cast<char*>(AllocateLarge(half - 1000));
  a[half - 1] = 'm';
  FreeLarge(a, half - 1000);
  EXPECT_EQ(ChunkPoolBytes(), half);
  void* mib = AllocateLarge(2 * half);  // another length: a fresh mapping
  EXPECT_NE(mib, static_cast<void*>(a));
  EXPECT_EQ(ChunkPoolBytes(), half);
  char* b = static_cast<char*>(AllocateLarge(half));
  EXPECT_EQ(b, a);
  EXPECT_EQ(b[half - 1], 'm');
  EXPECT_EQ(ChunkPoolBytes(), 0u);
  FreeLarge(b, half);
  FreeLarge(mib, 2 * half);
  EXPECT_EQ(ChunkPoolBytes(), 3 * half);
}

// A run's event vector (several chunks long) goes back to the pool whole and
// is handed to the next allocation of the same length, not of another.
TEST(ChunkPool, LargerBlocksAreReusedByTheSameLengthOnly) {
  PoolLimit limit(8 * kHugePageBytes);
  const size_t six = 3 * kHugePageBytes;
  char* a = static_cast<char*>(AllocateLarge(six - 1000));  // rounds up to 6 MiB
  a[six - 1] = 'z';
  FreeLarge(a, six - 1000);
  EXPECT_EQ(ChunkPoolBytes(), six);
  void* four = AllocateLarge(2 * kHugePageBytes);  // another length: a fresh mapping
  EXPECT_NE(four, static_cast<void*>(a));
  EXPECT_EQ(ChunkPoolBytes(), six);
  char* b = static_cast<char*>(AllocateLarge(six));
  EXPECT_EQ(b, a);
  EXPECT_EQ(b[six - 1], 'z');
  EXPECT_EQ(ChunkPoolBytes(), 0u);
  FreeLarge(b, six);
  FreeLarge(four, 2 * kHugePageBytes);
  EXPECT_EQ(ChunkPoolBytes(), six + 2 * kHugePageBytes);
  void* over = AllocateLarge(2 * kHugePageBytes);  // takes the 4 MiB block back
  EXPECT_EQ(ChunkPoolBytes(), six);
  void* big = AllocateLarge(4 * kHugePageBytes);
  FreeLarge(big, 4 * kHugePageBytes);  // 6 + 8 MiB: within the 16 MiB limit
  EXPECT_EQ(ChunkPoolBytes(), six + 4 * kHugePageBytes);
  void* fresh = AllocateLarge(2 * kHugePageBytes);  // no 4 MiB block left: a new mapping
  FreeLarge(over, 2 * kHugePageBytes);              // 14 + 4 MiB > 16 MiB: unmapped
  EXPECT_EQ(ChunkPoolBytes(), six + 4 * kHugePageBytes);
  FreeLarge(fresh, 2 * kHugePageBytes);
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
