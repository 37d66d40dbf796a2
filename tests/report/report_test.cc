// The HTML run report end to end: convert a job, read manifest.json with
// simdjson's DOM (independently of report/run_model.cc), and check that the
// page shows the manifest's numbers, the right dead rows and stragglers, that
// input strings are inert, and that the page stays small for 4,096 ranks.
#include <simdjson.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "report/html_report.h"
#include "report/run_model.h"
#include "tests/report/test_util.h"

namespace tracemill {
namespace {

using testing::AllMatches;
using testing::Badge;
using testing::Card;
using testing::Section;
using testing::Count;
using testing::ReadText;
using testing::StragglerRow;

constexpr const char kDash[] = "\xE2\x80\x93";  // en dash in rank ranges

// The manifest's totals must be the cards' data-values.
void ExpectCardsEqualManifest(const std::string& html, simdjson::dom::element manifest) {
  simdjson::dom::element t = manifest["totals"];
  for (const char* key : {"inputs", "input_bytes", "events_read", "events_written", "events_lost",
                          "events_left_out", "outputs", "output_bytes"}) {
    std::string id = key;
    std::replace(id.begin(), id.end(), '_', '-');
    EXPECT_EQ(Card(html, id), std::to_string(uint64_t(t[key].get_uint64()))) << key;
  }
  simdjson::dom::array span = manifest["time_span_us"].get_array();
  int64_t first_us = span.at(0).get_int64(), last_us = span.at(1).get_int64();
  EXPECT_EQ(Card(html, "time-span"), std::to_string((last_us - first_us) * 1000));
  EXPECT_EQ(Card(html, "wall-time"), absl::StrFormat("%.3f", double(manifest["wall_seconds"].get_double())));
  EXPECT_EQ(Card(html, "version"), std::string(std::string_view(manifest["tracemill_version"].get_string())));
}

TEST(ReportSampleJob, NumbersStepsAndStragglersEqualTheManifest) {
  const std::string out = testing::ScratchDir();
  auto s = testing::Convert({testing::SourcePath("cluster-examples/sample-job")}, out);
  ASSERT_EQ(s.exit_code, 0);
  simdjson::dom::parser parser;
  simdjson::dom::element manifest = parser.load(out + "/manifest.json");
  const std::string html = ReadText(out + "/report.html");
  ASSERT_FALSE(html.empty());
  ExpectCardsEqualManifest(html, manifest);

  // Step spans per input in the manifest: exactly the ProfilerStep# events.
  std::vector<std::vector<int64_t>> steps[2];
  for (simdjson::dom::element in : manifest["inputs"].get_array()) {
    simdjson::dom::element rank = in["rank"];
    if (rank.is_null()) {
      EXPECT_TRUE(bool(in["skipped"].get_bool()));
      continue;
    }
    for (simdjson::dom::element st : in["steps"].get_array()) {
      std::vector<int64_t> v;
      for (simdjson::dom::element x : st.get_array()) v.push_back(x.get_int64());
      steps[int64_t(rank.get_int64())].push_back(v);
    }
  }
  using V = std::vector<std::vector<int64_t>>;
  EXPECT_EQ(steps[0], (V{{551, 1682725898079292, 1682725898079292 + 607312},
                         {552, 1682725898686653, 1682725898686653 + 622928}}));
  EXPECT_EQ(steps[1], (V{{551, 1682725898079484, 1682725898079484 + 607904},
                         {552, 1682725898687438, 1682725898687438 + 630639}}));

  EXPECT_EQ(Card(html, "ranks"), "2");
  EXPECT_EQ(Card(html, "steps"), "2");
  // Issue 21: world_size 128, 2 ranks sampled and no input failed: ranks
  // 2-127 are not given (one grey row), not dead.
  EXPECT_EQ(Badge(html), "exit 0: every input converted");
  EXPECT_EQ(Section(html, "notices"), "");
  EXPECT_EQ(Card(html, "dead"), "0");
  EXPECT_EQ(Card(html, "not-given"), "126");
  EXPECT_NE(html.find("<div class=\"card quiet\" id=\"card-not-given\""), std::string::npos);
  EXPECT_NE(html.find("<div class=\"card\" id=\"card-ranks\""), std::string::npos);
  EXPECT_EQ(Count(html, "<rect class=\"absent\""), 1u);
  EXPECT_EQ(Count(html, "<rect class=\"miss\""), 0u);
  EXPECT_EQ(Count(html, "<tr class=\"dead\""), 0u);
  EXPECT_NE(html.find(absl::StrCat("ranks 2", kDash, "127: not in the inputs: distributedInfo.world_size is 128 and no "
                                   "input failed</title>")),
            std::string::npos);
  EXPECT_NE(html.find(absl::StrCat("<p class=\"note\" id=\"not-given\">126 ranks are not in the inputs (ranks 2", kDash,
                                   "127): world_size says 128 ranks and no input failed, so they were not given (a "
                                   "partial sample), not dead.</p>")),
            std::string::npos);
  EXPECT_NE(html.find(">rank 0</text>"), std::string::npos);
  EXPECT_NE(html.find(">rank 1</text>"), std::string::npos);

  // Stragglers: medians of two are their mean; rank 1 is slower in both, by
  // 0.05 % and 0.62 %: below the threshold, so no step has a straggler.
  std::string r551 = StragglerRow(html, 551), r552 = StragglerRow(html, 552);
  EXPECT_NE(r551.find(">607.608 ms<"), std::string::npos) << r551;
  EXPECT_NE(r551.find("<td class=\"who\">rank 1</td>"), std::string::npos) << r551;
  EXPECT_NE(r551.find("data-v=\"296000\">+296 \xC2\xB5s<"), std::string::npos) << r551;
  EXPECT_NE(r551.find(">+0.05%<"), std::string::npos) << r551;
  EXPECT_NE(r552.find(">626.7835 ms<"), std::string::npos) << r552;
  EXPECT_NE(r552.find("<td class=\"who\">rank 1</td>"), std::string::npos) << r552;
  EXPECT_NE(r552.find("data-v=\"3855500\">+3.8555 ms<"), std::string::npos) << r552;
  EXPECT_NE(r552.find(">rank 0 (-3.8555 ms)<"), std::string::npos) << r552;
  EXPECT_EQ(Count(html, "<rect class=\"slow\""), 0u);
  EXPECT_NE(html.find("only when it is more than 5 % and more than 1 ms behind the step's median: 0 of 2 steps have "
                      "one."),
            std::string::npos);
  EXPECT_EQ(Count(html, "<script"), 1u);
}

// rank0-2 fine (rank 2 slow in step 10), rank3 truncated, rank-5.json not a
// trace, world_size 8: ranks 4, 6 and 7 missing.
TEST(ReportFailedAndMissing, DeadRowsStragglersAndNumbers) {
  const std::string out = testing::ScratchDir();
  auto s = testing::Convert({testing::SourcePath("tests/report/data/failed_and_missing")}, out, 2);
  EXPECT_EQ(s.exit_code, 3);
  simdjson::dom::parser parser;
  simdjson::dom::element manifest = parser.load(out + "/manifest.json");
  const std::string html = ReadText(out + "/report.html");
  ExpectCardsEqualManifest(html, manifest);
  EXPECT_EQ(Card(html, "ranks"), "5");
  EXPECT_EQ(Card(html, "nodes"), "3");
  // Some input failed: the missing ranks 4, 6 and 7 count as dead (red).
  EXPECT_EQ(Card(html, "dead"), "5");
  EXPECT_EQ(Card(html, "not-given"), "");
  EXPECT_NE(html.find("<div class=\"card bad\" id=\"card-ranks\""), std::string::npos);
  EXPECT_EQ(Card(html, "events-lost"), "1");
  EXPECT_EQ(Card(html, "events-left-out"), "0");
  EXPECT_EQ(Badge(html), "exit 3: 2 of 5 inputs with errors, 1 event lost");
  EXPECT_EQ(Section(html, "notices"),
            "<section class=\"banner\" id=\"notices\"><ul>\n"
            "<li class=\"err\">2 of 5 inputs have errors: 1 rejected (nothing converted); 1 converted in part "
            "(damaged, or most events lost); <a href=\"#log\">see the log below</a>.</li>\n"
            "<li class=\"err\">1 of 26 events lost (not in the outputs): truncated 1; the most, truncated: event "
            "object cut off by the end of the input or a hole.</li>\n"
            "</ul></section>");

  // The dead table, in rank order.
  EXPECT_EQ(AllMatches(html, "<tr class=\"dead\" data-kind=\"([a-z]+)\">"),
            (std::vector<std::string>{"damaged", "missing", "rejected", "missing"}));
  EXPECT_EQ(AllMatches(html, "<tr class=\"dead\" data-kind=\"[a-z]+\"><td>([^<]+)</td>"),
            (std::vector<std::string>{"rank 3", "rank 4", "rank 5", absl::StrCat("ranks 6", kDash, "7")}));
  // The rejected input keeps the rank of its file name.
  for (simdjson::dom::element in : manifest["inputs"].get_array()) {
    std::string_view path = in["path"].get_string();
    if (path.find("rank-5.json") == std::string_view::npos) continue;
    EXPECT_EQ(int64_t(in["rank"].get_int64()), 5);
    EXPECT_EQ(std::string_view(in["rank_source"].get_string()), "file name");
    EXPECT_TRUE(bool(in["error"]["rejected"].get_bool()));
  }
  // Timeline: damaged rank 3 red from its last event (120.5 ms after its
  // base, the job starting at 1 ms), rejected rank 5 red for the whole run,
  // missing ranks hatched.
  EXPECT_NE(html.find("rank 3: dead from +119.5 ms\ninput damaged: input ends inside an event object"),
            std::string::npos);
  EXPECT_NE(html.find("rank 5: dead for the whole run\ninput rejected: not a Trace Event Format file"),
            std::string::npos);
  EXPECT_EQ(Count(html, "<rect class=\"miss\""), 2u);
  EXPECT_EQ(Count(html, "<rect class=\"dead\""), 2u);

  // Stragglers. Step 10: 100, 102, 150, 99 ms -> median 101 ms, rank 2 +49 ms.
  std::string r10 = StragglerRow(html, 10);
  EXPECT_NE(r10.find("<td class=\"n\">4</td>"), std::string::npos) << r10;
  EXPECT_NE(r10.find(">101 ms<"), std::string::npos) << r10;
  EXPECT_NE(r10.find("<td class=\"who slow\" title=\"straggler of this step\">rank 2</td>"), std::string::npos) << r10;
  EXPECT_NE(r10.find(">+49 ms<"), std::string::npos) << r10;
  EXPECT_NE(r10.find(">+48.51%<"), std::string::npos) << r10;
  EXPECT_NE(r10.find(">rank 1 (+1 ms)<"), std::string::npos) << r10;
  EXPECT_NE(r10.find(">rank 0 (-1 ms)<"), std::string::npos) << r10;
  // Step 11 (rank 3 died before it): 100, 101, 100.5 ms -> rank 1 +500 us.
  std::string r11 = StragglerRow(html, 11);
  EXPECT_NE(r11.find("<td class=\"n\">3</td>"), std::string::npos) << r11;
  EXPECT_NE(r11.find(">100.5 ms<"), std::string::npos) << r11;
  EXPECT_NE(r11.find("<td class=\"who\">rank 1</td>"), std::string::npos) << r11;
  EXPECT_NE(r11.find(">+500 \xC2\xB5s<"), std::string::npos) << r11;
  // Only rank 2 in step 10 is beyond 5 % and 1 ms (rank 1 in step 11: 0.5 %).
  EXPECT_EQ(Count(html, "<rect class=\"slow\""), 1u);
  // The log lists both failed files with their errors.
  EXPECT_NE(html.find("2 files with warnings or errors; 3 without."), std::string::npos);
  EXPECT_NE(html.find("<li class=\"e\">error (damaged, DATA_LOSS at byte 550)"), std::string::npos);
}

// Input-derived strings (file names, error text from a run event log, a
// rejected file's name) come out as text, never as markup.
TEST(ReportEscaping, InputStringsAreInert) {
  const std::string in = testing::ScratchDir("-in");
  const std::string out = testing::ScratchDir("-out");
  testing::WriteText(in + "/\"><svg onload=alert(1)>rank-7.json",
                     R"({"traceEvents":[{"ph":"X","name":"ProfilerStep#1","cat":"user_annotation","pid":1,"tid":1,"ts":5,"dur":10},
{"ph":"X","name":"</title><script>alert(3)</script>","pid":1,"tid":1,"ts":6,"dur":1}]})");
  testing::WriteText(in + "/<script>alert(2)<script>rank-3.json", "{\"x\": 1}\n");
  testing::WriteText(in + "/log.jsonl",
                     "{\"time\": 1, \"kind\": \"round_start\", \"data\": {\"round_num\": 1}}\n"
                     "{\"time\": 2, \"kind\": \"push\", \"rank\": 0, \"data\": {\"duration_s\": 0.5, "
                     "\"error\": \"</title><script>alert(1)</script>\"}}\n");
  auto s = testing::Convert({in}, out);
  EXPECT_EQ(s.exit_code, 3);
  const std::string html = ReadText(out + "/report.html");
  ASSERT_FALSE(html.empty());
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_EQ(html.find("<svg onload"), std::string::npos);
  EXPECT_EQ(html.find("</title><script>"), std::string::npos);
  EXPECT_EQ(Count(html, "<script"), 1u);
  EXPECT_EQ(Count(html, "<svg "), 1u);
  EXPECT_EQ(Count(html, "<title>"), 1u + Count(html, "\"><title>"));
  EXPECT_NE(html.find("push failed: &lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("&quot;&gt;&lt;svg onload=alert(1)&gt;rank-7.json"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(2)&lt;script&gt;rank-3.json"), std::string::npos);
  simdjson::dom::parser parser;
  simdjson::dom::element manifest;
  EXPECT_EQ(parser.load(out + "/manifest.json").get(manifest), simdjson::SUCCESS);
}

