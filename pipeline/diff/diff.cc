// tracemill diff: two runs' op_summary rows compared as HTA's compare_traces (diff.h).
#include "pipeline/diff/diff.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pipeline/convert/convert.h"
#include "pipeline/diff/diff_page.h"
#include "pipeline/options.h"

namespace tracemill::pipeline {
namespace {

bool IsDir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool IsFile(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// A usage error (exit 2) or an internal one (exit 1), with its line.
DiffResult Fail(int code, std::string error) {
  DiffResult r;
  r.exit_code = code;
  r.error = std::move(error);
  return r;
}

// SideTables: the tables.sqlite of one side: an earlier `convert --tables`
// output folder's own, else `path` converted into OUTDIR/<label>/.
absl::StatusOr<std::string> SideTables(const std::string& path, const std::string& label, const DiffOptions& opts,
                                       int* exit_code) {
  if (IsDir(path) && IsFile(path + "/tables.sqlite")) return path + "/tables.sqlite";
  ConvertOptions c;
  c.inputs = {path};
  c.out_dir = opts.out_dir + "/" + label;
  c.tables = TablesMode::kSummary;
  c.write_report = false;
  c.quiet = true;
  c.threads = opts.threads;
  const RunSummary s = RunConvert(c);
  if (s.exit_code != kExitOk && s.exit_code != kExitSomeRejected) {
    *exit_code = s.exit_code == kExitUsage ? kExitUsage : kExitInternal;
    return absl::InvalidArgumentError(absl::StrCat("converting ", label, " (", path, ") failed (convert's exit status ",
                                                   s.exit_code, ", its lines above)"));
  }
  return c.out_dir + "/tables.sqlite";
}

// Ints: the first column of `sql`'s rows.
std::vector<int64_t> Ints(sqlite3* db, const std::string& sql) {
  std::vector<int64_t> out;
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK)
    while (sqlite3_step(st) == SQLITE_ROW) out.push_back(sqlite3_column_int64(st, 0));
  sqlite3_finalize(st);
  return out;
}

// Chosen: `wanted` if every one is in `have`, else HTA's default (the
// first of `have`); an error line naming what exists otherwise.
absl::StatusOr<std::vector<int64_t>> Chosen(const std::vector<int64_t>& wanted, const std::vector<int64_t>& have,
                                            const std::string& what, const std::string& label) {
  if (have.empty())
    return absl::InvalidArgumentError(absl::StrCat(label, " has no ", what,
                                                   what == "iteration" ? " (no ProfilerStep#N in its traces)" : ""));
  if (wanted.empty()) return std::vector<int64_t>{have.front()};
  for (int64_t w : wanted)
    if (!std::binary_search(have.begin(), have.end(), w))
      return absl::InvalidArgumentError(absl::StrCat(what, " ", w, " is not in ", label, " (its ", what, "s: ",
                                                     absl::StrJoin(have, ", "), ")"));
  return wanted;
}

int Exec(sqlite3* db, const std::string& sql, std::string* error) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) *error = err ? err : "SQLite error";
  sqlite3_free(err);
  return rc;
}

// Summary: the CTE of one side's names: counts and HTA's µs summed over
// the chosen ranks, iterations and device.
std::string Summary(const std::string& alias, const std::vector<int64_t>& ranks, const std::vector<int64_t>& its,
                    const DiffOptions& opts) {
  return absl::StrCat(alias, "s AS (SELECT ", opts.short_names ? "hta_short_name(name)" : "name",
                      " AS name, sum(counts) AS n, sum(total_duration) AS d FROM ", alias,
                      ".op_summary WHERE rank IN (", absl::StrJoin(ranks, ","), ") AND iteration IN (",
                      absl::StrJoin(its, ","), ")",
                      opts.device == "all" ? "" : absl::StrCat(" AND device = '", opts.device, "'"), " GROUP BY 1)");
}

// The SQL function hta_short_name(name) on the diff's connection.
void ShortNameFunction(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const unsigned char* t = sqlite3_value_text(argv[0]);
  if (!t) return sqlite3_result_null(ctx);
  const std::string s =
      HtaShortName(std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_value_bytes(argv[0]))));
  sqlite3_result_text(ctx, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
}

}  // namespace

std::string HtaShortName(const std::string& name) {
  auto starts = [&](const char* p) { return name.rfind(p, 0) == 0; };
  if (starts("Memcpy") || starts("hipMemcpy") || starts("Memset") || starts("hipMemset") || starts("dma")) return name;
  if (name.find('<') == std::string::npos && name.find('(') == std::string::npos) return name;
  std::string s;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '-' && i + 1 < name.size() && name[i + 1] == '>') {
      ++i;
      continue;
    }
    s.push_back(name[i]);
  }
  std::string stack;
  for (char c : s) {
    if (c == '>' || c == ')') {
      const char open = c == '>' ? '<' : '(';
      while (!stack.empty() && stack.back() != open) stack.pop_back();
      if (!stack.empty()) stack.pop_back();
    } else {
      stack.push_back(c);
    }
  }
  const size_t space = stack.rfind(' ');
  return space == std::string::npos ? stack : stack.substr(space + 1);
}

