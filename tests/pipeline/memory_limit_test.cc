// --memory-limit: runs that do not fit spill to --tmp-dir and are streamed
// back; outputs must be byte-identical to an unlimited run (issue 5).
#include <sys/stat.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/convert_harness.h"

namespace tracemill::testing {
namespace {

class MemoryLimitTest : public ConvertTest {};

// A limit far below the decoded size of the job (4 ranks of a 35 MB Kineto
// file + two HTA ranks) forces spilling; every output must equal an
// unlimited run's.
TEST_F(MemoryLimitTest, SpilledRunsGiveByteIdenticalOutputs) {
  const std::string job = tmp_.Join("job");
  ASSERT_EQ(::mkdir(job.c_str(), 0755), 0);
  for (int r = 0; r < 4; ++r)
    CopyFileTo(DataPath("kineto-tb-plugin/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"),
               job + "/rank" + std::to_string(r) + ".json.gz");
  std::vector<std::string> inputs = {job, DataPath("hta/trace_filter")};
  std::vector<std::string> small = inputs;
  for (const char* a : {"--memory-limit", "180M", "--tmp-dir"}) small.push_back(a);
  small.push_back(tmp_.path());
  small.push_back("-v");
  Run limited = Convert(small);
  ASSERT_EQ(limited.exit_code, 0) << limited.err;
  // --verbose reports how many runs were spilled: at least one must have been.
  size_t at = limited.err.find(" runs (");
  ASSERT_NE(at, std::string::npos) << limited.err;
  size_t start = limited.err.rfind(", ", at);
  ASSERT_NE(start, std::string::npos);
  int spilled = std::stoi(limited.err.substr(start + 2, at - start - 2));
  EXPECT_GE(spilled, 1) << limited.err;

  std::vector<std::string> big = inputs;
  big.push_back("--memory-limit");
  big.push_back("4G");
  Run unlimited = Convert(big);
  ASSERT_EQ(unlimited.exit_code, 0) << unlimited.err;
  std::vector<std::string> names = ListDir(unlimited.out_dir);
  ASSERT_EQ(names, ListDir(limited.out_dir));
  int compared = 0;
  for (const std::string& name : names) {
    if (name == "manifest.json") continue;
    EXPECT_EQ(ReadFileBytes(unlimited.Output(name)), ReadFileBytes(limited.Output(name))) << name;
    ++compared;
  }
  EXPECT_GE(compared, 2);
  EXPECT_EQ(unlimited.manifest->Int("/totals/events_written"),
            limited.manifest->Int("/totals/events_written"));
  EXPECT_TRUE(ManifestBalances(*limited.manifest));
  // Spill files are unlinked at creation: nothing is left in --tmp-dir but
  // this test's own output directories.
  for (const std::string& f : ListDir(tmp_.path()))  // regular files only
    EXPECT_EQ(f.find("tracemill-spill"), std::string::npos) << f;
}

// Overlap: outputs written while later inputs decode (the default when the
// heads tell every output) write the same bytes as decoding everything
// first (--no-overlap), with and without spilled runs; an input planned to
// no output (a README) holds every write back until it is decoded.
TEST_F(MemoryLimitTest, OverlappedWritesEqualStagedWrites) {
  const std::string job = tmp_.Join("overlap-job");
  ASSERT_EQ(::mkdir(job.c_str(), 0755), 0);
  // Eight inputs of rank 0 and two of rank 1 (their distributedInfo): the
  // rank0 output alone holds more runs than a 16M limit keeps in memory
  // (about 13 MiB against 8 MiB), whatever order the inputs decode in. With
  // five (about 8 MiB) whether any spilled hung on that order.
  for (int r = 0; r < 10; ++r)
    CopyFileTo(DataPath(r < 8 ? "hta/trace_filter/sampled_rank-0.json.gz" : "hta/trace_filter/sampled_rank-1.json.gz"),
               job + "/worker" + std::to_string(r) + ".json.gz");
  WriteFileBytes(job + "/README.md", "# not a trace\n");
  // A Paddle profile of rank 1 by its `.1` suffix (planned by its file
  // name): it joins rank1's output.
  CopyFileTo(DataPath("paddle-csp/small/data/profile/profile.1"), job + "/profile.1");
  const std::vector<std::string> common = {job, DataPath("perfetto/flow_events_json_v2.json"),
                                           "--group-by", "rank", "-v"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = common;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  Run overlapped = Convert(with({}));
  Run staged = Convert(with({"--no-overlap"}));
  Run spilled = Convert(with({"--memory-limit", "16M", "--tmp-dir", tmp_.path()}));
  for (const Run* r : {&overlapped, &staged, &spilled}) {
    ASSERT_EQ(r->exit_code, 0) << r->err;
    ASSERT_TRUE(r->manifest);
    EXPECT_TRUE(ManifestBalances(*r->manifest));
  }
  EXPECT_NE(overlapped.err.find("outputs written as their inputs are decoded"), std::string::npos)
      << overlapped.err;
  EXPECT_NE(staged.err.find("outputs written once every input is decoded"), std::string::npos) << staged.err;
  EXPECT_NE(spilled.err.find("outputs written as their inputs are decoded"), std::string::npos) << spilled.err;
  // The limit spilled some runs even though outputs were being written.
  const std::string key = "decoded and written, ";
  size_t at = spilled.err.find(key);
  ASSERT_NE(at, std::string::npos) << spilled.err;
  EXPECT_GE(std::stoi(spilled.err.substr(at + key.size())), 1) << spilled.err;
  std::vector<std::string> names = ListDir(staged.out_dir);
  ASSERT_EQ(names, (std::vector<std::string>{"manifest.json", "rank0.trace.json", "rank1.trace.json",
                                             "unranked.trace.json"}));
  ASSERT_EQ(names, ListDir(overlapped.out_dir));
  ASSERT_EQ(names, ListDir(spilled.out_dir));
  for (const std::string& name : names) {
    if (name == "manifest.json") continue;
    const std::string want = ReadFileBytes(staged.Output(name));
    EXPECT_EQ(ReadFileBytes(overlapped.Output(name)), want) << name;
    EXPECT_EQ(ReadFileBytes(spilled.Output(name)), want) << name;
  }
  // Outputs are listed in output order, whichever was written first.
  EXPECT_EQ(overlapped.manifest->Str("/outputs/0/path"), "rank0.trace.json");
  EXPECT_EQ(overlapped.manifest->Str("/outputs/2/path"), "unranked.trace.json");
  EXPECT_EQ(overlapped.manifest->Int("/totals/events_written"), staged.manifest->Int("/totals/events_written"));
  // Each Kineto rank less its 21 records of seven unused GPUs (empty_process).
  EXPECT_EQ(overlapped.manifest->Int("/totals/events_written"), 8 * (4855 - 21) + 2 * (4720 - 21) + 2400 + 8);
  const int k = overlapped.manifest->InputIndex("profile.1");
  ASSERT_GE(k, 0);
  EXPECT_EQ(overlapped.manifest->Str(Manifest::InputPointer(k, "/output")), "rank1.trace.json");
}

// --time-ranges with spilled runs: a spilled run is not cut to a range by
// position, so each event is placed by time as the merge meets it; the range
// files are those of runs kept in memory (cut by position), byte for byte,
// and each holds a third of its output, not all of it.
TEST_F(MemoryLimitTest, SpilledRunsCutToTimeRangesAsRunsInMemory) {
  const std::string job = tmp_.Join("ranges-job");
  ASSERT_EQ(::mkdir(job.c_str(), 0755), 0);
  for (int r = 0; r < 10; ++r)  // as OverlappedWritesEqualStagedWrites: rank0's runs outgrow 16M
    CopyFileTo(DataPath(r < 8 ? "hta/trace_filter/sampled_rank-0.json.gz" : "hta/trace_filter/sampled_rank-1.json.gz"),
               job + "/worker" + std::to_string(r) + ".json.gz");
  const std::vector<std::string> common = {job, "--group-by", "rank", "--time-ranges", "3", "-v"};
  std::vector<std::string> limited = common;
  for (const char* a : {"--memory-limit", "16M", "--tmp-dir"}) limited.push_back(a);
  limited.push_back(tmp_.path());
  Run in_memory = Convert(common);
  Run spilled = Convert(limited);
  ASSERT_EQ(in_memory.exit_code, 0) << in_memory.err;
  ASSERT_EQ(spilled.exit_code, 0) << spilled.err;
  const std::string key = "decoded and written, ";
  size_t at = spilled.err.find(key);
  ASSERT_NE(at, std::string::npos) << spilled.err;
  EXPECT_GE(std::stoi(spilled.err.substr(at + key.size())), 1) << spilled.err;
  at = in_memory.err.find(key);
  ASSERT_NE(at, std::string::npos) << in_memory.err;
  EXPECT_EQ(std::stoi(in_memory.err.substr(at + key.size())), 0) << in_memory.err;
  const std::vector<std::string> names = ListDir(in_memory.out_dir);
  ASSERT_EQ(names, ListDir(spilled.out_dir));
  int ranges = 0;
  for (const std::string& name : names) {
    if (name.find(".time-") == std::string::npos) continue;
    EXPECT_TRUE(ReadFileBytes(spilled.Output(name)) == ReadFileBytes(in_memory.Output(name))) << name;  // no 12 MB diff
    ++ranges;
  }
  EXPECT_EQ(ranges, 6);
  // rank0's 8 x (4855 - 21) events over its three range files (and their
  // metadata records, repeated in each): none holds them all.
  int64_t rank0_events = 0;
  for (int k = 0;; ++k) {
    const std::string p = "/outputs/" + std::to_string(k);
    if (!spilled.manifest->Has(p)) break;
    const std::string path = spilled.manifest->Str(p + "/path");
    if (path.rfind("rank0.time-", 0) != 0) continue;
    const int64_t events = spilled.manifest->Int(p + "/events");
    EXPECT_LT(events, 8 * (4855 - 21)) << path;
    rank0_events += events;
  }
  EXPECT_GT(rank0_events, 8 * (4855 - 21));
  EXPECT_LT(rank0_events, 2 * 8 * (4855 - 21));
}

// An input whose decode alone exceeds the decode budget is rejected with the
// limit that would fit it; the other inputs still convert.
TEST_F(MemoryLimitTest, InputLargerThanTheBudgetNamesTheLimitItNeeds) {
  const std::string big = tmp_.Join("rank5.json");
  {
    // 20 MB of plain JSON: its decode cost is known exactly (not gzip).
    std::string json = "{\"traceEvents\":[";
    for (int k = 0; k < 100000; ++k) {
      json += k ? "," : "";
      json += "{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":1,\"ts\":" + std::to_string(1000 + k) +
              ",\"dur\":1,\"args\":{\"pad\":\"" + std::string(150, 'p') + "\"}}";
    }
    json += "]}";
    WriteFileBytes(big, json);
  }
  Run run = Convert({big, DataPath("hta/trace_filter"), "--memory-limit", "48M"});
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_NE(run.err.find("rerun with --memory-limit"), std::string::npos) << run.err;
  ASSERT_TRUE(run.manifest);
  int k = run.manifest->InputIndex("rank5.json");
  ASSERT_GE(k, 0);
  EXPECT_EQ(run.manifest->Str(Manifest::InputPointer(k, "/error/code")), "RESOURCE_EXHAUSTED");
  int h = run.manifest->InputIndex("sampled_rank-0.json.gz");
  ASSERT_GE(h, 0);
  EXPECT_EQ(run.manifest->Int(Manifest::InputPointer(h, "/events_written")), 4855 - 21);  // less empty_process
  EXPECT_TRUE(ManifestBalances(*run.manifest));
}

// A gzip input that inflates past the decode budget: the limit the message
// names is enough (it used to name one just above the failing limit).
TEST_F(MemoryLimitTest, GzipTooLargeForTheBudgetNamesALimitThatWorks) {
  const std::string in = DataPath("hta/negative_queue_length_values_check");
  CommandResult r = Tracemill({"convert", in, "-o", tmp_.Join("small"), "--memory-limit", "64M"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  const std::string key = "rerun with --memory-limit ";
  size_t p = r.err.find(key);
  ASSERT_NE(p, std::string::npos) << r.err;
  p += key.size();
  const std::string limit = r.err.substr(p, r.err.find('M', p) + 1 - p);
  CommandResult ok = Tracemill({"convert", in, "-o", tmp_.Join("fits"), "--memory-limit", limit, "-q"});
  EXPECT_EQ(ok.exit_code, 0) << limit << ": " << ok.err;
}

// -o and --tmp-dir that cannot be used are usage errors before any input is read.
// A pipe or device is read whole, never past the decode budget: /dev/zero
// ended no run (2.3 GB after 20 s under --memory-limit 64M) before it was
// capped. A FIFO without a writer reads as empty (open(2) used to wait for
// a writer forever).
TEST_F(MemoryLimitTest, EndlessDeviceIsRejectedAtTheBudget) {
  Run run = Convert({"/dev/zero", "--memory-limit", "64M"});
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_NE(run.err.find("tracemill: /dev/zero: at byte 0: holds more than 12 MiB, more than the memory limit "
                         "allows (a pipe or device is read whole; raise --memory-limit or convert a file) "
                         "(input rejected)"),
            std::string::npos)
      << run.err;
  ASSERT_TRUE(run.manifest);
  EXPECT_EQ(run.manifest->Int("/totals/inputs_rejected"), 1);
}

TEST_F(MemoryLimitTest, FifoWithoutAWriterReadsAsEmpty) {
  const std::string fifo = tmp_.Join("rank0.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  Run run = Convert({fifo});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find(fifo + ": at byte 0: empty input: no JSON document (input rejected)"), std::string::npos)
      << run.err;
}

TEST_F(MemoryLimitTest, UnusableOutputOrTmpDirIsAUsageError) {
  WriteFileBytes(tmp_.Join("afile"), "x");
  CommandResult r = Tracemill({"convert", DataPath("hta/trace_filter"), "-o", tmp_.Join("out"),
                               "--tmp-dir", tmp_.Join("missing")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--tmp-dir " + tmp_.Join("missing") + " does not exist"), std::string::npos) << r.err;
  r = Tracemill({"convert", DataPath("hta/trace_filter"), "-o", tmp_.Join("out"), "--tmp-dir", tmp_.Join("afile")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("is not a directory"), std::string::npos) << r.err;
  r = Tracemill({"convert", DataPath("hta/trace_filter"), "-o", tmp_.Join("afile")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("cannot create output directory"), std::string::npos) << r.err;
  const bool none_read = r.err.find("events read") == std::string::npos ||
                         r.err.find(" 0 events read") != std::string::npos;
  EXPECT_TRUE(none_read) << "inputs were read: " << r.err;
}

TEST_F(MemoryLimitTest, UnparsableLimitIsAUsageError) {
  CommandResult r = Tracemill({"convert", DataPath("hta/trace_filter"), "-o", tmp_.Join("x"),
                               "--memory-limit", "lots"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--memory-limit"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tracemill::testing
