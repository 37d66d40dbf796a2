#include "report/html_text.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tracemill::report {
namespace {

// Units of the duration rule (html_text.h), smallest first.
struct Unit {
  int64_t ns;
  const char* name;
};
constexpr Unit kUnits[] = {{1, "ns"},
                           {1000, "\xC2\xB5s"},
                           {1000000, "ms"},
                           {1000000000, "s"},
                           {int64_t{60} * 1000000000, "min"},
                           {int64_t{3600} * 1000000000, "h"},
                           {int64_t{86400} * 1000000000, "d"}};
constexpr int kSecondUnit = 3;  // kUnits[3] is "s"

// The largest unit that keeps `mag` (ns) >= 1, at most `max_unit`.
int UnitOf(uint64_t mag, int max_unit) {
  int u = 0;
  while (u < max_unit && mag >= static_cast<uint64_t>(kUnits[u + 1].ns)) ++u;
  return u;
}

// `mag` / `unit_ns` as decimal text with thousands separators, at most
// `max_frac` fraction digits (rounded half up), trailing zeros trimmed.
std::string Decimal(uint64_t mag, int64_t unit_ns, int max_frac) {
  unsigned __int128 pow = 1;
  for (int i = 0; i < max_frac; ++i) pow *= 10;
  const unsigned __int128 unit = static_cast<uint64_t>(unit_ns);
  const unsigned __int128 q = (static_cast<unsigned __int128>(mag) * pow + unit / 2) / unit;
  std::string s = GroupedCount(static_cast<uint64_t>(q / pow));
  std::string f = absl::StrCat(static_cast<uint64_t>(q % pow));
  if (max_frac == 0 || q % pow == 0) return s;
  f.insert(0, static_cast<size_t>(max_frac) - f.size(), '0');
  while (f.back() == '0') f.pop_back();
  return absl::StrCat(s, ".", f);
}

uint64_t Magnitude(int64_t ns) { return ns < 0 ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns); }

// Whole d, h and min of `mag` (>= 1 min), then the exact seconds.
std::string LongDuration(uint64_t mag) {
  std::string s;
  for (int u = 6; u > kSecondUnit; --u) {
    const uint64_t unit = static_cast<uint64_t>(kUnits[u].ns);
    if (s.empty() && mag < unit) continue;
    if (mag == 0) break;
    absl::StrAppend(&s, s.empty() ? "" : " ", GroupedCount(mag / unit), " ", kUnits[u].name);
    mag %= unit;
  }
  if (mag) absl::StrAppend(&s, " ", Decimal(mag, kUnits[kSecondUnit].ns, 9), " s");
  return s;
}

// |part| / whole (whole > 0) in percent with two decimals, rounded half up,
// in 128-bit to avoid overflow: "0.62%".
std::string PercentDigits(int64_t part, int64_t whole) {
  __int128 t = static_cast<__int128>(part) * 10000;
  if (t < 0) t = -t;
  const uint64_t v = static_cast<uint64_t>((t + whole / 2) / whole);
  return absl::StrFormat("%d.%02d%%", v / 100, v % 100);
}

}  // namespace

void AppendHtmlEscaped(std::string_view text, std::string* out) {
  for (char c : text) {
    switch (c) {
      case '&': out->append("&amp;"); break;
      case '<': out->append("&lt;"); break;
      case '>': out->append("&gt;"); break;
      case '"': out->append("&quot;"); break;
      case '\'': out->append("&#39;"); break;
      case '\t':
      case '\n': out->push_back(c); break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
          out->append("\xEF\xBF\xBD");
        } else {
          out->push_back(c);
        }
    }
  }
}

std::string HtmlEscape(std::string_view text) {
  std::string s;
  AppendHtmlEscaped(text, &s);
  return s;
}

