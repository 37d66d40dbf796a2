#include "report/run_status.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "report/html_text.h"
#include "report/page_sections.h"

namespace tracemill::report {
namespace {

// "1 input", "3 inputs" (the count with thousands separators).
std::string Counted(uint64_t n, const char* noun) {
  return absl::StrCat(GroupedCount(n), " ", noun, n == 1 ? "" : "s");
}

uint64_t InputsNotSkipped(const Totals& t) {
  return t.inputs > t.inputs_skipped ? t.inputs - t.inputs_skipped : 0;
}

size_t FailedOutputs(const RunModel& m) {
  return static_cast<size_t>(
      std::count_if(m.outputs.begin(), m.outputs.end(), [](const OutputModel& o) { return !o.error.empty(); }));
}

// ", K events lost" and ", with warnings", as they apply.
std::string LostAndWarnings(const RunModel& m) {
  std::string s;
  if (m.totals.events_lost) absl::StrAppend(&s, ", ", Counted(m.totals.events_lost, "event"), " lost");
  if (!m.notices.empty()) s.append(", with warnings");
  return s;
}

RunBadge ConvertedBadge(const RunModel& m) {
  const Totals& t = m.totals;
  if (t.inputs > 0 && t.events_read == 0) return {"b-warn", "no event in the inputs"};
  if (!t.events_lost && m.notices.empty()) return {"b-ok", "every input converted"};
  return {"b-warn", absl::StrCat("converted", LostAndWarnings(m))};
}

RunBadge InputErrorsBadge(const RunModel& m) {
  const Totals& t = m.totals;
  std::string s = absl::StrCat(GroupedCount(t.inputs_with_errors), " of ", Counted(InputsNotSkipped(t), "input"),
                               " with errors");
  if (t.events_written == 0) return {"b-err", absl::StrCat(s, ", nothing converted")};
  return {"b-warn", absl::StrCat(s, LostAndWarnings(m))};
}

RunBadge FailureBadge(const RunModel& m) {
  const size_t failed = FailedOutputs(m);
  if (failed == 0) return {"b-err", "internal error"};
  return {"b-err", absl::StrCat(GroupedCount(failed), " of ", Counted(m.outputs.size(), "output"),
                                " could not be written")};
}

// "2 of 5 inputs have errors: 1 rejected (nothing converted); 1 converted
// in part (damaged, or most events lost); see the log below."
BannerLine InputErrorsLine(const Totals& t) {
  const uint64_t n = t.inputs_with_errors, rejected = std::min(t.inputs_rejected, n);
  std::string s = absl::StrCat(GroupedCount(n), " of ", Counted(InputsNotSkipped(t), "input"),
                               n == 1 ? " has" : " have", " errors: ");
  if (rejected) absl::StrAppend(&s, GroupedCount(rejected), " rejected (nothing converted)", n > rejected ? "; " : "");
  if (n > rejected)
    absl::StrAppend(&s, GroupedCount(n - rejected), " converted in part (damaged, or most events lost)");
  s.append("; <a href=\"#log\">see the log below</a>.");
  return {true, std::move(s)};
}

// "41,920 of 80,540 events lost (not in the outputs): bad_ts 41,920; the
// most, bad_ts: `ts` is not a decimal number ..."
BannerLine LostLine(const Totals& t) {
  const auto lost = DropsOfKind(t, formats::DropKind::kLoss);
  std::string s = absl::StrCat(GroupedCount(t.events_lost), " of ", Counted(t.events_read, "event"),
                               " lost (not in the outputs)");
  if (!lost.empty()) {
    absl::StrAppend(&s, ": ", ReasonList(lost));
    const auto top = formats::DropReasonFromKey(lost.front().first);
    if (top) {
      absl::StrAppend(&s, "; the most, ", HtmlEscape(lost.front().first), ": ");
      AppendHtmlEscaped(formats::DropReasonDescription(*top), &s);
    }
  }
  s.append(".");
  return {true, std::move(s)};
}

}  // namespace

RunBadge BadgeOf(const RunModel& m) {
  RunBadge b;
  switch (m.exit_code) {
    case 0: b = ConvertedBadge(m); break;
    case 1: b = FailureBadge(m); break;
    case 2: b = {"b-err", "usage error"}; break;
    case 3: b = InputErrorsBadge(m); break;
    case 130: b = {"b-err", "interrupted (SIGINT)"}; break;
    case 143: b = {"b-err", "interrupted (SIGTERM)"}; break;
    default: b = {"b-err", "unknown exit status"}; break;
  }
  b.text = absl::StrCat("exit ", m.exit_code, ": ", b.text);
  return b;
}

std::vector<BannerLine> BannerLines(const RunModel& m) {
  std::vector<BannerLine> lines;
  if (m.totals.inputs_with_errors) lines.push_back(InputErrorsLine(m.totals));
  if (const size_t failed = FailedOutputs(m))
    lines.push_back({true, absl::StrCat(GroupedCount(failed), " of ", Counted(m.outputs.size(), "output"),
                                        " could not be written (their events count as lost); see the Outputs "
                                        "table.")});
  if (m.totals.events_lost) lines.push_back(LostLine(m.totals));
  std::set<std::string> seen;
  for (const std::string& n : m.notices)
    if (seen.insert(n).second) lines.push_back({false, HtmlEscape(n)});
  return lines;
}

std::vector<std::pair<std::string, uint64_t>> DropsOfKind(const Totals& t, formats::DropKind kind) {
  std::vector<std::pair<std::string, uint64_t>> v;
  for (const auto& [key, n] : t.dropped_by_reason)
    if (n && DropKindOfKey(key) == kind) v.emplace_back(key, n);
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return v;
}

std::string ReasonList(const std::vector<std::pair<std::string, uint64_t>>& drops) {
  std::string s;
  for (const auto& [key, n] : drops) absl::StrAppend(&s, s.empty() ? "" : ", ", HtmlEscape(key), " ", GroupedCount(n));
  return s;
}

void AppendBanner(const PageInput& in, std::string* out) {
  const std::vector<BannerLine> lines = BannerLines(in.model);
  if (lines.empty()) return;
  out->append("<section class=\"banner\" id=\"notices\"><ul>\n");
  for (const BannerLine& l : lines)
    absl::StrAppend(out, "<li class=\"", l.error ? "err" : "warn", "\">", l.html, "</li>\n");
  out->append("</ul></section>\n");
}

}  // namespace tracemill::report
