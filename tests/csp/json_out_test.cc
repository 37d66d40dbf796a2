// The raw-pointer JSON emitters (formats/common/json_out.h): integers against
// std::to_chars, strings against the shared escaper.
#include "formats/common/json_out.h"

#include <gtest/gtest.h>

#include <random>

#include "formats/common/json_text.h"

namespace tracemill::formats::json_out {
namespace {

std::string U(uint64_t v) {
  char buf[48];
  return std::string(buf, U64(buf, v) - buf);
}
std::string I(int64_t v) {
  char buf[48];
  return std::string(buf, I64(buf, v) - buf);
}

TEST(JsonOut, IntegersMatchToChars) {
  std::vector<uint64_t> cases = {0, 1, 9, 10, 99, 100, 999, 1000, 9999, 10000, 99999999,
                                 100000000, 1700000000000040500ull, 9999999999999999ull,
                                 10000000000000000ull, UINT64_MAX};
  for (uint64_t p = 1; p != 0 && p < UINT64_MAX / 10; p *= 10) {
    cases.push_back(p - 1);
    cases.push_back(p);
    cases.push_back(p + 1);
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) cases.push_back(rng() >> (rng() % 64));
  for (uint64_t v : cases) ASSERT_EQ(U(v), std::to_string(v)) << v;
  EXPECT_EQ(I(-1), "-1");
  EXPECT_EQ(I(INT64_MIN), "-9223372036854775808");
  EXPECT_EQ(I(INT64_MAX), "9223372036854775807");
}

TEST(JsonOut, StringsMatchTheSharedEscaper) {
  const std::string cases[] = {"", "plain ascii name with spaces", "quote\"", "back\\slash",
                               "tab\t", std::string("nul\0x", 5), "caf\xC3\xA9",
                               "bad\xFF\xFE", "exactly8", "sixteen-bytes-ok", "\x7F del"};
  for (const std::string& c : cases) {
    char buf[256];
    std::string ours(buf, String(buf, c) - buf);
    std::string want;
    AppendJsonString(c, &want);
    EXPECT_EQ(ours, want);
  }
}

TEST(JsonOut, DoubleShortestAndNonFiniteAsNull) {
  char buf[64];
  EXPECT_EQ(std::string(buf, Double(buf, 0.7328206705629037) - buf), "0.7328206705629037");
  EXPECT_EQ(std::string(buf, Double(buf, 437598125.0) - buf), "437598125");
  EXPECT_EQ(std::string(buf, Double(buf, 1.0 / 0.0) - buf), "null");
  EXPECT_EQ(std::string(buf, Double(buf, 0.0 / 0.0) - buf), "null");
}

}  // namespace
}  // namespace tracemill::formats::json_out
