#pragma once
// LEB128 varints and zigzag coding, for the compact records tracemill keeps:
// a spilled run's event headers (merge/sorted_run.cc) and a follow job's
// step history (pipeline/follow/step_history.cc).
#include <cstdint>
#include <string>

namespace tracemill::formats {

// PutVarint appends `v` as an unsigned LEB128 varint (1-10 bytes).
inline void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// GetVarint reads a varint at `p` (at least 10 bytes readable, or the end of
// one PutVarint wrote) and advances `p` past it.
inline uint64_t GetVarint(const char*& p) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    const auto b = static_cast<uint8_t>(*p++);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
  }
  return v;
}

// ZigZag: signed -> unsigned with small magnitudes small (0, -1, 1, -2 ->
// 0, 1, 2, 3); UnZigZag inverts it.
inline uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
inline int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

}  // namespace tracemill::formats
