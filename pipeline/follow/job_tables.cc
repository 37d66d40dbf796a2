#include "pipeline/follow/job_tables.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "analysis/schema.h"
#include "formats/common/status_macros.h"
#include "pipeline/follow/window_writer.h"
#include "tracemill/version.h"

namespace tracemill::pipeline::follow {
namespace {

constexpr char kWindowsTable[] = "follow_windows";

std::string QuotedName(const char* name) { return absl::StrCat("\"", name, "\""); }

// ColumnList: a table's columns, quoted, comma-separated.
std::string ColumnList(const formats::TableSpec& t) {
  std::string s;
  for (size_t i = 0; i < t.columns.size(); ++i) absl::StrAppend(&s, i ? "," : "", QuotedName(t.columns[i].name));
  return s;
}

// The job's table for a window table: the same columns and `window`.
std::string CreateJobTableSql(const formats::TableSpec& t) {
  std::string s = absl::StrCat("CREATE TABLE IF NOT EXISTS ", QuotedName(t.name), " (");
  for (const formats::ColumnSpec& c : t.columns) absl::StrAppend(&s, QuotedName(c.name), " ", c.type, ", ");
  s.append("\"window\" TEXT)");
  return s;
}

void RemoveDatabaseFiles(const std::string& path) {
  for (const char* suffix : {"", "-journal", "-wal", "-shm"}) ::unlink((path + suffix).c_str());
}

}  // namespace

JobTables::~JobTables() { Close(); }

void JobTables::Discard(const std::string& out_dir) { RemoveDatabaseFiles(absl::StrCat(out_dir, "/", kJobTablesName)); }

void JobTables::Close() {
  if (db_) sqlite3_close(db_);
  db_ = nullptr;
}

absl::Status JobTables::Error(const std::string& what) {
  std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
  const int sys = db_ ? sqlite3_system_errno(db_) : 0;
  if (sys != 0 && sys != ENOENT) absl::StrAppend(&msg, " (", std::strerror(sys), ")");
  return absl::InternalError(absl::StrCat("cannot write ", path_, ": ", what, ": ", msg));
}

absl::Status JobTables::Run(const std::string& sql, const std::vector<Value>& values, int64_t* changes) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) return Error(sql);
  for (size_t k = 0; k < values.size(); ++k) {
    const Value& v = values[k];
    const int at = static_cast<int>(k) + 1;
    if (v.kind == Value::kText)
      sqlite3_bind_text(st, at, v.text.data(), static_cast<int>(v.text.size()), SQLITE_TRANSIENT);
    else if (v.kind == Value::kInt)
      sqlite3_bind_int64(st, at, v.i);
    else
      sqlite3_bind_null(st, at);
  }
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) return Error(sql);
  if (changes) *changes = sqlite3_changes64(db_);
  return absl::OkStatus();
}

absl::Status JobTables::Open(const std::string& out_dir, const std::string& fingerprint, bool fresh) {
  out_dir_ = out_dir;
  path_ = absl::StrCat(out_dir, "/", kJobTablesName);
  for (int attempt = 0; attempt < 2; ++attempt) {
    Close();
    if (fresh) RemoveDatabaseFiles(path_);
    if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        nullptr) != SQLITE_OK)
      return Error("open");
    sqlite3_extended_result_codes(db_, 1);
    sqlite3_busy_timeout(db_, 5000);  // a reader of the live file (sqlite3, pandas) holds it that long at most
    if (fresh || SameJob(fingerprint)) break;
    fresh = true;  // another job's file, or not a follow job's: start over
  }
  TM_RETURN_IF_ERROR(Create(fingerprint));
  appended_.clear();
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, absl::StrCat("SELECT \"window\" FROM ", kWindowsTable).c_str(), -1, &st, nullptr) !=
      SQLITE_OK)
    return Error("read follow_windows");
  while (sqlite3_step(st) == SQLITE_ROW)
    if (const unsigned char* name = sqlite3_column_text(st, 0)) appended_.insert(reinterpret_cast<const char*>(name));
  sqlite3_finalize(st);
  return absl::OkStatus();
}

