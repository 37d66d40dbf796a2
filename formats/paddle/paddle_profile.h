#pragma once
// Paddle profiler output: one serialized proto2 `paddle.platform.proto.Profile`
// per rank (`<root>/profile/<anything>.<rank>`), no framing, decoded
// zero-copy from the file's buffer.
//
// Spec: formats/paddle/profiler.proto (wire-compatible with PaddlePaddle's
// paddle/fluid/platform/profiler.proto). proto2 rules apply: fields may come
// in any order and repeat (the last scalar wins; a repeated `memcopy`
// message merges into the previous one), unknown fields of any wire type
// (groups included) are skipped, an enum value the schema does not know
// leaves the field unchanged (so it reads as its first value, `CPU` /
// `CUDAPlace`, unless set before), and `device_id` is a plain int64 varint,
// so -1 (a CUDA runtime API call) is 10 bytes on the wire.
//
// Zero-copy: `name`, `detail_info`, `alloc_in` and `free_in` are views into
// the input buffer (raw bytes, not validated as UTF-8: the writer repairs
// them), so the buffer must outlive the decoded events. Nothing is allocated
// per event: events go to a caller's sink, or into vectors the caller reuses
// across files (`DecodePaddleProfile`).
//
// Damage (a truncated file, a length running past the end, a known field with
// the wrong wire type, a varint longer than 10 bytes, an invalid wire type)
// stops the decode with kDataLoss naming the byte offset and the message;
// every event before the damage has been delivered.
//
// Measured choice (bench/paddle, bench/RESULTS.md): this direct reader,
// not protobuf's generated `Profile::ParseFromString` on an Arena.
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "formats/common/large_alloc.h"
#include "formats/paddle/wire_reader.h"

