#pragma once
// The table of per-event drop reasons. Every event a decoder reads is either
// written or counted here under exactly one reason, so that for every input
// `events_read == events_written + sum(dropped)` holds by construction
// (Perfetto's stats.h is the model: one X-macro row per counter).
#include <array>
#include <cstdint>
#include <string_view>

namespace tracemill::formats {

// X(enumerator, manifest key, description)
#define TM_DROP_REASONS(X)                                                        \
  X(kTruncated, "truncated", "event object cut off by the end of the input")      \
  X(kMalformed, "malformed", "event object is not valid JSON")                    \
  X(kNotAnObject, "not_an_object", "array element is not a JSON object")          \
  X(kEmptyObject, "empty_object", "empty {} element (skipped)")                   \
  X(kMissingPh, "missing_ph", "event has no string `ph`")                         \
  X(kMissingKind, "missing_kind", "run event log line has no string `kind`")      \
  X(kMissingTs, "missing_ts", "non-metadata event has no `ts`")                   \
  X(kBadTs, "bad_ts", "`ts` is not a decimal number in the int64 ns range")       \
  X(kBadDur, "bad_dur", "`dur` is negative or not a decimal number")                \
  X(kCorruptMessage, "corrupt_message",                                           \
    "protobuf message cut off or malformed (length past the end, wrong wire type)") \
  X(kNotDisplayed, "not_displayed",                                               \
    "rank or trainer outside --display-size (csp reads it for pipeline markers)")   \
  X(kOtherDevice, "other_device",                                                 \
    "memory event or DCGM row of a GPU other than its output's (as CrossStackProfiler)") \
  X(kNaSample, "na_sample", "DCGM row with N/A or a non-numeric value (row dropped)") \
  X(kBadRow, "bad_row", "DCGM row with the wrong number of columns, or before any header") \
  X(kUnmatchedEnd, "unmatched_end", "`E` event with no open `B` on its pid/tid (surplus end)") \
  X(kTimeBase, "time_base", "smdebug pid-0 record carrying only the file's time base (applied to every ts)") \
  X(kDuplicateMetadata, "duplicate_metadata", "metadata record repeating one already kept for the same process or thread") \
  X(kWindow, "window", "outside the --start/--end or --start-step/--end-step window") \
  X(kBadSample, "bad_sample", "system metrics line without a decimal `Timestamp`/`Value` or a `Name`") \
  X(kBadNetSample, "bad_net_sample",                                               \
    "network log line whose `name` is not tx/rx, `ph` not C, or `args` not an object") \
  X(kInputRejected, "input_rejected",                                             \
    "input decoded but rejected before writing (spill file error, or its output is another shard's)") \
  X(kOutputFailed, "output_failed",                                               \
    "its output could not be written (disk full, I/O error, file size limit) and was removed")

enum class DropReason : uint8_t {
#define TM_ENUM_(e, key, desc) e,
  TM_DROP_REASONS(TM_ENUM_)
#undef TM_ENUM_
      kCount
};

inline constexpr int kNumDropReasons = static_cast<int>(DropReason::kCount);

// DropReasonKey returns the stable manifest key of `r` (e.g. "bad_ts").
std::string_view DropReasonKey(DropReason r);
// DropReasonDescription returns one sentence describing `r`.
std::string_view DropReasonDescription(DropReason r);

// DropCounts: one counter per reason.
struct DropCounts {
  std::array<uint64_t, kNumDropReasons> n{};
  void Add(DropReason r, uint64_t k = 1) { n[static_cast<int>(r)] += k; }
  uint64_t Total() const {
    uint64_t t = 0;
    for (uint64_t v : n) t += v;
    return t;
  }
  uint64_t operator[](DropReason r) const { return n[static_cast<int>(r)]; }
};

}  // namespace tracemill::formats
