// The block pool (formats/common/large_alloc.h) and ByteBuffer, which
// allocates from it (formats/common/byte_buffer.h).
#include "formats/common/large_alloc.h"

#include <sys/mman.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "formats/common/byte_buffer.h"
#include "formats/common/direct_io.h"
#include "formats/common/trace_data.h"
#include "merge/sorted_run.h"

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

constexpr size_t kPage = 4096;

// Resident: for each 4 KiB page of [p, p + n) (p on a page), whether it is
// in memory (mincore).
std::vector<bool> Resident(const void* p, size_t n) {
  std::vector<unsigned char> v((n + kPage - 1) / kPage);
  EXPECT_EQ(::mincore(const_cast<void*>(p), n, v.data()), 0);
  return std::vector<bool>(v.begin(), v.end());
}

// The pages of [from, to) of a block at `p`: which are resident.
size_t ResidentCount(const void* p, size_t from, size_t to) {
  const std::vector<bool> r = Resident(p, to);
  size_t n = 0;
  for (size_t k = from / kPage; k < to / kPage; ++k) n += r[k];
  return n;
}

// Whether this kernel makes pages at once (MADV_POPULATE_WRITE, Linux 5.14).
bool KernelPopulates() {
  void* p = ::mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  const bool ok = p != MAP_FAILED && ::madvise(p, kPage, MADV_POPULATE_WRITE) == 0;
  if (p != MAP_FAILED) ::munmap(p, kPage);
  return ok;
}

TEST(Prefault, MakesTheWholePagesItTouchesResidentAndKeepsTheirBytes) {
  if (!KernelPopulates()) GTEST_SKIP() << "the kernel lacks MADV_POPULATE_WRITE";
  constexpr size_t kLen = size_t{1} << 20;
  char* p = static_cast<char*>(AllocateLarge(kLen));  // the pool is off: mapped afresh
  ASSERT_EQ(ResidentCount(p, 0, kLen), 0u);
  EXPECT_TRUE(Prefault(p + 5000, 3 * kPage));
  // Bytes 5000..17287: pages 1 to 4.
  const std::vector<bool> r = Resident(p, kLen);
  EXPECT_FALSE(r[0]);
  for (size_t k = 1; k <= 4; ++k) EXPECT_TRUE(r[k]) << k;
  EXPECT_EQ(ResidentCount(p, 5 * kPage, kLen), 0u);
  p[4 * kPage + 7] = 'x';
  p[kLen - 1] = 'y';
  EXPECT_TRUE(Prefault(p, kLen));
  EXPECT_EQ(ResidentCount(p, 0, kLen), kLen / kPage);
  EXPECT_EQ(p[4 * kPage + 7], 'x');
  EXPECT_EQ(p[kLen - 1], 'y');
  EXPECT_EQ(p[0], 0);
  FreeLarge(p, kLen);
}

TEST(Prefault, AnArenaChunkIsResidentBeforeItIsWritten) {
  if (!KernelPopulates()) GTEST_SKIP() << "the kernel lacks MADV_POPULATE_WRITE";
  Arena arena;
  arena.Copy("first");  // a 64 KiB chunk from operator new: left alone
  constexpr size_t kWant = size_t{300} << 10;
  char* p = arena.Reserve(kWant);  // a chunk of its own, mapped afresh
  ASSERT_EQ(reinterpret_cast<uintptr_t>(p) % kPage, 0u);
  EXPECT_EQ(ResidentCount(p, 0, kWant), kWant / kPage);
}

TEST(Prefault, TheEventsVectorIsMadeResidentAWindowAhead) {
  if (!KernelPopulates()) GTEST_SKIP() << "the kernel lacks MADV_POPULATE_WRITE";
  TraceBuilder b;
  constexpr size_t kEvents = (size_t{4} << 20) / sizeof(Event);  // a 4 MiB block
  b.ReserveEvents(kEvents);
  const Event* data = b.events().data();
  ASSERT_EQ(reinterpret_cast<uintptr_t>(data) % kPage, 0u);
  ASSERT_EQ(ResidentCount(data, 0, kEvents * sizeof(Event)), 0u);
  Event e{};
  b.AddEvent(e);
  // Its first 256 KiB, not beyond.
  constexpr size_t kWindow = size_t{256} << 10;
  const size_t window = kWindow / sizeof(Event) * sizeof(Event);
  EXPECT_EQ(ResidentCount(data, 0, window / kPage * kPage), window / kPage);
  EXPECT_EQ(ResidentCount(data, window + kPage, kEvents * sizeof(Event)), 0u);
  // The next window once the first is filled.
  while (b.event_count() < kWindow / sizeof(Event) + 1) b.AddEvent(e);
  EXPECT_EQ(ResidentCount(data, 0, 2 * window / kPage * kPage), 2 * window / kPage);
  EXPECT_EQ(ResidentCount(data, 2 * window + kPage, kEvents * sizeof(Event)), 0u);
  EXPECT_EQ(b.events().data(), data);  // the same vector, never regrown
}

