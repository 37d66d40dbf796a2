#pragma once
// JobTables: a follow job's OUTDIR/tables.sqlite (`--follow --tables`):
// the rows of every window written so far, in one file.
//
// Each window's convert writes its own windows/<name>/tables.sqlite (kept).
// Once the window's folder is in place and its journal line written, its
// rows are appended to the job's file: ATTACH, then in one transaction one
// INSERT ... SELECT per table (analysis/schema.h), each row with the window's
// name in an added last column `window`, and the window's line in
// `follow_windows` (window, start_ns, end_ns, late, rows). `input` numbers
// a window's own inputs, so rows join on (window, input).
//
// Never a window twice, never half a window: the window's rows and its
// `follow_windows` line are one transaction, which first deletes any rows
// of a window of that name already in the file; a transaction cut short
// (a crash, a second signal) is rolled back by SQLite's journal when the
// file is next opened. --resume keeps exactly the windows the follow
// journal kept: rows of the others are deleted, kept windows whose rows are
// missing (the job stopped between a window's journal line and its rows)
// are appended from their folders. Without --resume, or when nothing is
// kept, the file starts over.
//
// Work per window: its rows (no index is scanned; the delete only runs for
// a window already in the file). Memory: SQLite's page cache, 2 MiB.
#include <sqlite3.h>

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "pipeline/options.h"

namespace tracemill::pipeline::follow {

inline constexpr char kJobTablesName[] = "tables.sqlite";

class JobTables {
 public:
  JobTables() = default;
  ~JobTables();
  JobTables(const JobTables&) = delete;
  JobTables& operator=(const JobTables&) = delete;

  // Open opens OUTDIR/tables.sqlite, or creates it: anew (an earlier file
  // and its journal removed) with `fresh`, or when the file there is not
  // this follow job's (`fingerprint`, as the follow journal's).
  // Errors: SQLite's, with the path.
  absl::Status Open(const std::string& out_dir, const std::string& fingerprint, bool fresh);

  // Reconcile makes the file hold exactly the windows `kept` (--resume, in
  // the journal's order): the others' rows deleted, the missing appended.
  absl::Status Reconcile(const std::vector<FollowWindow>& kept);

  // Append copies window `w`'s rows from OUTDIR/windows/<name>/tables.sqlite
  // (see the file comment). Errors: kNotFound if the window has no
  // tables.sqlite; SQLite's, with the path (nothing of the window is in the
  // file then).
  absl::Status Append(const FollowWindow& w);

  // Discard removes OUTDIR/tables.sqlite and its journal (a follow job
  // without --tables starting over).
  static void Discard(const std::string& out_dir);

  // The windows whose rows are in the file.
  uint64_t windows() const { return appended_.size(); }
  const std::string& path() const { return path_; }

 private:
  // Value: a bound value of a statement (text, integer or NULL).
  struct Value {
    enum Kind { kText, kInt, kNull } kind = kNull;
    std::string text;
    int64_t i = 0;
    static Value Text(std::string t) { return {kText, std::move(t), 0}; }
    static Value Int(int64_t v) { return {kInt, {}, v}; }
  };
  // Run runs one statement with `values` bound to ?1, ?2, ...; `*changes`:
  // the rows it inserted or deleted.
  absl::Status Run(const std::string& sql, const std::vector<Value>& values, int64_t* changes = nullptr);
  absl::Status Create(const std::string& fingerprint);
  bool SameJob(const std::string& fingerprint);
  absl::Status Remove(const std::string& name);
  absl::Status DeleteRows(const std::string& name);
  absl::Status CopyRows(const FollowWindow& w, int64_t* rows);
  absl::Status Error(const std::string& what);
  void Close();

  sqlite3* db_ = nullptr;
  std::string out_dir_, path_;
  std::set<std::string> appended_;  // names in follow_windows
};

}  // namespace tracemill::pipeline::follow
