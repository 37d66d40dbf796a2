#include "pipeline/manifest_merge.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pipeline/journal.h"
#include "pipeline/manifest.h"
#include "pipeline/options.h"
#include "pipeline/out_dir_lock.h"
#include "pipeline/plan.h"

namespace tracemill::pipeline {
namespace {

bool ReadWhole(const std::string& path, std::string* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return true;
}

}  // namespace

MergeReport MergeShardManifests(const std::string& out_dir, const std::string& command_line) {
  MergeReport rep;
  // Not while a shard (or any other tracemill job) still writes here on this
  // node: its manifest would be missing or stale.
  OutDirLock lock;
  if (!lock.Acquire(out_dir)) {
    rep.exit_code = kExitUsage;
    rep.problems.push_back(OutDirLock::InUseMessage(out_dir));
    return rep;
  }
  // Which shard counts have manifests (or journals) here?
  std::map<int, std::set<int>> found;  // count -> indices with a manifest
  std::set<int> counts;
  static const std::regex kName(R"(^(manifest|journal)\.shard-(\d{1,6})-of-(\d{1,6})\.jsonl?$)");
  if (DIR* d = ::opendir(out_dir.c_str())) {
    while (dirent* de = ::readdir(d)) {
      std::cmatch m;
      if (!std::regex_match(de->d_name, m, kName)) continue;
      int i = std::stoi(m[2].str()), n = std::stoi(m[3].str());
      bool manifest = m[1].str() == "manifest" && std::string(de->d_name).ends_with(".json");
      counts.insert(n);
      if (manifest) found[n].insert(i);
    }
    ::closedir(d);
  } else {
    rep.exit_code = kExitUsage;
    rep.problems.push_back(absl::StrCat("cannot list ", out_dir));
    return rep;
  }
  if (counts.empty()) {
    rep.exit_code = kExitUsage;
    rep.problems.push_back(absl::StrCat("no shard manifests (manifest.shard-<i>-of-<n>.json) in ",
                                        out_dir, ": was the job run with --shard or a job array?"));
    return rep;
  }
  if (counts.size() > 1) {
    rep.exit_code = kExitInternal;
    std::vector<std::string> c;
    for (int n : counts) c.push_back(absl::StrCat(n));
    rep.problems.push_back(absl::StrCat("shard files of different shard counts (", absl::StrJoin(c, ", "),
                                        ") in ", out_dir, ": remove those of the runs that do not count"));
    return rep;
  }
  const int n = *counts.begin();
  rep.shard_count = n;
  std::vector<RunSummary> shards(static_cast<size_t>(n));
  std::vector<bool> ok(static_cast<size_t>(n), false);
  for (int i = 0; i < n; ++i) {
    ShardSpec spec{i, n, ""};
    std::string path = absl::StrCat(out_dir, "/", ManifestFileName(spec));
    std::string shard_name = absl::StrCat("shard ", i, " (", i, "/", n, ")");
    std::string text;
    if (!ReadWhole(path, &text)) {
      std::string journal = absl::StrCat(out_dir, "/", JournalFileName(spec));
      std::string why = "never started, or was killed before writing anything";
      if (auto j = LoadJournal(journal); j.ok())
        why = absl::StrCat("started but did not finish (killed, or still running): its journal lists ",
                           j->outputs.size(), " completed outputs; rerun it with --resume");
      rep.problems.push_back(absl::StrCat(shard_name, ": missing ", ManifestFileName(spec), ": ", why));
      continue;
    }
    auto s = ParseManifest(text);
    if (!s.ok()) {
      rep.problems.push_back(absl::StrCat(shard_name, ": ", ManifestFileName(spec), " is unreadable: ",
                                          s.status().message()));
      continue;
    }
    if (s->shard.count != n || s->shard.index != i) {
      rep.problems.push_back(absl::StrCat(shard_name, ": ", ManifestFileName(spec), " says it is shard ",
                                          s->shard.index, "/", s->shard.count));
      continue;
    }
    if (s->exit_code != kExitOk && s->exit_code != kExitSomeRejected) {
      std::string detail;
      for (const auto& o : s->outputs)
        if (!o.error.empty()) {
          detail = absl::StrCat(": ", o.path, ": ", o.error);
          break;
        }
      for (const auto& r : s->inputs)
        if (detail.empty() && r.owner_shard < 0 && !r.status.ok() && r.status.code() != absl::StatusCode::kDataLoss &&
            r.status.code() != absl::StatusCode::kInvalidArgument)
          detail = absl::StrCat(": ", r.path, ": ", r.status.message());
      rep.problems.push_back(absl::StrCat(shard_name, ": failed (exit status ", s->exit_code, ")", detail,
                                          "; rerun it with --resume"));
      continue;
    }
    shards[static_cast<size_t>(i)] = std::move(*s);
    ok[static_cast<size_t>(i)] = true;
  }
  // The same job everywhere?
  int first = -1;
  for (int i = 0; i < n; ++i) {
    if (!ok[static_cast<size_t>(i)]) continue;
    if (first < 0) {
      first = i;
      continue;
    }
    const RunSummary& a = shards[static_cast<size_t>(first)];
    const RunSummary& b = shards[static_cast<size_t>(i)];
    if (a.fingerprint != b.fingerprint || a.inputs_in_job != b.inputs_in_job || a.group_by != b.group_by ||
        a.gpus_per_node != b.gpus_per_node)
      rep.problems.push_back(absl::StrCat("shard ", i, " ran another job than shard ", first,
                                          " (fingerprint ", b.fingerprint, " vs ", a.fingerprint,
                                          "): different inputs or options"));
  }
  if (!rep.problems.empty() || first < 0) {
    rep.exit_code = kExitInternal;
    return rep;
  }
  const RunSummary& base = shards[static_cast<size_t>(first)];
  RunSummary merged;
  merged.command_line = command_line;
  merged.group_by = base.group_by;
  merged.gpus_per_node = base.gpus_per_node;
  merged.fingerprint = base.fingerprint;
  // Outputs: each written once.
  std::map<std::string, int> writer;
  std::vector<std::pair<OutputKey, OutputRecord>> outputs;
  // Inputs: each reported once.
  std::vector<InputRecord> inputs(base.inputs_in_job);
  std::vector<int> reporter(base.inputs_in_job, -1);
  std::map<int64_t, std::pair<int, int>> claimed_elsewhere;  // index -> (by shard, owner)
  bool rejected = false;
  for (int i = 0; i < n; ++i) {
    RunSummary& s = shards[static_cast<size_t>(i)];
    ShardRun run;
    run.index = i;
    run.exit_code = s.exit_code;
    run.wall_seconds = s.wall_seconds;
    run.threads = s.threads;
    run.source = s.shard.source;
    run.command_line = s.command_line;
    merged.shards.push_back(run);
    merged.wall_seconds = std::max(merged.wall_seconds, s.wall_seconds);
    merged.threads = std::max(merged.threads, s.threads);
    for (auto& o : s.outputs) {
      auto [it, fresh] = writer.emplace(o.path, i);
      if (!fresh) {
        rep.problems.push_back(absl::StrCat("output ", o.path, " was written by shards ", it->second,
                                            " and ", i));
        continue;
      }
      OutputKey key = ParseOutputName(o.path).value_or(OutputKey{2, 0, o.path});
      outputs.emplace_back(std::move(key), std::move(o));
    }
    for (auto& r : s.inputs) {
      if (r.index < 0 || static_cast<uint64_t>(r.index) >= base.inputs_in_job) {
        rep.problems.push_back(absl::StrCat("shard ", i, ": input ", r.path, " has no valid index"));
        continue;
      }
      if (r.owner_shard >= 0) {
        claimed_elsewhere[r.index] = {i, r.owner_shard};
        continue;
      }
      size_t k = static_cast<size_t>(r.index);
      if (reporter[k] >= 0) {
        rep.problems.push_back(absl::StrCat("input ", r.path, " was reported by shards ", reporter[k],
                                            " and ", i));
        continue;
      }
      reporter[k] = i;
      rejected |= !r.status.ok();
      r.owner_shard = -1;
      r.index = -1;
      inputs[k] = std::move(r);
    }
  }
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (reporter[k] >= 0) continue;
    auto it = claimed_elsewhere.find(static_cast<int64_t>(k));
    if (it != claimed_elsewhere.end())
      rep.problems.push_back(absl::StrCat("input #", k, ": shard ", it->second.first, " left it to shard ",
                                          it->second.second, ", which does not report it"));
    else
      rep.problems.push_back(absl::StrCat("input #", k, " of the job is reported by no shard"));
  }
  if (!rep.problems.empty()) {
    rep.exit_code = kExitInternal;
    return rep;
  }
  std::stable_sort(outputs.begin(), outputs.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [key, o] : outputs) merged.outputs.push_back(std::move(o));
  for (const auto& r : inputs) {
    if (!r.has_span) continue;
    merged.first_ts_ns = merged.has_span ? std::min(merged.first_ts_ns, r.first_ts_ns) : r.first_ts_ns;
    merged.last_ts_ns = merged.has_span ? std::max(merged.last_ts_ns, r.last_ts_ns) : r.last_ts_ns;
    merged.has_span = true;
  }
  merged.inputs = std::move(inputs);
  merged.exit_code = rejected ? kExitSomeRejected : kExitOk;
  rep.outputs = merged.outputs.size();
  rep.inputs = merged.inputs.size();
  if (absl::Status st = WriteManifest(out_dir, merged); !st.ok()) {
    rep.problems.push_back(absl::StrCat("cannot write manifest.json: ", st.message()));
    rep.exit_code = kExitInternal;
    return rep;
  }
  rep.exit_code = merged.exit_code;
  return rep;
}

}  // namespace tracemill::pipeline
