#include "formats/sqlite/sqlite_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "formats/common/cleanup.h"
#include "formats/common/status_macros.h"

namespace tracemill::formats {
namespace {

std::string Quoted(std::string_view name) { return absl::StrCat("\"", AbslView(name), "\""); }

// The temporary next to `final_path`: `<dir>/.<name>.tmp.<pid>`, as the
// trace outputs (output_file.h), so a later run's stale-file sweep finds it.
std::string TempPathOf(const std::string& final_path) {
  const size_t slash = final_path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : final_path.substr(0, slash);
  const std::string base = slash == std::string::npos ? final_path : final_path.substr(slash + 1);
  return absl::StrCat(dir, "/.", base, ".tmp.", ::getpid());
}

}  // namespace

std::string TableSpec::CreateSql() const {
  std::string s = absl::StrCat("CREATE TABLE IF NOT EXISTS ", Quoted(name), " (");
  for (size_t i = 0; i < columns.size(); ++i)
    absl::StrAppend(&s, i ? ", " : "", Quoted(columns[i].name), " ", columns[i].type);
  s.append(")");
  return s;
}

std::string TableSpec::InsertSql() const {
  std::string s = absl::StrCat("INSERT INTO ", Quoted(name), " VALUES (");
  for (size_t i = 0; i < columns.size(); ++i) s.append(i ? ",?" : "?");
  s.append(")");
  return s;
}

void RowBatch::Real(double v) {
  Cell c{Cell::kReal, 0, 0, 0};
  std::memcpy(&c.i, &v, sizeof(v));
  cells_.push_back(c);
}

void RowBatch::Text(std::string_view s) {
  cells_.push_back(Cell{Cell::kText, 0, static_cast<uint32_t>(text_.size()), static_cast<uint32_t>(s.size())});
  text_.append(s);
}

absl::StatusOr<std::unique_ptr<SqliteWriter>> SqliteWriter::Create(Options opts) {
  auto w = std::unique_ptr<SqliteWriter>(new SqliteWriter);
  w->opts_ = std::move(opts);
  absl::Status st = w->Open();
  if (st.ok() && w->opts_.seed) st = w->opts_.seed(*w);
  w->opts_.seed = nullptr;  // it may hold references to the caller's frame
  if (!st.ok()) {
    w->Abort();
    return st;
  }
  w->running_ = true;
  w->thread_ = std::thread([p = w.get()] { p->Run(); });
  return w;
}

absl::Status SqliteWriter::Error(int rc, std::string_view what) {
  std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  const int sys = db_ ? sqlite3_system_errno(db_) : 0;
  if (sys != 0 && sys != ENOENT) msg = absl::StrCat(msg, " (", std::strerror(sys), ")");
  std::string text = absl::StrCat("cannot write ", opts_.final_path, ": ", AbslView(what), ": ", msg);
  if (rc == SQLITE_FULL || sys == ENOSPC) return absl::ResourceExhaustedError(text);
  if (sys == EFBIG) return absl::OutOfRangeError(text);
  return absl::InternalError(text);
}

absl::Status SqliteWriter::Open() {
  const bool resumable = !opts_.work_path.empty();
  temp_path_ = resumable ? opts_.work_path : TempPathOf(opts_.final_path);
  // Created (empty: a valid empty database) through the interrupt cleanup's
  // table, so SIGINT/SIGTERM remove it like a trace output's temporary; a
  // resumable file stays (its stale journal would roll a new file back).
  if (resumable) ::unlink((temp_path_ + "-journal").c_str());
  const int fd = resumable ? ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
                           : OpenTemporary(temp_path_, &temp_slot_);
  if (fd < 0) {
    const int e = errno;
    return absl::ErrnoToStatus(e, absl::StrCat("cannot create ", temp_path_));
  }
  ::close(fd);
  int rc = sqlite3_open_v2(temp_path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) return Error(rc, "open");
  sqlite3_extended_result_codes(db_, 1);
  // cache_size < 0 is in KiB. page_size goes first: set after cache_size
  // (3.40), the cache never spilled its dirty pages and held the whole
  // transaction in memory (a 64-rank job grew by 550 MB; measured with the
  // sqlite3 module, the file stayed empty until COMMIT).
  // temp_store_directory is deprecated but still compiled into Debian's
  // 3.40; SQLITE_TMPDIR would need setenv before any thread starts.
  const int64_t cache_kib = std::max<int64_t>(static_cast<int64_t>(opts_.cache_bytes >> 10), 1024);
  // A rollback journal holds only the pages a transaction changes that an
  // earlier commit wrote (appended pages need none): cheap for appends.
  TM_RETURN_IF_ERROR(Exec(absl::StrCat("PRAGMA page_size=65536; PRAGMA journal_mode=", resumable ? "DELETE" : "OFF",
                                       "; PRAGMA synchronous=OFF; ",
                                       "PRAGMA cache_size=-", cache_kib, "; PRAGMA temp_store=FILE")));
  if (!opts_.tmp_dir.empty()) {
    sqlite3_stmt* st = nullptr;
    // A pragma cannot take a bound value: quote the path as an SQL string
    // literal (it is ours, --tmp-dir, not an input's).
    std::string lit = "'";
    for (char c : opts_.tmp_dir) lit.append(c == '\'' ? "''" : std::string(1, c));
    lit.push_back('\'');
    rc = sqlite3_prepare_v2(db_, absl::StrCat("PRAGMA temp_store_directory=", lit).c_str(), -1, &st, nullptr);
    if (rc == SQLITE_OK) sqlite3_step(st);
    sqlite3_finalize(st);
  }
  TM_RETURN_IF_ERROR(Exec("BEGIN"));
  for (const TableSpec& t : opts_.tables) {
    TM_RETURN_IF_ERROR(Exec(t.CreateSql()));
    sqlite3_stmt* st = nullptr;
    rc = sqlite3_prepare_v3(db_, t.InsertSql().c_str(), -1, SQLITE_PREPARE_PERSISTENT, &st, nullptr);
    if (rc != SQLITE_OK) return Error(rc, "prepare");
    insert_.push_back(st);
  }
  for (const std::string& v : opts_.views) TM_RETURN_IF_ERROR(Exec(v));
  return absl::OkStatus();
}

absl::Status SqliteWriter::Exec(const std::string& sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  sqlite3_free(err);
  if (rc != SQLITE_OK) return Error(rc, sql.substr(0, 40));
  return absl::OkStatus();
}

absl::Status SqliteWriter::AttachDatabase(const std::string& path, const std::string& alias) {
  sqlite3_stmt* st = nullptr;
  int rc = sqlite3_prepare_v2(db_, absl::StrCat("ATTACH ? AS ", Quoted(alias)).c_str(), -1, &st, nullptr);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(st, 1, path.data(), static_cast<int>(path.size()), SQLITE_TRANSIENT);
    rc = sqlite3_step(st);
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_OK && rc != SQLITE_DONE) return Error(rc, absl::StrCat("attach ", path));
  return absl::OkStatus();
}

