#include "pipeline/output/manifest_merge.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/tables.h"
#include "formats/common/json_text.h"
#include "formats/common/read_file.h"
#include "pipeline/job_notes.h"
#include "pipeline/journal.h"
#include "pipeline/options.h"
#include "pipeline/output/manifest.h"
#include "pipeline/output/out_dir_lock.h"
#include "pipeline/output/overview.h"
#include "pipeline/plan.h"
#include "pipeline/table_facts.h"
#include "report/html_report.h"

namespace tracemill::pipeline {
namespace {

bool ReadWhole(const std::string& path, std::string* out) {
  std::optional<std::string> text = formats::ReadTextFile(path);
  if (text) *out = std::move(*text);
  return text.has_value();
}

// ShardCount: the one shard count of the shard files in OUTDIR; or, when
// there is none or more than one, the exit code and the problem.
struct ShardCount {
  int count = 0;
  int exit_code = kExitOk;
  std::string problem;  // empty: `count` holds
};

// Which shard counts have manifests (or journals) in `out_dir`?
ShardCount FindShardCount(const std::string& out_dir) {
  std::set<int> counts;
  static const std::regex kName(R"(^(manifest|journal)\.shard-(\d{1,6})-of-(\d{1,6})\.jsonl?$)");
  DIR* d = ::opendir(out_dir.c_str());
  if (!d) return ShardCount{0, kExitUsage, absl::StrCat("cannot list ", out_dir)};
  while (dirent* de = ::readdir(d)) {
    std::cmatch m;
    if (std::regex_match(de->d_name, m, kName)) counts.insert(std::stoi(m[3].str()));
  }
  ::closedir(d);
  if (counts.empty())
    return ShardCount{0, kExitUsage,
                      absl::StrCat("no shard manifests (manifest.shard-<i>-of-<n>.json) in ", out_dir,
                                   ": was the job run with --shard or a job array?")};
  if (counts.size() > 1) {
    std::vector<std::string> c;
    for (int n : counts) c.push_back(absl::StrCat(n));
    return ShardCount{0, kExitInternal,
                      absl::StrCat("shard files of different shard counts (", absl::StrJoin(c, ", "), ") in ",
                                   out_dir, ": remove those of the runs that do not count")};
  }
  return ShardCount{*counts.begin(), kExitOk, ""};
}

// Why shard `spec` failed: its first output error, else its first input
// error that is not the input's fault (kDataLoss, kInvalidArgument); "" if none.
std::string FailureDetail(const RunSummary& s) {
  for (const auto& o : s.outputs)
    if (!o.error.empty()) return absl::StrCat(": ", o.path, ": ", o.error);
  for (const auto& r : s.inputs)
    if (r.owner_shard < 0 && !r.status.ok() && r.status.code() != absl::StatusCode::kDataLoss &&
        r.status.code() != absl::StatusCode::kInvalidArgument)
      return absl::StrCat(": ", r.path, ": ", r.status.message());
  return "";
}

// Reads shard `spec`'s manifest: the summary of a shard that finished, or
// nullopt with the problem appended to `problems`.
std::optional<RunSummary> LoadShard(const std::string& out_dir, const ShardSpec& spec,
                                    std::vector<std::string>* problems) {
  const int i = spec.index, n = spec.count;
  std::string shard_name = absl::StrCat("shard ", i, " (", i, "/", n, ")");
  std::string text;
  if (!ReadWhole(absl::StrCat(out_dir, "/", ManifestFileName(spec)), &text)) {
    std::string why = "never started, or was killed before writing anything";
    if (auto j = LoadJournal(absl::StrCat(out_dir, "/", JournalFileName(spec))); j.ok())
      why = absl::StrCat("started but did not finish (killed, or still running): its journal lists ",
                         j->outputs.size(), " completed outputs; rerun it with --resume");
    problems->push_back(absl::StrCat(shard_name, ": missing ", ManifestFileName(spec), ": ", why));
    return std::nullopt;
  }
  auto s = ParseManifest(text);
  if (!s.ok()) {
    problems->push_back(
        absl::StrCat(shard_name, ": ", ManifestFileName(spec), " is unreadable: ", s.status().message()));
    return std::nullopt;
  }
  if (s->shard.count != n || s->shard.index != i) {
    problems->push_back(absl::StrCat(shard_name, ": ", ManifestFileName(spec), " says it is shard ",
                                     s->shard.index, "/", s->shard.count));
    return std::nullopt;
  }
  if (s->exit_code != kExitOk && s->exit_code != kExitSomeRejected) {
    problems->push_back(absl::StrCat(shard_name, ": failed (exit status ", s->exit_code, ")", FailureDetail(*s),
                                     "; rerun it with --resume"));
    return std::nullopt;
  }
  return std::move(*s);
}

// The same job everywhere? Appends a problem for each loaded shard that ran
// another job than the first loaded one; returns that first one, or -1.
int CheckSameJob(const std::vector<std::optional<RunSummary>>& shards, std::vector<std::string>* problems) {
  int first = -1;
  for (int i = 0; i < static_cast<int>(shards.size()); ++i) {
    if (!shards[static_cast<size_t>(i)]) continue;
    if (first < 0) {
      first = i;
      continue;
    }
    const RunSummary& a = *shards[static_cast<size_t>(first)];
    const RunSummary& b = *shards[static_cast<size_t>(i)];
    if (a.fingerprint != b.fingerprint || a.inputs_in_job != b.inputs_in_job || a.group_by != b.group_by ||
        a.gpus_per_node != b.gpus_per_node ||
        (!a.clocks_json.empty() && !b.clocks_json.empty() && a.clocks_json != b.clocks_json))
      problems->push_back(absl::StrCat("shard ", i, " ran another job than shard ", first, " (fingerprint ",
                                       b.fingerprint, " vs ", a.fingerprint, "): different inputs or options"));
  }
  return first;
}

// ShardJoin: the shards' outputs and inputs gathered, each once, while
// checking that no two shards wrote or reported the same one.
class ShardJoin {
 public:
  explicit ShardJoin(uint64_t inputs_in_job) : inputs_(inputs_in_job), reporter_(inputs_in_job, -1) {}

