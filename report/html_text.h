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
#include <vector>

#include "formats/common/stats.h"

namespace tracemill::report {

// AppendHtmlEscaped appends `text` (UTF-8) with `&`, `<`, `>`, `"` and `'`
// replaced by character references; control characters other than tab and
// newline become U+FFFD (they are not allowed in HTML text).
void AppendHtmlEscaped(std::string_view text, std::string* out);
std::string HtmlEscape(std::string_view text);

// Counts are shown as formats::GroupedCount writes them (`9575` -> "9,575"),
// as on the terminal: one number format for a person.
using formats::GroupedCount;
// FormatSignedCount: GroupedCount with a sign, `-9575` -> "-9,575".
std::string FormatSignedCount(int64_t n);
// FormatFraction: "1,999/2,000" (survivors of a round).
std::string FormatFraction(int64_t part, int64_t whole);

// FormatBytes: a short size with a decimal unit, `244635` -> "244.6 kB",
// `999` -> "999 B", `3112339` -> "3.1 MB".
std::string FormatBytes(uint64_t bytes);

// Durations and times share one rule (issue 21): the unit is the largest of
// ns, µs, ms, s, min, h and d that keeps the value >= 1, trailing zeros are
// trimmed, and whole numbers carry thousands separators.

// FormatDuration: exact. Below a minute in one unit: `607312000` ->
// "607.312 ms", `3855500` -> "3.8555 ms", `1500` -> "1.5 µs", `12` ->
// "12 ns", `2500000000` -> "2.5 s", `-296000` -> "-296 µs". From a minute
// on, whole d, h and min, then the exact seconds (trailing zero parts left
// out): `90500000000` -> "1 min 30.5 s", `7200000000000` -> "2 h",
// `1700000000000000000` -> "19,675 d 22 h 13 min 20 s".
std::string FormatDuration(int64_t ns);

// FormatShortDuration: at most `digits` fraction digits (rounded half up) in
// the largest unit that keeps it >= 1, for cards and axes: `1460123456` ->
// "1.46 s", `90500000000` -> "1.508 min", `1700000000000000000` ->
// "19,675.926 d".
std::string FormatShortDuration(int64_t ns, int digits = 3);

// AxisTick: one labelled tick of a time axis, `at_ns` after its start.
struct AxisTick {
  int64_t at_ns = 0;
  std::string label;
};

// AxisTicks: the ticks of a time axis `span_ns` long (> 0): in the unit of
// FormatShortDuration(span_ns), every 1, 2 or 5 x 10^k of that unit (the
// smallest such step that gives at most 8 intervals), labelled "0", then
// "+<value> <unit>": `50000` -> "0", "+10 µs", ..., "+50 µs"; `1200000000`
// -> "0", "+0.2 s", ..., "+1.2 s".
std::vector<AxisTick> AxisTicks(int64_t span_ns);

// FormatPercent: `lag_ns` as a share of `base_ns` with two decimals,
// rounded half up: "+0.62%", "-0.05%", "+0.00%"; "" if base_ns <= 0.
std::string FormatPercent(int64_t lag_ns, int64_t base_ns);

// FormatShare: `part` of `whole` as FormatPercent writes it, without the
// plus sign: `5356, 10000` -> "53.56%"; "" if whole <= 0.
std::string FormatShare(int64_t part, int64_t whole);

// TruncateUtf8: at most `max_bytes` bytes of `s`, cut on a character
// boundary, with "…" appended if anything was cut.
std::string TruncateUtf8(std::string_view s, size_t max_bytes);

// Td: a table cell of `text`, escaped; TdN: a right-aligned cell (class
// "n") of `text`, which is markup already (a formatted number).
std::string Td(std::string_view text);
std::string TdN(const std::string& text);

}  // namespace tracemill::report
