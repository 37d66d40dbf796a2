// The table sections of the run report (page_sections.h): rounds,
// stragglers, dead ranks, inputs, outputs, and the warning log.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "report/html_text.h"
#include "report/page_sections.h"

namespace tracemill::report {
namespace {

constexpr size_t kMaxDeadTableRows = 1024;
constexpr size_t kMaxLogInputs = 4096;  // inputs listed in the log section
// Rows of the inputs table: every input of a 4,096-rank job; past it the
// inputs with an error first, then the others in order (2,000,000 inputs
// made a 266 MB page). manifest.json lists every one.
constexpr size_t kMaxInputRows = 10000;
constexpr size_t kMaxNotGivenRanges = 8;  // ranges named in the not-given note

// "0–3, 5, 8–9" (en dashes) for sorted ranks.
std::string RankList(const std::vector<int64_t>& ranks) {
  std::string s;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!s.empty()) s.append(", ");
    if (j == i) absl::StrAppend(&s, ranks[i]);
    else absl::StrAppend(&s, ranks[i], "\xE2\x80\x93", ranks[j]);
    i = j + 1;
  }
  return s;
}

// A link to an output file next to the report (escaped).
void AppendLink(const std::string& path, std::string* o) {
  o->append("<a href=\"");
  AppendHtmlEscaped(path, o);
  o->append("\">");
  AppendHtmlEscaped(path, o);
  o->append("</a>");
}

// One time part of an output: its link and the event starts it holds (the
// parts' start ranges follow one another; a long span may end in a later
// part's range, so the latest end goes in the title). Manifests without
// `starts_ns`: the first start to the latest end.
void PartRow(const PageInput& in, const PartModel& p, std::string* o) {
  o->append("<tr class=\"part\"><td>&nbsp;&nbsp;");
  AppendLink(p.path, o);
  if (p.starts_ns && p.span_ns) {
    absl::StrAppend(o, "</td><td title=\"its events end by ", RelativeTime(p.span_ns->second, in.t0_ns), "\">starts ",
                    RelativeTime(p.starts_ns->first, in.t0_ns), " \xE2\x80\x93 ",
                    RelativeTime(p.starts_ns->second, in.t0_ns));
  } else {
    o->append("</td><td>");
    if (p.span_ns)
      absl::StrAppend(o, RelativeTime(p.span_ns->first, in.t0_ns), " \xE2\x80\x93 ",
                      RelativeTime(p.span_ns->second, in.t0_ns));
  }
  absl::StrAppend(o, "</td><td class=\"n\"></td><td class=\"n\" data-v=\"", p.events, "\">", GroupedCount(p.events),
                  "</td><td class=\"n\" data-v=\"", p.bytes, "\">", GroupedCount(p.bytes), "</td><td></td></tr>\n");
}

// One row of the stragglers table; `groups`: with the "of" column.
// LateCell: the collectives' straggler of a step (analysis.h), or empty.
std::string LateCell(const StepStragglers& s) {
  if (!s.by_collectives) return "<td class=\"n\" data-v=\"-1\"></td>";
  std::string o = absl::StrCat("<td class=\"who", s.straggler ? " slow\" title=\"straggler of this step" : "",
                               "\" data-v=\"", s.late_ns, "\">");
  AppendHtmlEscaped(s.late_label, &o);
  absl::StrAppend(&o, ": ", FormatDuration(s.late_ns), " (last at ", s.times_last, " of ", s.instances, ")</td>");
  return o;
}

