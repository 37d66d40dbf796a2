#pragma once
// The event record every stage moves: fixed size, trivially copyable.
//
// Its size sets peak memory while sorting (a 75k-event Kineto file holds 75k
// of these until its output is written), so it stays at 64 bytes: the
// fields the sorter and the namespacer need, plus one span of already
// sanitized JSON (`rest`) for everything else (args and unknown keys), which
// the writer copies out unchanged.
#include <cstdint>
#include <type_traits>

namespace tracemill::formats {

// Event flag bits.
enum EventFlag : uint8_t {
  kHasTs = 1 << 0,      // `ts` was present (metadata events may lack it)
  kHasDur = 1 << 1,     // `dur` was present
  kHasId = 1 << 2,      // `id` interned in `id`
  kHasBindId = 1 << 3,  // `bind_id` (flow v2) interned in `bind_id`
  kHasId2Global = 1 << 4,  // `id2: {"global": x}` interned in `id2`
  kHasTid = 1 << 5,     // `tid` present (interned token in `tid`)
  kHasPid = 1 << 6,     // `pid` present (local process index in `pid`)
  kHasSpan = 1 << 7,    // `B`/`E` paired (PairBeginEnd): `dur_ns` is the pair's
                        // length, for windows only, never written as `dur`
};

// Event: one Trace Event Format record as decoded from one input.
//
// - `ts_ns`: absolute time in ns since the Unix epoch once the input is
//   finished (decoders add `baseTimeNanoseconds` and friends); int64 ns.
// - `dur_ns`: duration in ns (complete events `X`); for a `B`/`E` with
//   `kHasSpan`, the length of its pair (B: ts..ts+dur_ns, E: ts-dur_ns..ts);
//   else 0.
// - `name`, `cat`, `ph`, `tid`: ids into the input's string table (0 = absent);
//   the strings are sanitized JSON string bodies (tid: a raw JSON token).
// - `pid`: index into the input's process table.
// - `id`, `bind_id`, `id2`: ids into the input's id table (1-based), made
//   unique per input by the namespacer at write time.
// - `rest`/`rest_len`: the event's other members as sanitized JSON members
//   (`"args":{...},"s":"t"`), without braces; may be empty.
struct Event {
  int64_t ts_ns;
  int64_t dur_ns;
  const char* rest;
  uint32_t rest_len;
  uint32_t name;
  uint32_t cat;
  uint32_t ph;
  uint32_t pid;
  uint32_t tid;
  uint32_t id;
  uint32_t bind_id;
  uint32_t id2;
  char phase;  // first byte of `ph`, for the sort tie-break and namespacing
  uint8_t flags;
};
static_assert(sizeof(Event) == 64, "Event size sets peak memory while sorting");
static_assert(std::is_trivially_copyable_v<Event>);

}  // namespace tracemill::formats
