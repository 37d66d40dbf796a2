// Building blocks of the report: seconds -> ns, step names, the step hook,
// JSON Lines sniffing, HTML escaping and number formatting.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "formats/chrome/tef_decoder.h"
#include "formats/common/timeline.h"
#include "formats/common/ts_text.h"
#include "formats/detect.h"
#include "gtest/gtest.h"
#include "formats/common/stats.h"
#include "report/analysis.h"
#include "report/html_text.h"
#include "report/run_model.h"

namespace tracemill {
namespace {

using formats::FormatId;

TEST(ParseSecondsToNanos, ExactDecimal) {
  EXPECT_EQ(formats::ParseSecondsToNanos("12.000250001"), 12000250001);
  EXPECT_EQ(formats::ParseSecondsToNanos("0.5"), 500000000);
  EXPECT_EQ(formats::ParseSecondsToNanos("29.25"), 29250000000);
  EXPECT_EQ(formats::ParseSecondsToNanos("1e-9"), 1);
  EXPECT_EQ(formats::ParseSecondsToNanos("-0.25"), -250000000);
  EXPECT_EQ(formats::ParseSecondsToNanos("7"), 7000000000);
  // A double would print 0.1 + 0.2 as 0.30000000000000004; the text is exact.
  EXPECT_EQ(formats::ParseSecondsToNanos("0.30000000000000004"), 300000000);
  // Half up on the tenth fraction digit.
  EXPECT_EQ(formats::ParseSecondsToNanos("1.0000000005"), 1000000001);
  EXPECT_EQ(formats::ParseSecondsToNanos("1.0000000004"), 1000000000);
}

TEST(ParseSecondsToNanos, Rejects) {
  EXPECT_FALSE(formats::ParseSecondsToNanos("abc"));
  EXPECT_FALSE(formats::ParseSecondsToNanos(""));
  EXPECT_FALSE(formats::ParseSecondsToNanos("1."));
  EXPECT_FALSE(formats::ParseSecondsToNanos("9300000000"));  // > int64 ns (year 2262)
  // Microseconds are unchanged by the shared parser.
  EXPECT_EQ(formats::ParseMicrosToNanos("1682725897226747.123"), 1682725897226747123);
}

TEST(MatchStepName, KnownPrefixes) {
  EXPECT_EQ(formats::MatchStepName("ProfilerStep#551"), 551);
  EXPECT_EQ(formats::MatchStepName("ProfileStep#2"), 2);
  EXPECT_EQ(formats::MatchStepName("Step:3"), 3);
  EXPECT_FALSE(formats::MatchStepName("ProfilerStep#"));
  EXPECT_FALSE(formats::MatchStepName("ProfilerStep#5x"));
  EXPECT_FALSE(formats::MatchStepName("ProfilerStep#1</title><script>"));
  EXPECT_FALSE(formats::MatchStepName("aten::mm"));
  EXPECT_FALSE(formats::MatchStepName("ProfilerStep#99999999999999999999"));
}

TEST(NormalizeSteps, SortsAndMergesSameStep) {
  std::vector<formats::StepSpan> s = {{5, 100, 200}, {4, 0, 50}, {5, 90, 150}};
  EXPECT_EQ(formats::NormalizeSteps(&s), 0u);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].step, 4);
  EXPECT_EQ(s[1].start_ns, 90);
  EXPECT_EQ(s[1].end_ns, 200);
}

TEST(NormalizeSteps, KeepsTheFirstStepsUpToTheCap) {
  std::vector<formats::StepSpan> s;
  for (int64_t k = formats::kMaxStepsKept + 3; k > 0; --k) s.push_back({k, k * 10, k * 10 + 5});
  EXPECT_EQ(formats::NormalizeSteps(&s), 3u);
  ASSERT_EQ(s.size(), formats::kMaxStepsKept);
  EXPECT_EQ(s.front().step, 1);
  EXPECT_EQ(s.back().step, static_cast<int64_t>(formats::kMaxStepsKept));
}

