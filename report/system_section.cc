// The report's system and phase summaries (page_sections.h), from the
// manifest's `tables` member (convert --tables; analysis::ReportTablesJson):
// what a SageMaker Debugger user looks at first; and the DCGM logs' GPU
// utilization per trainer and GPU (inputs' gpu_utilization), what a Paddle
// CrossStackProfiler user looks at first (issue 40, point 9).
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/html_text.h"
#include "report/page_sections.h"

namespace tracemill::report {
namespace {

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

std::string Mean(double sum, uint64_t n, int decimals) {
  return n ? absl::StrFormat("%.*f", decimals, sum / static_cast<double>(n)) : std::string();
}

}  // namespace

void AppendDcgmSection(const PageInput& in, std::string* o) {
  bool any = false;
  for (const InputModel& r : in.model.inputs) any |= !r.timeline.gpus.empty();
  if (!any) return;
  o->append("<section id=\"dcgm\"><h2>GPU utilization (DCGM)</h2>\n<p class=\"note\">Per DCGM log (a Paddle "
            "trainer's <code>dcgmi dmon</code> output) and GPU: its samples, GPU utilization (GPUTL, percent: mean "
            "and highest), and the means of the SM active, SM occupancy, DRAM active and tensor-pipe active ratios "
            "(SMACT, SMOCC, DRAMA, TENSO; 0 to 1).</p>\n<div class=\"scroll\"><table class=\"sortable\" "
            "id=\"dcgm-table\"><thead><tr><th>log</th><th class=\"n\">GPU</th><th class=\"n\">samples</th>"
            "<th class=\"n\">GPU util %</th><th class=\"n\">max %</th><th class=\"n\">SM active</th>"
            "<th class=\"n\">SM occupancy</th><th class=\"n\">DRAM active</th><th class=\"n\">tensor active</th>"
            "</tr></thead><tbody>\n");
  for (const InputModel& r : in.model.inputs) {
    for (const formats::GpuUtilization& g : r.timeline.gpus) {
      absl::StrAppend(o, "<tr>", Td(r.label.empty() ? r.path : r.label), TdN(absl::StrCat(g.gpu)),
                      TdN(GroupedCount(g.samples)), TdN(Mean(g.gputl_sum, g.samples, 2)),
                      TdN(absl::StrFormat("%.2f", g.gputl_max)), TdN(Mean(g.smact_sum, g.samples, 3)),
                      TdN(Mean(g.smocc_sum, g.samples, 3)), TdN(Mean(g.drama_sum, g.samples, 3)),
                      TdN(Mean(g.tenso_sum, g.samples, 3)), "</tr>\n");
    }
  }
  o->append("</tbody></table></div></section>\n");
}

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
