// OutputFile's direct I/O (formats/chrome/output_file.h): the bytes on disk
// and the CRC-32 equal a buffered output's at every buffer and block edge.
#include "formats/chrome/output_file.h"

#include <gtest/gtest.h>
#include <libdeflate.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
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

// Bytes written in place (OpenSpan, CommitSpan: the serial writer formats
// events there) between appends of any size: the same file and CRC, around
// the ring three times. A span never reaches its buffer's end; a buffered or
// gzip file gives none.
TEST(OutputFileDirect, SpansBetweenAppendsGiveTheSameBytes) {
  TempDir tmp;
  const size_t B = kDirectBufferBytes;
  const std::string bytes = Pattern(3 * kDirectBuffers * B + 12345, 7);
  auto f = OutputFile::Create(tmp.Join("spans"), /*gzip=*/false);
  ASSERT_TRUE(f.ok());
  if (!(*f)->EnableDirectIo()) {
    GTEST_SKIP() << "the test directory's file system refuses O_DIRECT";
  }
  ASSERT_TRUE((*f)->spans());
  const std::vector<size_t> appends = {1, 4095, 300, B - 7, 2 * B + 1, 64};
  size_t at = 0, spans = 0;
  for (size_t k = 0; at < bytes.size(); ++k) {
    if (k % 3 != 2) {  // two spans, then an append
      size_t room = 0;
      char* p = (*f)->OpenSpan(&room);
      if (p) {
        ASSERT_GT(room, 0u);
        ASSERT_LT(room, B);
        // Every other span filled to its room, the rest in part.
        const size_t n = std::min({room, bytes.size() - at, k % 2 ? room : size_t{200000} + k});
        std::memcpy(p, bytes.data() + at, n);
        (*f)->CommitSpan(p, n);
        at += n;
        ++spans;
        continue;
      }
    }
    const size_t n = std::min(appends[k % appends.size()], bytes.size() - at);
    ASSERT_TRUE((*f)->Append(std::string_view(bytes).substr(at, n)).ok());
    at += n;
  }
  ASSERT_TRUE((*f)->Commit().ok());
  EXPECT_GT(spans, 10u);
  EXPECT_EQ(ReadFileBytes(tmp.Join("spans")), bytes);
  EXPECT_EQ((*f)->bytes_written(), bytes.size());
  EXPECT_EQ((*f)->crc32(), libdeflate_crc32(0, bytes.data(), bytes.size()));
  auto buffered = OutputFile::Create(tmp.Join("buffered"), /*gzip=*/false);
  auto gzip = OutputFile::Create(tmp.Join("gz"), /*gzip=*/true);
  ASSERT_TRUE(buffered.ok() && gzip.ok());
  size_t room = 0;
  EXPECT_FALSE((*buffered)->spans());
  EXPECT_EQ((*buffered)->OpenSpan(&room), nullptr);
  (*gzip)->EnableDirectIo();
  EXPECT_FALSE((*gzip)->spans());
  EXPECT_EQ((*gzip)->OpenSpan(&room), nullptr);
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


// Spans of `bytes` cut at every buffer and block edge and in between.
std::vector<std::string_view> Spans(const std::string& bytes) {
  const size_t B = kDirectBufferBytes, A = kDirectAlign;
  const std::vector<size_t> sizes = {1, A - 1, A, A + 1, B - 1, B, B + 1, 256 << 10, 3 * B + 17, 77};
  std::vector<std::string_view> spans;
  for (size_t at = 0, k = 0; at < bytes.size(); ++k) {
    const size_t n = std::min(sizes[k % sizes.size()], bytes.size() - at);
    spans.push_back(std::string_view(bytes).substr(at, n));
    at += n;
  }
  return spans;
}

// Reserves every span in order, then copies them on `threads` threads in
// the order `order` gives; commits.
void ReserveThenCopy(OutputFile* f, const std::vector<std::string_view>& spans, const std::vector<size_t>& order,
                     int threads) {
  std::vector<DirectRing::Reservation> reserved;
  for (std::string_view s : spans) {
    auto r = f->ReserveWithCrc(s, libdeflate_crc32(0, s.data(), s.size()));
    ASSERT_TRUE(r.ok());
    ASSERT_NE(r->ring, nullptr);
    reserved.push_back(*r);
  }
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (size_t k; (k = next.fetch_add(1)) < order.size();) EXPECT_EQ(reserved[order[k]].ring->Copy(reserved[order[k]]), 0);
    });
  for (auto& t : pool) t.join();
  ASSERT_TRUE(f->Commit().ok());
}

