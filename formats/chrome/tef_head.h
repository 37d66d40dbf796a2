#pragma once
// The head of a Trace Event Format document: what its first bytes say about
// the rank and devices before a single event is decoded.
//
// Kineto writes its top-level keys in a fixed order: `schemaVersion`,
// `deviceProperties`, `distributedInfo`, ..., then `traceEvents`, then a few
// more (`traceName`, `displayTimeUnit`, `baseTimeNanoseconds`). So the rank
// and the device count of a PyTorch profiler file are in its first few KiB
// (the sample job: `distributedInfo` at byte 48), while the file itself is
// 10 MB to 2 GB. The pre-scan that plans a sharded run (pipeline/plan.h)
// reads that head only. Another writer may put `distributedInfo` after
// `traceEvents`; then the head cannot tell, and says so.
//
// The members seen are applied by `TefDecoder` itself (a synthetic document
// `{<members>,"traceEvents":[]}`), so the head's rank is read by exactly the
// rules of the full decode (the first `distributedInfo.rank` wins, negative ranks are
// ignored, a string rank "3" is read as 3).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "formats/chrome/tef_decoder.h"

namespace tracemill::formats {

// TefHead: what the head of one JSON document shows.
struct TefHead {
  enum class Shape {
    kArray,   // JSON Array Format: no top-level keys, so no rank in the content
    kObject,  // JSON Object Format
    kOther,   // not a trace document (or nothing but whitespace)
  };
  Shape shape = Shape::kOther;
  // The whole top-level object was seen (its closing `}`): every member the
  // full decode will apply was applied here.
  bool complete = false;
  // Set when `traceEvents` was reached (or the document ended) before the
  // head ran out: `rank` and `device_count` then hold every member before
  // `traceEvents`, and those after it up to where the head ends when the
  // events array fits in the head (so a longer head may say more; the full
  // decode checks what the plan used).
  bool reached_events = false;
  // The head could not be followed (malformed top level): treat as unknown.
  bool malformed = false;
  std::optional<int64_t> rank;  // distributedInfo.rank among the members seen
  int device_count = -1;        // deviceProperties entries among the members seen
};

// ScanTefHead walks the top-level object of `head` (the first bytes of an
// inflated input; all of it when `head_is_whole`) up to `traceEvents`, or to
// the end when the whole document is in `head`, and applies the members it
// passes with `decoder` (reused scratch; one per thread).
TefHead ScanTefHead(std::string_view head, bool head_is_whole, TefDecoder* decoder);

// Events a head must show for its bytes per event to be trusted.
inline constexpr size_t kDensitySampleEvents = 16;

// HeadBytesPerEvent: bytes per event of a TEF document's head (`data`, the
// first bytes of the inflated input): the bytes from `"traceEvents"` (or the
// start, for the JSON Array Format) to the end of the head, divided by the
// `"ph"` keys among them. 0 if fewer than kDensitySampleEvents were seen.
uint32_t HeadBytesPerEvent(std::string_view data);

// HeadTimesBefore2000: every `"ts"` value in `data` (the first bytes of a
// TEF document, from `"traceEvents"` on; at least one) is a number of
// microseconds before 2000-01-01, and `data` has no `baseTimeNanoseconds`:
// the times may count from the file's own start (PyTorch 1.x traces), unless
// the document's tail gives a base (newer Kineto writes it after the
// events: the caller looks there).
bool HeadTimesBefore2000(std::string_view data);

}  // namespace tracemill::formats