  // Takes shard `i`'s outputs and inputs (moved out of `s`).
  void Add(int i, RunSummary& s, std::vector<std::string>* problems) {
    for (auto& o : s.outputs) AddOutput(i, std::move(o), problems);
    for (auto& r : s.inputs) AddInput(i, std::move(r), problems);
  }

  // Appends a problem for each input of the job that no shard reported.
  void CheckEveryInputReported(std::vector<std::string>* problems) const {
    for (size_t k = 0; k < inputs_.size(); ++k) {
      if (reporter_[k] >= 0) continue;
      auto it = claimed_elsewhere_.find(static_cast<int64_t>(k));
      if (it != claimed_elsewhere_.end())
        problems->push_back(absl::StrCat("input #", k, ": shard ", it->second.first, " left it to shard ",
                                         it->second.second, ", which does not report it"));
      else
        problems->push_back(absl::StrCat("input #", k, " of the job is reported by no shard"));
    }
  }

  // Moves the outputs (in output order) and inputs (in job order) into
  // `merged`, with the job's time span.
  void MoveInto(RunSummary* merged) {
    std::stable_sort(outputs_.begin(), outputs_.end(), [](const auto& a, const auto& b) {
      if (a.first < b.first || b.first < a.first) return a.first < b.first;
      return OutputRangeOf(a.second.path) < OutputRangeOf(b.second.path);  // an output's time ranges in order
    });
    for (auto& [key, o] : outputs_) merged->outputs.push_back(std::move(o));
    for (const auto& r : inputs_) {
      if (!r.has_span) continue;
      merged->first_ts_ns = merged->has_span ? std::min(merged->first_ts_ns, r.first_ts_ns) : r.first_ts_ns;
      merged->last_ts_ns = merged->has_span ? std::max(merged->last_ts_ns, r.last_ts_ns) : r.last_ts_ns;
      merged->has_span = true;
    }
    merged->inputs = std::move(inputs_);
  }

  // Whether an input reported so far was rejected or damaged.
  bool rejected() const { return rejected_; }