void StragglerTableRow(const StepStragglers& s, bool groups, bool collectives, std::string* o) {
  absl::StrAppend(o, "<tr data-step=\"", s.step, "\">");
  if (groups) {
    o->append("<td>");
    AppendHtmlEscaped(s.group.empty() ? "ranks" : s.group, o);
    o->append("</td>");
  }
  const Straggler& top = s.slowest.front();
  absl::StrAppend(o, "<td class=\"n\">", s.step, "</td><td class=\"n\">", GroupedCount(s.participants),
                  "</td><td class=\"n\" data-v=\"", s.median_ns, "\">", FormatDuration(s.median_ns), "</td>");
  if (s.all_equal) {  // "rank 0, +0 ns" named a slowest where there is none
    absl::StrAppend(o, "<td class=\"who\">none: all ", s.participants, " equal</td><td class=\"n\" data-v=\"",
                    top.dur_ns, "\">", FormatDuration(top.dur_ns),
                    "</td><td class=\"n lag\" data-v=\"0\"></td><td class=\"n\"></td><td></td><td></td>",
                    collectives ? LateCell(s) : "", "</tr>\n");
    return;
  }
  const bool slow = s.straggler && !s.by_collectives;
  absl::StrAppend(o, "<td class=\"who", slow ? " slow\" title=\"straggler of this step" : "", "\">");
  AppendHtmlEscaped(top.label, o);
  absl::StrAppend(o, "</td><td class=\"n\" data-v=\"", top.dur_ns, "\">", FormatDuration(top.dur_ns),
                  "</td><td class=\"n lag\" data-v=\"", top.lag_ns, "\">", top.lag_ns >= 0 ? "+" : "",
                  FormatDuration(top.lag_ns), "</td><td class=\"n\">", FormatPercent(top.lag_ns, s.median_ns),
                  "</td>");
  for (size_t k = 1; k < 3; ++k) {
    o->append("<td>");
    if (k < s.slowest.size()) {
      AppendHtmlEscaped(s.slowest[k].label, o);
      absl::StrAppend(o, " (", s.slowest[k].lag_ns >= 0 ? "+" : "", FormatDuration(s.slowest[k].lag_ns), ")");
    }
    o->append("</td>");
  }
  if (collectives) o->append(LateCell(s));
  o->append("</tr>\n");
}

// One row of the inputs table. Compact (4,096 of them in a big job):
// alignment comes from the table's CSS, numbers sort by their text.
void InputTableRow(const InputModel& in, std::string* o) {
  o->append(in.has_error ? "<tr class=\"dead\"><td>" : "<tr><td>");
  AppendHtmlEscaped(in.path, o);
  o->append("</td><td>");
  if (in.rank) absl::StrAppend(o, *in.rank);
  o->append("</td><td>");
  AppendHtmlEscaped(in.format, o);
  size_t steps = in.timeline.steps.size();
  for (const auto& t : in.timeline.tracks) steps += t.rank ? 0 : t.steps.size();
  absl::StrAppend(o, "</td><td>", GroupedCount(in.bytes), "</td><td>", GroupedCount(in.events_read), "</td><td>",
                  GroupedCount(in.events_written), "</td><td>", GroupedCount(in.events_dropped), "</td><td>",
                  GroupedCount(steps), "</td><td>");
  AppendHtmlEscaped(in.output, o);
  o->append("</td><td>");
  if (in.skipped) o->append("skipped");
  else if (in.rejected) o->append("<b class=\"badge b-err\">rejected</b>");
  else if (in.has_error) o->append("<b class=\"badge b-err\">damaged</b>");
  else if (!in.warnings.empty()) o->append("<b class=\"badge b-warn\">warnings</b>");
  else o->append("<b class=\"badge b-ok\">ok</b>");
  o->append("</td></tr>\n");
}

// The log entry of an input with an error or warnings.
void InputLogEntry(const InputModel& in, std::string* body) {
  body->append("<div><b>");
  AppendHtmlEscaped(in.path, body);
  body->append("</b><ul>");
  if (in.has_error) {
    absl::StrAppend(body, "<li class=\"e\">error (", in.rejected ? "rejected" : "damaged", ", ");
    AppendHtmlEscaped(in.error_code, body);
    absl::StrAppend(body, " at byte ", GroupedCount(in.error_offset), "): ");
    AppendHtmlEscaped(in.error_message, body);
    body->append("</li>");
  }
  for (const std::string& w : in.warnings) {
    body->append("<li class=\"w\">");
    AppendHtmlEscaped(w, body);
    body->append("</li>");
  }
  body->append("</ul></div>\n");
}

