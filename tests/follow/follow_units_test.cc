// Building blocks of `convert --follow` (pipeline/follow/): durations,
// window names, the by-start window rule, what a probe says of files still
// being written, the cumulative manifest's state over many windows, and the
// job-wide tables.sqlite (--tables) as windows are appended, redone and
// resumed.
#include <sys/stat.h>

#include <array>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/schema.h"
#include "formats/common/time_window.h"
#include "formats/common/trace_data.h"
#include "formats/smdebug/system_metrics_decoder.h"
#include "formats/smdebug/system_metrics_format.h"
#include "formats/sqlite/sqlite_writer.h"
#include "gtest/gtest.h"
#include "pipeline/follow/cumulative.h"
#include "pipeline/follow/duration.h"
#include "pipeline/follow/job_tables.h"
#include "pipeline/follow/probe.h"
#include "pipeline/follow/step_history.h"
#include "pipeline/follow/window_plan.h"
#include "pipeline/follow/window_writer.h"
#include "tests/tables/tables_test_util.h"
#include "tests/testing/convert_harness.h"

namespace tracemill::pipeline::follow {
namespace {

TEST(FollowDuration, ParsesTermsIntoNanoseconds) {
  EXPECT_EQ(ParseDuration("30s"), 30'000'000'000);
  EXPECT_EQ(ParseDuration("5m"), 300'000'000'000);
  EXPECT_EQ(ParseDuration("1h30m"), 5'400'000'000'000);
  EXPECT_EQ(ParseDuration("250ms"), 250'000'000);
  EXPECT_EQ(ParseDuration("2d"), 172'800'000'000'000);
  EXPECT_EQ(ParseDuration("1m30s"), 90'000'000'000);
  EXPECT_EQ(ParseDuration("0"), 0);
  EXPECT_EQ(ParseDuration("15us"), 15'000);
}

TEST(FollowDuration, RejectsWhatIsNotADuration) {
  for (const char* bad : {"", "30", "s", "1.5s", "-1s", "5x", "1h 30m", "99999999999999999999s", "106752d"})
    EXPECT_FALSE(ParseDuration(bad).has_value()) << bad;
}

TEST(FollowDuration, WritesItBack) {
  EXPECT_EQ(DurationText(60'000'000'000), "1m");
  EXPECT_EQ(DurationText(5'400'000'000'000), "1h30m");
  EXPECT_EQ(DurationText(250'000'000), "250ms");
  EXPECT_EQ(DurationText(0), "0s");
}

TEST(FollowWindowName, WholeSecondsAndMicroseconds) {
  // 1700000000 s is 2023-11-14T22:13:20Z.
  const int64_t t0 = 1'700'000'000'000'000'000;
  EXPECT_EQ(WindowName(t0, t0 + 60'000'000'000, false), "20231114T221320Z-20231114T221420Z");
  EXPECT_EQ(WindowName(t0, t0 + 500'000'000, false), "20231114T221320.000000Z-20231114T221320.500000Z");
  // Cycles: the start rounded down to the µs, the end up.
  EXPECT_EQ(WindowName(t0 + 1'500, t0 + 2'000'001, true), "20231114T221320.000001Z-20231114T221320.002001Z");
  EXPECT_EQ(LateWindowName(1), "late-0001");
  EXPECT_EQ(LateWindowName(12), "late-0012");
}

formats::Event TimedEvent(char phase, int64_t ts, int64_t dur, uint8_t extra_flags) {
  formats::Event e{};
  e.phase = phase;
  e.ts_ns = ts;
  e.dur_ns = dur;
  e.flags = static_cast<uint8_t>(formats::kHasTs | extra_flags);
  return e;
}

TEST(FollowTimeWindow, KeepsEventsByStartEndExcluded) {
  formats::TimeWindow w;
  w.start_ns = 1000;
  w.end_ns = 2000;
  w.by_start = true;
  EXPECT_TRUE(w.Keeps(TimedEvent('X', 1000, 5000, formats::kHasDur)));   // starts at the start: in
  EXPECT_FALSE(w.Keeps(TimedEvent('X', 2000, 1, formats::kHasDur)));     // starts at the end: the next one's
  EXPECT_FALSE(w.Keeps(TimedEvent('X', 999, 5000, formats::kHasDur)));   // overlaps, but started before
  EXPECT_TRUE(w.Keeps(TimedEvent('B', 1999, 9000, formats::kHasSpan)));  // a pair goes with its B
  EXPECT_TRUE(w.Keeps(TimedEvent('E', 2500, 600, formats::kHasSpan)));   // ... and so does its E
  EXPECT_FALSE(w.Keeps(TimedEvent('E', 2500, 400, formats::kHasSpan)));
  formats::Event meta{};
  meta.phase = 'M';
  EXPECT_TRUE(w.Keeps(meta));  // metadata: in every window
  // Two consecutive windows keep every start exactly once.
  formats::TimeWindow next = w;
  next.start_ns = 2000;
  next.end_ns = 3000;
  for (int64_t ts = 900; ts < 3100; ts += 50) {
    const formats::Event e = TimedEvent('i', ts, 0, 0);
    const int in = static_cast<int>(w.Keeps(e)) + static_cast<int>(next.Keeps(e));
    EXPECT_EQ(in, ts >= 1000 && ts < 3000 ? 1 : 0) << ts;
  }
}

// Low-GPU slices derived from system metrics are cut at a follow window's
// edges: a run crossing one is one slice per window, and none overlaps.
TEST(FollowLowGpuSlices, RunsAreCutAtTheWindowEdges) {
  std::string text;
  for (int s = 0; s < 6; ++s)  // low from 1 s to 4 s, high at 0 and 5
    text += "{\"Type\":\"gpu\",\"Name\":\"gpu0\",\"Dimension\":\"GPUUtilization\",\"Value\":" +
            std::string(s == 0 || s == 5 ? "95" : "10") + ",\"Timestamp\":" + std::to_string(1700000000 + s) + "}\n";
  const size_t size = text.size();
  text.resize(size + 64, '\0');  // simdjson's padding
  auto slices = [&](std::array<int64_t, 2> cuts) {
    formats::TraceBuilder b;
    formats::DecodeSystemMetricsFile("1700000000.algo-1.json", std::string_view(text.data(), size), text.size(), 85,
                                     &b, cuts);
    std::vector<std::pair<int64_t, int64_t>> out;  // (start, end) in s after T0
    const std::unique_ptr<formats::TraceData> data = b.Finish();
    for (const formats::Event& e : data->events)
      if (e.phase == 'X')
        out.push_back({(e.ts_ns - 1'700'000'000'000'000'000) / 1'000'000'000,
                       (e.ts_ns + e.dur_ns - 1'700'000'000'000'000'000) / 1'000'000'000});
    return out;
  };
  using Spans = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(slices({INT64_MIN, INT64_MIN}), (Spans{{1, 5}}));  // one run, closed by the high sample
  const int64_t t0 = 1'700'000'000'000'000'000;
  EXPECT_EQ(slices({t0 + 3'000'000'000, t0 + 4'000'000'000}), (Spans{{1, 3}, {3, 4}, {4, 5}}));
  EXPECT_EQ(slices({t0, t0 + 2'000'000'000}), (Spans{{1, 2}, {2, 5}}));  // an edge before the run: no cut
}

// Issue 37, point 9: a low run crossing a window's edge ended early in
// follow mode (at the window data's last low sample, or with dur 0), and the
// next window's part began at its first low sample, not at the edge: unlike
// a one-shot convert's slice. With the node's files before and after the
// window's read as context, the windows' parts are exactly the one-shot
// slice cut at the edges. File k holds seconds k.0 and k.5; low in 2..4.
TEST(FollowLowGpuSlices, ContextFilesGiveEachWindowItsPartOfTheOneShotSlice) {
  constexpr int kFiles = 7;
  std::vector<std::string> files(kFiles);
  for (int k = 0; k < kFiles; ++k)
    for (const char* half : {".0", ".5"})
      files[static_cast<size_t>(k)] +=
          absl::StrCat("{\"Type\":\"gpu\",\"Name\":\"gpu0\",\"Dimension\":\"GPUUtilization\",\"Value\":",
                       k >= 2 && k <= 4 ? "10" : "95", ",\"Timestamp\":", 1700000000 + k, half, "}\n");
  for (auto& f : files) f.append(64, '\0');  // simdjson's padding
  const int64_t t0 = 1'700'000'000'000'000'000, s = 1'000'000'000;
  using Spans = std::vector<std::pair<int64_t, int64_t>>;  // (start, end) in ms after T0
  // Window k: file k, and with `context` files k - 1 and k + 1.
  auto window = [&](int k, bool context) {
    formats::TraceBuilder b;
    formats::SystemMetricsDecoder dec(&b, 85);
    dec.CutSlicesAt({t0 + k * s, t0 + (k + 1) * s});
    auto add = [&](int f, bool ctx) {
      if (f < 0 || f >= kFiles) return;
      const std::string& text = files[static_cast<size_t>(f)];
      dec.AddFile("f", std::string_view(text.data(), text.size() - 64), text.size(), ctx);
    };
    add(k, false);
    if (context) add(k - 1, true), add(k + 1, true);
    formats::DecodeReport rep;
    const uint64_t added = dec.Finish(&rep);
    const std::unique_ptr<formats::TraceData> data = b.Finish();
    Spans out;
    size_t counters = 0;
    for (const formats::Event& e : data->events) {
      if (e.phase == 'X') out.push_back({(e.ts_ns - t0) / 1'000'000, (e.ts_ns + e.dur_ns - t0) / 1'000'000});
      counters += e.phase == 'C';
    }
    EXPECT_EQ(counters, 2u) << "window " << k << ": context samples are no events";
    EXPECT_EQ(added, out.size());
    return out;
  };
  // Before: the parts end at the data's last low sample and start at the first.
  EXPECT_EQ(window(2, false), (Spans{{2000, 2500}}));
  EXPECT_EQ(window(3, false), (Spans{{3000, 3500}}));
  EXPECT_EQ(window(4, false), (Spans{{4000, 4500}}));
  // With context: the one-shot slice [2 s, 5 s) cut at the window edges.
  EXPECT_EQ(window(1, true), (Spans{}));
  EXPECT_EQ(window(2, true), (Spans{{2000, 3000}}));
  EXPECT_EQ(window(3, true), (Spans{{3000, 4000}}));
  EXPECT_EQ(window(4, true), (Spans{{4000, 5000}}));
  EXPECT_EQ(window(5, true), (Spans{}));
}

// Probes of files in a scratch folder.
class ProbeTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& bytes) {
    testing::WriteFileBytes(tmp_.Join(name), bytes);
    return tmp_.Join(name);
  }
  FileProbe Probe(const std::string& path) {
    ConvertOptions opts;
    auto ranks = RankMatcher::Create("");
    return ProbeFile(path, opts, *ranks, uint64_t{1} << 30);
  }
  testing::TempDir tmp_;
};

constexpr char kKineto[] =
    R"({"schemaVersion":1,"distributedInfo":{"rank":3,"world_size":4},"baseTimeNanoseconds":1700000000000000000,)"
    R"("traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":"10.5","dur":2},)"
    R"({"ph":"X","name":"b","pid":1,"tid":1,"ts":"2.25","dur":1},{"ph":"M","name":"process_name","pid":1,"args":{"name":"p"}}],)"
    R"("traceName":"x"})";

TEST_F(ProbeTest, CompleteKinetoFileGivesRankAndSpanOfStarts) {
  const FileProbe p = Probe(Write("worker.1.pt.trace.json", kKineto));
  EXPECT_EQ(p.result, FileProbe::Result::kComplete) << p.note;
  EXPECT_EQ(p.rank, 3);
  EXPECT_EQ(p.world_size, 4);
  EXPECT_EQ(p.events, 2u);  // the metadata record is not counted
  EXPECT_EQ(p.min_start_ns, 1'700'000'000'000'002'250);
  EXPECT_EQ(p.max_start_ns, 1'700'000'000'000'010'500);
}

TEST_F(ProbeTest, KinetoFileCutShortIsIncompleteButNamesItsRank) {
  const std::string whole = kKineto;
  for (size_t cut : {whole.find("traceEvents") + 20, whole.find("\"b\""), whole.size() - 1}) {
    const FileProbe p = Probe(Write("cut.json", whole.substr(0, cut)));
    EXPECT_EQ(p.result, FileProbe::Result::kIncomplete) << "cut at " << cut << ": " << p.note;
    EXPECT_EQ(p.rank, 3) << cut;  // distributedInfo comes first: the source is known early
  }
}

TEST_F(ProbeTest, GzipMemberWithoutItsTrailerIsIncomplete) {
  const std::string gz = testing::GzipBytes(kKineto);
  EXPECT_EQ(Probe(Write("w.pt.trace.json.gz", gz)).result, FileProbe::Result::kComplete);
  const FileProbe cut = Probe(Write("cut.pt.trace.json.gz", gz.substr(0, gz.size() - 8)));
  EXPECT_EQ(cut.result, FileProbe::Result::kIncomplete) << cut.note;
}

TEST_F(ProbeTest, EmptyFileAndTextAreNotTraces) {
  EXPECT_EQ(Probe(Write("empty.json", "")).result, FileProbe::Result::kNotTrace);
  EXPECT_EQ(Probe(Write("README.md", "# notes\nnot a trace\n")).result, FileProbe::Result::kNotTrace);
}

// ---------------- the cumulative manifest over a long job ----------------

constexpr int kNodes = 16;
constexpr int kStepsPerWindow = 500;
constexpr uint64_t kEventsPerWindow = 3200;

// WindowOfSmdebugJob: window `w`'s summary as its convert gives it for a
// 16-node smdebug job: per node a framework record (kStepsPerWindow steps,
// numbered on from the window before) and a system record, one output per
// node, and a warning and a notice that name the window.
RunSummary WindowOfSmdebugJob(int w) {
  RunSummary s;
  s.group_by = "node";
  s.gpus_per_node = 1;
  for (int n = 0; n < kNodes; ++n) {
    OutputRecord o;
    o.path = absl::StrCat("node", n, ".trace.json");
    o.ranks = {n};
    o.events = 200;
    for (const char* kind : {"framework", "system"}) {
      InputRecord r;
      r.path = absl::StrCat("/job/", kind, " [node ", 1000 + n, "_000", n, "]");
      r.format = absl::StrCat("smdebug_", kind);
      r.rank = n;
      r.label = absl::StrCat("rank ", n, " (", 1000 + n, "_000", n, ")");
      r.output = o.path;
      r.events_read = r.events_written = 100;
      r.warnings.push_back(absl::StrCat("window ", w, ": 4 nameless E events named after their B"));
      for (int k = 0; kind[0] == 'f' && k < kStepsPerWindow; ++k) {
        const int64_t step = int64_t{w} * kStepsPerWindow + k;
        r.timeline.steps.push_back({step, step * 1'000'000, step * 1'000'000 + 900'000});
      }
      o.inputs.push_back(r.path);
      s.inputs.push_back(std::move(r));
    }
    s.outputs.push_back(std::move(o));
  }
  s.notices.push_back(absl::StrCat("window ", w, ": a notice"));
  return s;
}

// FollowCumulative: a follow job's cumulative state over a fresh OUTDIR
// (`tmp`), the report not written.
class FollowCumulative : public ::testing::Test {
 protected:
  static ConvertOptions Options(const testing::TempDir& dir) {
    ConvertOptions o;
    o.follow = FollowOptions{};
    o.out_dir = dir.path();
    o.write_report = false;
    return o;
  }
  testing::TempDir tmp;
  ConvertOptions opts = Options(tmp);
  CumulativeManifest cumulative{opts};
};

// The state a follow job keeps for OUTDIR/manifest.json stays bounded as
// steps come: after 100 windows (50,000 steps a node, every 16th kept) and
// after 200 (every 32nd) it holds the same bytes, each node's 3,125 kept
// steps delta-coded (StepHistory), warnings and notices 20 each.
TEST_F(FollowCumulative, KeptStateStaysBoundedAsStepsCome) {
  size_t kept_after_100 = 0;
  for (int w = 0; w < 200; ++w) {
    const int64_t start = (int64_t{1'700'000'000} + 60 * w) * 1'000'000'000;
    cumulative.Add(FollowWindow{absl::StrCat("window-", 1000 + w), start, start + 60'000'000'000, false},
                   WindowOfSmdebugJob(w), kEventsPerWindow);
    if (w == 99) kept_after_100 = cumulative.KeptBytes();
  }
  EXPECT_EQ(cumulative.KeptBytes(), kept_after_100);
  // Each node's 3,125 kept steps, 10 bytes each (step +32 in 1, a 31.1 ms
  // gap in 4, a 0.9 ms duration in 3, survivors and total in 1 each), the
  // first a few more: under a third of 16 x 4,096 StepSpans.
  const size_t steps_bytes = kNodes * 3125 * 10;
  EXPECT_GT(cumulative.KeptBytes(), steps_bytes);
  EXPECT_LT(cumulative.KeptBytes(), steps_bytes + (128 << 10));
  EXPECT_LT(cumulative.KeptBytes(), kNodes * formats::kMaxStepsPerTrack * sizeof(formats::StepSpan) / 3);

  // Written (the records lent to the summary and given back), twice.
  ASSERT_TRUE(cumulative.Write("following", 1.0, 2).ok());
  ASSERT_TRUE(cumulative.Write("following", 1.0, 2).ok());
  EXPECT_EQ(cumulative.KeptBytes(), kept_after_100);
  auto m = testing::Manifest::Load(tmp.Join("manifest.json"));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->Int("/follow/windows"), 200);
  EXPECT_EQ(m->Int("/follow/events"), 200 * static_cast<int64_t>(kEventsPerWindow));
  EXPECT_EQ(m->ArraySize("/inputs"), 2u * kNodes);
  EXPECT_EQ(m->ArraySize("/outputs"), static_cast<size_t>(kNodes));
  EXPECT_EQ(m->ArraySize("/notices"), 20u);
  const int fw = m->InputIndex("/job/framework [node 1003_0003]");
  // Every 32nd step of the whole run, as a batch convert lists them.
  EXPECT_EQ(m->ArraySize(testing::Manifest::InputPointer(fw, "/steps")), 3125u);
  EXPECT_EQ(m->Int(testing::Manifest::InputPointer(fw, "/steps_stride")), 32);
  EXPECT_EQ(m->Int(testing::Manifest::InputPointer(fw, "/steps/0/0")), 0);
  EXPECT_EQ(m->Int(testing::Manifest::InputPointer(fw, "/steps/3124/0")), 200 * kStepsPerWindow - 32);
  EXPECT_EQ(m->Int(testing::Manifest::InputPointer(fw, "/steps_dropped")), 200 * kStepsPerWindow - 3125);
  EXPECT_EQ(m->ArraySize(testing::Manifest::InputPointer(fw, "/warnings")), 20u);
  EXPECT_EQ(m->Int(testing::Manifest::InputPointer(fw, "/events_written")), 200 * 100);
}

// UnrankedWindow: a window with one unranked record per path in `paths`,
// each with 100 events and, if `steps`, two steps numbered from 2w.
RunSummary UnrankedWindow(int w, const std::vector<std::string>& paths, bool steps) {
  RunSummary s;
  s.group_by = "rank";
  for (const std::string& path : paths) {
    InputRecord r;
    r.path = path;
    r.format = "kineto";
    r.label = path.substr(path.rfind('/') + 1);
    r.events_read = r.events_written = 100;
    for (int k = 0; steps && k < 2; ++k) {
      const int64_t step = 2 * int64_t{w} + k;
      r.timeline.steps.push_back({step, step * 1'000'000, step * 1'000'000 + 900'000});
    }
    s.inputs.push_back(std::move(r));
  }
  return s;
}

// A single-process PyTorch job (no rank) writes a file per cycle named by
// its Unix time in ms (tensorboard_trace_handler): one source, not a record
// per file that a week-long job would pile up; a file without such a time
// (a Horovod timeline) stays its own.
TEST_F(FollowCumulative, UnrankedPerCycleFilesAreOneSource) {
  for (int w = 0; w < 50; ++w) {
    const int64_t start = (int64_t{1'700'000'000} + 60 * w) * 1'000'000'000;
    const std::string cycle = absl::StrCat("/job/host-a_4711.", 1'700'000'000'000 + 60'000 * w, ".pt.trace.json");
    cumulative.Add(FollowWindow{absl::StrCat("window-", 1000 + w), start, start + 60'000'000'000, false},
                   UnrankedWindow(w, {cycle, "/job/horovod_timeline.json"}, true), 200);
  }
  ASSERT_TRUE(cumulative.Write("following", 1.0, 2).ok());
  auto m = testing::Manifest::Load(tmp.Join("manifest.json"));
  ASSERT_TRUE(m);
  ASSERT_EQ(m->ArraySize("/inputs"), 2u);
  const int cycles = m->InputIndex("/job/host-a_4711.1700002940000.pt.trace.json");
  ASSERT_GE(cycles, 0);
  EXPECT_EQ(m->Int(testing::Manifest::InputPointer(cycles, "/events_written")), 50 * 100);
  EXPECT_EQ(m->ArraySize(testing::Manifest::InputPointer(cycles, "/steps")), 100u);
  const int timeline = m->InputIndex("/job/horovod_timeline.json");
  ASSERT_GE(timeline, 0);
  EXPECT_EQ(m->Int(testing::Manifest::InputPointer(timeline, "/events_written")), 50 * 100);
}

// Unranked sources past 4,096 (files named without a Unix time) fold into
// one record, which says so: the state stays bounded.
TEST_F(FollowCumulative, UnrankedSourcesPastTheCapFoldIntoOne) {
  std::vector<std::string> paths;
  for (int k = 0; k < 4100; ++k) paths.push_back(absl::StrCat("/job/t", k, ".json"));
  const int64_t start = int64_t{1'700'000'000} * 1'000'000'000;
  cumulative.Add(FollowWindow{"window-1", start, start + 60'000'000'000, false}, UnrankedWindow(0, paths, false),
                 4100 * 100);
  const size_t kept = cumulative.KeptBytes();
  cumulative.Add(FollowWindow{"window-2", start + 60'000'000'000, start + 120'000'000'000, false},
                 UnrankedWindow(1, {"/job/u1.json", "/job/u2.json"}, false), 200);
  EXPECT_LT(cumulative.KeptBytes(), kept + 1024);
  ASSERT_TRUE(cumulative.Write("following", 1.0, 2).ok());
  auto m = testing::Manifest::Load(tmp.Join("manifest.json"));
  ASSERT_TRUE(m);
  ASSERT_EQ(m->ArraySize("/inputs"), 4097u);
  const int rest = m->InputIndex("/job/u2.json");  // the newest file of the folded record
  ASSERT_EQ(rest, 4096);
  EXPECT_EQ(m->Int(testing::Manifest::InputPointer(rest, "/events_written")), 6 * 100);
  EXPECT_EQ(m->Str(testing::Manifest::InputPointer(rest, "/warnings/0")),
            "unranked files past the first 4096 sources of this follow job are folded into this record");
}

// Each window reads a file whole: a damaged file's lost events and error
// are counted by the first window that reads it, not again by every later
// one (the cumulative manifest said 334 lost for 9).
TEST_F(FollowCumulative, AFileReadAgainIsNotCountedAgain) {
  auto window = [](int w) {
    RunSummary s = UnrankedWindow(w, {"/job/rank0.json"}, false);
    InputRecord& r = s.inputs[0];
    r.rank = 0;
    r.events_written = 10;
    r.dropped.n[static_cast<int>(formats::DropReason::kBadTs)] = 3;
    r.dropped.n[static_cast<int>(formats::DropReason::kWindow)] = 40;
    r.events_read = 53;
    r.status = absl::DataLossError("input ends inside an event object (truncated)");
    return s;
  };
  const int64_t start = int64_t{1'700'000'000} * 1'000'000'000;
  for (int w = 0; w < 5; ++w)
    cumulative.Add(FollowWindow{absl::StrCat("window-", w), start + w * 60'000'000'000, start + (w + 1) * 60'000'000'000, false},
                   window(w), 10, w == 0 ? std::set<std::string>{} : std::set<std::string>{"/job/rank0.json"});
  ASSERT_TRUE(cumulative.Write("following", 1.0, 2).ok());
  auto m = testing::Manifest::Load(tmp.Join("manifest.json"));
  ASSERT_TRUE(m);
  ASSERT_EQ(m->ArraySize("/inputs"), 1u);
  EXPECT_EQ(m->Int("/inputs/0/events_written"), 50);
  EXPECT_EQ(m->Int("/inputs/0/dropped_by_reason/bad_ts"), 3);
  EXPECT_EQ(m->Int("/inputs/0/events_read"), 53);
  EXPECT_EQ(m->Str("/inputs/0/error/message"), "input ends inside an event object (truncated)");
}

// Issue 40, point 4: the low-GPU line ("N low GPU utilization slices
// derived ...", each window's count) was repeated once per window in the
// job's manifest (60 times a node an hour). Counted warnings fold into one
// with the counts added; others are kept once.
TEST_F(FollowCumulative, CountedWarningsAreAddedUpNotRepeated) {
  const std::string words = " low GPU utilization slices derived from GPUUtilization samples below 85% (counted as "
                            "events read)";
  const int64_t start = int64_t{1'700'000'000} * 1'000'000'000;
  for (int w = 0; w < 5; ++w) {
    RunSummary s = UnrankedWindow(w, {"/job/system [node algo-1]"}, false);
    s.inputs[0].warnings = {absl::StrCat(w + 1, words), "gpu0: a line kept once", absl::StrCat(w, "x")};
    cumulative.Add(FollowWindow{absl::StrCat("window-", w), start + w * 60'000'000'000,
                                start + (w + 1) * 60'000'000'000, false},
                   s, 10);
  }
  ASSERT_TRUE(cumulative.Write("following", 1.0, 2).ok());
  auto m = testing::Manifest::Load(tmp.Join("manifest.json"));
  ASSERT_TRUE(m);
  ASSERT_EQ(m->ArraySize("/inputs"), 1u);
  EXPECT_EQ(m->Json("/inputs/0/warnings"),
            "[\"15" + words + "\",\"gpu0: a line kept once\",\"0x\",\"1x\",\"2x\",\"3x\",\"4x\"]");
}

// Issue 40, point 4: the job's INPUT BYTES counted a file once per window
// that read it (77.1 MB for a 44 MB smdebug job): a file read whole by an
// earlier window, and an smdebug node's member read again, count once.
TEST_F(FollowCumulative, AFilesBytesCountOnce) {
  const std::string a = tmp.Join("1700000000000000_1001-algo-1_pythontimeline.json");
  const std::string b = tmp.Join("1700000060000000_1001-algo-1_pythontimeline.json");
  testing::WriteFileBytes(a, std::string(1000, ' '));
  testing::WriteFileBytes(b, std::string(300, ' '));
  const int64_t start = int64_t{1'700'000'000} * 1'000'000'000;
  // Window 0 reads a; window 1 reads a again and b; window 2 reads b again.
  const std::vector<std::vector<std::string>> files = {{a}, {a, b}, {b}};
  for (int w = 0; w < 3; ++w) {
    RunSummary s = UnrankedWindow(w, {"/job/framework [node 1001-algo-1]"}, false);
    s.inputs[0].files = files[static_cast<size_t>(w)];
    s.inputs[0].bytes = w == 0 ? 1000 : w == 1 ? 1300 : 300;
    std::set<std::string> reread;
    if (w == 1) reread = {a};
    if (w == 2) reread = {b};
    cumulative.Add(FollowWindow{absl::StrCat("window-", w), start + w * 60'000'000'000,
                                start + (w + 1) * 60'000'000'000, false},
                   s, 10, reread);
  }
  ASSERT_TRUE(cumulative.Write("following", 1.0, 2).ok());
  auto m = testing::Manifest::Load(tmp.Join("manifest.json"));
  ASSERT_TRUE(m);
  ASSERT_EQ(m->ArraySize("/inputs"), 1u);
  EXPECT_EQ(m->Int("/inputs/0/bytes"), 1300);
  EXPECT_EQ(m->Int("/totals/input_bytes"), 1300);
}

// A window without any event of its own (a resumed job does not know yet
// where a file's events go on, and plans the window after the last one
// written) is not written: no folder, no journal line, so the resumed job
// makes the windows an uninterrupted one makes.
TEST(FollowWindowWriter, AWindowWithoutEventsIsNotWritten) {
  testing::TempDir tmp;
  const std::string file = tmp.Join("rank0.json");
  testing::WriteFileBytes(file,
                          "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}, \"traceEvents\": [\n"
                          "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"args\": {\"name\": \"p\"}},\n"
                          "{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1700000000000000, \"dur\": 1},\n"
                          "{\"ph\": \"X\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, \"ts\": 1700000120000000, \"dur\": 1}]}\n");
  ConvertOptions opts;
  opts.follow = FollowOptions{};
  opts.out_dir = tmp.Join("out");
  ::mkdir(opts.out_dir.c_str(), 0755);
  ::mkdir(WindowsFolder(opts.out_dir).c_str(), 0755);
  const int64_t start = int64_t{1'700'000'060} * 1'000'000'000;  // the minute between a and b
  PlannedWindow w{FollowWindow{WindowName(start, start + 60'000'000'000, false), start, start + 60'000'000'000, false},
                  {file}, {}};
  bool journaled = false;
  WindowWrite out = WriteWindow(opts, w, [&](const WindowWrite&) { journaled = true; });
  EXPECT_TRUE(out.empty);
  EXPECT_TRUE(out.error.empty()) << out.error;
  EXPECT_EQ(out.events, 0u);
  EXPECT_FALSE(journaled);
  EXPECT_EQ(testing::ListDir(WindowsFolder(opts.out_dir)), std::vector<std::string>{});
  // Where the file's events go on: b, for the next window.
  ASSERT_EQ(out.summary.inputs.size(), 1u);
  EXPECT_EQ(out.summary.inputs[0].window_next_start_ns, int64_t{1'700'000'120} * 1'000'000'000);
}

// ---------------- manifests read back (--resume, manifest merge) ----------------

// Step times with a fraction of a µs at epoch scale come back exactly (the
// DOM's doubles moved them by up to ~128 ns: step 905's start, written
// 1700000000362001.486, read back .408), and a track's failure time too.
TEST(ManifestReadBack, StepTimesAreExact) {
  RunSummary s;
  s.group_by = "rank";
  InputRecord r;
  r.path = "/job/rank1.json";
  r.format = "kineto";
  r.rank = 1;
  r.events_read = r.events_written = 3;
  r.timeline.steps = {{905, 1'700'000'000'362'001'486, 1'700'000'000'399'872'037},
                      {906, -1'700'000'000'000'000'001, 9'000'000'000'000'000'999}};
  formats::TrackTimeline track;
  track.name = "worker 1";
  track.rank = 1;
  track.steps = {{1, 1'700'000'000'000'000'123, 1'700'000'000'000'000'456, 2, 3}};
  track.failed_at_ns = 1'700'000'000'000'000'789;
  r.timeline.tracks.push_back(track);
  s.inputs.push_back(r);
  absl::StatusOr<RunSummary> back = ParseManifest(ManifestJson(s));
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->inputs.size(), 1u);
  const formats::Timeline& tl = back->inputs[0].timeline;
  ASSERT_EQ(tl.steps.size(), 2u);
  EXPECT_EQ(tl.steps[0].step, 905);
  EXPECT_EQ(tl.steps[0].start_ns, 1'700'000'000'362'001'486);
  EXPECT_EQ(tl.steps[0].end_ns, 1'700'000'000'399'872'037);
  EXPECT_EQ(tl.steps[1].start_ns, -1'700'000'000'000'000'001);
  EXPECT_EQ(tl.steps[1].end_ns, 9'000'000'000'000'000'999);
  ASSERT_EQ(tl.tracks.size(), 1u);
  ASSERT_EQ(tl.tracks[0].steps.size(), 1u);
  EXPECT_EQ(tl.tracks[0].steps[0].start_ns, 1'700'000'000'000'000'123);
  EXPECT_EQ(tl.tracks[0].steps[0].end_ns, 1'700'000'000'000'000'456);
  EXPECT_EQ(tl.tracks[0].steps[0].survivors, 2);
  EXPECT_EQ(tl.tracks[0].steps[0].total, 3);
  EXPECT_EQ(tl.tracks[0].failed_at_ns, 1'700'000'000'000'000'789);
}

// ---------------- StepHistory ----------------

TEST(StepHistory, KeepsExactValuesInAFewBytesEach) {
  StepHistory h;
  std::vector<formats::StepSpan> steps;
  for (int64_t k = 0; k < 100; ++k)
    steps.push_back({k + 7, 1'700'000'000'000'000'000 + k * 1'000'000, 1'700'000'000'000'000'000 + k * 1'000'000 + 900'000});
  EXPECT_EQ(h.Add(steps), 0u);
  ASSERT_EQ(h.size(), 100u);
  const auto back = h.Steps();
  ASSERT_EQ(back.size(), 100u);
  EXPECT_EQ(back[0].step, 7);
  EXPECT_EQ(back[0].start_ns, 1'700'000'000'000'000'000);
  EXPECT_EQ(back[99].step, 106);
  EXPECT_EQ(back[99].start_ns, 1'700'000'000'099'000'000);
  EXPECT_EQ(back[99].end_ns, 1'700'000'000'099'900'000);
  EXPECT_EQ(back[99].survivors, -1);
  EXPECT_EQ(back[99].total, -1);
  // The first step: 1 + 9 + 3 + 1 + 1 bytes; each other one 1 + 3 + 3 + 1 + 1.
  EXPECT_EQ(h.HeldBytes(), 15u + 99 * 9 + 1);
}

TEST(StepHistory, ExtremeValuesComeBackExactly) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  const std::vector<formats::StepSpan> steps = {
      {kMin, kMax, kMin, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()},
      {-1, 0, -5, 3, 4},
      {kMax, kMin, kMax, -1, 0},
  };
  StepHistory h;
  h.Add(steps);
  const auto back = h.Steps();
  ASSERT_EQ(back.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back[i].step, steps[i].step) << i;
    EXPECT_EQ(back[i].start_ns, steps[i].start_ns) << i;
    EXPECT_EQ(back[i].end_ns, steps[i].end_ns) << i;
    EXPECT_EQ(back[i].survivors, steps[i].survivors) << i;
    EXPECT_EQ(back[i].total, steps[i].total) << i;
  }
}

// A step cut by a window's end comes in two windows: one span, the union.
// Past kMaxStepsPerTrack, the steps whose number is a multiple of a
// doubled stride are kept (spread over the run, as a batch manifest lists
// them), and the others are counted.
TEST(StepHistory, MergesAStepAcrossWindowsAndKeepsEverySecondPastTheCap) {
  StepHistory h;
  std::vector<formats::StepSpan> first, second;
  for (int64_t k = 0; k < 2999; ++k) first.push_back({k, k * 10, k * 10 + 9});
  first.back().end_ns = 29'985;  // step 2998 goes on into the next window
  second.push_back({2998, 29'980, 29'989});
  for (int64_t k = 2999; k < 5000; ++k) second.push_back({k, k * 10, k * 10 + 9});
  EXPECT_EQ(h.Add(first), 0u);
  EXPECT_EQ(h.stride(), 1);
  EXPECT_EQ(h.Add(second), 2500u);
  EXPECT_EQ(h.stride(), 2);
  const auto back = h.Steps();
  ASSERT_EQ(back.size(), 2500u);
  EXPECT_EQ(back.front().step, 0);
  EXPECT_EQ(back.back().step, 4998);
  const auto& s2998 = back[1499];
  EXPECT_EQ(s2998.step, 2998);
  EXPECT_EQ(s2998.start_ns, 29'980);
  EXPECT_EQ(s2998.end_ns, 29'989);
  // The batch manifest's stride over the same steps.
  std::vector<formats::StepSpan> all = first;
  all.insert(all.end(), second.begin() + 1, second.end());
  EXPECT_EQ(formats::ListedStride(all), 2);
  // A window read back at stride 4 (--resume) raises it.
  EXPECT_EQ(h.Add({{5000, 50'000, 50'009}}, 4), 1250u + 0u);
  EXPECT_EQ(h.stride(), 4);
  EXPECT_EQ(h.Steps().size(), 1251u);
}

// ---------------- the job-wide tables.sqlite ----------------

class JobTablesTest : public ::testing::Test {
 protected:
  // Window `name` as its convert leaves it: windows/<name>/tables.sqlite with
  // `steps` rows in `steps` (input 0, rank 0, steps from `first`) and one
  // `tables_meta` row.
  FollowWindow WriteWindow(const std::string& name, int64_t first, int steps) {
    const std::string dir = WindowsFolder(tmp_.path()) + "/" + name;
    ::mkdir(WindowsFolder(tmp_.path()).c_str(), 0755);
    ::mkdir(dir.c_str(), 0755);
    formats::SqliteWriter::Options o;
    o.final_path = dir + "/tables.sqlite";
    o.tables = analysis::TableSpecs();
    auto w = formats::SqliteWriter::Create(std::move(o));
    EXPECT_TRUE(w.ok()) << w.status();
    formats::RowBatch b(analysis::TableIndex(analysis::Table::kSteps));
    for (int64_t k = first; k < first + steps; ++k) {
      for (int64_t v : {int64_t{0}, int64_t{0}, k, k * 1000, k * 1000 + 900, int64_t{900}, k, k + 1}) b.Int(v);
      b.Text("2023-11-14T22:13:20Z");
    }
    formats::RowBatch m(analysis::TableIndex(analysis::Table::kMeta));
    m.Text("mode");
    m.Text("full");
    (*w)->Push(&b);
    (*w)->Push(&m);
    EXPECT_TRUE((*w)->Drain().ok());
    EXPECT_TRUE((*w)->Commit().ok());
    return FollowWindow{name, first * 1000, (first + steps) * 1000, false};
  }
  // One text cell of a query on OUTDIR/tables.sqlite.
  std::string One(const std::string& sql) {
    const testing::Rows rows = testing::Query(tmp_.Join("tables.sqlite"), sql);
    return rows.size() == 2 && rows[1].size() == 1 ? rows[1][0] : "?";
  }
  testing::TempDir tmp_;
};

// Each window's rows once, with the window's name; a window appended again
// (redone) replaces its rows.
TEST_F(JobTablesTest, AppendsEachWindowsRowsOnceWithItsName) {
  const FollowWindow w1 = WriteWindow("w1", 0, 3), w2 = WriteWindow("w2", 3, 5);
  JobTables t;
  ASSERT_TRUE(t.Open(tmp_.path(), "job A", true).ok());
  ASSERT_TRUE(t.Append(w1).ok());
  ASSERT_TRUE(t.Append(w2).ok());
  ASSERT_TRUE(t.Append(w2).ok());
  EXPECT_EQ(t.windows(), 2u);
  EXPECT_EQ(One("SELECT count(*) FROM steps"), "8");
  EXPECT_EQ(One("SELECT count(*) FROM steps WHERE \"window\" = 'w2'"), "5");
  EXPECT_EQ(One("SELECT count(DISTINCT step) FROM steps"), "8");
  EXPECT_EQ(One("SELECT group_concat(\"window\" || ':' || \"rows\") FROM follow_windows"), "w1:4,w2:6");
  EXPECT_EQ(One("SELECT start_ns || '-' || end_ns FROM follow_windows WHERE \"window\" = 'w2'"), "3000-8000");
  EXPECT_EQ(One("SELECT count(*) FROM tables_meta WHERE \"window\" IS NULL"), "3");
  EXPECT_EQ(One("SELECT value FROM tables_meta WHERE key = 'follow_fingerprint'"), "job A");
  // A window without its file: kNotFound, nothing of it in the file.
  absl::Status st = t.Append(FollowWindow{"w9", 0, 1, false});
  EXPECT_TRUE(absl::IsNotFound(st)) << st;
  EXPECT_EQ(One("SELECT count(*) FROM follow_windows"), "2");
}

// --resume: the file keeps exactly the windows the journal kept (the others'
// rows deleted, a kept one whose rows were never appended added); a file of
// another job starts over.
TEST_F(JobTablesTest, ResumeKeepsExactlyTheJournalsWindows) {
  const FollowWindow w1 = WriteWindow("w1", 0, 3), w2 = WriteWindow("w2", 3, 5), w3 = WriteWindow("w3", 8, 2);
  {
    JobTables t;
    ASSERT_TRUE(t.Open(tmp_.path(), "job A", true).ok());
    ASSERT_TRUE(t.Append(w1).ok());
    ASSERT_TRUE(t.Append(w2).ok());
  }
  {
    JobTables t;  // the journal kept w1 and w3 (w3 journaled, its rows not appended yet)
    ASSERT_TRUE(t.Open(tmp_.path(), "job A", false).ok());
    EXPECT_EQ(t.windows(), 2u);
    ASSERT_TRUE(t.Reconcile({w1, w3}).ok());
    EXPECT_EQ(t.windows(), 2u);
  }
  EXPECT_EQ(One("SELECT group_concat(\"window\") FROM follow_windows"), "w1,w3");
  EXPECT_EQ(One("SELECT count(*) FROM steps"), "5");
  EXPECT_EQ(One("SELECT count(*) FROM steps WHERE \"window\" = 'w2'"), "0");
  EXPECT_EQ(One("SELECT count(*) FROM tables_meta"), "5");
  {
    JobTables t;  // another job's file: over
    ASSERT_TRUE(t.Open(tmp_.path(), "job B", false).ok());
    EXPECT_EQ(t.windows(), 0u);
    ASSERT_TRUE(t.Reconcile({w2}).ok());
  }
  EXPECT_EQ(One("SELECT group_concat(\"window\") FROM follow_windows"), "w2");
  EXPECT_EQ(One("SELECT count(*) FROM steps"), "5");
  EXPECT_EQ(One("SELECT value FROM tables_meta WHERE key = 'follow_fingerprint'"), "job B");
}

}  // namespace
}  // namespace tracemill::pipeline::follow