// The parallel append (merge_write.cc's copy stage): bytes reserved in
// file order and copied by several threads in any order, later spans
// before earlier ones (a copy whose buffer still holds earlier bytes
// copies the earlier spans itself), with and without a writer thread: the
// file and its CRC-32 are those of plain appends.
TEST(OutputFileDirect, ReservedSpansCopiedInAnyOrderGiveTheSameBytes) {
  TempDir tmp;
  const std::string bytes = Pattern((3 * kDirectBuffers + 1) * kDirectBufferBytes + 3 * kDirectAlign + 5, 11);
  const std::vector<std::string_view> spans = Spans(bytes);
  std::vector<size_t> forward(spans.size()), backward, shuffled;
  for (size_t i = 0; i < spans.size(); ++i) forward[i] = i;
  backward.assign(forward.rbegin(), forward.rend());
  shuffled = forward;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(5));
  struct Restore {
    ~Restore() { SetNoDirectWriterThreadsForTesting(false); }
  } restore;
  int k = 0;
  for (bool no_thread : {false, true}) {
    SetNoDirectWriterThreadsForTesting(no_thread);
    for (const auto* order : {&forward, &backward, &shuffled}) {
      for (int threads : {1, 4}) {
        SCOPED_TRACE(::testing::Message() << "case " << k << ", " << threads << " threads");
        const std::string name = "r" + std::to_string(k++);
        auto f = OutputFile::Create(tmp.Join(name), /*gzip=*/false);
        ASSERT_TRUE(f.ok());
        if (!(*f)->EnableDirectIo()) {
          GTEST_SKIP() << "the test directory's file system refuses O_DIRECT";
        }
        ReserveThenCopy(f->get(), spans, *order, threads);
        EXPECT_EQ(ReadFileBytes(tmp.Join(name)), bytes);
        EXPECT_EQ((*f)->bytes_written(), bytes.size());
        EXPECT_EQ((*f)->crc32(), libdeflate_crc32(0, bytes.data(), bytes.size()));
      }
    }
  }
}

// Appends between reservations, and a Seal (an output part's cut) before
// the reservations' copies: Seal copies them, the late copies find nothing
// to do; the bytes are complete and in order.
TEST(OutputFileDirect, SealCopiesWhatIsReservedAndLateCopiesDoNothing) {
  TempDir tmp;
  const std::string bytes = Pattern(2 * kDirectBufferBytes * kDirectBuffers + 999, 13);
  const std::vector<std::string_view> spans = Spans(bytes);
  auto f = OutputFile::Create(tmp.Join("sealed"), /*gzip=*/false);
  ASSERT_TRUE(f.ok());
  if (!(*f)->EnableDirectIo()) GTEST_SKIP() << "the test directory's file system refuses O_DIRECT";
  std::vector<DirectRing::Reservation> reserved;
  for (size_t i = 0; i < spans.size(); ++i) {
    if (i % 3 == 2) {
      ASSERT_TRUE((*f)->Append(spans[i]).ok());  // a serial append: copies the earlier spans first
      continue;
    }
    auto r = (*f)->ReserveWithCrc(spans[i], libdeflate_crc32(0, spans[i].data(), spans[i].size()));
    ASSERT_TRUE(r.ok());
    reserved.push_back(*r);
  }
  ASSERT_TRUE((*f)->Seal().ok());
  for (const auto& r : reserved) EXPECT_EQ(r.ring->Copy(r), 0);
  ASSERT_TRUE((*f)->Commit().ok());
  EXPECT_EQ(ReadFileBytes(tmp.Join("sealed")), bytes);
  EXPECT_EQ((*f)->crc32(), libdeflate_crc32(0, bytes.data(), bytes.size()));
}

// Given up with reservations nobody copied (a failed output): no hang, the
// temporary removed, no final file.
TEST(OutputFileDirect, AbortWithReservationsNotCopiedRemovesTheTemporary) {
  TempDir tmp;
  const std::string bytes = Pattern(3 * kDirectBufferBytes * kDirectBuffers, 17);
  std::string temp;
  {
    auto f = OutputFile::Create(tmp.Join("dropped"), /*gzip=*/false);
    ASSERT_TRUE(f.ok());
    if (!(*f)->EnableDirectIo()) GTEST_SKIP() << "the test directory's file system refuses O_DIRECT";
    temp = (*f)->temp_path();
    const std::vector<std::string_view> spans = Spans(bytes);
    for (size_t i = 0; i < spans.size(); ++i) {
      auto r = (*f)->ReserveWithCrc(spans[i], 0);
      ASSERT_TRUE(r.ok());
      if (i < 3) {
        EXPECT_EQ(r->ring->Copy(*r), 0);
      }
    }
  }
  EXPECT_NE(::access(temp.c_str(), F_OK), 0);
  EXPECT_NE(::access(tmp.Join("dropped").c_str(), F_OK), 0);
}

// Not direct (through the page cache, in memory, gzip): the bytes are
// appended at once and the reservation is none.
TEST(OutputFileDirect, WithoutDirectIoAReservationIsAnAppend) {
  TempDir tmp;
  auto f = OutputFile::Create(tmp.Join("plain"), /*gzip=*/false);
  ASSERT_TRUE(f.ok());
  auto r = (*f)->ReserveWithCrc("abc", libdeflate_crc32(0, "abc", 3));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ring, nullptr);
  ASSERT_TRUE((*f)->Commit().ok());
  EXPECT_EQ(ReadFileBytes(tmp.Join("plain")), "abc");
}

}  // namespace
}  // namespace tracemill::formats
