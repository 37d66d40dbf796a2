#include "formats/common/ts_text.h"

#include <bit>
#include <charconv>
#include <cstring>

#include "formats/common/json_text.h"

namespace tracemill::formats {
namespace {
using ts_internal::EightDigitsValue;
using ts_internal::ParseEightDigits;
constexpr bool IsDigit(char c) { return c >= '0' && c <= '9'; }

constexpr int64_t kPow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};

// EightDigits: whether the 8 bytes at `p` are all ASCII digits, and
// ParseEightDigits their value, a word at a time (simdjson's
// is_made_of_eight_digits_fast and parse_eight_digits_unrolled): an epoch
// time's 16 integer digits in two steps instead of 16 dependent ones.
// Little-endian only; elsewhere EightDigits is false and the byte loop reads.
inline bool EightDigits(const char* p) {
  if constexpr (std::endian::native != std::endian::little) return false;
  uint64_t v;
  std::memcpy(&v, p, 8);
  return ((v & 0xF0F0F0F0F0F0F0F0) | (((v + 0x0606060606060606) & 0xF0F0F0F0F0F0F0F0) >> 4)) == 0x3333333333333333;
}
// The common form, `-?d+(.d+)?` with at most 19 - `scale` integer digits
// (Kineto's `1682725898003041.2`), in uint64 arithmetic (below 10^19 + 10^9,
// no overflow), read from [p, end) as far as it goes: `*stop` is the first
// byte after it. The result is the same as ParseScaledToNanos's general path
// on that text (tests/formats/common/ts_text_test.cc
// FastPathAgreesWithGeneralPath). nullopt means "not this form or not in
// int64": the caller takes the general path, which decides.
[[gnu::always_inline]] inline std::optional<int64_t> ParseScaledPrefix(const char* p, const char* end, int scale,
                                                                   const char** stop) {
  const bool neg = p < end && *p == '-';
  p += neg;
  const char* int_begin = p;
  uint64_t v = 0;  // wraps past 19 digits, which the check below refuses
  for (; end - p >= 8 && EightDigits(p); p += 8) v = v * 100000000 + ParseEightDigits(p);
  while (p < end && IsDigit(*p)) v = v * 10 + static_cast<uint64_t>(*p++ - '0');
  const long int_digits = p - int_begin;
  if (int_digits == 0 || int_digits > 19 - scale) return std::nullopt;
  v *= static_cast<uint64_t>(kPow10[scale]);
  if (p < end && *p == '.') {
    ++p;
    const char* frac_begin = p;
    uint64_t frac = 0;
    int taken = 0;
    bool round_up = false;
    for (; p < end && IsDigit(*p); ++p) {
      if (taken < scale) {
        frac = frac * 10 + static_cast<uint64_t>(*p - '0');
        ++taken;
      } else if (p - frac_begin == scale) {
        round_up = *p >= '5';  // half up, on the first dropped digit
      }
    }
    if (p == frac_begin) return std::nullopt;
    v += frac * static_cast<uint64_t>(kPow10[scale - taken]) + round_up;
  }
  if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;  // general path: maybe INT64_MIN
  *stop = p;
  return neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
}

// ParseScaledFast: the common form filling the whole of `s`.
std::optional<int64_t> ParseScaledFast(std::string_view s, int scale) {
  const char* stop = nullptr;
  const auto v = ParseScaledPrefix(s.data(), s.data() + s.size(), scale, &stop);
  if (!v || stop != s.data() + s.size()) return std::nullopt;
  return v;
}

// Parses a decimal number and returns it x 10^`scale` (3: us -> ns, 9: s -> ns).
std::optional<int64_t> ParseScaledToNanos(std::string_view s, int scale) {
  if (auto fast = ParseScaledFast(s, scale)) return fast;
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' ||
                        s.back() == '\r'))
    s.remove_suffix(1);
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
    neg = s[i] == '-';
    ++i;
  }
  // value = 0.d1 d2 d3 ... x 10^point, over the significant digits d (leading
  // zeros stripped). We keep at most kMaxDigits digits plus a sticky flag.
  constexpr int kMaxDigits = 40;
  char digits[kMaxDigits];
  int nd = 0;
  long point = 0;  // position of the decimal point after `point` digits
  bool any = false;
  while (i < s.size() && IsDigit(s[i])) {
    any = true;
    if (nd == 0 && s[i] == '0') { ++i; continue; }
    if (nd < kMaxDigits) digits[nd++] = s[i];
    ++point;
    ++i;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    bool frac = false;
    while (i < s.size() && IsDigit(s[i])) {
      frac = true;
      if (nd == 0 && s[i] == '0') { --point; ++i; continue; }
      if (nd < kMaxDigits) digits[nd++] = s[i];
      ++i;
    }
    if (!frac) return std::nullopt;
    any = true;
  }
  if (!any) return std::nullopt;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
      eneg = s[i] == '-';
      ++i;
    }
    if (i >= s.size() || !IsDigit(s[i])) return std::nullopt;
    long e = 0;
    while (i < s.size() && IsDigit(s[i])) {
      if (e < 1000000) e = e * 10 + (s[i] - '0');
      ++i;
    }
    point += eneg ? -e : e;
  }
  if (i != s.size()) return std::nullopt;
  if (nd == 0) return 0;
  // Nanoseconds: the decimal point moves `scale` places right.
  long int_digits = point + scale;
  if (int_digits > 19) return std::nullopt;
  unsigned __int128 v = 0;
  for (long k = 0; k < int_digits; ++k) v = v * 10 + (k < nd ? digits[k] - '0' : 0);
  if (int_digits >= 0 && int_digits < nd && digits[int_digits] >= '5') v += 1;
  if (neg) {
    if (v > static_cast<unsigned __int128>(INT64_MAX) + 1) return std::nullopt;
    return static_cast<int64_t>(-static_cast<__int128>(v));
  }
  if (v > static_cast<unsigned __int128>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(v);
}

}  // namespace

