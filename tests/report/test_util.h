#pragma once
// Helpers shared by the report tests: files, scratch directories and a quiet
// convert run.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "pipeline/convert/convert.h"

namespace tracemill::testing {

inline std::string SourcePath(const std::string& rel) { return std::string(TRACEMILL_SOURCE_DIR) + "/" + rel; }

inline std::string ReadText(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline void WriteText(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

// A fresh directory under the build tree named after the running test.
inline std::string ScratchDir(const std::string& suffix = "") {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string dir = std::string(REPORT_TEST_OUT_DIR) + "/scratch/" + info->test_suite_name() + "." +
                    info->name() + suffix;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline pipeline::RunSummary Convert(std::vector<std::string> inputs, const std::string& out_dir,
                                    int gpus_per_node = 0) {
  pipeline::ConvertOptions o;
  o.inputs = std::move(inputs);
  o.out_dir = out_dir;
  o.quiet = true;
  o.threads = 2;
  o.gpus_per_node = gpus_per_node;
  o.command_line = "tracemill convert (test)";
  return pipeline::RunConvert(o);
}

// All matches of group 1 of `re` in `text`.
inline std::vector<std::string> AllMatches(const std::string& text, const std::string& re) {
  std::vector<std::string> out;
  std::regex r(re);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), r); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1].str());
  return out;
}

// The `data-value` of summary card `id` ("" if absent).
inline std::string Card(const std::string& html, const std::string& id) {
  auto m = AllMatches(html, "id=\"card-" + id + "\" data-value=\"([^\"]*)\"");
  return m.empty() ? "" : m[0];
}

// The HTML of the table row that starts with `<tr data-step="N">`.
inline std::string StragglerRow(const std::string& html, int64_t step) {
  std::string key = "<tr data-step=\"" + std::to_string(step) + "\">";
  size_t b = html.find(key);
  if (b == std::string::npos) return "";
  return html.substr(b, html.find("</tr>", b) - b);
}

// The text of the header's exit-status badge.
inline std::string Badge(const std::string& html) {
  auto m = AllMatches(html, "id=\"exit-status\">([^<]*)</span>");
  return m.empty() ? "" : m[0];
}

// The first `<section ... id="ID">...</section>` of `html`, whole ("" if absent).
inline std::string Section(const std::string& html, const std::string& id) {
  size_t b = html.find("id=\"" + id + "\">");
  if (b == std::string::npos) return "";
  b = html.rfind("<section", b);
  const size_t e = html.find("</section>", b);
  return html.substr(b, e + 10 - b);
}

// The timeline's axis labels, left to right.
inline std::vector<std::string> AxisLabels(const std::string& html) {
  return AllMatches(html, "<text class=\"ax\" x=\"[0-9.]+\" y=\"20\" text-anchor=\"[a-z]+\">([^<]*)</text>");
}

// The visible value of summary card `id` ("" if absent).
inline std::string CardText(const std::string& html, const std::string& id) {
  auto m = AllMatches(html, "id=\"card-" + id +
                                "\" data-value=\"[^\"]*\"><div class=\"k\">[^<]*</div><div class=\"v\">([^<]*)</div>");
  return m.empty() ? "" : m[0];
}

inline size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace tracemill::testing
