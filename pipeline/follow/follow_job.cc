#include "pipeline/follow/follow_job.h"

#include <malloc.h>
#include <signal.h>
#include <simdjson.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "formats/common/cleanup.h"
#include "formats/common/read_file.h"
#include "formats/common/stats.h"
#include "formats/common/status_macros.h"
#include "pipeline/budget.h"
#include "pipeline/follow/cumulative.h"
#include "pipeline/follow/duration.h"
#include "pipeline/follow/file_table.h"
#include "pipeline/follow/follow_journal.h"
#include "pipeline/follow/job_tables.h"
#include "pipeline/follow/watcher.h"
#include "pipeline/follow/window_plan.h"
#include "pipeline/follow/window_writer.h"
#include "pipeline/job.h"
#include "pipeline/output/output_dir.h"

namespace tracemill::pipeline {
namespace {

using follow::kNoTime;

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// In inotify mode the loop still wakes this often (timers, a missed event).
constexpr int64_t kLongestSleepNs = 30'000'000'000;

// FollowFingerprint: what a resumed follow job must share with its journal
// (the inputs and every option that changes a window's bytes).
std::string FollowFingerprint(const ConvertOptions& o) {
  std::string ranks;
  if (o.ranks) ranks = "set";
  return absl::StrCat(
      "inputs=", absl::StrJoin(o.inputs, "\x1f"),
      " window=", o.follow->per_cycle ? "cycle" : follow::DurationText(o.follow->window_ns),
      " group_by=", static_cast<int>(o.group_by), " gpus_per_node=", o.gpus_per_node, " compress=", o.compress,
      " rank_pattern=", o.rank_pattern, " time_offset_ns=", o.time_offset_ns, " low_gpu=", o.low_gpu_threshold,
      " no_system_metrics=", o.no_system_metrics, " max_output_bytes=", o.max_output_bytes,
      " tables=", static_cast<int>(o.tables), " report=", o.write_report, " ranks=", ranks);
}

// FollowLoop: the follow job's state and its loop (see follow_job.h).
class FollowLoop {
 public:
  FollowLoop(const ConvertOptions& opts, Job& job, const RankMatcher& ranks, std::pair<dev_t, ino_t> out_dir_id,
             uint64_t max_inflated_bytes)
      : opts_(opts),
        fo_(*opts.follow),
        job_(job),
        table_(opts, ranks, out_dir_id, max_inflated_bytes),
        planner_(fo_),
        cumulative_(opts),
        start_ns_(SteadyNowNs()) {}

  // StartOrResume: a fresh OUTDIR state, or (--resume) the journal's
  // windows kept. False after a usage error.
  bool StartOrResume();
  // Run follows until a stop; returns the exit status.
  int Run();

 private:
  bool WriteReadyWindows(bool flush);
  bool WriteOne(const follow::PlannedWindow& w);
  void RestoreFromJournal(const std::vector<follow::JournalWindow>& kept);
  void RemoveWindowsNotIn(const std::set<std::string>& keep);
  void Refresh(const std::string& state);
  void StartTables(const std::string& fingerprint, const std::vector<follow::JournalWindow>& kept);
  void AppendTables(const FollowWindow& w);
  void TablesFailed(const absl::Status& st);
  static void ReturnFreeMemory();
  int Interrupted(int sig);
  void SayNotes();
  void Say(const std::string& line) {
    if (!opts_.quiet) job_.Say(line);
  }