std::optional<int64_t> ParseMicrosToNanos(std::string_view s) { return ParseScaledToNanos(s, 3); }

namespace ts_internal {

std::optional<int64_t> ScanMicrosToNanosByBytes(std::string_view json, size_t pos, size_t* end) {
  const char* const begin = json.data() + pos;
  const char* stop = nullptr;
  const auto v = ParseScaledPrefix(begin, json.data() + json.size(), 3, &stop);
  if (!v) return std::nullopt;
  // RFC 8259: no leading zero, no exponent (left to the caller's scan).
  const char* digits = begin + (*begin == '-');
  if (*digits == '0' && digits + 1 < stop && IsDigit(digits[1])) return std::nullopt;
  if (stop < json.data() + json.size() && (*stop == 'e' || *stop == 'E')) return std::nullopt;
  *end = static_cast<size_t>(stop - json.data());
  return v;
}

}  // namespace ts_internal

std::optional<int64_t> ParseMillisToNanos(std::string_view s) { return ParseScaledToNanos(s, 6); }
std::optional<int64_t> ParseSecondsToNanos(std::string_view s) { return ParseScaledToNanos(s, 9); }

std::optional<int64_t> ParseInt64(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' ||
                        s.back() == '\t'))
    s.remove_suffix(1);
  size_t dot = s.find('.');
  std::string_view intpart = s.substr(0, dot);
  if (dot != std::string_view::npos) {
    std::string_view frac = s.substr(dot + 1);
    if (frac.empty()) return std::nullopt;
    for (char c : frac)
      if (c != '0') return std::nullopt;
  }
  int64_t v = 0;
  auto [p, ec] = std::from_chars(intpart.data(), intpart.data() + intpart.size(), v);
  if (ec != std::errc() || p != intpart.data() + intpart.size()) return std::nullopt;
  return v;
}