// The hook in TraceBuilder: CPU-side `ProfilerStep#N` X events become steps,
// with the time base applied; the GPU copy (gpu_user_annotation) is ignored.
TEST(StepHook, KinetoStepsWithBaseTime) {
  std::string json = R"({"baseTimeNanoseconds": 1000000000, "traceEvents": [
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#7","pid":1,"tid":1,"ts":10.5,"dur":100.25},
    {"ph":"X","cat":"gpu_user_annotation","name":"ProfilerStep#7","pid":0,"tid":7,"ts":11,"dur":500},
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":12,"dur":3},
    {"ph":"i","name":"ProfilerStep#9","pid":1,"tid":1,"ts":20},
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#6","pid":1,"tid":1,"ts":0,"dur":10}
  ]})";
  json.reserve(json.size() + 64);
  formats::TefDecoder decoder;
  formats::TraceBuilder builder;
  formats::DecodeReport rep = decoder.Decode(json, json.capacity(), &builder);
  ASSERT_TRUE(rep.status.ok()) << rep.status;
  auto data = builder.Finish();
  ASSERT_EQ(data->timeline.steps.size(), 2u);
  EXPECT_EQ(data->timeline.steps[0].step, 6);
  EXPECT_EQ(data->timeline.steps[0].start_ns, 1000000000);
  EXPECT_EQ(data->timeline.steps[1].step, 7);
  EXPECT_EQ(data->timeline.steps[1].start_ns, 1000010500);
  EXPECT_EQ(data->timeline.steps[1].end_ns, 1000110750);
}

TEST(Sniff, JsonLines) {
  EXPECT_EQ(formats::Sniff("{\"time\":1}\n{\"time\":2}\n"), FormatId::kJsonLines);
  EXPECT_EQ(formats::Sniff("{\"a\":1}\r\n\r\n  {\"b\":2}"), FormatId::kJsonLines);
  EXPECT_EQ(formats::Sniff("\xEF\xBB\xBF{\"a\":\"x\\ny\"} \n{"), FormatId::kJsonLines);
  // One object, or a first object that spans lines: JSON Object Format.
  EXPECT_EQ(formats::Sniff("{\"traceEvents\":[]}\n"), FormatId::kTraceEventObject);
  EXPECT_EQ(formats::Sniff("{\n\"traceEvents\":[]}\n{"), FormatId::kTraceEventObject);
  EXPECT_EQ(formats::Sniff("{\"traceEvents\":[{}]}\n[1]"), FormatId::kTraceEventObject);
  EXPECT_EQ(formats::Sniff("{\"traceEvents\":[{"), FormatId::kTraceEventObject);
  // Only the first line is walked: a first value that a newline inside a
  // string (not valid JSON) or a newline between its tokens cuts, a first
  // line past 64 KiB, a first value followed by another on its line.
  EXPECT_EQ(formats::Sniff("{\"a\":\"x\ny\"}\n{\"b\":1}"), FormatId::kTraceEventObject);
  EXPECT_EQ(formats::Sniff("{\"a\":\n1}\n{\"b\":1}"), FormatId::kTraceEventObject);
  EXPECT_EQ(formats::Sniff("{\"a\":\"" + std::string(70000, 'x') + "\"}\n{\"b\":1}"), FormatId::kTraceEventObject);
  EXPECT_EQ(formats::Sniff("{\"a\":\"" + std::string(65000, 'x') + "\"}\n{\"b\":1}"), FormatId::kJsonLines);
  EXPECT_EQ(formats::Sniff("{\"a\":1} {\"b\":1}\n{\"c\":1}"), FormatId::kTraceEventObject);
  EXPECT_EQ(formats::Sniff("{\"a\":1}"), FormatId::kTraceEventObject);
  EXPECT_EQ(formats::FormatName(FormatId::kJsonLines), "json_lines");
}

TEST(HtmlEscape, EscapesMarkupAndControls) {
  EXPECT_EQ(report::HtmlEscape("</title><script>alert(1)</script>"),
            "&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_EQ(report::HtmlEscape("a\"b'c&d"), "a&quot;b&#39;c&amp;d");
  EXPECT_EQ(report::HtmlEscape(std::string("x\x01y", 3)), "x\xEF\xBF\xBDy");
  EXPECT_EQ(report::HtmlEscape("rank 3 \xC2\xB7 GPU"), "rank 3 \xC2\xB7 GPU");
}

