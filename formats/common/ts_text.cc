#include "formats/common/ts_text.h"

#include <charconv>
#include <cstring>

namespace tracemill::formats {
namespace {
constexpr bool IsDigit(char c) { return c >= '0' && c <= '9'; }

constexpr int64_t kPow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};

// The common form, `-?d+(.d+)?` with at most 19 - `scale` integer digits
// (Kineto's `1682725898003041.2`), in uint64 arithmetic (below 10^19 + 10^9,
// no overflow): the result is the same as ParseScaledToNanos's general path
// (tests/formats/common/ts_text_test.cc FastPathAgreesWithGeneralPath).
// nullopt means "not this form or not in int64": the caller takes the
// general path, which decides.
std::optional<int64_t> ParseScaledFast(std::string_view s, int scale) {
  const char* p = s.data();
  const char* end = p + s.size();
  const bool neg = p < end && *p == '-';
  p += neg;
  const char* int_begin = p;
  uint64_t v = 0;
  while (p < end && IsDigit(*p)) v = v * 10 + static_cast<uint64_t>(*p++ - '0');
  const long int_digits = p - int_begin;
  if (int_digits == 0 || int_digits > 19 - scale) return std::nullopt;
  v *= static_cast<uint64_t>(kPow10[scale]);
  if (p < end) {
    if (*p != '.') return std::nullopt;
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
    if (p == frac_begin || p != end) return std::nullopt;
    v += frac * static_cast<uint64_t>(kPow10[scale - taken]) + round_up;
  }
  if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;  // general path: maybe INT64_MIN
  return neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
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
  out = std::to_chars(out, out + 21, us).ptr;
  if (frac) {
    *out++ = '.';
    out[0] = static_cast<char>('0' + frac / 100);
    out[1] = static_cast<char>('0' + frac / 10 % 10);
    out[2] = static_cast<char>('0' + frac % 10);
    int n = 3;
    while (out[n - 1] == '0') --n;
    out += n;
  }
  return out;
}

}  // namespace tracemill::formats
