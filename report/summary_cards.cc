// The summary cards of the run report (page_sections.h).
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "report/html_text.h"
#include "report/page_sections.h"
#include "report/run_status.h"

namespace tracemill::report {
namespace {

// Card tones: "bad" (red), "quiet" (grey value), "" (plain).
const char* Bad(bool bad) { return bad ? "bad" : ""; }

// One card: `value_html` and `detail_html` are already escaped;
// `data_value` is the exact figure for scripts and tests.
void Card(std::string* o, const std::string& id, const std::string& key, const std::string& value_html,
          const std::string& detail_html, const std::string& data_value, const char* tone = "") {
  absl::StrAppend(o, "<div class=\"card", *tone ? " " : "", tone, "\" id=\"card-", id, "\" data-value=\"",
                  data_value, "\"><div class=\"k\">", key, "</div><div class=\"v\">", value_html,
                  "</div><div class=\"d\">", detail_html, "</div></div>\n");
}

// Ranks, nodes, GPUs.
void RankCards(const Analysis& a, std::string* o) {
  std::string ranks_detail = a.world_size > 0 ? absl::StrCat("of ", GroupedCount(a.world_size), " (world_size)")
                                              : std::string("no world_size in the inputs");
  if (a.workers > 0) absl::StrAppend(&ranks_detail, "; ", GroupedCount(a.workers), " workers in run event logs");
  if (a.world_sizes.size() > 1) {
    ranks_detail = "world_size differs:";
    for (int64_t w : a.world_sizes) absl::StrAppend(&ranks_detail, " ", GroupedCount(w));
  }
  Card(o, "ranks", "ranks", GroupedCount(a.ranks_seen), ranks_detail, absl::StrCat(a.ranks_seen),
       Bad(a.missing_are_dead && a.missing_ranks > 0));
  Card(o, "nodes", "nodes", GroupedCount(a.nodes_seen),
       absl::StrCat(a.gpus_per_node, a.cpu_only ? " ranks" : " GPUs", " per node (rank / ", a.gpus_per_node, ")"),
       absl::StrCat(a.nodes_seen));
  if (a.cpu_only)
    Card(o, "gpus", "GPUs", "0", "CPU-only job: no input lists a GPU (deviceProperties empty)", "0", "quiet");
  else
    Card(o, "gpus", "GPUs", GroupedCount(a.ranks_seen), "one per rank", absl::StrCat(a.ranks_seen));
}

// Dead ranks (red), and ranks not in the inputs (grey) when no input failed.
void DeadCards(const Analysis& a, std::string* o) {
  const int64_t missing = a.missing_are_dead ? a.missing_ranks : 0;
  std::string dead_detail = "none";
  if (!a.dead.empty())
    dead_detail = missing ? absl::StrCat(GroupedCount(missing), " missing, ", GroupedCount(a.dead_ranks - missing),
                                         " failed")
                          : absl::StrCat(GroupedCount(a.dead_ranks), " failed");
  Card(o, "dead", "dead ranks", GroupedCount(a.dead_ranks), dead_detail, absl::StrCat(a.dead_ranks),
       Bad(a.dead_ranks > 0));
  if (a.not_given_ranks > 0)
    Card(o, "not-given", "ranks not in the inputs", GroupedCount(a.not_given_ranks),
         absl::StrCat("of world_size ", GroupedCount(a.world_size), "; no input failed"),
         absl::StrCat(a.not_given_ranks), "quiet");
}

// Input files and bytes.
void InputCards(const RunModel& m, std::string* o) {
  const Totals& t = m.totals;
  uint64_t decoded = 0;
  for (const InputModel& in : m.inputs) decoded += in.decoded_bytes;
  Card(o, "inputs", "input files", GroupedCount(t.inputs),
       absl::StrCat(GroupedCount(t.inputs_rejected), " rejected, ", GroupedCount(t.inputs_with_errors),
                    " with errors, ", GroupedCount(t.inputs_skipped), " skipped"),
       absl::StrCat(t.inputs), Bad(t.inputs_with_errors > 0));
  Card(o, "input-bytes", "input bytes", FormatBytes(t.input_bytes),
       absl::StrCat(GroupedCount(t.input_bytes), " B; ", FormatBytes(decoded), " decoded"),
       absl::StrCat(t.input_bytes));
}

// Events read and written; of the dropped, lost (red when any) and left
// out on purpose (never red), each by reason.
void EventCards(const Totals& t, std::string* o) {
  Card(o, "events-read", "events read", GroupedCount(t.events_read),
       t.balanced ? "= written + lost + left out" : "NOT balanced", absl::StrCat(t.events_read), Bad(!t.balanced));
  Card(o, "events-written", "events written", GroupedCount(t.events_written), "into the outputs",
       absl::StrCat(t.events_written));
  const std::string lost = ReasonList(DropsOfKind(t, formats::DropKind::kLoss));
  Card(o, "events-lost", "events lost", GroupedCount(t.events_lost), lost.empty() ? std::string("none") : lost,
       absl::StrCat(t.events_lost), Bad(t.events_lost > 0));
  const std::string left_out = ReasonList(DropsOfKind(t, formats::DropKind::kDesign));
  Card(o, "events-left-out", "left out on purpose", GroupedCount(t.events_left_out),
       left_out.empty() ? std::string("none") : left_out, absl::StrCat(t.events_left_out));
}

// Outputs and their bytes.
void OutputCards(const RunModel& m, std::string* o) {
  const Totals& t = m.totals;
  Card(o, "outputs", "outputs", GroupedCount(t.outputs), HtmlEscape(m.group_by.empty() ? "" : "group-by " + m.group_by),
       absl::StrCat(t.outputs));
  Card(o, "output-bytes", "output bytes", FormatBytes(t.output_bytes),
       absl::StrCat(GroupedCount(t.output_bytes), " B"), absl::StrCat(t.output_bytes));
}

// Where the job's span starts: "from 2023-04-29 00:11:38.079 UTC", "from
// 1.2 ms (run-relative)", or both ends when it runs from relative to epoch
// times ("mixed time bases").
std::string SpanStart(int64_t start_ns, int64_t end_ns) {
  auto utc = [](int64_t ns) {
    return absl::FormatTime("%Y-%m-%d %H:%M:%E3S UTC", absl::FromUnixNanos(ns), absl::UTCTimeZone());
  };
  if (IsEpochTime(start_ns)) return absl::StrCat("from ", utc(start_ns));
  std::string s = absl::StrCat("from ", FormatDuration(start_ns), " (run-relative)");
  if (IsEpochTime(end_ns)) absl::StrAppend(&s, " to ", utc(end_ns), ": mixed time bases");
  return s;
}

// The job's time span, the conversion's wall time and throughput.
void TimeCards(const RunModel& m, std::string* o) {
  const Totals& t = m.totals;
  if (m.span_ns) {
    const auto [s, e] = *m.span_ns;
    Card(o, "time-span", "job time span", FormatShortDuration(e - s, 3), HtmlEscape(SpanStart(s, e)),
         absl::StrCat(e - s));
  } else {
    Card(o, "time-span", "job time span", "&ndash;", "no timed events", "");
  }
  Card(o, "wall-time", "conversion wall time", absl::StrCat(HtmlEscape(m.wall_seconds_text), " s"),
       absl::StrCat(m.threads, m.threads == 1 ? " thread" : " threads"), HtmlEscape(m.wall_seconds_text));
  if (m.wall_seconds > 0) {
    double mbps = static_cast<double>(t.input_bytes) / 1e6 / m.wall_seconds;
    double eps = static_cast<double>(t.events_read) / m.wall_seconds;
    Card(o, "throughput", "throughput", absl::StrFormat("%.1f MB/s", mbps),
         absl::StrCat(GroupedCount(static_cast<uint64_t>(eps)), " events/s"), absl::StrFormat("%.3f", mbps));
  } else {
    Card(o, "throughput", "throughput", "&ndash;", "wall time below 1 ms", "");
  }
}

// Steps over ranks; rounds and bytes moved if any input is a run event log.
void StepCards(const RunModel& m, const Analysis& a, std::string* o) {
  const Totals& t = m.totals;
  if (a.steps_seen > 0)
    Card(o, "steps", "steps", GroupedCount(a.steps_seen), "distinct step numbers over ranks",
         absl::StrCat(a.steps_seen));
  bool any_log = false;
  for (const InputModel& in : m.inputs) any_log |= !in.timeline.tracks.empty();
  if (!any_log) return;
  std::string last;
  for (const RoundEntry& r : a.rounds)
    if (r.survivors >= 0) last = absl::StrCat("last: ", FormatFraction(r.survivors, r.total), " survivors");
  Card(o, "rounds", "rounds", GroupedCount(a.rounds.size()), last, absl::StrCat(a.rounds.size()));
  Card(o, "bytes-pushed", "bytes pushed", FormatBytes(t.bytes_pushed),
       absl::StrCat(GroupedCount(t.bytes_pushed), " B by workers"), absl::StrCat(t.bytes_pushed));
  Card(o, "bytes-pulled", "bytes pulled", FormatBytes(t.bytes_pulled),
       absl::StrCat(GroupedCount(t.bytes_pulled), " B by workers"), absl::StrCat(t.bytes_pulled));
}

}  // namespace

void AppendSummaryCards(const PageInput& in, std::string* out) {
  out->append("<section class=\"cards\" id=\"summary\">\n");
  RankCards(in.analysis, out);
  DeadCards(in.analysis, out);
  InputCards(in.model, out);
  EventCards(in.model.totals, out);
  OutputCards(in.model, out);
  TimeCards(in.model, out);
  StepCards(in.model, in.analysis, out);
  Card(out, "version", "tracemill", HtmlEscape(in.model.version), "built this run", HtmlEscape(in.model.version));
  out->append("</section>\n");
}

}  // namespace tracemill::report