// The table of dead entries (rejected, damaged, missing, failed).
void DeadTable(const PageInput& in, std::string* o) {
  const Analysis& a = in.analysis;
  o->append("<p class=\"note\">Inputs that failed (rejected: nothing converted; damaged: converted up to "
            "the damage), ranks that world_size says exist but no input holds while some input failed "
            "(missing), and workers of run event logs with a failed action.</p>\n");
  o->append("<div class=\"scroll\"><table class=\"sortable\" id=\"dead-table\"><thead><tr><th>who</th>"
            "<th>what</th><th class=\"n\">from</th><th>reason</th><th>input</th></tr></thead><tbody>\n");
  for (size_t k = 0; k < a.dead.size() && k < kMaxDeadTableRows; ++k) {
    const DeadEntry& d = a.dead[k];
    absl::StrAppend(o, "<tr class=\"dead\" data-kind=\"", d.kind, "\"><td>");
    AppendHtmlEscaped(d.label, o);
    absl::StrAppend(o, "</td><td>", d.kind, "</td><td class=\"n\">",
                    d.from_ns ? RelativeTime(*d.from_ns, in.t0_ns) : std::string("start"), "</td><td>");
    AppendHtmlEscaped(d.reason, o);
    o->append("</td><td class=\"path\">");
    AppendHtmlEscaped(d.path, o);
    o->append("</td></tr>\n");
  }
  o->append("</tbody></table></div>\n");
  if (a.dead.size() > kMaxDeadTableRows)
    absl::StrAppend(o, "<p class=\"note\">", GroupedCount(a.dead.size() - kMaxDeadTableRows),
                    " more dead entries are in manifest.json.</p>\n");
}

// "126 ranks are not in the inputs (ranks 2–127): ..." when no input failed.
void NotGivenNote(const Analysis& a, std::string* o) {
  if (a.not_given.empty()) return;
  std::string ranges;
  for (size_t k = 0; k < a.not_given.size() && k < kMaxNotGivenRanges; ++k)
    absl::StrAppend(&ranges, k ? ", " : "", a.not_given[k].label);
  if (a.not_given.size() > kMaxNotGivenRanges)
    absl::StrAppend(&ranges, " and ", GroupedCount(a.not_given.size() - kMaxNotGivenRanges), " more ranges");
  absl::StrAppend(o, "<p class=\"note\" id=\"not-given\">", GroupedCount(a.not_given_ranks),
                  a.not_given_ranks == 1 ? " rank is" : " ranks are", " not in the inputs (");
  AppendHtmlEscaped(ranges, o);
  absl::StrAppend(o, "): world_size says ", GroupedCount(a.world_size),
                  " ranks and no input failed, so they were not given (a partial sample), not dead.</p>\n");
}

}  // namespace

void AppendRoundsTable(const PageInput& in, std::string* o) {
  if (in.analysis.rounds.empty()) return;
  o->append("<section id=\"rounds\"><h2>Rounds</h2>\n<p class=\"note\">Rounds of run event logs: workers "
            "alive at the end of the round / workers in the run.</p>\n");
  o->append("<table id=\"rounds-table\"><thead><tr><th>run event log</th><th class=\"n\">round</th>"
            "<th class=\"n\">start</th><th class=\"n\">duration</th><th class=\"n\">survivors</th>"
            "<th class=\"n\">lost</th></tr></thead><tbody>\n");
  for (const RoundEntry& r : in.analysis.rounds) {
    o->append("<tr><td>");
    AppendHtmlEscaped(r.log, o);
    absl::StrAppend(o, "</td><td class=\"n\">", r.round, "</td><td class=\"n\">", RelativeTime(r.start_ns, in.t0_ns),
                    "</td><td class=\"n\">", FormatDuration(r.end_ns - r.start_ns), "</td>");
    if (r.survivors >= 0) {
      absl::StrAppend(o, "<td class=\"n surv\">", FormatFraction(r.survivors, r.total), "</td><td class=\"n\">",
                      FormatSignedCount(std::max(r.total - r.survivors, 0)), "</td></tr>\n");
    } else {
      o->append("<td class=\"n surv\">&ndash;</td><td class=\"n\">&ndash;</td></tr>\n");
    }
  }
  o->append("</tbody></table></section>\n");
}

