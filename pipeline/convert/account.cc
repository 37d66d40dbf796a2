#include "pipeline/convert/account.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "formats/common/json_text.h"
#include "pipeline/clocks/clocks.h"
#include "pipeline/job_notes.h"
#include "pipeline/output/earlier_run.h"
#include "report/html_report.h"

namespace tracemill::pipeline {
namespace {

// Inputs read without a run: the shard they belong to reports them; an
// undetermined one's error line is printed now.
void SettleInputsWithoutRun(ConvertContext& cx, const OutputGroups& groups) {
  for (size_t i = 0; i < cx.records.size(); ++i) {
    InputRecord& r = cx.records[i];
    if (!cx.read[i] || groups.placed(i) || groups.refused(i) || groups.deselected(i) || r.owner_shard >= 0) continue;
    const int planned = cx.plan.OwnerOfInput(i);
    const int owner = std::max(planned, 0);
    if (owner != cx.me()) r.owner_shard = owner;
    else if (planned < 0 && !r.status.ok()) cx.job.console().Line(ErrorLine(r));
  }
}

// A rejected input still names its rank by its file name: the report then
// draws that rank as dead rather than as an anonymous file.
void NameRanksOfRejected(ConvertContext& cx) {
  for (InputRecord& r : cx.records) {
    if (r.rank || r.skipped || r.status.ok() || !r.timeline.tracks.empty()) continue;
    if (auto named = cx.ranks.Match(r.path)) {
      r.rank = named;
      r.rank_source = "file name";
    }
  }
}

// The job's time span: over the inputs written here and those carried over.
void TakeJobSpan(ConvertContext& cx, const OutputGroups& groups) {
  RunSummary& s = cx.job.summary();
  for (size_t i = 0; i < cx.records.size(); ++i) {
    const InputRecord& r = cx.records[i];
    if (!(groups.placed(i) || groups.deselected(i) || r.reused) || r.owner_shard >= 0 || !r.has_span) continue;
    if (!s.has_span) {
      s.first_ts_ns = r.first_ts_ns;
      s.last_ts_ns = r.last_ts_ns;
      s.has_span = true;
    } else {
      s.first_ts_ns = std::min(s.first_ts_ns, r.first_ts_ns);
      s.last_ts_ns = std::max(s.last_ts_ns, r.last_ts_ns);
    }
  }
}

// WindowNotice: a --start/--end window outside the job's span (a time after
// its end, a date mistyped) is said with the span, so that an empty trace
// does not pass for a job without events.
void WindowNotice(const ConvertContext& cx, std::vector<std::string>* notices) {
  const RunSummary& s = cx.job.summary();
  const std::optional<int64_t> from = cx.opts.window_start_ns, to = cx.opts.window_end_ns;
  if ((!from && !to) || cx.opts.follow_window || !s.has_span) return;
  const bool after = from && *from > s.last_ts_ns, before = to && *to < s.first_ts_ns;
  if (!after && !before) return;
  auto utc = [](int64_t ns) {
    return absl::FormatTime("%Y-%m-%d %H:%M:%E6S UTC", absl::FromUnixNanos(ns), absl::UTCTimeZone());
  };
  notices->push_back(absl::StrCat(after ? absl::StrCat("--start ", utc(*from), " is after the job's end")
                                        : absl::StrCat("--end ", utc(*to), " is before the job's start"),
                                  ": no event is in the window (the job's events span ", utc(s.first_ts_ns), " .. ",
                                  utc(s.last_ts_ns), ")"));
}

// The outputs carried over by --resume join the list; outputs are listed
// in output order, whatever order they were written in. Then the records
// this process reports (or decoded for another shard).
void ListOutputsAndInputs(ConvertContext& cx, const ResumeState& resume) {
  RunSummary& s = cx.job.summary();
  for (auto& c : resume.outputs) s.outputs.push_back(c.output);
  std::stable_sort(s.outputs.begin(), s.outputs.end(), [](const auto& a, const auto& b) {
    auto ka = ParseOutputName(a.path), kb = ParseOutputName(b.path);
    if (ka && kb && !(*ka < *kb) && !(*kb < *ka)) return OutputRangeOf(a.path) < OutputRangeOf(b.path);
    return ka && kb ? *ka < *kb : a.path < b.path;
  });
  s.resumed = cx.opts.resume;
  s.outputs_reused = resume.outputs.size();
  s.inputs_not_read = resume.input_of_path.size();
  for (size_t i = 0; i < cx.records.size(); ++i)
    if (cx.read[i] || cx.records[i].reused) s.inputs.push_back(std::move(cx.records[i]));
}

// NothingToConvert: a whole job none of whose inputs is a trace is a usage
// error (exit 2): it says what the inputs were and writes nothing.
bool NothingToConvert(ConvertContext& cx) {
  if (cx.opts.shard.sharded()) return false;  // the other shards may hold traces
  std::vector<const InputRecord*> read;
  for (size_t i = 0; i < cx.records.size(); ++i)
    if (cx.read[i] || cx.records[i].reused) read.push_back(&cx.records[i]);
  std::string why;
  if (!NoTraceAmong(read, &why)) return false;
  cx.job.UsageError(absl::StrCat("no trace among the inputs (", why, "): nothing written"));
  return true;
}

// The report, built from the manifest just written, as `tracemill report`
// does. On exit 1 none (an earlier one would describe another job).
void WriteReport(ConvertContext& cx) {
  RunSummary& s = cx.job.summary();
  const ConvertOptions& opts = cx.opts;
  if (s.exit_code == kExitInternal && !opts.shard.sharded()) ::unlink((opts.out_dir + "/report.html").c_str());
  if (s.exit_code == kExitInternal || !opts.write_report || opts.shard.sharded()) return;
  if (absl::Status rs = report::WriteReport(opts.out_dir); !rs.ok()) {
    cx.job.Say(absl::StrCat("cannot write report: ", rs.message()));
    // The manifest says how the job ended: exit 1 now, as the process.
    cx.job.WriteManifest(opts.out_dir, true, false).IgnoreError();  // said by WriteManifest
  }
}

// AddFollowWindowMember: a follow job's window (convert --follow) says which
// it is and how many of its events are the job's own: events written minus
// the metadata every window repeats. Over all windows these add up to the
// job's events, each written once.
void AddFollowWindowMember(const FollowWindow& w, RunSummary* s) {
  uint64_t written = 0, metadata = 0;
  for (const InputRecord& r : s->inputs) {
    written += r.events_written;
    metadata += r.metadata_written;
  }
  std::string name;
  formats::AppendJsonString(w.name, &name);
  absl::StrAppend(&s->extra_members, ",\n\"follow\":{\"window\":", name, ",\"start_ns\":",
                  w.late ? std::string("null") : absl::StrCat(w.start_ns), ",\"end_ns\":", w.end_ns,
                  ",\"late\":", w.late ? "true" : "false", ",\"events\":", written - metadata,
                  ",\"metadata_repeated\":", metadata, "}");
}

}  // namespace

// The overview: a block for every input read (those not written: steps
// only), the blocks of inputs an earlier run kept (--resume) from its file.
void WriteOverview(ConvertContext& cx, const ResumeState& resume, OverviewCollector* overview) {
  // After the tables: their collectives' last arrivals are marked in it.
  for (size_t i = 0; i < cx.records.size(); ++i) {
    const InputRecord& r = cx.records[i];
    if (cx.read[i] && !cx.clock_only[i] && r.owner_shard < 0 && !r.skipped && !overview->Has(i))
      overview->AddBlock(r, nullptr);
  }
  const std::string name = OverviewCollector::FileName(cx.opts.shard.index, cx.opts.shard.count);
  if (absl::Status st = overview->Write(cx.opts.out_dir, name, resume.overview_blocks, cx.last_arrivals); !st.ok())
    cx.job.Say(absl::StrCat("cannot write ", cx.opts.out_dir, "/", name, ": ", st.message()));
}

// An OUTDIR reused: the files of the earlier run that this run did not
// write again are removed (pipeline/output/earlier_run.h), listed in the
// manifest's `removed` and said in one line.
void RemoveEarlierRunsOutputs(ConvertContext& cx, bool tables_ok) {
  if (cx.earlier_files.empty()) return;
  RunSummary& s = cx.job.summary();
  std::set<std::string> written = {kOverviewFileName};
  for (const OutputRecord& o : s.outputs) {
    if (!o.error.empty()) continue;  // an earlier file of its name is not this run's
    if (o.parts.empty()) written.insert(o.path);
    for (const OutputPart& p : o.parts) written.insert(p.path);
  }
  if (cx.opts.tables != TablesMode::kOff && tables_ok) written.insert("tables.sqlite");
  if (cx.opts.write_report) written.insert("report.html");  // written after the manifest
  RemoveEarlierRunsFiles(cx.opts.out_dir, cx.earlier_files, written, cx.opts.quiet, cx.job);
}

void AccountForConvert(ConvertContext& cx, const OutputGroups& groups, ResumeState& resume,
                       OverviewCollector* overview, const std::function<bool()>& finish_tables) {
  // Inputs read but not written (--ranks, rejected at placement) get their
  // clock decision too: the report draws every rank on one clock.
  for (size_t i = 0; i < cx.records.size(); ++i)
    if (cx.read[i] && !cx.clock_only[i]) cx.clocks->Assign(cx.records[i]);
  // The clocks section, from the probes' records (before the carried ones
  // replace them), or the earlier run's when nothing was decoded again.
  cx.job.summary().clocks_json = cx.clocks->ManifestJson();
  if (cx.job.summary().clocks_json.empty()) cx.job.summary().clocks_json = resume.clocks_json;
  if (!cx.opts.quiet) cx.clocks->SayOutcome();
  SettleInputsWithoutRun(cx, groups);
  NameRanksOfRejected(cx);
  // Records carried over by --resume take their place in the list.
  for (auto& c : resume.outputs)
    for (auto& r : c.inputs) cx.records[static_cast<size_t>(r.index)] = r;
  if (NothingToConvert(cx)) {
    if (resume.journal) resume.journal->Remove();
    return;
  }
  TakeJobSpan(cx, groups);
  ListOutputsAndInputs(cx, resume);
  MarkMostlyLost(&cx.job.summary().inputs);
  cx.job.summary().notices = Notices(cx.job.summary());
  WindowNotice(cx, &cx.job.summary().notices);
  if (std::string guess = cx.clocks->GuessNotice(); !guess.empty())
    cx.job.summary().notices.push_back(std::move(guess));
  if (cx.opts.follow_window) AddFollowWindowMember(*cx.opts.follow_window, &cx.job.summary());
  const bool tables_ok = !finish_tables || finish_tables();
  WriteOverview(cx, resume, overview);
  RemoveEarlierRunsOutputs(cx, tables_ok);
  if (cx.job.WriteManifest(cx.opts.out_dir, groups.plan_broken() || !tables_ok, false).ok() && resume.journal)
    resume.journal->Remove();  // the manifest holds everything the journal did
  WriteReport(cx);
}

}  // namespace tracemill::pipeline