namespace tracemill::formats {

// Event.type (enum EventType).
enum class PaddleEventType : uint8_t { kCpu = 0, kGpuKernel = 1 };
// MemEvent.place (enum Place).
enum class PaddleMemPlace : uint8_t { kCudaPlace = 0, kCpuPlace = 1, kCudaPinnedPlace = 2 };

// PaddleEvent: one `Event` (an op, a CUDA runtime call or a GPU kernel).
// Times are the profiler's absolute ns (Paddle's PosixInNsec); fields a
// message omits read as their proto2 defaults (0, "", CPU).
struct PaddleEvent {
  std::string_view name;         // field 1, view into the input
  std::string_view detail_info;  // field 9, view into the input
  uint64_t start_ns = 0;         // field 2
  uint64_t end_ns = 0;           // field 3
  int64_t device_id = 0;         // field 5; -1 = CUDA runtime API call
  int64_t sub_device_id = 0;     // field 6 (block, stream)
  uint64_t memcopy_bytes = 0;    // field 7 { 1 bytes }
  PaddleEventType type = PaddleEventType::kCpu;  // field 8
};
static_assert(std::is_trivially_copyable_v<PaddleEvent>);
// 80 bytes x 50k events per rank: a displayed rank costs ~4 MB while its
// output is written (plus its file buffer).
static_assert(sizeof(PaddleEvent) == 80);

// PaddleMemEvent: one `MemEvent` (an allocation alive from start to end).
struct PaddleMemEvent {
  std::string_view alloc_in;  // field 7, view into the input
  std::string_view free_in;   // field 8, view into the input
  uint64_t start_ns = 0;      // field 1
  uint64_t end_ns = 0;        // field 2
  uint64_t bytes = 0;         // field 3
  uint64_t thread_id = 0;     // field 5
  uint32_t device_id = 0;     // field 6
  PaddleMemPlace place = PaddleMemPlace::kCudaPlace;  // field 4
};
static_assert(std::is_trivially_copyable_v<PaddleMemEvent>);

// PaddleParseResult: what one decode found.
struct PaddleParseResult {
  uint64_t events = 0;      // Events delivered
  uint64_t mem_events = 0;  // MemEvents delivered
  uint64_t start_ns = 0, end_ns = 0;  // Profile fields 2 and 3 (0 if absent)
  // OK, or kDataLoss: "paddle profile: Event #12 at byte 345: ...". Everything
  // before the damage was delivered.
  absl::Status status;
  uint64_t error_offset = 0;       // byte offset of the damage
  bool damaged_event = false;      // the damage is inside (or cuts) an Event
  bool damaged_mem_event = false;  // ... a MemEvent
};

namespace paddle_internal {

// ParseProblem: why a message failed to parse (built off the hot path).
struct ParseProblem {
  const uint8_t* at = nullptr;  // where the offending item starts
  const char* what = "";        // static text
  const char* message = "";     // "Event", "MemEvent", "MemCopy", "Profile"
  uint32_t field = 0;
  const char* field_of = nullptr;  // the message `field` belongs to, if not `message`
  uint32_t wire_type = 0;
  int expected_wire_type = -1;  // >= 0 for a wrong wire type
  uint64_t length = 0;          // for "length runs past the end"
  uint64_t bytes_left = 0;      // ... and what was left after the prefix
};

// ParseEvent / ParseMemEvent parse one message body [p, end); the buffer is
// readable up to `limit` >= `end` (see wire::ReadVarint). `strict` (format
// sniffing) rejects unknown fields. Return false and fill `*problem` on
// malformed input.
bool ParseEvent(const uint8_t* p, const uint8_t* end, const uint8_t* limit, bool strict,
                PaddleEvent* e, ParseProblem* problem);
bool ParseMemEvent(const uint8_t* p, const uint8_t* end, const uint8_t* limit, bool strict,
                   PaddleMemEvent* m, ParseProblem* problem);

// Fills `r->status` / `error_offset` from `problem`; `index` is the number of
// the Event/MemEvent involved (1-based), 0 for a Profile-level problem.
void SetError(const uint8_t* base, uint64_t size, const ParseProblem& problem, uint64_t index,
              PaddleParseResult* r);

}  // namespace paddle_internal

// ParsePaddleProfile walks the serialized Profile in `bytes` and calls
// `sink.OnEvent(const PaddleEvent&)` / `sink.OnMemEvent(const PaddleMemEvent&)`
// for each message, in file order (the order of each repeated field).
// Views in the messages point into `bytes`. See the file comment for errors.
// Optional sink members skip what it does not need: `bool WantEvent(body,
// body_end)` (false: the Event is counted, not decoded) and
// `void SkipMemEvents()` (MemEvents counted, not decoded). Skipped bodies are
// checked at the framing level only (tags, lengths, top-level wire types).
template <typename Sink>
PaddleParseResult ParsePaddleProfile(std::string_view bytes, Sink& sink);

// PaddleProfile: a decoded profile; the vectors are reused across files by
// `DecodePaddleProfile` (no per-file or per-event allocation once warm).
struct PaddleProfile {
  std::vector<PaddleEvent, LargeAllocator<PaddleEvent>> events;
  std::vector<PaddleMemEvent, LargeAllocator<PaddleMemEvent>> mem_events;
  void Clear() {
    events.clear();
    mem_events.clear();
  }
};

// DecodePaddleProfile decodes `bytes` into `out` (cleared first).
PaddleParseResult DecodePaddleProfile(std::string_view bytes, PaddleProfile* out);

// LooksLikePaddleProfile: a wire-shape sniff on the first bytes of a file
// (`complete` if `head` is the whole file). True if the bytes parse as a
// Profile whose top-level fields are all known (1, 2, 3, 4 with their wire
// types) and whose first Event/MemEvent bodies hold only known fields: JSON
// starting with "\n[" or "\n\n" parses as field 1 for one byte, then fails.
bool LooksLikePaddleProfile(std::string_view head, bool complete);

// ---------------------------------------------------------------------------
// Implementation.

template <typename Sink>
PaddleParseResult ParsePaddleProfile(std::string_view bytes, Sink& sink) {
  using namespace wire;
  PaddleParseResult r;
  const uint8_t* const base = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint8_t* const end = base + bytes.size();
  const uint8_t* p = base;
  paddle_internal::ParseProblem problem;
  problem.message = "Profile";
  while (p < end) {
    const uint8_t* const tag_at = p;
    uint64_t tag;
    p = ReadVarint(p, end, &tag);
    if (!p) {
      WireError w = DescribeVarintError(tag_at, end);
      problem.at = w.at;
      problem.what = w.what;
      paddle_internal::SetError(base, bytes.size(), problem, 0, &r);
      return r;
    }
    const uint32_t field = static_cast<uint32_t>(tag >> 3);
    const uint32_t wt = static_cast<uint32_t>(tag & 7);
    if (field == 1 || field == 4) {
      const bool is_event = field == 1;
      problem.message = is_event ? "Event" : "MemEvent";
      const uint64_t index = (is_event ? r.events : r.mem_events) + 1;
      if (wt != kLengthDelimited) {
        problem.at = tag_at;
        problem.field = field;
        problem.field_of = "Profile";  // field 1 (events) or 4 (mem_events) of the Profile
        problem.wire_type = wt;
        problem.expected_wire_type = kLengthDelimited;
        problem.what = "wrong wire type";
        (is_event ? r.damaged_event : r.damaged_mem_event) = true;
        paddle_internal::SetError(base, bytes.size(), problem, index, &r);
        return r;
      }
      uint64_t len;
      const uint8_t* body = ReadLength(p, end, &len);
      if (!body) {
        WireError w = DescribeLengthError(p, end, &len);
        problem.at = tag_at;
        problem.what = w.what;
        problem.length = len;
        problem.bytes_left = static_cast<uint64_t>(end - p);
        (is_event ? r.damaged_event : r.damaged_mem_event) = true;
        paddle_internal::SetError(base, bytes.size(), problem, index, &r);
        return r;
      }
      // A sink may skip bodies it does not need (framing still checked).
      if constexpr (requires(Sink& k, const uint8_t* b) { k.WantEvent(b, b); }) {
        if (is_event && !sink.WantEvent(body, body + len)) {
          ++r.events;
          p = body + len;
          problem.message = "Profile";
          continue;
        }
      }
      if constexpr (requires(Sink& k) { k.SkipMemEvents(); }) {
        if (!is_event) {
          ++r.mem_events;
          p = body + len;
          problem.message = "Profile";
          continue;
        }
      }
      bool ok;
      if (is_event) {
        PaddleEvent e;
        ok = paddle_internal::ParseEvent(body, body + len, end, false, &e, &problem);
        if (ok) {
          sink.OnEvent(e);
          ++r.events;
        }
      } else {
        PaddleMemEvent m;
        ok = paddle_internal::ParseMemEvent(body, body + len, end, false, &m, &problem);
        if (ok) {
          sink.OnMemEvent(m);
          ++r.mem_events;
        }
      }
      if (!ok) {
        (is_event ? r.damaged_event : r.damaged_mem_event) = true;
        paddle_internal::SetError(base, bytes.size(), problem, index, &r);
        return r;
      }
      p = body + len;
      problem.message = "Profile";
    } else if (field == 2 || field == 3) {
      if (wt != kVarint) {
        problem.at = tag_at;
        problem.field = field;
        problem.wire_type = wt;
        problem.expected_wire_type = kVarint;
        problem.what = "wrong wire type";
        paddle_internal::SetError(base, bytes.size(), problem, 0, &r);
        return r;
      }
      uint64_t v;
      const uint8_t* q = ReadVarint(p, end, &v);
      if (!q) {
        WireError w = DescribeVarintError(p, end);
        problem.at = w.at;
        problem.field = field;
        problem.what = w.what;
        paddle_internal::SetError(base, bytes.size(), problem, 0, &r);
        return r;
      }
      (field == 2 ? r.start_ns : r.end_ns) = v;
      p = q;
    } else {
      const uint8_t* q = (field == 0 || (tag >> 32)) ? nullptr : SkipField(p, end, field, wt);
      if (!q) {
        problem.field = field;
        problem.wire_type = wt;
        if (field == 0 || (tag >> 32)) {
          problem.at = tag_at;
          problem.what = "invalid field number 0 or above 2^29";
        } else if (wt > kFixed32 || wt == kEndGroup) {
          problem.at = tag_at;
          problem.what = DescribeSkipError(p, end, field, wt).what;
        } else {
          WireError w = DescribeSkipError(p, end, field, wt);
          problem.at = w.at;
          problem.what = w.what;
        }
        paddle_internal::SetError(base, bytes.size(), problem, 0, &r);
        return r;
      }
      p = q;
    }
  }
  return r;
}

}  // namespace tracemill::formats
