// SpillFile: bytes read back exactly as appended, with O_DIRECT writes (the
// partial last block padded, then written again) and without, both in one
// file, with and without the writer thread; a discarded region leaves its
// neighbours whole.
#include "merge/spill_file.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testing/direct_io_probe.h"

namespace tracemill::merge {
namespace {

// A byte pattern that differs at every offset modulo 251 (prime, so block
// and buffer boundaries never line up with it).
std::string Pattern(size_t n, uint64_t seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((seed * 31 + i) % 251);
  return s;
}

std::string ReadBack(const SpillFile& f, uint64_t offset, size_t n, bool direct) {
  std::string out(n, '\0');
  auto got = f.ReadAt(offset, out.data(), n, direct);
  EXPECT_TRUE(got.ok()) << got.status();
  out.resize(got.ok() ? *got : 0);
  return out;
}

// Runs of odd lengths (one shorter than a block, one across the ring's
// buffers), each flushed as SortedRun::Spill does; every run reads back
// exactly, also after later runs rewrote the block its end shares. `mode`
// says which runs are written direct: 0 none, 1 all, 2 every other one.
void AppendFlushReadBack(int mode) {
  auto f = SpillFile::Create(::testing::TempDir(), /*direct_ok=*/true);
  ASSERT_TRUE(f.ok()) << f.status();
  SpillFile& file = **f;
  const bool can = tracemill::testing::DirTakesDirectIo(::testing::TempDir());
  EXPECT_FALSE(file.direct());  // through the page cache until told
  const std::vector<size_t> lengths = {1, 4095, 4097, 100, kSpillBufferBytes * kSpillBuffers * 2 + 12345, 7, 300000};
  std::string all;
  std::vector<uint64_t> begins;
  std::vector<bool> direct;
  for (size_t r = 0; r < lengths.size(); ++r) {
    const bool want = mode == 1 || (mode == 2 && r % 2 == 1);
    EXPECT_EQ(file.UseDirect(want), want && can);
    direct.push_back(file.direct());
    begins.push_back(file.end_offset());
    ASSERT_EQ(begins.back(), all.size());
    const std::string bytes = Pattern(lengths[r], r);
    // In pieces of up to 1,000 bytes, as records are appended.
    for (size_t at = 0; at < bytes.size(); at += 1000)
      ASSERT_TRUE(file.Append(std::string_view(bytes).substr(at, 1000)).ok());
    ASSERT_TRUE(file.Flush().ok());
    all += bytes;
    EXPECT_EQ(file.end_offset(), all.size());
    EXPECT_EQ(ReadBack(file, begins.back(), lengths[r], direct[r]), bytes) << "run " << r;
  }
  for (size_t r = 0; r < lengths.size(); ++r)
    EXPECT_EQ(ReadBack(file, begins[r], lengths[r], direct[r]), all.substr(begins[r], lengths[r])) << "run " << r;
  // Unaligned reads anywhere, either way.
  for (bool d : {false, true}) {
    EXPECT_EQ(ReadBack(file, 4093, 20000, d), all.substr(4093, 20000));
    EXPECT_EQ(ReadBack(file, all.size() - 3, 3, d), all.substr(all.size() - 3));
  }

  // Discarding run 2 (it shares a block with runs 1 and 3) keeps those whole.
  file.Discard(begins[2], begins[3]);
  EXPECT_EQ(ReadBack(file, begins[1], lengths[1], direct[1]), all.substr(begins[1], lengths[1]));
  EXPECT_EQ(ReadBack(file, begins[3], lengths[3], direct[3]), all.substr(begins[3], lengths[3]));
  // And a run appended after the discard reads back whole.
  const uint64_t begin = file.end_offset();
  const std::string last = Pattern(5000, 99);
  ASSERT_TRUE(file.Append(last).ok());
  ASSERT_TRUE(file.Flush().ok());
  EXPECT_EQ(ReadBack(file, begin, last.size(), file.direct()), last);
  EXPECT_EQ(ReadBack(file, begins[6], lengths[6], direct[6]), all.substr(begins[6], lengths[6]));
}

TEST(SpillFile, DirectWritesReadBackExactly) { AppendFlushReadBack(1); }

TEST(SpillFile, BufferedWritesReadBackExactly) { AppendFlushReadBack(0); }

TEST(SpillFile, DirectAndBufferedRunsInOneFileReadBackExactly) { AppendFlushReadBack(2); }

// --no-direct-io: UseDirect(true) is refused.
TEST(SpillFile, NoDirectIoStaysBuffered) {
  auto f = SpillFile::Create(::testing::TempDir(), /*direct_ok=*/false);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_FALSE((*f)->UseDirect(true));
  EXPECT_FALSE((*f)->direct());
}

TEST(SpillFile, WithoutAWriterThreadReadBackExactly) {
  formats::SetNoDirectWriterThreadsForTesting(true);
  struct Restore {
    ~Restore() { formats::SetNoDirectWriterThreadsForTesting(false); }
  } restore;
  AppendFlushReadBack(2);
}

// Direct writes put the run's bytes on disk at once, in whole blocks (the
// padded last one included), and a discard gives them back.
TEST(SpillFile, DirectWritesAllocateWhatTheyWrite) {
  if (!tracemill::testing::DirTakesDirectIo(::testing::TempDir())) GTEST_SKIP() << "no O_DIRECT in " << ::testing::TempDir();
  auto f = SpillFile::Create(::testing::TempDir(), true);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_TRUE((*f)->UseDirect(true));
  const std::string bytes = Pattern(3 * kSpillBufferBytes + 10, 5);
  ASSERT_TRUE((*f)->Append(bytes).ok());
  ASSERT_TRUE((*f)->Flush().ok());
  // Whole blocks: the 10 bytes past the last full buffer take one.
  EXPECT_EQ((*f)->AllocatedBytes(), 3 * kSpillBufferBytes + formats::kDirectAlign);
  EXPECT_TRUE((*f)->Discard(0, 3 * kSpillBufferBytes));
  EXPECT_EQ((*f)->AllocatedBytes(), formats::kDirectAlign);
}

TEST(SpillFile, MissingDirectoryIsNamed) {
  auto f = SpillFile::Create("/nonexistent-tracemill-dir", true);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("/nonexistent-tracemill-dir"), std::string::npos) << f.status();
}

}  // namespace
}  // namespace tracemill::merge
