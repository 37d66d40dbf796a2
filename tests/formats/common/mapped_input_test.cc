// Mapped inputs (formats/common/mapped_input.h): the bytes, the readable
// padding, and a file truncated while mapped.
#include "formats/common/mapped_input.h"
#include "formats/common/read_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace tracemill::formats {
namespace {

constexpr size_t kSize = (size_t{3} << 20) + 123;  // not a whole page

// A file of kSize bytes, byte i = 'a' + i % 26, removed at the end.
class MappedInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "mapped_input_XXXXXX";
    fd_ = ::mkstemp(path_.data());
    ASSERT_GE(fd_, 0);
    std::string bytes(kSize, '\0');
    for (size_t i = 0; i < kSize; ++i) bytes[i] = static_cast<char>('a' + i % 26);
    ASSERT_EQ(::write(fd_, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
  void TearDown() override {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  std::string path_;
  int fd_ = -1;
};

TEST_F(MappedInputTest, MapsTheBytesWithReadablePaddingAfterThem) {
  MappedInput m;
  ASSERT_TRUE(m.Map(fd_, kSize, 64));
  ASSERT_EQ(m.view().size(), kSize);
  EXPECT_EQ(m.capacity(), kSize + 64);
  EXPECT_EQ(m.view()[0], 'a');
  EXPECT_EQ(m.view()[kSize - 1], static_cast<char>('a' + (kSize - 1) % 26));
  for (size_t i = kSize; i < kSize + 64; ++i) EXPECT_EQ(m.view().data()[i], '\0') << i;
  EXPECT_EQ(m.shrunk_at(), std::nullopt);
  m.Unmap();
  EXPECT_EQ(m.view().size(), 0u);
  m.Unmap();  // idempotent
}

// PresentPages: how many 4 KiB pages of [p, p + n) (p on a page) are mapped
// into this process now (/proc/self/pagemap, bit 63), not merely cached.
size_t PresentPages(const char* p, size_t n) {
  const int fd = ::open("/proc/self/pagemap", O_RDONLY);
  EXPECT_GE(fd, 0);
  size_t present = 0;
  for (size_t off = 0; off < n; off += 4096) {
    uint64_t entry = 0;
    const uintptr_t page = (reinterpret_cast<uintptr_t>(p) + off) / 4096;
    EXPECT_EQ(::pread(fd, &entry, 8, static_cast<off_t>(page * 8)), 8);
    present += entry >> 63;
  }
  ::close(fd);
  return present;
}

// Cached: whether every page of the file is in the page cache (mincore).
bool Cached(int fd, size_t size) {
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  EXPECT_NE(p, MAP_FAILED);
  std::vector<unsigned char> v((size + 4095) / 4096);
  EXPECT_EQ(::mincore(p, size, v.data()), 0);
  ::munmap(p, size);
  for (unsigned char c : v)
    if (!(c & 1)) return false;
  return true;
}

// A file in the page cache (just written) is mapped into the process at
// once, before a byte is read, also with a page missing from the cache; one
// whose second half is not cached is left to fault in.
TEST_F(MappedInputTest, ACachedFileIsMappedInAtOnceAnUncachedOneAsRead) {
  ASSERT_TRUE(Cached(fd_, kSize));
  {
    void* p = ::mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE, fd_, 0);
    ASSERT_NE(p, MAP_FAILED);
    const bool populates = ::madvise(p, 4096, MADV_POPULATE_READ) == 0;
    ::munmap(p, 4096);
    if (!populates) GTEST_SKIP() << "the kernel lacks MADV_POPULATE_READ";
  }
  constexpr size_t kPages = (kSize + 4095) / 4096;
  {
    MappedInput m;
    ASSERT_TRUE(m.Map(fd_, kSize, 64));
    EXPECT_EQ(PresentPages(m.view().data(), kSize), kPages);
  }
  ASSERT_EQ(::fsync(fd_), 0);
  auto drop_from = [&](size_t at) {
    return ::posix_fadvise(fd_, static_cast<off_t>(at / 4096 * 4096), 0, POSIX_FADV_DONTNEED) == 0;
  };
  ASSERT_TRUE(drop_from(kSize - 1));  // its last page
  if (Cached(fd_, kSize)) GTEST_SKIP() << "this file system keeps the page cached";
  {
    MappedInput m;
    ASSERT_TRUE(m.Map(fd_, kSize, 64));
    EXPECT_EQ(PresentPages(m.view().data(), kSize), kPages);
  }
  ASSERT_TRUE(drop_from(kSize / 2));
  MappedInput m;
  ASSERT_TRUE(m.Map(fd_, kSize, 64));
  EXPECT_EQ(PresentPages(m.view().data(), kSize), 0u);
  EXPECT_EQ(m.view()[kSize - 1], static_cast<char>('a' + (kSize - 1) % 26));
}

// A file truncated while mapped: reading on past its new end gives zeros,
// not SIGBUS, and shrunk_at names the first page that vanished.
TEST_F(MappedInputTest, AFileTruncatedWhileMappedReadsAsZerosNotSigbus) {
  MappedInput m;
  ASSERT_TRUE(m.Map(fd_, kSize, 64));
  const size_t new_size = (size_t{1} << 20) + 100;
  ASSERT_EQ(::ftruncate(fd_, static_cast<off_t>(new_size)), 0);
  size_t nonzero = 0;
  for (size_t i = 0; i < kSize + 64; ++i) nonzero += m.view().data()[i] != '\0';
  EXPECT_EQ(nonzero, new_size);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  EXPECT_EQ(m.shrunk_at(), (new_size + page - 1) / page * page);
  // The next mapping of the same slot starts clean.
  m.Unmap();
  ASSERT_TRUE(m.Map(fd_, new_size, 64));
  EXPECT_EQ(m.view()[new_size - 1], static_cast<char>('a' + (new_size - 1) % 26));
  EXPECT_EQ(m.shrunk_at(), std::nullopt);
}

// A SIGBUS outside the mapped inputs still ends the process.
TEST_F(MappedInputTest, ASigbusElsewhereStillKills) {
  MappedInput m;
  ASSERT_TRUE(m.Map(fd_, kSize, 64));  // the handler is installed
  EXPECT_DEATH(
      {
        void* p = ::mmap(nullptr, 8192, PROT_READ, MAP_PRIVATE, fd_, 0);
        if (p == MAP_FAILED) std::abort();
        if (::ftruncate(fd_, 0) != 0) std::abort();
        volatile char c = static_cast<const char*>(p)[4096];
        (void)c;
        std::exit(0);  // not reached
      },
      "");
}

TEST_F(MappedInputTest, SmallFilesAndPipesAreRead) {
  struct stat st;
  ASSERT_EQ(::ftruncate(fd_, static_cast<off_t>(kMinMappedBytes - 1)), 0);
  ASSERT_EQ(::fstat(fd_, &st), 0);
  EXPECT_FALSE(ShouldMapInput(fd_, st));
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ASSERT_EQ(::fstat(pipe_fds[0], &st), 0);
  EXPECT_FALSE(ShouldMapInput(pipe_fds[0], st));
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

// Small files are read into a reused buffer: the padding after a shorter
// file must be zeros, not the longer file's bytes (simdjson re-walks a
// document whose next byte is `}`: byte_buffer.h, ZeroPadding).
TEST_F(MappedInputTest, ReadPaddingAfterAReusedBufferIsZeros) {
  ByteBuffer buf;
  ASSERT_TRUE(ReadWholeFile(path_, 64, &buf).ok());
  ASSERT_EQ(buf.size(), kSize);
  ASSERT_EQ(::ftruncate(fd_, 100), 0);
  ASSERT_TRUE(ReadWholeFile(path_, 64, &buf).ok());
  ASSERT_EQ(buf.size(), 100u);
  ASSERT_GE(buf.capacity(), 100u + 64u);
  EXPECT_EQ(std::string_view(buf.data() + 100, 64), std::string(64, '\0'));
}

}  // namespace
}  // namespace tracemill::formats
