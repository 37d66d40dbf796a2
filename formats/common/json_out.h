#pragma once
// Raw-pointer JSON emitters for writers that format millions of small events:
// the caller reserves a worst-case size once per event (`JsonOut::Reserve`),
// then writes with unchecked pointer bumps, so no per-append capacity checks
// and no allocation. Numbers are written with digit-pair tables (int) or
// `std::to_chars` shortest round-trip (double); strings are quoted and
// escaped, invalid UTF-8 replaced by U+FFFD (RFC 8259 output whatever the
// input bytes).
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "formats/chrome/output_file.h"
#include "formats/common/byte_buffer.h"
#include "formats/common/large_alloc.h"

namespace tracemill::formats::json_out {

// Lit copies a string literal (without its NUL).
template <size_t N>
inline char* Lit(char* p, const char (&s)[N]) {
  std::memcpy(p, s, N - 1);
  return p + N - 1;
}

// Bytes copies `s` as it is. An empty view may have no data pointer (a
// Paddle field that is absent), which memcpy must not be given.
inline char* Bytes(char* p, std::string_view s) {
  if (!s.empty()) std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

// U64 / I64 write decimal integers (at most 20 bytes).
char* U64(char* p, uint64_t v);
inline char* I64(char* p, int64_t v) {
  if (v < 0) {
    *p++ = '-';
    return U64(p, 0 - static_cast<uint64_t>(v));
  }
  return U64(p, static_cast<uint64_t>(v));
}

// Double writes the shortest decimal that reads back as `v` (at most 24
// bytes); non-finite values are written as `null` (JSON has no NaN).
inline char* Double(char* p, double v) {
  if (!std::isfinite(v)) return Lit(p, "null");
  return std::to_chars(p, p + 32, v).ptr;
}

// MaxStringBytes: the most `String` writes for `n` input bytes.
inline constexpr size_t MaxStringBytes(size_t n) { return 6 * n + 2; }

// StringSlow: the escaping path of `String`.
char* StringSlow(char* p, std::string_view s);

// String writes `s` (raw bytes) as a quoted JSON string. The common case,
// printable ASCII without `"` or `\`, is checked 8 bytes at a time and copied.
inline char* String(char* p, std::string_view s) {
  const char* d = s.data();
  size_t n = s.size(), i = 0;
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  for (; i + 8 <= n; i += 8) {
    uint64_t x;
    std::memcpy(&x, d + i, 8);
    const uint64_t quote = x ^ (kOnes * '"'), slash = x ^ (kOnes * '\\');
    const uint64_t bad = ((x - kOnes * 0x20) & ~x) | ((quote - kOnes) & ~quote) |
                         ((slash - kOnes) & ~slash) | x;
    if (bad & kHigh) return StringSlow(p, s);
  }
  for (; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(d[i]);
    if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) return StringSlow(p, s);
  }
  *p++ = '"';
  p = Bytes(p, s);
  *p++ = '"';
  return p;
}

// JsonOut: a write buffer in front of an `OutputFile`, flushed in ~1 MiB
// chunks (one gzip member each with --compress). The buffer is borrowed so a
// worker reuses one across outputs (a fresh allocation per output would be a
// fresh mmap, i.e. page faults each time).
class JsonOut {
 public:
  JsonOut(OutputFile* file, ByteBuffer* buffer) : file_(file), buf_(buffer) {
    // 2 MiB, a pooled block (large_alloc.h): reused by the next output.
    buf_->Reserve(kHugePage);
  }
  // Reserve returns a cursor with room for `n` bytes; finish with `Commit`.
  char* Reserve(size_t n) {
    if (size_ + n > buf_->capacity()) Grow(n);
    return buf_->data() + size_;
  }
  // Commit ends a write started by `Reserve` at cursor `p`; flushes when full.
  void Commit(char* p) {
    size_ = static_cast<size_t>(p - buf_->data());
    if (size_ >= kFlushBytes) Flush();
  }
  void Append(std::string_view s) { Commit(Bytes(Reserve(s.size()), s)); }
  // Flush hands the buffer to the file; the first error sticks in `status()`.
  void Flush();
  const absl::Status& status() const { return status_; }

 private:
  static constexpr size_t kFlushBytes = 1 << 20;
  static constexpr size_t kSlack = 64 << 10;
  void Grow(size_t n);

  OutputFile* file_;
  ByteBuffer* buf_;
  size_t size_ = 0;
  absl::Status status_;
};

}  // namespace tracemill::formats::json_out
