// The report's step-duration distribution (page_sections.h): per node (a
// csp job: per trainer), how long its ranks' steps lasted, so that a node
// whose steps are slower than the others' shows at a glance even when no
// single step has a straggler (issue 40, point 9).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "report/html_text.h"
#include "report/page_sections.h"

namespace tracemill::report {
namespace {

// Durations of the listed steps of the ranks of one node.
struct NodeSteps {
  std::vector<int64_t> durations_ns;
  std::vector<int64_t> ranks;
};

// Nearest-rank percentile `p` (0-100) of sorted `v` (non-empty): the
// smallest value with at least p % of the values at or below it.
int64_t Percentile(const std::vector<int64_t>& v, int p) {
  const size_t n = v.size();
  const size_t rank = std::max<size_t>(1, (n * static_cast<size_t>(p) + 99) / 100);
  return v[std::min(rank, n) - 1];
}

std::string Cell(int64_t ns) { return absl::StrCat("<td class=\"n\">", FormatDuration(ns), "</td>"); }

}  // namespace

void AppendStepDurations(const PageInput& in, std::string* o) {
  const RunModel& m = in.model;
  const int64_t per_node = m.gpus_per_node > 0 ? m.gpus_per_node : 1;
  std::map<int64_t, NodeSteps> nodes;
  int64_t stride = 1;
  for (const InputModel& r : m.inputs) {
    if (!r.rank || r.timeline.steps.empty()) continue;
    NodeSteps& n = nodes[*r.rank / per_node];
    n.ranks.push_back(*r.rank);
    for (const formats::StepSpan& s : r.timeline.steps) n.durations_ns.push_back(s.end_ns - s.start_ns);
    stride = std::max(stride, r.timeline.steps_stride);
  }
  if (nodes.empty()) return;
  const bool csp = m.group_by == "csp";
  const char* node_word = csp ? "trainer" : "node";
  absl::StrAppend(o, "<section id=\"step-durations\"><h2>Step durations</h2>\n<p class=\"note\">Per ", node_word,
                  " (", per_node, csp ? " GPUs per trainer" : " ranks per node",
                  "), the duration of its ranks' steps: shortest, median, 90th percentile (nearest rank) and "
                  "longest");
  if (stride > 1)
    absl::StrAppend(o, ", over the steps the manifest lists (of inputs with more than ",
                    GroupedCount(formats::kMaxStepsPerTrack), " steps, those whose number is a multiple of ", stride,
                    "; tables.sqlite's steps has every one)");
  o->append(". A node whose median stands out is slower on every step, a straggler the per-step table cannot "
            "name.</p>\n<div class=\"scroll\"><table class=\"sortable\" id=\"step-durations-table\"><thead><tr>");
  absl::StrAppend(o, "<th class=\"n\">", node_word, "</th><th class=\"n\">ranks</th><th class=\"n\">steps</th>",
                  "<th class=\"n\">shortest</th><th class=\"n\">median</th><th class=\"n\">p90</th>",
                  "<th class=\"n\">longest</th></tr></thead><tbody>\n");
  for (auto& [node, n] : nodes) {
    std::sort(n.durations_ns.begin(), n.durations_ns.end());
    absl::StrAppend(o, "<tr><td class=\"n\">", node, "</td><td class=\"n\">", GroupedCount(n.ranks.size()),
                    "</td><td class=\"n\">", GroupedCount(n.durations_ns.size()), "</td>",
                    Cell(n.durations_ns.front()), Cell(Percentile(n.durations_ns, 50)),
                    Cell(Percentile(n.durations_ns, 90)), Cell(n.durations_ns.back()), "</tr>\n");
  }
  o->append("</tbody></table></div></section>\n");
}

}  // namespace tracemill::report