namespace {

constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// WriteEight writes `v` (< 10^8) as exactly 8 digits; returns the end.
inline char* WriteEight(uint32_t v, char* out) {
  const uint32_t hi = v / 10000, lo = v % 10000;
  std::memcpy(out, kDigitPairs + 2 * (hi / 100), 2);
  std::memcpy(out + 2, kDigitPairs + 2 * (hi % 100), 2);
  std::memcpy(out + 4, kDigitPairs + 2 * (lo / 100), 2);
  std::memcpy(out + 6, kDigitPairs + 2 * (lo % 100), 2);
  return out + 8;
}

// WriteDecimalByPairs writes `v` in decimal without leading zeros (at most
// 20 bytes); returns the end. Digits in independent blocks of eight: an epoch
// time's 16 digits are two blocks, not a chain of eight divisions by 100
// on 64 bits as std::to_chars makes them.
inline char* WriteDecimalByPairs(uint64_t v, char* out) {
  constexpr uint64_t k8 = 100000000, k16 = k8 * k8;
  if (v < k8) return std::to_chars(out, out + 8, static_cast<uint32_t>(v)).ptr;
  if (v < k16) {
    out = std::to_chars(out, out + 8, static_cast<uint32_t>(v / k8)).ptr;
    return WriteEight(static_cast<uint32_t>(v % k8), out);
  }
  out = std::to_chars(out, out + 4, static_cast<uint32_t>(v / k16)).ptr;
  const uint64_t rest = v % k16;
  out = WriteEight(static_cast<uint32_t>(rest / k8), out);
  return WriteEight(static_cast<uint32_t>(rest % k8), out);
}

// EightDigitValues: the 8 decimal digits of `v` (< 10^8) as byte values
// 0-9 in one word, the first digit in the lowest byte (little-endian memory
// order), split in lanes: 4 + 4 digits, then 2 + 2 in each, then 1 + 1,
// each step one multiply for all lanes (x * 10486 >> 20 is x / 100 below
// 10^4, x * 103 >> 10 is x / 10 below 100).
inline uint64_t EightDigitValues(uint32_t v) {
  uint64_t m = (v / 10000) | (uint64_t{v % 10000} << 32);
  uint64_t t = ((m * 10486) >> 20) & 0x0000007F0000007Full;
  m = t | ((m - t * 100) << 16);
  t = ((m * 103) >> 10) & 0x000F000F000F000Full;
  return t | ((m - t * 10) << 8);
}

// WriteUpToEight writes `v` (< 10^8) without leading zeros ("0" for 0) with
// one 8-byte store (the bytes past the returned end are scratch); returns
// the end.
inline char* WriteUpToEight(uint32_t v, char* out) {
  const uint64_t d = EightDigitValues(v);
  const int lz = d ? std::countr_zero(d) >> 3 : 7;  // the leading zero digits
  const uint64_t w = (d | 0x3030303030303030ull) >> (8 * lz);
  std::memcpy(out, &w, 8);
  return out + 8 - lz;
}

// WriteDecimal writes `v` in decimal without leading zeros; returns the end.
// Little-endian: a block of up to 8 digits then one of 8, each made and
// stored as one word (EightDigitValues), where std::to_chars chains
// divisions by 100 (bench_ts_format, session 29, against to_chars and
// pairs: durations of up to 5 s -27 %, epoch ts with a ns fraction -2 %,
// epoch ts in whole us +2 %). Writes up to 16 bytes for v < 10^16 (every
// |ns| / 1000 of an int64) and may store up to 8 bytes past the end it
// returns. Below 100, one pair from kDigitPairs (session 34: a duration of
// 1 or 2 digits, -0.46 % of a job's instructions).
inline char* WriteDecimal(uint64_t v, char* out) {
  constexpr uint64_t k8 = 100000000;
  if constexpr (std::endian::native != std::endian::little) return WriteDecimalByPairs(v, out);
  if (v < 100) {  // one or two digits from the pairs' table: 88 % of Kineto's durations
    std::memcpy(out, kDigitPairs + 2 * v + (v < 10), 2);
    return out + 1 + (v >= 10);
  }
  if (v >= k8 * k8) return WriteDecimalByPairs(v, out);
  if (v < k8) return WriteUpToEight(static_cast<uint32_t>(v), out);
  out = WriteUpToEight(static_cast<uint32_t>(v / k8), out);
  const uint64_t w = EightDigitValues(static_cast<uint32_t>(v % k8)) | 0x3030303030303030ull;
  std::memcpy(out, &w, 8);
  return out + 8;
}

// WriteFraction writes `frac` (< 1000) thousandths as `.` and 1 to 3
// digits, trailing zeros dropped without a loop (stores 4 bytes), nothing
// for 0. Returns the end.
inline char* WriteFraction(unsigned frac, char* out) {
  if (!frac) return out;
  const unsigned r = frac % 100;
  out[0] = '.';
  out[1] = static_cast<char>('0' + frac / 100);
  out[2] = static_cast<char>('0' + r / 10);
  out[3] = static_cast<char>('0' + r % 10);
  return out + 4 - (r % 10 == 0) - (r == 0);
}

}  // namespace

char* FormatNanosAsMicros(int64_t ns, char* out) {
  uint64_t mag;
  if (ns < 0) {
    *out++ = '-';
    mag = static_cast<uint64_t>(-(ns + 1)) + 1;
  } else {
    mag = static_cast<uint64_t>(ns);
  }
  uint64_t us = mag / 1000;
  unsigned frac = static_cast<unsigned>(mag % 1000);
  return WriteFraction(frac, WriteDecimal(us, out));
}

char* MicrosText::Format(int64_t ns, char* out) {
  constexpr uint64_t k4 = 10000;
  if (ns < static_cast<int64_t>(1000 * k4)) return FormatNanosAsMicros(ns, out);  // negative or below 10 ms
  const uint64_t mag = static_cast<uint64_t>(ns);
  const uint64_t us = mag / 1000;
  const unsigned frac = static_cast<unsigned>(mag % 1000);
  const uint64_t high = us / k4;
  if (high != high_) {  // at most 12 digits (us < 2^63 / 1000)
    high_ = high;
    len_ = static_cast<size_t>(WriteDecimal(high, text_) - text_);
  }
  std::memcpy(out, text_, 16);
  out += len_;
  const unsigned low = static_cast<unsigned>(us % k4);  // four digits, leading zeros kept
  std::memcpy(out, kDigitPairs + 2 * (low / 100), 2);
  std::memcpy(out + 2, kDigitPairs + 2 * (low % 100), 2);
  return WriteFraction(frac, out + 4);
}

}  // namespace tracemill::formats