void AppendStragglersTable(const PageInput& in, std::string* o) {
  const Analysis& a = in.analysis;
  o->append("<section id=\"stragglers\"><h2>Stragglers</h2>\n");
  if (a.stragglers.empty()) {
    o->append("<p class=\"note\">No step is shared by two or more ranks or workers: nothing to "
              "compare.</p></section>\n");
    return;
  }
  absl::StrAppend(o, "<p class=\"note\" id=\"straggler-rule\">Per step, the three slowest ranks (or workers) and "
                  "how far their step lasted beyond the median of all that have the step. The slowest is the "
                  "step's straggler (orange, here and on the timeline) only when it is ", StragglerRule(), ": ",
                  GroupedCount(a.steps_with_straggler), " of ",
                  GroupedCount(a.stragglers.size() + a.straggler_steps_omitted), " steps have one.");
  if (a.straggler_steps_omitted)
    absl::StrAppend(o, " Only the ", GroupedCount(a.stragglers.size()), " steps with the largest lag are listed; ",
                    GroupedCount(a.straggler_steps_omitted), " more are not.");
  o->append("</p>\n");
  bool groups = false, collectives = false;
  for (const StepStragglers& s : a.stragglers) groups |= !s.group.empty(), collectives |= s.by_collectives;
  if (a.runs > 1)
    absl::StrAppend(o, "<p class=\"note\" id=\"straggler-runs\">The ranks' inputs look like ", a.runs,
                    " different runs (their time spans do not overlap): each rank is compared only with the ranks "
                    "of its run.</p>\n");
  if (collectives)
    absl::StrAppend(o, "<p class=\"note\" id=\"straggler-collectives\">Steps that hold collectives matched across "
                    "ranks (see Collectives) take their straggler from them: in synchronous training every rank's "
                    "step ends at the same collective, so the late rank's step is not the longest one. The last "
                    "column names the rank that kept the others waiting longest at the step's collectives (the "
                    "skews of the instances it arrived last at, summed); it is the straggler when that time is more "
                    "than ", kStragglerMinPercent, " % of the step's median and more than ",
                    FormatDuration(kStragglerMinLagNs), ".</p>\n");
  o->append("<div class=\"scroll\"><table class=\"sortable\" id=\"stragglers-table\"><thead><tr>");
  if (groups) o->append("<th>of</th>");
  o->append("<th class=\"n\">step</th><th class=\"n\">compared</th><th class=\"n\">median</th>"
            "<th>slowest</th><th class=\"n\">duration</th><th class=\"n\">behind median</th>"
            "<th class=\"n\">%</th><th>2nd</th><th>3rd</th>");
  if (collectives) o->append("<th>last at collectives</th>");
  o->append("</tr></thead><tbody>\n");
  for (const StepStragglers& s : a.stragglers) StragglerTableRow(s, groups, collectives, o);
  o->append("</tbody></table></div></section>\n");
}

void AppendDeadTable(const PageInput& in, std::string* o) {
  const Analysis& a = in.analysis;
  o->append("<section id=\"dead\"><h2>Dead ranks</h2>\n");
  if (a.dead.empty()) {
    o->append("<p class=\"note\">None: every rank the inputs name has an input that converted cleanly");
    if (a.world_size > 0 && a.missing_ranks == 0)
      absl::StrAppend(o, ", and all ", GroupedCount(a.world_size), " ranks of world_size are present");
    o->append(".</p>\n");
  } else {
    DeadTable(in, o);
  }
  NotGivenNote(a, o);
  o->append("</section>\n");
}

