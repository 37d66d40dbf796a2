#pragma once
// The table of per-event drop reasons. Every event a decoder reads is either
// written or counted here under exactly one reason, so that for every input
// `events_read == events_written + sum(dropped)` holds by construction
// (Perfetto's stats.h is the model: one X-macro row per counter).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tracemill::formats {

// X(enumerator, manifest key, kind, description). kLoss: the event was
// lost to bad input or a failure (an input with most of its events lost this
// way counts as one with errors); kDesign: left out on purpose (outside a
// window, not selected, a record carrying only the time base, a duplicate).
#define TM_DROP_REASONS(X)                                                        \
  X(kTruncated, "truncated", kLoss, "event object cut off by the end of the input or a hole") \
  X(kMalformed, "malformed", kLoss, "event object is not valid JSON")                    \
  X(kNotAnObject, "not_an_object", kLoss, "array element is not a JSON object")          \
  X(kEmptyObject, "empty_object", kDesign, "empty {} element (skipped)")                   \
  X(kMissingPh, "missing_ph", kLoss, "event has no string `ph`")                         \
  X(kMissingKind, "missing_kind", kLoss, "run event log line has no string `kind`")      \
  X(kMissingTs, "missing_ts", kLoss, "non-metadata event has no `ts`")                   \
  X(kBadTs, "bad_ts", kLoss, "`ts` is not a decimal number in the int64 ns range")       \
  X(kBadDur, "bad_dur", kLoss, "`dur` is negative or not a decimal number")                \
  X(kCorruptMessage, "corrupt_message", kLoss,                                           \
    "protobuf message cut off or malformed (length past the end, wrong wire type)") \
  X(kNotDisplayed, "not_displayed", kDesign,                                               \
    "rank or trainer outside --display-size (csp reads it for pipeline markers)")   \
  X(kOtherDevice, "other_device", kDesign,                                                 \
    "memory event or DCGM row of a GPU other than its output's (as CrossStackProfiler)") \
  X(kNaSample, "na_sample", kLoss, "DCGM row with N/A or a non-numeric value (row dropped)") \
  X(kBadRow, "bad_row", kLoss, "DCGM row with the wrong number of columns, or before any header") \
  X(kUnmatchedEnd, "unmatched_end", kLoss, "`E` event with no open `B` on its pid/tid (surplus end)") \
  X(kTimeBase, "time_base", kDesign, "smdebug pid-0 record carrying only the file's time base (applied to every ts)") \
  X(kDuplicateMetadata, "duplicate_metadata", kDesign, "metadata record repeating one already kept for the same process or thread") \
  X(kEmptyProcess, "empty_process", kDesign,                                               \
    "metadata record of a process with no other event (Kineto's unused GPU rows: left out of the outputs)") \
  X(kWindow, "window", kDesign, "outside the --start/--end or --start-step/--end-step window") \
  X(kBadSample, "bad_sample", kLoss, "system metrics line without a decimal `Timestamp`/`Value` or a `Name`") \
  X(kBadNetSample, "bad_net_sample", kLoss,                                        \
    "network log line whose `name` is not tx/rx, `ph` not C, or `args` not an object") \
  X(kInputRejected, "input_rejected", kLoss,                                             \
    "input decoded but rejected before writing (spill file error, or its output is another shard's)") \
  X(kOutputFailed, "output_failed", kLoss,                                               \
    "its output could not be written (disk full, I/O error, file size limit) and was removed") \
  X(kNotSelected, "not_selected", kDesign, "its rank is not among --ranks (read and counted, not written)")

enum class DropKind : uint8_t { kLoss, kDesign };

enum class DropReason : uint8_t {
#define TM_ENUM_(e, key, kind, desc) e,
  TM_DROP_REASONS(TM_ENUM_)
#undef TM_ENUM_
      kCount
};

inline constexpr int kNumDropReasons = static_cast<int>(DropReason::kCount);

// DropReasonKey returns the stable manifest key of `r` (e.g. "bad_ts").
std::string_view DropReasonKey(DropReason r);
// DropReasonDescription returns one sentence describing `r`.
std::string_view DropReasonDescription(DropReason r);
// DropReasonKind: lost (kLoss) or left out on purpose (kDesign).
DropKind DropReasonKind(DropReason r);
// DropReasonFromKey: the reason whose manifest key is `key` ("bad_ts" ->
// kBadTs), for readers of a manifest (the report); nullopt for a key this
// version does not know (a manifest written by a newer tracemill).
std::optional<DropReason> DropReasonFromKey(std::string_view key);

// GroupedCount: `41920` -> "41,920" (how every count is shown to a person:
// the terminal summary and the run report).
std::string GroupedCount(uint64_t n);
// Counted: a count and its noun, as a person reads them: (1, "input") ->
// "1 input", (41920, "input") -> "41,920 inputs" (the plural adds "s").
std::string Counted(uint64_t n, std::string_view noun);

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
  // Of(kind): the drops of that kind (lost, or left out on purpose).
  uint64_t Of(DropKind kind) const;
};

}  // namespace tracemill::formats
