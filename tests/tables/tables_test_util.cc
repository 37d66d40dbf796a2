#include "tests/tables/tables_test_util.h"

#include <fstream>

#include "gtest/gtest.h"
#include "tests/testing/convert_harness.h"

namespace tracemill::testing {

Rows Query(const std::string& path, const std::string& sql) {
  Rows rows;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << "cannot open " << path << ": " << sqlite3_errmsg(db);
    sqlite3_close(db);
    return rows;
  }
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << path << ": " << sql << ": " << sqlite3_errmsg(db);
    sqlite3_close(db);
    return rows;
  }
  const int n = sqlite3_column_count(st);
  rows.emplace_back();
  for (int c = 0; c < n; ++c) rows[0].push_back(sqlite3_column_name(st, c));
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    std::vector<std::string> row;
    for (int c = 0; c < n; ++c) {
      if (sqlite3_column_type(st, c) == SQLITE_NULL) {
        row.push_back("NULL");
        continue;
      }
      const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st, c));
      row.emplace_back(p, static_cast<size_t>(sqlite3_column_bytes(st, c)));  // NUL bytes kept
    }
    rows.push_back(std::move(row));
  }
  if (rc != SQLITE_DONE) ADD_FAILURE() << path << ": " << sql << ": " << sqlite3_errmsg(db);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return rows;
}

Rows ReadCsv(const std::string& path) {
  Rows rows;
  std::ifstream f(path);
  if (!f) {
    ADD_FAILURE() << "cannot read " << path;
    return rows;
  }
  std::string line;
  while (std::getline(f, line)) {
    std::vector<std::string> row;
    std::string cell;
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (quoted) {
        if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') cell.push_back('"'), ++i;
        else if (c == '"') quoted = false;
        else cell.push_back(c);
      } else if (c == '"') {
        quoted = true;
      } else if (c == ',') {
        row.push_back(std::move(cell));
        cell.clear();
      } else {
        cell.push_back(c);
      }
    }
    row.push_back(std::move(cell));
    rows.push_back(std::move(row));
  }
  return rows;
}

int Column(const Rows& rows, const std::string& name) {
  if (!rows.empty())
    for (size_t i = 0; i < rows[0].size(); ++i)
      if (rows[0][i] == name) return static_cast<int>(i);
  ADD_FAILURE() << "no column " << name;
  return -1;
}

std::string ExpectedPath(const std::string& name) { return DataPath("tables/" + name); }

}  // namespace tracemill::testing
