// formats/common/ts_text: decimal microsecond text <-> int64 nanoseconds,
// never through a double.
#include "formats/common/ts_text.h"

#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tracemill::formats {
namespace {

std::string Format(int64_t ns) {
  char buf[32];
  return std::string(buf, FormatNanosAsMicros(ns, buf));
}

TEST(ParseMicrosToNanos, EpochMicrosWithFractionIsExact) {
  // A double holds ~15.9 digits: this value would lose its last nanoseconds.
  EXPECT_EQ(ParseMicrosToNanos("1682725897226747.123"), 1682725897226747123);
  EXPECT_EQ(ParseMicrosToNanos("4458676522690.655"), 4458676522690655);
  EXPECT_EQ(ParseMicrosToNanos("1682725897226747"), 1682725897226747000);
}

TEST(ParseMicrosToNanos, ShortForms) {
  EXPECT_EQ(ParseMicrosToNanos("0"), 0);
  EXPECT_EQ(ParseMicrosToNanos("-0"), 0);
  EXPECT_EQ(ParseMicrosToNanos("1"), 1000);
  EXPECT_EQ(ParseMicrosToNanos("1.5"), 1500);
  EXPECT_EQ(ParseMicrosToNanos("0.001"), 1);
  EXPECT_EQ(ParseMicrosToNanos("0.000"), 0);
  EXPECT_EQ(ParseMicrosToNanos("007.25"), 7250);
  EXPECT_EQ(ParseMicrosToNanos("  12.5 "), 12500);  // spaces around are ignored
}

TEST(ParseMicrosToNanos, FourthFractionDigitRoundsHalfAwayFromZero) {
  EXPECT_EQ(ParseMicrosToNanos("1.0004"), 1000);
  EXPECT_EQ(ParseMicrosToNanos("1.0005"), 1001);
  EXPECT_EQ(ParseMicrosToNanos("1.00049999"), 1000);
  EXPECT_EQ(ParseMicrosToNanos("1.0009"), 1001);
  EXPECT_EQ(ParseMicrosToNanos("0.9995"), 1000);  // carry into the integer part
  EXPECT_EQ(ParseMicrosToNanos("0.0004"), 0);
  EXPECT_EQ(ParseMicrosToNanos("0.0005"), 1);
  EXPECT_EQ(ParseMicrosToNanos("0.00005"), 0);
  EXPECT_EQ(ParseMicrosToNanos("-1.0005"), -1001);
  EXPECT_EQ(ParseMicrosToNanos("-1.0004"), -1000);
  EXPECT_EQ(ParseMicrosToNanos("1682725897226747.1235"), 1682725897226747124);
}

// XorShift64: a fixed sequence of pseudo-random numbers (Marsaglia's
// xorshift64), for test inputs that are the same on every run.
struct XorShift64 {
  uint64_t x = 88172645463325252ull;
  uint64_t operator()() {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  }
};

// Plain `-?d+(.d+)?` text takes an int64 fast path; the same text with
// `e0` appended takes the general one. Both must give the same nanoseconds,
// for scales 3 (us) and 9 (s), around the fast path's 18-digit edge too.
TEST(ParseMicrosToNanos, FastPathAgreesWithGeneralPath) {
  XorShift64 next;
  int compared = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string t = next() % 2 ? "-" : "";
    const int int_len = 1 + static_cast<int>(next() % 19), frac_len = static_cast<int>(next() % 12);
    for (int k = 0; k < int_len; ++k) t.push_back(static_cast<char>('0' + next() % 10));
    if (frac_len) t.push_back('.');
    for (int k = 0; k < frac_len; ++k) {
      // Mostly 9s and 4s/5s after the kept digits, to exercise rounding carries.
      const char* pool = k >= 2 ? "9945" : "0123456789";
      t.push_back(pool[next() % (k >= 2 ? 4 : 10)]);
    }
    EXPECT_EQ(ParseMicrosToNanos(t), ParseMicrosToNanos(t + "e0")) << t;
    EXPECT_EQ(ParseSecondsToNanos(t), ParseSecondsToNanos(t + "e0")) << t;
    compared += ParseMicrosToNanos(t).has_value();
  }
  EXPECT_GT(compared, 15000);
  // The edges: 16 integer digits take the fast path at scale 3 (epoch
  // microseconds), 17 do not; past int64 the general path decides.
  EXPECT_EQ(ParseMicrosToNanos("999999999999999.9995"), 1000000000000000000);
  EXPECT_EQ(ParseMicrosToNanos("9223372036854775.8075"), std::nullopt);
  EXPECT_EQ(ParseMicrosToNanos("-9223372036854775.808"), INT64_MIN);
  EXPECT_EQ(ParseMicrosToNanos("-9223372036854775.8084"), INT64_MIN);
  EXPECT_EQ(ParseMicrosToNanos("-9223372036854775.8085"), std::nullopt);
  EXPECT_EQ(ParseMicrosToNanos("9223372036854775.807"), INT64_MAX);  // general path
  EXPECT_EQ(ParseMicrosToNanos("9999999999999999.9995"), std::nullopt);  // past int64
  EXPECT_EQ(ParseSecondsToNanos("999999999.9999999995"), 1000000000000000000);
}

