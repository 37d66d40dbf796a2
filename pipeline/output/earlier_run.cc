#include "pipeline/output/earlier_run.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "formats/common/json_text.h"
#include "formats/common/read_file.h"
#include "pipeline/job.h"
#include "pipeline/output/manifest.h"
#include "pipeline/output/overview.h"

namespace tracemill::pipeline {

std::vector<std::string> EarlierRunFiles(const std::string& out_dir, const std::string& manifest_name) {
  std::vector<std::string> files;
  const std::optional<std::string> text = formats::ReadTextFile(absl::StrCat(out_dir, "/", manifest_name));
  if (!text) return files;
  absl::StatusOr<RunSummary> m = ParseManifest(*text);
  if (!m.ok()) return files;
  for (const OutputRecord& o : m->outputs) {
    if (o.parts.empty()) files.push_back(o.path);
    for (const OutputPart& p : o.parts) files.push_back(p.path);
  }
  for (const char* name : {kOverviewFileName, "report.html", "tables.sqlite"})
    if (::access(absl::StrCat(out_dir, "/", name).c_str(), F_OK) == 0) files.push_back(name);
  return files;
}

std::vector<std::string> RemoveFilesNotWritten(const std::string& out_dir, const std::vector<std::string>& earlier,
                                               const std::set<std::string>& written) {
  std::vector<std::string> removed;
  for (const std::string& name : earlier) {
    // Names come from a manifest: never a path out of OUTDIR.
    if (written.count(name) || name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
      continue;
    if (::unlink(absl::StrCat(out_dir, "/", name).c_str()) == 0) removed.push_back(name);
  }
  return removed;
}

void RemoveEarlierRunsFiles(const std::string& out_dir, const std::vector<std::string>& earlier,
                            const std::set<std::string>& written, bool quiet, Job& job) {
  const std::vector<std::string> removed = RemoveFilesNotWritten(out_dir, earlier, written);
  if (removed.empty()) return;
  std::string& x = job.summary().extra_members;
  absl::StrAppend(&x, ",\n\"removed\":[");
  for (size_t k = 0; k < removed.size(); ++k) {
    if (k) x.push_back(',');
    formats::AppendJsonString(removed[k], &x);
  }
  x.push_back(']');
  if (quiet) return;
  constexpr size_t kNamed = 5;
  std::string names;
  for (size_t k = 0; k < removed.size() && k < kNamed; ++k) absl::StrAppend(&names, k ? ", " : "", removed[k]);
  if (removed.size() > kNamed) absl::StrAppend(&names, " and ", removed.size() - kNamed, " more");
  job.Say(absl::StrCat("removed ", removed.size(), removed.size() == 1 ? " file" : " files", " of an earlier run in ",
                       out_dir, " that this run does not write (manifest.json `removed`): ", names));
}

}  // namespace tracemill::pipeline
