// Outputs that open in a viewer (issue 20): --ranks, --max-output-bytes
// (time parts) and overview.trace.json, end to end with the real binary.
#include <gtest/gtest.h>
#include <zlib.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/testing/convert_harness.h"
#include "tests/testing/output_trace.h"

namespace tracemill::testing {
namespace {

class ViewTest : public ConvertTest {
 protected:
  // Each part's flows_across_parts (output 0) against its file: the flow
  // events (s, t, f) whose flow's first event is in an earlier part and
  // has not ended (f) since.
  void ExpectFlowsAcrossPartsAsTheFilesHaveThem(const Run& run) {
    const size_t n = run.manifest->ArraySize("/outputs/0/parts");
    std::map<std::string, size_t> open;  // flow id -> part of its first event
    for (size_t k = 0; k < n; ++k) {
      const std::string part = "/outputs/0/parts/" + std::to_string(k);
      auto t = LoadTrace(run.Output(run.manifest->Str(part + "/path")));
      ASSERT_TRUE(t);
      int64_t across = 0;
      for (const OutEvent& e : t->events) {
        if ((e.ph != "s" && e.ph != "t" && e.ph != "f") || e.id.empty()) continue;
        auto [it, fresh] = open.try_emplace(e.id, k);
        if (fresh) continue;
        across += it->second != k;
        if (e.ph == "f") open.erase(it);
      }
      EXPECT_EQ(run.manifest->Int(part + "/flows_across_parts"), across) << "part " << k + 1;
    }
  }

