#pragma once
// The follow journal, OUTDIR/follow-journal.jsonl: what a follow job has
// written, so that `--follow --resume` continues after a restart without
// redoing a window. One JSON object per line, appended (and synced) right
// after each window folder is renamed into place:
//   {"follow_journal":"tracemill","fingerprint":"<options>"}
//   {"window":"20240101T000000Z-20240101T000100Z","start_ns":..,"end_ns":..,"late":false,
//    "exit_code":0,"files":[{"path":..,"size":..,"mtime_ns":..,"events":..,"min_ns":..,
//    "max_ns":..,"source":..,"hint_ns":..},...]}
// Each window line lists the files it read with what their probe found, so
// a resumed job knows them without decoding them again. A line torn by a
// crash does not parse and ends the journal there.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pipeline/follow/file_table.h"
#include "pipeline/options.h"

namespace tracemill::pipeline::follow {

inline constexpr char kFollowJournalName[] = "follow-journal.jsonl";

// JournalWindow: one window line.
struct JournalWindow {
  FollowWindow window;
  int exit_code = 0;
  std::vector<FollowFile> files;  // path, size, mtime, probe span and events, source, hint
};

// FollowJournalContents: an earlier journal, up to its first torn line.
struct FollowJournalContents {
  std::string fingerprint;
  std::vector<JournalWindow> windows;
};

// LoadFollowJournal reads `path`. Errors: kNotFound (none), kDataLoss (no header).
absl::StatusOr<FollowJournalContents> LoadFollowJournal(const std::string& path);

// FollowJournal: the open journal of a follow job.
class FollowJournal {
 public:
  FollowJournal() = default;
  ~FollowJournal();
  FollowJournal(const FollowJournal&) = delete;
  FollowJournal& operator=(const FollowJournal&) = delete;

  // Create writes the header and `carried` windows (a resumed job's) to a
  // temporary, renames it over `path` and opens it for appending.
  absl::Status Create(const std::string& path, const std::string& fingerprint,
                      const std::vector<JournalWindow>& carried);
  // Append writes one window line and syncs it.
  absl::Status Append(const JournalWindow& w);

 private:
  int fd_ = -1;
};

// WindowLineJson: a window's line (without the newline).
std::string WindowLineJson(const JournalWindow& w);

}  // namespace tracemill::pipeline::follow
