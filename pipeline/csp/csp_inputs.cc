#include "pipeline/csp/csp_inputs.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "formats/chrome/output_file.h"
#include "formats/common/read_file.h"
#include "formats/paddle/csp_trace.h"
#include "pipeline/job_notes.h"

namespace tracemill::pipeline {
namespace {

// A file of `<dir>/<anything>.<N>`.
struct SuffixedFile {
  std::string path;
  int64_t id = -1;  // N, or -1 if the name has no numeric suffix
};

// Lists the regular files of `dir` (sorted by name). Returns false if `dir`
// cannot be opened (`*err` = errno).
bool ListSuffixed(const std::string& dir, std::vector<SuffixedFile>* out, int* err) {
  const std::optional<std::vector<std::string>> names = formats::ListFolder(dir);
  if (!names) {
    *err = errno;
    return false;
  }
  for (const auto& n : *names) {
    if (formats::IsTemporaryName(n)) continue;
    std::string path = absl::StrCat(dir, dir.back() == '/' ? "" : "/", n);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    SuffixedFile f;
    f.path = std::move(path);
    // CrossStackProfiler: int(fileName.split(".")[-1]).
    size_t dot = n.rfind('.');
    if (dot != std::string::npos && dot + 1 < n.size() && n.size() - dot - 1 <= 9) {
      int64_t v = 0;
      bool digits = true;
      for (size_t k = dot + 1; k < n.size(); ++k) {
        if (n[k] < '0' || n[k] > '9') {
          digits = false;
          break;
        }
        v = v * 10 + (n[k] - '0');
      }
      if (digits) f.id = v;
    }
    out->push_back(std::move(f));
  }
  return true;
}

enum class CspFileKind { kProfile, kDcgm, kNet };

// AddFiles adds a record per file of `files` (of `kind`), indexing them by
// their suffix in `by_id`.
void AddFiles(const std::vector<SuffixedFile>& files, CspFileKind kind, std::vector<InputRecord>& inputs,
              std::map<int64_t, size_t>* by_id) {
  const bool profile = kind == CspFileKind::kProfile;
  for (const auto& f : files) {
    InputRecord r;
    r.path = f.path;
    r.from_directory = true;
    r.format = profile ? "paddle_profile" : kind == CspFileKind::kDcgm ? "dcgm_dmon" : "paddle_net_log";
    struct stat st;
    if (::stat(f.path.c_str(), &st) == 0) r.bytes = static_cast<uint64_t>(st.st_size);
    if (f.id < 0) {
      r.skipped = true;
      r.format = "";
      r.warnings.push_back(absl::StrCat("skipped: no .<", profile ? "rank" : "trainer",
                                        "> suffix in the file name"));
    } else if (auto it = by_id->find(f.id); it != by_id->end()) {
      r.rejected = true;
      r.status = absl::AlreadyExistsError(absl::StrCat(
          profile ? "rank " : "trainer ", f.id, " is already read from ", inputs[it->second].path,
          "; this file is ignored (CrossStackProfiler stops on duplicates)"));
    } else {
      (*by_id)[f.id] = inputs.size();
      if (profile) {
        r.rank = f.id;
        r.rank_source = "file name";
        r.label = formats::CspRankLabel(f.id);
      } else {
        r.label = absl::StrCat("trainer ", f.id);
      }
    }
    inputs.push_back(std::move(r));
  }
}

}  // namespace

bool ListCspInputs(const CspOptions& opts, Job& job, CspInputs* in) {
  in->root = opts.profile_path.empty() ? "." : opts.profile_path;
  in->profile_dir = absl::StrCat(in->root, "/profile");
  const std::string dcgm_dir = absl::StrCat(in->root, "/dcgm");
  const std::string net_dir = absl::StrCat(in->root, "/net");
  std::vector<SuffixedFile> profile_files, dcgm_files, net_files;
  int err = 0;
  if (!ListSuffixed(in->profile_dir, &profile_files, &err)) {
    job.UsageError(absl::StrCat("cannot read ", in->profile_dir, ": ", std::strerror(err),
                                " (--profile-path must be the folder holding profile/ and dcgm/)"));
    return false;
  }
  in->have_dcgm_dir = ListSuffixed(dcgm_dir, &dcgm_files, &err);  // missing: fine
  in->have_net_dir = ListSuffixed(net_dir, &net_files, &err);     // missing: fine
  std::vector<InputRecord>& inputs = job.summary().inputs;
  AddFiles(profile_files, CspFileKind::kProfile, inputs, &in->rank_input);
  if (in->rank_input.empty()) {
    job.UsageError(absl::StrCat("no rank profiles (<name>.<rank>) in ", in->profile_dir));
    return false;
  }
  AddFiles(dcgm_files, CspFileKind::kDcgm, inputs, &in->trainer_input);
  AddFiles(net_files, CspFileKind::kNet, inputs, &in->net_input);
  return true;
}

bool ShapeCspJob(const CspOptions& opts, const CspInputs& in, Job& job, CspShape* shape) {
  std::vector<InputRecord>& inputs = job.summary().inputs;
  const int64_t gpt = opts.gpus_per_trainer;
  shape->gpus_per_trainer = gpt;
  // Without --trainer-num: up to the highest rank file, rounded up to whole
  // groups (the last trainers' files may all be missing: then they are
  // missing ranks, not a bad --group-size).
  const int64_t found = in.rank_input.rbegin()->first / gpt + 1;
  shape->group_size = opts.group_size > 0 ? opts.group_size : opts.trainer_num > 0 ? opts.trainer_num : found;
  shape->trainer_num = opts.trainer_num > 0
                           ? opts.trainer_num
                           : (found + shape->group_size - 1) / shape->group_size * shape->group_size;
  shape->display = opts.display_size;
  const int64_t trainer_num = shape->trainer_num, group_size = shape->group_size, display = shape->display;
  if (trainer_num % group_size != 0) {
    job.UsageError(absl::StrCat("--trainer-num ", trainer_num, " is not a multiple of --group-size ", group_size));
    return false;
  }
  shape->groups = trainer_num / group_size;
  shape->shown = std::min(display, group_size);
  for (int64_t r = 0; r < trainer_num * gpt; ++r)
    if (!in.rank_input.count(r)) shape->missing_ranks.push_back(r);
  std::vector<int64_t> outside;
  for (auto& [rank, idx] : in.rank_input) {
    if (rank < trainer_num * gpt) continue;
    outside.push_back(rank);
    inputs[idx].warnings.push_back(absl::StrCat("rank ", rank, " is outside --trainer-num x --gpus-per-trainer (",
                                                trainer_num, " x ", gpt, "): not converted"));
  }
  if (!outside.empty())
    job.summary().notices.push_back(absl::StrCat(
        outside.size(), outside.size() == 1 ? " rank file (rank " : " rank files (ranks ", RankRanges(outside),
        ") outside --trainer-num ", trainer_num, " x --gpus-per-trainer ", gpt, ": not converted"));
  // DCGM and network logs: one per trainer, only displayed trainers read.
  for (const auto* by_trainer : {&in.trainer_input, &in.net_input}) {
    std::vector<int64_t> outside_logs;
    for (auto& [t, idx] : *by_trainer) {
      if (t >= trainer_num) {
        outside_logs.push_back(t);
        inputs[idx].warnings.push_back(absl::StrCat("trainer ", t, " is outside --trainer-num (", trainer_num,
                                                    "): not read"));
      } else if (t % group_size >= display) {
        inputs[idx].warnings.push_back(
            absl::StrCat("trainer ", t, " is not displayed (--display-size ", display, "): not read"));
      }
    }
    if (!outside_logs.empty())
      job.summary().notices.push_back(absl::StrCat(
          outside_logs.size(), by_trainer == &in.trainer_input ? " DCGM log" : " network log",
          outside_logs.size() == 1 ? " (trainer " : "s (trainers ", RankRanges(outside_logs),
          ") outside --trainer-num ", trainer_num, ": not read"));
  }
  auto missing = [&](const std::map<int64_t, size_t>& by_trainer, std::vector<int64_t>* out) {
    if (by_trainer.empty()) return;
    for (int64_t t = 0; t < trainer_num; ++t)
      if (t % group_size < display && !by_trainer.count(t)) out->push_back(t);
  };
  if (in.have_dcgm_dir) missing(in.trainer_input, &shape->missing_dcgm);
  if (in.have_net_dir) missing(in.net_input, &shape->missing_net);
  // The first few by name; a job mostly missing would fill the terminal.
  constexpr size_t kMaxMissingLines = 3;
  const std::vector<int64_t>& gone = shape->missing_ranks;
  for (size_t k = 0; !opts.quiet && k < gone.size() && k < kMaxMissingLines; ++k) {
    const int64_t r = gone[k];
    job.console().Line(absl::StrFormat("tracemill csp: rank %d (trainer %d, GPU %d, group %d) has no profile file in %s",
                                       r, r / gpt, r % gpt, (r / gpt) / group_size, in.profile_dir));
  }
  if (!opts.quiet && gone.size() > kMaxMissingLines)
    job.console().Line(absl::StrFormat(
        "tracemill csp: and %d more rank%s %s no profile file (all of them: manifest.json csp.missing_ranks)",
        gone.size() - kMaxMissingLines, gone.size() - kMaxMissingLines == 1 ? "" : "s",
        gone.size() - kMaxMissingLines == 1 ? "has" : "have"));
  return true;
}

}  // namespace tracemill::pipeline
