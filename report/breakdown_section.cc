// The report's temporal breakdown (page_sections.h): HTA's per-rank split of
// the kernel time (analysis/hta_breakdowns.h), from the manifest's `tables`.
#include <algorithm>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "report/html_text.h"
#include "report/page_sections.h"

namespace tracemill::report {
namespace {

constexpr int kBreakdownMaxRows = 64;     // past it, one bar per node
constexpr int kBreakdownBarWidth = 600;   // px, the whole kernel time
constexpr int kBreakdownRowHeight = 16;
constexpr int kBreakdownLabelWidth = 90;

struct BreakdownBar {
  std::string label;
  int64_t kernel_ns = 0, compute_ns = 0, non_compute_ns = 0, idle_ns = 0;
};

// The bars: one per rank, or per node (rank / gpus_per_node) past kBreakdownMaxRows.
std::vector<BreakdownBar> BreakdownBars(const PageInput& in) {
  const auto& rows = in.model.tables.temporal_breakdown;
  const bool per_node = rows.size() > static_cast<size_t>(kBreakdownMaxRows);
  const int64_t gpus = std::max(in.model.gpus_per_node, 1);
  std::map<std::pair<int64_t, int64_t>, BreakdownBar> by;  // (rank or node, input) -> bar
  for (const auto& r : rows) {
    const int64_t key = r.rank ? (per_node ? *r.rank / gpus : *r.rank) : -1;
    BreakdownBar& b = by[{key, per_node || r.rank ? 0 : r.input}];
    if (b.label.empty())
      b.label = !r.rank   ? absl::StrCat("input ", r.input)
                : per_node ? absl::StrCat("node ", key)
                           : absl::StrCat("rank ", key);
    b.kernel_ns += r.kernel_ns;
    b.compute_ns += r.compute_ns;
    b.non_compute_ns += r.non_compute_ns;
    b.idle_ns += r.idle_ns;
  }
  std::vector<BreakdownBar> bars;
  for (auto& [key, b] : by) bars.push_back(std::move(b));
  return bars;
}

void Segment(double x, double w, int y, const char* cls, const std::string& title, std::string* o) {
  if (w <= 0) return;
  absl::StrAppend(o, "<rect class=\"", cls, "\" x=\"", kBreakdownLabelWidth + x, "\" y=\"", y, "\" width=\"", w,
                  "\" height=\"", kBreakdownRowHeight - 3, "\"><title>");
  AppendHtmlEscaped(title, o);
  o->append("</title></rect>");
}

// A segment's tooltip: "rank 0: compute 5 ms (53.56%) of 9.3 ms kernel time".
std::string SegmentTitle(const BreakdownBar& b, const char* what, int64_t ns) {
  return absl::StrCat(b.label, ": ", what, " ", FormatDuration(ns), " (", FormatShare(ns, b.kernel_ns), ") of ",
                      FormatDuration(b.kernel_ns), " kernel time");
}

// One bar at height `y`: its label, the three segments and their shares.
void BreakdownRow(const BreakdownBar& b, int y, std::string* o) {
  absl::StrAppend(o, "<text x=\"0\" y=\"", y + kBreakdownRowHeight - 5, "\">");
  AppendHtmlEscaped(b.label, o);
  o->append("</text>");
  const double k = b.kernel_ns > 0 ? static_cast<double>(b.kernel_ns) : 1.0;
  const double wc = kBreakdownBarWidth * static_cast<double>(b.compute_ns) / k;
  const double wn = kBreakdownBarWidth * static_cast<double>(b.non_compute_ns) / k;
  const double wi = kBreakdownBarWidth * static_cast<double>(b.idle_ns) / k;
  Segment(0, wc, y, "bd-compute", SegmentTitle(b, "compute", b.compute_ns), o);
  Segment(wc, wn, y, "bd-noncompute", SegmentTitle(b, "non-compute", b.non_compute_ns), o);
  absl::StrAppend(o, "<text class=\"ax\" x=\"", kBreakdownLabelWidth + kBreakdownBarWidth + 8, "\" y=\"",
                  y + kBreakdownRowHeight - 5, "\">",
                  FormatShare(b.compute_ns, b.kernel_ns), " / ", FormatShare(b.non_compute_ns, b.kernel_ns), " / ",
                  FormatShare(b.idle_ns, b.kernel_ns), "</text>");
  Segment(wc + wn, wi, y, "bd-idle", SegmentTitle(b, "idle", b.idle_ns), o);
}

}  // namespace

void AppendTemporalBreakdown(const PageInput& in, std::string* o) {
  const TablesModel& t = in.model.tables;
  if (!t.present || t.temporal_breakdown.empty()) return;
  const std::vector<BreakdownBar> bars = BreakdownBars(in);
  o->append("<section id=\"breakdown\"><h2>Temporal breakdown</h2>\n<p class=\"note\">Per ");
  o->append(t.temporal_breakdown.size() > static_cast<size_t>(kBreakdownMaxRows) ? "node" : "rank");
  o->append(", the GPU kernel time (first kernel start to last kernel end, every stream merged) split as "
            "HolisticTraceAnalysis does: <span class=\"bd-compute\">compute</span>, "
            "<span class=\"bd-noncompute\">non-compute</span> (communication, memory) and "
            "<span class=\"bd-idle\">idle</span> (right: their shares, compute / non-compute / idle). From ");
  AppendHtmlEscaped(t.path, o);
  o->append(" (table temporal_breakdown).</p>\n");
  const int height = static_cast<int>(bars.size()) * kBreakdownRowHeight + 4;
  absl::StrAppend(o, "<svg class=\"breakdown\" width=\"", kBreakdownLabelWidth + kBreakdownBarWidth + 200,
                  "\" height=\"", height,
                  "\" role=\"img\" aria-label=\"temporal breakdown per rank\">");
  int y = 2;
  for (const BreakdownBar& b : bars) {
    BreakdownRow(b, y, o);
    y += kBreakdownRowHeight;
  }
  o->append("</svg>\n</section>\n");
}

}  // namespace tracemill::report