  const ConvertOptions& opts_;
  const FollowOptions& fo_;
  Job& job_;
  follow::FileTable table_;
  follow::WindowPlanner planner_;
  follow::CumulativeManifest cumulative_;
  follow::FollowJournal journal_;
  follow::Watcher watcher_;
  follow::JobTables tables_;   // --tables: OUTDIR/tables.sqlite
  std::string tables_error_;  // the first failure to append to it
  const int64_t start_ns_;
  bool refresh_failed_ = false;
};

bool FollowLoop::StartOrResume() {
  const std::string windows = follow::WindowsFolder(opts_.out_dir);
  if (::mkdir(windows.c_str(), 0755) != 0 && errno != EEXIST) {
    job_.Say(absl::StrCat("cannot create ", windows, ": ", std::strerror(errno)));
    job_.Exit(kExitInternal);
    return false;
  }
  follow::RemoveStaleWindowTemporaries(opts_.out_dir);
  RemoveStaleFiles(
      opts_.out_dir, [](std::string_view base) { return base == "manifest.json" || base == "report.html"; }, false);
  const std::string path = absl::StrCat(opts_.out_dir, "/", follow::kFollowJournalName);
  const std::string fingerprint = FollowFingerprint(opts_);
  std::vector<follow::JournalWindow> kept;
  if (opts_.resume) {
    auto journal = follow::LoadFollowJournal(path);
    if (journal.ok() && journal->fingerprint != fingerprint) {
      job_.UsageError(absl::StrCat("--resume: ", path,
                                   " is the journal of another follow job (other inputs or options): rerun with "
                                   "the same ones, or drop --resume to start over"));
      return false;
    }
    if (journal.ok()) {
      for (follow::JournalWindow& w : journal->windows) {
        // A window whose folder is not whole any more is redone, with all after it.
        formats::ByteBuffer text;
        const std::string manifest = absl::StrCat(windows, "/", w.window.name, "/manifest.json");
        if (!formats::ReadWholeFile(manifest, simdjson::SIMDJSON_PADDING, &text).ok()) break;
        auto parsed = ParseManifest(text.view());
        if (!parsed.ok()) break;
        cumulative_.Add(w.window, *parsed, follow::WindowEvents(text.view()));
        kept.push_back(std::move(w));
      }
    } else if (!absl::IsNotFound(journal.status())) {
      Say(absl::StrCat("--resume: ", journal.status().message(), "; starting over"));
    }
  }
  std::set<std::string> keep;
  for (const auto& w : kept) keep.insert(w.window.name);
  RemoveWindowsNotIn(keep);
  if (kept.empty()) {
    ::unlink((opts_.out_dir + "/latest").c_str());
  } else {
    RestoreFromJournal(kept);
    Say(absl::StrCat("--resume: ", cumulative_.windows(), " windows kept from the journal (",
                     cumulative_.late_windows(), " late), continuing after ", cumulative_.latest()));
  }
  if (absl::Status st = journal_.Create(path, fingerprint, kept); !st.ok()) {
    job_.Say(absl::StrCat("cannot write the follow journal: ", st.message()));
    job_.Exit(kExitInternal);
    return false;
  }
  StartTables(fingerprint, kept);
  Refresh("following");
  return true;
}

void FollowLoop::RemoveWindowsNotIn(const std::set<std::string>& keep) {
  const std::string windows = follow::WindowsFolder(opts_.out_dir);
  for (const std::string& n : formats::ListFolder(windows).value_or(std::vector<std::string>{}))
    if (!keep.count(n)) follow::RemoveWindowFolder(absl::StrCat(windows, "/", n));
}

void FollowLoop::RestoreFromJournal(const std::vector<follow::JournalWindow>& kept) {
  // The newest window that read a file says how far it is covered.
  std::map<std::string, follow::FollowFile> files;
  int64_t written_until = kNoTime;
  int late = 0;
  for (const follow::JournalWindow& w : kept) {
    if (w.window.late) ++late;
    else written_until = std::max(written_until, w.window.end_ns);
    for (const follow::FollowFile& f : w.files) {
      follow::FollowFile& known = files[f.path];
      known = f;
      known.covered_until_ns = w.window.end_ns;
    }
  }
  const int64_t now = SteadyNowNs();
  for (auto& [path, f] : files) {
    const bool done = !f.has_events() || f.max_ns() < f.covered_until_ns;
    table_.Restore(std::move(f), done, now);
  }
  planner_.Restore(written_until, late);
}

void FollowLoop::StartTables(const std::string& fingerprint, const std::vector<follow::JournalWindow>& kept) {
  if (opts_.tables == TablesMode::kOff) {
    // Starting over: an earlier run's job-wide tables would describe windows removed.
    if (kept.empty()) follow::JobTables::Discard(opts_.out_dir);
    return;
  }
  absl::Status st = tables_.Open(opts_.out_dir, fingerprint, kept.empty());
  std::vector<FollowWindow> windows;
  for (const follow::JournalWindow& w : kept) windows.push_back(w.window);
  if (st.ok()) st = tables_.Reconcile(windows);
  if (!st.ok()) TablesFailed(st);
  cumulative_.SetTables(tables_.windows(), tables_error_);
}

void FollowLoop::AppendTables(const FollowWindow& w) {
  if (opts_.tables == TablesMode::kOff) return;
  if (absl::Status st = tables_.Append(w); !st.ok()) TablesFailed(st);
  cumulative_.SetTables(tables_.windows(), tables_error_);
}

// TablesFailed says a failure to write OUTDIR/tables.sqlite (the windows go
// on, each with its own tables.sqlite; the job's exit status will be 1).
void FollowLoop::TablesFailed(const absl::Status& st) {
  job_.Say(std::string(st.message()));
  if (tables_error_.empty()) tables_error_ = std::string(st.message());
}

void FollowLoop::Refresh(const std::string& state) {
  absl::Status st = cumulative_.Write(state, job_.ElapsedSeconds(), job_.summary().threads);
  if (!st.ok() && !refresh_failed_) job_.Say(absl::StrCat("cannot refresh ", opts_.out_dir, "/manifest.json: ", st.message()));
  refresh_failed_ = !st.ok();
}

// ReturnFreeMemory gives the heap's free pages back to the system. Each
// window's convert raises glibc's trim threshold (to keep freed arena tops
// for its own next decodes, decode_stage.cc) and spreads its allocations
// over up to four arenas; after it, that memory is free but stays
// resident, and the longer a follow job runs the more of it is held
// (1-hour replay: 8.5 MB free in the arenas after the first window, 16.7
// MB after the 60th; RSS between windows 17 -> 30 MB for 0.8 -> 4.2 MB in
// use). malloc_trim(0) returns every free page of every arena (about 1 ms
// here); the next window faults in what it needs (bench/RESULTS.md).
void FollowLoop::ReturnFreeMemory() { malloc_trim(0); }

void FollowLoop::SayNotes() {
  for (const std::string& n : table_.TakeNotes()) Say(n);
  for (const std::string& n : planner_.TakeNotes()) Say(n);
}

bool FollowLoop::WriteOne(const follow::PlannedWindow& w) {
  follow::JournalWindow line{w.window, 0, {}};
  std::set<std::string> reread;  // read whole by an earlier window, unchanged since
  for (const std::string& path : w.files)
    if (auto it = table_.files().find(path); it != table_.files().end()) {
      line.files.push_back(it->second);
      if (it->second.covered_until_ns != kNoTime) reread.insert(path);
    }
  bool journaled = true;
  follow::WindowWrite out = follow::WriteWindow(opts_, w, [&](const follow::WindowWrite& done) {
    line.exit_code = done.summary.exit_code;
    if (absl::Status st = journal_.Append(line); !st.ok()) {
      job_.Say(absl::StrCat("follow journal: ", st.message()));
      journaled = false;
    }
  });
  if (!out.error.empty()) {
    if (out.summary.exit_code == kExitUsage) {
      // Nothing in those files to convert after all (they changed since):
      // said, and the window passed over.
      job_.Say(absl::StrCat("window ", w.window.name, ": nothing converted (", out.error, ")"));
      planner_.Written(w, table_);
      return true;
    }
    job_.Say(absl::StrCat("window ", w.window.name, ": not written: ", out.error));
    return false;
  }
  planner_.Written(w, table_);
  planner_.NextStarts(w, out.summary, table_);
  if (out.empty) return true;  // nothing of its own: no folder, no journal line (window_writer.h)
  if (!w.window.late) follow::PointLatest(opts_.out_dir, w.window.name);
  // --tables: each window's convert wrote its rows into the window's own
  // tables.sqlite; they are appended to OUTDIR/tables.sqlite (job_tables.h).
  AppendTables(w.window);
  cumulative_.Add(w.window, out.summary, out.events, reread);
  ReturnFreeMemory();  // the convert's: the refresh's peak does not come on top of them
  Refresh("following");
  ReturnFreeMemory();  // the refresh's: between windows, what is in use stays resident
  const size_t n = w.files.size();
  if (w.window.late)
    Say(absl::StrCat("windows/", w.window.name, ": ", n, n == 1 ? " file" : " files", " that came after their windows, ",
                     formats::GroupedCount(out.events), " events (", absl::StrFormat("%.2f", out.seconds), " s)"));
  else
    Say(absl::StrCat("windows/", w.window.name, ": ", n, n == 1 ? " file, " : " files, ",
                     formats::GroupedCount(out.events), " events (", absl::StrFormat("%.2f", out.seconds), " s)"));
  return journaled;
}

bool FollowLoop::WriteReadyWindows(bool flush) {
  // After a SIGINT/SIGTERM no window is started (the one in progress was finished).
  while (!formats::PendingInterrupt()) {
    auto w = planner_.Next(table_, SteadyNowNs(), flush);
    if (!w) break;
    if (!WriteOne(*w)) return false;
    SayNotes();
  }
  SayNotes();
  return true;
}

int FollowLoop::Interrupted(int sig) {
  const char* name = sig == SIGINT ? "SIGINT" : "SIGTERM";
  Refresh(absl::StrCat("interrupted (", name, "): rerun with --resume to continue"));
  job_.Say(absl::StrCat("interrupted (", name, "): ", cumulative_.windows(),
                        " windows written; rerun the same command with --resume to continue after ",
                        cumulative_.latest().empty() ? "them" : cumulative_.latest()));
  return 128 + sig;
}

int FollowLoop::Run() {
  Say(watcher_.Start(opts_.inputs, fo_.poll));
  follow::Watcher::Change change;
  change.full_scan = true;
  std::string stop;
  for (;;) {
    const int64_t now = SteadyNowNs();
    table_.Scan(change, &watcher_, now);
    table_.Settle(now, false);
    SayNotes();
    if (const int sig = formats::PendingInterrupt()) return Interrupted(sig);
    const int64_t idle_since = std::max(table_.last_activity_ns(), start_ns_);
    if (table_.JobEnded()) stop = "the job's end markers";
    else if (fo_.idle_timeout_ns > 0 && now - idle_since >= fo_.idle_timeout_ns)
      stop = absl::StrCat("no new data for --idle-timeout ", follow::DurationText(fo_.idle_timeout_ns));
    if (!stop.empty()) break;
    if (!WriteReadyWindows(false)) return kExitInternal;
    if (const int sig = formats::PendingInterrupt()) return Interrupted(sig);
    // Sleep until a change, or the next thing due.
    int64_t wake = now + (watcher_.polling() ? fo_.poll_interval_ns : kLongestSleepNs);
    for (int64_t due : {table_.NextDeadline(), planner_.NextDeadline(),
                        fo_.idle_timeout_ns > 0 ? idle_since + fo_.idle_timeout_ns : kNoTime})
      if (due != kNoTime) wake = std::min(wake, due);
    change = watcher_.Wait(wake - SteadyNowNs());
    if (const int sig = formats::PendingInterrupt()) return Interrupted(sig);
  }
  // The end: one more full look, every file taken as it is, every window written.
  follow::Watcher::Change all;
  all.full_scan = true;
  const int64_t now = SteadyNowNs();
  table_.Scan(all, &watcher_, now);
  table_.Settle(now, true);
  SayNotes();
  if (!WriteReadyWindows(true)) return kExitInternal;
  if (const int sig = formats::PendingInterrupt()) return Interrupted(sig);
  Refresh(absl::StrCat("stopped: ", stop));
  Say(absl::StrCat("stopped (", stop, "): ", cumulative_.windows() - cumulative_.late_windows(), " windows, ",
                   cumulative_.late_windows(), " late, ", formats::GroupedCount(cumulative_.events()),
                   " events in ", opts_.out_dir, "/windows (", absl::StrFormat("%.2f", job_.ElapsedSeconds()), " s)"));
  return refresh_failed_ || !tables_error_.empty() ? kExitInternal : cumulative_.exit_code();
}

}  // namespace

RunSummary RunFollow(const ConvertOptions& opts) {
  Job job("tracemill", false, opts.command_line);
  // The first SIGINT/SIGTERM finishes the window in progress; a second
  // one stops at once (its temporaries removed).
  formats::SetFinishOnInterrupt(true);
  auto ranks = RankMatcher::Create(opts.rank_pattern);
  if (!ranks.ok()) return job.UsageError(ranks.status().message());
  OutputDirectory out_dir(job, opts.out_dir);
  if (!out_dir.Open("-o ", opts.tmp_dir, ShardSpec{})) return job.summary();
  for (const std::string& in : opts.inputs) {
    struct stat st;
    if (::stat(in.c_str(), &st) == 0 && std::pair(st.st_dev, st.st_ino) == out_dir.id())
      return job.UsageError(absl::StrCat("-o ", opts.out_dir,
                                         " is also an input: its outputs would replace inputs; write them to another "
                                         "directory"));
  }
  job.StartThreads(opts.threads, true);
  const MemoryPlan memory = PlanMemory(opts.memory_limit ? opts.memory_limit : DefaultMemoryLimit());
  FollowLoop loop(opts, job, *ranks, out_dir.id(), static_cast<uint64_t>(memory.decode / kDecodeFactor));
  if (!loop.StartOrResume()) return job.summary();
  return job.Exit(loop.Run());
}

}  // namespace tracemill::pipeline
