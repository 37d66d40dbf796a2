#include "report/html_report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "formats/chrome/output_file.h"
#include "formats/common/status_macros.h"
#include "report/html_text.h"
#include "report/page_sections.h"
#include "report/run_status.h"

namespace tracemill::report {
namespace {

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
.card.quiet .v{color:var(--muted)}
.banner{margin-top:14px;padding:6px 14px;border:1px solid #e8c48a;border-radius:6px;background:#fff8eb}
.banner ul{margin:0;padding-left:18px}.banner li{margin:3px 0;overflow-wrap:anywhere}
.banner li.err{color:#a11}.banner li.warn{color:#6b3d00}
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
td.who.slow{color:#a65800;font-weight:600}
p.warn{color:#8a4b00;margin:6px 0}
#clocks-table tr.warn td:nth-child(7),#clocks-table tr.none td:nth-child(7){color:#8a4b00}
.scroll{max-height:440px;overflow:auto;border:1px solid var(--line);display:inline-block;max-width:100%}
.tl{overflow-x:auto;border:1px solid var(--line);border-radius:4px}
.tl svg{display:block}
.legend{display:flex;flex-wrap:wrap;gap:14px;font-size:12px;color:var(--muted);margin:6px 0}
.sw{display:inline-block;width:14px;height:10px;margin-right:5px;vertical-align:-1px;border-radius:2px}
.sw.s0{background:var(--s0)}.sw.s1{background:var(--s1)}.sw.slow{background:var(--slow)}
.sw.rd{background:var(--round)}.sw.dead{background:var(--dead);opacity:.45}
.sw.miss{background:repeating-linear-gradient(45deg,var(--dead) 0 2px,#fff 2px 5px)}
.sw.absent{background:repeating-linear-gradient(45deg,#9aa3b2 0 2px,#fff 2px 5px)}
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
svg .miss{fill:url(#hatch)}svg .absent{fill:url(#hatch-grey)}
svg .bd-compute,.bd-compute{fill:#3b7d3b;color:#3b7d3b}svg .bd-noncompute,.bd-noncompute{fill:#d08a1c;color:#b0700c}
svg .bd-idle,.bd-idle{fill:#b9bec8;color:#6b7280}
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

// `<!DOCTYPE>` through `<body>`: the CSP, the title and the inline style.
void AppendHead(const RunModel& m, const Analysis& a, std::string* o) {
  o->append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
  o->append(
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n");
  o->append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
  absl::StrAppend(o, "<title>tracemill report: ", FormatSignedCount(a.ranks_seen),
                  a.ranks_seen == 1 ? " rank" : " ranks", ", ", GroupedCount(m.totals.inputs),
                  m.totals.inputs == 1 ? " input" : " inputs", "</title>\n");
  absl::StrAppend(o, "<style>", kStyle, "</style>\n</head>\n<body>\n");
}

// The page header: exit status badge and command line.
void AppendHeader(const RunModel& m, std::string* o) {
  o->append("<header><h1>tracemill run report</h1><p>");
  const RunBadge badge = BadgeOf(m);
  absl::StrAppend(o, "<span class=\"badge ", badge.css, "\" id=\"exit-status\">", badge.text, "</span> &nbsp; ");
  AppendHtmlEscaped(m.command_line, o);
  o->append("</p></header>\n");
}

// The footer (version and command line), then the sorting script.
void AppendFooter(const RunModel& m, std::string* o) {
  o->append("<footer>Built from manifest.json by tracemill ");
  AppendHtmlEscaped(m.version, o);
  o->append(" (rebuild with <code>tracemill report OUTDIR</code>). Command line: <code>");
  AppendHtmlEscaped(m.command_line, o);
  o->append("</code></footer>\n</main>\n");
  absl::StrAppend(o, "<script>", kScript, "</script>\n</body>\n</html>\n");
}

}  // namespace

bool IsEpochTime(int64_t ns) { return ns >= int64_t{946684800} * 1000000000; }

std::string StragglerRule() {
  return absl::StrCat("more than ", kStragglerMinPercent, " % and more than ", FormatDuration(kStragglerMinLagNs),
                      " behind the step's median");
}

std::string RelativeTime(int64_t ns, int64_t t0_ns) {
  int64_t d = ns - t0_ns;
  if (d == 0) return "+0 s";
  return absl::StrCat(d > 0 ? "+" : "", FormatDuration(d));
}

std::string RenderReport(const RunModel& m, const Analysis& a) {
  PageInput in{m, a};
  if (a.time_ns) {
    in.t0_ns = a.time_ns->first;
    in.t1_ns = std::max(a.time_ns->second, in.t0_ns + 1);
  }
  std::string o;
  o.reserve(64 << 10);
  AppendHead(m, a, &o);
  AppendHeader(m, &o);
  o.append("<main>\n");
  AppendBanner(in, &o);
  AppendSummaryCards(in, &o);
  AppendTimeline(in, &o);
  AppendRoundsTable(in, &o);
  AppendStragglersTable(in, &o);
  AppendStepDurations(in, &o);
  AppendCollectivesSection(in, &o);
  AppendClocksSection(in, &o);
  AppendTemporalBreakdown(in, &o);
  AppendSystemSection(in, &o);
  AppendDcgmSection(in, &o);
  AppendDeadTable(in, &o);
  AppendInputsTable(in, &o);
  AppendOutputsTable(in, &o);
  AppendWarningLog(in, &o);
  AppendFooter(m, &o);
  return o;
}

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
