#include "formats/common/time_window.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "formats/common/status_macros.h"
#include "formats/common/ts_text.h"

namespace tracemill::formats {

absl::StatusOr<int64_t> ParseTimeArg(std::string_view text) {
  if (auto us = ParseMicrosToNanos(text); us && text.find_first_of("eE") == std::string_view::npos)
    return *us;
  // absl's %E*S takes any number of fraction digits; %Ez takes Z, +hh:mm, +hhmm.
  absl::Time t;
  std::string err;
  if (absl::ParseTime("%Y-%m-%d%ET%H:%M:%E*S%Ez", AbslView(text), &t, &err)) {
    // Whole seconds and the fraction apart: ToUnixNanos saturates nowhere near.
    return absl::ToInt64Nanoseconds(t - absl::UnixEpoch());
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "bad time \"", AbslView(text),
      "\": expected microseconds since the epoch (1590461127873222) or ISO-8601 with a zone "
      "(2020-05-26T02:45:27.873222Z, 2020-05-26T04:45:27+02:00)"));
}

void PairBeginEnd(TraceData* data, DropCounts* dropped, std::vector<std::string>* warnings) {
  auto& ev = data->events;
  std::vector<uint32_t> idx;
  for (uint32_t i = 0; i < ev.size(); ++i)
    if ((ev[i].phase == 'B' || ev[i].phase == 'E') && (ev[i].flags & kHasTs)) idx.push_back(i);
  if (idx.empty()) return;  // most inputs (Kineto writes X): one light pass
  int64_t last_ns = std::numeric_limits<int64_t>::min();
  for (const Event& e : ev) {
    if (!(e.flags & kHasTs) || e.phase == 'M') continue;
    // ts and dur are each within +-kMaxAbsTimeNs (2^62 - 1): the sum fits, and
    // held to that range, an open B's span (last_ns - ts) fits too.
    last_ns = std::max(last_ns, std::min(e.ts_ns + ((e.flags & kHasDur) ? e.dur_ns : 0), kMaxAbsTimeNs));
  }
  auto key = [&](uint32_t i) {
    const Event& e = ev[i];
    return std::make_tuple((e.flags & kHasPid) ? e.pid : UINT32_MAX, (e.flags & kHasTid) ? e.tid : 0u);
  };
  std::stable_sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) {
    auto ka = key(a), kb = key(b);
    if (ka != kb) return ka < kb;
    return ev[a].ts_ns < ev[b].ts_ns;
  });
  uint64_t nameless = 0, open = 0, surplus = 0;
  std::vector<uint32_t> stack;
  std::vector<bool> remove;
  for (size_t k = 0; k < idx.size(); ++k) {
    if (k && key(idx[k]) != key(idx[k - 1])) stack.clear();
    Event& e = ev[idx[k]];
    if (e.phase == 'B') {
      stack.push_back(idx[k]);
      // Provisional: open to the input's end until an E closes it.
      e.flags |= kHasSpan;
      e.dur_ns = last_ns - e.ts_ns;
      ++open;
      continue;
    }
    if (stack.empty()) {
      if (remove.empty()) remove.resize(ev.size(), false);
      remove[idx[k]] = true;
      ++surplus;
      continue;
    }
    Event& b = ev[stack.back()];
    stack.pop_back();
    --open;
    b.dur_ns = e.ts_ns - b.ts_ns;
    e.dur_ns = b.dur_ns;
    e.flags |= kHasSpan;
    if (e.name == 0 || data->strings[e.name].empty()) {
      e.name = b.name;
      ++nameless;
    }
  }
  if (surplus) {
    size_t out = 0;
    for (size_t i = 0; i < ev.size(); ++i)
      if (!remove[i]) ev[out++] = ev[i];
    ev.resize(out);
    dropped->Add(DropReason::kUnmatchedEnd, surplus);
    warnings->push_back(absl::StrCat(surplus, " E events with no open B on their pid/tid dropped"));
  }
  if (nameless)
    warnings->push_back(absl::StrCat(nameless, " nameless E events named after the B they close"));
  if (open)
    warnings->push_back(absl::StrCat(open, " B events never closed (drawn to the input's last time)"));
}

}  // namespace tracemill::formats
