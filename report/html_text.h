#pragma once
// Text helpers for the HTML report: escaping and exact number formatting.
//
// Every string that reaches the page from an input (file names, labels,
// warnings, error messages, a worker's output tail) goes through
// `AppendHtmlEscaped`, in element content and in attribute values alike, so
// `</title><script>alert(1)</script>` is shown as text and never parsed.
#include <cstdint>
#include <string>
#include <string_view>

namespace tracemill::report {

// AppendHtmlEscaped appends `text` (UTF-8) with `&`, `<`, `>`, `"` and `'`
// replaced by character references; control characters other than tab and
// newline become U+FFFD (they are not allowed in HTML text).
void AppendHtmlEscaped(std::string_view text, std::string* out);
std::string HtmlEscape(std::string_view text);

// FormatCount: `9575` -> "9,575".
std::string FormatCount(uint64_t n);
std::string FormatSignedCount(int64_t n);

// FormatBytes: a short size with a decimal unit, `244635` -> "244.6 kB",
// `999` -> "999 B", `3112339` -> "3.1 MB".
std::string FormatBytes(uint64_t bytes);

// FormatDuration: exact, in the largest unit that keeps it >= 1, trailing
// zeros trimmed: `607312000` -> "607.312 ms", `3855500` -> "3.8555 ms",
// `1500` -> "1.5 µs", `12` -> "12 ns", `2500000000` -> "2.5 s",
// `-296000` -> "-296 µs".
std::string FormatDuration(int64_t ns);

// FormatShortDuration: like FormatDuration with at most `digits` fraction
// digits (rounded half up), for axis ticks and cards: "1.46 s".
std::string FormatShortDuration(int64_t ns, int digits = 3);

// FormatPercent: `lag_ns` as a share of `base_ns` with two decimals,
// rounded half up: "+0.62%", "-0.05%", "+0.00%"; "" if base_ns <= 0.
std::string FormatPercent(int64_t lag_ns, int64_t base_ns);

// TruncateUtf8: at most `max_bytes` bytes of `s`, cut on a character
// boundary, with "…" appended if anything was cut.
std::string TruncateUtf8(std::string_view s, size_t max_bytes);

}  // namespace tracemill::report
