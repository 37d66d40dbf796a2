#include "pipeline/output/output_dir.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "formats/chrome/output_file.h"
#include "formats/common/status_macros.h"

namespace tracemill::pipeline {
namespace {

// Why `dir` cannot be written into, or nullptr.
const char* NotWritable(const std::string& dir) {
  struct stat sb;
  return ::stat(dir.c_str(), &sb) != 0             ? "does not exist"
         : !S_ISDIR(sb.st_mode)                    ? "is not a directory"
         : ::access(dir.c_str(), W_OK | X_OK) != 0 ? "is not writable"
                                                   : nullptr;
}

}  // namespace

OutputDirectory::~OutputDirectory() {
  if (created_ && job_.summary().exit_code == kExitUsage) ::rmdir(dir_.c_str());
}

bool OutputDirectory::Open(std::string_view flag, const std::string& tmp_dir, const ShardSpec& shard) {
  std::string mkdir_error;
  if (int code = CreateOutputDirectory(dir_, &created_, &mkdir_error)) {
    job_.Say(absl::StrCat("cannot create output directory ", dir_, ": ", mkdir_error));
    job_.Exit(code);
    return false;
  }
  for (const auto& [name, dir] : {std::pair<std::string_view, std::string>{flag, dir_},
                                  std::pair<std::string_view, std::string>{"--tmp-dir ", tmp_dir}}) {
    if (dir.empty()) continue;
    if (const char* why = NotWritable(dir)) {
      job_.UsageError(absl::StrCat(AbslView(name), dir, " ", why));
      return false;
    }
  }
  if (!lock_.Acquire(dir_, shard)) {
    job_.UsageError(absl::StrCat(AbslView(flag), lock_.InUseMessage(dir_)));
    return false;
  }
  return true;
}

std::pair<dev_t, ino_t> OutputDirectory::id() const {
  struct stat st;
  if (::stat(dir_.c_str(), &st) != 0) return {0, 0};
  return {st.st_dev, st.st_ino};
}

void RemoveStaleFiles(const std::string& dir, const std::function<bool(std::string_view base)>& owned,
                      bool shard_files_too) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (dirent* de = ::readdir(d)) {
    const std::string_view name = de->d_name;
    const bool shard_file = (name.starts_with("manifest.shard-") && name.ends_with(".json")) ||
                            (name.starts_with("journal.shard-") && name.ends_with(".jsonl")) ||
                            (name.starts_with("overview.shard-") && name.ends_with(".json"));
    bool stale = shard_files_too && shard_file;
    if (!stale && formats::IsTemporaryName(name))
      stale = owned(name.substr(1, name.find(".tmp.") - 1));  // `.<base>.tmp.<pid>`
    if (stale) ::unlink((dir + "/" + de->d_name).c_str());
  }
  ::closedir(d);
}

}  // namespace tracemill::pipeline