TEST(Format, NumbersAreExact) {
  EXPECT_EQ(formats::GroupedCount(9575), "9,575");
  EXPECT_EQ(formats::GroupedCount(0), "0");
  EXPECT_EQ(formats::GroupedCount(999), "999");
  EXPECT_EQ(formats::GroupedCount(1000), "1,000");
  EXPECT_EQ(formats::GroupedCount(1234567), "1,234,567");
  EXPECT_EQ(formats::GroupedCount(UINT64_MAX), "18,446,744,073,709,551,615");
  EXPECT_EQ(report::FormatSignedCount(-9575), "-9,575");
  EXPECT_EQ(report::FormatSignedCount(INT64_MIN), "-9,223,372,036,854,775,808");
  EXPECT_EQ(report::FormatBytes(999), "999 B");
  EXPECT_EQ(report::FormatBytes(244635), "244.6 kB");
  EXPECT_EQ(report::FormatBytes(41943040), "41.9 MB");
  EXPECT_EQ(report::FormatDuration(607312000), "607.312 ms");
  EXPECT_EQ(report::FormatDuration(3855500), "3.8555 ms");
  EXPECT_EQ(report::FormatDuration(1500), "1.5 \xC2\xB5s");
  EXPECT_EQ(report::FormatDuration(12), "12 ns");
  EXPECT_EQ(report::FormatDuration(2500000000), "2.5 s");
  EXPECT_EQ(report::FormatDuration(-296000), "-296 \xC2\xB5s");
  EXPECT_EQ(report::FormatShortDuration(1460123456, 3), "1.46 s");
  // Issue 21: past a minute, min, h and d, thousands separators; exact
  // durations as d h min and exact seconds.
  EXPECT_EQ(report::FormatDuration(90500000000), "1 min 30.5 s");
  EXPECT_EQ(report::FormatDuration(7200000000000), "2 h");
  EXPECT_EQ(report::FormatDuration(7205000000000), "2 h 0 min 5 s");
  EXPECT_EQ(report::FormatDuration(1700000000000000000), "19,675 d 22 h 13 min 20 s");
  EXPECT_EQ(report::FormatDuration(-1234567000000), "-20 min 34.567 s");
  EXPECT_EQ(report::FormatShortDuration(90500000000), "1.508 min");
  EXPECT_EQ(report::FormatShortDuration(7205000000000), "2.001 h");
  // The span card of a job that mixes relative and epoch times (issue 21
  // showed "59862498.23...").
  EXPECT_EQ(report::FormatShortDuration(1690531200080600000 - 120000), "19,566.333 d");
  EXPECT_EQ(report::FormatShortDuration(59862498230000000), "692.853 d");
  EXPECT_EQ(report::FormatPercent(49000, 101000), "+48.51%");
  EXPECT_EQ(report::FormatPercent(-1, 1000000), "-0.00%");
  EXPECT_EQ(report::FormatPercent(1, 0), "");
  EXPECT_EQ(report::FormatShare(5356, 10000), "53.56%");
  EXPECT_EQ(report::FormatShare(1, 3), "33.33%");
  EXPECT_EQ(report::FormatShare(2, 3), "66.67%");
  EXPECT_EQ(report::FormatShare(0, 7), "0.00%");
  EXPECT_EQ(report::FormatShare(INT64_MAX, INT64_MAX), "100.00%");
  EXPECT_EQ(report::FormatShare(1, 0), "");
  EXPECT_EQ(report::TruncateUtf8("ab\xC2\xB7\xC2\xB7", 3), "ab\xE2\x80\xA6");
}

std::vector<std::string> TickLabels(int64_t span_ns) {
  std::vector<std::string> v;
  for (const report::AxisTick& t : report::AxisTicks(span_ns)) v.push_back(t.label);
  return v;
}

using Labels = std::vector<std::string>;

// Issue 21: tick units fit the span; steps of 1, 2 or 5 x 10^k of that unit.
TEST(AxisTicks, UnitsFitTheSpan) {
  EXPECT_EQ(TickLabels(50000), (Labels{"0", "+10 \xC2\xB5s", "+20 \xC2\xB5s", "+30 \xC2\xB5s", "+40 \xC2\xB5s",
                                       "+50 \xC2\xB5s"}));
  EXPECT_EQ(TickLabels(1200000000), (Labels{"0", "+0.2 s", "+0.4 s", "+0.6 s", "+0.8 s", "+1 s", "+1.2 s"}));
  EXPECT_EQ(TickLabels(3), (Labels{"0", "+1 ns", "+2 ns", "+3 ns"}));
  EXPECT_EQ(TickLabels(int64_t{150} * 60 * 1000000000),
            (Labels{"0", "+0.5 h", "+1 h", "+1.5 h", "+2 h", "+2.5 h"}));
  EXPECT_EQ(report::AxisTicks(1200000000)[1].at_ns, 200000000);
}

