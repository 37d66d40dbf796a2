// The report's Collectives section (page_sections.h), from the manifest's
// `tables.collectives` member (convert --tables; analysis/collectives.h):
// who kept the others waiting at the collectives, the worst instances, skew
// over time, and latency and bandwidth per collective kind and size.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/html_text.h"
#include "report/page_sections.h"

namespace tracemill::report {
namespace {

using Collectives = TablesModel::Collectives;

constexpr int kSkewWidth = 900;   // px, the job's collectives from first to last
constexpr int kSkewHeight = 120;  // px, the largest skew
constexpr int kSkewBins = 64;     // as analysis/tables_store.cc's CollectivesJson bins them

std::string RankText(const std::optional<int64_t>& r) { return r ? absl::StrCat(*r) : std::string("(none)"); }

void Lead(const Collectives& c, std::string* o) {
  absl::StrAppend(o, "<p class=\"note\">", GroupedCount(static_cast<uint64_t>(c.instances)),
                  " collective instances matched across ranks (", GroupedCount(static_cast<uint64_t>(c.shared)),
                  " held by two or more ranks; tables collectives, collective_instances, rank_waits). A rank's "
                  "arrival is the start of its collective; the instance's skew is its last arrival minus its "
                  "first, and every rank waits from its arrival to the last one.");
  if (!c.ranks.empty() && c.ranks.front().caused_ns > 0) {
    const Collectives::Rank& r = c.ranks.front();
    absl::StrAppend(o, " <b>Rank ", RankText(r.rank), " kept the others waiting most</b>: last at ",
                    GroupedCount(static_cast<uint64_t>(r.times_last)), " of ",
                    GroupedCount(static_cast<uint64_t>(c.shared)), " instances, ", FormatDuration(r.caused_ns),
                    " of waiting in all.");
  }
  o->append("</p>\n");
  if (c.unaligned > 0)
    absl::StrAppend(o, "<p class=\"note warn\">", GroupedCount(static_cast<uint64_t>(c.unaligned)),
                    " instances involve ranks whose clock is not aligned with the job's (--align-clocks off on "
                    "several nodes, or a node that could not be aligned): their skews mix clock offsets with "
                    "late arrivals.</p>\n");
}

void RanksTable(const Collectives& c, std::string* o) {
  if (c.ranks.empty()) return;
  o->append("<h3>Who kept the others waiting</h3>\n<div class=\"scroll\"><table class=\"sortable\" "
            "id=\"collective-ranks\"><thead><tr><th class=\"n\">rank</th><th class=\"n\">instances</th>"
            "<th class=\"n\">times last</th><th class=\"n\">share last</th><th class=\"n\">waiting caused</th>"
            "<th class=\"n\">time waited</th></tr></thead><tbody>\n");
  for (const Collectives::Rank& r : c.ranks)
    absl::StrAppend(o, "<tr>", TdN(RankText(r.rank)), TdN(GroupedCount(static_cast<uint64_t>(r.instances))),
                    TdN(GroupedCount(static_cast<uint64_t>(r.times_last))), TdN(FormatShare(r.times_last, c.shared)),
                    TdN(FormatDuration(r.caused_ns)), TdN(FormatDuration(r.waited_ns)), "</tr>\n");
  o->append("</tbody></table></div>\n");
}

void WorstTable(const PageInput& in, const Collectives& c, std::string* o) {
  if (c.worst.empty()) return;
  o->append("<h3>The worst instances</h3>\n<div class=\"scroll\"><table class=\"sortable\" "
            "id=\"collective-worst\"><thead><tr><th class=\"n\">instance</th><th>collective</th><th>group</th>"
            "<th class=\"n\">seq</th><th>first arrival</th><th class=\"n\">ranks</th><th class=\"n\">last rank</th>"
            "<th class=\"n\">skew</th><th class=\"n\">latency</th></tr></thead><tbody>\n");
  for (const Collectives::Instance& i : c.worst)
    absl::StrAppend(o, "<tr", i.aligned ? "" : " class=\"warn\" title=\"clocks not aligned\"", ">",
                    TdN(absl::StrCat(i.instance)), Td(i.collective), Td(i.process_group),
                    TdN(i.seq ? absl::StrCat(*i.seq) : std::string()), Td(RelativeTime(i.first_arrival_ns, in.t0_ns)),
                    TdN(absl::StrCat(i.ranks)), TdN(RankText(i.last_rank)), TdN(FormatDuration(i.skew_ns)),
                    TdN(FormatDuration(i.latency_ns)), "</tr>\n");
  o->append("</tbody></table></div>\n");
}

// SkewChart: per bin of first arrival (64 over the job's shared
// instances; empty bins are not drawn), the largest skew (light) and the
// mean (dark), on one scale; a bar stands where its bin's first instance
// starts.
void SkewChart(const PageInput& in, const Collectives& c, std::string* o) {
  if (c.skew.size() < 2) return;
  int64_t top = 1;
  for (const auto& b : c.skew) top = std::max(top, b.max_skew_ns);
  const int64_t lo = c.skew.front().start_ns, hi = std::max(c.skew.back().start_ns, lo + 1);
  const double w = static_cast<double>(kSkewWidth) / (kSkewBins + 1);
  absl::StrAppend(o, "<h3>Skew over time</h3>\n<p class=\"note\">The shared instances in ", kSkewBins,
                  " bins of first arrival, from ", RelativeTime(lo, in.t0_ns), " to ", RelativeTime(hi, in.t0_ns),
                  ": each bin's largest skew (light) and mean skew (dark); the top is ", FormatDuration(top),
                  ".</p>\n<svg class=\"skew\" width=\"", kSkewWidth, "\" height=\"", kSkewHeight,
                  "\" role=\"img\" aria-label=\"skew over time\">\n");
  for (const auto& b : c.skew) {
    const double x = static_cast<double>(b.start_ns - lo) / static_cast<double>(hi - lo) * (kSkewWidth - w);
    const double hmax = static_cast<double>(b.max_skew_ns) / static_cast<double>(top) * kSkewHeight;
    const double hmean = static_cast<double>(b.mean_skew_ns) / static_cast<double>(top) * kSkewHeight;
    absl::StrAppend(o, "<g><title>", RelativeTime(b.start_ns, in.t0_ns), ": ", b.instances, " instances, mean skew ",
                    FormatDuration(b.mean_skew_ns), ", largest ", FormatDuration(b.max_skew_ns), "</title>",
                    absl::StrFormat("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#f0b27a\"/>",
                                    x, kSkewHeight - hmax, std::max(w - 1, 1.0), hmax),
                    absl::StrFormat("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#b9561b\"/>"
                                    "</g>\n",
                                    x, kSkewHeight - hmean, std::max(w - 1, 1.0), hmean));
  }
  o->append("</svg>\n");
}

std::string Gbps(const std::optional<double>& v) { return v ? absl::StrFormat("%.2f", *v) : std::string(); }

void BandwidthTable(const Collectives& c, std::string* o) {
  if (c.bandwidth.empty()) return;
  o->append("<h3>Latency and bandwidth per collective and size</h3>\n<p class=\"note\">Latency is an instance's "
            "shortest op over its ranks (TraceLens' communication latency); algorithm bandwidth its bytes over "
            "that latency, bus bandwidth that times NCCL's factor for the kind and group size (GB/s: 10<sup>9</sup> "
            "bytes a second); means over the instances. Sizes come from Kineto's <code>In/Out msg nelems</code> "
            "and <code>dtype</code>.</p>\n<div class=\"scroll\"><table class=\"sortable\" id=\"collective-bandwidth\">"
            "<thead><tr><th>collective</th><th>size</th><th class=\"n\">instances</th><th class=\"n\">mean latency</th>"
            "<th class=\"n\">algbw GB/s</th><th class=\"n\">busbw GB/s</th></tr></thead><tbody>\n");
  for (const Collectives::Bandwidth& b : c.bandwidth)
    absl::StrAppend(o, "<tr>", Td(b.collective), Td(b.size), TdN(GroupedCount(static_cast<uint64_t>(b.instances))),
                    TdN(FormatDuration(b.mean_latency_ns)), TdN(Gbps(b.algbw_gbps)), TdN(Gbps(b.busbw_gbps)),
                    "</tr>\n");
  o->append("</tbody></table></div>\n");
}

}  // namespace

void AppendCollectivesSection(const PageInput& in, std::string* o) {
  const Collectives& c = in.model.tables.collectives;
  if (!c.present || c.instances == 0) return;
  o->append("<section id=\"collectives\"><h2>Collectives</h2>\n");
  Lead(c, o);
  RanksTable(c, o);
  WorstTable(in, c, o);
  SkewChart(in, c, o);
  BandwidthTable(c, o);
  o->append("</section>\n");
}

}  // namespace tracemill::report
