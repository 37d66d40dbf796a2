#include "formats/paddle/wire_reader.h"

namespace tracemill::formats::wire {

const char* WireTypeName(uint32_t wire_type) {
  switch (wire_type) {
    case kVarint: return "varint";
    case kFixed64: return "64-bit";
    case kLengthDelimited: return "length-delimited";
    case kStartGroup: return "start-group";
    case kEndGroup: return "end-group";
    case kFixed32: return "32-bit";
  }
  return "invalid";
}

const uint8_t* SkipField(const uint8_t* p, const uint8_t* end, uint32_t field, uint32_t wire_type,
                         int depth) {
  uint64_t v;
  switch (wire_type) {
    case kVarint:
      return ReadVarint(p, end, &v);
    case kFixed64:
      return end - p >= 8 ? p + 8 : nullptr;
    case kFixed32:
      return end - p >= 4 ? p + 4 : nullptr;
    case kLengthDelimited:
      p = ReadLength(p, end, &v);
      return p ? p + v : nullptr;
    case kStartGroup: {
      // proto2 groups: fields up to the end-group tag with the same number.
      if (depth >= kMaxGroupDepth) return nullptr;
      while (p < end) {
        uint64_t tag;
        p = ReadVarint(p, end, &tag);
        if (!p) return nullptr;
        const uint32_t f = static_cast<uint32_t>(tag >> 3), wt = static_cast<uint32_t>(tag & 7);
        if (wt == kEndGroup) return f == field ? p : nullptr;
        if (f == 0 || tag >> 32) return nullptr;
        p = SkipField(p, end, f, wt, depth + 1);
        if (!p) return nullptr;
      }
      return nullptr;  // the group never ends
    }
    default:  // kEndGroup without a start, 6, 7
      return nullptr;
  }
}

WireError DescribeVarintError(const uint8_t* p, const uint8_t* end) {
  WireError e;
  e.at = p;
  const uint8_t* q = p;
  for (int i = 0; i < 10; ++i) {
    if (q >= end) {
      e.what = "varint cut off by the end of its message";
      return e;
    }
    if (*q++ < 0x80) {
      e.what = "no error";
      return e;
    }
  }
  e.what = "varint longer than 10 bytes";
  return e;
}

WireError DescribeLengthError(const uint8_t* p, const uint8_t* end, uint64_t* len) {
  *len = 0;
  uint64_t v;
  const uint8_t* q = ReadVarint(p, end, &v);
  if (!q) return DescribeVarintError(p, end);
  *len = v;
  WireError e;
  e.at = p;
  e.what = "length runs past the end of its message";
  return e;
}

WireError DescribeSkipError(const uint8_t* p, const uint8_t* end, uint32_t field,
                            uint32_t wire_type, int depth) {
  WireError e;
  e.at = p;
  uint64_t v;
  switch (wire_type) {
    case kVarint:
      return DescribeVarintError(p, end);
    case kFixed64:
    case kFixed32:
      e.what = "fixed-width value cut off by the end of its message";
      return e;
    case kLengthDelimited:
      return DescribeLengthError(p, end, &v);
    case kStartGroup: {
      if (depth >= kMaxGroupDepth) {
        e.what = "groups nested too deep";
        return e;
      }
      while (p < end) {
        uint64_t tag;
        const uint8_t* q = ReadVarint(p, end, &tag);
        if (!q) return DescribeVarintError(p, end);
        const uint32_t f = static_cast<uint32_t>(tag >> 3), wt = static_cast<uint32_t>(tag & 7);
        if (wt == kEndGroup) {
          e.at = p;
          e.what = f == field ? "no error" : "end-group tag does not match its start";
          return e;
        }
        if (f == 0 || tag >> 32) {
          e.at = p;
          e.what = "invalid field number 0 or above 2^29";
          return e;
        }
        const uint8_t* r = SkipField(q, end, f, wt, depth + 1);
        if (!r) return DescribeSkipError(q, end, f, wt, depth + 1);
        p = r;
      }
      e.at = p;
      e.what = "group cut off by the end of its message";
      return e;
    }
    case kEndGroup:
      e.what = "end-group tag without a start-group";
      return e;
    default:
      e.what = "invalid wire type (6 or 7)";
      return e;
  }
}

}  // namespace tracemill::formats::wire
