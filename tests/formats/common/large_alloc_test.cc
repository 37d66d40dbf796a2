// The block pool (formats/common/large_alloc.h) and ByteBuffer, which
// allocates from it (formats/common/byte_buffer.h).
#include "formats/common/large_alloc.h"

#include <gtest/gtest.h>

#include <vector>

#include "formats/common/byte_buffer.h"
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

TEST(ChunkPool, KeepsNoMoreThanItsLimit) {
  PoolLimit limit(2 * kHugePageBytes);
  std::vector<void*> chunks;
  for (int i = 0; i < 3; ++i) chunks.push_back(AllocateLarge(kHugePageBytes));
  for (void* p : chunks) FreeLarge(p, kHugePageBytes);
  EXPECT_EQ(ChunkPoolBytes(), 2 * kHugePageBytes);  // the third went back to the OS
  SetChunkPoolLimit(kHugePageBytes);                // lowering the limit releases the excess
  EXPECT_EQ(ChunkPoolBytes(), kHugePageBytes);
}

// A run's event vector (several chunks long) goes back to the pool whole;
// a shorter allocation gets its head and leaves the tail pooled, and a
// block of the exact length is taken before a longer one.
TEST(ChunkPool, ALongerBlockIsSplitAndAnExactOneTakenFirst) {
  PoolLimit limit(8 * kHugePageBytes);
  const size_t six = 3 * kHugePageBytes, half = size_t{512} << 10;
  char* a = static_cast<char*>(AllocateLarge(six - 1000));  // rounds up to 6 MiB
  a[kHugePageBytes] = 't';
  a[six - 1] = 'z';
  FreeLarge(a, six - 1000);
  EXPECT_EQ(ChunkPoolBytes(), six);
  const uint64_t fresh = FreshMappedBytes();
  char* b = static_cast<char*>(AllocateLarge(kHugePageBytes));
  EXPECT_EQ(b, a);
  EXPECT_EQ(ChunkPoolBytes(), 2 * kHugePageBytes);
  char* c = static_cast<char*>(AllocateLarge(2 * kHugePageBytes));  // the tail
  EXPECT_EQ(c, a + kHugePageBytes);
  EXPECT_EQ(c[0], 't');
  EXPECT_EQ(c[2 * kHugePageBytes - 1], 'z');  // the same memory, not zeroed again
  EXPECT_EQ(ChunkPoolBytes(), 0u);
  EXPECT_EQ(FreshMappedBytes(), fresh);
  FreeLarge(b, kHugePageBytes);
  FreeLarge(c, 2 * kHugePageBytes);
  EXPECT_EQ(ChunkPoolBytes(), six);
  // 512 KiB: the shortest block that fits is b's 2 MiB, not c's 4 MiB.
  char* d = static_cast<char*>(AllocateLarge(half));
  EXPECT_EQ(d, a);
  EXPECT_EQ(ChunkPoolBytes(), six - half);
  // 1.5 MiB: exactly d's tail, before c's longer block.
  char* e = static_cast<char*>(AllocateLarge(kHugePageBytes - half));
  EXPECT_EQ(e, a + half);
  EXPECT_EQ(ChunkPoolBytes(), 2 * kHugePageBytes);
  EXPECT_EQ(FreshMappedBytes(), fresh);
  FreeLarge(d, half);
  FreeLarge(e, kHugePageBytes - half);
  EXPECT_EQ(ChunkPoolBytes(), six);
}

// An allocation that no pooled block fits maps new memory and first gives
// back as many pooled bytes (the shortest blocks), so that the pool never
// makes the process hold more than it held.
TEST(ChunkPool, AMappingThatNoBlockFitsGivesBackAsManyPooledBytes) {
  PoolLimit limit(64 * kHugePageBytes);
  const size_t half = size_t{512} << 10;
  std::vector<void*> chunks;
  for (int i = 0; i < 4; ++i) chunks.push_back(AllocateLarge(kHugePageBytes));
  void* small = AllocateLarge(half);
  for (void* p : chunks) FreeLarge(p, kHugePageBytes);
  FreeLarge(small, half);
  EXPECT_EQ(ChunkPoolBytes(), 4 * kHugePageBytes + half);
  const uint64_t fresh = FreshMappedBytes();
  // 3 MiB rounds up to 4 MiB; no pooled block is that long: the 512 KiB
  // block and two chunks (4.5 MiB) go back, two chunks stay.
  void* big = AllocateLarge(3 * kHugePageBytes / 2);
  EXPECT_EQ(FreshMappedBytes(), fresh + 2 * kHugePageBytes);
  EXPECT_EQ(ChunkPoolBytes(), 2 * kHugePageBytes);
  // Longer than the whole pool: every pooled block goes back.
  void* bigger = AllocateLarge(4 * kHugePageBytes);
  EXPECT_EQ(FreshMappedBytes(), fresh + 6 * kHugePageBytes);
  EXPECT_EQ(ChunkPoolBytes(), 0u);
  FreeLarge(big, 3 * kHugePageBytes / 2);
  FreeLarge(bigger, 4 * kHugePageBytes);
  EXPECT_EQ(ChunkPoolBytes(), 6 * kHugePageBytes);
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

TEST(ByteBuffer, EraseFrontKeepsTheRestInOrder) {
  ByteBuffer b;
  b.Append("\n,{\"a\":1}");
  b.EraseFront(0);
  EXPECT_EQ(b.view(), "\n,{\"a\":1}");
  b.EraseFront(1);
  EXPECT_EQ(b.view(), ",{\"a\":1}");
  EXPECT_EQ(b.size(), 8u);
  b.EraseFront(8);
  EXPECT_EQ(b.view(), "");
  b.Append("xy");
  EXPECT_EQ(b.view(), "xy");
}

}  // namespace
}  // namespace tracemill::formats
