#pragma once
// Decimal text -> int64 nanoseconds, never through a double.
//
// Trace Event Format writes `ts` and `dur` in microseconds as JSON numbers,
// often with a fraction (Kineto with baseTimeNanoseconds: `4458676522690.655`)
// and at epoch scale (`1682725897226747.123`): a double has 15-16 significant
// digits, so parsing these as double loses nanoseconds. We parse the digits.
#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

#include "formats/common/json_text.h"

namespace tracemill::formats {

// The range of every time tracemill keeps, in ns: |ts|, `dur`, and `ts` plus
// the input's time base are at most 2^62 - 1 (about 146 years either side of
// the epoch, 1824-2116). Inside it `ts + dur` and `ts - first_ts` (relative
// time) cannot overflow int64; a value outside it is dropped as `bad_ts` /
// `bad_dur` (signed overflow in `ts + baseTimeNanoseconds` was found by
// tef_decoder_object_fuzzer).
inline constexpr int64_t kMaxAbsTimeNs = (int64_t{1} << 62) - 1;

// InTimeRange: |ns| <= kMaxAbsTimeNs.
inline bool InTimeRange(int64_t ns) { return ns >= -kMaxAbsTimeNs && ns <= kMaxAbsTimeNs; }

// ParseMicrosToNanos parses a JSON number token in microseconds
// (`-`? digits (`.` digits)? ([eE] [+-]? digits)?) into int64 nanoseconds.
//
// The integer part is multiplied by 1000 and the first three fraction digits
// added; further fraction digits round half away from zero on the fourth.
// Exponents shift the decimal point exactly. Leading/trailing ASCII spaces are
// ignored. Returns nullopt for anything that is not such a number or whose
// value does not fit in int64 ns (|ts| > ~9.2e15 us, about year 2262).
std::optional<int64_t> ParseMicrosToNanos(std::string_view text);

// ScanMicrosToNanos reads the JSON number token (RFC 8259) at json[pos] and
// parses it as ParseMicrosToNanos would, in one pass, when it has the common
// form `-?(0|[1-9]d*)(.d+)?` with at most 16 integer digits and its value
// fits in int64 ns: sets `*end` to the offset after the token and returns
// the value. nullopt (and `*end` untouched) otherwise, e.g. for an exponent,
// a leading zero or a string: the caller scans the token and parses it the
// usual way. The TEF scan path's `ts` and `dur` (tef_decoder.cc). Its word
// loads read up to 15 bytes past json.size(): `json` must lie in a buffer
// padded by at least that much (the scan path's inputs are). Inline: the
// scan path calls it for every ts and dur (120k times in the ResNet-50
// rank), and the call cost a fifth of it.
inline std::optional<int64_t> ScanMicrosToNanos(std::string_view json, size_t pos, size_t* end);

// ParseSecondsToNanos: as ParseMicrosToNanos, for a number of seconds
// (run event logs: `"time": 12.000250001` is exactly 12000250001 ns); digits
// past the ninth fraction digit round half away from zero.
std::optional<int64_t> ParseSecondsToNanos(std::string_view text);

// ParseMillisToNanos: as ParseMicrosToNanos, for a number of milliseconds
// (Paddle CrossStackProfiler's network logs: `"ts": 1700000000123.4567` is
// exactly 1700000000123456700 ns); digits past the sixth fraction digit round
// half away from zero.
std::optional<int64_t> ParseMillisToNanos(std::string_view text);

// ParseInt64 parses an optional `-` and decimal digits (also accepts a `.0...`
// fraction of zeros, as Kineto writes `"rank": 0` but others write `0.0`).
// Returns nullopt on anything else or overflow.
std::optional<int64_t> ParseInt64(std::string_view text);

// FormatNanosAsMicros appends `ns` as exact decimal microseconds to `out`
// (`1682725897226747123` -> `1682725897226747.123`, `5000` -> `5`,
// `1500` -> `1.5`, `-1` -> `-0.001`). `out` needs room for 24 bytes: the
// text is at most 21, and the digits are stored 8 bytes at a time, so up to
// 8 bytes past the text's end may be overwritten (never past out + 24).
// Returns the end of the text.
char* FormatNanosAsMicros(int64_t ns, char* out);

// MicrosText: FormatNanosAsMicros for a stream of times that mostly share
// their leading digits (a merged trace's `ts`, events microseconds apart,
// in order): the text of the last time's microseconds but their last four
// digits is kept and copied while those are the same, so a time costs its
// last four digits and its fraction. The same bytes as FormatNanosAsMicros
// for every time (negative times and those below 10 ms go to it); the same
// room (24 bytes at `out`). One per thread: not thread-safe.
class MicrosText {
 public:
  char* Format(int64_t ns, char* out);