TEST(ReportRebuild, SameBytesFromTheManifestAndNoReportFlag) {
  const std::string out = testing::ScratchDir();
  testing::Convert({testing::SourcePath("tests/report/data/failed_and_missing")}, out, 2);
  const std::string first = ReadText(out + "/report.html");
  std::filesystem::remove(out + "/report.html");
  ASSERT_TRUE(report::WriteReport(out).ok());
  EXPECT_EQ(ReadText(out + "/report.html"), first);

  const std::string bare = testing::ScratchDir("-no-report");
  pipeline::ConvertOptions o;
  o.inputs = {testing::SourcePath("cluster-examples/run-event-log")};
  o.out_dir = bare;
  o.quiet = true;
  o.write_report = false;
  EXPECT_EQ(pipeline::RunConvert(o).exit_code, 0);
  EXPECT_TRUE(std::filesystem::exists(bare + "/manifest.json"));
  EXPECT_FALSE(std::filesystem::exists(bare + "/report.html"));
  EXPECT_TRUE(absl::IsNotFound(report::WriteReport(bare + "/missing")));
}

TEST(ReportManifest, OlderOrBrokenManifests) {
  auto html = report::BuildReportHtml(
      R"({"tracemill_version":"0.0.9","inputs":[{"path":"a.json","rank":0,"events_read":1}],"outputs":[]})");
  ASSERT_TRUE(html.ok()) << html.status();
  EXPECT_NE(html->find("a.json"), std::string::npos);
  EXPECT_TRUE(absl::IsInvalidArgument(report::BuildReportHtml("{\"a\": 1}").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(report::BuildReportHtml("not json").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      report::BuildReportHtml(R"({"inputs":[{"steps":[[1,"x",2]]}]})").status()));
}

// What is not a manifest is said at once, naming the path: a folder named
// manifest.json, a link to /dev/zero (never read until memory runs out), a
// sparse file of GBs, an OUTDIR that is a file, a parse error.
TEST(ReportManifest, NotAManifestIsSaidAtOnce) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    absl::StrCat("tracemill-report-read-", ::getpid());
  std::filesystem::remove_all(dir);
  auto out = [&](const char* name) {
    std::filesystem::create_directories(dir / name);
    return (dir / name).string();
  };
  std::filesystem::create_directories(out("folder") + "/manifest.json");
  std::filesystem::create_symlink("/dev/zero", out("zero") + "/manifest.json");
  {
    std::FILE* f = std::fopen((out("sparse") + "/manifest.json").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
    std::filesystem::resize_file(out("sparse") + "/manifest.json", uint64_t{3} << 30);
  }
  {
    std::FILE* f = std::fopen((out("broken") + "/manifest.json").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("{\"inputs\": [", f);
    std::fclose(f);
  }
  {
    std::FILE* f = std::fopen((dir / "afile").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  auto folder = report::ReadManifest(out("folder"));
  EXPECT_TRUE(absl::IsInvalidArgument(folder.status()));
  EXPECT_EQ(folder.status().message(), out("folder") + "/manifest.json: not a regular file (not a tracemill manifest)");
  auto zero = report::ReadManifest(out("zero"));
  EXPECT_TRUE(absl::IsInvalidArgument(zero.status()));
  EXPECT_EQ(zero.status().message(), out("zero") + "/manifest.json: not a regular file (not a tracemill manifest)");
  auto sparse = report::ReadManifest(out("sparse"));
  EXPECT_TRUE(absl::IsInvalidArgument(sparse.status()));
  EXPECT_EQ(sparse.status().message(),
            out("sparse") + "/manifest.json: 3072 MiB, more than a manifest has (2 GiB at most)");
  auto file = report::ReadManifest((dir / "afile").string());
  EXPECT_TRUE(absl::IsNotFound(file.status())) << file.status();
  auto broken = report::ReadManifest(out("broken"));
  EXPECT_TRUE(absl::IsInvalidArgument(broken.status()));
  EXPECT_EQ(broken.status().message().substr(0, out("broken").size() + 16), out("broken") + "/manifest.json: ");
  std::filesystem::remove_all(dir);
}

// More than 10,000 inputs: the table lists 10,000, those with an error
// first (here the last two), and says how many more manifest.json lists.
TEST(ReportSize, InputsTableKeepsTenThousandRowsErrorsFirst) {
  std::string json = R"({"tracemill_version":"0.2.0","inputs":[)";
  for (int k = 0; k < 10003; ++k) {
    absl::StrAppend(&json, k ? "," : "", R"({"path":"in)", k, R"(.json","events_read":1)");
    if (k >= 10001) json += R"(,"error":{"message":"cut","code":"DATA_LOSS","byte_offset":9,"rejected":false})";
    json += "}";
  }
  json += R"(],"outputs":[]})";
  auto html = report::BuildReportHtml(json);
  ASSERT_TRUE(html.ok()) << html.status();
  const size_t begin = html->find("<section id=\"inputs\">");
  const size_t end = html->find("</section>", begin);
  ASSERT_NE(begin, std::string::npos);
  const std::string table = html->substr(begin, end - begin);
  size_t rows = 0;
  for (size_t p = table.find("<tr"); p != std::string::npos; p = table.find("<tr", p + 1)) ++rows;
  EXPECT_EQ(rows, 1u + 10000u);  // the header and 10,000 inputs
  EXPECT_NE(table.find("<td>in10001.json</td>"), std::string::npos);
  EXPECT_NE(table.find("<td>in10002.json</td>"), std::string::npos);
  EXPECT_NE(table.find("<td>in9997.json</td>"), std::string::npos);
  EXPECT_EQ(table.find("<td>in9998.json</td>"), std::string::npos);
  EXPECT_NE(table.find("3 more inputs are not listed here (the inputs with errors are): manifest.json lists every one."),
            std::string::npos);
}

// 4,096 ranks (512 nodes of 8), 12 steps each, world_size 4,352 (256
// missing), 40 damaged inputs, a warning per input: the page collapses to
// node rows and stays under 4 MB.
TEST(ReportSize, FourThousandRanksStayUnderFourMegabytes) {
  constexpr int kRanks = 4096;
  std::string m = R"({"tracemill_version":"0.1.0","command_line":"tracemill convert big","exit_code":3,)"
                  R"("wall_seconds":12.5,"threads":2,"group_by":"local-gpu","gpus_per_node":8,)"
                  R"("time_span_us":[1000000,3000000],"totals":{"inputs":4096},"inputs":[)";
  for (int r = 0; r < kRanks; ++r) {
    absl::StrAppend(&m, r ? "," : "", "{\"path\":\"/scratch/job/traces/rank-", r,
                    ".pt.trace.json.gz\",\"bytes\":31457280,\"decoded_bytes\":314572800,"
                    "\"format\":\"gzip+trace_event_json_object\",\"rank\":",
                    r, ",\"world_size\":4352,\"label\":\"rank ", r,
                    "\",\"events_read\":75000,\"events_written\":75000,\"events_dropped\":0,"
                    "\"warnings\":[\"ignored 12 bytes after the JSON document\"],\"error\":");
    if (r % 100 == 7) {
      absl::StrAppend(&m, "{\"message\":\"input ends inside an event object (truncated)\",\"code\":\"DATA_LOSS\","
                          "\"byte_offset\":123456,\"rejected\":false}");
    } else {
      m.append("null");
    }
    absl::StrAppend(&m, ",\"span_us\":[1000000,2900000],\"steps\":[");
    for (int k = 0; k < 12; ++k) {
      int64_t start = 1000000 + k * 150000 + (r % 13) * 100;
      int64_t dur = 140000 + (r % 17) * 50 + (r == 1234 ? 9000 : 0);
      absl::StrAppend(&m, k ? "," : "", "[", 100 + k, ",", start, ",", start + dur, "]");
    }
    m.append("],\"tracks\":[]}");
  }
  m.append("],\"outputs\":[]}");
  auto html = report::BuildReportHtml(m);
  ASSERT_TRUE(html.ok()) << html.status();
  testing::WriteText(testing::ScratchDir() + "/report.html", *html);
  ::testing::Test::RecordProperty("report_bytes", static_cast<int>(html->size()));
  EXPECT_LT(html->size(), 4u << 20);
  EXPECT_NE(html->find("ranks are too many to read one per row"), std::string::npos);
  EXPECT_EQ(Count(*html, ">node 511 <tspan"), 1u);
  // Dead ranks keep their own rows (41 damaged: r % 100 == 7), so do the 16
  // slowest; the missing ranks 4096-4351 are one hatched row.
  EXPECT_EQ(Count(*html, "<rect class=\"dead\""), 41u);
  EXPECT_EQ(Count(*html, "<rect class=\"miss\""), 1u);
  EXPECT_NE(html->find(">rank 1234</text>"), std::string::npos);
  EXPECT_EQ(AllMatches(*html, "id=\"card-dead\" data-value=\"([0-9]+)\"")[0], "297");
}

// Issue 40, point 9: per node, the distribution of its ranks' step
// durations (nearest-rank percentiles of 20 durations: the 10th and 18th).
// Node 1's steps are all 2 ms longer: its median stands out.
TEST(ReportStepDurations, PerNodeShortestMedianP90Longest) {
  std::string m = R"({"tracemill_version":"0.1.0","command_line":"tracemill convert x","exit_code":0,)"
                  R"("group_by":"local-gpu","gpus_per_node":2,"time_span_us":[1000000,2000000],"inputs":[)";
  for (int r = 0; r < 4; ++r) {
    absl::StrAppend(&m, r ? "," : "", "{\"path\":\"rank", r, ".json\",\"rank\":", r, ",\"events_read\":1,",
                    "\"span_us\":[1000000,2000000],\"steps\":[");
    for (int k = 0; k < 10; ++k) {
      const int64_t start = 1000000 + k * 50000, dur = 40000 + k * 100 + (r >= 2 ? 2000 : 0) + r;
      absl::StrAppend(&m, k ? "," : "", "[", k, ",", start, ",", start + dur, "]");
    }
    m.append("],\"tracks\":[]}");
  }
  m.append(R"(],"outputs":[]})");
  auto html = report::BuildReportHtml(m);
  ASSERT_TRUE(html.ok()) << html.status();
  const std::string row0 =
      "<tr><td class=\"n\">0</td><td class=\"n\">2</td><td class=\"n\">20</td><td class=\"n\">40 ms</td>"
      "<td class=\"n\">40.401 ms</td><td class=\"n\">40.801 ms</td><td class=\"n\">40.901 ms</td></tr>";
  const std::string row1 =
      "<tr><td class=\"n\">1</td><td class=\"n\">2</td><td class=\"n\">20</td><td class=\"n\">42.002 ms</td>"
      "<td class=\"n\">42.403 ms</td><td class=\"n\">42.803 ms</td><td class=\"n\">42.903 ms</td></tr>";
  EXPECT_NE(html->find(row0), std::string::npos) << *html;
  EXPECT_NE(html->find(row1), std::string::npos);
  // No steps, no section.
  auto none = report::BuildReportHtml(R"({"tracemill_version":"0.1.0","inputs":[{"path":"a","rank":0}],"outputs":[]})");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->find("id=\"step-durations\""), std::string::npos);
}

// Issue 21: three inputs that do not share a time axis (relative times, an
// epoch run, another job three months later; tests/report/data/README.md).
// The first screen says so: badge, banner, an axis in days, not-given ranks.
TEST(ReportMixedInputs, BannerBadgeAxisSpanAndNotGivenRanks) {
  const std::string out = testing::ScratchDir();
  const std::string dir = testing::SourcePath("tests/report/data/mixed_inputs");
  auto s = testing::Convert({dir}, out);
  EXPECT_EQ(s.exit_code, 0);
  const std::string html = ReadText(out + "/report.html");
  EXPECT_EQ(Badge(html), "exit 0: converted, with warnings");
  const std::string rel = dir + "/relative_rank0.json", epoch = dir + "/epoch_rank1.json",
                    other = dir + "/other_job_rank3.json";
  EXPECT_EQ(Section(html, "notices"),
            absl::StrCat("<section class=\"banner\" id=\"notices\"><ul>\n"
                         "<li class=\"warn\">the inputs disagree on world_size, so they may come from different jobs: "
                         "2 (", epoch, ", ", rel, "); 8 (", other, ")</li>\n"
                         "<li class=\"warn\">mixed time bases: 1 input has times relative to their start (", rel,
                         "), 2 since the epoch (", epoch, ", ", other,
                         "): they are not on one time axis (see --time-offset)</li>\n"
                         "<li class=\"warn\">the inputs look like 2 different runs: their time spans do not overlap: "
                         "2023-04-28 23:51:38 UTC (", epoch, "); 2023-07-28 08:00:00 UTC (", other, ")</li>\n"
                         "</ul></section>"));
  EXPECT_LT(html.find("id=\"notices\""), html.find("id=\"summary\""));
  // The axis runs from the relative input's first event (0.12 ms) to the
  // other job's last (2023-07-28): 19,566 days, in days, never "+10000000 s".
  EXPECT_EQ(testing::AxisLabels(html),
            (std::vector<std::string>{"0", "+5,000 d", "+10,000 d", "+15,000 d"}));
  EXPECT_EQ(testing::CardText(html, "time-span"), "19,566.333 d");
  EXPECT_EQ(html.find("0000000 s"), std::string::npos);
  EXPECT_NE(html.find("from 120 \xC2\xB5s (run-relative) to 2023-07-28 08:00:00.080 UTC: mixed time bases"),
            std::string::npos);
  EXPECT_NE(html.find("The inputs are far apart in time: the axis spans 19,566.333 d, the longest input 101.3 ms"),
            std::string::npos);
  // world_size 8 (the largest), ranks 0, 1, 3 given, none failed: 2 and 4-7
  // are not given (grey), nothing is dead.
  EXPECT_EQ(Card(html, "dead"), "0");
  EXPECT_EQ(Card(html, "not-given"), "5");
  EXPECT_EQ(Count(html, "<rect class=\"absent\""), 2u);
  EXPECT_EQ(Count(html, "<rect class=\"miss\""), 0u);
}

// Issue 21: two runs of worker0 taken five minutes apart, in one folder
// (tests/tools/terminal_news_test.cc says the same on the terminal). The
// banner names both files twice (spans that do not overlap, rank 0 claimed
// twice), the badge is not green, and the 5-minute axis is in minutes.
TEST(ReportTwoRuns, BannerNamesBothRunsAndTheAxisIsInMinutes) {
  const std::string in = testing::ScratchDir("-in");
  const std::string out = testing::ScratchDir("-out");
  const std::string first = in + "/run1/worker0.json", second = in + "/run2/worker0.json";
  for (const auto& [path, ts] : {std::pair{first, "1700000000000000"}, std::pair{second, "1700000300000000"}}) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    testing::WriteText(path, absl::StrCat(R"({"traceEvents":[{"ph":"X","name":"op","pid":1,"tid":1,"ts":)", ts,
                                          R"(,"dur":5}]})", "\n"));
  }
  auto s = testing::Convert({in}, out);
  EXPECT_EQ(s.exit_code, 0);
  const std::string html = ReadText(out + "/report.html");
  EXPECT_EQ(Badge(html), "exit 0: converted, with warnings");
  EXPECT_EQ(Section(html, "notices"),
            absl::StrCat("<section class=\"banner\" id=\"notices\"><ul>\n"
                         "<li class=\"warn\">the inputs look like 2 different runs: their time spans do not overlap: "
                         "2023-11-14 22:13:20 UTC (", first, "); 2023-11-14 22:18:20 UTC (", second, ")</li>\n"
                         "<li class=\"warn\">rank 0 is claimed by 2 inputs (", first, ", ", second,
                         "): each kept as a separate process of the same output</li>\n"
                         "</ul></section>"));
  EXPECT_LT(html.find("id=\"notices\""), html.find("id=\"summary\""));
  // 300.000005 s from the first event's start to the last one's end.
  EXPECT_EQ(testing::AxisLabels(html),
            (std::vector<std::string>{"0", "+1 min", "+2 min", "+3 min", "+4 min", "+5 min"}));
  EXPECT_EQ(testing::CardText(html, "time-span"), "5 min");
  EXPECT_EQ(Card(html, "time-span"), "300000005000");
}

// Issue 21: smdebug's time-base records and repeated metadata are left out
// by design (12 events): a plain "left out on purpose" card, never red; no
// event lost, no banner, a green badge.
TEST(ReportDropsByDesign, LeftOutIsNotLost) {
  const std::string out = testing::ScratchDir();
  auto s = testing::Convert({testing::SourcePath("tests/data/smdebug/model_timeline_traces")}, out);
  EXPECT_EQ(s.exit_code, 0);
  const std::string html = ReadText(out + "/report.html");
  EXPECT_EQ(Badge(html), "exit 0: every input converted");
  EXPECT_EQ(Section(html, "notices"), "");
  EXPECT_NE(html.find("<div class=\"card\" id=\"card-events-left-out\" data-value=\"12\"><div class=\"k\">left "
                      "out on purpose</div><div class=\"v\">12</div><div class=\"d\">time_base 8, "
                      "duplicate_metadata 4</div>"),
            std::string::npos);
  EXPECT_NE(html.find("<div class=\"card\" id=\"card-events-lost\" data-value=\"0\"><div class=\"k\">events "
                      "lost</div><div class=\"v\">0</div><div class=\"d\">none</div>"),
            std::string::npos);
  EXPECT_EQ(Count(html, "class=\"card bad\""), 0u);
}

// Issue 21: an input that lost most of its events (120 bad `ts` of 150) has
// errors (exit 3); the badge, the banner and a red "events lost" card say so.
TEST(ReportLostEvents, BadgeBannerAndLostCard) {
  const std::string in = testing::ScratchDir("-in");
  const std::string out = testing::ScratchDir("-out");
  std::string bad = R"({"distributedInfo": {"rank": 0, "world_size": 2}, "traceEvents": [)";
  for (int k = 0; k < 150; ++k)
    absl::StrAppend(&bad, k ? ",\n" : "", R"({"ph": "X", "name": "op", "pid": 1, "tid": 1, "ts": )",
                    k < 120 ? "\"soon\"" : absl::StrCat(1700000000000000 + k), R"(, "dur": 1})");
  bad.append("]}\n");
  testing::WriteText(in + "/rank0.json", bad);
  testing::WriteText(in + "/rank1.json", R"({"distributedInfo": {"rank": 1, "world_size": 2}, "traceEvents": [
{"ph": "X", "name": "op", "pid": 1, "tid": 1, "ts": 1700000000000000, "dur": 1},
{"ph": "X", "name": "op", "pid": 1, "tid": 1, "ts": 1700000000000100, "dur": 1},
{"ph": "X", "name": "op", "pid": 1, "tid": 1, "ts": 1700000000000200, "dur": 1}]}
)");
  auto s = testing::Convert({in}, out);
  EXPECT_EQ(s.exit_code, 3);
  const std::string html = ReadText(out + "/report.html");
  EXPECT_EQ(Badge(html), "exit 3: 1 of 2 inputs with errors, 120 events lost");
  EXPECT_EQ(Section(html, "notices"),
            "<section class=\"banner\" id=\"notices\"><ul>\n"
            "<li class=\"err\">1 of 2 inputs has errors: 1 converted in part (damaged, or most events lost); "
            "<a href=\"#log\">see the log below</a>.</li>\n"
            "<li class=\"err\">120 of 153 events lost (not in the outputs): bad_ts 120; the most, bad_ts: `ts` is "
            "not a decimal number in the int64 ns range.</li>\n"
            "</ul></section>");
  EXPECT_NE(html.find("<div class=\"card bad\" id=\"card-events-lost\" data-value=\"120\"><div class=\"k\">events "
                      "lost</div><div class=\"v\">120</div><div class=\"d\">bad_ts 120</div>"),
            std::string::npos);
}

