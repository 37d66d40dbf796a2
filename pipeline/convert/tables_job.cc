#include "pipeline/convert/tables_job.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "formats/common/json_text.h"
#include "formats/common/status_macros.h"
#include "tracemill/version.h"

namespace tracemill::pipeline {
namespace {

std::string TablesPath(const ConvertContext& cx) {
  return cx.opts.out_dir + "/" + analysis::TablesFileName(cx.opts.shard.index, cx.opts.shard.count);
}

std::string PartialPath(const ConvertContext& cx) {
  return cx.opts.out_dir + "/" +
         analysis::PartialTablesName(analysis::TablesFileName(cx.opts.shard.index, cx.opts.shard.count));
}

std::string MovedPartialPath(const ConvertContext& cx) {
  std::string p = PartialPath(cx);
  return p.replace(p.size() - std::string_view(".partial").size(), std::string::npos, ".previous");
}

// RemoveDatabase: a database file and its rollback journal.
void RemoveDatabase(const std::string& path) {
  ::unlink(path.c_str());
  ::unlink((path + "-journal").c_str());
}

std::string TmpDir(const ConvertOptions& opts) {
  if (!opts.tmp_dir.empty()) return opts.tmp_dir;
  const char* t = std::getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

}  // namespace

std::pair<uint64_t, uint64_t> TablesBudget(uint64_t memory_limit) {
  return {std::clamp<uint64_t>(memory_limit / 32, 2 << 20, 64 << 20),
          std::clamp<uint64_t>(memory_limit / 64, 2 << 20, 8 << 20)};
}

std::string PreviousTables(const ConvertContext& cx) {
  if (cx.opts.tables == TablesMode::kOff || !cx.opts.resume) return "";
  const std::string partial = PartialPath(cx), moved = MovedPartialPath(cx);
  if (::access(partial.c_str(), F_OK) == 0) {
    // The journal first: a database renamed without its hot journal would
    // read as committed what the journal undoes.
    RemoveDatabase(moved);
    std::rename((partial + "-journal").c_str(), (moved + "-journal").c_str());
    if (std::rename(partial.c_str(), moved.c_str()) != 0) return "";
  }
  if (::access(moved.c_str(), F_OK) == 0) return moved;
  if (::access(TablesPath(cx).c_str(), F_OK) == 0) return TablesPath(cx);
  return "";
}

std::unique_ptr<analysis::TablesCollector> StartTables(ConvertContext& cx, uint64_t memory_limit,
                                                       const ResumeState& resume, const std::string& previous,
                                                       std::string* error) {
  if (cx.opts.tables == TablesMode::kOff) return nullptr;
  const auto [cache, queue] = TablesBudget(memory_limit);
  analysis::TablesStart how;
  how.out_dir = cx.opts.out_dir;
  how.file_name = analysis::TablesFileName(cx.opts.shard.index, cx.opts.shard.count);
  how.tmp_dir = TmpDir(cx.opts);
  how.mode = cx.opts.tables;
  how.hta_last_step = cx.opts.hta_last_step;
  how.cache_bytes = cache;
  how.queue_bytes = queue;
  how.resumable = !cx.opts.follow_window;  // a window's folder is a temporary itself
  how.fingerprint = cx.plan.fingerprint;
  how.previous = previous;
  for (const auto& c : resume.outputs)
    for (const auto& r : c.inputs) how.carried.push_back(r.index);
  auto t = analysis::TablesCollector::Start(how);
  if (previous == MovedPartialPath(cx)) RemoveDatabase(previous);
  if (t.ok()) return std::move(*t);
  *error = std::string(t.status().message());
  cx.job.Say(*error);
  return nullptr;
}

std::function<bool(const CompletedOutput&)> KeepForTables(const ConvertContext& cx, const std::string& previous) {
  if (cx.opts.tables == TablesMode::kOff || !cx.opts.resume) return {};
  std::string why;
  const std::vector<int64_t> with_rows = previous.empty() ? std::vector<int64_t>{}
                                                          : analysis::InputsWithRows(previous, cx.plan.fingerprint, &why);
  if (!why.empty())
    cx.job.Say(absl::StrCat("resume: ", previous, " is of an earlier version (", why,
                            "): its outputs are written again"));
  std::set<std::string> paths;
  for (int64_t i : with_rows)
    if (i >= 0 && static_cast<size_t>(i) < cx.records.size()) paths.insert(cx.records[static_cast<size_t>(i)].path);
  return [paths](const CompletedOutput& c) {
    for (const auto& r : c.inputs)
      if (!paths.count(r.path)) return false;
    return true;
  };
}

void RemoveStaleTables(const ConvertContext& cx) {
  if (cx.opts.resume) return;
  RemoveDatabase(PartialPath(cx));
  RemoveDatabase(MovedPartialPath(cx));
}

bool FinishTables(ConvertContext& cx, analysis::TablesCollector* tables, const std::string& error,
                  const formats::TimeWindow& window) {
  if (cx.opts.tables == TablesMode::kOff) return true;
  RunSummary& s = cx.job.summary();
  const std::string name = analysis::TablesFileName(cx.opts.shard.index, cx.opts.shard.count);
  absl::Status st = error.empty() ? absl::OkStatus() : absl::InternalError(error);
  if (tables && st.ok()) {
    const std::vector<std::pair<std::string, std::string>> meta = {
        {"tracemill_version", kVersion},
        {"mode", cx.opts.tables == TablesMode::kFull ? "full" : "summary"},
        {"fingerprint", cx.plan.fingerprint},
        {"hta_reference", "facebookresearch/HolisticTraceAnalysis f4d0062"},
        {"pandasframe_reference", "awslabs/sagemaker-debugger 3b82de31"},
        {"hta_last_step", cx.opts.hta_last_step ? "1" : "0"},
        {"shard", absl::StrCat(cx.opts.shard.index, "/", cx.opts.shard.count)}};
    st = tables->Finish(JobFactsOf(s), meta, window);
    if (st.ok()) {
      for (const std::string& n : tables->notices()) s.notices.push_back(n);
      if (cx.opts.shard.count <= 1) cx.last_arrivals = tables->last_arrivals();
    }
  }
  std::string member = absl::StrCat(",\n\"tables\":{\"path\":");
  formats::AppendJsonString(name, &member);
  absl::StrAppend(&member, ",\"mode\":\"", cx.opts.tables == TablesMode::kFull ? "full" : "summary", "\"");
  if (st.ok() && tables) absl::StrAppend(&member, ",\"temporal_breakdown\":", tables->breakdown_json());
  if (!st.ok()) {
    // Nothing partial: the temporary is gone, and an earlier file of that
    // name would describe another run.
    ::unlink(TablesPath(cx).c_str());
    member.append(",\"error\":");
    formats::AppendJsonString(StdView(st.message()), &member);
    // The writer's messages name the file already ("cannot write PATH: ...").
    if (error.empty())
      cx.job.Say(absl::StartsWith(st.message(), "cannot write ")
                     ? std::string(st.message())
                     : absl::StrCat("cannot write ", TablesPath(cx), ": ", st.message()));
  }
  member.append("}");
  s.extra_members += member;
  return st.ok();
}

}  // namespace tracemill::pipeline
