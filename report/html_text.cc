#include "report/html_text.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tracemill::report {
namespace {

// Integer `mag` / 10^scale as exact decimal text, trailing zeros trimmed,
// at most `max_frac` fraction digits (rounded half up).
std::string Decimal(uint64_t mag, int scale, int max_frac) {
  uint64_t div = 1;
  for (int i = 0; i < scale; ++i) div *= 10;
  if (max_frac < scale) {
    uint64_t cut = 1;
    for (int i = 0; i < scale - max_frac; ++i) cut *= 10;
    mag = (mag + cut / 2) / cut;
    div /= cut;
    scale = max_frac;
  }
  std::string s = absl::StrCat(mag / div);
  uint64_t frac = mag % div;
  if (scale > 0 && frac) {
    std::string f = absl::StrCat(frac);
    f.insert(0, static_cast<size_t>(scale) - f.size(), '0');
    while (!f.empty() && f.back() == '0') f.pop_back();
    absl::StrAppend(&s, ".", f);
  }
  return s;
}

std::string Duration(int64_t ns, int max_frac) {
  uint64_t mag = ns < 0 ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  const char* sign = ns < 0 ? "-" : "";
  if (mag < 1000) return absl::StrCat(sign, mag, " ns");
  if (mag < 1000000) return absl::StrCat(sign, Decimal(mag, 3, max_frac), " \xC2\xB5s");
  if (mag < 1000000000) return absl::StrCat(sign, Decimal(mag, 6, max_frac), " ms");
  return absl::StrCat(sign, Decimal(mag, 9, max_frac), " s");
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

std::string FormatCount(uint64_t n) {
  std::string digits = absl::StrCat(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string FormatSignedCount(int64_t n) {
  if (n >= 0) return FormatCount(static_cast<uint64_t>(n));
  return absl::StrCat("-", FormatCount(static_cast<uint64_t>(-(n + 1)) + 1));
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

std::string FormatDuration(int64_t ns) { return Duration(ns, 9); }
std::string FormatShortDuration(int64_t ns, int digits) { return Duration(ns, digits); }

std::string FormatPercent(int64_t lag_ns, int64_t base_ns) {
  if (base_ns <= 0) return "";
  // Hundredths of a percent, rounded half up, in 128-bit to avoid overflow.
  __int128 t = static_cast<__int128>(lag_ns) * 10000;
  bool neg = t < 0;
  if (neg) t = -t;
  __int128 hundredths = (t + base_ns / 2) / base_ns;
  if (hundredths == 0 && lag_ns != 0) return neg ? "-0.00%" : "+0.00%";
  uint64_t v = static_cast<uint64_t>(hundredths);
  return absl::StrFormat("%s%d.%02d%%", neg ? "-" : "+", v / 100, v % 100);
}

std::string TruncateUtf8(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  size_t n = max_bytes;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return absl::StrCat(std::string(s.substr(0, n)), "\xE2\x80\xA6");
}

}  // namespace tracemill::report
