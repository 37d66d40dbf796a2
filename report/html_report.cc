#include "report/html_report.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "formats/chrome/output_file.h"
#include "formats/common/status_macros.h"
#include "report/html_text.h"

namespace tracemill::report {
namespace {

// Timeline geometry (px).
constexpr int kWidth = 1200;
constexpr int kLabelWidth = 250;
constexpr int kNodeWidth = 58;  // node label column inside the label area
constexpr int kRightPad = 16;
constexpr int kPlotWidth = kWidth - kLabelWidth - kRightPad;
constexpr int kAxisHeight = 30;
constexpr int kRowHeight = 18;
constexpr int kBarHeight = 12;
constexpr size_t kMaxLabelBytes = 30;
constexpr size_t kMaxLogInputs = 4096;  // inputs listed in the log section

constexpr const char kStyle[] = R"css(
:root{--fg:#1d2330;--muted:#5b6475;--line:#d9dde5;--card:#f5f7fa;--head:#eef2f8;
--s0:#3b6fb6;--s1:#86aede;--slow:#e8820c;--dead:#d62728;--round:#7b5ea7}
*{box-sizing:border-box}
body{margin:0;color:var(--fg);background:#fff;
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif}
header{padding:14px 24px;background:var(--head);border-bottom:1px solid var(--line)}
header h1{font-size:20px;margin:0 0 2px}
header p{margin:0;color:var(--muted);font-size:13px}
main{padding:4px 24px 40px;max-width:1460px}
h2{font-size:16px;margin:26px 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line)}
p.note{color:var(--muted);margin:4px 0 8px;font-size:13px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(172px,1fr));gap:10px;margin-top:14px}
.card{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:7px 12px}
.card .k{color:var(--muted);font-size:11px;text-transform:uppercase;letter-spacing:.04em}
.card .v{font-size:20px;font-weight:600;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.card .d{color:var(--muted);font-size:12px}
.card.bad{border-color:#e8a0a0;background:#fdf1f1}
.card.bad .v{color:#b01c1c}
.badge{display:inline-block;padding:0 8px;border-radius:10px;font-size:12px;font-weight:600}
.b-ok{background:#e2f3e7;color:#1e6b37}.b-warn{background:#fff0d9;color:#8a4b00}.b-err{background:#fde3e3;color:#a11}
table{border-collapse:collapse;font-size:13px}
th,td{padding:3px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:var(--head);position:sticky;top:0;white-space:nowrap}
table.sortable th{cursor:pointer}
.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.path,#inputs-table td:first-child{max-width:520px;overflow-wrap:anywhere}
#inputs-table td:nth-child(2),#inputs-table td:nth-child(n+4):nth-child(-n+8){text-align:right;
font-variant-numeric:tabular-nums;white-space:nowrap}
tr.dead td:first-child{color:#b01c1c;font-weight:600}
.scroll{max-height:440px;overflow:auto;border:1px solid var(--line);display:inline-block;max-width:100%}
.tl{overflow-x:auto;border:1px solid var(--line);border-radius:4px}
.tl svg{display:block}
.legend{display:flex;flex-wrap:wrap;gap:14px;font-size:12px;color:var(--muted);margin:6px 0}
.sw{display:inline-block;width:14px;height:10px;margin-right:5px;vertical-align:-1px;border-radius:2px}
.sw.s0{background:var(--s0)}.sw.s1{background:var(--s1)}.sw.slow{background:var(--slow)}
.sw.rd{background:var(--round)}.sw.dead{background:var(--dead);opacity:.45}
.sw.miss{background:repeating-linear-gradient(45deg,var(--dead) 0 2px,#fff 2px 5px)}
.sw.act{height:3px;background:#9aa3b2;vertical-align:2px}
svg text{font:11px system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif;fill:var(--fg)}
svg .ax{fill:var(--muted)}
svg .grid{stroke:#e4e7ed;stroke-width:1}
svg .band{fill:#f4f6fa}
svg .sep{stroke:#b9c0cc;stroke-width:1}
svg .act{stroke:#9aa3b2;stroke-width:2}
svg .s0{fill:var(--s0)}svg .s1{fill:var(--s1)}
svg .slow{fill:var(--slow);stroke:#7a3d00;stroke-width:1}
svg .rd{fill:var(--round)}
svg .dead{fill:var(--dead);fill-opacity:.28}
svg .miss{fill:url(#hatch)}
svg .hit{fill:transparent}
svg .nl{fill:var(--muted);font-weight:600}
svg .dl{fill:#b01c1c;font-weight:600}
svg .rt{fill:#fff;font-size:10px;font-weight:600;pointer-events:none}
svg .bt{fill:#16202e;font-size:10px;font-weight:600;pointer-events:none}
.log{max-height:380px;overflow:auto;border:1px solid var(--line);padding:4px 12px;background:#fafbfc;
font:12px/1.5 ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace}
.log div{padding:4px 0;border-bottom:1px dashed var(--line)}
.log b{font-weight:600}
.log .e{color:#b01c1c}.log .w{color:#7a4a00}
.log ul{margin:2px 0 0;padding-left:18px}
footer{color:var(--muted);font-size:12px;margin-top:30px;overflow-wrap:anywhere}
)css";

// Sorting by a click on a header; the tables read the same without it.
constexpr const char kScript[] = R"js(
document.querySelectorAll('table.sortable').forEach(function(t){
t.querySelectorAll('th').forEach(function(th,i){th.addEventListener('click',function(){
var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows),num=th.classList.contains('n'),
dir=th.getAttribute('data-dir')==='a'?'d':'a';th.setAttribute('data-dir',dir);
rows.sort(function(x,y){var p=x.cells[i],q=y.cells[i];
var u=p.getAttribute('data-v')||p.textContent,v=q.getAttribute('data-v')||q.textContent;
var c=num?(parseFloat(u.replace(/,/g,''))||0)-(parseFloat(v.replace(/,/g,''))||0):u.localeCompare(v);return dir==='a'?c:-c;});
rows.forEach(function(r){b.appendChild(r);});});});});
)js";

std::string Esc(std::string_view s) { return HtmlEscape(s); }

std::string Px(double v) { return absl::StrFormat("%.1f", v); }

// Exact relative time "+1.459857 s" from the timeline's origin.
std::string Rel(int64_t ns, int64_t t0) {
  int64_t d = ns - t0;
  if (d == 0) return "+0 s";
  return absl::StrCat(d > 0 ? "+" : "", FormatDuration(d));
}

std::string ExitMeaning(int code) {
  switch (code) {
    case 0: return "every input converted";
    case 1: return "internal error, or an output could not be written";
    case 2: return "usage error";
    case 3: return "some inputs rejected or damaged; the rest converted";
  }
  return "unknown";
}

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

class Page {
 public:
  Page(const RunModel& m, const Analysis& a) : m_(m), a_(a) {
    if (a.time_ns) {
      t0_ = a.time_ns->first;
      t1_ = std::max(a.time_ns->second, t0_ + 1);
    }
  }

  std::string Render() {
    o_.reserve(64 << 10);
    o_.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    o_.append(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n");
    o_.append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    absl::StrAppend(&o_, "<title>tracemill report: ", a_.ranks_seen, a_.ranks_seen == 1 ? " rank" : " ranks",
                    ", ", m_.totals.inputs, m_.totals.inputs == 1 ? " input" : " inputs", "</title>\n");
    absl::StrAppend(&o_, "<style>", kStyle, "</style>\n</head>\n<body>\n");
    Header();
    o_.append("<main>\n");
    Cards();
    Timeline();
    Rounds();
    Stragglers();
    Dead();
    Inputs();
    Outputs();
    Log();
    o_.append("<footer>Built from manifest.json by tracemill ");
    AppendHtmlEscaped(m_.version, &o_);
    o_.append(" (rebuild with <code>tracemill report OUTDIR</code>). Command line: <code>");
    AppendHtmlEscaped(m_.command_line, &o_);
    o_.append("</code></footer>\n</main>\n");
    absl::StrAppend(&o_, "<script>", kScript, "</script>\n</body>\n</html>\n");
    return std::move(o_);
  }

 private:
  double X(int64_t ns) const {
    double f = static_cast<double>(ns - t0_) / static_cast<double>(t1_ - t0_);
    return kLabelWidth + std::clamp(f, 0.0, 1.0) * kPlotWidth;
  }

  void Header() {
    o_.append("<header><h1>tracemill run report</h1><p>");
    const char* badge = m_.exit_code == 0 ? "b-ok" : m_.exit_code == 3 ? "b-warn" : "b-err";
    absl::StrAppend(&o_, "<span class=\"badge ", badge, "\" id=\"exit-status\">exit ", m_.exit_code,
                    ": ", ExitMeaning(m_.exit_code), "</span> &nbsp; ");
    AppendHtmlEscaped(m_.command_line, &o_);
    o_.append("</p></header>\n");
  }

  void Card(const std::string& id, const std::string& key, const std::string& value_html,
            const std::string& detail_html, const std::string& data_value, bool bad = false) {
    absl::StrAppend(&o_, "<div class=\"card", bad ? " bad" : "", "\" id=\"card-", id, "\" data-value=\"",
                    data_value, "\"><div class=\"k\">", key, "</div><div class=\"v\">", value_html,
                    "</div><div class=\"d\">", detail_html, "</div></div>\n");
  }

  void Cards() {
    const Totals& t = m_.totals;
    o_.append("<section class=\"cards\" id=\"summary\">\n");
    // Ranks, nodes, GPUs, dead.
    std::string ranks_detail =
        a_.world_size > 0 ? absl::StrCat("of ", FormatCount(a_.world_size), " (world_size)")
                          : std::string("no world_size in the inputs");
    if (a_.workers > 0) absl::StrAppend(&ranks_detail, "; ", a_.workers, " workers in run event logs");
    if (a_.world_sizes.size() > 1) {
      ranks_detail = "world_size differs:";
      for (int64_t w : a_.world_sizes) absl::StrAppend(&ranks_detail, " ", w);
    }
    Card("ranks", "ranks", FormatCount(a_.ranks_seen), ranks_detail, absl::StrCat(a_.ranks_seen),
         a_.missing_ranks > 0);
    Card("nodes", "nodes", FormatCount(a_.nodes_seen),
         absl::StrCat(a_.gpus_per_node, " GPUs per node (rank / ", a_.gpus_per_node, ")"),
         absl::StrCat(a_.nodes_seen));
    Card("gpus", "GPUs", FormatCount(a_.ranks_seen), "one per rank", absl::StrCat(a_.ranks_seen));
    std::string dead_detail = a_.dead.empty()
                                  ? std::string("none")
                                  : absl::StrCat(a_.missing_ranks, " missing, ",
                                                 a_.dead_ranks - a_.missing_ranks, " failed");
    Card("dead", "dead ranks", FormatCount(a_.dead_ranks), dead_detail, absl::StrCat(a_.dead_ranks),
         a_.dead_ranks > 0);
    // Inputs and bytes.
    uint64_t decoded = 0;
    for (const InputModel& in : m_.inputs) decoded += in.decoded_bytes;
    Card("inputs", "input files", FormatCount(t.inputs),
         absl::StrCat(t.inputs_rejected, " rejected, ", t.inputs_with_errors, " with errors, ",
                      t.inputs_skipped, " skipped"),
         absl::StrCat(t.inputs), t.inputs_with_errors > 0);
    Card("input-bytes", "input bytes", FormatBytes(t.input_bytes),
         absl::StrCat(FormatCount(t.input_bytes), " B; ", FormatBytes(decoded), " decoded"),
         absl::StrCat(t.input_bytes));
    // Events.
    Card("events-read", "events read", FormatCount(t.events_read),
         t.balanced ? "= written + dropped" : "NOT balanced", absl::StrCat(t.events_read), !t.balanced);
    Card("events-written", "events written", FormatCount(t.events_written), "into the outputs",
         absl::StrCat(t.events_written));
    std::string reasons;
    for (const auto& [k, v] : t.dropped_by_reason) {
      if (!reasons.empty()) reasons.append(", ");
      absl::StrAppend(&reasons, Esc(k), " ", FormatCount(v));
    }
    Card("events-dropped", "events dropped", FormatCount(t.events_dropped),
         reasons.empty() ? std::string("none") : reasons, absl::StrCat(t.events_dropped),
         t.events_dropped > 0);
    Card("outputs", "outputs", FormatCount(t.outputs), Esc(m_.group_by.empty() ? "" : "group-by " + m_.group_by),
         absl::StrCat(t.outputs));
    Card("output-bytes", "output bytes", FormatBytes(t.output_bytes),
         absl::StrCat(FormatCount(t.output_bytes), " B"), absl::StrCat(t.output_bytes));
    // Time.
    if (m_.span_ns) {
      const auto [s, e] = *m_.span_ns;
      std::string start = s >= int64_t{946684800} * 1000000000
                              ? absl::FormatTime("from %Y-%m-%d %H:%M:%E3S UTC", absl::FromUnixNanos(s),
                                                 absl::UTCTimeZone())
                              : absl::StrCat("from ", FormatDuration(s), " (run-relative)");
      Card("time-span", "job time span", FormatShortDuration(e - s, 3), Esc(start), absl::StrCat(e - s));
    } else {
      Card("time-span", "job time span", "&ndash;", "no timed events", "");
    }
    Card("wall-time", "conversion wall time", absl::StrCat(Esc(m_.wall_seconds_text), " s"),
         absl::StrCat(m_.threads, m_.threads == 1 ? " thread" : " threads"), Esc(m_.wall_seconds_text));
    if (m_.wall_seconds > 0) {
      double mbps = static_cast<double>(t.input_bytes) / 1e6 / m_.wall_seconds;
      double eps = static_cast<double>(t.events_read) / m_.wall_seconds;
      Card("throughput", "throughput", absl::StrFormat("%.1f MB/s", mbps),
           absl::StrCat(FormatCount(static_cast<uint64_t>(eps)), " events/s"), absl::StrFormat("%.3f", mbps));
    } else {
      Card("throughput", "throughput", "&ndash;", "wall time below 1 ms", "");
    }
    if (a_.steps_seen > 0)
      Card("steps", "steps", FormatCount(a_.steps_seen), "distinct step numbers over ranks",
           absl::StrCat(a_.steps_seen));
    bool any_log = false;
    for (const InputModel& in : m_.inputs) any_log |= !in.timeline.tracks.empty();
    if (any_log) {
      std::string last;
      for (const RoundEntry& r : a_.rounds)
        if (r.survivors >= 0) last = absl::StrCat("last: ", r.survivors, "/", r.total, " survivors");
      Card("rounds", "rounds", FormatCount(a_.rounds.size()), last, absl::StrCat(a_.rounds.size()));
      Card("bytes-pushed", "bytes pushed", FormatBytes(t.bytes_pushed),
           absl::StrCat(FormatCount(t.bytes_pushed), " B by workers"), absl::StrCat(t.bytes_pushed));
      Card("bytes-pulled", "bytes pulled", FormatBytes(t.bytes_pulled),
           absl::StrCat(FormatCount(t.bytes_pulled), " B by workers"), absl::StrCat(t.bytes_pulled));
    }
    Card("version", "tracemill", Esc(m_.version), "built this run", Esc(m_.version));
    o_.append("</section>\n");
  }

  // ---------------- timeline ----------------

  void Timeline() {
    o_.append("<section id=\"timeline\"><h2>Timeline of steps</h2>\n<p class=\"note\">");
    if (a_.collapsed) {
      absl::StrAppend(&o_, FormatCount(a_.rank_inputs),
                      " ranks are too many to read one per row: one row per node (each step from the "
                      "node's earliest start to its latest end), plus a row of its own for every dead "
                      "rank and the slowest ranks. ");
    } else {
      absl::StrAppend(&o_, "One row per rank, banded by node (", a_.gpus_per_node, " ranks per node). ");
    }
    o_.append(
        "Each bar is a step (Kineto <code>ProfilerStep#N</code>, Paddle <code>ProfileStep#N</code>, "
        "smdebug <code>Step:N</code>) or an orchestrator round; hover for exact numbers. ");
    if (a_.binned) o_.append("Rows with many steps draw bins of consecutive steps. ");
    if (a_.time_ns && t0_ >= int64_t{946684800} * 1000000000)
      o_.append(absl::FormatTime("Time is relative to %Y-%m-%d %H:%M:%E6S UTC.",
                                 absl::FromUnixNanos(t0_), absl::UTCTimeZone()));
    else if (a_.time_ns)
      absl::StrAppend(&o_, "Time is relative to ", FormatDuration(t0_), " after the run start.");
    o_.append("</p>\n");
    o_.append(
        "<div class=\"legend\"><span><span class=\"sw s0\"></span>step</span>"
        "<span><span class=\"sw s1\"></span>next step</span>"
        "<span><span class=\"sw slow\"></span>slowest of its step (straggler)</span>"
        "<span><span class=\"sw rd\"></span>round (scheduler), survivors/total</span>"
        "<span><span class=\"sw act\"></span>first to last event of the input</span>"
        "<span><span class=\"sw dead\"></span>dead from the point of failure</span>"
        "<span><span class=\"sw miss\"></span>missing (no input)</span></div>\n");
    if (!a_.time_ns || a_.rows.empty()) {
      o_.append("<p class=\"note\">No timed events and no rows to draw.</p></section>\n");
      return;
    }
    const int height = kAxisHeight + static_cast<int>(a_.rows.size()) * kRowHeight + 8;
    absl::StrAppend(&o_, "<div class=\"tl\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"", kWidth,
                    "\" height=\"", height, "\" viewBox=\"0 0 ", kWidth, " ", height,
                    "\" role=\"img\" aria-label=\"timeline of steps per rank\">\n");
    o_.append(
        "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
        "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fbe9e9\"/>"
        "<rect width=\"2\" height=\"6\" fill=\"#d62728\" fill-opacity=\".55\"/></pattern></defs>\n");
    // Node bands.
    for (size_t r = 0; r < a_.rows.size(); ++r) {
      const Row& row = a_.rows[r];
      if (row.node >= 0 && row.node % 2 == 1)
        absl::StrAppend(&o_, "<rect class=\"band\" x=\"0\" y=\"", kAxisHeight + r * kRowHeight, "\" width=\"",
                        kWidth, "\" height=\"", kRowHeight, "\"/>\n");
    }
    Axis(height);
    for (size_t r = 0; r < a_.rows.size(); ++r) RowSvg(a_.rows[r], kAxisHeight + static_cast<int>(r) * kRowHeight);
    o_.append("</svg></div></section>\n");
  }

  void Axis(int height) {
    const int64_t span = t1_ - t0_;
    // A 1-2-5 step giving about 8 ticks.
    int64_t step = 1;
    while (step < INT64_MAX / 10 && span / step > 8) {
      if (span / (step * 2) <= 8) { step *= 2; break; }
      if (span / (step * 5) <= 8) { step *= 5; break; }
      step *= 10;
    }
    for (int64_t k = 0; k <= span / step && k <= 20; ++k) {  // k * step <= span, without overflow
      double x = X(t0_ + k * step);
      absl::StrAppend(&o_, "<line class=\"grid\" x1=\"", Px(x), "\" y1=\"", kAxisHeight - 6, "\" x2=\"", Px(x),
                      "\" y2=\"", height - 4, "\"/><text class=\"ax\" x=\"", Px(x), "\" y=\"", kAxisHeight - 10,
                      "\" text-anchor=\"", k == 0 ? "start" : "middle", "\">",
                      k == 0 ? std::string("0") : absl::StrCat("+", FormatShortDuration(k * step, 3)),
                      "</text>\n");
    }
    absl::StrAppend(&o_, "<text class=\"ax\" x=\"6\" y=\"", kAxisHeight - 10, "\">",
                    a_.collapsed ? "node / rank" : "rank", "</text>\n");
  }

  void RowSvg(const Row& row, int y) {
    const int mid = y + kRowHeight / 2;
    const int bar_y = y + (kRowHeight - kBarHeight) / 2;
    o_.append("<g>");
    if (row.first_of_node && y > kAxisHeight && (row.kind == RowKind::kScheduler || row.node >= 0))
      absl::StrAppend(&o_, "<line class=\"sep\" x1=\"0\" y1=\"", y, "\" x2=\"", kWidth, "\" y2=\"", y, "\"/>");
    // The whole row answers a hover with its label and detail.
    absl::StrAppend(&o_, "<rect class=\"hit\" x=\"0\" y=\"", y, "\" width=\"", kWidth, "\" height=\"",
                    kRowHeight, "\"><title>");
    AppendHtmlEscaped(row.label, &o_);
    if (!row.detail.empty()) {
      o_.append("\n");
      AppendHtmlEscaped(row.detail, &o_);
    }
    o_.append("</title></rect>");
    if (row.first_of_node && row.node >= 0 && (row.kind == RowKind::kRank || row.kind == RowKind::kMissing))
      absl::StrAppend(&o_, "<text class=\"nl\" x=\"6\" y=\"", mid + 4, "\">node ", row.node, "</text>");
    if (row.kind == RowKind::kMore) {
      absl::StrAppend(&o_, "<text class=\"ax\" x=\"", kNodeWidth, "\" y=\"", mid + 4, "\">");
      AppendHtmlEscaped(row.label, &o_);
      o_.append("</text></g>\n");
      return;
    }
    const int label_x = row.kind == RowKind::kNode ? 6 : kNodeWidth;
    absl::StrAppend(&o_, "<text x=\"", label_x, "\" y=\"", mid + 4, "\"",
                    row.dead ? " class=\"dl\"" : row.kind == RowKind::kNode ? " class=\"nl\"" : "", ">");
    AppendHtmlEscaped(TruncateUtf8(row.label, kMaxLabelBytes), &o_);
    if (row.kind == RowKind::kNode) {
      o_.append(" <tspan class=\"ax\">");
      AppendHtmlEscaped(row.detail, &o_);
      o_.append("</tspan>");
    }
    o_.append("</text>");
    if (row.kind == RowKind::kMissing) {
      absl::StrAppend(&o_, "<rect class=\"miss\" x=\"", kLabelWidth, "\" y=\"", bar_y, "\" width=\"", kPlotWidth,
                      "\" height=\"", kBarHeight, "\"><title>");
      AppendHtmlEscaped(row.label, &o_);
      o_.append(": ");
      AppendHtmlEscaped(row.dead_reason, &o_);
      o_.append("</title></rect></g>\n");
      return;
    }
    if (row.span_ns) {
      absl::StrAppend(&o_, "<line class=\"act\" x1=\"", Px(X(row.span_ns->first)), "\" y1=\"", mid, "\" x2=\"",
                      Px(std::max(X(row.span_ns->second), X(row.span_ns->first) + 1)), "\" y2=\"", mid,
                      "\"><title>");
      AppendHtmlEscaped(row.label, &o_);
      absl::StrAppend(&o_, ": events from ", Rel(row.span_ns->first, t0_), " to ", Rel(row.span_ns->second, t0_),
                      " (", FormatDuration(row.span_ns->second - row.span_ns->first), ")</title></line>");
    }
    for (const Bar& b : row.bars) BarSvg(row, b, bar_y);
    if (row.dead) {
      const int64_t from = row.dead_from_ns.value_or(t0_);
      const double x = X(from);
      absl::StrAppend(&o_, "<rect class=\"dead\" x=\"", Px(x), "\" y=\"", y + 1, "\" width=\"",
                      Px(std::max(kLabelWidth + kPlotWidth - x, 2.0)), "\" height=\"", kRowHeight - 2,
                      "\"><title>");
      AppendHtmlEscaped(row.label, &o_);
      if (row.dead_from_ns) absl::StrAppend(&o_, ": dead from ", Rel(from, t0_), "\n");
      else o_.append(": dead for the whole run\n");
      AppendHtmlEscaped(row.dead_reason, &o_);
      o_.append("</title></rect>");
    }
    o_.append("</g>\n");
  }

  void BarSvg(const Row& row, const Bar& b, int bar_y) {
    const double x0 = X(b.start_ns), x1 = X(b.end_ns);
    const double w = std::max(x1 - x0, 1.0);
    const char* cls = row.kind == RowKind::kScheduler ? "rd"
                      : b.slowest                     ? "slow"
                      : (b.first_step & 1)            ? "s1"
                                                      : "s0";
    absl::StrAppend(&o_, "<rect class=\"", cls, "\" x=\"", Px(x0), "\" y=\"", bar_y, "\" width=\"", Px(w),
                    "\" height=\"", kBarHeight, "\"><title>");
    AppendHtmlEscaped(row.label, &o_);
    const int64_t dur = b.end_ns - b.start_ns;
    const char* what = row.kind == RowKind::kScheduler ? "round" : "step";
    if (b.first_step == b.last_step) {
      absl::StrAppend(&o_, " \xC2\xB7 ", what, " ", b.first_step, ": ", FormatDuration(dur));
    } else {
      absl::StrAppend(&o_, " \xC2\xB7 ", what, "s ", b.first_step, "\xE2\x80\x93", b.last_step, ": ",
                      FormatDuration(dur), " in all");
    }
    absl::StrAppend(&o_, "\nfrom ", Rel(b.start_ns, t0_), " to ", Rel(b.end_ns, t0_));
    if (b.survivors >= 0) absl::StrAppend(&o_, "\nsurvivors ", b.survivors, "/", b.total);
    if (row.kind == RowKind::kNode) {
      absl::StrAppend(&o_, "\n", b.ranks, b.ranks == 1 ? " rank" : " ranks");
      if (b.median_ns >= 0) absl::StrAppend(&o_, ", node median ", FormatDuration(b.median_ns));
      if (!b.slowest_label.empty()) {
        o_.append("\nslowest: ");
        AppendHtmlEscaped(b.slowest_label, &o_);
        absl::StrAppend(&o_, " (", FormatDuration(b.slowest_ns), ")");
      }
      if (b.lag_ns > 0) absl::StrAppend(&o_, ", ", FormatDuration(b.lag_ns), " behind the job median");
    } else if (b.median_ns >= 0) {
      absl::StrAppend(&o_, "\nmedian ", FormatDuration(b.median_ns), ": ", b.lag_ns >= 0 ? "+" : "",
                      FormatDuration(b.lag_ns), " (", FormatPercent(b.lag_ns, b.median_ns), ")");
    }
    if (b.slowest) o_.append("\nslowest of its step");
    o_.append("</title></rect>");
    if (!a_.collapsed && b.survivors < 0 && b.first_step == b.last_step && w >= 44)
      absl::StrAppend(&o_, "<text class=\"", b.slowest || (b.first_step & 1) ? "bt" : "rt", "\" x=\"",
                      Px(x0 + w / 2), "\" y=\"", bar_y + kBarHeight - 2, "\" text-anchor=\"middle\">#",
                      b.first_step, "</text>");
    if (b.survivors >= 0 && w >= 28)
      absl::StrAppend(&o_, "<text class=\"rt\" x=\"", Px(x0 + w / 2), "\" y=\"", bar_y + kBarHeight - 2,
                      "\" text-anchor=\"middle\">", b.survivors, "/", b.total, "</text>");
  }

  // ---------------- tables ----------------

  void Rounds() {
    if (a_.rounds.empty()) return;
    o_.append("<section id=\"rounds\"><h2>Rounds</h2>\n<p class=\"note\">Rounds of run event logs: workers "
              "alive at the end of the round / workers in the run.</p>\n");
    o_.append("<table id=\"rounds-table\"><thead><tr><th>run event log</th><th class=\"n\">round</th>"
              "<th class=\"n\">start</th><th class=\"n\">duration</th><th class=\"n\">survivors</th>"
              "<th class=\"n\">lost</th></tr></thead><tbody>\n");
    for (const RoundEntry& r : a_.rounds) {
      o_.append("<tr><td>");
      AppendHtmlEscaped(r.log, &o_);
      absl::StrAppend(&o_, "</td><td class=\"n\">", r.round, "</td><td class=\"n\">", Rel(r.start_ns, t0_),
                      "</td><td class=\"n\">", FormatDuration(r.end_ns - r.start_ns), "</td>");
      if (r.survivors >= 0) {
        absl::StrAppend(&o_, "<td class=\"n surv\">", r.survivors, "/", r.total, "</td><td class=\"n\">",
                        std::max(r.total - r.survivors, 0), "</td></tr>\n");
      } else {
        o_.append("<td class=\"n surv\">&ndash;</td><td class=\"n\">&ndash;</td></tr>\n");
      }
    }
    o_.append("</tbody></table></section>\n");
  }

  void Stragglers() {
    o_.append("<section id=\"stragglers\"><h2>Stragglers</h2>\n");
    if (a_.stragglers.empty()) {
      o_.append("<p class=\"note\">No step is shared by two or more ranks or workers: nothing to "
                "compare.</p></section>\n");
      return;
    }
    o_.append("<p class=\"note\">Per step, the three slowest ranks (or workers) and how far their step "
              "lasted beyond the median of all that have the step.");
    if (a_.straggler_steps_omitted)
      absl::StrAppend(&o_, " Only the ", a_.stragglers.size(), " steps with the largest lag are listed; ",
                      a_.straggler_steps_omitted, " more are not.");
    o_.append("</p>\n");
    bool groups = false;
    for (const StepStragglers& s : a_.stragglers) groups |= !s.group.empty();
    o_.append("<div class=\"scroll\"><table class=\"sortable\" id=\"stragglers-table\"><thead><tr>");
    if (groups) o_.append("<th>of</th>");
    o_.append("<th class=\"n\">step</th><th class=\"n\">compared</th><th class=\"n\">median</th>"
              "<th>slowest</th><th class=\"n\">duration</th><th class=\"n\">behind median</th>"
              "<th class=\"n\">%</th><th>2nd</th><th>3rd</th></tr></thead><tbody>\n");
    for (const StepStragglers& s : a_.stragglers) {
      absl::StrAppend(&o_, "<tr data-step=\"", s.step, "\">");
      if (groups) {
        o_.append("<td>");
        AppendHtmlEscaped(s.group.empty() ? "ranks" : s.group, &o_);
        o_.append("</td>");
      }
      const Straggler& top = s.slowest.front();
      absl::StrAppend(&o_, "<td class=\"n\">", s.step, "</td><td class=\"n\">", s.participants,
                      "</td><td class=\"n\" data-v=\"", s.median_ns, "\">", FormatDuration(s.median_ns),
                      "</td><td class=\"who\">");
      AppendHtmlEscaped(top.label, &o_);
      absl::StrAppend(&o_, "</td><td class=\"n\" data-v=\"", top.dur_ns, "\">", FormatDuration(top.dur_ns),
                      "</td><td class=\"n lag\" data-v=\"", top.lag_ns, "\">", top.lag_ns >= 0 ? "+" : "",
                      FormatDuration(top.lag_ns), "</td><td class=\"n\">", FormatPercent(top.lag_ns, s.median_ns),
                      "</td>");
      for (size_t k = 1; k < 3; ++k) {
        o_.append("<td>");
        if (k < s.slowest.size()) {
          AppendHtmlEscaped(s.slowest[k].label, &o_);
          absl::StrAppend(&o_, " (", s.slowest[k].lag_ns >= 0 ? "+" : "", FormatDuration(s.slowest[k].lag_ns), ")");
        }
        o_.append("</td>");
      }
      o_.append("</tr>\n");
    }
    o_.append("</tbody></table></div></section>\n");
  }

  void Dead() {
    o_.append("<section id=\"dead\"><h2>Dead ranks</h2>\n");
    if (a_.dead.empty()) {
      o_.append("<p class=\"note\">None: every rank the inputs name has an input that converted cleanly");
      if (a_.world_size > 0) absl::StrAppend(&o_, ", and all ", a_.world_size, " ranks of world_size are present");
      o_.append(".</p></section>\n");
      return;
    }
    o_.append("<p class=\"note\">Inputs that failed (rejected: nothing converted; damaged: converted up to "
              "the damage), ranks that world_size says exist but no input holds, and workers of run "
              "event logs with a failed action.</p>\n");
    o_.append("<div class=\"scroll\"><table class=\"sortable\" id=\"dead-table\"><thead><tr><th>who</th>"
              "<th>what</th><th class=\"n\">from</th><th>reason</th><th>input</th></tr></thead><tbody>\n");
    constexpr size_t kMaxDeadTableRows = 1024;
    for (size_t k = 0; k < a_.dead.size() && k < kMaxDeadTableRows; ++k) {
      const DeadEntry& d = a_.dead[k];
      absl::StrAppend(&o_, "<tr class=\"dead\" data-kind=\"", d.kind, "\"><td>");
      AppendHtmlEscaped(d.label, &o_);
      absl::StrAppend(&o_, "</td><td>", d.kind, "</td><td class=\"n\">",
                      d.from_ns ? Rel(*d.from_ns, t0_) : std::string("start"), "</td><td>");
      AppendHtmlEscaped(d.reason, &o_);
      o_.append("</td><td class=\"path\">");
      AppendHtmlEscaped(d.path, &o_);
      o_.append("</td></tr>\n");
    }
    o_.append("</tbody></table></div>\n");
    if (a_.dead.size() > kMaxDeadTableRows)
      absl::StrAppend(&o_, "<p class=\"note\">", a_.dead.size() - kMaxDeadTableRows,
                      " more dead entries are in manifest.json.</p>\n");
    o_.append("</section>\n");
  }

  void Inputs() {
    o_.append("<section id=\"inputs\"><h2>Inputs</h2>\n");
    o_.append("<div class=\"scroll\"><table class=\"sortable\" id=\"inputs-table\"><thead><tr><th>path</th>"
              "<th class=\"n\">rank</th><th>format</th><th class=\"n\">bytes</th><th class=\"n\">read</th>"
              "<th class=\"n\">written</th><th class=\"n\">dropped</th><th class=\"n\">steps</th>"
              "<th>output</th><th>status</th></tr></thead><tbody>\n");
    for (const InputModel& in : m_.inputs) {
      // Compact rows (4,096 of them in a big job): alignment comes from the
      // table's CSS, numbers sort by their text.
      o_.append(in.has_error ? "<tr class=\"dead\"><td>" : "<tr><td>");
      AppendHtmlEscaped(in.path, &o_);
      o_.append("</td><td>");
      if (in.rank) absl::StrAppend(&o_, *in.rank);
      o_.append("</td><td>");
      AppendHtmlEscaped(in.format, &o_);
      size_t steps = in.timeline.steps.size();
      for (const auto& t : in.timeline.tracks) steps += t.rank ? 0 : t.steps.size();
      absl::StrAppend(&o_, "</td><td>", FormatCount(in.bytes), "</td><td>", FormatCount(in.events_read),
                      "</td><td>", FormatCount(in.events_written), "</td><td>", FormatCount(in.events_dropped),
                      "</td><td>", steps, "</td><td>");
      AppendHtmlEscaped(in.output, &o_);
      o_.append("</td><td>");
      if (in.skipped) o_.append("skipped");
      else if (in.rejected) o_.append("<b class=\"badge b-err\">rejected</b>");
      else if (in.has_error) o_.append("<b class=\"badge b-err\">damaged</b>");
      else if (!in.warnings.empty()) o_.append("<b class=\"badge b-warn\">warnings</b>");
      else o_.append("<b class=\"badge b-ok\">ok</b>");
      o_.append("</td></tr>\n");
    }
    o_.append("</tbody></table></div></section>\n");
  }

  void Outputs() {
    o_.append("<section id=\"outputs\"><h2>Outputs</h2>\n");
    if (m_.outputs.empty()) {
      o_.append("<p class=\"note\">No output was written.</p></section>\n");
      return;
    }
    o_.append("<div class=\"scroll\"><table class=\"sortable\" id=\"outputs-table\"><thead><tr><th>file</th>"
              "<th>ranks</th><th class=\"n\">inputs</th><th class=\"n\">events</th><th class=\"n\">bytes</th>"
              "<th>status</th></tr></thead><tbody>\n");
    for (const OutputModel& out : m_.outputs) {
      o_.append(out.error.empty() ? "<tr><td>" : "<tr class=\"dead\"><td>");
      AppendHtmlEscaped(out.path, &o_);
      absl::StrAppend(&o_, "</td><td>", RankList(out.ranks), "</td><td class=\"n\">", out.inputs,
                      "</td><td class=\"n\" data-v=\"", out.events, "\">", FormatCount(out.events),
                      "</td><td class=\"n\" data-v=\"", out.bytes, "\">", FormatCount(out.bytes), "</td><td>");
      if (out.error.empty()) {
        o_.append("<span class=\"badge b-ok\">ok</span>");
      } else {
        o_.append("<span class=\"badge b-err\">error</span> ");
        AppendHtmlEscaped(out.error, &o_);
      }
      o_.append("</td></tr>\n");
    }
    o_.append("</tbody></table></div></section>\n");
  }

  void Log() {
    o_.append("<section id=\"log\"><h2>Warnings and errors</h2>\n");
    size_t listed = 0, quiet = 0;
    std::string body;
    for (const InputModel& in : m_.inputs) {
      if (!in.has_error && in.warnings.empty()) {
        ++quiet;
        continue;
      }
      if (++listed > kMaxLogInputs) continue;
      body.append("<div><b>");
      AppendHtmlEscaped(in.path, &body);
      body.append("</b><ul>");
      if (in.has_error) {
        absl::StrAppend(&body, "<li class=\"e\">error (", in.rejected ? "rejected" : "damaged", ", ");
        AppendHtmlEscaped(in.error_code, &body);
        absl::StrAppend(&body, " at byte ", in.error_offset, "): ");
        AppendHtmlEscaped(in.error_message, &body);
        body.append("</li>");
      }
      for (const std::string& w : in.warnings) {
        body.append("<li class=\"w\">");
        AppendHtmlEscaped(w, &body);
        body.append("</li>");
      }
      body.append("</ul></div>\n");
    }
    for (const OutputModel& out : m_.outputs) {
      if (out.error.empty()) continue;
      ++listed;
      body.append("<div><b>output ");
      AppendHtmlEscaped(out.path, &body);
      body.append("</b><ul><li class=\"e\">");
      AppendHtmlEscaped(out.error, &body);
      body.append("</li></ul></div>\n");
    }
    if (listed == 0) {
      o_.append("<p class=\"note\">No warning and no error.</p></section>\n");
      return;
    }
    absl::StrAppend(&o_, "<p class=\"note\">", listed, listed == 1 ? " file" : " files",
                    " with warnings or errors; ", quiet, " without.");
    if (listed > kMaxLogInputs) absl::StrAppend(&o_, " The first ", kMaxLogInputs, " are listed.");
    o_.append("</p>\n<div class=\"log\">\n");
    o_.append(body);
    o_.append("</div></section>\n");
  }

  const RunModel& m_;
  const Analysis& a_;
  int64_t t0_ = 0, t1_ = 1;
  std::string o_;
};

}  // namespace

std::string RenderReport(const RunModel& m, const Analysis& a) { return Page(m, a).Render(); }

absl::StatusOr<std::string> BuildReportHtml(std::string_view manifest_json) {
  TM_ASSIGN_OR_RETURN(RunModel m, ParseManifest(manifest_json));
  return RenderReport(m, Analyze(m));
}

absl::Status WriteReport(const std::string& out_dir) {
  TM_ASSIGN_OR_RETURN(RunModel m, ReadManifest(out_dir));
  std::string html = RenderReport(m, Analyze(m));
  TM_ASSIGN_OR_RETURN(auto file, formats::OutputFile::Create(out_dir + "/report.html", /*gzip=*/false));
  TM_RETURN_IF_ERROR(file->Append(html));
  return file->Commit();
}

}  // namespace tracemill::report
