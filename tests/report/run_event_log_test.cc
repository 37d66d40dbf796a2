// The run event log decoder (formats/orchestrator/), on small inline logs,
// and the example log end to end: 3 rounds, 4 workers, worker 2 failing in
// round 2 -> survivors 4/4, 3/4, 3/4.
#include <simdjson.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "formats/orchestrator/run_event_log_decoder.h"
#include "gtest/gtest.h"
#include "tests/report/test_util.h"

namespace tracemill {
namespace {

using testing::AllMatches;
using testing::Card;
using testing::ReadText;

struct Decoded {
  formats::DecodeReport report;
  std::unique_ptr<formats::TraceData> data;
};

Decoded Decode(const std::string& text) {
  formats::RunEventLogDecoder decoder;
  formats::TraceBuilder builder;
  Decoded d;
  d.report = decoder.Decode(text, &builder);
  d.data = builder.Finish();
  return d;
}

std::string Str(const formats::TraceData& d, uint32_t id) { return std::string(d.strings[id]); }
std::string Rest(const formats::Event& e) { return std::string(e.rest, e.rest_len); }

TEST(RunEventLogDecoder, EventsAndExactTimes) {
  Decoded d = Decode(
      R"({"time": 0.5, "kind": "round_start", "rank": null, "data": {"round_num": 1, "active_nodes": 2}}
{"time": 12.000250001, "kind": "exec", "rank": 1, "data": {"duration_s": 2.5, "exit_code": 0}}
{"time": 12.5, "kind": "push", "rank": 1, "duration_s": "0.25", "data": {"size_bytes": 1024}}
{"time": 13, "kind": "pull", "rank": 0, "data": {"duration_s": 0.1, "size_bytes": 2048, "error": "timeout"}}
{"time": 14, "kind": "heartbeat", "rank": 0, "data": {}}
{"time": 15, "kind": "round_end", "data": {"round_num": 1, "survivors": 1, "total_nodes": 2}}
)");
  ASSERT_TRUE(d.report.status.ok()) << d.report.status;
  EXPECT_EQ(d.report.events_read, 6u);
  EXPECT_EQ(d.report.dropped.Total(), 0u);
  const auto& ev = d.data->events;
  ASSERT_EQ(ev.size(), 6u);
  EXPECT_EQ(ev[0].phase, 'B');
  EXPECT_EQ(Str(*d.data, ev[0].name), "round 1");
  // `time` ends the action: exec ran from 9.500250001 s to 12.000250001 s.
  EXPECT_EQ(ev[1].phase, 'X');
  EXPECT_EQ(ev[1].ts_ns, 9500250001);
  EXPECT_EQ(ev[1].dur_ns, 2500000000);
  EXPECT_EQ(Rest(ev[1]), R"("args":{"duration_s":2.5,"exit_code":0})");
  // duration_s at the top level, as a string.
  EXPECT_EQ(ev[2].ts_ns, 12250000000);
  EXPECT_EQ(Rest(ev[2]), R"("args":{"size_bytes":1024,"duration_s":"0.25"})");
  // A failed action: args.failed and a red cname.
  EXPECT_EQ(Rest(ev[3]),
            R"("args":{"duration_s":0.1,"size_bytes":2048,"error":"timeout","failed":true},"cname":"terrible")");
  EXPECT_EQ(ev[4].phase, 'i');
  EXPECT_EQ(ev[5].phase, 'E');
  // Processes: the scheduler first, then workers by first appearance.
  ASSERT_EQ(d.data->processes.size(), 3u);
  EXPECT_EQ(d.data->processes[0].pid_token, "\"scheduler\"");
  EXPECT_EQ(d.data->processes[1].pid_token, "\"worker 1\"");
  EXPECT_EQ(d.data->processes[2].pid_token, "\"worker 0\"");
  // Timeline.
  const formats::Timeline& tl = d.data->timeline;
  EXPECT_EQ(tl.bytes_pushed, 1024u);
  EXPECT_EQ(tl.bytes_pulled, 2048u);
  ASSERT_EQ(tl.tracks.size(), 3u);
  EXPECT_EQ(tl.tracks[0].name, "scheduler");
  ASSERT_EQ(tl.tracks[0].steps.size(), 1u);
  EXPECT_EQ(tl.tracks[0].steps[0].start_ns, 500000000);
  EXPECT_EQ(tl.tracks[0].steps[0].end_ns, 15000000000);
  EXPECT_EQ(tl.tracks[0].steps[0].survivors, 1);
  EXPECT_EQ(tl.tracks[0].steps[0].total, 2);
  EXPECT_EQ(tl.tracks[1].name, "worker 0");
  EXPECT_EQ(tl.tracks[1].failed_at_ns, 13000000000);
  EXPECT_EQ(tl.tracks[1].failure, "pull failed: timeout");
  EXPECT_EQ(tl.tracks[2].name, "worker 1");
  EXPECT_FALSE(tl.tracks[2].failed_at_ns);
  ASSERT_EQ(tl.tracks[2].steps.size(), 1u);
  EXPECT_EQ(tl.tracks[2].steps[0].start_ns, 9500250001);
  EXPECT_EQ(tl.tracks[2].steps[0].end_ns, 12500000000);
}

TEST(RunEventLogDecoder, ExecExitCodeFailsWithLastLineOfOutput) {
  Decoded d = Decode(
      "{\"time\": 1, \"kind\": \"round_start\", \"data\": {\"round_num\": 4}}\n"
      "{\"time\": 3, \"kind\": \"exec\", \"rank\": 2, \"data\": {\"duration_s\": 1, \"exit_code\": 137, "
      "\"output_tail\": \"step 9\\nKilled\\n\"}}\n"
      "{\"time\": 4, \"kind\": \"round_end\", \"data\": {\"round_num\": 4}}\n");
  ASSERT_TRUE(d.report.status.ok()) << d.report.status;
  const auto& tracks = d.data->timeline.tracks;
  ASSERT_EQ(tracks.size(), 2u);
  EXPECT_EQ(tracks[1].failure, "exec exit_code 137: Killed");
  EXPECT_EQ(tracks[1].failed_at_ns, 3000000000);
  // No survivors in round_end: computed from the workers alive at its end.
  EXPECT_EQ(tracks[0].steps[0].survivors, 0);
  EXPECT_EQ(tracks[0].steps[0].total, 1);
}

TEST(RunEventLogDecoder, BadLinesAreCountedAndTheRestKept) {
  Decoded d = Decode(
      "{\"time\": 1, \"kind\": \"push\", \"rank\": 0, \"data\": {\"duration_s\": 0.5}}\n"
      "not json at all\n"
      "[1, 2]\n"
      "{\"kind\": \"push\", \"rank\": 0}\n"
      "{\"time\": \"soon\", \"kind\": \"push\"}\n"
      "{\"time\": 2, \"rank\": 0}\n"
      "{\"time\": 3, \"kind\": \"push\", \"data\": {\"duration_s\": -1}}\n"
      "{\"time\": NaN, \"kind\": \"x\"}\n"
      "{\"time\": 4, \"kind\": \"pull\", \"rank\": 0, \"data\": {\"duration_s\": 0.5, \"norm\": NaN}}\n"
      "{\"time\": 5, \"kind\": \"pu");
  EXPECT_TRUE(absl::IsDataLoss(d.report.status)) << d.report.status;
  EXPECT_EQ(d.report.error_offset, 68u);  // the first bad line
  EXPECT_EQ(d.report.events_read, 10u);
  EXPECT_EQ(d.report.dropped[formats::DropReason::kMalformed], 1u);
  EXPECT_EQ(d.report.dropped[formats::DropReason::kNotAnObject], 1u);
  EXPECT_EQ(d.report.dropped[formats::DropReason::kMissingTs], 1u);
  EXPECT_EQ(d.report.dropped[formats::DropReason::kBadTs], 2u);
  EXPECT_EQ(d.report.dropped[formats::DropReason::kMissingKind], 1u);
  EXPECT_EQ(d.report.dropped[formats::DropReason::kBadDur], 1u);
  EXPECT_EQ(d.report.dropped[formats::DropReason::kTruncated], 1u);
  ASSERT_EQ(d.data->events.size(), 2u);
  EXPECT_EQ(d.report.events_read, d.data->events.size() + d.report.dropped.Total());
  // Bare NaN from Python's json.dumps becomes a string.
  EXPECT_EQ(Rest(d.data->events[1]), R"("args":{"duration_s":0.5,"norm":"NaN"})");
}

// Times past +-2^62 ns are bad timestamps, as in every other format
// (INT64_MAX was kept and wrapped under --relative-time); 2^62 - 1 ns fits.
TEST(RunEventLogDecoder, TimesPastTheRangeAreBadTimestamps) {
  Decoded d = Decode(
      "{\"time\": -9223372036.854775808, \"kind\": \"x\", \"rank\": 1}\n"
      "{\"time\": 9223372036.854775807, \"kind\": \"y\", \"rank\": 1}\n"
      "{\"time\": 4611686018.427387903, \"kind\": \"z\", \"rank\": 1}\n"
      "{\"time\": -1, \"kind\": \"w\", \"rank\": 1, \"data\": {\"duration_s\": 4611686018.427387903}}\n");
  EXPECT_EQ(d.report.events_read, 4u);
  EXPECT_EQ(d.report.dropped[formats::DropReason::kBadTs], 2u);
  EXPECT_EQ(d.report.dropped[formats::DropReason::kBadDur], 1u);
  ASSERT_EQ(d.data->events.size(), 1u);
  EXPECT_EQ(d.data->events[0].ts_ns, 4611686018427387903);
}

TEST(RunEventLogDecoder, NotARunEventLog) {
  Decoded d = Decode("{\"a\": 1}\n{\"b\": 2}\n");
  EXPECT_TRUE(absl::IsInvalidArgument(d.report.status)) << d.report.status;
  EXPECT_EQ(d.report.events_read, 0u);
  EXPECT_TRUE(d.data->events.empty());
}

// The README's example: 3 rounds, 4 workers, worker 2 fails in round 2.
TEST(RunEventLogExample, ConvertsToTraceAndReport) {
  const std::string out = testing::ScratchDir();
  auto s = testing::Convert({testing::SourcePath("cluster-examples/run-event-log/example.jsonl")}, out);
  EXPECT_EQ(s.exit_code, 0);
  ASSERT_EQ(s.inputs.size(), 1u);
  EXPECT_EQ(s.inputs[0].format, "run_event_log");
  EXPECT_EQ(s.inputs[0].events_read, 41u);
  EXPECT_EQ(s.inputs[0].events_written, 41u);

  // The trace: one process per actor, the failed exec marked.
  simdjson::dom::parser parser;
  simdjson::dom::element trace = parser.load(out + "/unranked.trace.json");
  int failed = 0, x = 0, names = 0;
  for (simdjson::dom::element e : trace["traceEvents"].get_array()) {
    std::string_view ph = e["ph"].get_string();
    if (ph == "X") ++x;
    if (ph == "M" && std::string_view(e["name"].get_string()) == "process_name") ++names;
    simdjson::dom::element cname;
    if (!e["cname"].get(cname)) {
      ++failed;
      EXPECT_EQ(std::string_view(cname.get_string()), "terrible");
      EXPECT_EQ(std::string_view(e["name"].get_string()), "exec");
      EXPECT_TRUE(bool(e["args"]["failed"].get_bool()));
      EXPECT_EQ(int64_t(e["args"]["exit_code"].get_int64()), 1);
    }
  }
  EXPECT_EQ(failed, 1);
  EXPECT_EQ(names, 5);  // scheduler + 4 workers
  EXPECT_EQ(x, 35);     // 41 lines - 3 round_start - 3 round_end

  const std::string html = ReadText(out + "/report.html");
  EXPECT_EQ(AllMatches(html, "<td class=\"n surv\">([0-9]+/[0-9]+)</td>"),
            (std::vector<std::string>{"4/4", "3/4", "3/4"}));
  EXPECT_EQ(Card(html, "rounds"), "3");
  EXPECT_EQ(Card(html, "bytes-pushed"), "41943040");  // 10 pushes x 4 MiB
  EXPECT_EQ(Card(html, "bytes-pulled"), "46137344");  // 11 pulls x 4 MiB
  // Worker 2 is drawn dead from its failure (12.6 s, 12.1 s after the first event).
  EXPECT_NE(html.find("example.jsonl \xC2\xB7 worker 2: dead from +12.1 s"), std::string::npos);
  EXPECT_NE(html.find("<tr class=\"dead\" data-kind=\"failed\"><td>example.jsonl \xC2\xB7 worker 2</td>"),
            std::string::npos);
  EXPECT_NE(html.find("exec exit_code 1: RuntimeError: CUDA error: an illegal memory access was encountered"),
            std::string::npos);
  // Round bars on the scheduler row carry survivors/total.
  EXPECT_EQ(testing::Count(html, "<rect class=\"rd\""), 3u);
  // Stragglers among workers: worker 3 is the slowest of every round, by
  // 600 ms (+8.89 %), 1 s (+15.75 %) and 2 s (+30.53 %): beyond 5 % and 1 ms,
  // so it is each round's straggler (issue 21's threshold).
  const char* lags[] = {"+8.89%", "+15.75%", "+30.53%"};
  for (int round = 1; round <= 3; ++round) {
    std::string row = testing::StragglerRow(html, round);
    EXPECT_NE(row.find("<td class=\"who slow\" title=\"straggler of this step\">worker 3</td>"), std::string::npos)
        << row;
    EXPECT_NE(row.find(absl::StrCat("<td class=\"n\">", lags[round - 1], "</td>")), std::string::npos) << row;
  }
  EXPECT_EQ(testing::Count(html, "<rect class=\"slow\""), 3u);
}

}  // namespace
}  // namespace tracemill