// A relative input beside an epoch one: 54 years of axis in days, never
// "+10000000 s"; the largest span there is stays within int64.
TEST(AxisTicks, MixedTimeBasesInDays) {
  EXPECT_EQ(TickLabels(1700000000000000000), (Labels{"0", "+5,000 d", "+10,000 d", "+15,000 d"}));
  EXPECT_EQ(TickLabels(INT64_MAX), (Labels{"0", "+20,000 d", "+40,000 d", "+60,000 d", "+80,000 d", "+100,000 d"}));
}

TEST(DropReasonFromKey, KeysAndKinds) {
  EXPECT_EQ(formats::DropReasonFromKey("bad_ts"), formats::DropReason::kBadTs);
  EXPECT_EQ(formats::DropReasonFromKey("not_selected"), formats::DropReason::kNotSelected);
  EXPECT_EQ(formats::DropReasonFromKey("no_such_reason"), std::nullopt);
  for (int k = 0; k < formats::kNumDropReasons; ++k) {
    const auto r = static_cast<formats::DropReason>(k);
    EXPECT_EQ(formats::DropReasonFromKey(formats::DropReasonKey(r)), r);
  }
  EXPECT_EQ(report::DropKindOfKey("window"), formats::DropKind::kDesign);
  EXPECT_EQ(report::DropKindOfKey("truncated"), formats::DropKind::kLoss);
  EXPECT_EQ(report::DropKindOfKey("from_a_newer_version"), formats::DropKind::kLoss);
}

// A row with more steps than fit draws bins of consecutive steps: the first
// step of the bin to the last, earliest start to latest end, the largest
// lag, highlighted if any step is; rows that fit keep a bar per step with
// its median. Two ranks: 12,000 / 2 rows caps a row at 200 bars, so rank 0's
// 1,000 steps make bins of 5 and rank 1's 150 steps stay.
TEST(Analyze, BinsRowsWithMoreStepsThanFit) {
  report::RunModel m;
  m.gpus_per_node = 8;
  for (int r = 0; r < 2; ++r) {
    report::InputModel in;
    in.path = r == 0 ? "rank0.json" : "rank1.json";
    in.rank = r;
    const int n = r == 0 ? 1000 : 150;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t dur = (r == 0 && k == 3) ? 100'000'000 : 10'000'000;
      in.timeline.steps.push_back({k, k * 200'000'000, k * 200'000'000 + dur});
    }
    in.span_ns = std::make_pair(int64_t{0}, n * int64_t{200'000'000});
    m.inputs.push_back(std::move(in));
  }
  const report::Analysis a = report::Analyze(m);
  ASSERT_EQ(a.rows.size(), 2u);
  EXPECT_TRUE(a.binned);
  const auto& bins = a.rows[0].bars;
  ASSERT_EQ(bins.size(), 200u);
  EXPECT_EQ(bins[0].first_step, 0);
  EXPECT_EQ(bins[0].last_step, 4);
  EXPECT_EQ(bins[0].start_ns, 0);
  EXPECT_EQ(bins[0].end_ns, 4 * 200'000'000 + 10'000'000);
  EXPECT_EQ(bins[0].median_ns, -1);
  EXPECT_EQ(bins[0].lag_ns, 45'000'000);  // step 3: 100 ms against a median of 55 ms
  EXPECT_TRUE(bins[0].slowest);
  EXPECT_EQ(bins[199].first_step, 995);
  EXPECT_EQ(bins[199].last_step, 999);
  EXPECT_EQ(bins[199].end_ns, 999 * int64_t{200'000'000} + 10'000'000);
  EXPECT_FALSE(bins[199].slowest);
  const auto& bars = a.rows[1].bars;
  ASSERT_EQ(bars.size(), 150u);
  EXPECT_EQ(bars[3].first_step, 3);
  EXPECT_EQ(bars[3].last_step, 3);
  EXPECT_EQ(bars[3].median_ns, 55'000'000);
  EXPECT_EQ(bars[3].lag_ns, -45'000'000);
  EXPECT_FALSE(bars[3].slowest);
  EXPECT_EQ(bars[149].start_ns, 149 * int64_t{200'000'000});
}

// A rank's input with one step per (start, duration), epoch times.
report::InputModel RankWithSteps(int rank, const std::vector<std::pair<int64_t, int64_t>>& steps) {
  report::InputModel in;
  in.path = "rank" + std::to_string(rank) + ".json";
  in.rank = rank;
  for (size_t k = 0; k < steps.size(); ++k)
    in.timeline.steps.push_back({static_cast<int64_t>(k), steps[k].first, steps[k].first + steps[k].second});
  in.span_ns = std::make_pair(steps.front().first, steps.back().first + steps.back().second);
  return in;
}

