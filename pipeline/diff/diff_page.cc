// diff.html from diff.sqlite (diff_page.h).
#include "pipeline/diff/diff_page.h"

#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "report/html_text.h"

namespace tracemill::pipeline {
namespace {

using report::AppendHtmlEscaped;
using report::FormatDuration;
using report::GroupedCount;

constexpr int kTopRows = 20;

// Rows: `sql`'s rows as text cells ("" for NULL).
std::vector<std::vector<std::string>> Rows(sqlite3* db, const std::string& sql) {
  std::vector<std::vector<std::string>> out;
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) return out;
  while (sqlite3_step(st) == SQLITE_ROW) {
    auto& row = out.emplace_back();
    for (int i = 0; i < sqlite3_column_count(st); ++i) {
      const unsigned char* t = sqlite3_column_text(st, i);
      row.emplace_back(t ? reinterpret_cast<const char*>(t) : "", t ? static_cast<size_t>(sqlite3_column_bytes(st, i)) : 0);
    }
  }
  sqlite3_finalize(st);
  return out;
}

int64_t Int(const std::string& s) { return s.empty() ? 0 : std::stoll(s); }
std::string Us(const std::string& us) { return FormatDuration(Int(us) * 1000); }
std::string Ns(const std::string& ns) { return ns.empty() ? "" : FormatDuration(Int(ns)); }

void Cell(std::string_view text, bool number, std::string* o) {
  o->append(number ? "<td class=\"n\">" : "<td>");
  AppendHtmlEscaped(text, o);
  o->append("</td>");
}

void Head(const std::vector<std::string>& names, std::string* o) {
  o->append("<table><thead><tr>");
  for (const auto& n : names) absl::StrAppend(o, "<th>", n, "</th>");
  o->append("</tr></thead><tbody>\n");
}

// Changes: the `kTopRows` names whose duration changed most in one direction.
void Changes(sqlite3* db, const std::string& title, const std::string& where_order, std::string* o) {
  const auto rows = Rows(db, absl::StrCat("SELECT * FROM compare_traces WHERE ", where_order, " LIMIT ", kTopRows));
  absl::StrAppend(o, "<h2>", title, "</h2>\n");
  if (rows.empty()) {
    o->append("<p class=\"note\">None.</p>\n");
    return;
  }
  Head({"name", "control", "test", "change", "calls (control &rarr; test)"}, o);
  for (const auto& r : rows) {
    o->append("<tr>");
    Cell(r[0], false, o);
    Cell(Us(r[2]), true, o);
    Cell(Us(r[4]), true, o);
    Cell(absl::StrCat(Int(r[6]) > 0 ? "+" : "", Us(r[6])), true, o);
    Cell(absl::StrCat(GroupedCount(static_cast<uint64_t>(Int(r[1]))), " → ",
                      GroupedCount(static_cast<uint64_t>(Int(r[3])))),
         true, o);
    o->append("</tr>\n");
  }
  o->append("</tbody></table>\n");
}

void Table(sqlite3* db, const std::string& title, const std::string& sql, const std::vector<std::string>& head,
           const std::vector<int>& ns_columns, std::string* o) {
  const auto rows = Rows(db, sql);
  absl::StrAppend(o, "<h2>", title, "</h2>\n");
  if (rows.empty()) {
    o->append("<p class=\"note\">None.</p>\n");
    return;
  }
  Head(head, o);
  for (const auto& r : rows) {
    o->append("<tr>");
    for (size_t c = 0; c < r.size(); ++c) {
      bool ns = false;
      for (int k : ns_columns) ns |= static_cast<size_t>(k) == c;
      Cell(ns ? Ns(r[c]) : r[c], c > 0, o);
    }
    o->append("</tr>\n");
  }
  o->append("</tbody></table>\n");
}

}  // namespace