// A hand-made manifest: notices (one repeated, one with markup), an input
// rejected, events lost and left out, an output not written. The banner
// lists each once, escaped, errors first; left-out events are not red.
TEST(ReportBanner, NoticesOnceEscapedAfterTheErrors) {
  auto html = report::BuildReportHtml(R"({"tracemill_version":"0.1.0","exit_code":1,
"totals":{"inputs":4,"inputs_rejected":1,"inputs_with_errors":1,"inputs_skipped":1,"events_read":12345,
"events_written":12000,"events_dropped":345,"dropped_by_reason":{"bad_ts":15,"window":300,"truncated":30}},
"inputs":[{"path":"a.json","rank":0}],
"outputs":[{"path":"gpu0.trace.json","error":"No space left on device"},{"path":"gpu1.trace.json"}],
"notices":["rank 0 is claimed by 2 inputs (<a>.json, b.json): each kept",
"the inputs look like 2 different runs","rank 0 is claimed by 2 inputs (<a>.json, b.json): each kept"]})");
  ASSERT_TRUE(html.ok()) << html.status();
  EXPECT_EQ(Badge(*html), "exit 1: 1 of 2 outputs could not be written");
  EXPECT_EQ(Section(*html, "notices"),
            "<section class=\"banner\" id=\"notices\"><ul>\n"
            "<li class=\"err\">1 of 3 inputs has errors: 1 rejected (nothing converted); "
            "<a href=\"#log\">see the log below</a>.</li>\n"
            "<li class=\"err\">1 of 2 outputs could not be written (their events count as lost); see the Outputs "
            "table.</li>\n"
            "<li class=\"err\">45 of 12,345 events lost (not in the outputs): truncated 30, bad_ts 15; the most, "
            "truncated: event object cut off by the end of the input or a hole.</li>\n"
            "<li class=\"warn\">rank 0 is claimed by 2 inputs (&lt;a&gt;.json, b.json): each kept</li>\n"
            "<li class=\"warn\">the inputs look like 2 different runs</li>\n"
            "</ul></section>");
  // An older manifest without events_lost/events_left_out: split by reason.
  EXPECT_NE(html->find("<div class=\"card\" id=\"card-events-left-out\" data-value=\"300\"><div class=\"k\">left out "
                       "on purpose</div><div class=\"v\">300</div><div class=\"d\">window 300</div>"),
            std::string::npos);
  EXPECT_NE(html->find("<div class=\"card bad\" id=\"card-events-lost\" data-value=\"45\">"), std::string::npos);
  EXPECT_LT(html->find("id=\"notices\""), html->find("id=\"summary\""));
}

