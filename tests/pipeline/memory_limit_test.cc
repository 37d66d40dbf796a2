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
  EXPECT_EQ(run.manifest->Int(Manifest::InputPointer(h, "/events_written")), 4855);
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
  EXPECT_NE(r.exit_code, 0) << r.err;
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