 private:
  void AddOutput(int i, OutputRecord o, std::vector<std::string>* problems) {
    auto [it, fresh] = writer_.emplace(o.path, i);
    if (!fresh) {
      problems->push_back(absl::StrCat("output ", o.path, " was written by shards ", it->second, " and ", i));
      return;
    }
    OutputKey key = ParseOutputName(o.path).value_or(OutputKey{2, 0, o.path});
    outputs_.emplace_back(std::move(key), std::move(o));
  }

  void AddInput(int i, InputRecord r, std::vector<std::string>* problems) {
    if (r.index < 0 || static_cast<uint64_t>(r.index) >= inputs_.size()) {
      problems->push_back(absl::StrCat("shard ", i, ": input ", r.path, " has no valid index"));
      return;
    }
    if (r.owner_shard >= 0) {
      claimed_elsewhere_[r.index] = {i, r.owner_shard};
      return;
    }
    size_t k = static_cast<size_t>(r.index);
    if (reporter_[k] >= 0) {
      problems->push_back(absl::StrCat("input ", r.path, " was reported by shards ", reporter_[k], " and ", i));
      return;
    }
    reporter_[k] = i;
    rejected_ |= !r.status.ok();
    r.owner_shard = -1;
    r.index = -1;
    inputs_[k] = std::move(r);
  }