  // A job of `ranks` ranks (8 per node) of `collectives` NCCL kernels and
  // CPU records each, with steps (tests/tools/clock_job.py).
  std::string MakeJob(const std::string& name, int ranks, int collectives) {
    const std::string dir = tmp_.Join(name);
    EXPECT_EQ(RunCommand({"/bin/mkdir", "-p", dir}, tmp_.path()).exit_code, 0);
    std::string offsets;
    for (int n = 0; n < (ranks + 7) / 8; ++n) offsets += (n ? ",0" : "0");
    CommandResult r = RunCommand({TRACEMILL_PYTHON3_FOR_TESTS, TRACEMILL_CLOCK_JOB, "make", dir, "--nodes",
                                  std::to_string((ranks + 7) / 8), "--gpus", "8", "--offsets-us", offsets,
                                  "--collectives", std::to_string(collectives), "--steps"},
                                 tmp_.path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return dir;
  }
  static uint64_t FileSize(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  }
  // The ranks an output holds (otherData.inputs).
  std::set<int64_t> RanksOf(const std::string& path) {
    std::set<int64_t> ranks;
    if (auto t = LoadTrace(path))
      for (const OutInput& in : t->inputs)
        if (in.rank) ranks.insert(*in.rank);
    return ranks;
  }
};

// The sample job: rank 0 left out of the traces, still read, counted and
// reported.
TEST_F(ViewTest, RanksOnTheSampleJob) {
  Run run = Convert({DataPath("../../cluster-examples/sample-job"), "--ranks", "1"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Manifest& m = *run.manifest;
  EXPECT_TRUE(ManifestBalances(m));
  EXPECT_EQ(ListDir(run.out_dir), (std::vector<std::string>{"gpu1.trace.json", "manifest.json"}));
  const int r0 = m.InputIndex("sampled_rank-0.json.gz");
  EXPECT_EQ(m.Int(Manifest::InputPointer(r0, "/events_read")), 4855);
  EXPECT_EQ(m.Int(Manifest::InputPointer(r0, "/events_written")), 0);
  // Read whole: the records of its seven unused GPUs are left out first.
  EXPECT_EQ(m.Int(Manifest::InputPointer(r0, "/dropped_by_reason/empty_process")), 21);
  EXPECT_EQ(m.Int(Manifest::InputPointer(r0, "/dropped_by_reason/not_selected")), 4855 - 21);
  EXPECT_TRUE(m.IsNull(Manifest::InputPointer(r0, "/output")));
  EXPECT_EQ(m.Int("/totals/dropped_by_reason/not_selected"), 4855 - 21);
  EXPECT_EQ(RanksOf(run.Output("gpu1.trace.json")), (std::set<int64_t>{1}));
  const std::string report = ReadFileBytes(run.Output("report.html"));
  EXPECT_NE(report.find("sampled_rank-0.json.gz"), std::string::npos);
}

// 16 ranks, some kept: each output holds only kept ranks, every input is
// accounted for, and a bad list is a usage error.
TEST_F(ViewTest, RanksOnASixteenRankJob) {
  const std::string job = MakeJob("job", 16, 50);
  Run run = Convert({job, "--ranks", "0-3,9,14-15"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Manifest& m = *run.manifest;
  EXPECT_TRUE(ManifestBalances(m));
  std::set<int64_t> written;
  for (const std::string& name : ListDir(run.out_dir))
    if (name.find(".trace.json") != std::string::npos)
      for (int64_t r : RanksOf(run.Output(name))) written.insert(r);
  EXPECT_EQ(written, (std::set<int64_t>{0, 1, 2, 3, 9, 14, 15}));
  int64_t read = 0, not_selected = 0;
  for (size_t i = 0; i < m.ArraySize("/inputs"); ++i) {
    read += m.Int(Manifest::InputPointer(static_cast<int>(i), "/events_read"));
    if (m.Has(Manifest::InputPointer(static_cast<int>(i), "/dropped_by_reason/not_selected")))
      not_selected += m.Int(Manifest::InputPointer(static_cast<int>(i), "/dropped_by_reason/not_selected"));
  }
  EXPECT_EQ(m.Int("/totals/events_read"), read);
  EXPECT_EQ(not_selected, 9 * 106);  // 9 ranks of a process_name, 50 kernels, 50 CPU records, 5 steps
  CommandResult bad = Tracemill({"convert", job, "-o", tmp_.Join("bad"), "--ranks", "4-2"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "tracemill: --ranks 4-2: bad item \"4-2\" (expected ranks and ranges like 0-7,64,120-127)\n");
  // Empty (`--ranks "$RANKS"` with the variable unset) is not "every rank".
  CommandResult empty = Tracemill({"convert", job, "-o", tmp_.Join("empty"), "--ranks", ""});
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_EQ(empty.err, "--ranks: an empty list (expected ranks and ranges like 0-7,64,120-127)\n"
                       "Run with --help for more information.\n");
  EXPECT_FALSE(std::filesystem::exists(tmp_.Join("empty")));
}

// A --ranks list that selects none of the ranks read (ranks counted from
// 1, a typo) is said, on the terminal and in the manifest's notices, not
// left as a count of drops; a shard, which may hold none of the ranks
// asked for, does not say it, the merged manifest does.
TEST_F(ViewTest, RanksThatSelectNoneAreSaid) {
  const std::string job = MakeJob("job", 16, 50);
  const std::string notice =
      "--ranks selects none of the ranks read (16 inputs, ranks 0-15): no rank's events were written";
  Run run = Convert({job, "--ranks", "16-31"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.manifest->ArraySize("/notices"), 1u);
  EXPECT_EQ(run.manifest->Str("/notices/0"), notice);
  EXPECT_NE(run.err.find("tracemill: warning: " + notice + "\n"), std::string::npos) << run.err;
  Run some = Convert({job, "--ranks", "15-31"});
  ASSERT_EQ(some.exit_code, 0) << some.err;
  EXPECT_FALSE(some.manifest->Has("/notices"));

  const std::string out = tmp_.Join("sharded");
  for (int i = 0; i < 2; ++i) {
    CommandResult s = Tracemill({"convert", job, "-o", out, "--ranks", "16-31", "--shard", std::to_string(i) + "/2"});
    ASSERT_EQ(s.exit_code, 0) << s.err;
    EXPECT_EQ(s.err.find("selects none"), std::string::npos) << s.err;
  }
  ASSERT_EQ(Tracemill({"manifest", "merge", out}).exit_code, 0);
  auto merged = Manifest::Load(out + "/manifest.json");
  ASSERT_TRUE(merged);
  ASSERT_EQ(merged->ArraySize("/notices"), 1u);
  EXPECT_EQ(merged->Str("/notices/0"), notice);

  // The ranks read as they are (not their min-max), and an input that also
  // dropped events of its own (here one without ts) still counts as not
  // selected.
  const std::string gaps = tmp_.Join("gaps");
  EXPECT_EQ(RunCommand({"/bin/mkdir", "-p", gaps}, tmp_.path()).exit_code, 0);
  for (int r : {0, 5, 6, 12})
    WriteFileBytes(gaps + "/rank" + std::to_string(r) + ".json",
                   "{\"distributedInfo\": {\"rank\": " + std::to_string(r) +
                       "}, \"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, "
                       "\"ts\": 1700000000000000, \"dur\": 1}, {\"ph\": \"X\", \"name\": \"no ts\", "
                       "\"pid\": 1, \"tid\": 1}]}\n");
  Run none = Convert({gaps, "--ranks", "1-4"});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  ASSERT_EQ(none.manifest->ArraySize("/notices"), 1u);
  EXPECT_EQ(none.manifest->Str("/notices/0"),
            "--ranks selects none of the ranks read (4 inputs, ranks 0, 5-6, 12): no rank's events were written");
}

// The manifest's CRC-32 of an output is the file's whatever the thread
// count: the formatting threads compute each range's CRC and the append
// stage combines them (merge_write.cc); a gzip file's is of its members.
TEST_F(ViewTest, OutputCrcIsTheFilesWhateverTheThreads) {
  const std::string job = MakeJob("crcjob", 8, 400);
  std::string first;
  for (const char* threads : {"1", "2", "4"}) {
    for (bool gzip : {false, true}) {
      SCOPED_TRACE(std::string(threads) + (gzip ? " threads, gzip" : " threads"));
      std::vector<std::string> args = {job, "--group-by", "all", "--threads", threads, "--verbose"};
      if (gzip) args.push_back("--compress");
      Run run = Convert(args);
      ASSERT_EQ(run.exit_code, 0) << run.err;
      const std::string name = run.manifest->Str("/outputs/0/path");
      const std::string bytes = ReadFileBytes(run.Output(name));
      if (!gzip) {
        ASSERT_GT(bytes.size(), 2u * (256u << 10));  // more than one range or batch
      }
      EXPECT_EQ(run.manifest->Int("/outputs/0/crc32"),
                static_cast<int64_t>(crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size())));
      if (!gzip && first.empty()) first = bytes;
      if (!gzip) {
        EXPECT_TRUE(bytes == first);
      }
      if (std::string(threads) == "4") {
        EXPECT_NE(run.err.find(" ranges, serial stages: cut "), std::string::npos);
      }
    }
  }
}

// An output forced into parts: the parts concatenated (less each later
// part's replayed metadata) hold exactly the events of the unsplit output,
// in order; each part is a complete trace with metadata first, under the
// bound; the manifest's part time spans and starts are the parts' own; the bytes do
// not depend on the thread count.
TEST_F(ViewTest, PartsHoldTheEventsOfTheUnsplitOutput) {
  const std::string job = MakeJob("job", 8, 400);
  Run whole = Convert({job, "--group-by", "all", "--max-output-bytes", "0"});
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  Run parted = Convert({job, "--group-by", "all", "--max-output-bytes", "256K"});
  ASSERT_EQ(parted.exit_code, 0) << parted.err;
  const Manifest& m = *parted.manifest;
  const size_t n = m.ArraySize("/outputs/0/parts");
  ASSERT_GE(n, 3u);
  EXPECT_EQ(m.Str("/outputs/0/path"), "all.trace.json");
  auto unsplit = LoadTrace(whole.Output("all.trace.json"));
  ASSERT_TRUE(unsplit);
  std::vector<std::string> joined;
  for (size_t k = 0; k < n; ++k) {
    const std::string part = "/outputs/0/parts/" + std::to_string(k);
    const std::string name = m.Str(part + "/path");
    char want[64];
    std::snprintf(want, sizeof(want), "all.part-%03zu.trace.json", k + 1);
    EXPECT_EQ(name, want);
    EXPECT_LE(FileSize(parted.Output(name)), 256u << 10) << name;
    EXPECT_EQ(static_cast<uint64_t>(m.Int(part + "/bytes")), FileSize(parted.Output(name)));
    auto t = LoadTrace(parted.Output(name));
    ASSERT_TRUE(t) << name;
    EXPECT_TRUE(TsNonDecreasing(*t)) << name;
    int64_t lo = INT64_MAX, hi = INT64_MIN, last_start = INT64_MIN;
    size_t first = 0;
    if (k > 0)  // the replayed metadata
      while (first < t->events.size() && t->events[first].ph == "M") ++first;
    for (size_t i = first; i < t->events.size(); ++i) {
      const OutEvent& e = t->events[i];
      joined.push_back(e.ph + "|" + e.name + "|" + e.ts + "|" + e.dur + "|" + e.tid);
      if (e.ph == "M") continue;
      const int64_t ts = *MicrosToNanos(e.ts);
      lo = std::min(lo, ts);
      hi = std::max(hi, e.dur.empty() ? ts : ts + *MicrosToNanos(e.dur));
      last_start = std::max(last_start, ts);
    }
    EXPECT_EQ(m.Int(part + "/time_span_ns/0"), lo) << name;
    EXPECT_EQ(m.Int(part + "/time_span_ns/1"), hi) << name;
    EXPECT_EQ(m.Int(part + "/starts_ns/0"), lo) << name;
    EXPECT_EQ(m.Int(part + "/starts_ns/1"), last_start) << name;
  }
  std::vector<std::string> all;
  for (const OutEvent& e : unsplit->events) all.push_back(e.ph + "|" + e.name + "|" + e.ts + "|" + e.dur + "|" + e.tid);
  EXPECT_EQ(joined, all);
  // The report links the parts, with the times each holds.
  const std::string report = ReadFileBytes(parted.Output("report.html"));
  EXPECT_NE(report.find("all.trace.json (" + std::to_string(n) + " time parts)"), std::string::npos);
  EXPECT_NE(report.find("<a href=\"all.part-001.trace.json\">all.part-001.trace.json</a>"), std::string::npos);
  EXPECT_EQ(ListDir(parted.out_dir).size(), n + 1);  // the parts and the manifest
  Run one = Convert({job, "--group-by", "all", "--max-output-bytes", "256K", "--threads", "1"});
  // 4 threads: the merge in time ranges (merge_write.h), the same parts.
  Run four = Convert({job, "--group-by", "all", "--max-output-bytes", "256K", "--threads", "4", "--verbose"});
  EXPECT_NE(four.err.find(" ranges, serial stages: cut "), std::string::npos) << four.err;
  // What the manifest says of each part, too (with 4 threads each range's
  // events are tracked where it is formatted, OutputParts::Tracked).
  for (size_t k = 0; k < n; ++k) {
    const std::string part = "/outputs/0/parts/" + std::to_string(k);
    const std::string name = m.Str(part + "/path");
    EXPECT_EQ(ReadFileBytes(one.Output(name)), ReadFileBytes(parted.Output(name))) << name;
    EXPECT_EQ(ReadFileBytes(four.Output(name)), ReadFileBytes(parted.Output(name))) << name;
    EXPECT_EQ(one.manifest->Json(part), m.Json(part)) << name;
    EXPECT_EQ(four.manifest->Json(part), m.Json(part)) << name;
  }
  // Rerun unsplit into the same folder: the parts go.
  CommandResult again = Tracemill({"convert", job, "-o", parted.out_dir, "--group-by", "all", "-q"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(ListDir(parted.out_dir), (std::vector<std::string>{"all.trace.json", "manifest.json"}));
}

// A real trace's flows (9,096 `s`/`f` pairs) in parts: each part's record
// (flows reaching into an earlier part, spans, times, events) is the same
// whether its events were tracked one by one (1 thread) or each range where
// it was formatted (4 threads), and so are the bytes.
TEST_F(ViewTest, PartsOfARealTraceSayTheSameWhateverTheThreads) {
  const std::string input = DataPath("kineto-tb-plugin/resnet50_run2");
  Run one = Convert({input, "--max-output-bytes", "1M", "--threads", "1"});
  Run four = Convert({input, "--max-output-bytes", "1M", "--threads", "4", "--verbose"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(four.exit_code, 0) << four.err;
  EXPECT_NE(four.err.find(" ranges, serial stages: cut "), std::string::npos) << four.err;
  const size_t n = one.manifest->ArraySize("/outputs/0/parts");
  ASSERT_GE(n, 5u);
  ASSERT_EQ(four.manifest->ArraySize("/outputs/0/parts"), n);
  uint64_t flows_across = 0;
  for (size_t k = 0; k < n; ++k) {
    const std::string part = "/outputs/0/parts/" + std::to_string(k);
    const std::string name = one.manifest->Str(part + "/path");
    EXPECT_EQ(four.manifest->Json(part), one.manifest->Json(part)) << name;
    EXPECT_EQ(ReadFileBytes(four.Output(name)), ReadFileBytes(one.Output(name))) << name;
    flows_across += static_cast<uint64_t>(one.manifest->Int(part + "/flows_across_parts"));
  }
  EXPECT_GT(flows_across, 0u);
  ExpectFlowsAcrossPartsAsTheFilesHaveThem(one);
}

// --max-output-bytes at an output's exact size: one file; a byte less: parts,
// none over the bound. (An output whose events' bounds fit is written whole
// without tracking them, OutputParts::KeepWholeIfFits: at the edge the
// bound, larger than the bytes, must not keep it whole.)
TEST_F(ViewTest, AnOutputOfExactlyTheBoundIsOneFileAndAByteMoreIsParts) {
  const std::string input = DataPath("hta/trace_filter/sampled_rank-0.json.gz");
  Run whole = Convert({input});
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  ASSERT_EQ(whole.manifest->ArraySize("/outputs"), 1u);
  const std::string name = whole.manifest->Str("/outputs/0/path");
  const uint64_t size = FileSize(whole.Output(name));
  Run at = Convert({input, "--max-output-bytes", std::to_string(size)});
  ASSERT_EQ(at.exit_code, 0) << at.err;
  EXPECT_FALSE(at.manifest->Has("/outputs/0/parts"));
  EXPECT_EQ(ReadFileBytes(at.Output(name)), ReadFileBytes(whole.Output(name)));
  Run under = Convert({input, "--max-output-bytes", std::to_string(size - 1)});
  ASSERT_EQ(under.exit_code, 0) << under.err;
  const size_t parts = under.manifest->ArraySize("/outputs/0/parts");
  EXPECT_EQ(parts, 2u);
  for (size_t k = 0; k < parts; ++k)
    EXPECT_LE(FileSize(under.Output(under.manifest->Str("/outputs/0/parts/" + std::to_string(k) + "/path"))), size - 1);
}

// The same edge where a process_name record is most of the output: its
// bytes (this output's label and the process's 100,000-byte name) count in
// the bound though the decode's sums leave it out (they cannot know the
// label).
TEST_F(ViewTest, AProcessNameRecordCountsInTheBoundThatKeepsAnOutputWhole) {
  const std::string job = tmp_.Join("longname");
  ASSERT_EQ(RunCommand({"/bin/mkdir", "-p", job}, tmp_.path()).exit_code, 0);
  WriteFileBytes(job + "/rank0.json",
                 "{\"traceEvents\":[\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"" +
                     std::string(100000, 'p') +
                     "\"}},\n{\"ph\":\"X\",\"name\":\"k\",\"pid\":1,\"tid\":2,\"ts\":0,\"dur\":10},\n"
                     "{\"ph\":\"X\",\"name\":\"k\",\"pid\":1,\"tid\":2,\"ts\":100,\"dur\":10}\n]}\n");
  Run whole = Convert({job});
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  const std::string name = whole.manifest->Str("/outputs/0/path");
  const uint64_t size = FileSize(whole.Output(name));
  ASSERT_GT(size, 65536u);  // --max-output-bytes takes no less
  Run at = Convert({job, "--max-output-bytes", std::to_string(size)});
  ASSERT_EQ(at.exit_code, 0) << at.err;
  EXPECT_FALSE(at.manifest->Has("/outputs/0/parts"));
  EXPECT_EQ(ReadFileBytes(at.Output(name)), ReadFileBytes(whole.Output(name)));
  // A byte less: cut in two (each part repeats the 100 KB record, so the
  // parts cannot keep under the bound; what matters here is the cut).
  Run under = Convert({job, "--max-output-bytes", std::to_string(size - 1)});
  ASSERT_EQ(under.exit_code, 0) << under.err;
  EXPECT_EQ(under.manifest->ArraySize("/outputs/0/parts"), 2u);
}

// Flow ids used again once their flow ended (f): a flow is counted across
// parts only while it is open, so a later flow of the same id starts afresh.
TEST_F(ViewTest, FlowIdsUsedAgainAfterTheirFlowEndedStartAfresh) {
  // 4,000 10 us kernels 100 us apart; a flow from every 50th to the kernel
  // 30 later, ids 1-5 in turn (an id again 250 kernels after its last use).
  std::string json = "{\"traceEvents\":[\n{\"ph\":\"X\",\"name\":\"k\",\"pid\":1,\"tid\":2,\"ts\":0,\"dur\":10}";
  for (int i = 1; i < 4000; ++i) {
    const std::string ts = std::to_string(i * 100);
    json += ",\n{\"ph\":\"X\",\"name\":\"k\",\"pid\":1,\"tid\":2,\"ts\":" + ts + ",\"dur\":10}";
    const std::string id = std::to_string(1 + i / 50 % 5);
    if (i % 50 == 0 && i + 30 < 4000)
      json += ",\n{\"ph\":\"s\",\"name\":\"fl\",\"cat\":\"c\",\"id\":" + id + ",\"pid\":1,\"tid\":2,\"ts\":" + ts + "}";
    if (i % 50 == 30 && i >= 80)
      json += ",\n{\"ph\":\"f\",\"name\":\"fl\",\"cat\":\"c\",\"id\":" + std::to_string(1 + (i - 30) / 50 % 5) +
              ",\"bp\":\"e\",\"pid\":1,\"tid\":2,\"ts\":" + ts + "}";
  }
  json += "\n]}\n";
  const std::string job = tmp_.Join("flowids");
  ASSERT_EQ(RunCommand({"/bin/mkdir", "-p", job}, tmp_.path()).exit_code, 0);
  WriteFileBytes(job + "/rank0.json", json);
  Run run = Convert({job, "--max-output-bytes", "64K"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_GE(run.manifest->ArraySize("/outputs/0/parts"), 4u);
  ExpectFlowsAcrossPartsAsTheFilesHaveThem(run);
}

// A span that runs to the end in part 1: its time_span_ns reaches past part
// 2's first start, but its starts_ns stop before it, and the report shows
// the starts (the parts' ranges follow one another).
TEST_F(ViewTest, PartStartsDoNotOverlap) {
  // One 1 s span at ts 0, then 1,500 10 us kernels 100 us apart.
  std::string json = "{\"traceEvents\":[\n{\"ph\":\"X\",\"name\":\"long\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1000000}";
  for (int i = 0; i < 1500; ++i)
    json += ",\n{\"ph\":\"X\",\"name\":\"k\",\"pid\":1,\"tid\":2,\"ts\":" + std::to_string(100 + i * 100) + ",\"dur\":10}";
  json += "\n]}\n";
  const std::string job = tmp_.Join("longspan");
  ASSERT_EQ(RunCommand({"/bin/mkdir", "-p", job}, tmp_.path()).exit_code, 0);
  WriteFileBytes(job + "/rank0.json", json);
  Run run = Convert({job, "--max-output-bytes", "64K"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Manifest& m = *run.manifest;
  ASSERT_EQ(m.ArraySize("/outputs/0/parts"), 2u);
  // Where the cut falls depends on the header's length (the input's path):
  // the last kernel of part 1, from the file itself.
  auto part1 = LoadTrace(run.Output("gpu0.part-001.trace.json"));
  ASSERT_TRUE(part1);
  ASSERT_EQ(part1->events.back().name, "k");
  const int64_t last = *MicrosToNanos(part1->events.back().ts);
  ASSERT_GT(last, 10'000'000);
  ASSERT_LT(last, 140'000'000);
  const int64_t next = last + 100'000;  // the next kernel: part 2's first event
  EXPECT_EQ(m.Json("/outputs/0/parts/0/time_span_ns"), "[0,1000000000]");
  EXPECT_EQ(m.Json("/outputs/0/parts/0/starts_ns"), "[0," + std::to_string(last) + "]");
  EXPECT_EQ(m.Json("/outputs/0/parts/1/time_span_ns"), "[" + std::to_string(next) + ",150010000]");
  EXPECT_EQ(m.Json("/outputs/0/parts/1/starts_ns"), "[" + std::to_string(next) + ",150000000]");
  // The report shows the starts in ms, trailing zeros trimmed ("+110.2 ms", "+110 ms").
  auto ms = [](int64_t ns) {
    const int64_t tenth = ns / 100'000 % 10;
    return std::to_string(ns / 1'000'000) + (tenth ? "." + std::to_string(tenth) : "") + " ms";
  };
  const std::string report = ReadFileBytes(run.Output("report.html"));
  EXPECT_NE(report.find("<td title=\"its events end by +1 s\">starts +0 s \xE2\x80\x93 +" + ms(last) + "</td>"),
            std::string::npos);
  EXPECT_NE(report.find("<td title=\"its events end by +150.01 ms\">starts +" + ms(next) + " \xE2\x80\x93 +150 ms</td>"),
            std::string::npos);
  // otherData.part: parts 2 and later (part 1's header was written before
  // the output was known to need parts; the manifest's list says).
  EXPECT_EQ(ReadFileBytes(run.Output("gpu0.part-001.trace.json")).find("\"part\":{"), std::string::npos);
  EXPECT_NE(ReadFileBytes(run.Output("gpu0.part-002.trace.json")).find("\"part\":{\"index\":2,\"of_output\":\"gpu0.trace.json\""),
            std::string::npos);
}

// Shards write the same parts and overview as one process.
TEST_F(ViewTest, ShardUnionWithParts) {
  const std::string job = MakeJob("job", 16, 200);
  Run one = Convert({job, "--max-output-bytes", "128K"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const std::string out = tmp_.Join("sharded");
  for (int i = 0; i < 3; ++i) {
    CommandResult s =
        Tracemill({"convert", job, "-o", out, "--max-output-bytes", "128K", "-q", "--shard", std::to_string(i) + "/3"});
    ASSERT_EQ(s.exit_code, 0) << s.err;
  }
  ASSERT_EQ(Tracemill({"manifest", "merge", out}).exit_code, 0);
  size_t parts = 0;
  for (const std::string& name : ListDir(one.out_dir)) {
    if (name == "manifest.json") continue;
    parts += name.find(".part-") != std::string::npos;
    EXPECT_EQ(ReadFileBytes(out + "/" + name), ReadFileBytes(one.Output(name))) << name;
  }
  EXPECT_GE(parts, 8u);
  EXPECT_EQ(ReadFileBytes(out + "/overview.trace.json"), ReadFileBytes(one.Output("overview.trace.json")));
}

// The overview: one process per rank with its steps, collectives and
// longest spans, the limits in otherData, well under its bound.
TEST_F(ViewTest, OverviewHoldsEveryRank) {
  const std::string job = MakeJob("job", 16, 200);
  Run run = Convert({job});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto t = LoadTrace(run.Output("overview.trace.json"));
  ASSERT_TRUE(t);
  EXPECT_NE(t->other_data.find("\"overview\":{\"inputs\":16,\"bound_bytes\":67108864,\"limits\":{"), std::string::npos);
  std::map<int64_t, std::string> names = t->ProcessNames();
  ASSERT_EQ(names.size(), 16u);
  EXPECT_EQ(names.begin()->second, "rank 0 (overview)");
  std::map<int64_t, int> steps, collectives;
  for (const OutEvent& e : t->events) {
    if (e.ph != "X" || !e.pid) continue;
    if (e.cat == "step") ++steps[*e.pid];
    if (e.cat == "kernel") ++collectives[*e.pid];
  }
  for (const auto& [pid, name] : names) {
    EXPECT_EQ(steps[pid], 20) << name;
    EXPECT_EQ(collectives[pid], 200) << name;
  }
  EXPECT_LT(FileSize(run.Output("overview.trace.json")), 64u << 20);
}

// The overview's longest spans, track by track: each "longest: <process> /
// tid <tid>" thread holds spans of that tid only, as the full trace has
// them (the real tb-plugin rank: CPU ops and GPU streams interleave in time,
// 44,666 spans on 4 tracks).
TEST_F(ViewTest, OverviewKeepsEachTracksLongestSpansOnItsOwnTrack) {
  Run run = Convert({DataPath("kineto-tb-plugin/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"),
                     "--threads", "2"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::string full_name;
  for (const std::string& name : ListDir(run.out_dir))
    if (name != "overview.trace.json" && name.find(".trace.json") != std::string::npos) full_name = name;
  auto full = LoadTrace(run.Output(full_name));
  auto overview = LoadTrace(run.Output("overview.trace.json"));
  ASSERT_TRUE(full && overview);
  auto unquote = [](std::string s) { return s.size() >= 2 && s.front() == '"' ? s.substr(1, s.size() - 2) : s; };
  // (name, ts, dur) -> the tids of the full trace's spans.
  std::multimap<std::tuple<std::string, std::string, std::string>, std::string> tid_of;
  for (const OutEvent& e : full->events)
    if (e.ph == "X") tid_of.emplace(std::make_tuple(e.name, e.ts, e.dur), unquote(e.tid));
  std::map<std::string, std::string> track_tid;  // overview tid -> the tid its label names
  for (const OutEvent& e : overview->events) {
    const std::string label = e.ArgsName();
    const size_t at = label.rfind(" / tid ");
    if (e.ph == "M" && e.name == "thread_name" && label.rfind("longest: ", 0) == 0 && at != std::string::npos)
      track_tid[e.tid] = unquote(label.substr(at + 7));
  }
  ASSERT_EQ(track_tid.size(), 4u);
  std::map<std::string, int> spans;  // per overview track
  for (const OutEvent& e : overview->events) {
    auto track = track_tid.find(e.tid);
    if (e.ph != "X" || track == track_tid.end()) continue;
    ++spans[e.tid];
    auto [lo, hi] = tid_of.equal_range(std::make_tuple(e.name, e.ts, e.dur));
    bool found = false;
    for (auto it = lo; it != hi; ++it) found |= it->second == track->second;
    EXPECT_TRUE(found) << e.name << " ts " << e.ts << " on the overview's track of tid " << track->second;
  }
  for (const auto& [tid, tid_named] : track_tid) EXPECT_GT(spans[tid], 0) << tid_named;
}

}  // namespace
}  // namespace tracemill::testing