void SqliteWriter::Push(RowBatch* batch) {
  if (batch->empty()) return;
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return queued_bytes_ < opts_.queue_bytes || !status_.ok() || !running_; });
  if (!status_.ok() || !running_) {
    batch->Clear();
    return;
  }
  queued_bytes_ += batch->bytes();
  queue_.push_back(RowBatch(batch->table()));
  queue_.back().cells_.swap(batch->cells_);
  queue_.back().text_.swap(batch->text_);
  cv_.notify_all();
}

void SqliteWriter::PushCommitPoint() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!status_.ok() || !running_) return;
  queue_.push_back(RowBatch(RowBatch::kCommitPoint));
  cv_.notify_all();
}

void SqliteWriter::Run() {
  while (true) {
    RowBatch b;
    bool ok;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return !queue_.empty() || stop_; });
      if (queue_.empty()) return;
      b = std::move(queue_.front());
      queue_.pop_front();
      ok = status_.ok();
    }
    absl::Status st = !ok                                    ? absl::OkStatus()
                      : b.table() == RowBatch::kCommitPoint ? Exec("COMMIT; BEGIN")
                                                            : InsertRows(b);
    std::lock_guard<std::mutex> lock(mu_);
    queued_bytes_ -= b.bytes();
    if (!st.ok() && status_.ok()) status_ = st;
    cv_.notify_all();
  }
}