// The badge from exit_code and totals alone: green only when nothing was
// lost and nothing needs a warning.
TEST(ReportBadge, FollowsExitCodeAndTotals) {
  auto badge = [](const std::string& top) {
    auto html = report::BuildReportHtml(absl::StrCat("{", top, ",\"inputs\":[]}"));
    return html.ok() ? Badge(*html) : html.status().ToString();
  };
  EXPECT_EQ(badge(R"("exit_code":0,"totals":{"inputs":2,"events_read":10,"events_written":10})"),
            "exit 0: every input converted");
  EXPECT_EQ(badge(R"("exit_code":0,"totals":{"inputs":2,"events_read":0})"), "exit 0: no event in the inputs");
  EXPECT_EQ(badge(R"("exit_code":0,"totals":{"inputs":2,"events_read":10,"events_written":9,"events_dropped":1,)"
                  R"("events_lost":1,"events_left_out":0})"),
            "exit 0: converted, 1 event lost");
  EXPECT_EQ(badge(R"("exit_code":0,"totals":{"inputs":2,"events_read":10,"events_written":5,"events_dropped":5,)"
                  R"("events_lost":0,"events_left_out":5},"notices":["x"])"),
            "exit 0: converted, with warnings");
  EXPECT_EQ(badge(R"("exit_code":3,"totals":{"inputs":3,"inputs_with_errors":3,"inputs_rejected":3,"events_read":0})"),
            "exit 3: 3 of 3 inputs with errors, nothing converted");
  EXPECT_EQ(badge(R"("exit_code":2)"), "exit 2: usage error");
  EXPECT_EQ(badge(R"("exit_code":1)"), "exit 1: internal error");
  EXPECT_EQ(badge(R"("exit_code":130)"), "exit 130: interrupted (SIGINT)");
}

