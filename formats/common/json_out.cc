#include "formats/common/json_out.h"

#include "formats/common/json_text.h"

namespace tracemill::formats::json_out {
namespace {

constexpr char kDigitPairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

}  // namespace

char* U64(char* p, uint64_t v) {
  char tmp[20];
  char* const e = tmp + sizeof(tmp);
  char* q = e;
  while (v >= 100) {
    const uint64_t r = v % 100;
    v /= 100;
    q -= 2;
    std::memcpy(q, kDigitPairs + 2 * r, 2);
  }
  if (v >= 10) {
    q -= 2;
    std::memcpy(q, kDigitPairs + 2 * v, 2);
  } else {
    *--q = static_cast<char>('0' + v);
  }
  const size_t n = static_cast<size_t>(e - q);
  std::memcpy(p, q, n);
  return p + n;
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
  if (n > buf_.capacity()) buf_.Reserve(n + kSlack);
}

void JsonOut::Flush() {
  if (size_ == 0) return;
  if (status_.ok()) status_ = file_->Append(std::string_view(buf_.data(), size_));
  size_ = 0;
}

}  // namespace tracemill::formats::json_out