bool JobTables::SameJob(const std::string& fingerprint) {
  sqlite3_stmt* st = nullptr;
  bool same = false;
  if (sqlite3_prepare_v2(db_, "SELECT value FROM tables_meta WHERE key = 'follow_fingerprint' AND \"window\" IS NULL",
                         -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    const unsigned char* value = sqlite3_column_text(st, 0);
    same = value && fingerprint == reinterpret_cast<const char*>(value);
  }
  sqlite3_finalize(st);
  return same;
}

absl::Status JobTables::Create(const std::string& fingerprint) {
  // page_size before any table (it only applies to an empty file); the
  // default rollback journal and synchronous=FULL make each window's
  // transaction all or nothing across a crash.
  TM_RETURN_IF_ERROR(Run("PRAGMA page_size=65536", {}));
  TM_RETURN_IF_ERROR(Run("PRAGMA cache_size=-2048", {}));
  TM_RETURN_IF_ERROR(Run("BEGIN IMMEDIATE", {}));
  absl::Status st;
  for (const formats::TableSpec& t : analysis::TableSpecs())
    if (st.ok()) st = Run(CreateJobTableSql(t), {});
  for (const std::string& v : analysis::ViewSqls())
    if (st.ok()) st = Run(v, {});
  if (st.ok())
    st = Run(absl::StrCat("CREATE TABLE IF NOT EXISTS ", kWindowsTable,
                          " (\"window\" TEXT PRIMARY KEY, start_ns INTEGER, end_ns INTEGER, late INTEGER, "
                          "\"rows\" INTEGER)"),
             {});
  if (st.ok() && !SameJob(fingerprint)) {
    // The job's own rows (`window` NULL); each window's come with its rows.
    const std::string insert = "INSERT INTO tables_meta VALUES (?1, ?2, NULL)";
    st = Run(insert, {Value::Text("tracemill_version"), Value::Text(kVersion)});
    if (st.ok()) st = Run(insert, {Value::Text("follow_fingerprint"), Value::Text(fingerprint)});
    if (st.ok())
      st = Run(insert, {Value::Text("contents"),
                        Value::Text("every window's rows; `window` names the window (follow_windows), NULL: "
                                    "this file's own")});
  }
  if (!st.ok()) {
    Run("ROLLBACK", {}).IgnoreError();
    return st;
  }
  return Run("COMMIT", {});
}

absl::Status JobTables::DeleteRows(const std::string& name) {
  for (const formats::TableSpec& t : analysis::TableSpecs())
    TM_RETURN_IF_ERROR(
        Run(absl::StrCat("DELETE FROM ", QuotedName(t.name), " WHERE \"window\" = ?1"), {Value::Text(name)}));
  return Run(absl::StrCat("DELETE FROM ", kWindowsTable, " WHERE \"window\" = ?1"), {Value::Text(name)});
}

absl::Status JobTables::Remove(const std::string& name) {
  TM_RETURN_IF_ERROR(Run("BEGIN IMMEDIATE", {}));
  if (absl::Status st = DeleteRows(name); !st.ok()) {
    Run("ROLLBACK", {}).IgnoreError();
    return st;
  }
  TM_RETURN_IF_ERROR(Run("COMMIT", {}));
  appended_.erase(name);
  return absl::OkStatus();
}

absl::Status JobTables::CopyRows(const FollowWindow& w, int64_t* rows) {
  *rows = 0;
  for (const formats::TableSpec& t : analysis::TableSpecs()) {
    const std::string cols = ColumnList(t);
    int64_t n = 0;
    TM_RETURN_IF_ERROR(Run(absl::StrCat("INSERT INTO main.", QuotedName(t.name), " (", cols, ",\"window\") SELECT ",
                                        cols, ", ?1 FROM win.", QuotedName(t.name)),
                           {Value::Text(w.name)}, &n));
    *rows += n;
  }
  return Run(absl::StrCat("INSERT INTO ", kWindowsTable, " VALUES (?1, ?2, ?3, ?4, ?5)"),
             {Value::Text(w.name), w.late ? Value{} : Value::Int(w.start_ns), Value::Int(w.end_ns), Value::Int(w.late),
              Value::Int(*rows)});
}

absl::Status JobTables::Append(const FollowWindow& w) {
  const std::string file = absl::StrCat(WindowsFolder(out_dir_), "/", w.name, "/", kJobTablesName);
  if (::access(file.c_str(), R_OK) != 0)
    return absl::NotFoundError(
        absl::StrCat("cannot append windows/", w.name, " to ", path_, ": ", file, ": ", std::strerror(errno)));
  // ATTACH and DETACH are refused inside a transaction.
  TM_RETURN_IF_ERROR(Run("ATTACH ?1 AS win", {Value::Text(file)}));
  absl::Status st = Run("BEGIN IMMEDIATE", {});
  if (st.ok()) {
    int64_t rows = 0;
    if (appended_.count(w.name)) st = DeleteRows(w.name);  // redone after a resume
    if (st.ok()) st = CopyRows(w, &rows);
    st = st.ok() ? Run("COMMIT", {}) : st;
    if (!st.ok()) Run("ROLLBACK", {}).IgnoreError();
  }
  absl::Status detached = Run("DETACH win", {});
  if (!st.ok()) return st;
  appended_.insert(w.name);
  return detached;
}

absl::Status JobTables::Reconcile(const std::vector<FollowWindow>& kept) {
  std::set<std::string> names;
  for (const FollowWindow& w : kept) names.insert(w.name);
  const std::set<std::string> before = appended_;
  for (const std::string& name : before)
    if (!names.count(name)) TM_RETURN_IF_ERROR(Remove(name));
  absl::Status first;
  for (const FollowWindow& w : kept)
    if (!appended_.count(w.name))
      if (absl::Status st = Append(w); !st.ok() && first.ok()) first = st;
  return first;
}

}  // namespace tracemill::pipeline::follow