// Scan: ScanMicrosToNanos of `json` in a buffer padded as the scan path's
// inputs are (its word loads read past the view), the padding digits, which
// must not be read as the number's.
std::optional<int64_t> Scan(const std::string& json, size_t pos, size_t* end) {
  const std::string padded = json + std::string(16, '7');
  return ScanMicrosToNanos(std::string_view(padded.data(), json.size()), pos, end);
}

// ScanMicrosToNanos (the TEF scan path's ts and dur): where it takes a
// token, the token ends where RFC 8259's grammar ends it and the value is
// ParseMicrosToNanos's; it leaves exponents, leading zeros, 17 integer
// digits and what is not a number to the caller.
TEST(ScanMicrosToNanos, TakesTheCommonFormAsParseMicrosToNanos) {
  XorShift64 next;
  int taken = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string t = next() % 2 ? "-" : "";
    const int int_len = 1 + static_cast<int>(next() % 17), frac_len = static_cast<int>(next() % 8);
    t.push_back(static_cast<char>('1' + next() % 9));
    for (int k = 1; k < int_len; ++k) t.push_back(static_cast<char>('0' + next() % 10));
    if (frac_len) t.push_back('.');
    for (int k = 0; k < frac_len; ++k) t.push_back(next() % 2 ? "9945"[next() % 4] : static_cast<char>('0' + next() % 10));
    const char* after[] = {",", "}", " ,", "]", "", "x"};
    const std::string json = "[" + t + after[next() % 6];
    size_t end = 0;
    const std::optional<int64_t> v = Scan(json, 1, &end);
    if (int_len > 16) {
      EXPECT_EQ(v, std::nullopt) << t;
      continue;
    }
    if (!v) {  // past int64 ns at 16 digits: the general path decides
      EXPECT_EQ(int_len, 16) << t;
      EXPECT_TRUE(!ParseMicrosToNanos(t) || *ParseMicrosToNanos(t) == INT64_MIN) << t;
      continue;
    }
    EXPECT_EQ(end, 1 + t.size()) << json;
    EXPECT_EQ(v, ParseMicrosToNanos(t)) << t;
    ++taken;
  }
  EXPECT_GT(taken, 15000);
  size_t end = 7;
  for (const char* left : {"0123", "-01", "1e3", "1.5E-2", "-", "1.", ".5", "-.5", "\"12\"", "true", "x",
                           "12345678901234567", "9999999999999999.9995"}) {
    EXPECT_EQ(Scan(std::string(left) + ",", 0, &end), std::nullopt) << left;
    EXPECT_EQ(Scan(left, 0, &end), std::nullopt) << left;
    EXPECT_EQ(end, 7u) << left;
  }
  EXPECT_EQ(Scan("0,", 0, &end), 0);
  EXPECT_EQ(end, 1u);
  EXPECT_EQ(Scan("-0.0004}", 0, &end), 0);
  EXPECT_EQ(end, 7u);
  EXPECT_EQ(Scan("\"ts\": 1623142623461462.5, ", 6, &end), 1623142623461462500);
  EXPECT_EQ(end, 24u);
  EXPECT_EQ(Scan("9223372036854775.807]", 0, &end), INT64_MAX);
  EXPECT_EQ(end, 20u);
  // Every length of integer and fraction, the number ending the view (the
  // padding's digits are not its own), 0 and 9 in every place.
  for (int len = 1; len <= 16; ++len)
    for (int frac = 0; frac <= 5; ++frac)
      for (char d : {'0', '9'}) {
        std::string t = "1" + std::string(len - 1, d);
        if (frac) t += "." + std::string(frac, d);
        EXPECT_EQ(Scan(t, 0, &end), ParseMicrosToNanos(t)) << t;
        EXPECT_EQ(end, t.size()) << t;
      }
}

