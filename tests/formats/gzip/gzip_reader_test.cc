// formats/gzip/gzip_reader: the libdeflate member loop and the zlib salvage of
// damaged members. Test inputs are compressed here with zlib.
#include "formats/gzip/gzip_reader.h"

#include <zlib.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tracemill::formats {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Gzip(std::string_view bytes) {
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, bytes.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = static_cast<uInt>(bytes.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// Deterministic text that compresses about 4:1 (a trace-like mix of digits).
std::string Text(size_t bytes) {
  std::string s;
  uint32_t x = 12345;
  while (s.size() < bytes) {
    x = x * 1103515245u + 12345u;
    s += "{\"ph\":\"X\",\"ts\":" + std::to_string(x % 100000007) + ",\"dur\":" +
         std::to_string((x >> 8) % 977) + "},\n";
  }
  s.resize(bytes);
  return s;
}

struct Inflated {
  GunzipResult result;
  std::string data;
  size_t capacity = 0;
};

Inflated Inflate(std::string_view gz, size_t padding = 0, uint64_t max_output = UINT64_MAX) {
  ByteBuffer buf;
  Inflated r;
  r.result = Gunzip(gz, &buf, padding, max_output);
  r.data = std::string(buf.view());
  r.capacity = buf.capacity();
  return r;
}

TEST(IsGzip, Magic) {
  EXPECT_TRUE(IsGzip("\x1f\x8b"));
  EXPECT_TRUE(IsGzip(Gzip("x")));
  EXPECT_FALSE(IsGzip("\x1f"));
  EXPECT_FALSE(IsGzip("[{}]"));
  EXPECT_FALSE(IsGzip(""));
}

TEST(Gunzip, OneMember) {
  const std::string text = Text(10000);
  Inflated r = Inflate(Gzip(text), /*padding=*/64);
  EXPECT_TRUE(r.result.status.ok()) << r.result.status;
  EXPECT_EQ(r.result.members, 1);
  EXPECT_EQ(r.data, text);
  EXPECT_GE(r.capacity, text.size() + 64);  // the padding stays allocated
}

struct MembersCase {
  const char* name;
  std::vector<size_t> sizes;  // bytes per member, in order
};

void PrintTo(const MembersCase& c, std::ostream* os) { *os << c.name; }

class GunzipMembersTest : public ::testing::TestWithParam<MembersCase> {};

TEST_P(GunzipMembersTest, InflatesEveryMember) {
  const std::string text = Text(1 << 20);
  std::string gz, want;
  size_t pos = 0;
  for (size_t n : GetParam().sizes) {
    gz += Gzip(std::string_view(text).substr(pos, n));
    want += text.substr(pos, n);
    pos += n;
  }
  Inflated r = Inflate(gz, /*padding=*/64);
  EXPECT_TRUE(r.result.status.ok()) << r.result.status;
  EXPECT_EQ(r.result.members, static_cast<int>(GetParam().sizes.size()));
  EXPECT_EQ(r.data.size(), want.size());
  EXPECT_TRUE(r.data == want);
  EXPECT_GE(r.capacity, want.size() + 64);
}

INSTANTIATE_TEST_SUITE_P(
    Concatenated, GunzipMembersTest,
    ::testing::Values(MembersCase{"two", {5000, 7000}},
                      MembersCase{"two_with_empty_between", {5000, 0, 7000}},
                      MembersCase{"empty_first_and_last", {0, 3000, 0}},
                      MembersCase{"only_empty", {0}},
                      // The last member's ISIZE is a poor guess for the whole:
                      // the buffer must grow.
                      MembersCase{"large_then_tiny", {900000, 10}},
                      MembersCase{"many", {1, 2, 3, 100, 1000, 10000, 50000, 7, 0, 4096}}),
    [](const ::testing::TestParamInfo<MembersCase>& info) { return std::string(info.param.name); });

TEST(Gunzip, TruncatedMemberSalvagesThePrefix) {
  const std::string text = Text(200000);
  const std::string gz = Gzip(text);
  const std::string cut = gz.substr(0, gz.size() / 2);
  Inflated r = Inflate(cut, /*padding=*/64);
  EXPECT_EQ(r.result.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(r.result.status.message()), HasSubstr("truncated"));
  EXPECT_EQ(r.result.members, 0);
  EXPECT_LE(r.result.error_offset, cut.size());
  EXPECT_GT(r.data.size(), text.size() / 4);
  EXPECT_LT(r.data.size(), text.size());
  EXPECT_TRUE(text.compare(0, r.data.size(), r.data) == 0) << "salvaged bytes are not a prefix";
  EXPECT_GE(r.capacity, r.data.size() + 64);
}

TEST(Gunzip, TruncatedSecondMemberKeepsTheFirst) {
  const std::string a = Text(30000), b = Text(60000).substr(30000);
  const std::string ga = Gzip(a), gb = Gzip(b);
  const std::string gz = ga + gb.substr(0, gb.size() / 2);
  Inflated r = Inflate(gz);
  EXPECT_EQ(r.result.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(r.result.members, 1);
  EXPECT_GE(r.result.error_offset, ga.size());
  EXPECT_LE(r.result.error_offset, gz.size());
  ASSERT_GT(r.data.size(), a.size());
  EXPECT_TRUE(r.data.compare(0, a.size(), a) == 0);
  EXPECT_TRUE(b.compare(0, r.data.size() - a.size(), r.data.substr(a.size())) == 0);
}

TEST(Gunzip, CutInsideTheHeader) {
  Inflated r = Inflate(Gzip(Text(1000)).substr(0, 6));
  EXPECT_EQ(r.result.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(r.data.empty());
}

TEST(Gunzip, BadCrcIsDataLoss) {
  const std::string text = Text(20000);
  std::string gz = Gzip(text);
  gz[gz.size() - 8] ^= 0x5a;  // CRC32 trailer
  Inflated r = Inflate(gz);
  EXPECT_EQ(r.result.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(text.compare(0, r.data.size(), r.data) == 0);
}

TEST(Gunzip, TrailingZerosAreTolerated) {
  const std::string text = Text(5000);
  Inflated r = Inflate(Gzip(text) + std::string(512, '\0'));
  EXPECT_TRUE(r.result.status.ok()) << r.result.status;
  EXPECT_EQ(r.data, text);
}

TEST(Gunzip, TrailingJunkIsDataLossAfterTheData) {
  const std::string text = Text(5000);
  const std::string gz = Gzip(text);
  Inflated r = Inflate(gz + "junk after the member");
  EXPECT_EQ(r.result.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(r.result.error_offset, gz.size());
  EXPECT_EQ(r.result.members, 1);
  EXPECT_EQ(r.data, text);
}

TEST(Gunzip, OutputLimitIsResourceExhausted) {
  Inflated r = Inflate(Gzip(Text(1 << 20)), 0, /*max_output=*/100000);
  EXPECT_EQ(r.result.status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_LE(r.data.size(), 100000u);
}

TEST(Gunzip, ReusedBufferIsReplaced) {
  ByteBuffer buf;
  ASSERT_TRUE(Gunzip(Gzip(Text(50000)), &buf).status.ok());
  const std::string small = "[{\"ph\":\"X\"}]";
  GunzipResult r = Gunzip(Gzip(small), &buf, 32);
  EXPECT_TRUE(r.status.ok());
  EXPECT_EQ(std::string(buf.view()), small);
}

// A member whose header carries FHCRC, FEXTRA, FNAME and FCOMMENT, with a
// wrong header CRC: libdeflate skips the header CRC, so the pre-scan's head
// inflater must too, or a sharded run plans no output for a file the decode
// reads (found by gzip_reader_fuzzer).
TEST(GunzipHead, ReadsWhatGunzipReadsDespiteAWrongHeaderCrc) {
  const std::string text = Text(3000);
  std::string plain = Gzip(text);
  std::string gz = plain.substr(0, 3) + "\x1e" + plain.substr(4, 6);  // FHCRC|FEXTRA|FNAME|FCOMMENT
  gz += std::string("\x03\x00xyz", 5) + std::string("name\0comment\0", 13) + "\x12\x34";
  gz += plain.substr(10);
  ByteBuffer buf;
  ASSERT_TRUE(Gunzip(gz, &buf).status.ok());
  EXPECT_EQ(std::string(buf.view()), text);
  std::string head;
  HeadResult h = GunzipHead(gz, /*compressed_is_whole=*/true, 1 << 20, &head);
  EXPECT_FALSE(h.damaged);
  EXPECT_TRUE(h.whole);
  EXPECT_EQ(head, text);
  h = GunzipHead(gz, /*compressed_is_whole=*/true, 100, &head);
  EXPECT_EQ(head, text.substr(0, 100));
  // Cut inside the optional header fields: a prefix is fine, a whole file damaged.
  EXPECT_FALSE(GunzipHead(gz.substr(0, 16), false, 100, &head).damaged);
  EXPECT_TRUE(GunzipHead(gz.substr(0, 16), true, 100, &head).damaged);
}

// A reused buffer: the padding after a shorter input must be zeros, not the
// longer input's bytes (simdjson re-walks a document whose next byte is `}`).
TEST(Gunzip, PaddingAfterAReusedBufferIsZeros) {
  ByteBuffer buf;
  const std::string longer(5000, '}');
  ASSERT_TRUE(Gunzip(Gzip(longer), &buf, 64).status.ok());
  ASSERT_TRUE(Gunzip(Gzip("[1]"), &buf, 64).status.ok());
  ASSERT_EQ(buf.view(), "[1]");
  ASSERT_GE(buf.capacity(), 3u + 64u);
  EXPECT_EQ(std::string_view(buf.data() + 3, 64), std::string(64, '\0'));
}

}  // namespace
}  // namespace tracemill::formats