namespace {

// Chosen4: control ranks, test ranks, control iterations, test iterations.
using Chosen4 = std::array<std::vector<int64_t>, 4>;

absl::Status SqlError(const std::string& error) { return absl::InternalError(absl::StrCat("diff.sqlite: ", error)); }

// AttachSides: the two tables files attached as `c` and `t`, each holding an
// op_summary. Errors: kInvalidArgument (a usage error) naming the side.
absl::Status AttachSides(sqlite3* db, const DiffOptions& opts, const std::string& control, const std::string& test) {
  for (const auto& [path, alias] : {std::pair{control, "c"}, std::pair{test, "t"}}) {
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, absl::StrCat("ATTACH ? AS ", alias).c_str(), -1, &st, nullptr);
    sqlite3_bind_text(st, 1, path.c_str(), -1, SQLITE_TRANSIENT);
    const int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return absl::InvalidArgumentError(absl::StrCat("cannot read ", path));
  }
  for (const char* alias : {"c", "t"})
    if (Ints(db, absl::StrCat("SELECT count(*) FROM ", alias, ".sqlite_master WHERE name = 'op_summary'")) !=
        std::vector<int64_t>{1})
      return absl::InvalidArgumentError(absl::StrCat(alias[0] == 'c' ? opts.control : opts.test,
                                                     ": its tables.sqlite has no op_summary (made by an older "
                                                     "tracemill: convert again, or give the traces)"));
  return absl::OkStatus();
}

// ChooseRanksAndIterations: HTA's ranks (every trace's) and iterations
// (every ProfilerStep#N) of each side, as asked or HTA's defaults.
absl::StatusOr<Chosen4> ChooseRanksAndIterations(sqlite3* db, const DiffOptions& opts) {
  Chosen4 chosen;
  const std::pair<const char*, const std::vector<int64_t>*> wants[4] = {
      {"c", &opts.control_ranks}, {"t", &opts.test_ranks}, {"c", &opts.control_iterations}, {"t", &opts.test_iterations}};
  for (int k = 0; k < 4; ++k) {
    const std::string alias = wants[k].first, label = alias == "c" ? "CONTROL" : "TEST";
    const std::vector<int64_t> have =
        k < 2 ? Ints(db, absl::StrCat("SELECT DISTINCT rank FROM ", alias, ".inputs WHERE rank IS NOT NULL AND error IS "
                                      "NULL ORDER BY rank"))
              : Ints(db, absl::StrCat("SELECT DISTINCT step FROM ", alias, ".steps ORDER BY step"));
    auto c = Chosen(*wants[k].second, have, k < 2 ? "rank" : "iteration", label);
    if (!c.ok()) return c.status();
    chosen[static_cast<size_t>(k)] = *c;
  }
  return chosen;
}

// WriteCompareTraces: HTA's compare_traces table (diff.h).
absl::Status WriteCompareTraces(sqlite3* db, const DiffOptions& opts, const Chosen4& chosen) {
  std::string error;
  const std::string sql = absl::StrCat(
      "CREATE TABLE compare_traces (", opts.short_names ? "short_name" : "name", " TEXT, Control_counts INTEGER, Control_total_duration INTEGER, "
      "Test_counts INTEGER, Test_total_duration INTEGER, diff_counts INTEGER, diff_duration INTEGER, "
      "counts_change_categories TEXT); WITH ",
      Summary("c", chosen[0], chosen[2], opts), ", ", Summary("t", chosen[1], chosen[3], opts),
      " INSERT INTO compare_traces SELECT coalesce(cs.name, ts.name), ifnull(cs.n, 0), ifnull(cs.d, 0), "
      "ifnull(ts.n, 0), ifnull(ts.d, 0), ifnull(ts.n, 0) - ifnull(cs.n, 0), ifnull(ts.d, 0) - ifnull(cs.d, 0), "
      "CASE WHEN ifnull(ts.n, 0) > ifnull(cs.n, 0) THEN '+' WHEN ifnull(ts.n, 0) < ifnull(cs.n, 0) THEN '-' "
      "ELSE '=' END FROM cs FULL OUTER JOIN ts ON cs.name = ts.name ORDER BY cs.name IS NULL, 1");
  if (Exec(db, sql, &error) != SQLITE_OK) return SqlError(error);
  return absl::OkStatus();
}

