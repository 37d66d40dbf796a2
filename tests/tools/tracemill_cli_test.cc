// Command-line contract of tools/tracemill_main.cc: usage errors exit 2 and
// write nothing; --help documents the exit statuses.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/convert_harness.h"

namespace tracemill::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class TracemillCliTest : public ConvertTest {};

TEST_F(TracemillCliTest, UsageErrorsExit2) {
  const std::string in = DataPath("rules/single_plain_trace.json");
  const std::string out = tmp_.Join("out");
  const std::vector<std::vector<std::string>> cases = {
      {},                                                      // no subcommand
      {"convert"},                                             // no inputs, no -o
      {"convert", in},                                         // no -o
      {"convert", in, "-o", out, "--group-by", "host"},        // unknown grouping
      {"convert", in, "-o", out, "--threads", "0"},            // not positive
      {"convert", in, "-o", out, "--gpus-per-node", "-1"},     // not positive
      {"convert", in, "-o", out, "--no-such-flag"},            // unknown flag
      {"convert", in, "-o", out, "--rank-pattern", "rank\\d+"},  // no capture group
      {"frobnicate", in, "-o", out},                           // unknown subcommand
  };
  for (const auto& args : cases) {
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    SCOPED_TRACE(joined);
    CommandResult r = Tracemill(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_FALSE(r.err.empty());
  }
}

// An empty input directory (a wrong path in a batch script) is a usage
// error naming it, not a successful job of 0 inputs; no output directory
// is left behind.
TEST_F(TracemillCliTest, EmptyInputDirectoryIsAUsageError) {
  const std::string empty = tmp_.Join("empty");
  ASSERT_EQ(::mkdir(empty.c_str(), 0755), 0);
  const std::string out = tmp_.Join("out");
  CommandResult r = Tracemill({"convert", empty, "-o", out});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "tracemill: no input files in " + empty + ": nothing to convert\n");
  EXPECT_NE(::access(out.c_str(), F_OK), 0) << "left " << out;
}

// Output folders: convert's -o and csp's --timeline-path are created with
// their parents; one that cannot be (a regular file, a path under /proc) is a
// usage error before any input is read (csp decoded everything, then failed
// at every output with exit 1; -o /proc/x was exit 1).
TEST_F(TracemillCliTest, OutputFoldersAreCreatedOrAUsageError) {
  const std::string csp_data = DataPath("paddle-csp/small/data");
  const std::string nested = tmp_.Join("a/b/c");
  CommandResult r = Tracemill({"csp", "--profile-path", csp_data, "--timeline-path", nested, "-q"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(::access((nested + "/traceFile_0_0.json").c_str(), F_OK), 0);
  const std::string afile = tmp_.Join("afile");
  WriteFileBytes(afile, "not a folder\n");
  r = Tracemill({"csp", "--profile-path", csp_data, "--timeline-path", afile});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("tracemill csp: cannot create output directory " + afile + ": "));
  EXPECT_THAT(r.err, Not(HasSubstr("could not be written")));
  EXPECT_EQ(ReadFileBytes(afile), "not a folder\n");
  const std::string in = DataPath("rules/single_plain_trace.json");
  for (const std::string& bad : {afile, std::string("/proc/tracemill-test/out")}) {
    r = Tracemill({"convert", in, "-o", bad});
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("tracemill: cannot create output directory " + bad + ": "));
  }
}

// A mistyped input path, when it is the only one, is a usage error naming
// the path (no manifest, no report, no OUTDIR), as an empty directory is,
// but not called a folder with no files in it.
// Beside a readable input it is a rejected input, and the job goes on.
TEST_F(TracemillCliTest, AMissingInputPathIsAUsageErrorWhenNothingElseIsThere) {
  const std::string missing = tmp_.Join("rank0.pt.trace.jsn");
  const std::string out = tmp_.Join("out");
  CommandResult r = Tracemill({"convert", missing, "-o", out});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "tracemill: " + missing + ": cannot read input: No such file or directory\n" +
                       "tracemill: the input cannot be read: nothing to convert\n");
  EXPECT_NE(::access(out.c_str(), F_OK), 0) << "left " << out;
  // Issue 37, point 7: it said "no input files in <the file>", as of a folder.
  const std::string missing2 = tmp_.Join("rank1.pt.trace.jsn");
  r = Tracemill({"convert", missing, missing2, "-o", out});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("\ntracemill: none of the 2 inputs can be read: nothing to convert\n"));

  const std::string good = DataPath("rules/single_plain_trace.json");
  r = Tracemill({"convert", good, missing, "-o", out});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find(missing + ": at byte 0: cannot read input: No such file or directory (input rejected)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(::access((out + "/manifest.json").c_str(), F_OK), 0);
}

