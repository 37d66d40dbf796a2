#include "formats/common/json_out.h"

#include "formats/common/json_text.h"

namespace tracemill::formats::json_out {

namespace {

// The eight decimal digits of v < 10^8 (leading zeros included) as ASCII in
// a little-endian word, without a loop: split 4/4, then 2/2, then 1/1 in
// all lanes at once with multiply-shift division (x * 10486 >> 20 == x / 100
// for x < 10^4, x * 103 >> 10 == x / 10 for x < 100).
inline uint64_t EightDigits(uint32_t v) {
  const uint64_t hi = v / 10000, lo = v - hi * 10000;
  const uint64_t abcd_efgh = hi | (lo << 32);
  const uint64_t ab_ef = ((abcd_efgh * 10486) >> 20) & 0x0000007F0000007Full;
  const uint64_t cd_gh = abcd_efgh - 100 * ab_ef;
  const uint64_t pairs = ab_ef | (cd_gh << 16);
  const uint64_t tens = ((pairs * 103) >> 10) & 0x000F000F000F000Full;
  const uint64_t ones = pairs - 10 * tens;
  return (tens | (ones << 8)) + 0x3030303030303030ull;
}

inline char* Eight(char* p, uint32_t v) {  // exactly eight digits
  const uint64_t d = EightDigits(v);
  std::memcpy(p, &d, 8);
  return p + 8;
}

// v < 10^8 without leading zeros; stores 8 bytes, advances by the digits.
inline char* Short(char* p, uint32_t v) {
  const int n = 1 + (v >= 10) + (v >= 100) + (v >= 1000) + (v >= 10000) + (v >= 100000) +
                (v >= 1000000) + (v >= 10000000);
  const uint64_t d = EightDigits(v) >> (8 * (8 - n));
  std::memcpy(p, &d, 8);
  return p + n;
}

}  // namespace

// Groups of eight digits, each converted without a loop: an epoch-ns
// timestamp (19 digits) costs two 64-bit divisions by constants and three
// word conversions, not a chain of ten dependent divisions.
char* U64(char* p, uint64_t v) {
  constexpr uint64_t k8 = 100000000ull, k16 = 10000000000000000ull;
  if (v < k8) return Short(p, static_cast<uint32_t>(v));
  if (v < k16) return Eight(Short(p, static_cast<uint32_t>(v / k8)), static_cast<uint32_t>(v % k8));
  const uint64_t rest = v % k16;
  p = Short(p, static_cast<uint32_t>(v / k16));
  return Eight(Eight(p, static_cast<uint32_t>(rest / k8)), static_cast<uint32_t>(rest % k8));
}

char* StringSlow(char* p, std::string_view s) {
  // Rare (non-ASCII names, quotes): reuse the shared escaper.
  thread_local std::string scratch;
  scratch.clear();
  AppendJsonString(s, &scratch);
  std::memcpy(p, scratch.data(), scratch.size());
  return p + scratch.size();
}

void JsonOut::Grow(size_t n) {
  Flush();
  if (n > buf_->capacity()) buf_->Reserve(n + kSlack);
}

void JsonOut::Flush() {
  if (size_ == 0) return;
  if (status_.ok()) status_ = file_->Append(std::string_view(buf_->data(), size_));
  size_ = 0;
}

}  // namespace tracemill::formats::json_out
