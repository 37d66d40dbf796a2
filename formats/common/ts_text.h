#pragma once
// Decimal text -> int64 nanoseconds, never through a double.
//
// Trace Event Format writes `ts` and `dur` in microseconds as JSON numbers,
// often with a fraction (Kineto with baseTimeNanoseconds: `4458676522690.655`)
// and at epoch scale (`1682725897226747.123`): a double has 15-16 significant
// digits, so parsing these as double loses nanoseconds. We parse the digits.
#include <cstdint>
#include <optional>
#include <string_view>

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
// loads read up to 7 bytes past json.size(): `json` must lie in a buffer
// padded by at least that much (the scan path's inputs are).
std::optional<int64_t> ScanMicrosToNanos(std::string_view json, size_t pos, size_t* end);

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
// `1500` -> `1.5`, `-1` -> `-0.001`). At most 24 bytes are written.
// Returns the pointer past the last byte written.
char* FormatNanosAsMicros(int64_t ns, char* out);

}  // namespace tracemill::formats
