#include "pipeline/inputs/inputs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "formats/chrome/output_file.h"
#include "pipeline/inputs/smdebug_inputs.h"

namespace tracemill::pipeline {

bool ExpandInputs(const std::vector<std::string>& args, std::pair<dev_t, ino_t> out_dir,
                  std::vector<InputRecord>* records) {
  std::vector<std::pair<std::string, bool>> found;  // (path, found in a directory)
  std::vector<InputRecord> bad;
  std::set<std::pair<dev_t, ino_t>> walked_dirs;
  bool names_out_dir = false;
  // A path that cannot be read: a rejected record (errno as it is now).
  auto reject = [&](const std::string& p, const char* what) {
    int e = errno;
    InputRecord r;
    r.path = p;
    r.status = absl::ErrnoToStatus(e, what);
    r.rejected = true;
    bad.push_back(std::move(r));
  };
  std::function<void(const std::string&, bool)> walk = [&](const std::string& p, bool top) {
    struct stat st;
    if (::stat(p.c_str(), &st) != 0) return reject(p, "cannot read input");
    if (S_ISDIR(st.st_mode)) {
      if (std::pair(st.st_dev, st.st_ino) == out_dir) {
        names_out_dir |= top;
        return;
      }
      if (!walked_dirs.insert({st.st_dev, st.st_ino}).second) return;  // a loop, or named twice
      DIR* d = ::opendir(p.c_str());
      if (!d) return reject(p, "cannot list directory");
      std::vector<std::string> names;
      while (dirent* de = ::readdir(d)) {
        std::string n = de->d_name;
        if (n == "." || n == "..") continue;
        if (formats::IsTemporaryName(n)) continue;  // our own temporaries
        names.push_back(n);
      }
      ::closedir(d);
      std::sort(names.begin(), names.end());
      std::string prefix = p.back() == '/' ? p : p + "/";
      for (const auto& n : names) walk(prefix + n, false);
    } else if (S_ISREG(st.st_mode)) {
      // A file named on the command line that this user cannot open is
      // known now: if every input is such a path, the job is a usage error.
      if (top) {
        const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return reject(p, "cannot read input");
        ::close(fd);
      }
      found.emplace_back(p, !top);
    } else if (top) {
      found.emplace_back(p, false);  // a FIFO or device named explicitly: try it
    }
  };
  for (const auto& a : args) walk(a, true);
  // Sorted by path; a file named twice (directly and through its folder) is read once.
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end(),
                          [](const auto& a, const auto& b) { return a.first == b.first; }),
              found.end());
  for (auto& [p, walked] : found) {
    InputRecord r;
    r.path = std::move(p);
    r.from_directory = walked;
    records->push_back(std::move(r));
  }
  for (auto& r : bad) records->push_back(std::move(r));
  return !names_out_dir;
}

std::string NothingToConvert(const std::vector<std::string>& args, size_t unreadable) {
  if (unreadable == 0) return absl::StrCat("no input files in ", absl::StrJoin(args, ", "), ": nothing to convert");
  if (unreadable == 1 && args.size() == 1) return "the input cannot be read: nothing to convert";
  return absl::StrCat("none of the ", unreadable, " inputs can be read: nothing to convert");
}

bool ListInputs(const std::vector<std::string>& args, const std::string& out_dir_path,
                std::pair<dev_t, ino_t> out_dir, bool no_system_metrics, Job& job,
                std::vector<InputRecord>* records) {
  if (!ExpandInputs(args, out_dir, records)) {
    job.UsageError(absl::StrCat("-o ", out_dir_path,
                                " is also an input: its outputs would replace inputs; write them to another directory"));
    return false;
  }
  // Inputs that name no file at all (an empty directory, a wrong path in a
  // batch script) are a usage error, not a successful job of 0 inputs. Only
  // the paths that cannot be read are rejected here: when that is all of
  // them, each gets its line and nothing is written. (A missing path beside
  // readable ones is a rejected input, and the job goes on: exit 3.)
  if (std::all_of(records->begin(), records->end(), [](const InputRecord& r) { return r.rejected; })) {
    for (const InputRecord& r : *records) job.Say(absl::StrCat(r.path, ": ", r.status.message()));
    job.UsageError(NothingToConvert(args, records->size()));
    return false;
  }
  GroupSmdebugInputs(records, no_system_metrics);
  for (size_t i = 0; i < records->size(); ++i) (*records)[i].index = static_cast<int64_t>(i);
  return true;
}

}  // namespace tracemill::pipeline