// WriteSideBySide: beyond HTA, both runs side by side (diff.h).
absl::Status WriteSideBySide(sqlite3* db, const DiffOptions& opts) {
  std::string error;
  // Step times per side and rank (every step of every rank), the job's GPU
  // time per kernel-type set, and per rank its idle and kernel time (HTA's
  // temporal breakdown).
  const std::string side_by_side =
      "CREATE TABLE step_times (side TEXT, rank INTEGER, steps INTEGER, total_ns INTEGER, mean_ns INTEGER, "
      "min_ns INTEGER, max_ns INTEGER); "
      "INSERT INTO step_times SELECT 'control', rank, count(*), sum(duration_ns), sum(duration_ns) / count(*), "
      "min(duration_ns), max(duration_ns) FROM c.steps GROUP BY rank ORDER BY rank; "
      "INSERT INTO step_times SELECT 'test', rank, count(*), sum(duration_ns), sum(duration_ns) / count(*), "
      "min(duration_ns), max(duration_ns) FROM t.steps GROUP BY rank ORDER BY rank; "
      "CREATE TABLE kernel_type_time (kernel_type TEXT, control_ns INTEGER, control_percentage REAL, "
      "test_ns INTEGER, test_percentage REAL, diff_ns INTEGER); "
      "INSERT INTO kernel_type_time SELECT coalesce(a.kernel_type, b.kernel_type), ifnull(a.sum_ns, 0), "
      "ifnull(a.percentage, 0), ifnull(b.sum_ns, 0), ifnull(b.percentage, 0), ifnull(b.sum_ns, 0) - ifnull(a.sum_ns, 0) "
      "FROM (SELECT * FROM c.kernel_type_breakdown WHERE \"input\" IS NULL) a FULL OUTER JOIN "
      "(SELECT * FROM t.kernel_type_breakdown WHERE \"input\" IS NULL) b ON a.kernel_type = b.kernel_type "
      "WHERE ifnull(a.sum_ns, 0) + ifnull(b.sum_ns, 0) > 0 ORDER BY 1; "
      "CREATE TABLE rank_time (rank INTEGER, control_kernel_ns INTEGER, control_idle_ns INTEGER, "
      "control_idle_pctg REAL, test_kernel_ns INTEGER, test_idle_ns INTEGER, test_idle_pctg REAL); "
      "INSERT INTO rank_time SELECT coalesce(a.rank, b.rank), a.kernel_time_ns, a.idle_time_ns, a.idle_time_pctg, "
      "b.kernel_time_ns, b.idle_time_ns, b.idle_time_pctg FROM c.temporal_breakdown a FULL OUTER JOIN "
      "t.temporal_breakdown b ON a.rank = b.rank ORDER BY 1; ";
  const std::string name_col = opts.short_names ? "short_name" : "name";
  const std::string views = absl::StrCat(
      "CREATE VIEW new_names AS SELECT ", name_col, " AS name, Test_counts, Test_total_duration FROM compare_traces "
      "WHERE Control_counts = 0; CREATE VIEW vanished_names AS SELECT ", name_col,
      " AS name, Control_counts, Control_total_duration FROM compare_traces WHERE Test_counts = 0;");
  if (Exec(db, side_by_side + views, &error) != SQLITE_OK) return SqlError(error);
  return absl::OkStatus();
}

// WriteMeta: the diff_meta table (diff.h).
absl::Status WriteMeta(sqlite3* db, const DiffOptions& opts, const std::string& control, const std::string& test,
                       const Chosen4& chosen) {
  std::string error;
  // What was compared, and the dtype HTA's `dur` column has on each side
  // (the widest of the chosen ranks': what pandas' concat of them gives),
  // for the Python package to give its frame HTA's dtypes.
  static constexpr const char* kDtypes[] = {"int8", "int16", "int32", "int64", "float64"};
  auto widest = [&](const char* alias, const std::vector<int64_t>& ranks) {
    int w = 0;
    const std::string sql = absl::StrCat("SELECT DISTINCT hta_dur_dtype FROM ", alias, ".op_summary WHERE rank IN (",
                                         absl::StrJoin(ranks, ","), ")");
    sqlite3_stmt* q = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &q, nullptr) == SQLITE_OK)
      while (sqlite3_step(q) == SQLITE_ROW) {
        const unsigned char* t = sqlite3_column_text(q, 0);
        for (int k = 0; k < 5; ++k)
          if (t && std::string(reinterpret_cast<const char*>(t)) == kDtypes[k]) w = std::max(w, k);
      }
    sqlite3_finalize(q);
    return std::string(kDtypes[w]);
  };
  const std::vector<std::pair<std::string, std::string>> meta = {
      {"control", opts.control}, {"test", opts.test}, {"control_tables", control}, {"test_tables", test},
      {"control_ranks", absl::StrJoin(chosen[0], ",")}, {"test_ranks", absl::StrJoin(chosen[1], ",")},
      {"control_iterations", absl::StrJoin(chosen[2], ",")}, {"test_iterations", absl::StrJoin(chosen[3], ",")},
      {"device", opts.device}, {"short_names", opts.short_names ? "1" : "0"}, {"control_hta_dur_dtype", widest("c", chosen[0])},
      {"test_hta_dur_dtype", widest("t", chosen[1])}};
  if (Exec(db, "CREATE TABLE diff_meta (key TEXT, value TEXT)", &error) != SQLITE_OK)
    return SqlError(error);
  for (const auto& [k, v] : meta) {
    sqlite3_stmt* m = nullptr;
    sqlite3_prepare_v2(db, "INSERT INTO diff_meta VALUES (?, ?)", -1, &m, nullptr);
    sqlite3_bind_text(m, 1, k.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(m, 2, v.c_str(), -1, SQLITE_TRANSIENT);
    const int rc = sqlite3_step(m);
    sqlite3_finalize(m);
    if (rc != SQLITE_DONE) return SqlError("cannot write diff_meta");
  }
  return absl::OkStatus();
}

