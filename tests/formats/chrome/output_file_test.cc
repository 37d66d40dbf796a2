// OutputFile's direct I/O (formats/chrome/output_file.h): the bytes on disk
// and the CRC-32 equal a buffered output's at every buffer and block edge.
#include "formats/chrome/output_file.h"

#include <gtest/gtest.h>
#include <libdeflate.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/testing/convert_harness.h"

namespace tracemill::formats {
namespace {

using ::tracemill::testing::ReadFileBytes;
using ::tracemill::testing::TempDir;

std::string Pattern(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    s[i] = static_cast<char>(seed >> 24);
  }
  return s;
}

// Writes `bytes` in appends of the sizes in `pieces` (cycled) and commits.
void WriteInPieces(OutputFile* f, const std::string& bytes, const std::vector<size_t>& pieces) {
  size_t at = 0;
  for (size_t k = 0; at < bytes.size(); ++k) {
    size_t n = std::min(pieces[k % pieces.size()], bytes.size() - at);
    ASSERT_TRUE(f->Append(std::string_view(bytes).substr(at, n)).ok());
    at += n;
  }
  ASSERT_TRUE(f->Commit().ok());
}

TEST(OutputFileDirect, SameBytesAndCrcAsBufferedAtEveryEdge) {
  TempDir tmp;
  const size_t B = kDirectBufferBytes, A = kDirectAlign;
  // The last size goes round the ring of kDirectBuffers buffers twice.
  const std::vector<size_t> sizes = {1, A - 1, A, A + 1, B - 1, B, B + 1, 2 * B + A, 3 * B + 3 * A + 17,
                                     (2 * kDirectBuffers + 1) * B + A + 5};
  const std::vector<std::vector<size_t>> splits = {{1 << 20}, {1, A - 1, 7, B + 3}, {B}};
  int k = 0;
  for (size_t size : sizes) {
    for (const auto& pieces : splits) {
      SCOPED_TRACE(::testing::Message() << size << " bytes, split " << k);
      const std::string bytes = Pattern(size, static_cast<uint32_t>(size + k));
      auto direct = OutputFile::Create(tmp.Join("d" + std::to_string(k)), /*gzip=*/false);
      auto buffered = OutputFile::Create(tmp.Join("b" + std::to_string(k)), /*gzip=*/false);
      ASSERT_TRUE(direct.ok() && buffered.ok());
      if (!(*direct)->EnableDirectIo()) GTEST_SKIP() << "the test directory's file system refuses O_DIRECT";
      EXPECT_TRUE((*direct)->direct_io());
      WriteInPieces(direct->get(), bytes, pieces);
      WriteInPieces(buffered->get(), bytes, pieces);
      EXPECT_EQ(ReadFileBytes(tmp.Join("d" + std::to_string(k))), bytes);
      EXPECT_EQ((*direct)->bytes_written(), size);
      EXPECT_EQ((*direct)->crc32(), (*buffered)->crc32());
      EXPECT_EQ((*direct)->crc32(), libdeflate_crc32(0, bytes.data(), bytes.size()));
      ++k;
    }
  }
}

// Without a writer thread (ulimit -u) full buffers are written inline: the
// same bytes.
TEST(OutputFileDirect, WithoutAWriterThreadTheBytesAreTheSame) {
  TempDir tmp;
  SetNoDirectWriterThreadsForTesting(true);
  struct Restore {
    ~Restore() { SetNoDirectWriterThreadsForTesting(false); }
  } restore;
  const std::string bytes = Pattern(3 * kDirectBufferBytes + kDirectAlign + 17, 7);
  auto f = OutputFile::Create(tmp.Join("inline"), /*gzip=*/false);
  ASSERT_TRUE(f.ok());
  if (!(*f)->EnableDirectIo()) GTEST_SKIP() << "the test directory's file system refuses O_DIRECT";
  WriteInPieces(f->get(), bytes, {1 << 20, 3});
  EXPECT_EQ(ReadFileBytes(tmp.Join("inline")), bytes);
  EXPECT_EQ((*f)->crc32(), libdeflate_crc32(0, bytes.data(), bytes.size()));
}

// The time appends spent writing full buffers themselves (no writer
// thread) counts as waiting for the disk (--verbose's per-output line); a
// file through the page cache counts none.
TEST(OutputFileDirect, InlineWritesCountAsDiskWait) {
  TempDir tmp;
  SetNoDirectWriterThreadsForTesting(true);
  struct Restore {
    ~Restore() { SetNoDirectWriterThreadsForTesting(false); }
  } restore;
  const std::string bytes = Pattern(2 * kDirectBufferBytes, 9);
  auto f = OutputFile::Create(tmp.Join("waited"), /*gzip=*/false);
  auto buffered = OutputFile::Create(tmp.Join("buffered"), /*gzip=*/false);
  ASSERT_TRUE(f.ok() && buffered.ok());
  if (!(*f)->EnableDirectIo()) GTEST_SKIP() << "the test directory's file system refuses O_DIRECT";
  EXPECT_EQ((*f)->disk_wait_ns(), 0);
  ASSERT_TRUE((*f)->Append(bytes).ok());
  ASSERT_TRUE((*buffered)->Append(bytes).ok());
  EXPECT_GT((*f)->disk_wait_ns(), 0);
  EXPECT_EQ((*buffered)->disk_wait_ns(), 0);
  ASSERT_TRUE((*f)->Commit().ok());
  ASSERT_TRUE((*buffered)->Commit().ok());
}

TEST(OutputFileDirect, NothingWrittenIsAnEmptyFile) {
  TempDir tmp;
  auto f = OutputFile::Create(tmp.Join("empty"), /*gzip=*/false);
  ASSERT_TRUE(f.ok());
  if (!(*f)->EnableDirectIo()) GTEST_SKIP() << "the test directory's file system refuses O_DIRECT";
  ASSERT_TRUE((*f)->Commit().ok());
  EXPECT_EQ(ReadFileBytes(tmp.Join("empty")), "");
}

TEST(OutputFileDirect, NotAfterBytesWereWritten) {
  TempDir tmp;
  auto f = OutputFile::Create(tmp.Join("late"), /*gzip=*/false);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Append("x").ok());
  EXPECT_FALSE((*f)->EnableDirectIo());
  EXPECT_FALSE((*f)->direct_io());
  EXPECT_FALSE(OutputFile::CreateInMemory(false)->EnableDirectIo());
}

// Dropped uncommitted with a buffer in flight: the writer thread ends and
// the temporary is removed; no final file.
TEST(OutputFileDirect, AbortWithAWriteInFlightRemovesTheTemporary) {
  TempDir tmp;
  std::string temp;
  {
    auto f = OutputFile::Create(tmp.Join("gone"), /*gzip=*/false);
    ASSERT_TRUE(f.ok());
    if (!(*f)->EnableDirectIo()) GTEST_SKIP() << "the test directory's file system refuses O_DIRECT";
    temp = (*f)->temp_path();
    ASSERT_TRUE((*f)->Append(Pattern(3 * kDirectBufferBytes + 5, 1)).ok());
  }
  EXPECT_NE(::access(temp.c_str(), F_OK), 0);
  EXPECT_NE(::access(tmp.Join("gone").c_str(), F_OK), 0);
}

}  // namespace
}  // namespace tracemill::formats
