#pragma once
// Durations on the command line of `convert --follow` (--window,
// --idle-timeout, --grace, --poll-interval): "30s", "5m", "1h30m", "250ms",
// "2d", "0". Parsed from the text into int64 ns, never through a double.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tracemill::pipeline::follow {

// ParseDuration: one or more `<digits><unit>` terms (units ns, us, ms, s, m,
// h, d), summed; a bare "0" is zero. Returns ns, or nullopt for anything
// else (no unit, an unknown unit, a value past ~292 years).
std::optional<int64_t> ParseDuration(std::string_view text);

// DurationText: `ns` written back the short way ("60s", "1h30m", "250ms").
std::string DurationText(int64_t ns);

}  // namespace tracemill::pipeline::follow