// Issue 21: a small span gets a µs axis.
TEST(ReportAxis, SmallSpanInMicroseconds) {
  auto html = report::BuildReportHtml(R"({"exit_code":0,"time_span_us":[1000,1050],
"inputs":[{"path":"a.json","rank":0,"span_us":[1000,1050],"steps":[[1,1000,1040]]}]})");
  ASSERT_TRUE(html.ok()) << html.status();
  EXPECT_EQ(testing::AxisLabels(*html), (std::vector<std::string>{"0", "+10 \xC2\xB5s", "+20 \xC2\xB5s",
                                                                   "+30 \xC2\xB5s", "+40 \xC2\xB5s", "+50 \xC2\xB5s"}));
  EXPECT_EQ(testing::CardText(*html, "time-span"), "50 \xC2\xB5s");
}

// Issue 21: the straggler threshold (more than 5 % and more than 1 ms
// behind the median). Step 1: rank 1 is 0.05 % slower than its only peer;
// step 2: rank 2 is 10 % and 5 ms behind; step 3: 9 % but 0.9 ms; step 4:
// 4 ms but 4 %. Only step 2 has a straggler.
TEST(ReportStragglers, MarkedOnlyBeyondFivePercentAndOneMillisecond) {
  auto html = report::BuildReportHtml(R"({"exit_code":0,"time_span_us":[0,2000000],"inputs":[
{"path":"r0.json","rank":0,"steps":[[1,0,600000],[2,700000,750000],[3,800000,810000],[4,900000,1000000]]},
{"path":"r1.json","rank":1,"steps":[[1,0,600300],[2,700000,750000],[3,800000,810000],[4,900000,1000000]]},
{"path":"r2.json","rank":2,"steps":[[2,700000,755000],[3,800000,810900],[4,900000,1004000]]}]})");
  ASSERT_TRUE(html.ok()) << html.status();
  EXPECT_EQ(Count(*html, "<rect class=\"slow\""), 1u);
  EXPECT_NE(StragglerRow(*html, 1).find("<td class=\"who\">rank 1</td>"), std::string::npos);
  EXPECT_NE(StragglerRow(*html, 2).find("<td class=\"who slow\" title=\"straggler of this step\">rank 2</td>"),
            std::string::npos);
  EXPECT_NE(StragglerRow(*html, 3).find("<td class=\"who\">rank 2</td>"), std::string::npos);
  EXPECT_NE(StragglerRow(*html, 4).find("<td class=\"who\">rank 2</td>"), std::string::npos);
  EXPECT_NE(html->find("The slowest is the step's straggler (orange, here and on the timeline) only when it is more "
                       "than 5 % and more than 1 ms behind the step's median: 1 of 4 steps have one."),
            std::string::npos);
}

