// The summary cards of the run report (page_sections.h).
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "report/html_text.h"
#include "report/page_sections.h"

namespace tracemill::report {
namespace {

// One card: `value_html` and `detail_html` are already escaped;
// `data_value` is the exact figure for scripts and tests.
void Card(std::string* o, const std::string& id, const std::string& key, const std::string& value_html,
          const std::string& detail_html, const std::string& data_value, bool bad = false) {
  absl::StrAppend(o, "<div class=\"card", bad ? " bad" : "", "\" id=\"card-", id, "\" data-value=\"", data_value,
                  "\"><div class=\"k\">", key, "</div><div class=\"v\">", value_html, "</div><div class=\"d\">",
                  detail_html, "</div></div>\n");
}

// Ranks, nodes, GPUs, dead.
void RankCards(const Analysis& a, std::string* o) {
  std::string ranks_detail = a.world_size > 0 ? absl::StrCat("of ", FormatCount(a.world_size), " (world_size)")
                                              : std::string("no world_size in the inputs");
  if (a.workers > 0) absl::StrAppend(&ranks_detail, "; ", a.workers, " workers in run event logs");
  if (a.world_sizes.size() > 1) {
    ranks_detail = "world_size differs:";
    for (int64_t w : a.world_sizes) absl::StrAppend(&ranks_detail, " ", w);
  }
  Card(o, "ranks", "ranks", FormatCount(a.ranks_seen), ranks_detail, absl::StrCat(a.ranks_seen),
       a.missing_ranks > 0);
  Card(o, "nodes", "nodes", FormatCount(a.nodes_seen),
       absl::StrCat(a.gpus_per_node, " GPUs per node (rank / ", a.gpus_per_node, ")"), absl::StrCat(a.nodes_seen));
  Card(o, "gpus", "GPUs", FormatCount(a.ranks_seen), "one per rank", absl::StrCat(a.ranks_seen));
  std::string dead_detail =
      a.dead.empty() ? std::string("none")
                     : absl::StrCat(a.missing_ranks, " missing, ", a.dead_ranks - a.missing_ranks, " failed");
  Card(o, "dead", "dead ranks", FormatCount(a.dead_ranks), dead_detail, absl::StrCat(a.dead_ranks),
       a.dead_ranks > 0);
}

// Inputs, events and outputs, with their bytes.
void VolumeCards(const RunModel& m, std::string* o) {
  const Totals& t = m.totals;
  uint64_t decoded = 0;
  for (const InputModel& in : m.inputs) decoded += in.decoded_bytes;
  Card(o, "inputs", "input files", FormatCount(t.inputs),
       absl::StrCat(t.inputs_rejected, " rejected, ", t.inputs_with_errors, " with errors, ", t.inputs_skipped,
                    " skipped"),
       absl::StrCat(t.inputs), t.inputs_with_errors > 0);
  Card(o, "input-bytes", "input bytes", FormatBytes(t.input_bytes),
       absl::StrCat(FormatCount(t.input_bytes), " B; ", FormatBytes(decoded), " decoded"),
       absl::StrCat(t.input_bytes));
  Card(o, "events-read", "events read", FormatCount(t.events_read),
       t.balanced ? "= written + dropped" : "NOT balanced", absl::StrCat(t.events_read), !t.balanced);
  Card(o, "events-written", "events written", FormatCount(t.events_written), "into the outputs",
       absl::StrCat(t.events_written));
  std::string reasons;
  for (const auto& [k, v] : t.dropped_by_reason) {
    if (!reasons.empty()) reasons.append(", ");
    absl::StrAppend(&reasons, HtmlEscape(k), " ", FormatCount(v));
  }
  Card(o, "events-dropped", "events dropped", FormatCount(t.events_dropped),
       reasons.empty() ? std::string("none") : reasons, absl::StrCat(t.events_dropped), t.events_dropped > 0);
  Card(o, "outputs", "outputs", FormatCount(t.outputs), HtmlEscape(m.group_by.empty() ? "" : "group-by " + m.group_by),
       absl::StrCat(t.outputs));
  Card(o, "output-bytes", "output bytes", FormatBytes(t.output_bytes),
       absl::StrCat(FormatCount(t.output_bytes), " B"), absl::StrCat(t.output_bytes));
}

// The job's time span, the conversion's wall time and throughput.
void TimeCards(const RunModel& m, std::string* o) {
  const Totals& t = m.totals;
  if (m.span_ns) {
    const auto [s, e] = *m.span_ns;
    std::string start = s >= int64_t{946684800} * 1000000000
                            ? absl::FormatTime("from %Y-%m-%d %H:%M:%E3S UTC", absl::FromUnixNanos(s),
                                               absl::UTCTimeZone())
                            : absl::StrCat("from ", FormatDuration(s), " (run-relative)");
    Card(o, "time-span", "job time span", FormatShortDuration(e - s, 3), HtmlEscape(start), absl::StrCat(e - s));
  } else {
    Card(o, "time-span", "job time span", "&ndash;", "no timed events", "");
  }
  Card(o, "wall-time", "conversion wall time", absl::StrCat(HtmlEscape(m.wall_seconds_text), " s"),
       absl::StrCat(m.threads, m.threads == 1 ? " thread" : " threads"), HtmlEscape(m.wall_seconds_text));
  if (m.wall_seconds > 0) {
    double mbps = static_cast<double>(t.input_bytes) / 1e6 / m.wall_seconds;
    double eps = static_cast<double>(t.events_read) / m.wall_seconds;
    Card(o, "throughput", "throughput", absl::StrFormat("%.1f MB/s", mbps),
         absl::StrCat(FormatCount(static_cast<uint64_t>(eps)), " events/s"), absl::StrFormat("%.3f", mbps));
  } else {
    Card(o, "throughput", "throughput", "&ndash;", "wall time below 1 ms", "");
  }
}

// Steps over ranks; rounds and bytes moved if any input is a run event log.
void StepCards(const RunModel& m, const Analysis& a, std::string* o) {
  const Totals& t = m.totals;
  if (a.steps_seen > 0)
    Card(o, "steps", "steps", FormatCount(a.steps_seen), "distinct step numbers over ranks",
         absl::StrCat(a.steps_seen));
  bool any_log = false;
  for (const InputModel& in : m.inputs) any_log |= !in.timeline.tracks.empty();
  if (!any_log) return;
  std::string last;
  for (const RoundEntry& r : a.rounds)
    if (r.survivors >= 0) last = absl::StrCat("last: ", r.survivors, "/", r.total, " survivors");
  Card(o, "rounds", "rounds", FormatCount(a.rounds.size()), last, absl::StrCat(a.rounds.size()));
  Card(o, "bytes-pushed", "bytes pushed", FormatBytes(t.bytes_pushed),
       absl::StrCat(FormatCount(t.bytes_pushed), " B by workers"), absl::StrCat(t.bytes_pushed));
  Card(o, "bytes-pulled", "bytes pulled", FormatBytes(t.bytes_pulled),
       absl::StrCat(FormatCount(t.bytes_pulled), " B by workers"), absl::StrCat(t.bytes_pulled));
}

}  // namespace

void AppendSummaryCards(const PageInput& in, std::string* out) {
  out->append("<section class=\"cards\" id=\"summary\">\n");
  RankCards(in.analysis, out);
  VolumeCards(in.model, out);
  TimeCards(in.model, out);
  StepCards(in.model, in.analysis, out);
  Card(out, "version", "tracemill", HtmlEscape(in.model.version), "built this run", HtmlEscape(in.model.version));
  out->append("</section>\n");
}

}  // namespace tracemill::report