std::string FormatSignedCount(int64_t n) {
  if (n >= 0) return GroupedCount(static_cast<uint64_t>(n));
  return absl::StrCat("-", GroupedCount(static_cast<uint64_t>(-(n + 1)) + 1));
}

std::string FormatFraction(int64_t part, int64_t whole) {
  return absl::StrCat(FormatSignedCount(part), "/", FormatSignedCount(whole));
}

std::string FormatBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  if (bytes < 1000) return absl::StrCat(bytes, " B");
  int unit = 0;
  uint64_t div = 1;
  while (unit < 5 && bytes / div >= 1000) {
    div *= 1000;
    ++unit;
  }
  // One decimal, rounded half up, from integers.
  uint64_t tenths = (bytes * 10 + div / 2) / div;
  if (bytes > UINT64_MAX / 10) tenths = bytes / (div / 10);
  return absl::StrCat(tenths / 10, ".", tenths % 10, " ", kUnits[unit]);
}

std::string FormatDuration(int64_t ns) {
  const uint64_t mag = Magnitude(ns);
  const char* sign = ns < 0 ? "-" : "";
  const int u = UnitOf(mag, kSecondUnit + 1);
  if (u > kSecondUnit) return absl::StrCat(sign, LongDuration(mag));
  return absl::StrCat(sign, Decimal(mag, kUnits[u].ns, 9), " ", kUnits[u].name);
}

std::string FormatShortDuration(int64_t ns, int digits) {
  const uint64_t mag = Magnitude(ns);
  const int u = UnitOf(mag, 6);
  return absl::StrCat(ns < 0 ? "-" : "", Decimal(mag, kUnits[u].ns, digits), " ", kUnits[u].name);
}

std::vector<AxisTick> AxisTicks(int64_t span_ns) {
  constexpr int kMaxIntervals = 8;
  const int u = UnitOf(static_cast<uint64_t>(std::max<int64_t>(span_ns, 1)), 6);
  // The step is m x 10^e units, m in {1, 2, 5}; e >= -1 (>= 0 in ns).
  int e = u == 0 ? 0 : -1;
  int m = 1;
  __int128 step = kUnits[u].ns / (u == 0 ? 1 : 10);
  for (int k = 0; span_ns / step > kMaxIntervals; ++k) {
    static constexpr int kNext[] = {2, 5, 10};
    const int next = kNext[k % 3];
    step = step / m * next;
    m = next == 10 ? 1 : next;
    if (next == 10) ++e;
  }
  std::vector<AxisTick> ticks;
  for (int64_t k = 0; k * step <= span_ns; ++k) {
    // The label: k x m x 10^e units, exact (one decimal when e is -1).
    uint64_t v = static_cast<uint64_t>(k) * static_cast<uint64_t>(m);
    for (int i = 0; i < e; ++i) v *= 10;
    std::string label = k == 0 ? "0" : absl::StrCat("+", Decimal(v, e < 0 ? 10 : 1, 1), " ", kUnits[u].name);
    ticks.push_back(AxisTick{static_cast<int64_t>(k * step), std::move(label)});
  }
  return ticks;
}

std::string FormatPercent(int64_t lag_ns, int64_t base_ns) {
  if (base_ns <= 0) return "";
  return absl::StrCat(lag_ns < 0 ? "-" : "+", PercentDigits(lag_ns, base_ns));
}

std::string FormatShare(int64_t part, int64_t whole) {
  if (whole <= 0) return "";
  return absl::StrCat(part < 0 ? "-" : "", PercentDigits(part, whole));
}

std::string TruncateUtf8(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  size_t n = max_bytes;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return absl::StrCat(std::string(s.substr(0, n)), "\xE2\x80\xA6");
}

std::string Td(std::string_view text) {
  std::string o = "<td>";
  AppendHtmlEscaped(text, &o);
  return o + "</td>";
}
std::string TdN(const std::string& text) { return absl::StrCat("<td class=\"n\">", text, "</td>"); }

}  // namespace tracemill::report
