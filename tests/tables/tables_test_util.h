#pragma once
// Reading what `tracemill convert --tables` wrote and what the reference
// libraries wrote (tests/data/tables/, EXPECTED.md): SQLite through its C
// API, CSV through a small RFC 4180 reader. Shares nothing with the product.
#include <sqlite3.h>

#include <map>
#include <string>
#include <vector>

namespace tracemill::testing {

// A table of text cells: the first row holds the column names.
using Rows = std::vector<std::vector<std::string>>;

// Query runs `sql` on the database at `path` (read-only); NULL cells are
// "NULL", numbers as SQLite prints them. A failure is a test failure and
// returns no rows.
Rows Query(const std::string& path, const std::string& sql);

// ReadCsv reads a CSV file written by pandas' to_csv (quotes doubled inside
// quoted cells, no newline inside a cell).
Rows ReadCsv(const std::string& path);

// Column: index of `name` in `rows[0]`, -1 (a test failure) if absent.
int Column(const Rows& rows, const std::string& name);

// ExpectedPath: tests/data/tables/<name>.
std::string ExpectedPath(const std::string& name);

}  // namespace tracemill::testing
