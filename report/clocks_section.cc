// The report's Clocks section (page_sections.h): what --align-clocks
// measured and applied (pipeline/clocks/clocks.h), from the manifest.
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "report/html_text.h"
#include "report/page_sections.h"

namespace tracemill::report {
namespace {

// A signed offset: "+1.500 ms", "-812 µs", "0".
std::string Offset(int64_t ns) {
  if (ns == 0) return "0";
  return absl::StrCat(ns < 0 ? "\xE2\x88\x92" : "+", FormatShortDuration(std::llabs(ns)));
}

void DomainRow(const ClockDomainModel& d, const std::string& reference, std::string* o) {
  const bool ref = d.domain == reference;
  absl::StrAppend(o, "<tr class=\"", d.applied ? "ok" : d.estimated ? "warn" : "none", "\"><td>");
  AppendHtmlEscaped(d.domain, o);
  absl::StrAppend(o, "</td><td class=\"n\">", d.probe_rank ? absl::StrCat(*d.probe_rank) : "", "</td><td class=\"n\">",
                  GroupedCount(d.collectives), "</td><td class=\"n\">",
                  ref ? "reference" : d.estimated ? Offset(d.offset_ns) : "",
                  "</td><td class=\"n\">", ref || !d.estimated ? "" : GroupedCount(d.matched), "</td><td class=\"n\">",
                  ref || !d.estimated ? "" : FormatShortDuration(d.spread_ns), "</td><td>",
                  d.applied ? "applied" : "not applied", "</td><td>");
  if (!d.via.empty() && !ref) {
    o->append("against ");
    AppendHtmlEscaped(d.via, o);
    if (!d.note.empty()) o->append("; ");
  }
  AppendHtmlEscaped(d.note, o);
  o->append("</td></tr>\n");
}

void DisagreeingRanks(const PageInput& in, std::string* o) {
  std::string rows;
  for (const InputModel& input : in.model.inputs) {
    if (!input.clock || !input.clock->disagrees_ns) continue;
    rows.append("<li>");
    AppendHtmlEscaped(input.label.empty() ? input.path : input.label, &rows);
    absl::StrAppend(&rows, " (", HtmlEscape(input.clock->domain), "): ", Offset(*input.clock->disagrees_ns),
                    " off its node's lowest rank</li>\n");
  }
  if (rows.empty()) return;
  o->append("<p class=\"warn\">Ranks whose own collectives say their clock differs from their node's "
            "(they keep the node's offset):</p><ul>\n");
  o->append(rows);
  o->append("</ul>\n");
}

}  // namespace

void AppendClocksSection(const PageInput& in, std::string* o) {
  const ClocksModel& c = in.model.clocks;
  if (!c.present) return;
  size_t applied = 0;
  for (const ClockDomainModel& d : c.domains) applied += d.applied && d.domain != c.reference;
  o->append("<section id=\"clocks\"><h2>Clocks</h2>\n<p class=\"note\" id=\"clocks-summary\">");
  absl::StrAppend(o, "The inputs span ", GroupedCount(c.domains.size()), " clock domains (nodes). ");
  if (c.applied)
    absl::StrAppend(o, "Offsets measured from matched collective operations were applied to ", GroupedCount(applied),
                    " of them (--align-clocks ", c.mode, "): times below are on the clock of ");
  else
    absl::StrAppend(o, "No offset was applied (--align-clocks ", c.mode, "): times below are each node's own; "
                    "the reference is ");
  AppendHtmlEscaped(c.reference.empty() ? "none (no collectives)" : c.reference, o);
  o->append(".</p>\n<div class=\"scroll\"><table class=\"sortable\" id=\"clocks-table\"><thead><tr><th>node</th>"
            "<th class=\"n\">lowest rank</th><th class=\"n\">collectives</th><th class=\"n\">offset</th>"
            "<th class=\"n\">matched</th><th class=\"n\">spread</th><th>applied</th><th>how</th></tr></thead><tbody>\n");
  for (const ClockDomainModel& d : c.domains) DomainRow(d, c.reference, o);
  o->append("</tbody></table></div>\n");
  DisagreeingRanks(in, o);
  for (const std::string& w : c.warnings) {
    o->append("<p class=\"warn\">");
    AppendHtmlEscaped(w, o);
    o->append("</p>\n");
  }
  o->append("</section>\n");
}

}  // namespace tracemill::report