TEST(ParseMicrosToNanos, ExponentsShiftTheDecimalPointExactly) {
  EXPECT_EQ(ParseMicrosToNanos("1e3"), 1000000);
  EXPECT_EQ(ParseMicrosToNanos("1E3"), 1000000);
  EXPECT_EQ(ParseMicrosToNanos("1.5e+3"), 1500000);
  EXPECT_EQ(ParseMicrosToNanos("1e-3"), 1);
  EXPECT_EQ(ParseMicrosToNanos("1e-4"), 0);
  EXPECT_EQ(ParseMicrosToNanos("5e-4"), 1);
  EXPECT_EQ(ParseMicrosToNanos("1.682725897226747123e15"), 1682725897226747123);
  EXPECT_EQ(ParseMicrosToNanos("1682725897226747123e-3"), 1682725897226747123);
  EXPECT_EQ(ParseMicrosToNanos("4.4586765229e12"), 4458676522900000);
  EXPECT_EQ(ParseMicrosToNanos("-2.5e1"), -25000);
  EXPECT_EQ(ParseMicrosToNanos("0e400"), 0);
  EXPECT_EQ(ParseMicrosToNanos("1e-400"), 0);
}

TEST(ParseMicrosToNanos, Negative) {
  EXPECT_EQ(ParseMicrosToNanos("-1"), -1000);
  EXPECT_EQ(ParseMicrosToNanos("-0.001"), -1);
  EXPECT_EQ(ParseMicrosToNanos("-1682725897226747.123"), -1682725897226747123);
}

TEST(ParseMicrosToNanos, Int64Limits) {
  // INT64_MAX ns = 9223372036854775.807 us.
  EXPECT_EQ(ParseMicrosToNanos("9223372036854775.807"), INT64_MAX);
  EXPECT_EQ(ParseMicrosToNanos("9223372036854775.8074"), INT64_MAX);
  EXPECT_EQ(ParseMicrosToNanos("-9223372036854775.807"), -INT64_MAX);
}

TEST(ParseMicrosToNanos, Int64MinFits) {
  // The header promises nullopt only for values that do not fit in int64 ns;
  // INT64_MIN does (and FormatNanosAsMicros writes it).
  EXPECT_EQ(ParseMicrosToNanos("-9223372036854775.808"), INT64_MIN);
}

TEST(ParseMicrosToNanos, OverflowIsNullopt) {
  EXPECT_EQ(ParseMicrosToNanos("9223372036854775.808"), std::nullopt);
  EXPECT_EQ(ParseMicrosToNanos("9223372036854775.8075"), std::nullopt);  // rounds past
  EXPECT_EQ(ParseMicrosToNanos("9223372036854776"), std::nullopt);
  EXPECT_EQ(ParseMicrosToNanos("18446744073709551616"), std::nullopt);
  EXPECT_EQ(ParseMicrosToNanos("123456789012345678901234567890"), std::nullopt);
  EXPECT_EQ(ParseMicrosToNanos("-9223372036854775.809"), std::nullopt);
  EXPECT_EQ(ParseMicrosToNanos("1e16"), std::nullopt);
  EXPECT_EQ(ParseMicrosToNanos("1e400"), std::nullopt);
  EXPECT_EQ(ParseMicrosToNanos("1e99999999999"), std::nullopt);
}

TEST(ParseMicrosToNanos, NotANumberIsNullopt) {
  for (const char* bad : {"", " ", "-", "+", ".", "1.", "e3", "1e", "1e+", "1.2.3", "12a", "a12",
                          "NaN", "nan", "inf", "Infinity", "-Infinity", "0x10", "1,5", "\"1\"",
                          "1 2", "--1", "1e3.5"}) {
    EXPECT_EQ(ParseMicrosToNanos(bad), std::nullopt) << "'" << bad << "'";
  }
}

