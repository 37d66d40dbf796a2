#pragma once
// Builds TraceData for the merge tests: each event carries a tag in `name`
// so the tests can say which event came out where.
#include <cstdint>
#include <memory>

#include "formats/common/event.h"
#include "formats/common/trace_data.h"

namespace tracemill::merge {

struct Ev {
  char ph;
  int64_t ts_us;
  int64_t dur_us;
  uint32_t tag;
};

inline std::unique_ptr<formats::TraceData> MakeTrace(std::initializer_list<Ev> evs) {
  auto d = std::make_unique<formats::TraceData>();
  for (const Ev& v : evs) {
    formats::Event e{};
    e.phase = v.ph;
    e.ts_ns = v.ts_us * 1000;
    e.dur_ns = v.dur_us * 1000;
    e.name = v.tag;
    e.flags = static_cast<uint8_t>((v.ph == 'M' ? 0 : formats::kHasTs) | (v.ph == 'X' ? formats::kHasDur : 0));
    d->events.push_back(e);
  }
  return d;
}

}  // namespace tracemill::merge
