#include "analysis/tables_text.h"

#include <cstdio>
#include <string_view>

namespace tracemill::analysis {
namespace {

// Days since 1970-01-01 -> civil date (Howard Hinnant's days_from_civil inverse).
void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2);
}

void Digits(unsigned v, int n, char* out) {
  for (int i = n - 1; i >= 0; --i, v /= 10) out[i] = static_cast<char>('0' + v % 10);
}

}  // namespace

int FormatIsoTime(int64_t ns, char* out) {
  const int64_t us = FloorDiv(ns, 1000);
  const int64_t secs = FloorDiv(us, 1000000);
  const unsigned frac = static_cast<unsigned>(us - secs * 1000000);
  const int64_t days = FloorDiv(secs, 86400);
  const unsigned sod = static_cast<unsigned>(secs - days * 86400);
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  if (y < 0 || y > 9999) {
    return std::snprintf(out, 40, "%lld-%02u-%02uT%02u:%02u:%02u.%06uZ", static_cast<long long>(y), m, d, sod / 3600,
                         sod / 60 % 60, sod % 60, frac);
  }
  // YYYY-MM-DDTHH:MM:SS.ffffffZ (27 bytes): no printf on the per-event path.
  Digits(static_cast<unsigned>(y), 4, out);
  out[4] = '-';
  Digits(m, 2, out + 5);
  out[7] = '-';
  Digits(d, 2, out + 8);
  out[10] = 'T';
  Digits(sod / 3600, 2, out + 11);
  out[13] = ':';
  Digits(sod / 60 % 60, 2, out + 14);
  out[16] = ':';
  Digits(sod % 60, 2, out + 17);
  out[19] = '.';
  Digits(frac, 6, out + 20);
  out[26] = 'Z';
  return 27;
}

void AppendIsoTime(int64_t ns, formats::RowBatch* b) {
  char buf[48];
  const int n = FormatIsoTime(ns, buf);
  b->Text(std::string_view(buf, static_cast<size_t>(n)));
}

}  // namespace tracemill::analysis
