// The report's temporal breakdown (page_sections.h): HTA's per-rank split of
// the kernel time (pipeline/tables_hta.h), from the manifest's `tables`.
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
      b.label = !r.rank ? absl::StrCat("input ", r.input) : per_node ? absl::StrCat("node ", key) : absl::StrCat("rank ", key);
    b.kernel_ns += r.kernel_ns;
    b.compute_ns += r.compute_ns;
    b.non_compute_ns += r.non_compute_ns;
    b.idle_ns += r.idle_ns;
  }
  std::vector<BreakdownBar> bars;
  for (auto& [key, b] : by) bars.push_back(std::move(b));
  return bars;
}

// "53.56%": `x` of `total`, two decimals, rounded half up (exact integers).
std::string Pct(int64_t x, int64_t total) {
  if (total <= 0) return "";
  const __int128 h = (static_cast<__int128>(x) * 10000 + total / 2) / total;  // hundredths of a percent
  const int64_t v = static_cast<int64_t>(h);
  return absl::StrCat(v / 100, ".", v % 100 < 10 ? "0" : "", v % 100, "%");
}

void Segment(double x, double w, int y, const char* cls, const std::string& title, std::string* o) {
  if (w <= 0) return;
  absl::StrAppend(o, "<rect class=\"", cls, "\" x=\"", kBreakdownLabelWidth + x, "\" y=\"", y, "\" width=\"", w,
                  "\" height=\"", kBreakdownRowHeight - 3, "\"><title>");
  AppendHtmlEscaped(title, o);
  o->append("</title></rect>");
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
  absl::StrAppend(o, "<svg class=\"breakdown\" width=\"", kBreakdownLabelWidth + kBreakdownBarWidth + 200, "\" height=\"", height,
                  "\" role=\"img\" aria-label=\"temporal breakdown per rank\">");
  int y = 2;
  for (const BreakdownBar& b : bars) {
    absl::StrAppend(o, "<text x=\"0\" y=\"", y + kBreakdownRowHeight - 5, "\">");
    AppendHtmlEscaped(b.label, o);
    o->append("</text>");
    const double k = b.kernel_ns > 0 ? static_cast<double>(b.kernel_ns) : 1.0;
    const double wc = kBreakdownBarWidth * static_cast<double>(b.compute_ns) / k;
    const double wn = kBreakdownBarWidth * static_cast<double>(b.non_compute_ns) / k;
    const double wi = kBreakdownBarWidth * static_cast<double>(b.idle_ns) / k;
    const std::string of = absl::StrCat(" of ", FormatDuration(b.kernel_ns), " kernel time");
    Segment(0, wc, y, "bd-compute",
            absl::StrCat(b.label, ": compute ", FormatDuration(b.compute_ns), " (", Pct(b.compute_ns, b.kernel_ns), ")", of), o);
    Segment(wc, wn, y, "bd-noncompute",
            absl::StrCat(b.label, ": non-compute ", FormatDuration(b.non_compute_ns), " (",
                         Pct(b.non_compute_ns, b.kernel_ns), ")", of), o);
    absl::StrAppend(o, "<text class=\"ax\" x=\"", kBreakdownLabelWidth + kBreakdownBarWidth + 8, "\" y=\"", y + kBreakdownRowHeight - 5, "\">",
                    Pct(b.compute_ns, b.kernel_ns), " / ", Pct(b.non_compute_ns, b.kernel_ns), " / ",
                    Pct(b.idle_ns, b.kernel_ns), "</text>");
    Segment(wc + wn, wi, y, "bd-idle",
            absl::StrCat(b.label, ": idle ", FormatDuration(b.idle_ns), " (", Pct(b.idle_ns, b.kernel_ns), ")", of), o);
    y += kBreakdownRowHeight;
  }
  o->append("</svg>\n</section>\n");
}

}  // namespace tracemill::report