absl::Status SqliteWriter::Insert(const RowBatch& batch) {
  if (!status_.ok()) return status_;
  status_ = InsertRows(batch);
  return status_;
}

absl::Status SqliteWriter::InsertRows(const RowBatch& b) {
  if (b.table() < 0 || static_cast<size_t>(b.table()) >= insert_.size())
    return absl::InternalError("row batch for an unknown table");
  sqlite3_stmt* st = insert_[static_cast<size_t>(b.table())];
  const size_t ncol = opts_.tables[static_cast<size_t>(b.table())].columns.size();
  for (size_t at = 0; at + ncol <= b.cells_.size(); at += ncol) {
    for (size_t c = 0; c < ncol; ++c) {
      const RowBatch::Cell& cell = b.cells_[at + c];
      const int col = static_cast<int>(c) + 1;
      switch (cell.kind) {
        case RowBatch::Cell::kNull: sqlite3_bind_null(st, col); break;
        case RowBatch::Cell::kInt: sqlite3_bind_int64(st, col, cell.i); break;
        case RowBatch::Cell::kReal: {
          double d;
          std::memcpy(&d, &cell.i, sizeof(d));
          sqlite3_bind_double(st, col, d);
          break;
        }
        case RowBatch::Cell::kText:
          sqlite3_bind_text(st, col, b.text_.data() + cell.off, static_cast<int>(cell.len), SQLITE_STATIC);
          break;
      }
    }
    const int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) return Error(rc, "insert");
    ++rows_;
  }
  sqlite3_clear_bindings(st);
  return absl::OkStatus();
}

absl::Status SqliteWriter::Drain() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  running_ = false;
  cv_.notify_all();
  return status_;
}

absl::Status SqliteWriter::Commit() {
  absl::Status st = Drain();
  if (st.ok()) st = Exec("COMMIT");
  for (sqlite3_stmt* s : insert_) sqlite3_finalize(s);
  insert_.clear();
  if (st.ok()) {
    const int rc = sqlite3_close(db_);
    if (rc != SQLITE_OK) st = Error(rc, "close");
    else db_ = nullptr;
  }
  if (st.ok()) {
    DeferInterrupts defer;
    if (std::rename(temp_path_.c_str(), opts_.final_path.c_str()) != 0) {
      const int e = errno;
      st = absl::ErrnoToStatus(e, absl::StrCat("cannot rename ", temp_path_, " to ", opts_.final_path));
    } else {
      UnregisterTemporary(temp_slot_);
      temp_slot_ = -1;
      done_ = true;
    }
  }
  if (!st.ok()) Abort();
  return st;
}

void SqliteWriter::Abort() {
  if (done_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.ok()) status_ = absl::CancelledError("aborted");
    stop_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  for (sqlite3_stmt* s : insert_) sqlite3_finalize(s);
  insert_.clear();
  if (db_) sqlite3_close_v2(db_);
  db_ = nullptr;
  if (!temp_path_.empty()) {
    ::unlink(temp_path_.c_str());
    if (!opts_.work_path.empty()) ::unlink((temp_path_ + "-journal").c_str());
    UnregisterTemporary(temp_slot_);
    temp_slot_ = -1;
  }
  done_ = true;
}

SqliteWriter::~SqliteWriter() { Abort(); }

}  // namespace tracemill::formats
