#pragma once
// Protocol Buffers wire format, read directly from a byte buffer: varints,
// fixed-width values, length-delimited fields and skipping of unknown fields
// (proto2 groups included).
//
// Spec: https://protobuf.dev/programming-guides/encoding/ . A varint is at
// most 10 bytes; a 10th byte with its continuation bit set is an error (as
// in protobuf's own parser, extra high bits of the 10th byte are dropped).
//
// Why not protobuf's `CodedInputStream`: it copies strings out of the buffer
// unless aliasing is enabled, checks limits through a stack of pushed limits,
// and its `ReadTag` / `ReadVarint64` are not inlined across the library
// boundary (Debian ships libprotobuf as a shared library). These helpers are
// a few inlined lines over two pointers; bench/paddle measures the
// difference (bench/RESULTS.md).
//
// Every function here takes `p` (the next byte) and `end` (one past the
// last byte of the enclosing message) and returns the pointer past what it
// read, or nullptr when the input is malformed; `DescribeWireError` tells
// why, off the hot path.
#include <cstdint>
#include <cstring>
#include <string_view>

namespace tracemill::formats::wire {

// Wire types (the low 3 bits of a tag).
enum WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

// WireTypeName returns "varint", "64-bit", "length-delimited", ... or
// "invalid" for 6 and 7.
const char* WireTypeName(uint32_t wire_type);

// ReadVarintSlow: the byte-at-a-time decoder (near the end of a buffer).
inline const uint8_t* ReadVarintSlow(const uint8_t* p, const uint8_t* end, uint64_t* out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (p >= end) return nullptr;
    const uint8_t b = *p++;
    v |= static_cast<uint64_t>(b & 0x7F) << (shift < 64 ? shift : 0);
    if (b < 0x80) {
      *out = v;
      return p;
    }
  }
  return nullptr;  // 10 bytes, all with the continuation bit: malformed
}

// ReadVarint decodes one varint at `p` into `*out`. Returns nullptr if it is
// cut off by `end` or longer than 10 bytes. `limit` >= `end` is how far the
// buffer may be read (the end of the file when `end` is the end of a nested
// message); bytes past `end` are only looked at, never used.
//
// With 10 readable bytes it loads 8 bytes at once, finds the last byte from the
// cleared high bits and compacts the 7-bit groups with three shift/mask
// steps: a 9-byte epoch-ns timestamp costs the same as a 2-byte varint, and
// there is no data-dependent branch per byte (perf: the byte loop was a
// third of decoding, bench/RESULTS.md).
inline const uint8_t* ReadVarint(const uint8_t* p, const uint8_t* end, uint64_t* out,
                                 const uint8_t* limit = nullptr) {
  if (p < end && *p < 0x80) [[likely]] {
    *out = *p;
    return p + 1;
  }
  if (limit == nullptr) limit = end;
  if (limit - p < 10 || p >= end) return ReadVarintSlow(p, end, out);
  uint64_t x;
  std::memcpy(&x, p, 8);
  const uint64_t stop = ~x & 0x8080808080808080ull;  // bytes without a continuation bit
  uint64_t v;
  const uint8_t* next;
  if (stop) {
    const int len = (__builtin_ctzll(stop) >> 3) + 1;  // 2..8 bytes
    if (len < 8) x &= (uint64_t{1} << (len * 8)) - 1;
    next = p + len;
    v = x;
  } else {
    next = p + 8;
    v = x;
  }
  // Compact the 7-bit groups of the (up to) 8 bytes: 8x7 -> 4x14 -> 2x28 -> 56.
  v = ((v & 0x7F007F007F007F00ull) >> 1) | (v & 0x007F007F007F007Full);
  v = ((v & 0x3FFF00003FFF0000ull) >> 2) | (v & 0x00003FFF00003FFFull);
  v = ((v & 0x0FFFFFFF00000000ull) >> 4) | (v & 0x000000000FFFFFFFull);
  if (!stop) {
    // 9 or 10 bytes: bits 56..62 from byte 9, bit 63 from byte 10.
    const uint8_t b8 = p[8];
    v |= static_cast<uint64_t>(b8 & 0x7F) << 56;
    if (b8 < 0x80) {
      next = p + 9;
    } else {
      const uint8_t b9 = p[9];
      if (b9 >= 0x80) return nullptr;  // longer than 10 bytes
      v |= static_cast<uint64_t>(b9) << 63;
      next = p + 10;
    }
  }
  if (next > end) return nullptr;  // cut off by the end of its message
  *out = v;
  return next;
}

// ReadLength reads a length prefix and checks the payload fits before `end`.
// On success `*len` is the payload size and the returned pointer its start.
inline const uint8_t* ReadLength(const uint8_t* p, const uint8_t* end, uint64_t* len,
                                 const uint8_t* limit = nullptr) {
  p = ReadVarint(p, end, len, limit);
  if (p == nullptr || *len > static_cast<uint64_t>(end - p)) return nullptr;
  return p;
}

// SkipField skips the payload of a field with wire type `wire_type` whose tag
// (field number `field`) has just been read. Groups are skipped to their
// matching end tag, at most `kMaxGroupDepth` deep. Returns nullptr on a
// truncated payload, an invalid wire type (6, 7), a stray end-group tag or a
// group that does not end.
inline constexpr int kMaxGroupDepth = 64;
const uint8_t* SkipField(const uint8_t* p, const uint8_t* end, uint32_t field, uint32_t wire_type,
                         int depth = 0);

// WireError: why a read failed, for an error message.
struct WireError {
  const uint8_t* at = nullptr;  // where the failed item starts
  const char* what = "";        // "truncated varint", "varint longer than 10 bytes", ...
};

// DescribeVarintError explains why `ReadVarint(p, end, ...)` failed.
WireError DescribeVarintError(const uint8_t* p, const uint8_t* end);
// DescribeLengthError explains why `ReadLength(p, end, ...)` failed; `*len`
// gets the decoded length if the prefix itself was readable (else 0).
WireError DescribeLengthError(const uint8_t* p, const uint8_t* end, uint64_t* len);
// DescribeSkipError explains why `SkipField` failed.
WireError DescribeSkipError(const uint8_t* p, const uint8_t* end, uint32_t field,
                            uint32_t wire_type, int depth = 0);

}  // namespace tracemill::formats::wire