TEST(Prefault, AKeyVectorIsResidentWhenAllocated) {
  if (!KernelPopulates()) GTEST_SKIP() << "the kernel lacks MADV_POPULATE_WRITE";
  merge::SortKeyVector keys;
  keys.resize((size_t{1} << 20) / sizeof(merge::SortKey));  // uninitialized: nothing written
  EXPECT_EQ(ResidentCount(keys.data(), 0, keys.size() * sizeof(merge::SortKey) / kPage * kPage),
            keys.size() * sizeof(merge::SortKey) / kPage);
}

// FaultCounter: the page faults this thread takes from here on, as the CPU
// raises them (perf_event_open, PERF_COUNT_SW_PAGE_FAULTS, user mode).
// getrusage's minor faults would also count the pages that Prefault makes
// (the kernel faults them in itself). ok() is false where perf events are
// not allowed.
class FaultCounter {
 public:
  FaultCounter() {
    perf_event_attr a{};
    a.type = PERF_TYPE_SOFTWARE;
    a.size = sizeof(a);
    a.config = PERF_COUNT_SW_PAGE_FAULTS;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    fd_ = static_cast<int>(::syscall(SYS_perf_event_open, &a, 0, -1, -1, 0));
  }
  ~FaultCounter() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool ok() const { return fd_ >= 0; }
  long count() const {
    long n = 0;
    EXPECT_EQ(::read(fd_, &n, sizeof(n)), static_cast<ssize_t>(sizeof(n)));
    return n;
  }

 private:
  int fd_ = -1;
};

TEST(Prefault, AnOutputRingIsResidentWhenCreated) {
  if (!KernelPopulates()) GTEST_SKIP() << "the kernel lacks MADV_POPULATE_WRITE";
  std::string path = ::testing::TempDir() + "ring_XXXXXX";
  const int fd = ::mkstemp(path.data());
  ASSERT_GE(fd, 0);
  constexpr size_t kBuffer = size_t{256} << 10;
  const std::string bytes(4 * kBuffer - 1, 'r');  // its pages touched before
  std::unique_ptr<DirectRing> ring = DirectRing::Create(fd, 4, kBuffer, 0);
  ASSERT_NE(ring, nullptr);
  // Staging 1 MiB into the ring's 256 pages faults in none of them (one
  // each if they were not there; under ASan its shadow pages fault, ~70).
  FaultCounter faults;
  if (!faults.ok()) GTEST_SKIP() << "perf events not allowed";
  EXPECT_EQ(ring->Stage(bytes.data(), bytes.size()), 0);
  EXPECT_LT(faults.count(), 128);
  EXPECT_EQ(ring->Drain(), 0);
  ring->Close();
  ::close(fd);
  ::unlink(path.c_str());
}

TEST(Prefault, AnInternMapGrowsWithoutAFaultAPage) {
  if (!KernelPopulates()) GTEST_SKIP() << "the kernel lacks MADV_POPULATE_WRITE";
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "ASan's shadow and allocator fault on their own (640-1,510 in CI runs)";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "ASan's shadow and allocator fault on their own (640-1,510 in CI runs)";
#endif
#endif
  // 200 k distinct ids: the map grows through 2^18 slots (6+ MiB, ~1,600
  // pages, one fault each if not made present).
  std::vector<std::string> ids;
  for (int i = 0; i < 200'000; ++i) ids.push_back(std::to_string(1'000'000 + i));
  TraceBuilder b;
  FaultCounter faults;
  if (!faults.ok()) GTEST_SKIP() << "perf events not allowed";
  for (const std::string& id : ids) b.InternId(id);
  // Its tables below kPooledMinBytes (from malloc) fault: ~60 pages; under
  // ASan the shadow of every table too (~640 in all). Without the prefault
  // ~3,000 (every page of the tables, ~13 MB as they grow).
  EXPECT_LT(faults.count(), 2000);
  EXPECT_EQ(b.InternId(ids[123]), 124u);
  EXPECT_EQ(b.InternId("999"), 200'001u);
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
