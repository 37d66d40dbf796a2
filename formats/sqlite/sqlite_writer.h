#pragma once
// A SQLite database written as an output: one writer connection on its own
// thread, fed by a bounded queue of row batches (RowBatch -> rows of
// OUTDIR/<name>.sqlite).
//
// Why this shape: SQLite is single-threaded per connection and inserting is
// the slow part (a prepared INSERT per row, ~1 us), so the merge threads that
// produce rows must not wait for it row by row, nor pile rows up without
// bound. They append rows to a batch (~1 MiB) and hand full batches to
// `Push`, which blocks while `queue_bytes` of batches wait: memory is fixed
// (queue + the batches being filled + SQLite's page cache), whatever the job.
//
// The file is written as `.<name>.tmp.<pid>` next to its final name, with
// `journal_mode=OFF`, `synchronous=OFF`, one transaction, a page cache of
// `cache_bytes` and temporary files in `tmp_dir`; `Commit` renames it into
// place (the rename is the commit). Any failure (disk full, EFBIG from
// `ulimit -f`, an I/O error) removes the temporary; nothing partial is left.
// A resumable file (`work_path`) is written there instead, with a rollback
// journal: what `PushCommitPoint` committed survives SIGINT, SIGTERM and
// SIGKILL (the next open rolls the rest back), for `convert --resume`.
// Every value is bound to a prepared statement: a string from an input is
// data, never SQL.
#include <sqlite3.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tracemill::formats {

// ColumnSpec / TableSpec: a table's name and its columns (SQLite type names:
// INTEGER, REAL, TEXT).
struct ColumnSpec {
  const char* name;
  const char* type;
};
struct TableSpec {
  const char* name;
  std::vector<ColumnSpec> columns;
  // CreateSql: `CREATE TABLE IF NOT EXISTS "<name>" (...)` (names quoted).
  std::string CreateSql() const;
  // InsertSql: `INSERT INTO "<name>" VALUES (?,?,...)`.
  std::string InsertSql() const;
};

// RowBatch: rows for one table, column by column in row order. Text is
// copied into the batch (the caller's strings may go away). Not thread-safe.
class RowBatch {
 public:
  RowBatch() = default;
  explicit RowBatch(int table) : table_(table) {}
  int table() const { return table_; }
  // kCommitPoint: the table of PushCommitPoint's marker batch.
  static constexpr int kCommitPoint = -2;
  void Int(int64_t v) { cells_.push_back(Cell{Cell::kInt, v, 0, 0}); }
  void Real(double v);
  void Text(std::string_view s);
  void Null() { cells_.push_back(Cell{Cell::kNull, 0, 0, 0}); }
  // Rows: cells / columns (the caller adds whole rows).
  size_t cells() const { return cells_.size(); }
  // Bytes held (cells and text), for the queue's bound.
  size_t bytes() const { return cells_.size() * sizeof(Cell) + text_.size(); }
  bool empty() const { return cells_.empty(); }
  void Clear() {
    cells_.clear();
    text_.clear();
  }

 private:
  friend class SqliteWriter;
  struct Cell {
    enum Kind : uint8_t { kNull, kInt, kReal, kText } kind;
    int64_t i;  // kInt value, or kReal bits
    uint32_t off, len;  // kText: bytes in `text_`
  };
  int table_ = -1;
  std::vector<Cell> cells_;
  std::string text_;
};

// SqliteWriter: see the file comment. `Push` is thread-safe; the other
// calls are made by one owner thread.
class SqliteWriter {
 public:
  struct Options {
    std::string final_path;   // OUTDIR/tables.sqlite
    std::string tmp_dir;      // SQLite's temporary files (--tmp-dir); empty: SQLite's default
    uint64_t cache_bytes = 8 << 20;   // page cache (PRAGMA cache_size)
    uint64_t queue_bytes = 8 << 20;   // batches waiting for the writer thread
    std::vector<TableSpec> tables;    // created at open; batches name them by index
    std::vector<std::string> views;   // `CREATE VIEW` statements run after the tables (ours, not input data)
    // work_path: if set, the file is written there, not as an interrupt
    // temporary (a stale one is replaced, its rollback journal removed
    // first), with journal_mode=DELETE, so that an interrupted run leaves
    // what its commit points committed. Failures still remove it.
    std::string work_path;
    // seed: run on the open database before the writer thread starts (in
    // the open transaction; e.g. rows copied from an earlier file).
    std::function<absl::Status(SqliteWriter&)> seed;
  };

  // Create opens the temporary database, creates the tables, prepares one
  // INSERT per table and starts the writer thread.
  // Errors: kInternal / the errno code of the open (kPermissionDenied, ...),
  // with SQLite's message and the path.
  static absl::StatusOr<std::unique_ptr<SqliteWriter>> Create(Options opts);
  ~SqliteWriter();  // Abort() unless committed

  // Push hands a batch to the writer thread (moved from; `*batch` is left
  // empty for reuse). Blocks while the queue holds `queue_bytes`. After a
  // failure, batches are dropped (the failure is in `Drain`'s status).
  void Push(RowBatch* batch);
  // PushCommitPoint: once every batch pushed before it is inserted, the
  // writer thread commits and begins a new transaction (a resumable file's
  // rows up to here then survive an interrupt).
  void PushCommitPoint();

  // Drain waits until every pushed batch is inserted and stops the writer
  // thread; then `db()` may be used by the caller's thread (more tables,
  // ATTACH, summary rows). Returns the first insert error.
  absl::Status Drain();
  sqlite3* db() { return db_; }
  // Insert: one batch on the caller's thread (after Drain).
  absl::Status Insert(const RowBatch& batch);
  // Exec runs SQL text that holds no input data (schema, copies between
  // attached databases); input strings go through RowBatch or a bind.
  absl::Status Exec(const std::string& sql);
  // AttachDatabase: `ATTACH ? AS <alias>` with the path bound as data.
  absl::Status AttachDatabase(const std::string& path, const std::string& alias);

  // Commit ends the transaction, closes the database and renames the
  // temporary into place. Errors: of the commit, close or rename (the
  // temporary is then removed).
  absl::Status Commit();
  // Abort closes and removes the temporary (idempotent).
  void Abort();

  const std::string& temp_path() const { return temp_path_; }
  uint64_t rows() const { return rows_; }

 private:
  SqliteWriter() = default;
  absl::Status Open();
  void Run();
  absl::Status InsertRows(const RowBatch& batch);
  absl::Status Error(int rc, std::string_view what);

  Options opts_;
  std::string temp_path_;
  int temp_slot_ = -1;
  sqlite3* db_ = nullptr;
  std::vector<sqlite3_stmt*> insert_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<RowBatch> queue_;
  uint64_t queued_bytes_ = 0;
  bool stop_ = false;
  bool running_ = false;
  absl::Status status_;  // first failure (guarded by mu_ while the thread runs)
  uint64_t rows_ = 0;
  bool done_ = false;    // committed or aborted
};

}  // namespace tracemill::formats