// Issue 37, point 7: ranks whose steps last exactly as long got "rank 0,
// +0 ns" as the slowest of every step; there is none.
TEST(ReportStragglers, EqualStepsNameNoSlowest) {
  auto html = report::BuildReportHtml(R"({"exit_code":0,"time_span_us":[0,2000000],"inputs":[
{"path":"r0.json","rank":0,"steps":[[1,0,600000],[2,700000,750000]]},
{"path":"r1.json","rank":1,"steps":[[1,0,600000],[2,700000,750100]]}]})");
  ASSERT_TRUE(html.ok()) << html.status();
  const std::string r1 = StragglerRow(*html, 1);
  EXPECT_NE(r1.find("<td class=\"who\">none: all 2 equal</td>"), std::string::npos) << r1;
  EXPECT_EQ(r1.find("rank 0"), std::string::npos) << r1;
  EXPECT_NE(StragglerRow(*html, 2).find("<td class=\"who\">rank 1</td>"), std::string::npos);
}

}  // namespace
}  // namespace tracemill

namespace tracemill {
namespace {

// A run event log with 200 workers: the scheduler, the failed worker and the
// 16 slowest keep rows; the other 183 are one "… more workers" line.
TEST(ReportSize, ManyWorkersCollapse) {
  const std::string in = testing::ScratchDir("-in");
  const std::string out = testing::ScratchDir("-out");
  std::string log = "{\"time\": 1, \"kind\": \"round_start\", \"data\": {\"round_num\": 1}}\n";
  for (int w = 0; w < 200; ++w)
    absl::StrAppend(&log, "{\"time\": ", 10 + w * 0.01, ", \"kind\": \"exec\", \"rank\": ", w,
                    ", \"data\": {\"duration_s\": ", 5 + w * 0.01, ", \"exit_code\": ", w == 42 ? 1 : 0, "}}\n");
  log.append("{\"time\": 20, \"kind\": \"round_end\", \"data\": {\"round_num\": 1}}\n");
  testing::WriteText(in + "/many.jsonl", log);
  auto s = testing::Convert({in}, out);
  EXPECT_EQ(s.exit_code, 0);
  const std::string html = ReadText(out + "/report.html");
  EXPECT_EQ(Count(html, "<g>"), 1u + 1u + 16u + 1u);
  EXPECT_NE(html.find(">\xE2\x80\xA6 183 more workers</text>"), std::string::npos);
  EXPECT_NE(html.find(">many.jsonl \xC2\xB7 worker 199</text>"), std::string::npos);
  EXPECT_NE(html.find("many.jsonl \xC2\xB7 worker 42</text>"), std::string::npos);
  EXPECT_EQ(AllMatches(html, "<td class=\"n surv\">([0-9]+/[0-9]+)</td>"), (std::vector<std::string>{"199/200"}));
}

}  // namespace
}  // namespace tracemill