// Issue 35: a step with collectives takes its straggler from them (the
// late rank 2 has the shortest step 0; rank 0, which waited, the longest);
// step 1, without collectives, keeps the step-length rule.
TEST(Analyze, CollectivesNameTheStepsStraggler) {
  constexpr int64_t t = 1'700'000'000'000'000'000;
  report::RunModel m;
  m.gpus_per_node = 8;
  m.inputs.push_back(RankWithSteps(0, {{t, 12'000'000}, {t + 20'000'000, 10'000'000}}));
  m.inputs.push_back(RankWithSteps(1, {{t, 10'500'000}, {t + 20'000'000, 10'000'000}}));
  m.inputs.push_back(RankWithSteps(2, {{t, 10'000'000}, {t + 20'000'000, 14'000'000}}));
  m.tables.present = true;
  m.tables.collectives.present = true;
  m.tables.collectives.steps.push_back({0, 2, 3'000'000, 2, 2});
  const report::Analysis a = report::Analyze(m);
  ASSERT_EQ(a.stragglers.size(), 2u);
  const report::StepStragglers& s0 = a.stragglers[0];
  EXPECT_TRUE(s0.by_collectives);
  EXPECT_TRUE(s0.straggler);
  EXPECT_EQ(s0.late_label, "rank 2");
  EXPECT_EQ(s0.late_ns, 3'000'000);
  EXPECT_EQ(s0.slowest.front().label, "rank 0");  // the longest step, not the straggler
  EXPECT_FALSE(a.stragglers[1].by_collectives);
  EXPECT_TRUE(a.stragglers[1].straggler);
  EXPECT_EQ(a.stragglers[1].slowest.front().label, "rank 2");
  EXPECT_EQ(a.steps_with_straggler, 2u);
  // Timeline marks: rank 2's step 0 (collectives) and step 1 (longest).
  ASSERT_EQ(a.rows.size(), 3u);
  EXPECT_FALSE(a.rows[0].bars[0].slowest);
  EXPECT_TRUE(a.rows[2].bars[0].slowest);
  EXPECT_TRUE(a.rows[2].bars[1].slowest);
}

// Issue 35: inputs of two runs (a day apart) are compared within their run
// only: run 2's slower steps make no straggler of run 1's ranks.
TEST(Analyze, DifferentRunsAreComparedApart) {
  constexpr int64_t t = 1'700'000'000'000'000'000, day = 86'400'000'000'000;
  report::RunModel m;
  m.gpus_per_node = 8;
  m.inputs.push_back(RankWithSteps(0, {{t, 10'000'000}}));
  m.inputs.push_back(RankWithSteps(1, {{t, 10'000'000}}));
  m.inputs.push_back(RankWithSteps(0, {{t + day, 20'000'000}}));
  m.inputs.push_back(RankWithSteps(1, {{t + day, 20'100'000}}));
  const report::Analysis a = report::Analyze(m);
  ASSERT_EQ(a.stragglers.size(), 2u);
  EXPECT_EQ(a.stragglers[0].group, "run 1");
  EXPECT_EQ(a.stragglers[1].group, "run 2");
  EXPECT_EQ(a.stragglers[0].median_ns, 10'000'000);
  EXPECT_EQ(a.steps_with_straggler, 0u);
  EXPECT_EQ(a.steps_seen, 1);
  EXPECT_EQ(a.runs, 2);
}

// More than 5 % and more than 1 ms behind the median, both.
TEST(IsStraggler, BothThresholds) {
  EXPECT_TRUE(report::IsStraggler(5000000, 50000000));     // 10 %, 5 ms
  EXPECT_FALSE(report::IsStraggler(150000, 600150000));    // 0.025 %, 150 µs
  EXPECT_FALSE(report::IsStraggler(900000, 10000000));     // 9 %, 0.9 ms
  EXPECT_FALSE(report::IsStraggler(4000000, 100000000));   // 4 %, 4 ms
  EXPECT_FALSE(report::IsStraggler(2500000, 50000000));    // exactly 5 %
  EXPECT_TRUE(report::IsStraggler(2500001, 50000000));
  EXPECT_FALSE(report::IsStraggler(1000000, 1000));        // exactly 1 ms
}

}  // namespace
}  // namespace tracemill