  std::map<std::string, int> writer_;  // output path -> shard
  std::vector<std::pair<OutputKey, OutputRecord>> outputs_;
  std::vector<InputRecord> inputs_;    // by index in the job
  std::vector<int> reporter_;          // by index in the job: shard, -1 none
  std::map<int64_t, std::pair<int, int>> claimed_elsewhere_;  // index -> (by shard, owner)
  bool rejected_ = false;
};

// One line of the merged manifest's `shards`.
ShardRun ShardRunOf(int i, const RunSummary& s) {
  ShardRun run;
  run.index = i;
  run.exit_code = s.exit_code;
  run.wall_seconds = s.wall_seconds;
  run.threads = s.threads;
  run.source = s.shard.source;
  run.command_line = s.command_line;
  return run;
}

// Joins the shards (every one loaded, all of the job of shard `first`) into
// the job's summary; problems (outputs or inputs twice or never) go to
// `problems`. Moves the outputs and inputs out of `shards`.
RunSummary JoinShards(std::vector<std::optional<RunSummary>>& shards, int first, const std::string& command_line,
                      std::vector<std::string>* problems) {
  const RunSummary& base = *shards[static_cast<size_t>(first)];
  RunSummary merged;
  merged.command_line = command_line;
  merged.group_by = base.group_by;
  merged.gpus_per_node = base.gpus_per_node;
  merged.cpu_only = base.cpu_only;
  merged.fingerprint = base.fingerprint;
  // Every shard that wrote something solved the same clocks (pipeline/clocks/clocks.h).
  for (const auto& s : shards)
    if (s && merged.clocks_json.empty()) merged.clocks_json = s->clocks_json;
  ShardJoin join(base.inputs_in_job);
  for (int i = 0; i < static_cast<int>(shards.size()); ++i) {
    RunSummary& s = *shards[static_cast<size_t>(i)];
    merged.shards.push_back(ShardRunOf(i, s));
    merged.wall_seconds = std::max(merged.wall_seconds, s.wall_seconds);
    merged.threads = std::max(merged.threads, s.threads);
    join.Add(i, s, problems);
  }
  join.CheckEveryInputReported(problems);
  join.MoveInto(&merged);
  merged.exit_code = join.rejected() ? kExitSomeRejected : kExitOk;
  merged.notices = Notices(merged);  // over every shard's inputs
  return merged;
}

// JoinOverviews writes overview.trace.json from the shards' overviews
// (overview.h): the blocks of every shard, by input, as one process writes them.
absl::Status JoinOverviews(const std::string& out_dir, int shard_count, uint64_t inputs,
                           const std::vector<analysis::LastArrival>& marks) {
  std::map<int64_t, std::string> blocks;
  for (int i = 0; i < shard_count; ++i)
    blocks.merge(OverviewCollector::BlocksOf(out_dir + "/" + OverviewCollector::FileName(i, shard_count)));
  const int64_t no_offset = 0;  // --relative-time is refused with shards
  OverviewCollector overview(static_cast<size_t>(inputs), no_offset);
  return overview.Write(out_dir, kOverviewFileName, blocks, marks);
}

}  // namespace

MergeReport MergeShardManifests(const std::string& out_dir, const std::string& command_line, bool write_report) {
  MergeReport rep;
  // Not while a shard (or any other tracemill job) still writes here on this
  // node: its manifest would be missing or stale.
  OutDirLock lock;
  if (!lock.Acquire(out_dir)) {
    rep.exit_code = kExitUsage;
    rep.problems.push_back(lock.InUseMessage(out_dir));
    return rep;
  }
  const ShardCount found = FindShardCount(out_dir);
  if (!found.problem.empty()) {
    rep.exit_code = found.exit_code;
    rep.problems.push_back(found.problem);
    return rep;
  }
  const int n = found.count;
  rep.shard_count = n;
  std::vector<std::optional<RunSummary>> shards(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) shards[static_cast<size_t>(i)] = LoadShard(out_dir, ShardSpec{i, n, ""}, &rep.problems);
  const int first = CheckSameJob(shards, &rep.problems);
  if (!rep.problems.empty() || first < 0) {
    rep.exit_code = kExitInternal;
    return rep;
  }
  RunSummary merged = JoinShards(shards, first, command_line, &rep.problems);
  if (!rep.problems.empty()) {
    rep.exit_code = kExitInternal;
    return rep;
  }
  rep.outputs = merged.outputs.size();
  rep.inputs = static_cast<size_t>(std::count_if(merged.inputs.begin(), merged.inputs.end(),
                                                 [](const InputRecord& r) { return !r.skipped; }));
  // The tables are one output among others: a shard's damaged or missing
  // file fails them (exit 1, the error in the manifest's `tables` member as
  // convert records it), not the merge of everything else.
  std::string tables_member;
  std::vector<std::string> collective_notices;
  std::vector<analysis::LastArrival> collective_marks;  // the overview's, after the tables
  absl::Status tables = analysis::JoinShardTables(out_dir, n, JobFactsOf(merged), &tables_member,
                                                  &collective_notices, &collective_marks);
  for (std::string& s : collective_notices) merged.notices.push_back(std::move(s));
  if (!tables.ok()) {
    // The writer's messages name the file already ("cannot write PATH: ...").
    const std::string why = absl::StartsWith(tables.message(), "cannot write ")
                                ? std::string(tables.message())
                                : absl::StrCat("cannot write tables.sqlite: ", tables.message());
    rep.problems.push_back(why);
    // An earlier merge's file would describe another set of shards.
    ::unlink(absl::StrCat(out_dir, "/", analysis::TablesFileName(0, 1)).c_str());
    tables_member = ",\n\"tables\":{\"path\":\"tables.sqlite\",\"error\":";
    formats::AppendJsonString(why, &tables_member);
    tables_member += "}";
    merged.exit_code = kExitInternal;
  }
  merged.extra_members += tables_member;
  if (absl::Status st = JoinOverviews(out_dir, n, shards[static_cast<size_t>(first)]->inputs_in_job,
                                     collective_marks); !st.ok()) {
    rep.problems.push_back(absl::StrCat("cannot write ", kOverviewFileName, ": ", st.message()));
    rep.exit_code = kExitInternal;
    return rep;
  }
  if (absl::Status st = WriteManifest(out_dir, merged); !st.ok()) {
    rep.problems.push_back(absl::StrCat("cannot write manifest.json: ", st.message()));
    rep.exit_code = kExitInternal;
    return rep;
  }
  rep.manifest_written = true;
  rep.exit_code = merged.exit_code;
  if (!write_report) return rep;
  // The run report, from the manifest just written, as convert writes it.
  if (absl::Status st = report::WriteReport(out_dir); !st.ok()) {
    rep.problems.push_back(absl::StrCat("manifest.json written, but cannot write report.html: ", st.message()));
    rep.exit_code = kExitInternal;
    return rep;
  }
  rep.report_written = true;
  return rep;
}

}  // namespace tracemill::pipeline