absl::Status WriteDiffPage(const DiffOptions& opts) {
  sqlite3* db = nullptr;
  const std::string path = opts.out_dir + "/diff.sqlite";
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return absl::InternalError(absl::StrCat("cannot read ", path));
  }
  std::string o =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tracemill diff</title>\n<style>"
      "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}h1{font-size:20px}h2{font-size:16px;"
      "margin-top:28px}table{border-collapse:collapse;margin:8px 0}th,td{padding:3px 10px;border-bottom:1px solid "
      "#ddd;text-align:left;vertical-align:top}td.n{text-align:right;font-variant-numeric:tabular-nums;"
      "white-space:nowrap}td:first-child{max-width:720px;word-break:break-all}.note{color:#555}</style></head><body>\n"
      "<h1>tracemill diff</h1>\n<p class=\"note\">";
  const auto meta = Rows(db, "SELECT key, value FROM diff_meta");
  auto value = [&](const std::string& key) {
    for (const auto& r : meta)
      if (r[0] == key) return r[1];
    return std::string();
  };
  o.append("CONTROL <b>");
  AppendHtmlEscaped(value("control"), &o);
  absl::StrAppend(&o, "</b> (ranks ", value("control_ranks"), ", iterations ", value("control_iterations"),
                  ") against TEST <b>");
  AppendHtmlEscaped(value("test"), &o);
  absl::StrAppend(&o, "</b> (ranks ", value("test_ranks"), ", iterations ", value("test_iterations"), "), device ",
                  value("device"),
                  ": counts and total durations per name as HTA's compare_traces gives them "
                  "(diff.sqlite, table compare_traces).</p>\n");
  Changes(db, "Slower in TEST", "diff_duration > 0 ORDER BY diff_duration DESC, rowid", &o);
  Changes(db, "Faster in TEST", "diff_duration < 0 ORDER BY diff_duration, rowid", &o);
  Table(db, "Only in TEST", "SELECT name, Test_counts, Test_total_duration * 1000 FROM new_names ORDER BY 3 DESC",
        {"name", "calls", "total"}, {2}, &o);
  Table(db, "Only in CONTROL",
        "SELECT name, Control_counts, Control_total_duration * 1000 FROM vanished_names ORDER BY 3 DESC",
        {"name", "calls", "total"}, {2}, &o);
  Table(db, "Step times", "SELECT side, rank, steps, mean_ns, min_ns, max_ns, total_ns FROM step_times",
        {"run", "rank", "steps", "mean", "min", "max", "total"}, {3, 4, 5, 6}, &o);
  Table(db, "GPU time by kernel type (HTA's kernel breakdown)",
        "SELECT kernel_type, control_ns, control_percentage, test_ns, test_percentage, diff_ns FROM kernel_type_time",
        {"kernel types running", "control", "%", "test", "%", "change"}, {1, 3, 5}, &o);
  Table(db, "GPU kernel and idle time per rank (HTA's temporal breakdown)",
        "SELECT rank, control_kernel_ns, control_idle_ns, control_idle_pctg, test_kernel_ns, test_idle_ns, "
        "test_idle_pctg FROM rank_time",
        {"rank", "control kernels", "idle", "idle %", "test kernels", "idle", "idle %"}, {1, 2, 4, 5}, &o);
  o.append("</body></html>\n");
  sqlite3_close(db);
  const std::string final_path = opts.out_dir + "/diff.html";
  const std::string temp = absl::StrCat(opts.out_dir, "/.diff.html.tmp.", ::getpid());
  std::FILE* f = std::fopen(temp.c_str(), "wb");
  const bool ok = f && std::fwrite(o.data(), 1, o.size(), f) == o.size();
  if (f && std::fclose(f) != 0) return absl::InternalError(absl::StrCat("cannot write ", final_path));
  if (!ok || std::rename(temp.c_str(), final_path.c_str()) != 0) {
    ::unlink(temp.c_str());
    return absl::InternalError(absl::StrCat("cannot write ", final_path));
  }
  return absl::OkStatus();
}

}  // namespace tracemill::pipeline
