#pragma once
// The output directory of a job (`convert -o`, `csp --timeline-path`): made
// ready to write into before any input is read, by one rule for both jobs.
//
// - Created with its parents, as `-o` promises ("created if missing"). A
//   path that exists as something else (a file), or that the user may not
//   create (read-only mount, no permission, under /proc), is the user's to
//   fix: exit 2 (CreateOutputDirectory, out_dir_lock.h).
// - It (and convert's `--tmp-dir`) must be a writable directory: a typo is a
//   usage error, not N rejected inputs or N outputs that fail.
// - Locked for the job (OutDirLock: exclusive, shared in a shard): a second
//   job into it exits 2 instead of removing the first one's temporaries.
// - A directory the job created is removed again (if still empty) when the
//   job ends in a usage error found later (an unknown --start-step, ...).
// - Stale files of a killed run (temporaries, old shard manifests) are
//   removed by RemoveStaleFiles once the job knows which are its own.
#include <sys/types.h>

#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "pipeline/job.h"
#include "pipeline/output/out_dir_lock.h"
#include "pipeline/shard.h"

namespace tracemill::pipeline {

class OutputDirectory {
 public:
  // `dir`: the path given; `job` says what goes wrong and holds the exit
  // status that decides whether a created directory stays.
  OutputDirectory(Job& job, std::string dir) : job_(job), dir_(std::move(dir)) {}
  OutputDirectory(const OutputDirectory&) = delete;
  OutputDirectory& operator=(const OutputDirectory&) = delete;
  // Removes the directory if Open created it and the job's exit status is a
  // usage error (rmdir(2): only if it is still empty).
  ~OutputDirectory();

  // Open creates, checks and locks the directory (see the file comment).
  // `flag` names it in messages ("-o " for convert, "" for csp); `tmp_dir`
  // (may be empty) is checked as `--tmp-dir`; `shard` chooses a shared
  // lock. Returns false after saying why and setting the job's exit status
  // (2, or 1 for an unexpected mkdir failure).
  bool Open(std::string_view flag, const std::string& tmp_dir, const ShardSpec& shard);

  const std::string& path() const { return dir_; }
  // (device, inode) of the directory: inputs never include it.
  std::pair<dev_t, ino_t> id() const;

 private:
  Job& job_;
  const std::string dir_;
  bool created_ = false;
  OutDirLock lock_;
};

// RemoveStaleFiles removes from `dir` the temporaries (`.<name>.tmp.<pid>`)
// of a killed run whose base name `<name>` `owned` accepts, and, with
// `shard_files_too`, the shard manifests and journals of an earlier sharded
// job (`manifest.shard-*.json`, `journal.shard-*.jsonl`), which a later
// `manifest merge` would otherwise describe. One walk of `dir`.
void RemoveStaleFiles(const std::string& dir, const std::function<bool(std::string_view base)>& owned,
                      bool shard_files_too);

}  // namespace tracemill::pipeline
