// The HTML run report end to end: convert a job, read manifest.json with
// simdjson's DOM (independently of report/run_model.cc), and check that the
// page shows the manifest's numbers, the right dead rows and stragglers, that
// input strings are inert, and that the page stays small for 4,096 ranks.
#include <simdjson.h>

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "report/html_report.h"
#include "tests/report/test_util.h"

namespace tracemill {
namespace {

using testing::AllMatches;
using testing::Card;
using testing::Count;
using testing::ReadText;
using testing::StragglerRow;

constexpr const char kDash[] = "\xE2\x80\x93";  // en dash in rank ranges

// The manifest's totals must be the cards' data-values.
void ExpectCardsEqualManifest(const std::string& html, simdjson::dom::element manifest) {
  simdjson::dom::element t = manifest["totals"];
  for (const char* key : {"inputs", "input_bytes", "events_read", "events_written", "events_dropped",
                          "outputs", "output_bytes"}) {
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
  // world_size 128, 2 ranks sampled: ranks 2-127 are missing, in one row.
  EXPECT_EQ(Card(html, "dead"), "126");
  EXPECT_EQ(Count(html, "<rect class=\"miss\""), 1u);
  EXPECT_NE(html.find(absl::StrCat("<tr class=\"dead\" data-kind=\"missing\"><td>ranks 2", kDash, "127</td>")),
            std::string::npos);
  EXPECT_NE(html.find(">rank 0</text>"), std::string::npos);
  EXPECT_NE(html.find(">rank 1</text>"), std::string::npos);

  // Stragglers: medians of two are their mean; rank 1 is slower in both.
  std::string r551 = StragglerRow(html, 551), r552 = StragglerRow(html, 552);
  EXPECT_NE(r551.find(">607.608 ms<"), std::string::npos) << r551;
  EXPECT_NE(r551.find("<td class=\"who\">rank 1</td>"), std::string::npos) << r551;
  EXPECT_NE(r551.find("data-v=\"296000\">+296 \xC2\xB5s<"), std::string::npos) << r551;
  EXPECT_NE(r552.find(">626.7835 ms<"), std::string::npos) << r552;
  EXPECT_NE(r552.find("<td class=\"who\">rank 1</td>"), std::string::npos) << r552;
  EXPECT_NE(r552.find("data-v=\"3855500\">+3.8555 ms<"), std::string::npos) << r552;
  EXPECT_NE(r552.find(">rank 0 (-3.8555 ms)<"), std::string::npos) << r552;
  // The slowest bar of each step is highlighted: both of rank 1's.
  EXPECT_EQ(Count(html, "<rect class=\"slow\""), 2u);
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
  EXPECT_EQ(Card(html, "dead"), "5");
  EXPECT_EQ(Card(html, "events-dropped"), "1");
  EXPECT_NE(html.find("id=\"exit-status\">exit 3:"), std::string::npos);

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
  EXPECT_NE(r10.find("<td class=\"who\">rank 2</td>"), std::string::npos) << r10;
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