 private:
  uint64_t high_ = UINT64_MAX;  // us / 10^4 of the text kept; none yet
  char text_[24] = {};          // its decimal digits (the stores may write 8 past them)
  size_t len_ = 0;
};


namespace ts_internal {

// EightDigitsValue: the value of 8 ASCII digits loaded little-endian into
// `v` (simdjson's parse_eight_digits_unrolled); ParseEightDigits loads
// them from `p`.
inline uint64_t EightDigitsValue(uint64_t v) {
  v = (v & 0x0F0F0F0F0F0F0F0F) * 2561 >> 8;
  v = (v & 0x00FF00FF00FF00FF) * 6553601 >> 16;
  return (v & 0x0000FFFF0000FFFF) * 42949672960001 >> 32;
}
inline uint64_t ParseEightDigits(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return EightDigitsValue(v);
}
// ParseUpToEightDigits: the value of the `n` (1 to 8) digits at `p`, from
// one 8-byte load (it reads p[0, 8)): the digits are moved to the word's
// high end and '0's put before them.
inline uint64_t ParseUpToEightDigits(const char* p, size_t n) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  const unsigned shift = static_cast<unsigned>(8 * (8 - n));  // 0 to 56
  return EightDigitsValue((v << shift) | (0x3030303030303030ull & ((uint64_t{1} << shift) - 1)));
}
// ScanMicrosToNanosByBytes: ScanMicrosToNanos a byte at a time (hosts that
// are not little-endian, where the word loads do not read digits in order).
std::optional<int64_t> ScanMicrosToNanosByBytes(std::string_view json, size_t pos, size_t* end);

}  // namespace ts_internal

inline std::optional<int64_t> ScanMicrosToNanos(std::string_view json, size_t pos, size_t* end) {
  using ts_internal::ParseEightDigits;
  using ts_internal::ParseUpToEightDigits;
  if constexpr (std::endian::native != std::endian::little) {
    return ts_internal::ScanMicrosToNanosByBytes(json, pos, end);
  }
  const char* const s = json.data();
  size_t p = pos + (pos < json.size() && s[pos] == '-');
  const bool neg = p != pos;
  // The integer digits: found 8 at a time, then read in one or two words.
  const size_t int_end = JsonDigitsEnd(json, p);
  const size_t n = int_end - p;
  if (n == 0 || n > 16 || (s[p] == '0' && n > 1)) return std::nullopt;  // RFC 8259: no leading zero
  uint64_t v = n <= 8 ? ParseUpToEightDigits(s + p, n)
                      : ParseUpToEightDigits(s + p, n - 8) * 100000000 + ParseEightDigits(s + int_end - 8);
  v *= 1000;
  p = int_end;
  if (p < json.size() && s[p] == '.') {
    const size_t frac_end = JsonDigitsEnd(json, p + 1);
    const size_t f = frac_end - (p + 1);
    if (f == 0) return std::nullopt;
    uint64_t frac = 0;
    for (size_t k = 1; k <= 3; ++k) frac = frac * 10 + (k <= f ? static_cast<uint64_t>(s[p + k] - '0') : 0);
    v += frac + (f > 3 && s[p + 4] >= '5');  // half up, on the first dropped digit
    p = frac_end;
  }
  if (p < json.size() && (s[p] == 'e' || s[p] == 'E')) return std::nullopt;  // left to the caller's scan
  if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;              // the general path: maybe INT64_MIN
  *end = p;
  return neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
}

}  // namespace tracemill::formats