void AppendInputsTable(const PageInput& in, std::string* o) {
  o->append("<section id=\"inputs\"><h2>Inputs</h2>\n");
  o->append("<div class=\"scroll\"><table class=\"sortable\" id=\"inputs-table\"><thead><tr><th>path</th>"
            "<th class=\"n\">rank</th><th>format</th><th class=\"n\">bytes</th><th class=\"n\">read</th>"
            "<th class=\"n\">written</th><th class=\"n\">dropped</th><th class=\"n\">steps</th>"
            "<th>output</th><th>status</th></tr></thead><tbody>\n");
  const std::vector<InputModel>& inputs = in.model.inputs;
  std::vector<bool> listed(inputs.size(), inputs.size() <= kMaxInputRows);
  if (inputs.size() > kMaxInputRows) {
    size_t n = 0;
    for (size_t i = 0; i < inputs.size() && n < kMaxInputRows; ++i)
      if (inputs[i].has_error) listed[i] = true, ++n;
    for (size_t i = 0; i < inputs.size() && n < kMaxInputRows; ++i)
      if (!listed[i]) listed[i] = true, ++n;
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    if (listed[i]) InputTableRow(inputs[i], o);
  o->append("</tbody></table></div>");
  if (inputs.size() > kMaxInputRows)
    absl::StrAppend(o, "<p class=\"note\">", GroupedCount(inputs.size() - kMaxInputRows),
                    " more inputs are not listed here (the inputs with errors are): manifest.json lists every "
                    "one.</p>");
  o->append("</section>\n");
}

void AppendOutputsTable(const PageInput& in, std::string* o) {
  o->append("<section id=\"outputs\"><h2>Outputs</h2>\n");
  if (in.model.outputs.empty()) {
    o->append("<p class=\"note\">No output was written.</p></section>\n");
    return;
  }
  o->append("<div class=\"scroll\"><table class=\"sortable\" id=\"outputs-table\"><thead><tr><th>file</th>"
            "<th>ranks</th><th class=\"n\">inputs</th><th class=\"n\">events</th><th class=\"n\">bytes</th>"
            "<th>status</th></tr></thead><tbody>\n");
  for (const OutputModel& out : in.model.outputs) {
    o->append(out.error.empty() ? "<tr><td>" : "<tr class=\"dead\"><td>");
    if (out.error.empty() && out.parts.empty()) AppendLink(out.path, o);
    else AppendHtmlEscaped(out.path, o);
    if (!out.parts.empty()) absl::StrAppend(o, " (", GroupedCount(out.parts.size()), " time parts)");
    absl::StrAppend(o, "</td><td>", RankList(out.ranks), "</td><td class=\"n\">", GroupedCount(out.inputs),
                    "</td><td class=\"n\" data-v=\"", out.events, "\">", GroupedCount(out.events),
                    "</td><td class=\"n\" data-v=\"", out.bytes, "\">", GroupedCount(out.bytes), "</td><td>");
    if (out.error.empty()) {
      o->append("<span class=\"badge b-ok\">ok</span>");
    } else {
      o->append("<span class=\"badge b-err\">error</span> ");
      AppendHtmlEscaped(out.error, o);
    }
    o->append("</td></tr>\n");
    for (const PartModel& p : out.parts) PartRow(in, p, o);
  }
  o->append("</tbody></table></div></section>\n");
}

void AppendWarningLog(const PageInput& in, std::string* o) {
  o->append("<section id=\"log\"><h2>Warnings and errors</h2>\n");
  size_t listed = 0, quiet = 0;
  std::string body;
  for (const InputModel& input : in.model.inputs) {
    if (!input.has_error && input.warnings.empty()) {
      ++quiet;
      continue;
    }
    if (++listed > kMaxLogInputs) continue;
    InputLogEntry(input, &body);
  }
  for (const OutputModel& out : in.model.outputs) {
    if (out.error.empty()) continue;
    ++listed;
    body.append("<div><b>output ");
    AppendHtmlEscaped(out.path, &body);
    body.append("</b><ul><li class=\"e\">");
    AppendHtmlEscaped(out.error, &body);
    body.append("</li></ul></div>\n");
  }
  if (listed == 0) {
    o->append("<p class=\"note\">No warning and no error.</p></section>\n");
    return;
  }
  absl::StrAppend(o, "<p class=\"note\">", GroupedCount(listed), listed == 1 ? " file" : " files",
                  " with warnings or errors; ", GroupedCount(quiet), " without.");
  if (listed > kMaxLogInputs) absl::StrAppend(o, " The first ", GroupedCount(kMaxLogInputs), " are listed.");
  o->append("</p>\n<div class=\"log\">\n");
  o->append(body);
  o->append("</div></section>\n");
}

}  // namespace tracemill::report