// When only report.html cannot be written (here a directory holds its
// name), the job exits 1 and its manifest says so too (it said 0).
TEST_F(TracemillCliTest, AReportThatCannotBeWrittenIsExitOneInTheManifestToo) {
  const std::string out = tmp_.Join("out");
  ASSERT_EQ(::mkdir(out.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((out + "/report.html").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((out + "/report.html/keep").c_str(), 0755), 0);
  CommandResult r = Tracemill({"convert", DataPath("rules/single_plain_trace.json"), "-o", out, "-q"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("tracemill: cannot write report: "));
  auto m = Manifest::Load(out + "/manifest.json");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->Int("/exit_code"), 1);
  EXPECT_TRUE(m->Bool("/totals/balanced"));
}

// Outputs go out with O_DIRECT by default (a writer thread per output, the
// last partial block buffered): the bytes equal --no-direct-io's, plain and
// gzip, for an output of several direct buffers (17.9 MB of input JSON).
TEST_F(TracemillCliTest, DirectIoWritesTheSameBytesAsThePageCache) {
  const std::string in = DataPath("generated/multi_member_rank0.json.gz");
  for (const char* compress : {"", "--compress"}) {
    std::vector<std::string> args = {in, "--threads", "2"};
    if (*compress) args.push_back(compress);
    Run direct = Convert(args);
    args.push_back("--no-direct-io");
    Run buffered = Convert(args);
    ASSERT_EQ(direct.exit_code, 0) << direct.err;
    ASSERT_EQ(buffered.exit_code, 0) << buffered.err;
    std::vector<std::string> names = ListDir(direct.out_dir);
    ASSERT_EQ(names, ListDir(buffered.out_dir));
    size_t traces = 0;
    for (const std::string& n : names) {
      if (n.find(".trace.json") == std::string::npos) continue;
      ++traces;
      const std::string bytes = ReadFileBytes(direct.Output(n));
      EXPECT_GT(bytes.size(), *compress ? 1000000u : 3 * 2097152u) << n;
      EXPECT_EQ(bytes, ReadFileBytes(buffered.Output(n))) << n;
    }
    EXPECT_EQ(traces, 1u);
  }
}

// An output past the file size limit (`ulimit -f`, as a full disk) fails
// with EFBIG instead of SIGXFSZ killing the job: it is removed and named
// with its error (exit 1), the other output is written, and the failed
// output's events count as dropped output_failed, so the totals still
// balance. Both write paths: O_DIRECT (the writer thread fails) and the
// page cache.
// An output written in parts that fails lists no parts in the manifest:
// its part files were removed (they were listed).
TEST_F(TracemillCliTest, AFailedOutputInPartsListsNoParts) {
  const std::string prlimit = "/usr/bin/prlimit";
  if (::access(prlimit.c_str(), X_OK) != 0) GTEST_SKIP() << "no " << prlimit;
  const std::string out = tmp_.Join("out");
  CommandResult r = RunCommand({prlimit, "--fsize=524288", "--", TracemillBinary(), "convert",
                                DataPath("generated/multi_member_rank0.json.gz"), "-o", out, "--max-output-bytes",
                                "1M", "--no-report"},
                               tmp_.path());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(ListDir(out), (std::vector<std::string>{"manifest.json"}));
  auto m = Manifest::Load(out + "/manifest.json");
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->ArraySize("/outputs"), 1u);
  EXPECT_THAT(m->Str("/outputs/0/error"), HasSubstr("File too large"));
  EXPECT_EQ(m->Json("/outputs/0").find("\"parts\""), std::string::npos) << m->Json("/outputs/0");
}

TEST_F(TracemillCliTest, AnOutputPastTheFileSizeLimitIsRemovedAndItsEventsCounted) {
  const std::string prlimit = "/usr/bin/prlimit";
  if (::access(prlimit.c_str(), X_OK) != 0) GTEST_SKIP() << "no " << prlimit;
  // 6.3 MB output; 40,000 events and 1,819 memory counter samples derived
  // from its `[memory]` instants (issue 25).
  const std::string big = DataPath("generated/multi_member_rank0.json.gz");
  const std::string small = DataPath("rules/single_plain_trace.json");      // 2 events
  // 4 threads: the output's ranges are copied into its ring by the copy
  // stage's threads (merge_write.cc), which meet the failed write.
  for (const auto& [mode, threads] : {std::pair{"", "2"}, std::pair{"--no-direct-io", "2"}, std::pair{"", "4"}}) {
    SCOPED_TRACE(std::string(mode) + " --threads " + threads);
    const std::string out = tmp_.Join(std::string(*mode ? "out_buffered" : "out_direct") + threads);
    // An earlier run's output of the same name and its report must not
    // pass for this run's.
    ASSERT_EQ(::mkdir(out.c_str(), 0755), 0);
    WriteFileBytes(out + "/gpu0.trace.json", "{\"traceEvents\":[]}");
    WriteFileBytes(out + "/report.html", "<html></html>");
    std::vector<std::string> argv = {prlimit, "--fsize=2097152", "--", TracemillBinary(), "convert",
                                     big, small, "-o", out, "--threads", threads};
    if (*mode) argv.push_back(mode);
    CommandResult r = RunCommand(argv, tmp_.path());
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr("File too large"));
    EXPECT_THAT(r.err, HasSubstr("41,821 events read, 2 written, 41,819 dropped; 1 output in " + out +
                                 ", 1 could not be written ("));
    EXPECT_EQ(ListDir(out), (std::vector<std::string>{"manifest.json", "unranked.trace.json"}));
    EXPECT_TRUE(OutputsParse(out, tmp_.path()));
    auto m = Manifest::Load(out + "/manifest.json");
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->Int("/exit_code"), 1);
    EXPECT_EQ(m->Int("/totals/events_read"), 41821);
    EXPECT_EQ(m->Int("/totals/events_written"), 2);
    // All but the 21 records of seven unused GPUs (empty_process).
    EXPECT_EQ(m->Int("/totals/dropped_by_reason/empty_process"), 21);
    EXPECT_EQ(m->Int("/totals/dropped_by_reason/output_failed"), 41819 - 21);
    EXPECT_TRUE(m->Bool("/totals/balanced"));
    const int b = m->InputIndex("multi_member_rank0.json.gz");
    EXPECT_EQ(m->Int(Manifest::InputPointer(b, "/events_written")), 0);
    EXPECT_EQ(m->Int(Manifest::InputPointer(b, "/dropped_by_reason/output_failed")), 41819 - 21);
    EXPECT_TRUE(m->IsNull(Manifest::InputPointer(b, "/output")));
    ASSERT_EQ(m->ArraySize("/outputs"), 2u);
    EXPECT_EQ(m->Str("/outputs/0/path"), "gpu0.trace.json");
    EXPECT_THAT(m->Str("/outputs/0/error"), HasSubstr("File too large"));
    EXPECT_EQ(m->Int("/outputs/0/bytes"), 0);
    EXPECT_EQ(m->Int("/outputs/1/events"), 2);
    EXPECT_NE(::access((out + "/report.html").c_str(), F_OK), 0);
  }
  // The other subcommands too: `tracemill report` past the limit fails with
  // exit 1 and leaves no temporary (SIGXFSZ killed it with rc 153).
  Run ok = Convert({small, "--no-report"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  CommandResult r = RunCommand({prlimit, "--fsize=2000", "--", TracemillBinary(), "report", ok.out_dir},
                               tmp_.path());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("File too large"));
  for (const auto& n : ListDir(ok.out_dir)) EXPECT_EQ(n.find(".tmp"), std::string::npos) << n;
  // `tracemill csp` (Paddle): its outputs past the limit are removed and
  // their events count as output_failed; the manifest (~23 KB) balances.
  const std::string timeline = tmp_.Join("csp_out");
  CommandResult csp = RunCommand({prlimit, "--fsize=60000", "--", TracemillBinary(), "csp", "--profile-path",
                                  DataPath("paddle-csp/small/data"), "--timeline-path", timeline},
                                 tmp_.path());
  EXPECT_EQ(csp.exit_code, 1) << csp.err;
  EXPECT_THAT(csp.err, HasSubstr("; 0 outputs in " + timeline + ", 8 could not be written ("));
  auto cm = Manifest::Load(timeline + "/manifest.json");
  ASSERT_NE(cm, nullptr);
  EXPECT_TRUE(cm->Bool("/totals/balanced"));
  EXPECT_EQ(cm->Int("/totals/events_written"), 0);
  EXPECT_GT(cm->Int("/totals/dropped_by_reason/output_failed"), 30000);
  EXPECT_EQ(ListDir(timeline), std::vector<std::string>{"manifest.json"});
  // Every event a successful run writes is output_failed here, DCGM rows
  // included (they were counted as other_device); other drops are the same.
  const std::string timeline_ok = tmp_.Join("csp_ok");
  CommandResult csp_ok = Tracemill({"csp", "--profile-path", DataPath("paddle-csp/small/data"), "--timeline-path",
                                    timeline_ok, "-q"});
  ASSERT_EQ(csp_ok.exit_code, 0) << csp_ok.err;
  auto ok_m = Manifest::Load(timeline_ok + "/manifest.json");
  ASSERT_NE(ok_m, nullptr);
  EXPECT_EQ(cm->Int("/totals/dropped_by_reason/output_failed"), ok_m->Int("/totals/events_written"));
  auto other_device = [](const Manifest& m) {
    return m.Has("/totals/dropped_by_reason/other_device") ? m.Int("/totals/dropped_by_reason/other_device") : 0;
  };
  EXPECT_EQ(other_device(*cm), other_device(*ok_m));
}

