#include "pipeline/output/earlier_run.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "formats/common/read_file.h"
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

}  // namespace tracemill::pipeline
