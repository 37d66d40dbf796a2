// Issue 21: what a user must know is said on the terminal and in the exit
// status, not only in manifest.json. One test per case of the issue, made
// small: the exact lines after the summary line, and the exit code.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/convert_harness.h"

namespace tracemill::testing {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;

// A Kineto-like trace of one rank: `n` complete events from `ts_us` on, 10 µs
// apart (a `world_size` of 0 leaves distributedInfo out).
std::string Kineto(int rank, int world_size, long long ts_us, int n = 2) {
  std::string events;
  for (int k = 0; k < n; ++k)
    absl::StrAppend(&events, k ? ",\n" : "", R"({"ph":"X","name":"op","pid":1,"tid":1,"ts":)", ts_us + 10 * k,
                    R"(,"dur":5})");
  const std::string dist =
      world_size ? absl::StrCat(R"("distributedInfo":{"rank":)", rank, R"(,"world_size":)", world_size, "},") : "";
  return absl::StrCat("{", dist, R"("traceEvents":[)", events, "]}\n");
}

// The lines after the summary line (the first), each without "tracemill: ".
std::vector<std::string> NewsLines(const std::string& err) {
  std::vector<std::string> lines;
  size_t at = err.find('\n');
  while (at != std::string::npos && at + 1 < err.size()) {
    const size_t end = err.find('\n', at + 1);
    std::string line = err.substr(at + 1, end - at - 1);
    if (line.rfind("tracemill: ", 0) == 0) line = line.substr(11);
    lines.push_back(line);
    at = end;
  }
  return lines;
}

class TerminalNewsTest : public ConvertTest {
 protected:
  std::string Write(const std::string& rel, const std::string& text) {
    const std::string path = tmp_.Join(rel);
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    WriteFileBytes(path, text);
    return path;
  }
};

// Seven text files and no trace: a usage error (it was exit 0, nothing
// written, and a report saying "every input converted").
TEST_F(TerminalNewsTest, AFolderWithNoTraceIsAUsageError) {
  for (const char* name : {"a", "b", "c", "d", "e", "f", "g"}) Write(absl::StrCat("text/", name, ".txt"), "log line\n");
  const std::string dir = tmp_.Join("text");
  const std::string out = tmp_.Join("out");
  CommandResult r = Tracemill({"convert", dir, "-o", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "tracemill: no trace among the inputs (skipped: 7 not a trace (" + dir + "/a.txt, " + dir +
                       "/b.txt, " + dir + "/c.txt and 4 more)): nothing written\n");
  EXPECT_NE(::access(out.c_str(), F_OK), 0) << "left " << out;
}

// One rule for every kind of non-trace file: in a folder, skipped with a
// note (config.json, an empty .json and [1,2,3] as a text file is); named on
// the command line, an error. An empty file whose name gives a rank is a
// rank that failed: rejected.
TEST_F(TerminalNewsTest, NonTraceFilesAreSkippedInAFolderAndErrorsOnTheCommandLine) {
  const std::string trace = Write("job/rank-0.json", Kineto(0, 0, 100));
  const std::string config = Write("job/config.json", "{\"lr\": 0.1}\n");
  const std::string empty = Write("job/empty.json", "");
  const std::string numbers = Write("job/numbers.json", "[1,2,3]\n");
  const std::string dir = tmp_.Join("job");
  Run folder = Convert({dir});
  EXPECT_EQ(folder.exit_code, 0) << folder.err;
  EXPECT_EQ(NewsLines(folder.err), (std::vector<std::string>{"skipped 3 files: 2 not a trace (" + config + ", " +
                                                             numbers + "); 1 empty file (" + empty + ")"}));
  // The summary line counts the trace, not the skipped files (it said "4 inputs").
  EXPECT_EQ(folder.err.substr(0, folder.err.find(',')), "tracemill: 1 input (0 with errors)");
  ASSERT_NE(folder.manifest, nullptr);
  EXPECT_EQ(folder.manifest->Int("/totals/inputs"), 4);
  EXPECT_EQ(folder.manifest->Int("/totals/inputs_skipped"), 3);

  Run named = Convert({trace, numbers});
  EXPECT_EQ(named.exit_code, 3);
  EXPECT_EQ(named.err.substr(0, named.err.find('\n') + 1),
            "tracemill: " + numbers +
                ": at byte 0: not a Trace Event Format file: no element of its array is an event object (input "
                "rejected)\n");
  EXPECT_THAT(named.err, HasSubstr("tracemill: rejected 1 input: 1 not a trace\n"));
  ASSERT_NE(named.manifest, nullptr);
  EXPECT_EQ(named.manifest->Int("/totals/events_written"), 2);

  CommandResult alone = Tracemill({"convert", config, "-o", tmp_.Join("alone")});
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_THAT(alone.err, HasSubstr("tracemill: no trace among the inputs (rejected: 1 not a trace (" + config +
                                   ")): nothing written\n"));

  Write("job/rank5.json", "");
  Run failed_rank = Convert({dir});
  EXPECT_EQ(failed_rank.exit_code, 3);
  EXPECT_THAT(failed_rank.err, HasSubstr("tracemill: rejected 1 input: 1 empty\n"));
}

// Two rank-0 files of unrelated jobs (HTA's test folder, made small): world
// sizes that disagree, spans months apart, one rank claimed twice. Each is
// said once, naming the files; the output still holds both.
TEST_F(TerminalNewsTest, UnrelatedJobsAreNamedOnTheTerminal) {
  const std::string a = Write("hta/a/rank0.json", Kineto(0, 2, 1661203462000000));    // 2022-08-22 21:24:22
  const std::string b = Write("hta/b/rank0.json", Kineto(0, 16, 1682725897000000));   // 2023-04-28 23:51:37
  Run run = Convert({tmp_.Join("hta")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(NewsLines(run.err),
            (std::vector<std::string>{
                "warning: the inputs disagree on world_size, so they may come from different jobs: 2 (" + a +
                    "); 16 (" + b + ")",
                "warning: the inputs look like 2 different runs: their time spans do not overlap: 2022-08-22 "
                "21:24:22 UTC (" + a + "); 2023-04-28 23:51:37 UTC (" + b + ")",
                "warning: rank 0 is claimed by 2 inputs (" + a + ", " + b +
                    "): each kept as a separate process of the same output"}));
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_EQ(run.manifest->ArraySize("/notices"), 3u);
  EXPECT_EQ(run.manifest->Int("/totals/events_written"), 4);
}

// Two runs of worker0 taken five minutes apart, in one folder.
TEST_F(TerminalNewsTest, TwoRunsOfOneWorkerMinutesApart) {
  const std::string first = Write("runs/run1/worker0.json", Kineto(0, 0, 1700000000000000));
  const std::string second = Write("runs/run2/worker0.json", Kineto(0, 0, 1700000300000000));
  Run run = Convert({tmp_.Join("runs")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(NewsLines(run.err),
            (std::vector<std::string>{
                "warning: the inputs look like 2 different runs: their time spans do not overlap: 2023-11-14 "
                "22:13:20 UTC (" + first + "); 2023-11-14 22:18:20 UTC (" + second + ")",
                "warning: rank 0 is claimed by 2 inputs (" + first + ", " + second +
                    "): each kept as a separate process of the same output"}));
}

// Issue 37, point 7: `-q` hid the different-runs warning with the summary,
// and the summary never named report.html or tables.sqlite (its output count
// is of traces only). --quiet keeps the warnings that change what the
// outputs mean; the summary line names the other files it wrote.
TEST_F(TerminalNewsTest, QuietKeepsWarningsAndTheSummaryNamesTheOtherFiles) {
  const std::string first = Write("runs/run1/worker0.json", Kineto(0, 0, 1700000000000000));
  const std::string second = Write("runs/run2/worker0.json", Kineto(0, 0, 1700000300000000));
  Run quiet = Convert({tmp_.Join("runs"), "-q"});
  EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err,
            "tracemill: warning: the inputs look like 2 different runs: their time spans do not overlap: 2023-11-14 "
            "22:13:20 UTC (" + first + "); 2023-11-14 22:18:20 UTC (" + second + ")\n"
            "tracemill: warning: rank 0 is claimed by 2 inputs (" + first + ", " + second +
                "): each kept as a separate process of the same output\n");
  Run tables = Convert({first, "--tables"});
  EXPECT_EQ(tables.exit_code, 0) << tables.err;
  const std::string summary = tables.err.substr(0, tables.err.find('\n'));
  EXPECT_THAT(summary, HasSubstr("; 1 output in " + tables.out_dir + " ("));
  EXPECT_THAT(summary, EndsWith(" s); also overview.trace.json, report.html, tables.sqlite"));
  Run bare = Convert({first, "--no-report"});
  EXPECT_THAT(bare.err.substr(0, bare.err.find('\n')), EndsWith(" s); also overview.trace.json"));
}

// Relative times (a trace without baseTimeNanoseconds) beside epoch times,
// and an unranked input beside ranked ones.
TEST_F(TerminalNewsTest, MixedTimeBasesAndUnrankedInputs) {
  const std::string rel = Write("mixed/rank-0.json", Kineto(0, 0, 100));
  const std::string abs = Write("mixed/rank-1.json", Kineto(1, 0, 1700000000000000));
  const std::string odd = Write("mixed/host.json", Kineto(0, 0, 1700000000000000));
  Run run = Convert({tmp_.Join("mixed")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  // rank-0 counts from its own start: a clock domain of its own (issue 37,
  // point 3), which these ranks' lack of collectives cannot align.
  const std::string clocks =
      "tracemill: clocks: not aligned: no collective operations in any of the 2 clock domains' lowest ranks; each "
      "clock domain keeps its own clock\n";
  ASSERT_EQ(run.err.substr(0, clocks.size()), clocks) << run.err;
  EXPECT_EQ(NewsLines(run.err.substr(clocks.size())),
            (std::vector<std::string>{
                "warning: mixed time bases: 1 input has times relative to their start (" + rel + "), 2 since the epoch (" +
                    odd + ", " + abs + "): they are not on one time axis (see --time-offset)",
                "warning: 1 input has no rank (" + odd +
                    "): kept as unranked processes labelled by file name (see --rank-pattern)"}));
  // A lone unranked input (a Horovod timeline) is what it is: no warning.
  Run lone = Convert({odd});
  EXPECT_EQ(NewsLines(lone.err), std::vector<std::string>{});
}

// Issue 37, point 3: ranks whose times are all relative to their own start
// (PyTorch 1.13 traces: each rank's ts starts near 0) were drawn as one
// timeline without a word. One rank alone is what it is.
TEST_F(TerminalNewsTest, RanksOnRelativeClocksAreSaid) {
  const std::string r0 = Write("rel/rank-0.json", Kineto(0, 2, 100));
  const std::string r1 = Write("rel/rank-1.json", Kineto(1, 2, 250));
  Run run = Convert({tmp_.Join("rel")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  // Each rank is a clock domain of its own; without collectives none is aligned.
  const std::string clocks =
      "tracemill: clocks: not aligned: no collective operations in any of the 2 clock domains' lowest ranks; each "
      "clock domain keeps its own clock\n";
  ASSERT_EQ(run.err.substr(0, clocks.size()), clocks) << run.err;
  EXPECT_EQ(NewsLines(run.err.substr(clocks.size())),
            (std::vector<std::string>{
                "warning: every input's times are relative to its own start (no epoch base, e.g. PyTorch 1.x traces "
                "without baseTimeNanoseconds): the 2 ranks are drawn on one time axis as if they had started "
                "together, and their clocks are not aligned (" + r0 + ", " + r1 + ")"}));
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_EQ(run.manifest->ArraySize("/notices"), 1u);
  Run one = Convert({r0});
  EXPECT_EQ(NewsLines(one.err), std::vector<std::string>{});
  // The outputs' otherData said "absolute ns since the Unix epoch" of them.
  Run all = Convert({tmp_.Join("rel"), "--group-by", "all", "-q"});
  EXPECT_THAT(ReadFileBytes(all.Output("all.trace.json")),
              HasSubstr("\"inputs_clock\":\"input_start\",\"note\":\"ts = (ns since each input's own start, as "
                        "its file gives them - offset_ns) / 1000: the inputs are not on one clock\""));
  const std::string epoch = Write("abs/rank-0.json", Kineto(0, 0, 1700000000000000));
  Run absolute = Convert({epoch, "--group-by", "all", "-q"});
  EXPECT_THAT(ReadFileBytes(absolute.Output("all.trace.json")),
              HasSubstr("\"inputs_clock\":\"epoch\",\"note\":\"ts = (absolute ns since the Unix epoch - "
                        "offset_ns) / 1000\""));
}

// Issue 40, point 2: a Paddle job folder's dcgm/dcgm.<trainer> files were
// rejected as "unrecognized format" and, their suffix read as a rank, shown
// as dead ranks (exit 3). They are drawn now, as csp draws them: a counter
// per GPU row on the trainer's first GPU (trainer 1 x 8 GPUs per node:
// rank 8); an N/A row is dropped and said; a log without the columns
// CrossStackProfiler plots is skipped, saying which are missing.
TEST_F(TerminalNewsTest, DcgmLogsBesideTheProfilesAreDrawn) {
  Write("job/profile/rank-0.json", Kineto(0, 0, 1700000000000000, 100));  // 0 .. 995 us past the second
  const std::string header =
      "# Entity  TIMESTAMP  GPUTL  GRACT  SMACT  SMOCC  FBUSD  FBTTL  DRAMA  NVLTX  NVLRX  PCITX  PCIRX  FP32A  "
      "FP16A  TENSO\n      Id\n";
  const std::string dcgm = Write("job/dcgm/dcgm.1",
                                 "Started host engine version 2.2.9 using socket path /tmp/nv-hostengine\n" + header +
                                     "    GPU 0  1700000000.0005  81  0.494  0.183  0.346  31123  32510  0.939  "
                                     "62106086  11442642  42250777  54105825  0.680  0.777  0.734\n"
                                     "    GPU 1  1700000000.0005  N/A  0.809  0.124  0.755  18147  32510  0.709  "
                                     "1  2  3  4  0.048  0.540  0.017\n");
  const std::string other = Write("job/dcgm/other.2", "# Entity  TIMESTAMP  GPUTL\n      Id\n    GPU 0  1700000000.000  81\n");
  Run run = Convert({tmp_.Join("job"), "--gpus-per-node", "8", "--group-by", "all", "--align-clocks", "off"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(NewsLines(run.err),
            (std::vector<std::string>{"dropped 1 event: na_sample 1; na_sample: DCGM row with N/A or a non-numeric "
                                      "value (row dropped) (1 in " + dcgm + ")",
                                      "skipped 1 file: 1 dcgmi dmon output that tracemill cannot draw (" + other +
                                          ")"}));
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_EQ(run.manifest->Int("/totals/inputs_with_errors"), 0);
  const int i = run.manifest->InputIndex("dcgm/dcgm.1");
  EXPECT_EQ(run.manifest->Str(Manifest::InputPointer(i, "/format")), "dcgm_dmon");
  EXPECT_EQ(run.manifest->Int(Manifest::InputPointer(i, "/rank")), 8);
  EXPECT_EQ(run.manifest->Int(Manifest::InputPointer(i, "/events_read")), 2);
  EXPECT_EQ(run.manifest->Int(Manifest::InputPointer(i, "/events_written")), 1);
  EXPECT_EQ(run.manifest->Int(Manifest::InputPointer(i, "/dropped_by_reason/na_sample")), 1);
  EXPECT_TRUE(ManifestBalances(*run.manifest));
  EXPECT_EQ(run.manifest->Str(Manifest::InputPointer(i, "/warnings/0")),
            "dcgm.1: 1 GPU row with N/A or a non-numeric value dropped (as CrossStackProfiler does)");
  const int o = run.manifest->InputIndex("dcgm/other.2");
  EXPECT_TRUE(run.manifest->Bool(Manifest::InputPointer(o, "/skipped")));
  EXPECT_THAT(run.manifest->Str(Manifest::InputPointer(o, "/warnings/0")),
              HasSubstr("skipped: dcgmi dmon output that tracemill cannot draw: dcgm: the `# Entity` header has no "
                        "GRACT, SMACT"));
  const std::string trace = ReadFileBytes(run.Output("all.trace.json"));
  EXPECT_THAT(trace, HasSubstr("\"name\":\"GPU 0\",\"pid\":"));
  EXPECT_THAT(trace, HasSubstr(",\"ts\":1700000000000500,\"args\":{\"GPUTL\":81,\"GRACT\":0.494,\"SMACT\":0.183,"
                               "\"SMOCC\":0.346,\"FBUSD\":31123,\"FBTTL\":32510,\"DRAMA\":0.939,\"NVLTX\":62106086,"
                               "\"NVLRX\":11442642,\"PCITX\":42250777,\"PCIRX\":54105825,\"FP32A\":0.68,"
                               "\"FP16A\":0.777,\"TENSO\":0.734}}"));
  EXPECT_THAT(trace, HasSubstr("\"args\":{\"name\":\"rank 8 (trainer 1) \xC2\xB7 DCGM\"}"));
  EXPECT_THAT(trace, ::testing::Not(HasSubstr("\"name\":\"GPU 1\"")));
  // Named on the command line: drawn too.
  CommandResult named = Tracemill({"convert", dcgm, "-o", tmp_.Join("named"), "-q"});
  EXPECT_EQ(named.exit_code, 0) << named.err;
}

// A folder of Paddle CrossStackProfiler outputs (ts in ns where the Trace
// Event Format has µs) lost 41,920 of 42,140 events with exit 0 and no word.
// Made small: 120 of 150 events past the int64 ns range. More than half,
// and at least 100: the input has errors (exit 3), and the cause is said.
TEST_F(TerminalNewsTest, AnInputThatLostMostOfItsEventsHasErrors) {
  std::string events;
  for (int k = 0; k < 150; ++k)
    absl::StrAppend(&events, k ? ",\n" : "", R"({"ph":"X","name":"op","pid":0,"tid":0,"ts":)",
                    k < 120 ? 1700000000000040000 + k : 100 + k, R"(,"dur":1})");
  const std::string csp = Write("csp/traceFile_0_0.json", absl::StrCat(R"({"traceEvents":[)", events, "]}\n"));
  Run run = Convert({csp});
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_EQ(NewsLines(run.err),
            (std::vector<std::string>{
                "dropped 120 events: bad_ts 120; bad_ts: `ts` is not a decimal number in the int64 ns range",
                "1 input lost most of its events (counted as inputs with errors): " + csp}));
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_EQ(run.manifest->Str("/inputs/0/error/code"), "DATA_LOSS");
  EXPECT_EQ(run.manifest->Int("/totals/events_lost"), 120);
  EXPECT_EQ(run.manifest->Int("/totals/events_written"), 30);

  // Three of four lost: more than half, but under 100: said, exit 0.
  const std::string few = Write("csp/few.json", R"({"traceEvents":[{"ph":"X","name":"a","pid":0,"tid":0,"ts":1,"dur":1},
{"ph":"X","name":"b","pid":0,"tid":0,"ts":"x","dur":1},{"ph":"X","name":"c","pid":0,"tid":0,"ts":1e300,"dur":1},
{"ph":"X","name":"d","pid":0,"tid":0,"ts":1700000000000040000,"dur":1}]})");
  Run small = Convert({few});
  EXPECT_EQ(small.exit_code, 0) << small.err;
  EXPECT_EQ(NewsLines(small.err),
            (std::vector<std::string>{"dropped 3 events: bad_ts 3; bad_ts: `ts` is not a decimal number in the int64 "
                                      "ns range (3 in " + few + ")"}));
}

// smdebug's time-base records and repeated metadata are left out by design:
// said as such, not as losses, exit 0.
TEST_F(TerminalNewsTest, DropsByDesignAreNotLosses) {
  Run run = Convert({DataPath("smdebug/model_timeline_traces")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(NewsLines(run.err),
            (std::vector<std::string>{"left out on purpose, not lost: 12 events (time_base 8, duplicate_metadata 4)"}));
  EXPECT_THAT(run.err, Not(HasSubstr("dropped 12")));
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_EQ(run.manifest->Int("/totals/events_lost"), 0);
  EXPECT_EQ(run.manifest->Int("/totals/events_left_out"), 12);
}

}  // namespace
}  // namespace tracemill::testing
