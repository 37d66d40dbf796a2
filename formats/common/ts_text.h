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

// ParseMicrosToNanos parses a JSON number token in microseconds
// (`-`? digits (`.` digits)? ([eE] [+-]? digits)?) into int64 nanoseconds.
//
// The integer part is multiplied by 1000 and the first three fraction digits
// added; further fraction digits round half away from zero on the fourth.
// Exponents shift the decimal point exactly. Leading/trailing ASCII spaces are
// ignored. Returns nullopt for anything that is not such a number or whose
// value does not fit in int64 ns (|ts| > ~9.2e15 us, about year 2262).
std::optional<int64_t> ParseMicrosToNanos(std::string_view text);

// ParseSecondsToNanos: as ParseMicrosToNanos, for a number of seconds
// (run event logs: `"time": 12.000250001` is exactly 12000250001 ns); digits
// past the ninth fraction digit round half away from zero.
std::optional<int64_t> ParseSecondsToNanos(std::string_view text);

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