// OwnCommandName: this process's name as /proc/self/comm gives it.
std::string OwnCommandName() {
  std::string comm = ReadFileBytes("/proc/self/comm");
  if (!comm.empty() && comm.back() == '\n') comm.pop_back();
  return comm;
}

// HoldAbstractName binds `name` in the abstract UNIX socket namespace, as a
// running tracemill job holds its OUTDIR's name; returns the socket (close
// it to release), or -1.
int HoldAbstractName(const std::string& name) {
  const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (sock < 0) return -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  if (::bind(sock, reinterpret_cast<sockaddr*>(&addr),
             static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size())) != 0) {
    ::close(sock);
    return -1;
  }
  return sock;
}

// A job holds flock(2) on OUTDIR: exclusive, or shared in a shard. While
// another job holds it exclusively nothing runs (exit 2, OUTDIR untouched);
// while a shard holds it shared, another shard runs and a whole job does not.
TEST_F(TracemillCliTest, OneJobAtATimeWritesIntoAnOutputDirectory) {
  const std::string in = DataPath("rules/single_plain_trace.json");
  const std::string out = tmp_.Join("out");
  ASSERT_EQ(::mkdir(out.c_str(), 0755), 0);
  // The holder is this test's process: named by /proc/locks, after a 2 s wait.
  const std::string busy = "tracemill: -o " + out + " is in use by another tracemill job (process " +
                           std::to_string(::getpid()) + " (" + OwnCommandName() +
                           ") held the directory's lock through a 2 s wait); "
                           "wait for it or write to another directory\n";
  const std::string busy_name = "tracemill: -o " + out +
                                " is in use by another tracemill job (another process held the "
                                "directory's lock through a 2 s wait); wait for it or write to another directory\n";
  const int fd = ::open(out.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  for (const char* shard : {"", "0/2"}) {
    SCOPED_TRACE(shard);
    std::vector<std::string> args = {"convert", in, "-o", out};
    if (*shard) args.insert(args.end(), {"--shard", shard});
    CommandResult r = Tracemill(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err, busy);
    EXPECT_EQ(ListDir(out), std::vector<std::string>{});
  }
  ASSERT_EQ(::flock(fd, LOCK_SH), 0);  // as a running shard
  CommandResult whole = Tracemill({"convert", in, "-o", out});
  EXPECT_EQ(whole.exit_code, 2) << whole.err;
  EXPECT_EQ(whole.err, busy);
  CommandResult shard = Tracemill({"convert", in, "-o", out, "--shard", "0/2", "--quiet"});
  EXPECT_EQ(shard.exit_code, 0) << shard.err;
  EXPECT_EQ(ListDir(out), (std::vector<std::string>{"manifest.shard-0-of-2.json", "unranked.trace.json"}));
  // `manifest merge` waits for every shard on this node to finish (it read
  // a manifest a running shard was about to write).
  CommandResult merge = Tracemill({"manifest", "merge", out});
  EXPECT_EQ(merge.exit_code, 2) << merge.err;
  EXPECT_EQ(merge.err, "tracemill: manifest merge: " + busy.substr(std::string("tracemill: -o ").size()));
  // `tracemill csp` too: two runs into one folder removed each other's
  // temporaries and final files.
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  CommandResult csp = Tracemill({"csp", "--profile-path", DataPath("paddle-csp/small/data"), "--timeline-path", out});
  EXPECT_EQ(csp.exit_code, 2) << csp.err;
  EXPECT_EQ(csp.err, "tracemill csp: " + busy.substr(std::string("tracemill: -o ").size()));
  ::close(fd);
  // A second run of the same shard is refused: the first holds the abstract
  // socket name of OUTDIR's device, inode and shard (held here instead).
  struct stat ds;
  ASSERT_EQ(::stat(out.c_str(), &ds), 0);
  const int sock = HoldAbstractName("tracemill-outdir-" + std::to_string(ds.st_dev) + "-" +
                                    std::to_string(ds.st_ino) + "-shard-1-of-2");
  ASSERT_GE(sock, 0);
  CommandResult same = Tracemill({"convert", in, "-o", out, "--shard", "1/2"});
  EXPECT_EQ(same.exit_code, 2) << same.err;
  EXPECT_EQ(same.err, busy_name);
  CommandResult other = Tracemill({"convert", in, "-o", out, "--shard", "0/2", "--quiet"});
  EXPECT_EQ(other.exit_code, 0) << other.err;
  ::close(sock);
  CommandResult after = Tracemill({"convert", in, "-o", out, "--quiet"});
  EXPECT_EQ(after.exit_code, 0) << after.err;
}

// Issue 37, point 7: a mistyped command said only "A subcommand is
// required"; it names the word and the nearest command. `report --help` and
// `manifest merge --help` printed convert's exit table (CLI11 copies the
// parent's footer); each prints its own.
TEST_F(TracemillCliTest, AMistypedCommandIsNamedWithTheNearestOne) {
  CommandResult r = Tracemill({"conver", "x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "tracemill: unknown command 'conver' (did you mean 'convert'?); the commands are convert, "
                   "clocks, csp, diff, manifest merge and report (tracemill --help)\n");
  r = Tracemill({"man", "merge", "x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown command 'man' (did you mean 'manifest'?)"));
  r = Tracemill({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "tracemill: unknown command 'frobnicate'; the commands are convert, clocks, csp, diff, "
                   "manifest merge and report (tracemill --help)\n");
}

TEST_F(TracemillCliTest, EachCommandsHelpHasItsOwnExitTable) {
  CommandResult report = Tracemill({"report", "--help"});
  EXPECT_EQ(report.exit_code, 0);
  EXPECT_THAT(report.out, HasSubstr("  0  OUTDIR/report.html written\n"));
  EXPECT_THAT(report.out, Not(HasSubstr("every input converted")));
  for (const std::vector<std::string>& args : {std::vector<std::string>{"manifest", "--help"},
                                               std::vector<std::string>{"manifest", "merge", "--help"}}) {
    CommandResult merge = Tracemill(args);
    EXPECT_EQ(merge.exit_code, 0);
    EXPECT_THAT(merge.out, HasSubstr("  3  manifest.json written; some inputs were rejected or damaged\n"));
    EXPECT_THAT(merge.out, Not(HasSubstr("-o not writable")));
  }
  CommandResult convert = Tracemill({"convert", "--help"});
  EXPECT_THAT(convert.out, HasSubstr("  2  usage error (bad command line, no input file at all, -o not writable"));
  CommandResult diff = Tracemill({"diff", "--help"});
  EXPECT_EQ(diff.exit_code, 0);
  EXPECT_THAT(diff.out, HasSubstr("  0  OUTDIR/diff.sqlite and OUTDIR/diff.html written\n"));
  EXPECT_THAT(diff.out, Not(HasSubstr("every input converted")));
}

// Issue 37, point 1: an output folder is the result of one run. A 4-rank
// job with --tables into OUT, then one rank into OUT, left the first run's
// gpu1.trace.json and tables.sqlite beside a manifest of one output, exit 0.
// The files the earlier manifest lists that this run does not write are
// removed and listed (`removed`); a file of the user's is never touched.
TEST_F(TracemillCliTest, AReusedOutputFolderHoldsOnlyTheNewRunsFiles) {
  std::vector<std::string> ranks;
  for (int r = 0; r < 4; ++r) {
    if (r == 0) {
      ASSERT_EQ(::mkdir(tmp_.Join("job").c_str(), 0755), 0);
    }
    ranks.push_back(tmp_.Join("job/rank" + std::to_string(r) + ".json"));
    WriteFileBytes(ranks.back(), "{\"distributedInfo\":{\"rank\":" + std::to_string(r) +
                                     ",\"world_size\":4},\"traceEvents\":[{\"ph\":\"X\",\"name\":\"op\","
                                     "\"pid\":1,\"tid\":1,\"ts\":1700000000000000,\"dur\":5}]}\n");
  }
  const std::string out = tmp_.Join("out");
  CommandResult first = Tracemill({"convert", tmp_.Join("job"), "-o", out, "--gpus-per-node", "2", "--tables", "-q"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(ListDir(out), (std::vector<std::string>{"gpu0.trace.json", "gpu1.trace.json", "manifest.json",
                                                    "tables.sqlite"}));  // ListDir leaves out report and overview
  WriteFileBytes(out + "/notes.txt", "mine\n");
  CommandResult second = Tracemill({"convert", ranks[0], "-o", out, "--gpus-per-node", "2"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_THAT(second.err, HasSubstr("tracemill: 1 input (0 with errors), 1 event read, 1 written, 0 dropped; "
                                    "1 output in " + out + " ("));  // said "1 events"
  EXPECT_THAT(second.err, HasSubstr("tracemill: removed 2 files of an earlier run in " + out +
                                    " that this run does not write (manifest.json `removed`): gpu1.trace.json, "
                                    "tables.sqlite\n"));
  EXPECT_EQ(ListDir(out), (std::vector<std::string>{"gpu0.trace.json", "manifest.json", "notes.txt"}));
  auto m = Manifest::Load(out + "/manifest.json");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->Json("/removed"), "[\"gpu1.trace.json\",\"tables.sqlite\"]");
  // --group-by all after a per-GPU run: gpu0 is not this run's.
  CommandResult all = Tracemill({"convert", tmp_.Join("job"), "-o", out, "--group-by", "all", "--no-report", "-q"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(ListDir(out), (std::vector<std::string>{"all.trace.json", "manifest.json", "notes.txt"}));
  EXPECT_NE(::access((out + "/report.html").c_str(), F_OK), 0);
  EXPECT_EQ(::access((out + "/overview.trace.json").c_str(), F_OK), 0);
  m = Manifest::Load(out + "/manifest.json");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->Json("/removed"), "[\"gpu0.trace.json\",\"report.html\"]");
  // Run again alike: nothing of it is removed, and no `removed` member.
  CommandResult again = Tracemill({"convert", tmp_.Join("job"), "-o", out, "--group-by", "all", "--no-report"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.err, Not(HasSubstr("removed")));
  m = Manifest::Load(out + "/manifest.json");
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(m->Has("/removed"));
}

// Issue 37, point 8: a job killed with SIGKILL and restarted at once found
// its own lock still held for a moment (released after its parent sees it
// die) and exited 2, "in use", with no tracemill running. A lock found held
// is now tried again for 2 s: here a process holds it for 300 ms more after
// the job starts, and the job waits for it and runs.
TEST_F(TracemillCliTest, ALockReleasedAMomentLaterIsWaitedFor) {
  const std::string in = DataPath("rules/single_plain_trace.json");
  const std::string out = tmp_.Join("out");
  ASSERT_EQ(::mkdir(out.c_str(), 0755), 0);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t holder = ::fork();
  ASSERT_GE(holder, 0);
  if (holder == 0) {  // only async-signal-safe calls here
    const int fd = ::open(out.c_str(), O_RDONLY | O_DIRECTORY);
    const bool held = fd >= 0 && ::flock(fd, LOCK_EX) == 0;
    const char byte = held ? 'y' : 'n';
    if (::write(ready[1], &byte, 1) != 1) ::_exit(1);
    ::usleep(300 * 1000);
    ::_exit(0);
  }
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(ready[0]);
  ASSERT_EQ(byte, 'y');
  CommandResult r = Tracemill({"convert", in, "-o", out, "--resume", "--quiet"});
  int status = 0;
  ASSERT_EQ(::waitpid(holder, &status, 0), holder);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(::access((out + "/manifest.json").c_str(), F_OK), 0);
}

// Under `ulimit -u` with no room for a second thread, oneTBB aborted the
// process when it could not create its worker (rc 134); the job now starts
// the threads it can and says so. RLIMIT_NPROC does not hold root back, so
// the job runs as `nobody` (skipped when not root, or when nobody cannot
// reach the binary or the data, e.g. a clone under /root).
TEST_F(TracemillCliTest, ThreadsThatCannotStartAreNotAsked) {
  const std::string setpriv = "/usr/bin/setpriv", prlimit = "/usr/bin/prlimit";
  if (::geteuid() != 0 || ::access(setpriv.c_str(), X_OK) != 0 || ::access(prlimit.c_str(), X_OK) != 0)
    GTEST_SKIP() << "needs root, setpriv and prlimit";
  const std::vector<std::string> as_nobody = {setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"};
  const std::string in = DataPath("generated/multi_member_rank0.json.gz");
  std::vector<std::string> probe = as_nobody;
  probe.insert(probe.end(), {"/bin/sh", "-c", "test -x \"$0\" && test -r \"$1\"", TracemillBinary(), in});
  if (RunCommand(probe, tmp_.path()).exit_code != 0) GTEST_SKIP() << "nobody cannot reach the binary or data";
  ASSERT_EQ(::chmod(tmp_.path().c_str(), 0755), 0);
  const std::string parent = tmp_.Join("nobody");
  ASSERT_EQ(::mkdir(parent.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(parent.c_str(), 0777), 0);  // whatever the umask
  const std::string out = parent + "/out";
  std::vector<std::string> argv = as_nobody;
  // LeakSanitizer's exit check needs a thread of its own (asan build).
  const char* asan = std::getenv("ASAN_OPTIONS");
  argv.insert(argv.end(), {"/usr/bin/env", std::string("ASAN_OPTIONS=") + (asan ? asan : "") + ":detect_leaks=0",
                           prlimit, "--nproc=1", "--", TracemillBinary(), "convert", in, "-o", out, "--threads", "2"});
  CommandResult r = RunCommand(argv, parent);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("tracemill: only 1 of 2 threads can start (ulimit -u or the cgroup's pids.max); "
                               "running with 1\n"));
  // 40,000 events and 1,819 memory counter samples derived from its `[memory]` instants.
  // Less the 21 metadata records of seven unused GPUs, said on a line of their own.
  EXPECT_THAT(r.err, HasSubstr("41,819 events read, 41,798 written, 21 dropped; 1 output in "));
  EXPECT_THAT(r.err, HasSubstr("left out on purpose, not lost: 21 events (empty_process 21)\n"));
  auto m = Manifest::Load(out + "/manifest.json");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->Int("/threads"), 1);
}

// As a user who may not read them (found by an attack helper): an input file
// that cannot be opened, when it is the only input, is a usage error as a
// missing one is (it was exit 3 with an empty job); an OUTDIR that can be
// written but not listed (mode 0333) is still locked, by a name instead of
// flock (two jobs ran into it at once).
TEST_F(TracemillCliTest, AsAnotherUserUnreadableInputsAndOutputDirectories) {
  const std::string setpriv = "/usr/bin/setpriv";
  if (::geteuid() != 0 || ::access(setpriv.c_str(), X_OK) != 0) GTEST_SKIP() << "needs root and setpriv";
  const std::vector<std::string> as_nobody = {setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"};
  const std::string good = DataPath("rules/single_plain_trace.json");
  std::vector<std::string> probe = as_nobody;
  probe.insert(probe.end(), {"/bin/sh", "-c", "test -x \"$0\" && test -r \"$1\"", TracemillBinary(), good});
  if (RunCommand(probe, tmp_.path()).exit_code != 0) GTEST_SKIP() << "nobody cannot reach the binary or data";
  ASSERT_EQ(::chmod(tmp_.path().c_str(), 0755), 0);
  const std::string home = tmp_.Join("nobody");
  ASSERT_EQ(::mkdir(home.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(home.c_str(), 0777), 0);
  auto run = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = as_nobody;
    argv.push_back(TracemillBinary());
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv, home);
  };
  const std::string secret = home + "/secret.json";
  WriteFileBytes(secret, ReadFileBytes(good));
  ASSERT_EQ(::chmod(secret.c_str(), 0), 0);
  const std::string out = home + "/out";
  CommandResult r = run({"convert", secret, "-o", out});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "tracemill: " + secret + ": cannot read input: Permission denied\n" +
                       "tracemill: the input cannot be read: nothing to convert\n");
  EXPECT_NE(::access(out.c_str(), F_OK), 0) << "left " << out;

  const std::string blind = home + "/blind";
  ASSERT_EQ(::mkdir(blind.c_str(), 0333), 0);
  ASSERT_EQ(::chmod(blind.c_str(), 0333), 0);
  ASSERT_EQ(::chown(blind.c_str(), 65534, 65534), 0);  // nobody:nogroup
  struct stat ds;
  ASSERT_EQ(::stat(blind.c_str(), &ds), 0);
  const int sock = HoldAbstractName("tracemill-outdir-" + std::to_string(ds.st_dev) + "-" +
                                    std::to_string(ds.st_ino) + "-unreadable");
  ASSERT_GE(sock, 0);
  r = run({"convert", good, "-o", blind});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr(" is in use by another tracemill job"));
  ::close(sock);
  r = run({"convert", good, "-o", blind, "-q"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(::access((blind + "/manifest.json").c_str(), F_OK), 0);
}

// Outputs are written in parallel (issue 5): with 2 threads and 2 outputs
// whose writing takes a while (the hidden --debug-write-delay-ms sleeps
// 200 ms per 1,000 events: 600 ms per output here), both outputs start
// before either finishes. Written one after the other, the first "wrote"
// line would come before the second "writing" line.
TEST_F(TracemillCliTest, OutputsAreWrittenInParallel) {
  std::vector<std::string> args;
  for (int rank : {0, 1}) {
    std::string json = "{\"distributedInfo\":{\"rank\":" + std::to_string(rank) +
                       ",\"world_size\":2},\"traceEvents\":[";
    for (int i = 0; i < 3000; ++i)
      json += std::string(i ? "," : "") + "{\"ph\":\"X\",\"name\":\"k\",\"pid\":0,\"tid\":1,\"ts\":" +
              std::to_string(1000 + i) + ",\"dur\":1}";
    json += "]}";
    args.push_back(tmp_.Join("rank" + std::to_string(rank) + ".json"));
    WriteFileBytes(args.back(), json);
  }
  args.insert(args.end(), {"--threads", "2", "--verbose", "--debug-write-delay-ms", "200"});
  Run run = Convert(args);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::vector<std::string> order;  // "writing gpu0", "wrote gpu1", ...
  size_t at = 0;
  while ((at = run.err.find("tracemill: wr", at)) != std::string::npos) {
    const size_t end = run.err.find(".trace.json", at);
    ASSERT_NE(end, std::string::npos);
    order.push_back(run.err.substr(at + 11, end - at - 11));
    at = end;
  }
  ASSERT_EQ(order.size(), 4u) << run.err;
  EXPECT_EQ(order[0].substr(0, 8), "writing ") << run.err;
  EXPECT_EQ(order[1].substr(0, 8), "writing ") << run.err;
  EXPECT_EQ(order[2].substr(0, 6), "wrote ") << run.err;
  EXPECT_EQ(order[3].substr(0, 6), "wrote ") << run.err;
  EXPECT_THAT(run.err, HasSubstr("tracemill: wrote gpu0.trace.json (3000 events, "));
  EXPECT_THAT(run.err, HasSubstr("tracemill: wrote gpu1.trace.json (3000 events, "));
}

TEST_F(TracemillCliTest, HelpDocumentsExitStatuses) {
  CommandResult r = Tracemill({"convert", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string text = r.out + r.err;
  EXPECT_THAT(text, HasSubstr("--group-by"));
  EXPECT_THAT(text, HasSubstr("Exit status"));
  for (const char* code : {"0 ", "1 ", "2 ", "3 "}) EXPECT_THAT(text, HasSubstr(code));
}

// csp's own exit statuses: it has no -o and no --resume (its help repeated
// convert's).
TEST_F(TracemillCliTest, CspHelpDocumentsItsOwnExitStatuses) {
  CommandResult r = Tracemill({"csp", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string text = r.out + r.err;
  EXPECT_THAT(text, HasSubstr("\nExit status:\n  0  every rank of the job converted\n"));
  EXPECT_THAT(text, HasSubstr("  2  usage error (bad command line, no profile file at all, --timeline-path not "
                              "writable or in use)\n"));
  EXPECT_THAT(text, HasSubstr("  130 / 143  interrupted by SIGINT / SIGTERM; no partial output left\n"));
  EXPECT_THAT(text, Not(HasSubstr("-o not writable")));
  EXPECT_THAT(text, Not(HasSubstr("--resume")));
}

TEST_F(TracemillCliTest, ConvertWritesOutputsAndManifestOnly) {
  Run run = Convert({DataPath("rules/single_plain_trace.json"), "--threads", "1"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_EQ(run.manifest->Int("/exit_code"), 0);
  EXPECT_EQ(run.manifest->Int("/threads"), 1);
  EXPECT_THAT(run.manifest->Str("/command_line"), HasSubstr("--threads 1"));
  // No temporaries left behind.
  for (const auto& n : ListDir(run.out_dir)) EXPECT_EQ(n.find(".tmp"), std::string::npos) << n;
}

TEST_F(TracemillCliTest, QuietKeepsOnlyErrorLines) {
  Run ok = Convert({DataPath("rules/single_plain_trace.json"), "--quiet"});
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_EQ(ok.err, "");
  // Issue 21: --quiet drops the summary, never an error: the per-input error
  // line stays (the manifest has it too).
  Run bad = Convert({DataPath("rules/truncated_json/array_format.json"), "-q"});
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_EQ(bad.err, "tracemill: " + DataPath("rules/truncated_json/array_format.json") +
                         ": at byte 115: input ends inside an event object (truncated) (2 events read intact)\n");
  ASSERT_NE(bad.manifest, nullptr);
  EXPECT_EQ(bad.manifest->Str("/inputs/0/error/code"), "DATA_LOSS");
  // Damage in the middle: the events after it are kept too, and counted (the
  // line said "kept 2 events read before it" of one event before a hole).
  Run hole = Convert({DataPath("../malformed/nul_run_between_events.json"), "-q"});
  EXPECT_EQ(hole.err, "tracemill: " + DataPath("../malformed/nul_run_between_events.json") +
                          ": at byte 56: 4096 NUL bytes between events (a hole in the file: what was written there is "
                          "lost) (2 events read intact)\n");
  ASSERT_NE(hole.manifest, nullptr);
  EXPECT_EQ(hole.manifest->Int("/inputs/0/events_written"), 2);
}

TEST_F(TracemillCliTest, ErrorLineDoesNotCallEventsOfAnUnselectedRankKept) {
  // Rank 5, cut inside its third event, with --ranks 0: the line said "(2
  // events kept)" of a rank of which nothing was written.
  const std::string path = DataPath("rules/truncated_json/ranked_object_format.json");
  Run run = Convert({path, "--ranks", "0"});
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_THAT(run.err, HasSubstr("tracemill: " + path +
                                 ": at byte 177: input ends inside an event object (truncated) "
                                 "(2 events read intact)\n"));
  EXPECT_THAT(run.err, HasSubstr("3 events read, 0 written, 3 dropped"));
  EXPECT_THAT(run.err, HasSubstr("left out on purpose, not lost: 2 events (not_selected 2)"));
}

TEST_F(TracemillCliTest, NoProgressLineWhenStderrIsNotATty) {
  // stderr is a file here: no carriage returns or terminal escapes.
  Run run = Convert({DataPath("hta/trace_filter")});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.err.find('\r'), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find('\033'), std::string::npos) << run.err;
}

TEST_F(TracemillCliTest, VerboseNamesTheSimdjsonKernel) {
  Run run = Convert({DataPath("rules/single_plain_trace.json"), "--verbose"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_THAT(run.err, HasSubstr("simdjson"));
}

TEST_F(TracemillCliTest, DefaultThreadsFollowTheAffinityMask) {
  const std::string taskset = "/usr/bin/taskset";
  if (::access(taskset.c_str(), X_OK) != 0) GTEST_SKIP() << "no " << taskset;
  const std::string out = tmp_.Join("pinned");
  CommandResult r = RunCommand({taskset, "-c", "0", TracemillBinary(), "convert",
                                DataPath("rules/single_plain_trace.json"), "-o", out, "-q"},
                               tmp_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(OutputsParse(out, tmp_.path()));
  auto m = Manifest::Load(out + "/manifest.json");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->Int("/threads"), 1);
}

}  // namespace
}  // namespace tracemill::testing
