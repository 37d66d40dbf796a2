// The report's system and phase summaries (page_sections.h), from the
// manifest's `tables` member (convert --tables; analysis::ReportTablesJson):
// what a SageMaker Debugger user looks at first (issue 40, point 9).
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/html_text.h"
#include "report/page_sections.h"

namespace tracemill::report {
namespace {

std::string Td(std::string_view text) {
  std::string o = "<td>";
  AppendHtmlEscaped(text, &o);
  return o + "</td>";
}
std::string TdN(const std::string& text) { return absl::StrCat("<td class=\"n\">", text, "</td>"); }

void SystemTable(const TablesModel& t, std::string* o) {
  if (t.system.empty()) return;
  o->append("<h3>System metrics per node</h3>\n<p class=\"note\">smdebug's system samples (table "
            "system_metrics): per node and dimension, their number, mean and highest value (percent).</p>\n"
            "<div class=\"scroll\"><table class=\"sortable\" id=\"system-table\"><thead><tr><th>node</th>"
            "<th>dimension</th><th class=\"n\">samples</th><th class=\"n\">mean %</th><th class=\"n\">max %</th>"
            "</tr></thead><tbody>\n");
  for (const TablesModel::System& s : t.system)
    absl::StrAppend(o, "<tr>", Td(s.node), Td(s.dimension), TdN(GroupedCount(static_cast<uint64_t>(s.samples))),
                    TdN(absl::StrFormat("%.2f", s.mean)), TdN(absl::StrFormat("%.2f", s.max)), "</tr>\n");
  o->append("</tbody></table></div>\n");
}

void PhasesTable(const TablesModel& t, std::string* o) {
  if (t.phases.empty()) return;
  std::map<std::string, int64_t> node_total;
  for (const TablesModel::Phase& p : t.phases) node_total[p.node] += p.time_ns;
  o->append("<h3>Phases per node</h3>\n<p class=\"note\">Per node, its longest phases (smdebug's process: "
            "<code>Forward</code>, <code>Backward</code>, <code>DataIterator</code>, ...; else the event "
            "category): the time of the spans that touch each step, summed over its ranks and steps (table "
            "phase_by_step; spans that touch two steps count in both), and its share of the node's phases "
            "listed here.</p>\n<div class=\"scroll\"><table class=\"sortable\" id=\"phases-table\"><thead><tr>"
            "<th>node</th><th>phase</th><th class=\"n\">time</th><th class=\"n\">share</th>"
            "<th class=\"n\">steps</th></tr></thead><tbody>\n");
  for (const TablesModel::Phase& p : t.phases) {
    const int64_t total = node_total[p.node];
    absl::StrAppend(o, "<tr>", Td(p.node), Td(p.phase), TdN(FormatDuration(p.time_ns)),
                    TdN(FormatShare(p.time_ns, total)),
                    TdN(GroupedCount(static_cast<uint64_t>(p.steps))), "</tr>\n");
  }
  o->append("</tbody></table></div>\n");
}

void LoaderTable(const TablesModel& t, std::string* o) {
  if (t.dataloader.empty()) return;
  o->append("<h3>Data loading per node</h3>\n<p class=\"note\">The data loader's spans (table "
            "dataloader_metrics): how many, their summed and longest duration.</p>\n<div class=\"scroll\">"
            "<table class=\"sortable\" id=\"dataloader-table\"><thead><tr><th>node</th><th class=\"n\">spans</th>"
            "<th class=\"n\">time</th><th class=\"n\">longest</th></tr></thead><tbody>\n");
  for (const TablesModel::Loader& l : t.dataloader)
    absl::StrAppend(o, "<tr>", Td(l.node), TdN(GroupedCount(static_cast<uint64_t>(l.spans))),
                    TdN(FormatDuration(l.time_ns)), TdN(FormatDuration(l.longest_ns)), "</tr>\n");
  o->append("</tbody></table></div>\n");
}

}  // namespace

void AppendSystemSection(const PageInput& in, std::string* o) {
  const TablesModel& t = in.model.tables;
  if (!t.present || (t.system.empty() && t.phases.empty() && t.dataloader.empty())) return;
  o->append("<section id=\"system\"><h2>System and phases</h2>\n");
  SystemTable(t, o);
  PhasesTable(t, o);
  LoaderTable(t, o);
  o->append("</section>\n");
}

}  // namespace tracemill::report