// ReadRows: compare_traces as DiffRows, in its order.
std::vector<DiffRow> ReadRows(sqlite3* db) {
  std::vector<DiffRow> rows;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT * FROM compare_traces ORDER BY rowid", -1, &st, nullptr);
  while (sqlite3_step(st) == SQLITE_ROW) {
    DiffRow& row = rows.emplace_back();
    const unsigned char* n = sqlite3_column_text(st, 0);
    row.name.assign(n ? reinterpret_cast<const char*>(n) : "", static_cast<size_t>(sqlite3_column_bytes(st, 0)));
    row.control_counts = sqlite3_column_int64(st, 1);
    row.control_us = sqlite3_column_int64(st, 2);
    row.test_counts = sqlite3_column_int64(st, 3);
    row.test_us = sqlite3_column_int64(st, 4);
  }
  sqlite3_finalize(st);
  return rows;
}

}  // namespace

DiffResult RunDiff(const DiffOptions& opts) {
  if (opts.device != "all" && opts.device != "cpu" && opts.device != "gpu")
    return Fail(kExitUsage, absl::StrCat("--device ", opts.device, ": expected all, cpu or gpu"));
  ::mkdir(opts.out_dir.c_str(), 0777);
  if (!IsDir(opts.out_dir)) return Fail(kExitUsage, absl::StrCat("-o ", opts.out_dir, ": cannot create the folder"));
  DiffResult r;
  int code = kExitInternal;
  auto control = SideTables(opts.control, "control", opts, &code);
  if (!control.ok()) return Fail(code, std::string(control.status().message()));
  auto test = SideTables(opts.test, "test", opts, &code);
  if (!test.ok()) return Fail(code, std::string(test.status().message()));
  r.control_tables = *control;
  r.test_tables = *test;

  const std::string final_path = opts.out_dir + "/diff.sqlite";
  const std::string temp_path = absl::StrCat(opts.out_dir, "/.diff.sqlite.tmp.", ::getpid());
  ::unlink(temp_path.c_str());
  sqlite3* db = nullptr;
  if (sqlite3_open(temp_path.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return Fail(kExitInternal, absl::StrCat("cannot write ", temp_path));
  }
  sqlite3_create_function(db, "hta_short_name", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr, ShortNameFunction,
                          nullptr, nullptr);
  auto fail = [&](int c, std::string e) {
    sqlite3_close(db);
    ::unlink(temp_path.c_str());
    return Fail(c, std::move(e));
  };
  if (absl::Status s = AttachSides(db, opts, *control, *test); !s.ok()) return fail(kExitUsage, std::string(s.message()));
  auto chosen = ChooseRanksAndIterations(db, opts);
  if (!chosen.ok()) return fail(kExitUsage, std::string(chosen.status().message()));
  absl::Status written = WriteCompareTraces(db, opts, *chosen);
  if (written.ok()) written = WriteSideBySide(db, opts);
  if (written.ok()) written = WriteMeta(db, opts, *control, *test, *chosen);
  if (!written.ok()) return fail(kExitInternal, std::string(written.message()));
  r.rows = ReadRows(db);
  std::string error;
  Exec(db, "DETACH c; DETACH t", &error);
  if (sqlite3_close(db) != SQLITE_OK || ::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    ::unlink(temp_path.c_str());
    return Fail(kExitInternal, absl::StrCat("cannot write ", final_path));
  }
  if (r.rows.empty())
    return Fail(kExitUsage, "neither side has an operator or kernel in the iterations and ranks chosen");
  if (absl::Status page = WriteDiffPage(opts); !page.ok()) return Fail(kExitInternal, std::string(page.message()));
  for (const DiffRow& row : r.rows) r.common += row.control_counts > 0 && row.test_counts > 0;
  return r;
}

}  // namespace tracemill::pipeline