TEST(ParseMillisToNanos, NetworkLogMillisecondsAreExact) {
  // Paddle network logs (formats/paddle/net_log.h): `ts` in ms since the epoch.
  EXPECT_EQ(ParseMillisToNanos("1700000000000.5"), 1700000000000500000);
  EXPECT_EQ(ParseMillisToNanos("1700000000011.000001"), 1700000000011000001);
  EXPECT_EQ(ParseMillisToNanos("1700000000010.1234567"), 1700000000010123457);  // 7th digit rounds
  EXPECT_EQ(ParseMillisToNanos("1700000000010.1234564"), 1700000000010123456);
  EXPECT_EQ(ParseMillisToNanos("1.7e12"), 1700000000000000000);
  EXPECT_EQ(ParseMillisToNanos("-0.5"), -500000);
  EXPECT_EQ(ParseMillisToNanos("9223372036854.775807"), INT64_MAX);
  EXPECT_EQ(ParseMillisToNanos("9223372036854.775808"), std::nullopt);
  EXPECT_EQ(ParseMillisToNanos("soon"), std::nullopt);
}

TEST(ParseInt64, IntegersAndZeroFractions) {
  EXPECT_EQ(ParseInt64("0"), 0);
  EXPECT_EQ(ParseInt64("17"), 17);
  EXPECT_EQ(ParseInt64("-3"), -3);
  EXPECT_EQ(ParseInt64("5.0"), 5);
  EXPECT_EQ(ParseInt64("5.000"), 5);
  EXPECT_EQ(ParseInt64("1711964646000000000"), 1711964646000000000);
  EXPECT_EQ(ParseInt64("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(ParseInt64("9223372036854775808"), std::nullopt);
  EXPECT_EQ(ParseInt64("5.5"), std::nullopt);
  EXPECT_EQ(ParseInt64("5."), std::nullopt);
  EXPECT_EQ(ParseInt64(""), std::nullopt);
  EXPECT_EQ(ParseInt64("x"), std::nullopt);
  EXPECT_EQ(ParseInt64("1e3"), std::nullopt);
}

TEST(FormatNanosAsMicros, ExactDecimalMicros) {
  EXPECT_EQ(Format(1682725897226747123), "1682725897226747.123");
  EXPECT_EQ(Format(1716423322522690655), "1716423322522690.655");
  EXPECT_EQ(Format(5000), "5");
  EXPECT_EQ(Format(1500), "1.5");
  EXPECT_EQ(Format(1050), "1.05");
  EXPECT_EQ(Format(1001), "1.001");
  EXPECT_EQ(Format(1), "0.001");
  EXPECT_EQ(Format(0), "0");
  EXPECT_EQ(Format(-1), "-0.001");
  EXPECT_EQ(Format(-1500), "-1.5");
  EXPECT_EQ(Format(INT64_MAX), "9223372036854775.807");
  EXPECT_EQ(Format(INT64_MIN), "-9223372036854775.808");
}

TEST(FormatNanosAsMicros, RoundTripsThroughParse) {
  for (int64_t ns : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{999}, int64_t{1000}, int64_t{123456789},
                     int64_t{1682725897226747123}, INT64_MAX, -INT64_MAX}) {
    EXPECT_EQ(ParseMicrosToNanos(Format(ns)), ns) << ns;
  }
}

// Against the plain form (std::to_chars of the whole microseconds, then
// the fraction's digits less trailing zeros) at every magnitude, both signs:
// the digits are written in blocks of eight (ts_text.cc WriteDecimal).
TEST(FormatNanosAsMicros, AgreesWithToCharsAtEveryMagnitude) {
  std::mt19937_64 rng(5);
  auto plain = [](int64_t ns) {
    const uint64_t mag = ns < 0 ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
    char buf[32];
    std::string t = ns < 0 ? "-" : "";
    t.append(buf, std::to_chars(buf, buf + sizeof(buf), mag / 1000).ptr);
    std::string frac = std::to_string(mag % 1000 + 1000).substr(1);
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    if (!frac.empty()) t += "." + frac;
    return t;
  };
  int checked = 0;
  for (int digits = 1; digits <= 19; ++digits) {
    uint64_t p10 = 1;  // 10^(digits - 1)
    for (int k = 1; k < digits; ++k) p10 *= 10;
    const uint64_t lo = digits == 1 ? 0 : p10;
    const uint64_t hi = digits == 19 ? static_cast<uint64_t>(INT64_MAX) : p10 * 10 - 1;
    std::uniform_int_distribution<uint64_t> pick(lo, hi);
    for (int i = 0; i < 2000; ++i) {
      const int64_t ns = static_cast<int64_t>(i < 2 ? (i ? hi : lo) : pick(rng));
      ASSERT_EQ(Format(ns), plain(ns)) << ns;
      ASSERT_EQ(Format(-ns), plain(-ns)) << -ns;
      checked += 2;
    }
  }
  EXPECT_EQ(Format(INT64_MIN), plain(INT64_MIN));
  EXPECT_EQ(checked, 19 * 4000);
}

TEST(FormatNanosAsMicros, WritesAtMost24Bytes) {
  char buf[64];
  EXPECT_LE(FormatNanosAsMicros(INT64_MIN, buf) - buf, 24);
  EXPECT_LE(FormatNanosAsMicros(INT64_MAX, buf) - buf, 24);
  // Its 8-byte stores may write past the text's end, never past out + 24:
  // the bytes after stay as they were, at every length of text.
  int64_t ns = 1;
  for (int digits = 1; digits <= 19; ++digits, ns *= 10) {
    for (int64_t v : {ns, ns * 9 + 1, -ns, -(ns * 9 + 1), INT64_MAX, INT64_MIN}) {
      std::memset(buf, '#', sizeof buf);
      const char* end = FormatNanosAsMicros(v, buf);
      EXPECT_EQ(std::string(buf + 24, 40), std::string(40, '#')) << v;
      EXPECT_LE(end - buf, 21) << v;
    }
    if (digits == 19) break;  // ns * 10 would overflow
  }
}

// MicrosText keeps the text of a time's microseconds but their last four
// digits for the next: in a stream that steps across those digits' carries
// (0.9999 ms to the next 10 ms), jumps back and forth by every power of ten,
// crosses 10 ms (below it, FormatNanosAsMicros's) and goes negative, each
// time is FormatNanosAsMicros's bytes, and nothing is written past out + 24.
TEST(MicrosText, SameBytesAsFormatNanosAsMicrosInAnyOrder) {
  MicrosText text;
  std::vector<int64_t> stream;
  const int64_t epoch = 1682725897226747123;
  for (int64_t step : {int64_t{1}, int64_t{999}, int64_t{1000}, int64_t{1001}, int64_t{333333}})
    for (int k = 0; k < 64; ++k) stream.push_back(epoch - 16 * step + k * step);
  int64_t p10 = 1;
  for (int digits = 1; digits <= 18; ++digits, p10 *= 10)
    for (int64_t v : {epoch + p10, epoch - p10, p10, p10 - 1, p10 * 9 + 1, -p10, epoch})
      stream.push_back(v);
  for (int64_t v : {int64_t{9999999}, int64_t{10000000}, int64_t{10000001}, int64_t{10001000}, int64_t{19999999000},
                    int64_t{20000000000}, int64_t{12340005000}, INT64_MAX, INT64_MIN, int64_t{0}, INT64_MAX - 999})
    stream.push_back(v);
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> near(-5000000000, 5000000000);
  for (int i = 0; i < 4000; ++i) stream.push_back(epoch + near(rng));
  size_t checked = 0;
  for (int64_t ns : stream) {
    char got[64], want[64];
    std::memset(got, '#', sizeof got);
    const char* end = text.Format(ns, got);
    const char* want_end = FormatNanosAsMicros(ns, want);
    ASSERT_EQ(std::string(static_cast<const char*>(got), end), std::string(static_cast<const char*>(want), want_end))
        << ns;
    ASSERT_EQ(std::string(got + 24, 40), std::string(40, '#')) << ns;
    ++checked;
  }
  EXPECT_EQ(checked, 5u * 64u + 18u * 7u + 11u + 4000u);
}

}  // namespace
}  // namespace tracemill::formats
