// Building blocks of the report: seconds -> ns, step names, the step hook,
// JSON Lines sniffing, HTML escaping and number formatting.
#include <string>

#include "formats/chrome/tef_decoder.h"
#include "formats/common/timeline.h"
#include "formats/common/ts_text.h"
#include "formats/detect.h"
#include "gtest/gtest.h"
#include "report/html_text.h"

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
  for (int64_t k = formats::kMaxStepsPerTrack + 3; k > 0; --k) s.push_back({k, k * 10, k * 10 + 5});
  EXPECT_EQ(formats::NormalizeSteps(&s), 3u);
  ASSERT_EQ(s.size(), formats::kMaxStepsPerTrack);
  EXPECT_EQ(s.front().step, 1);
  EXPECT_EQ(s.back().step, static_cast<int64_t>(formats::kMaxStepsPerTrack));
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
  EXPECT_EQ(report::FormatCount(9575), "9,575");
  EXPECT_EQ(report::FormatCount(0), "0");
  EXPECT_EQ(report::FormatCount(1234567), "1,234,567");
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
  EXPECT_EQ(report::FormatPercent(49000, 101000), "+48.51%");
  EXPECT_EQ(report::FormatPercent(-1, 1000000), "-0.00%");
  EXPECT_EQ(report::FormatPercent(1, 0), "");
  EXPECT_EQ(report::TruncateUtf8("ab\xC2\xB7\xC2\xB7", 3), "ab\xE2\x80\xA6");
}

}  // namespace
}  // namespace tracemill
