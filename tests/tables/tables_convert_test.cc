// `--tables` end to end (issue 23): input strings stay data, a full disk
// leaves nothing partial, shards join to what one process writes, --resume
// keeps the rows of outputs it does not redo, windows cut the tables as the
// traces.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tables/tables_test_util.h"
#include "tests/testing/convert_harness.h"

namespace tracemill::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class TablesConvertTest : public ConvertTest {
 protected:
  // RankFile writes rank<rank>.json: distributedInfo.rank and `events`.
  std::string RankFile(int rank, const std::vector<std::string>& events) {
    const std::string path = tmp_.Join("rank" + std::to_string(rank) + ".json");
    std::string text = "{\"distributedInfo\":{\"rank\":" + std::to_string(rank) + "},\"traceEvents\":[";
    for (size_t i = 0; i < events.size(); ++i) text += (i ? "," : "") + events[i];
    WriteFileBytes(path, text + "]}");
    return path;
  }
};

// Names with quotes, `;`, SQL, a NUL and invalid UTF-8 are rows, never SQL.
TEST_F(TablesConvertTest, HostileNamesAreData) {
  const std::string in = tmp_.Join("hostile.json");
  std::string text =
      "{\"traceEvents\":["
      "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"p'); DROP TABLE steps;--\"}},"
      "{\"ph\":\"X\",\"name\":\"a\\\"b'c; DROP TABLE framework_metrics;--\",\"cat\":\"x;y\",\"pid\":1,\"tid\":1,"
      "\"ts\":100,\"dur\":5},"
      "{\"ph\":\"X\",\"name\":\"nul\\u0000byte\",\"cat\":\"c\",\"pid\":1,\"tid\":1,\"ts\":110,\"dur\":5},"
      "{\"ph\":\"X\",\"name\":\"op\xff\xfe" "end\",\"cat\":\"c\",\"pid\":1,\"tid\":1,\"ts\":120,\"dur\":5}]}";
  WriteFileBytes(in, text);
  Run r = Convert({in, "--tables=full", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string db = r.Output("tables.sqlite");
  const Rows rows = Query(db, "SELECT framework_metric, category, process, dur_ns FROM framework_metrics ORDER BY start_ns");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[1][0], "a\"b'c; DROP TABLE framework_metrics;--");
  EXPECT_EQ(rows[1][1], "x;y");
  EXPECT_EQ(rows[1][2], "p'); DROP TABLE steps;--");
  EXPECT_EQ(rows[2][0], std::string("nul\0byte", 8));
  EXPECT_EQ(rows[3][0], "op\xEF\xBF\xBD\xEF\xBF\xBD" "end");  // U+FFFD per invalid byte, as the traces
  EXPECT_EQ(rows[1][3], "5000");
  // Every table is still there.
  EXPECT_EQ(Query(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'")[1][0], "19");
  EXPECT_EQ(Query(db, "SELECT path FROM inputs")[1][0], in);
}

// A B/E pair's args are the B's with the E's merged over them (the Trace
// Event Format's rule), in every row the pair makes; nested pairs each get
// their own E; a B never closed keeps its own args.
TEST_F(TablesConvertTest, EndArgsAreMergedIntoTheirSpan) {
  const std::string in = tmp_.Join("pairs.json");
  WriteFileBytes(in,
                 "{\"traceEvents\":["
                 "{\"ph\":\"B\",\"name\":\"enumerate(DataLoader)#outer\",\"pid\":1,\"tid\":1,\"ts\":100,"
                 "\"args\":{\"num_workers\":2,\"worker_id\":0}},"
                 "{\"ph\":\"B\",\"name\":\"enumerate(DataLoader)#inner\",\"pid\":1,\"tid\":1,\"ts\":110},"
                 "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":120,\"args\":{\"worker_id\":5,\"pin_memory\":true}},"
                 "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":150,\"args\":{\"worker_id\":3}},"
                 "{\"ph\":\"B\",\"name\":\"enumerate(DataLoader)#open\",\"pid\":1,\"tid\":2,\"ts\":130,"
                 "\"args\":{\"worker_id\":9}},"
                 "{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":2,\"ts\":160,\"dur\":10}]}");
  Run r = Convert({in, "--tables=full", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Rows rows = Query(r.Output("tables.sqlite"),
                          "SELECT framework_metric, worker_id, num_workers, pin_memory, dur_ns "
                          "FROM dataloader_metrics ORDER BY start_ns");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[1], (std::vector<std::string>{"enumerate(DataLoader)#outer", "3", "2", "NA", "50000"}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"enumerate(DataLoader)#inner", "5", "-1", "True", "10000"}));
  // Open to the input's last time (170 us).
  EXPECT_EQ(rows[3], (std::vector<std::string>{"enumerate(DataLoader)#open", "9", "-1", "NA", "40000"}));
  EXPECT_EQ(Query(r.Output("tables.sqlite"), "SELECT count(*) FROM framework_metrics")[1][0], "4");
}

// The low GPU utilization spans derived from smdebug's system metrics are
// not framework events (PandasFrame has none): a table of their own, in
// both modes.
TEST_F(TablesConvertTest, LowGpuSpansHaveTheirOwnTable) {
  for (const char* mode : {"--tables=full", "--tables=summary"}) {
    SCOPED_TRACE(mode);
    Run r = Convert({DataPath("smdebug/test_traces"), mode, "-q"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string db = r.Output("tables.sqlite");
    const Rows rows = Query(db,
                            "SELECT device, threshold_percent, low_samples, nodeID, start_ns, dur_ns, start_time_us, "
                            "end_time_us FROM low_gpu_utilization ORDER BY device");
    ASSERT_EQ(rows.size(), 3u);
    // gpu0: 8.00 % then 34.76 %, no later sample: the run ends at its last.
    EXPECT_EQ(rows[1], (std::vector<std::string>{"gpu0", "85.0", "2", "algo-1", "1591160899757089400",
                                                 "5799699950000", "1591160899757089", "1591166699457039"}));
    EXPECT_EQ(rows[2], (std::vector<std::string>{"gpu1", "85.0", "2", "algo-1", "1591160999657089400",
                                                 "6699800200000", "1591160999657089", "1591167699457289"}));
  }
  Run full = Convert({DataPath("smdebug/test_traces"), "--tables=full", "-q"});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  EXPECT_EQ(Query(full.Output("tables.sqlite"), "SELECT count(*), count(DISTINCT framework_metric) FROM framework_metrics"),
            (Rows{{"count(*)", "count(DISTINCT framework_metric)"}, {"4", "4"}}));  // event1..event4
}

// A long job (issue 40, point 1): one rank with 5,000 steps, more than the
// manifest lists. The tables and --start-step see every step; the manifest
// lists the first 4,096 and counts the others.
TEST_F(TablesConvertTest, EveryStepOfALongJobIsKept) {
  const std::string in = tmp_.Join("rank0.json");
  std::string json = "{\"traceEvents\":[";
  for (int step = 0; step < 5000; ++step) {
    const std::string t = std::to_string(1000000 + step * 100), op = std::to_string(1000000 + step * 100 + 10);
    json += (step ? "," : "") + std::string("{\"ph\":\"X\",\"name\":\"ProfilerStep#") + std::to_string(step) +
            "\",\"cat\":\"user_annotation\",\"pid\":1,\"tid\":1,\"ts\":" + t + ",\"dur\":90}," +
            "{\"ph\":\"X\",\"name\":\"op\",\"cat\":\"cpu_op\",\"pid\":1,\"tid\":1,\"ts\":" + op + ",\"dur\":20}";
  }
  WriteFileBytes(in, json + "]}");
  Run r = Convert({in, "--tables", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Query(r.Output("tables.sqlite"), "SELECT count(*), min(step), max(step) FROM steps"),
            (Rows{{"count(*)", "min(step)", "max(step)"}, {"5000", "0", "4999"}}));
  ASSERT_NE(r.manifest, nullptr);
  // The manifest lists every second step (4,096 at most, spread over the
  // whole run: the report's timeline reaches its end), and counts the rest.
  EXPECT_EQ(r.manifest->ArraySize(Manifest::InputPointer(0, "/steps")), 2500u);
  EXPECT_EQ(r.manifest->Int(Manifest::InputPointer(0, "/steps_stride")), 2);
  EXPECT_EQ(r.manifest->Int(Manifest::InputPointer(0, "/steps_dropped")), 2500);
  EXPECT_EQ(r.manifest->Json(Manifest::InputPointer(0, "/steps/1")), "[2,1000200,1000290]");
  EXPECT_EQ(r.manifest->Json(Manifest::InputPointer(0, "/steps/2499")), "[4998,1499800,1499890]");
  const std::string html = ReadFileBytes(r.Output("report.html"));
  EXPECT_NE(html.find("show those whose number is a multiple of 2"), std::string::npos);

  // Steps 4500-4509, past the manifest's 4,096: their 10 steps and 10 ops.
  Run w = Convert({in, "--start-step", "4500", "--end-step", "4509", "-q"});
  ASSERT_EQ(w.exit_code, 0) << w.err;
  auto t = OnlyTrace(w);
  ASSERT_NE(t, nullptr);
  const auto ops = t->Named("op");
  ASSERT_EQ(ops.size(), 10u);
  EXPECT_EQ(ops.front()->ts, "1450010");
  EXPECT_EQ(ops.back()->ts, "1450910");
  EXPECT_EQ(t->Named("ProfilerStep#4500").size(), 1u);
  EXPECT_EQ(t->Named("ProfilerStep#4499").size(), 0u);
}

// A tables.sqlite that cannot be written (past `ulimit -f`, as a full disk)
// is removed with its temporary and any earlier file of that name; the
// manifest says why and the job exits 1; the traces are kept.
TEST_F(TablesConvertTest, AFileSizeLimitLeavesNoPartialTables) {
  const std::string prlimit = "/usr/bin/prlimit";
  if (::access(prlimit.c_str(), X_OK) != 0) GTEST_SKIP() << "no " << prlimit;
  const std::string out = tmp_.Join("out");
  ASSERT_EQ(::mkdir(out.c_str(), 0755), 0);
  WriteFileBytes(out + "/tables.sqlite", "an earlier run's");
  // The traces are ~1.6 MB each, the full tables ~3 MB.
  CommandResult r = RunCommand({prlimit, "--fsize=2000000", "--", TracemillBinary(), "convert",
                                DataPath("hta/trace_filter"), "-o", out, "--tables=full", "-q"},
                               tmp_.path());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("tables.sqlite"));
  for (const auto& n : ListDir(out)) {
    EXPECT_EQ(n.find("tables"), std::string::npos) << n;
    EXPECT_EQ(n.find(".tmp"), std::string::npos) << n;
  }
  auto m = Manifest::Load(out + "/manifest.json");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->Int("/exit_code"), 1);
  EXPECT_EQ(m->Str("/tables/path"), "tables.sqlite");
  EXPECT_THAT(m->Str("/tables/error"), HasSubstr("tables.sqlite"));
  // Every event written but the records of the 2 x 7 unused GPUs (empty_process).
  EXPECT_EQ(m->Int("/totals/dropped_by_reason/empty_process"), 42);
  EXPECT_EQ(m->Int("/totals/events_written"), m->Int("/totals/events_read") - 42);
}

// The taps beside the merge (two threads, one output of runs in memory:
// OutputWriter::TapBeside) see what the merge's own stage sees at one
// thread: the same overview bytes, the same rows in every table (rows of
// different inputs may come in another order), the same counts, with a
// window that drops events too.
TEST_F(TablesConvertTest, TapsBesideTheMergeSeeWhatTheMergeSees) {
  for (const std::vector<std::string>& window :
       {std::vector<std::string>{}, std::vector<std::string>{"--start", "1682725898900000", "--end", "1682725899000000"}}) {
    SCOPED_TRACE(window.empty() ? "whole" : "window");
    std::vector<Run> runs;
    for (const char* threads : {"1", "2"}) {
      std::vector<std::string> args = {DataPath("hta/trace_filter"), "--group-by", "all", "--tables=full", "-q",
                                       "--threads", threads};
      args.insert(args.end(), window.begin(), window.end());
      runs.push_back(Convert(args));
      ASSERT_EQ(runs.back().exit_code, 0) << runs.back().err;
    }
    EXPECT_EQ(ReadFileBytes(runs[1].Output("overview.trace.json")), ReadFileBytes(runs[0].Output("overview.trace.json")));
    for (const char* table : {"framework_metrics", "steps", "phase_by_step", "idle_gaps", "op_summary",
                              "kernel_breakdown", "temporal_breakdown", "inputs"}) {
      SCOPED_TRACE(table);
      const std::string sql = std::string("SELECT * FROM ") + table;
      Rows one = Query(runs[0].Output("tables.sqlite"), sql), two = Query(runs[1].Output("tables.sqlite"), sql);
      if (std::string(table) == "framework_metrics" || std::string(table) == "inputs") {
        ASSERT_GT(one.size(), 2u);
      }
      std::sort(one.begin(), one.end());
      std::sort(two.begin(), two.end());
      EXPECT_EQ(two, one);
    }
    for (int k = 0; k < 2; ++k) {
      const std::string in = Manifest::InputPointer(k, "");
      EXPECT_EQ(runs[1].manifest->Int(in + "/events_written"), runs[0].manifest->Int(in + "/events_written"));
      EXPECT_EQ(runs[1].manifest->Json(in + "/dropped_by_reason"), runs[0].manifest->Json(in + "/dropped_by_reason"));
    }
    // The window drops 4,616 of rank 0's events (counted in the taps).
    const std::string reasons = runs[1].manifest->Json(Manifest::InputPointer(0, "/dropped_by_reason"));
    EXPECT_EQ(reasons.find("window") != std::string::npos, !window.empty()) << reasons;
  }
}

// Two shards and `manifest merge` give the rows one process writes.
TEST_F(TablesConvertTest, ShardsJoinToOneProcesssTables) {
  Run whole = Convert({DataPath("hta/trace_filter"), "--tables=full", "-q"});
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  const std::string out = tmp_.Join("sharded");
  for (const char* shard : {"0/2", "1/2"}) {
    CommandResult r = Tracemill({"convert", DataPath("hta/trace_filter"), "-o", out, "--tables=full", "-q",
                                 "--shard", shard});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  CommandResult m = Tracemill({"manifest", "merge", out});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  for (const std::string sql :
       {"SELECT * FROM temporal_breakdown ORDER BY input", "SELECT * FROM kernel_breakdown ORDER BY input, name",
        "SELECT * FROM kernel_type_breakdown ORDER BY input, kernel_type",
        "SELECT count(*), sum(dur_ns), sum(start_ns - 1682725897000000000) FROM framework_metrics", "SELECT * FROM steps ORDER BY input, step",
        "SELECT input, path, output, events_written FROM inputs ORDER BY input", "SELECT * FROM outputs ORDER BY path"})
    EXPECT_EQ(Query(out + "/tables.sqlite", sql), Query(whole.Output("tables.sqlite"), sql)) << sql;
  // The merged manifest's tables member says the mode, as one process's does.
  auto merged = Manifest::Load(out + "/manifest.json");
  auto one = Manifest::Load(whole.Output("manifest.json"));
  ASSERT_NE(merged, nullptr);
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->Str("/tables/mode"), "full");
  EXPECT_EQ(merged->Str("/tables/mode"), "full");
}

// A shard's damaged tables file fails the tables, not the merge: the
// manifest and report are written, its `tables` member says why, exit 1,
// and no tables.sqlite (nor a temporary) is left.
TEST_F(TablesConvertTest, MergeWithADamagedShardTablesFileWritesTheManifest) {
  const std::string out = tmp_.Join("sharded");
  for (const char* shard : {"0/2", "1/2"}) {
    CommandResult r = Tracemill({"convert", DataPath("hta/trace_filter"), "-o", out, "--tables=full", "-q",
                                 "--shard", shard});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const std::string damaged = out + "/tables.shard-1-of-2.sqlite";
  { std::ofstream(damaged, std::ios::trunc) << "not a database, not at all\n"; }
  CommandResult m = Tracemill({"manifest", "merge", out});
  EXPECT_EQ(m.exit_code, 1) << m.err;
  const std::string why =
      "cannot write " + out + "/tables.sqlite: attach " + damaged + ": file is not a database";
  EXPECT_EQ(m.err, "tracemill: manifest merge: " + why + "\ntracemill: manifest merge: 2 shards, 2 inputs, 2 outputs -> " +
                       out + "/manifest.json, " + out + "/report.html\n");
  auto manifest = Manifest::Load(out + "/manifest.json");
  ASSERT_NE(manifest, nullptr);
  EXPECT_EQ(manifest->Int("/exit_code"), 1);
  EXPECT_EQ(manifest->Str("/tables/path"), "tables.sqlite");
  EXPECT_EQ(manifest->Str("/tables/error"), why);
  // Every event written but the records of the 2 x 7 unused GPUs (empty_process).
  EXPECT_EQ(manifest->Int("/totals/dropped_by_reason/empty_process"), 42);
  EXPECT_EQ(manifest->Int("/totals/events_written"), manifest->Int("/totals/events_read") - 42);
  for (const auto& n : ListDir(out)) {
    EXPECT_NE(n, "tables.sqlite");
    EXPECT_EQ(n.find(".tmp"), std::string::npos) << n;
  }
  EXPECT_TRUE(std::filesystem::exists(out + "/report.html"));
}

// A shard's tables file of another job, or another shard's copy, is
// refused (its rows would go under this job's input numbers, or twice), and
// a failed merge leaves no tables.sqlite of an earlier one.
TEST_F(TablesConvertTest, MergeRefusesAnotherJobsOrShardsTablesFile) {
  auto sharded = [&](const std::string& out, const std::vector<std::string>& extra) {
    for (const char* shard : {"0/2", "1/2"}) {
      std::vector<std::string> args = {"convert", DataPath("hta/trace_filter"), "-o", out, "--tables=full", "-q",
                                       "--shard", shard};
      args.insert(args.end(), extra.begin(), extra.end());
      CommandResult r = Tracemill(args);
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  };
  const std::string out = tmp_.Join("job"), other = tmp_.Join("other");
  sharded(out, {});
  sharded(other, {"--group-by", "rank"});  // another job: another fingerprint
  ASSERT_EQ(Tracemill({"manifest", "merge", out}).exit_code, 0);
  ASSERT_TRUE(std::filesystem::exists(out + "/tables.sqlite"));
  const std::string shard1 = out + "/tables.shard-1-of-2.sqlite";
  std::filesystem::copy_file(other + "/tables.shard-1-of-2.sqlite", shard1,
                             std::filesystem::copy_options::overwrite_existing);
  CommandResult m = Tracemill({"manifest", "merge", out});
  EXPECT_EQ(m.exit_code, 1) << m.err;
  EXPECT_THAT(m.err, HasSubstr("tracemill: manifest merge: cannot write tables.sqlite: " + shard1 +
                               " is another job's (fingerprint "));
  EXPECT_FALSE(std::filesystem::exists(out + "/tables.sqlite"));
  auto manifest = Manifest::Load(out + "/manifest.json");
  ASSERT_NE(manifest, nullptr);
  EXPECT_THAT(manifest->Str("/tables/error"), HasSubstr(" is another job's (fingerprint "));
  std::filesystem::copy_file(out + "/tables.shard-0-of-2.sqlite", shard1,
                             std::filesystem::copy_options::overwrite_existing);
  m = Tracemill({"manifest", "merge", out});
  EXPECT_EQ(m.exit_code, 1) << m.err;
  EXPECT_THAT(m.err, HasSubstr(shard1 + " holds shard 0/2's rows, not shard 1/2's"));
  for (const auto& n : ListDir(out)) {
    EXPECT_NE(n, "tables.sqlite");
    EXPECT_EQ(n.find(".tmp"), std::string::npos) << n;
  }
}

// --resume keeps complete outputs and their inputs' rows (copied from the
// earlier tables.sqlite, not read again).
TEST_F(TablesConvertTest, ResumeKeepsTheRowsOfReusedOutputs) {
  const std::string out = tmp_.Join("resumed");
  CommandResult first = Tracemill({"convert", DataPath("hta/trace_filter"), "-o", out, "--tables=full", "-q"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string db = out + "/tables.sqlite";
  const std::string sql = "SELECT * FROM temporal_breakdown ORDER BY input";
  const std::string count = "SELECT count(*) FROM framework_metrics";
  const Rows before = Query(db, sql), before_count = Query(db, count);
  // One output removed: redone; the other reused.
  ASSERT_EQ(::unlink((out + "/gpu1.trace.json").c_str()), 0);
  CommandResult again = Tracemill({"convert", DataPath("hta/trace_filter"), "-o", out, "--tables=full", "--resume"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.err, HasSubstr("1 output already complete (1 input not read)"));
  EXPECT_EQ(Query(db, sql), before);
  EXPECT_EQ(Query(db, count), before_count);
  EXPECT_EQ(Query(db, "SELECT reused FROM outputs ORDER BY path"),
            (Rows{{"reused"}, {"1"}, {"0"}}));
}

// --resume over a tables.sqlite written by an earlier version (a table it
// did not have: here idle_gaps dropped, as before 0.1's idle breakdown):
// nothing is carried from it (its rows cannot be copied into today's
// tables), every output is redone, and the new file is complete.
TEST_F(TablesConvertTest, ResumeOverAnOlderTablesFileRedoesEveryOutput) {
  const std::string out = tmp_.Join("older");
  CommandResult first = Tracemill({"convert", DataPath("hta/trace_filter"), "-o", out, "--tables=summary", "-q"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string db = out + "/tables.sqlite";
  const Rows idle = Query(db, "SELECT count(*) FROM idle_gaps");
  sqlite3* w = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &w), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(w, "DROP TABLE idle_gaps", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(w);
  ASSERT_EQ(::unlink((out + "/gpu1.trace.json").c_str()), 0);
  CommandResult again = Tracemill({"convert", DataPath("hta/trace_filter"), "-o", out, "--tables=summary", "--resume"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.err, HasSubstr("tables.sqlite is of an earlier version (no table idle_gaps): its outputs are "
                                    "written again"));
  EXPECT_THAT(again.err, HasSubstr("1 redone for tables.sqlite"));
  EXPECT_EQ(Query(db, "SELECT count(*) FROM idle_gaps"), idle);
  EXPECT_EQ(Query(db, "SELECT reused FROM outputs ORDER BY path"), (Rows{{"reused"}, {"0"}, {"0"}}));
}

// A window holds for the tables as for the traces: rows only of events
// that overlap it, steps only in it.
TEST_F(TablesConvertTest, WindowsCutTheTables) {
  Run r = Convert({DataPath("hta/trace_filter"), "--tables=full", "-q", "--start", "1682725898300000", "--end",
                   "1682725898400000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string db = r.Output("tables.sqlite");
  EXPECT_EQ(Query(db, "SELECT count(*) FROM framework_metrics WHERE start_ns > 1682725898400000000 OR "
                      "start_ns + dur_ns < 1682725898300000000")[1][0],
            "0");
  EXPECT_GT(std::stoll(Query(db, "SELECT count(*) FROM framework_metrics")[1][0]), 300);
  // Step 552 starts at 1682725898686653 us on rank 0: after the window.
  EXPECT_EQ(Query(db, "SELECT count(*) FROM steps WHERE start_ns > 1682725898400000000 OR "
                      "end_ns < 1682725898300000000")[1][0],
            "0");
  EXPECT_GE(std::stoll(Query(db, "SELECT count(*) FROM steps")[1][0]), 1);
  // The kernels in the window: kernel_time within the window's 100 ms.
  for (const auto& row : Query(db, "SELECT kernel_time_ns FROM temporal_breakdown")) {
    if (row[0] != "kernel_time_ns") {
      EXPECT_LE(std::stoll(row[0]), 200000000);
    }
  }
}

// `--tables` takes an optional mode: an input right after it is a usage
// error that says how to write it, never silently a mode.
// --hta-last-step without --tables would change nothing: a usage error.
TEST_F(TablesConvertTest, HtaLastStepWithoutTablesIsAUsageError) {
  const std::string out = tmp_.Join("no-tables");
  CommandResult r = Tracemill({"convert", DataPath("hta/trace_filter"), "-o", out, "--hta-last-step"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--hta-last-step changes HTA's tables, which only --tables writes"));
  EXPECT_FALSE(std::filesystem::exists(out + "/manifest.json"));
}

TEST_F(TablesConvertTest, TablesBeforeAnInputIsAUsageError) {
  CommandResult r = Tracemill({"convert", "--tables", DataPath("hta/trace_filter"), "-o", tmp_.Join("out")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--tables: takes summary or full"));
  EXPECT_THAT(r.err, HasSubstr("write --tables=full"));
  // Issue 37, point 7: a folder after -o meant as the tables' place is told
  // where tables.sqlite goes.
  r = Tracemill({"convert", DataPath("hta/trace_filter"), "-o", tmp_.Join("out"), "--tables", tmp_.path()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--tables: takes summary or full, not `" + tmp_.path() +
                               "`: tables.sqlite is written into -o's folder"));
  EXPECT_NE(::access(tmp_.Join("out").c_str(), F_OK), 0);
}

// The report draws the per-rank temporal breakdown from the manifest's
// `tables.temporal_breakdown`, the same numbers as the table.
TEST_F(TablesConvertTest, ReportDrawsTheTemporalBreakdown) {
  Run r = Convert({DataPath("hta/trace_filter"), "--tables=summary", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_NE(r.manifest, nullptr);
  EXPECT_EQ(r.manifest->Str("/tables/mode"), "summary");
  ASSERT_EQ(r.manifest->ArraySize("/tables/temporal_breakdown"), 2u);
  EXPECT_EQ(r.manifest->Int("/tables/temporal_breakdown/0/kernel_ns"), 600058000);
  EXPECT_EQ(r.manifest->Int("/tables/temporal_breakdown/1/idle_ns"), 328671000);
  const std::string html = ReadFileBytes(r.Output("report.html"));
  EXPECT_THAT(html, HasSubstr("<section id=\"breakdown\">"));
  EXPECT_THAT(html, HasSubstr("rank 0: compute 106.252 ms (17.71%) of 600.058 ms kernel time"));
  EXPECT_THAT(html, HasSubstr("rank 1: idle 328.671 ms (54.72%) of 600.674 ms kernel time"));
  // `tracemill report` rebuilds the same page from the manifest alone.
  ASSERT_EQ(::unlink(r.Output("report.html").c_str()), 0);
  CommandResult again = Tracemill({"report", r.out_dir});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(ReadFileBytes(r.Output("report.html")), html);
}

// Issue 40, point 9: the report's "System and phases" section, from the
// manifest's tables member. test_traces' system samples (algo-1): the means
// and maxima python computes from the raw files (68 CPU, 6 GPU memory, 4 GPU
// samples); merge_traces' one phase, as the phase_by_step rows sum it.
TEST_F(TablesConvertTest, ReportSummarizesSystemMetricsAndPhasesPerNode) {
  Run r = Convert({DataPath("smdebug/test_traces"), "--tables=summary", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_NE(r.manifest, nullptr);
  EXPECT_EQ(r.manifest->Json("/tables/system"),
            "[{\"node\":\"algo-1\",\"dimension\":\"CPUUtilization\",\"samples\":68,\"mean\":5.86,\"max\":55.99},"
            "{\"node\":\"algo-1\",\"dimension\":\"GPUMemoryUtilization\",\"samples\":6,\"mean\":48.43,\"max\":84.76},"
            "{\"node\":\"algo-1\",\"dimension\":\"GPUUtilization\",\"samples\":4,\"mean\":20.57,\"max\":34.76}]");
  const std::string html = ReadFileBytes(r.Output("report.html"));
  EXPECT_THAT(html, HasSubstr("<section id=\"system\">"));
  EXPECT_THAT(html, HasSubstr("<tr><td>algo-1</td><td>GPUUtilization</td><td class=\"n\">4</td><td class=\"n\">20.57"
                              "</td><td class=\"n\">34.76</td></tr>"));
  Run p = Convert({DataPath("smdebug/merge_traces"), "--tables=full", "-q"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  ASSERT_NE(p.manifest, nullptr);
  EXPECT_EQ(Query(p.Output("tables.sqlite"), "SELECT phase, sum(time_ns), count(DISTINCT step) FROM phase_by_step"),
            (Rows{{"phase", "sum(time_ns)", "count(DISTINCT step)"}, {"DataIterator", "22303000", "30"}}));
  EXPECT_EQ(p.manifest->Json("/tables/phases"),
            "[{\"node\":\"905-b88ab1bb8259\",\"phase\":\"DataIterator\",\"time_ns\":22303000,\"steps\":30}]");
  EXPECT_THAT(ReadFileBytes(p.Output("report.html")),
              HasSubstr("<tr><td>905-b88ab1bb8259</td><td>DataIterator</td><td class=\"n\">22.303 ms</td>"
                        "<td class=\"n\">100.00%</td><td class=\"n\">30</td></tr>"));
  // Without --tables: no section.
  Run none = Convert({DataPath("smdebug/merge_traces"), "-q"});
  EXPECT_EQ(ReadFileBytes(none.Output("report.html")).find("<section id=\"system\">"), std::string::npos);
}


// Issue 35: collectives matched across ranks. By `Seq` where the kernels
// carry it (instance 1 on rank 0 only, instance 2 on rank 1 only); by time
// without it (ends within 50 µs, at most one op per input in an instance).
// Arrival is the kernel's start; wait the instance's last arrival minus
// it; latency the shortest kernel; bandwidths in GB/s with NCCL's factors.
TEST_F(TablesConvertTest, CollectivesAreMatchedAcrossRanks) {
  auto kernel = [](const char* name, int ts, int dur, const std::string& args) {
    return std::string("{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"") + name + "\",\"pid\":0,\"tid\":7,\"ts\":170000000000" +
           std::to_string(ts) + ",\"dur\":" + std::to_string(dur) + ",\"args\":{\"stream\":7" + args + "}}";
  };
  const std::string group = ",\"Group size\":2,\"Process Group Name\":\"0\",\"Process Group Ranks\":\"[0, 1]\"";
  const std::string reduce = ",\"Collective name\":\"allreduce\",\"In msg nelems\":1048576,"
                             "\"Out msg nelems\":1048576,\"dtype\":\"Float\"" + group;
  const std::string gather = ",\"Collective name\":\"_allgather_base\",\"In msg nelems\":1024,"
                             "\"Out msg nelems\":2048,\"dtype\":\"BFloat16\"" + group;
  const char* ar = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
  const char* ag = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
  const char* old = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)";
  const std::string r0 = RankFile(0, {kernel(ar, 1000, 300, reduce + ",\"Seq\":0"),
                                      kernel(ag, 2000, 100, gather + ",\"Seq\":1"), kernel(old, 5000, 40, ""),
                                      kernel(old, 5042, 3, "")});
  const std::string r1 = RankFile(1, {kernel(ar, 1200, 100, reduce + ",\"Seq\":\"0\""),
                                      kernel("ncclDevKernel_Broadcast_RING_LL(x)", 3000, 50, group + ",\"Seq\":2"),
                                      kernel(old, 5010, 30, "")});
  Run r = Convert({r0, r1, "--tables", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string db = r.Output("tables.sqlite");
  EXPECT_EQ(Query(db, "SELECT instance, process_group, seq, collective, rank, arrival_ns, end_ns, wait_ns, bytes, "
                      "aligned, group_size FROM collectives ORDER BY instance, rank"),
            (Rows{{"instance", "process_group", "seq", "collective", "rank", "arrival_ns", "end_ns", "wait_ns", "bytes",
                   "aligned", "group_size"},
                  {"0", "0", "0", "allreduce", "0", "1700000000001000000", "1700000000001300000", "200000", "4194304", "1", "2"},
                  {"0", "0", "0", "allreduce", "1", "1700000000001200000", "1700000000001300000", "0", "4194304", "1", "2"},
                  {"1", "0", "1", "allgather", "0", "1700000000002000000", "1700000000002100000", "0", "4096", "1", "2"},
                  {"2", "0", "2", "broadcast", "1", "1700000000003000000", "1700000000003050000", "0", "NULL", "1", "2"},
                  {"3", "", "NULL", "allreduce", "0", "1700000000005000000", "1700000000005040000", "10000", "NULL", "1", "NULL"},
                  {"3", "", "NULL", "allreduce", "1", "1700000000005010000", "1700000000005040000", "0", "NULL", "1", "NULL"},
                  {"4", "", "NULL", "allreduce", "0", "1700000000005042000", "1700000000005045000", "0", "NULL", "1", "NULL"}}));
  EXPECT_EQ(Query(db, "SELECT instance, seq, collective, ranks, first_arrival_ns, last_arrival_ns, last_rank, skew_ns, "
                      "latency_ns, bytes, round(algbw_gbps, 5), round(busbw_gbps, 5) "
                      "FROM collective_instances ORDER BY instance"),
            (Rows{{"instance", "seq", "collective", "ranks", "first_arrival_ns", "last_arrival_ns", "last_rank",
                   "skew_ns", "latency_ns", "bytes", "round(algbw_gbps, 5)", "round(busbw_gbps, 5)"},
                  {"0", "0", "allreduce", "2", "1700000000001000000", "1700000000001200000", "1", "200000", "100000", "4194304", "41.94304",
                   "41.94304"},
                  {"1", "1", "allgather", "1", "1700000000002000000", "1700000000002000000", "0", "0", "100000", "4096", "0.04096", "0.02048"},
                  {"2", "2", "broadcast", "1", "1700000000003000000", "1700000000003000000", "1", "0", "50000", "NULL", "NULL", "NULL"},
                  {"3", "NULL", "allreduce", "2", "1700000000005000000", "1700000000005010000", "1", "10000", "30000", "NULL", "NULL", "NULL"},
                  {"4", "NULL", "allreduce", "1", "1700000000005042000", "1700000000005042000", "0", "0", "3000", "NULL", "NULL", "NULL"}}));
  // Rank 1 was last at both shared instances: 200 + 10 µs of rank 0's waiting.
  EXPECT_EQ(Query(db, "SELECT * FROM rank_waits ORDER BY rank"),
            (Rows{{"rank", "instances", "times_last", "caused_ns", "waited_ns"},
                  {"0", "4", "0", "0", "210000"},
                  {"1", "3", "2", "210000", "0"}}));
  // The notices: instances 1, 2 and 4 lack a rank of their group; 0 and 1 have sizes.
  const std::string manifest = ReadFileBytes(r.Output("manifest.json"));
  EXPECT_THAT(manifest, HasSubstr("collectives: 3 of 5 instances are missing on some ranks of their process group"));
  EXPECT_THAT(manifest, HasSubstr("collectives: 3 of 5 instances have no message size"));
  EXPECT_THAT(manifest, Not(HasSubstr("in its rank's Seq")));
  // The report's Collectives section names rank 1 (the manifest's tables.collectives).
  const std::string html = ReadFileBytes(r.Output("report.html"));
  EXPECT_THAT(html, HasSubstr("<section id=\"collectives\">"));
  EXPECT_THAT(html, HasSubstr("<b>Rank 1 kept the others waiting most</b>: last at 2 of 2 instances, 210 µs of "
                              "waiting in all."));
  EXPECT_THAT(html, HasSubstr("<tr><td>allreduce</td><td>1 - 16 MiB</td><td class=\"n\">1</td><td class=\"n\">100 µs"
                              "</td><td class=\"n\">41.94</td><td class=\"n\">41.94</td></tr>"));
}

// Issue 35, bad input: a Seq that repeats, ranks that disagree on an
// instance's kind and on their group's size are said (manifest notices and
// the terminal), and every op is still a row, matched one per rank.
TEST_F(TablesConvertTest, OddCollectivesAreSaidAndStillMatched) {
  auto kernel = [](const char* kind, int ts, int group_size, int seq) {
    return std::string("{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_") + kind +
           "_RING_LL(x)\",\"pid\":0,\"tid\":7,\"ts\":170000000000" + std::to_string(ts) +
           ",\"dur\":50,\"args\":{\"stream\":7,\"Group size\":" + std::to_string(group_size) +
           ",\"Process Group Name\":\"0\",\"Seq\":" + std::to_string(seq) + "}}";
  };
  const std::string r0 = RankFile(0, {kernel("AllReduce", 1000, 2, 0), kernel("AllReduce", 2000, 2, 1),
                                      kernel("AllReduce", 3000, 2, 1)});
  const std::string r1 = RankFile(1, {kernel("AllGather", 1010, 2, 0), kernel("AllReduce", 2010, 4, 1)});
  Run r = Convert({r0, r1, "--tables"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("warning: collectives: 1 op repeats or goes back in its rank's Seq"));
  EXPECT_THAT(r.err, HasSubstr("warning: collectives: at 1 instance the ranks disagree on the collective's kind"));
  EXPECT_THAT(r.err, HasSubstr("warning: collectives: 1 process group's ranks disagree on its size"));
  const std::string db = r.Output("tables.sqlite");
  EXPECT_EQ(Query(db, "SELECT instance, seq, ranks, last_rank, skew_ns FROM collective_instances ORDER BY instance"),
            (Rows{{"instance", "seq", "ranks", "last_rank", "skew_ns"},
                  {"0", "0", "2", "1", "10000"},
                  {"1", "1", "2", "1", "10000"},
                  {"2", "1", "1", "0", "0"}}));
  EXPECT_THAT(ReadFileBytes(r.Output("manifest.json")), HasSubstr("collectives: 1 op repeats or goes back"));
}

// Issue 35: HTA's NCCL trace (tests/data/hta/nccl_parser_config, rank 0 of a
// 2-rank group, Kineto args with sizes): one row and one instance per NCCL
// kernel (21), bytes = max(In, Out msg nelems) x dtype size as the args give
// them (expected values from the file: 307,323,096 bytes in all, 424 to
// 31,502,336), bandwidths worked by hand: instance 0, a broadcast of
// 212,480 B in 30.975 us: 212480 / 30975 = 6.859726 GB/s, bus factor 1;
// instance 2, an allreduce of 2,049,000 floats = 8,196,000 B in 3,306.963 us:
// 8196000 / 3306963 = 2.478407 GB/s, bus factor 2(n-1)/n = 1 for n = 2.
TEST_F(TablesConvertTest, HtaNcclTraceGivesOneInstancePerKernelWithItsSize) {
  Run r = Convert({DataPath("hta/nccl_parser_config/nccl_data.json.gz"), "--tables", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string db = r.Output("tables.sqlite");
  EXPECT_EQ(Query(db, "SELECT count(*), sum(bytes), min(bytes), max(bytes), count(DISTINCT instance), "
                      "min(group_size), max(group_size) FROM collectives"),
            (Rows{{"count(*)", "sum(bytes)", "min(bytes)", "max(bytes)", "count(DISTINCT instance)",
                   "min(group_size)", "max(group_size)"},
                  {"21", "307323096", "424", "31502336", "21", "2", "2"}}));
  EXPECT_EQ(Query(db, "SELECT instance, collective, bytes, latency_ns, round(algbw_gbps, 6), round(busbw_gbps, 6) "
                      "FROM collective_instances WHERE instance IN (0, 2) ORDER BY instance"),
            (Rows{{"instance", "collective", "bytes", "latency_ns", "round(algbw_gbps, 6)", "round(busbw_gbps, 6)"},
                  {"0", "broadcast", "212480", "30975", "6.859726", "6.859726"},
                  {"2", "allreduce", "8196000", "3306963", "2.478407", "2.478407"}}));
}

}  // namespace
}  // namespace tracemill::testing
