// End-to-end tests of sharded and resumed runs: the `tracemill` binary on the
// sample job plus hand-made ranks, compared with a single run byte for byte.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <algorithm>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

extern char** environ;

namespace {

// Counted: "1 output", "3 outputs" (as the terminal writes counts).
std::string Counted(int64_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

namespace fs = std::filesystem;

const std::string kBin = TRACEMILL_BIN;
const std::string kCheck = std::string(TEST_SOURCE_DIR) + "/check_outputs.py";

// ---------------- running the binary ----------------

// The environment of a child: ours without any scheduler variables (the
// suite may itself run inside a Slurm job), plus `extra`.
std::vector<std::string> ChildEnv(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string v = *e;
    if (v.rfind("SLURM_", 0) == 0 || v.rfind("JOB_COMPLETION_INDEX=", 0) == 0 ||
        v.rfind("TRACEMILL_SHARD_COUNT=", 0) == 0)
      continue;
    env.push_back(v);
  }
  for (const auto& x : extra) env.push_back(x);
  return env;
}

// Spawn starts `args` with stderr to `err_path`; returns the pid.
pid_t Spawn(const std::vector<std::string>& args, const std::vector<std::string>& extra_env,
            const std::string& err_path) {
  std::vector<char*> argv, envp;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env = ChildEnv(extra_env);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0].c_str(), &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : -1;
}

// Wait returns the exit status, or 128 + signal.
int Wait(pid_t pid) {
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct Result {
  int code = -1;
  std::string err;
};

Result Tracemill(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  static int counter = 0;
  std::string err_path = std::string(TEST_TMP_ROOT) + "/stderr." + std::to_string(getpid()) + "." +
                         std::to_string(counter++);
  std::vector<std::string> full = {kBin};
  full.insert(full.end(), args.begin(), args.end());
  Result r;
  pid_t pid = Spawn(full, env, err_path);
  if (pid < 0) return r;
  r.code = Wait(pid);
  r.err = ReadFile(err_path);
  ::unlink(err_path.c_str());
  return r;
}

int Shell(const std::string& cmd) {
  int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

// ---------------- inputs ----------------

std::string Gzip(const std::string& s) {
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, s.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
  zs.avail_in = static_cast<uInt>(s.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}

// `n` events of one rank as JSON array elements (no brackets): complete
// events on two threads, a flow pair now and then, timestamps near the
// sample job's (2023-04-29) and deliberately unsorted.
std::string Events(int rank, int n) {
  std::string s;
  uint64_t x = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(rank + 1);
  for (int i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    int64_t ts = 1682725898000000 + static_cast<int64_t>(x % 3000000);
    if (i) s += ",\n";
    s += "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"op" + std::to_string(x % 37) + "\",\"pid\":" +
         std::to_string(100 + rank) + ",\"tid\":" + std::to_string(7 + (i & 1)) + ",\"ts\":" +
         std::to_string(ts) + "." + std::to_string(x % 1000) + ",\"dur\":" + std::to_string(x % 500) +
         ",\"args\":{\"i\":" + std::to_string(i) + ",\"rank\":" + std::to_string(rank) + "}}";
    if (i % 50 == 0)
      s += ",\n{\"ph\":\"s\",\"name\":\"flow\",\"cat\":\"f\",\"id\":" + std::to_string(i) + ",\"pid\":" +
           std::to_string(100 + rank) + ",\"tid\":7,\"ts\":" + std::to_string(ts) + "}";
  }
  return s;
}

std::string Kineto(int rank, int n, int devices) {
  std::string dev;
  for (int d = 0; d < devices; ++d) dev += std::string(d ? "," : "") + "{\"id\":" + std::to_string(d) + "}";
  return "{\"schemaVersion\":1,\"deviceProperties\":[" + dev + "],\"distributedInfo\":{\"backend\":\"nccl\","
         "\"rank\":" + std::to_string(rank) + ",\"world_size\":16},\"traceEvents\":[\n" + Events(rank, n) +
         "\n],\"traceName\":\"r" + std::to_string(rank) + "\"}";
}

// distributedInfo after the events (not Kineto's order).
std::string RankLast(int rank, int n) {
  return "{\"traceEvents\":[\n" + Events(rank, n) + "\n],\"distributedInfo\":{\"rank\":" + std::to_string(rank) +
         "}}";
}

// The mixed job: the sample job (ranks 0 and 1, a README) plus
// - rank 2: gzip Kineto with 4 deviceProperties (so 4 GPUs per node),
// - worker3.json: JSON Array Format, rank from the file name,
// - late_rank.json (rank 4) and late_big.json (rank 9): distributedInfo after
//   more than 256 KiB of events: undetermined until decoded,
// - small_late.json: distributedInfo after the events but all in the head (rank 13),
// - misc.json: an array with no rank anywhere: unranked,
// - cut.json.gz: a gzip Kineto file (rank 6) cut mid-member: damaged, partly kept.
// Builds `final_dir` once, even with tests running in parallel processes: in
// a private directory renamed into place (the loser of a race discards its copy).
template <typename Fill>
std::string BuildOnce(const std::string& final_dir, Fill fill) {
  if (fs::exists(final_dir)) return final_dir;
  std::string dir = final_dir + ".build." + std::to_string(getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  fill(dir);
  if (::rename(dir.c_str(), final_dir.c_str()) != 0) fs::remove_all(dir);
  return final_dir;
}

std::string MakeMixedJob(const std::string& root) {
  return BuildOnce(root + "/job", [](const std::string& dir) {
  for (const auto& e : fs::directory_iterator(SAMPLE_JOB_DIR))
    fs::copy_file(e.path(), dir + "/" + e.path().filename().string());
  WriteFile(dir + "/rank2.json.gz", Gzip(Kineto(2, 400, 4)));
  WriteFile(dir + "/worker3.json", "[\n" + Events(3, 300) + "\n]\n");
  WriteFile(dir + "/late_rank.json", RankLast(4, 2500));
  WriteFile(dir + "/late_big.json", RankLast(9, 2600));
  WriteFile(dir + "/small_late.json", RankLast(13, 20));
  WriteFile(dir + "/misc.json", "[\n" + Events(21, 150) + "\n]\n");
  std::string cut = Gzip(Kineto(6, 2000, 0));
  WriteFile(dir + "/cut.json.gz", cut.substr(0, cut.size() * 2 / 3));
  });
}

// A fresh directory private to this test process.
std::string Fresh(const std::string& name) {
  std::string d = std::string(TEST_TMP_ROOT) + "/p" + std::to_string(getpid()) + "/" + name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::vector<std::string> Listing(const std::string& dir) {
  std::vector<std::string> v;
  for (const auto& e : fs::directory_iterator(dir)) v.push_back(e.path().filename().string());
  std::sort(v.begin(), v.end());
  return v;
}

bool AnyTemporary(const std::string& dir) {
  for (const auto& n : Listing(dir))
    if (n[0] == '.' && n.find(".tmp.") != std::string::npos) return true;
  return false;
}

// The reference: one unsharded run of `job` with `flags`.
std::string Reference(const std::string& job, const std::vector<std::string>& flags, const std::string& name) {
  static std::map<std::string, std::string> done;
  std::string key = name;
  for (const auto& f : flags) key += " " + f;
  if (done.count(key)) return done[key];
  std::string out = Fresh("ref-" + name);
  std::vector<std::string> args = {"convert", job, "-o", out, "--shard", "0/1", "-q"};
  args.insert(args.end(), flags.begin(), flags.end());
  Result r = Tracemill(args);
  EXPECT_EQ(r.code, 3) << r.err;  // cut.json.gz is damaged
  EXPECT_TRUE(fs::exists(out + "/manifest.json"));
  done[key] = out;
  return out;
}

// ManifestName: what shard `i` of `count` writes (one shard: manifest.json).
std::string ManifestName(int i, int count) {
  if (count == 1) return "manifest.json";
  return "manifest.shard-" + std::to_string(i) + "-of-" + std::to_string(count) + ".json";
}

// Runs every shard of `count` into `out`, then merges (`--shard 0/1` writes
// manifest.json itself: nothing to merge).
void RunShards(const std::string& job, const std::vector<std::string>& flags, int count, const std::string& out) {
  for (int i = 0; i < count; ++i) {
    std::vector<std::string> args = {"convert", job, "-o", out, "--shard",
                                     std::to_string(i) + "/" + std::to_string(count), "-q"};
    args.insert(args.end(), flags.begin(), flags.end());
    Result r = Tracemill(args);
    EXPECT_TRUE(r.code == 0 || r.code == 3) << "shard " << i << ": " << r.err;
    EXPECT_TRUE(fs::exists(out + "/" + ManifestName(i, count)));
  }
  if (count == 1) return;
  Result m = Tracemill({"manifest", "merge", out});
  EXPECT_EQ(m.code, 3) << m.err;  // merged: the damaged input is still reported
}

// The outputs each shard wrote, from its manifest (file name -> shard).
std::map<std::string, int> Owners(const std::string& out, int count) {
  std::map<std::string, int> owners;
  for (int i = 0; i < count; ++i) {
    std::string text = ReadFile(out + "/" + ManifestName(i, count));
    size_t pos = text.find("\n\"outputs\":");
    while ((pos = text.find("{\"path\":\"", pos)) != std::string::npos) {
      pos += 9;
      owners[text.substr(pos, text.find('"', pos) - pos)] = i;
    }
  }
  return owners;
}

class ShardUnion : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

// The union of the shards' outputs is byte-identical to a single run, the
// merged manifest equals the single run's, and a second sharded run assigns
// every output to the same shard.
TEST_P(ShardUnion, ByteIdenticalToSingleRunAndDeterministic) {
  const auto [count, group_by] = GetParam();
  std::string job = MakeMixedJob(TEST_TMP_ROOT);
  std::vector<std::string> flags = {"--group-by", group_by};
  if (group_by == "rank") flags.push_back("--compress");
  std::string ref = Reference(job, flags, group_by);
  std::string tag = group_by + "-" + std::to_string(count);
  std::string a = Fresh("union-a-" + tag), b = Fresh("union-b-" + tag);
  RunShards(job, flags, count, a);
  RunShards(job, flags, count, b);
  EXPECT_EQ(Shell(kCheck + " valid " + ref + " " + a), 0);
  EXPECT_EQ(Shell(kCheck + " same " + ref + " " + a), 0);
  EXPECT_EQ(Shell(kCheck + " same " + ref + " " + b), 0);
  auto owners_a = Owners(a, count), owners_b = Owners(b, count);
  EXPECT_EQ(owners_a, owners_b);
  EXPECT_GE(owners_a.size(), group_by == "rank" ? 9u : 5u);
  if (count > 1) {
    std::set<int> used;
    for (const auto& [name, shard] : owners_a) used.insert(shard);
    EXPECT_GE(used.size(), std::min<size_t>(static_cast<size_t>(count), 4u));  // the work is spread
  }
  EXPECT_FALSE(AnyTemporary(a));
  for (const auto& n : Listing(a)) EXPECT_EQ(n.find("journal"), std::string::npos) << n;
}

INSTANTIATE_TEST_SUITE_P(Counts, ShardUnion,
                         ::testing::Combine(::testing::Values(1, 2, 3, 7),
                                            ::testing::Values(std::string("local-gpu"), std::string("rank"))),
                         [](const auto& info) {
                           std::string g = std::get<1>(info.param) == "rank" ? "Rank" : "LocalGpu";
                           return g + "_" + std::to_string(std::get<0>(info.param)) + "Shards";
                         });

// --time-ranges: a job of 2 outputs on 8 shards, each shard one time range
// of one output. The union is byte-identical to one process with the same
// flags (manifest and tables too), and the ranges hold each output's events
// in order (check_outputs.py ranges, against the job without ranges).
TEST(ShardRun, TimeRangesSpreadTwoOutputsOverEightShards) {
  const std::string job = SAMPLE_JOB_DIR;
  const std::vector<std::string> flags = {"--group-by", "rank", "--tables", "-q"};
  std::vector<std::string> ranged = flags;
  ranged.insert(ranged.end(), {"--time-ranges", "4"});
  const std::string whole = Fresh("ranges-whole"), one = Fresh("ranges-one"), sharded = Fresh("ranges-sharded");
  std::vector<std::string> args = {"convert", job, "-o", whole};
  args.insert(args.end(), flags.begin(), flags.end());
  ASSERT_EQ(Tracemill(args).code, 0);
  args = {"convert", job, "-o", one};
  args.insert(args.end(), ranged.begin(), ranged.end());
  ASSERT_EQ(Tracemill(args).code, 0);
  for (int i = 0; i < 8; ++i) {
    args = {"convert", job, "-o", sharded, "--shard", std::to_string(i) + "/8"};
    args.insert(args.end(), ranged.begin(), ranged.end());
    Result r = Tracemill(args);
    ASSERT_EQ(r.code, 0) << "shard " << i << ": " << r.err;
  }
  Result m = Tracemill({"manifest", "merge", sharded});
  ASSERT_EQ(m.code, 0) << m.err;
  EXPECT_EQ(Shell(kCheck + " ranges " + whole + " " + one + " 4"), 0);
  EXPECT_EQ(Shell(kCheck + " same " + one + " " + sharded), 0);
  EXPECT_EQ(Shell(kCheck + " tables " + one + " " + sharded), 0);
  EXPECT_EQ(Shell(kCheck + " valid " + sharded), 0);
  // Every shard wrote one of the 8 range files.
  auto owners = Owners(sharded, 8);
  std::set<int> used;
  for (auto it = owners.begin(); it != owners.end();)  // the outputs only (inputs are listed too)
    it = it->first.find(".trace.json") == std::string::npos ? owners.erase(it) : std::next(it);
  for (const auto& [name, shard] : owners) used.insert(shard);
  EXPECT_EQ(owners.size(), 8u);
  EXPECT_EQ(used.size(), 8u);
  EXPECT_TRUE(owners.count("rank1.time-3-of-4.trace.json"));
  // The job's i-th input is reported by its output's range i % 4: the
  // sample job's rank0 file (input 1) by the shard of rank0's second range,
  // not by the first range's.
  const std::string check =
      "import json, sys\n"
      "d = sys.argv[1]\n"
      "def shard_of(name):\n"
      "    for i in range(8):\n"
      "        m = json.load(open(f'{d}/manifest.shard-{i}-of-8.json'))\n"
      "        if [o['path'] for o in m['outputs']] == [name]: return m\n"
      "def reports(m):\n"
      "    return [r['path'].split('/')[-1] for r in m['inputs'] if 'owner_shard' not in r]\n"
      "assert 'sampled_rank-0.json.gz' in reports(shard_of('rank0.time-2-of-4.trace.json'))\n"
      "assert 'sampled_rank-0.json.gz' not in reports(shard_of('rank0.time-1-of-4.trace.json'))\n"
      "assert 'sampled_rank-1.json.gz' in reports(shard_of('rank1.time-3-of-4.trace.json'))\n";
  WriteFile(sharded + "/check.py", check);
  EXPECT_EQ(Shell("python3 " + sharded + "/check.py " + sharded), 0);
}

// A time-range shard's summary line says what it read and wrote: the input
// of its range is reported by another shard (the range that owns it), so its
// own input counts are zero, and the events its range file holds are given
// apart; the owner's line gives its range's events beside the whole input's.
TEST(ShardRun, ATimeRangeShardSaysWhatItReadAndWrote) {
  const std::string out = Fresh("range-summary");
  Result r = Tracemill({"convert", SAMPLE_JOB_DIR, "-o", out, "--group-by", "rank", "--time-ranges", "4", "--shard",
                        "2/8"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("tracemill: 0 inputs (0 with errors), 0 events read, 0 written, 0 dropped (1 more input read "
                       "here, counted by shard 1); 1 output in " + out + ", 1,229 events written here ("),
            std::string::npos)
      << r.err;
  r = Tracemill({"convert", SAMPLE_JOB_DIR, "-o", out, "--group-by", "rank", "--time-ranges", "4", "--shard", "1/8"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("tracemill: 1 input (0 with errors), 4,855 events read, 4,834 written, 21 dropped; 1 output "
                       "in " + out + ", 1,229 events written here ("),
            std::string::npos)
      << r.err;
  // Not sharded: the line as before.
  r = Tracemill({"convert", SAMPLE_JOB_DIR, "-o", Fresh("range-summary-one"), "--group-by", "rank"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("read here"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("written here"), std::string::npos) << r.err;
}

// --time-ranges with --start/--end: the ranges split the window's events
// (the split from the samples in the window), about the same number each.
TEST(ShardRun, TimeRangesSplitTheWindow) {
  const std::vector<std::string> flags = {"--group-by", "rank", "--tables", "-q", "--start", "1682725898900000",
                                          "--end", "1682725899000000"};
  const std::string whole = Fresh("ranges-window-whole"), ranged = Fresh("ranges-window");
  std::vector<std::string> args = {"convert", SAMPLE_JOB_DIR, "-o", whole};
  args.insert(args.end(), flags.begin(), flags.end());
  ASSERT_EQ(Tracemill(args).code, 0);
  args = {"convert", SAMPLE_JOB_DIR, "-o", ranged, "--time-ranges", "3"};
  args.insert(args.end(), flags.begin(), flags.end());
  ASSERT_EQ(Tracemill(args).code, 0);
  EXPECT_EQ(Shell(kCheck + " ranges " + whole + " " + ranged + " 3"), 0);
  EXPECT_NE(ReadFile(whole + "/manifest.json").find("\"window\":"), std::string::npos);  // events were dropped
}

// More shards than planned outputs: a shard left without one says so and
// which --time-ranges would give it a range; with that option, none is idle.
TEST(ShardRun, AnIdleShardSaysWhichTimeRangesWouldGiveItWork) {
  const std::string out = Fresh("idle-shard");
  Result r = Tracemill({"convert", SAMPLE_JOB_DIR, "-o", out, "--group-by", "rank", "--shard", "2/5"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("shard 2/5 has no planned output to write: the job plans 2 outputs for 5 shards; "
                       "--time-ranges 3 (the same in every shard) would give each shard a time range of one"),
            std::string::npos)
      << r.err;
  r = Tracemill({"convert", SAMPLE_JOB_DIR, "-o", Fresh("idle-shard-ranges"), "--group-by", "rank", "--shard", "2/5",
                 "--time-ranges", "3"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("no planned output"), std::string::npos) << r.err;
  r = Tracemill({"convert", SAMPLE_JOB_DIR, "-o", Fresh("idle-shard-busy"), "--group-by", "rank", "--shard", "0/5"});
  EXPECT_EQ(r.err.find("no planned output"), std::string::npos) << r.err;
}

// --time-ranges: a count outside 1-4096 is a usage error that writes nothing.
TEST(ShardRun, TimeRangesUsageErrors) {
  const std::string out = Fresh("ranges-usage");
  for (const char* n : {"0", "4097", "two"}) {
    Result r = Tracemill({"convert", SAMPLE_JOB_DIR, "-o", out, "--time-ranges", n});
    EXPECT_EQ(r.code, 2) << n << ": " << r.err;
    EXPECT_NE(r.err.find("--time-ranges"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(out + "/manifest.json"));
}

// --resume over time ranges: a shard run again keeps its range files and
// reads nothing (one that writes only a later range reports no input); in
// one process, a range file gone redoes its output's ranges only. The
// results stay one process's.
TEST(ShardRun, TimeRangesResume) {
  const std::string job = SAMPLE_JOB_DIR;
  const std::vector<std::string> flags = {"--group-by", "rank", "--time-ranges", "4", "--tables", "-q"};
  const std::string one = Fresh("ranges-resume-one"), sharded = Fresh("ranges-resume-sharded");
  std::vector<std::string> args = {"convert", job, "-o", one};
  args.insert(args.end(), flags.begin(), flags.end());
  ASSERT_EQ(Tracemill(args).code, 0);
  const std::string reference = Fresh("ranges-resume-reference");
  fs::copy(one, reference, fs::copy_options::recursive);
  for (int i = 0; i < 8; ++i) {
    args = {"convert", job, "-o", sharded, "--shard", std::to_string(i) + "/8", "--resume"};
    args.insert(args.end(), flags.begin(), flags.end());
    ASSERT_EQ(Tracemill(args).code, 0) << i;
  }
  for (int i : {0, 3}) {  // the first range of rank0's, and a later one
    args = {"convert", job, "-o", sharded, "--shard", std::to_string(i) + "/8", "--resume"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.pop_back();  // not -q: the resume line
    Result r = Tracemill(args);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("resume: 1 output already complete (1 input not read)"), std::string::npos) << r.err;
  }
  ASSERT_EQ(Tracemill({"manifest", "merge", sharded}).code, 0);
  EXPECT_EQ(Shell(kCheck + " same " + reference + " " + sharded), 0);
  EXPECT_EQ(Shell(kCheck + " tables " + reference + " " + sharded), 0);
  // One process: rank1's third range gone; rank0's four are kept.
  fs::remove(one + "/rank1.time-3-of-4.trace.json");
  args = {"convert", job, "-o", one, "--resume"};
  args.insert(args.end(), flags.begin(), flags.end());
  args.pop_back();
  Result r = Tracemill(args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("resume: 4 outputs already complete (1 input not read), 4 to redo"), std::string::npos)
      << r.err;
  EXPECT_EQ(Shell(kCheck + " same " + reference + " " + one), 0);
  EXPECT_EQ(Shell(kCheck + " tables " + reference + " " + one), 0);
}

// The same on the mixed job (inputs whose rank only their decode tells,
// a damaged one), 3 ranges per output on 7 shards.
TEST(ShardRun, TimeRangesOfUndeterminedInputsUnionIsOneProcesss) {
  std::string job = MakeMixedJob(TEST_TMP_ROOT);
  const std::vector<std::string> flags = {"--group-by", "local-gpu", "--time-ranges", "3"};
  std::string ref = Reference(job, flags, "ranges3");
  std::string whole = Reference(job, {"--group-by", "local-gpu"}, "local-gpu");
  std::string a = Fresh("ranges-mixed");
  RunShards(job, flags, 7, a);
  EXPECT_EQ(Shell(kCheck + " ranges " + whole + " " + ref + " 3"), 0);
  EXPECT_EQ(Shell(kCheck + " same " + ref + " " + a), 0);
  EXPECT_FALSE(AnyTemporary(a));
}

// 4 deviceProperties in one file's head make 4 GPUs per node in every mode.
TEST(ShardRun, GpusPerNodeFromPreScanInEveryMode) {
  std::string job = MakeMixedJob(TEST_TMP_ROOT);
  std::string ref = Reference(job, {"--group-by", "local-gpu"}, "local-gpu");
  std::string text = ReadFile(ref + "/manifest.json");
  EXPECT_NE(text.find("\"gpus_per_node\":4"), std::string::npos);
  EXPECT_TRUE(fs::exists(ref + "/gpu3.trace.json"));
  EXPECT_FALSE(fs::exists(ref + "/gpu4.trace.json"));
}

TEST(ShardRun, MergeFailsNamingMissingShard) {
  std::string job = MakeMixedJob(TEST_TMP_ROOT);
  std::string out = Fresh("missing");
  for (int i : {0, 2}) {
    Result r = Tracemill({"convert", job, "-o", out, "--shard", std::to_string(i) + "/3", "-q"});
    EXPECT_TRUE(r.code == 0 || r.code == 3) << r.err;
  }
  Result m = Tracemill({"manifest", "merge", out});
  EXPECT_EQ(m.code, 1);
  EXPECT_NE(m.err.find("shard 1 (1/3): missing manifest.shard-1-of-3.json"), std::string::npos) << m.err;
  EXPECT_EQ(m.err.find("shard 0 "), std::string::npos) << m.err;
  EXPECT_FALSE(fs::exists(out + "/manifest.json"));
  EXPECT_FALSE(fs::exists(out + "/report.html"));
  // Once it has run, the merge succeeds.
  Result r = Tracemill({"convert", job, "-o", out, "--shard", "1/3", "-q"});
  EXPECT_TRUE(r.code == 0 || r.code == 3) << r.err;
  EXPECT_EQ(Tracemill({"manifest", "merge", out}).code, 3);
  EXPECT_TRUE(fs::exists(out + "/manifest.json"));
}

// `manifest merge` writes report.html from the merged manifest, as convert
// does (users had to run `tracemill report` after it); --no-report leaves
// it out. The sample job in 2 shards: the report holds the whole job.
TEST(ShardRun, MergeWritesTheReport) {
  const std::string job = std::string(TEST_SOURCE_DIR) + "/../../cluster-examples/sample-job";
  const std::string out = Fresh("merge_report");
  for (int i : {0, 1}) {
    Result r = Tracemill({"convert", job, "-o", out, "--shard", std::to_string(i) + "/2", "-q"});
    EXPECT_EQ(r.code, 0) << r.err;
  }
  EXPECT_FALSE(fs::exists(out + "/report.html"));  // shards write none
  Result m = Tracemill({"manifest", "merge", out});
  EXPECT_EQ(m.code, 0) << m.err;
  EXPECT_EQ(m.err, "tracemill: manifest merge: 2 shards, 2 inputs, 2 outputs -> " + out + "/manifest.json, " + out +
                       "/report.html\n");
  const std::string html = ReadFile(out + "/report.html");
  EXPECT_NE(html.find("<span class=\"badge b-ok\" id=\"exit-status\">exit 0: every input converted</span>"),
            std::string::npos);
  EXPECT_NE(html.find("<div class=\"card\" id=\"card-inputs\" data-value=\"3\">"), std::string::npos);
  EXPECT_NE(html.find("<div class=\"card\" id=\"card-events-read\" data-value=\"9575\">"), std::string::npos);
  EXPECT_NE(html.find("<div class=\"card\" id=\"card-outputs\" data-value=\"2\">"), std::string::npos);
  ASSERT_TRUE(fs::remove(out + "/report.html"));
  Result quiet = Tracemill({"manifest", "merge", out, "--no-report"});
  EXPECT_EQ(quiet.code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "tracemill: manifest merge: 2 shards, 2 inputs, 2 outputs -> " + out + "/manifest.json\n");
  EXPECT_FALSE(fs::exists(out + "/report.html"));
}

// A whole job into a folder where a sharded job ran removes that job's shard
// manifests and journals: a later merge would describe the sharded job.
TEST(ShardRun, AWholeJobRemovesAnEarlierShardedJobsManifests) {
  std::string job = MakeMixedJob(TEST_TMP_ROOT);
  std::string out = Fresh("whole_after_shards");
  for (int i : {0, 1}) {
    Result r = Tracemill({"convert", job, "-o", out, "--shard", std::to_string(i) + "/2", "-q"});
    EXPECT_TRUE(r.code == 0 || r.code == 3) << r.err;
  }
  ASSERT_TRUE(fs::exists(out + "/manifest.shard-0-of-2.json"));
  ASSERT_TRUE(fs::exists(out + "/manifest.shard-1-of-2.json"));
  Result r = Tracemill({"convert", job, "-o", out, "-q"});
  EXPECT_TRUE(r.code == 0 || r.code == 3) << r.err;
  EXPECT_TRUE(fs::exists(out + "/manifest.json"));
  for (const auto& e : fs::directory_iterator(out))
    EXPECT_EQ(e.path().filename().string().find(".shard-"), std::string::npos) << e.path();
  Result m = Tracemill({"manifest", "merge", out});
  EXPECT_EQ(m.code, 2) << m.err;
  EXPECT_NE(m.err.find("no shard manifests"), std::string::npos) << m.err;
}

TEST(ShardRun, MergeWithoutShardManifestsIsUsageError) {
  std::string out = Fresh("nomanifests");
  Result m = Tracemill({"manifest", "merge", out});
  EXPECT_EQ(m.code, 2);
  EXPECT_NE(m.err.find("no shard manifests"), std::string::npos) << m.err;
}

TEST(ShardRun, RelativeTimeWithShardsIsUsageError) {
  std::string job = MakeMixedJob(TEST_TMP_ROOT);
  Result r = Tracemill({"convert", job, "-o", Fresh("reltime"), "--shard", "1/2", "--relative-time"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--relative-time"), std::string::npos);
}

// Detection from the environment, end to end: the line on stderr and the
// shard manifest's name.
TEST(ShardRun, EnvironmentDetection) {
  std::string job = SAMPLE_JOB_DIR;
  struct Case {
    std::vector<std::string> env;
    std::string expect_line, manifest;
  };
  std::vector<Case> cases = {
      {{"SLURM_ARRAY_TASK_ID=6", "SLURM_ARRAY_TASK_MIN=5", "SLURM_ARRAY_TASK_MAX=7", "SLURM_ARRAY_TASK_COUNT=3",
        "SLURM_PROCID=0", "SLURM_NTASKS=1"},
       "shard 1/3 (detected from SLURM_ARRAY_TASK_ID=6 SLURM_ARRAY_TASK_MIN=5", "manifest.shard-1-of-3.json"},
      {{"SLURM_PROCID=1", "SLURM_NTASKS=2"}, "shard 1/2 (detected from SLURM_PROCID=1 SLURM_NTASKS=2)",
       "manifest.shard-1-of-2.json"},
      {{"JOB_COMPLETION_INDEX=2", "TRACEMILL_SHARD_COUNT=4"},
       "shard 2/4 (detected from JOB_COMPLETION_INDEX=2 TRACEMILL_SHARD_COUNT=4)", "manifest.shard-2-of-4.json"},
  };
  int k = 0;
  for (const auto& c : cases) {
    std::string out = Fresh("env-" + std::to_string(k++));
    Result r = Tracemill({"convert", job, "-o", out}, c.env);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find(c.expect_line), std::string::npos) << r.err;
    EXPECT_TRUE(fs::exists(out + "/" + c.manifest)) << c.manifest;
    EXPECT_FALSE(fs::exists(out + "/manifest.json"));
  }
  // --shard overrides the environment; --quiet prints nothing.
  std::string out = Fresh("env-override");
  Result r = Tracemill({"convert", job, "-o", out, "--shard", "0/1", "-q"}, {"JOB_COMPLETION_INDEX=1"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(fs::exists(out + "/manifest.json"));
  // An Indexed Job without a count is a usage error.
  r = Tracemill({"convert", job, "-o", Fresh("env-nocount")}, {"JOB_COMPLETION_INDEX=1"});
  EXPECT_EQ(r.code, 2);
}

// A second distributedInfo after 256 KiB of events: the first rank wins, in
// the head and in the full decode alike (with a warning), so a sharded run
// places the input where a single run does and nothing is regrouped.
TEST(ShardRun, SecondDistributedInfoAfterTheEventsKeepsTheFirstRank) {
  std::string job = Fresh("twoheads-job");
  WriteFile(job + "/a.json", "{\"distributedInfo\":{\"rank\":1},\"traceEvents\":[\n" + Events(1, 3000) +
                                 "\n],\"distributedInfo\":{\"rank\":2}}");
  WriteFile(job + "/b.json", Kineto(2, 100, 0));
  std::string single = Fresh("twoheads-single");
  EXPECT_EQ(Tracemill({"convert", job, "-o", single, "-q"}).code, 0);
  ASSERT_TRUE(fs::exists(single + "/gpu1.trace.json"));
  ASSERT_TRUE(fs::exists(single + "/gpu2.trace.json"));
  std::string m = ReadFile(single + "/manifest.json");
  EXPECT_NE(m.find("distributedInfo.rank is given again (2); the first (1) is kept"), std::string::npos) << m;
  std::string out = Fresh("twoheads-shards");
  for (int i = 0; i < 2; ++i) {
    Result r = Tracemill({"convert", job, "-o", out, "--shard", std::to_string(i) + "/2", "-q"});
    EXPECT_EQ(r.code, 0) << r.err;
  }
  EXPECT_EQ(Tracemill({"manifest", "merge", out}).code, 0);
  for (const char* f : {"gpu1.trace.json", "gpu2.trace.json"})
    EXPECT_EQ(ReadFile(out + "/" + f), ReadFile(single + "/" + f)) << f;
}

// ---------------- interrupted runs ----------------

// A job large enough to interrupt: 4 ranks of 40k events, one output each.
std::string MakeBigJob() {
  return BuildOnce(std::string(TEST_TMP_ROOT) + "/bigjob", [](const std::string& dir) {
    for (int r = 0; r < 4; ++r) WriteFile(dir + "/rank" + std::to_string(r) + ".json", Kineto(r, 40000, 1));
  });
}

size_t JournalEntries(const std::string& path) {
  std::string t = ReadFile(path);
  return t.empty() ? 0 : static_cast<size_t>(std::count(t.begin(), t.end(), '\n')) - 1;
}

// Starts `args`, waits until the journal lists `entries` completed outputs and the
// next output's temporary exists (the run is mid-write), then sends `sig`.
int InterruptMidWrite(const std::vector<std::string>& args, const std::string& out, const std::string& journal,
                      int sig, size_t entries = 1) {
  std::vector<std::string> full = {kBin};
  full.insert(full.end(), args.begin(), args.end());
  pid_t pid = Spawn(full, {}, out + ".stderr");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  bool mid_write = false;
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(out) && JournalEntries(journal) >= entries && AnyTemporary(out)) {
      mid_write = true;
      break;
    }
    int st;
    if (waitpid(pid, &st, WNOHANG) == pid) return -1;  // finished before we caught it
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(mid_write);
  kill(pid, sig);
  return Wait(pid);
}

// Outputs on disk are exactly those the journal lists, with their sizes.
void ExpectOnlyJournaledOutputs(const std::string& out, const std::string& journal) {
  std::string t = ReadFile(journal);
  for (const auto& n : Listing(out)) {
    if (n.find(".trace.json") == std::string::npos || n[0] == '.') continue;
    std::string size = "\"bytes\":" + std::to_string(fs::file_size(out + "/" + n));
    EXPECT_NE(t.find("{\"output\":{\"path\":\"" + n + "\""), std::string::npos) << n << " is not journaled";
    EXPECT_NE(t.find(size), std::string::npos) << n << " has another size than journaled";
  }
}

// `tracemill csp` on SIGTERM mid-write: exits 143 itself and removes its
// temporaries, as convert does (it was killed by the signal and left a
// .traceFile_*.tmp.<pid> behind; found by an attack helper). The small csp
// job takes ~35 ms, so the test polls for a temporary and retries.
TEST(ShardResume, CspInterruptedMidWriteExits143AndLeavesNoTemporary) {
  const std::string data = std::string(TEST_SOURCE_DIR) + "/../data/paddle-csp/small/data";
  int caught = 0;
  for (int attempt = 0; attempt < 300 && caught < 3; ++attempt) {
    std::string out = Fresh("csp-term");
    pid_t pid = Spawn({kBin, "csp", "--profile-path", data, "--timeline-path", out, "--threads", "1"}, {},
                      out + ".stderr");
    ASSERT_GT(pid, 0);
    int st = 0;
    bool signalled = false, ended = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!ended && std::chrono::steady_clock::now() < deadline) {
      if (AnyTemporary(out)) {
        kill(pid, SIGTERM);
        signalled = true;
        break;
      }
      ended = waitpid(pid, &st, WNOHANG) == pid;
    }
    if (!ended)
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
      }
    if (!signalled) continue;
    ++caught;
    EXPECT_TRUE(WIFEXITED(st)) << "killed by signal " << (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    if (WIFEXITED(st)) {
      EXPECT_EQ(WEXITSTATUS(st), 143);
    }
    EXPECT_FALSE(AnyTemporary(out)) << "a partial output was left behind";
  }
  EXPECT_GE(caught, 1) << "never caught csp mid-write";
}

TEST(ShardResume, SigtermMidWriteLeavesNoPartialFileAndResumeCompletes) {
  std::string job = MakeBigJob();
  std::string ref = Fresh("big-ref");
  ASSERT_EQ(Tracemill({"convert", job, "-o", ref, "--group-by", "rank", "-q"}).code, 0);
  std::string out = Fresh("big-term");
  std::string journal = out + "/journal.jsonl";
  int code = InterruptMidWrite({"convert", job, "-o", out, "--group-by", "rank", "--threads", "1",
                                "--debug-write-delay-ms", "25"},
                               out, journal, SIGTERM);
  ASSERT_EQ(code, 143);
  EXPECT_FALSE(AnyTemporary(out)) << "a partial output was left behind";
  EXPECT_FALSE(fs::exists(out + "/manifest.json"));
  EXPECT_EQ(ReadFile(out + ".stderr"),
            "tracemill: interrupted (SIGTERM): no partial output left; rerun the same command with --resume to keep "
            "the outputs already written\n");
  EXPECT_GE(JournalEntries(journal), 1u);
  EXPECT_LT(JournalEntries(journal), 4u);
  ExpectOnlyJournaledOutputs(out, journal);
  EXPECT_EQ(Shell(kCheck + " valid " + out), 0);  // the journal's lines parse too
  size_t done_before = JournalEntries(journal);
  std::string t = ReadFile(journal);
  size_t p = t.find("{\"output\":{\"path\":\"") + 19;
  std::string first_name = t.substr(p, t.find('"', p) - p);
  auto first_done = fs::last_write_time(out + "/" + first_name);

  Result r = Tracemill({"convert", job, "-o", out, "--group-by", "rank", "--resume", "--threads", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("resume: " + Counted(done_before, "output") + " already complete"), std::string::npos)
      << r.err;
  EXPECT_EQ(fs::last_write_time(out + "/" + first_name), first_done);  // kept, not rewritten
  EXPECT_FALSE(fs::exists(journal));
  std::string m = ReadFile(out + "/manifest.json");
  EXPECT_NE(m.find("\"resume\":{\"outputs_reused\":" + std::to_string(done_before)), std::string::npos) << m;
  EXPECT_EQ(Shell(kCheck + " valid " + out), 0);
  EXPECT_EQ(Shell(kCheck + " same " + ref + " " + out), 0);
}

// Ctrl-C (SIGINT) says so, and how to resume, in one line (issue 21: it
// exited 130 with no word).
TEST(ShardResume, SigintSaysInterruptedAndHowToResume) {
  std::string job = MakeBigJob();
  std::string out = Fresh("big-int");
  int code = InterruptMidWrite({"convert", job, "-o", out, "--group-by", "rank", "--threads", "1",
                                "--debug-write-delay-ms", "25", "-q"},
                               out, out + "/journal.jsonl", SIGINT);
  ASSERT_EQ(code, 130);
  EXPECT_FALSE(AnyTemporary(out));
  EXPECT_EQ(ReadFile(out + ".stderr"),
            "tracemill: interrupted (SIGINT): no partial output left; rerun the same command with --resume to keep "
            "the outputs already written\n");
}

// Issue 37, point 5: with --tables the line promised that --resume keeps
// the outputs already written, and --resume --tables then redid all of
// them (tables.sqlite was written only at the end; an interrupted run left
// none). The tables file is now written as .tables.sqlite.partial with a
// commit per completed output: --resume keeps the outputs and their rows,
// and the tables equal an uninterrupted run's.
// InterruptTablesThenResume: a --tables run stopped by `sig` after two
// outputs, then resumed: the outputs kept, the tables equal a whole run's.
void InterruptTablesThenResume(int sig, const std::string& name) {
  std::string job = MakeBigJob();
  std::string ref = Fresh("big-ref-tables");
  ASSERT_EQ(Tracemill({"convert", job, "-o", ref, "--group-by", "rank", "--tables=full", "-q"}).code, 0);
  std::string out = Fresh(name);
  const std::string journal = out + "/journal.jsonl";
  // Two outputs complete: the first one's commit point is surely behind.
  int code = InterruptMidWrite({"convert", job, "-o", out, "--group-by", "rank", "--threads", "1",
                                "--debug-write-delay-ms", "25", "--tables=full", "-q"},
                               out, journal, sig, 2);
  ASSERT_EQ(code, 128 + sig);
  if (sig == SIGINT) {
    EXPECT_FALSE(AnyTemporary(out));
    EXPECT_EQ(ReadFile(out + ".stderr"),
              "tracemill: interrupted (SIGINT): no partial output left; rerun the same command with --resume to keep "
              "the outputs already written\n");
  }
  EXPECT_TRUE(fs::exists(out + "/.tables.sqlite.partial"));
  EXPECT_FALSE(fs::exists(out + "/tables.sqlite"));
  const size_t done_before = JournalEntries(journal);
  ASSERT_GE(done_before, 2u);
  std::string t = ReadFile(journal);
  size_t p = t.find("{\"output\":{\"path\":\"") + 19;
  std::string first_name = t.substr(p, t.find('"', p) - p);
  auto first_done = fs::last_write_time(out + "/" + first_name);

  Result r = Tracemill({"convert", job, "-o", out, "--group-by", "rank", "--tables=full", "--resume"});
  ASSERT_EQ(r.code, 0) << r.err;
  // The last journaled output's rows may have missed their commit: it is
  // then redone, and said so.
  const std::string kept = "resume: " + Counted(done_before, "output") + " already complete (" +
                           Counted(done_before, "input") + " not read)";
  const bool all = r.err.find(kept + "\n") != std::string::npos;
  const bool but_one = r.err.find(kept + "; 1 redone for tables.sqlite") != std::string::npos;
  EXPECT_TRUE(all || but_one) << r.err;
  EXPECT_EQ(fs::last_write_time(out + "/" + first_name), first_done);  // kept, not rewritten
  EXPECT_FALSE(fs::exists(journal));
  EXPECT_FALSE(AnyTemporary(out));
  EXPECT_FALSE(fs::exists(out + "/.tables.sqlite.partial"));
  EXPECT_FALSE(fs::exists(out + "/.tables.sqlite.partial-journal"));
  EXPECT_FALSE(fs::exists(out + "/.tables.sqlite.previous"));
  EXPECT_EQ(Shell(kCheck + " same " + ref + " " + out), 0);
  EXPECT_EQ(Shell(kCheck + " tables " + ref + " " + out), 0);
}

TEST(ShardResume, SigintWithTablesThenResumeKeepsTheWrittenOutputs) {
  InterruptTablesThenResume(SIGINT, "big-int-tables");
}

// SIGKILL leaves the partial file with a rollback journal of the output
// being written: opening it undoes that output's rows.
TEST(ShardResume, SigkillWithTablesThenResumeKeepsTheWrittenOutputs) {
  InterruptTablesThenResume(SIGKILL, "big-kill-tables");
}

// Without --resume, an interrupted run's partial tables go.
TEST(ShardResume, PartialTablesGoWithoutResume) {
  std::string job = MakeBigJob();
  std::string out = Fresh("big-int-tables-again");
  ASSERT_EQ(InterruptMidWrite({"convert", job, "-o", out, "--group-by", "rank", "--threads", "1",
                               "--debug-write-delay-ms", "25", "--tables", "-q"},
                              out, out + "/journal.jsonl", SIGTERM),
            143);
  ASSERT_TRUE(fs::exists(out + "/.tables.sqlite.partial"));
  ASSERT_EQ(Tracemill({"convert", job, "-o", out, "--group-by", "rank", "-q"}).code, 0);
  EXPECT_FALSE(fs::exists(out + "/.tables.sqlite.partial"));
  EXPECT_FALSE(fs::exists(out + "/tables.sqlite"));
}

// SIGKILL cannot clean up: the temporary stays until the resumed run
// removes it; the outputs are still right.
TEST(ShardResume, SigkillThenResume) {
  std::string job = MakeBigJob();
  std::string ref = Fresh("big-ref-kill");
  ASSERT_EQ(Tracemill({"convert", job, "-o", ref, "--group-by", "rank", "-q"}).code, 0);
  std::string out = Fresh("big-kill");
  int code = InterruptMidWrite({"convert", job, "-o", out, "--group-by", "rank", "--threads", "1",
                                "--debug-write-delay-ms", "25"},
                               out, out + "/journal.jsonl", SIGKILL);
  ASSERT_EQ(code, 128 + SIGKILL);
  EXPECT_TRUE(AnyTemporary(out));
  Result r = Tracemill({"convert", job, "-o", out, "--group-by", "rank", "--resume"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(AnyTemporary(out));
  EXPECT_EQ(Shell(kCheck + " same " + ref + " " + out), 0);
}

// A shard killed by SIGTERM mid-write: merge names it as unfinished, --resume
// completes it, and the union equals a single run.
TEST(ShardResume, ShardKilledMidWriteThenResumedAndMerged) {
  std::string job = MakeBigJob();
  std::string ref = Fresh("big-ref-shard");
  ASSERT_EQ(Tracemill({"convert", job, "-o", ref, "--group-by", "rank", "-q"}).code, 0);
  std::string out = Fresh("big-shards");
  int code = InterruptMidWrite({"convert", job, "-o", out, "--group-by", "rank", "--shard", "0/2", "--threads",
                                "1", "--debug-write-delay-ms", "25"},
                               out, out + "/journal.shard-0-of-2.jsonl", SIGTERM);
  ASSERT_EQ(code, 143);
  EXPECT_FALSE(AnyTemporary(out));
  ExpectOnlyJournaledOutputs(out, out + "/journal.shard-0-of-2.jsonl");
  ASSERT_EQ(Tracemill({"convert", job, "-o", out, "--group-by", "rank", "--shard", "1/2", "-q"}).code, 0);
  Result m = Tracemill({"manifest", "merge", out});
  EXPECT_EQ(m.code, 1);
  EXPECT_NE(m.err.find("shard 0 (0/2): missing manifest.shard-0-of-2.json: started but did not finish"),
            std::string::npos)
      << m.err;
  Result r = Tracemill({"convert", job, "-o", out, "--group-by", "rank", "--shard", "0/2", "--resume"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("resume: 1 output already complete"), std::string::npos) << r.err;
  ASSERT_EQ(Tracemill({"manifest", "merge", out}).code, 0);
  EXPECT_EQ(Shell(kCheck + " valid " + out), 0);
  EXPECT_EQ(Shell(kCheck + " same " + ref + " " + out), 0);
}

// --resume with nothing to resume converts everything; after a complete
// run it reads nothing.
TEST(ShardResume, ResumeAfterCompleteRunReadsNothing) {
  std::string job = MakeMixedJob(TEST_TMP_ROOT);
  std::string out = Fresh("resume-complete");
  Result first = Tracemill({"convert", job, "-o", out, "--resume"});
  EXPECT_EQ(first.code, 3) << first.err;
  EXPECT_NE(first.err.find("resume: 0 outputs already complete"), std::string::npos) << first.err;
  Result again = Tracemill({"convert", job, "-o", out, "--resume"});
  EXPECT_EQ(again.code, 3) << again.err;
  EXPECT_NE(again.err.find("resume: 5 outputs already complete"), std::string::npos) << again.err;
  std::string ref = Reference(job, {"--group-by", "local-gpu"}, "local-gpu");
  EXPECT_EQ(Shell(kCheck + " same " + ref + " " + out), 0);
  // A changed output is redone.
  WriteFile(out + "/gpu2.trace.json", "{}");
  Result third = Tracemill({"convert", job, "-o", out, "--resume"});
  EXPECT_NE(third.err.find("resume: 4 outputs already complete"), std::string::npos) << third.err;
  EXPECT_EQ(Shell(kCheck + " same " + ref + " " + out), 0);
}

// ---------------- findings of the overlap review (session 3) ----------------

// Outputs of every trace file in `dir` (sorted names), byte for byte.
std::map<std::string, std::string> Traces(const std::string& dir) {
  std::map<std::string, std::string> m;
  for (const std::string& name : Listing(dir))
    if (name.find(".trace.json") != std::string::npos && name.rfind("overview.", 0) != 0)
      m[name] = ReadFile(dir + "/" + name);
  return m;
}

// A multi-member gzip input (a tiny last member, so ISIZE underestimates it)
// under a limit where the overlap's decode budget is smaller than the
// staged one: both modes accept it alike (it was rejected with the overlap).
TEST(OverlapReview, MultiMemberGzipConvertsInBothModes) {
  std::string job = Fresh("mm-job");
  // 17.9 MB of gen_kineto JSON + a one-byte member (tests/data/generated).
  fs::copy_file(std::string(TEST_SOURCE_DIR) + "/../data/generated/multi_member_rank0.json.gz",
                job + "/rank0.json.gz");
  std::string a = Fresh("mm-overlap"), b = Fresh("mm-staged");
  Result ra = Tracemill({"convert", job, "-o", a, "--memory-limit", "60M", "-q"});
  Result rb = Tracemill({"convert", job, "-o", b, "--memory-limit", "60M", "--no-overlap", "-q"});
  EXPECT_EQ(ra.code, 0) << ra.err;
  EXPECT_EQ(rb.code, 0) << rb.err;
  auto ta = Traces(a);
  ASSERT_EQ(ta.size(), 1u);
  EXPECT_EQ(ta, Traces(b));
}

// The output directory is never read as an input: inside an input directory
// it is skipped (a re-run reads the same inputs), and naming it as an input
// is a usage error (its outputs would replace inputs before they are read).
TEST(OverlapReview, OutputDirectoryIsNeverAnInput) {
  std::string job = Fresh("od-job");
  WriteFile(job + "/rank0.json", Kineto(0, 200, 1));
  WriteFile(job + "/rank1.json", Kineto(1, 200, 1));
  const std::string out = job + "/out";
  for (int round = 0; round < 2; ++round) {
    Result r = Tracemill({"convert", job, "-o", out, "-q"});
    EXPECT_EQ(r.code, 0) << r.err;
    std::string m = ReadFile(out + "/manifest.json");
    EXPECT_NE(m.find("\"inputs\":2,"), std::string::npos) << "round " << round << ": " << m.substr(0, 600);
  }
  const std::string before = ReadFile(job + "/rank0.json");
  Result same = Tracemill({"convert", job, "-o", job, "-q"});
  EXPECT_EQ(same.code, 2);
  EXPECT_NE(same.err.find("is also an input"), std::string::npos) << same.err;
  EXPECT_EQ(ReadFile(job + "/rank0.json"), before);
  EXPECT_FALSE(fs::exists(job + "/gpu0.trace.json"));
}

// Three files of one rank: the warnings name the others in path order,
// whichever finished decoding first (they followed decode order).
TEST(OverlapReview, DuplicateRankWarningsInPathOrder) {
  std::string job = Fresh("dup-job");
  WriteFile(job + "/a.json", Kineto(0, 3000, 1));
  WriteFile(job + "/b.json", Kineto(0, 100, 1));
  WriteFile(job + "/c.json", Kineto(0, 1000, 1));
  for (const char* mode : {"--threads=1", "--no-overlap"}) {
    std::string out = Fresh(std::string("dup-out") + mode);
    Result r = Tracemill({"convert", job, "-o", out, "-q", mode});
    ASSERT_EQ(r.code, 0) << r.err;
    std::string m = ReadFile(out + "/manifest.json");
    EXPECT_NE(m.find("rank 0 is also claimed by " + job + "/b.json, " + job + "/c.json; each kept"),
              std::string::npos) << mode << ": " << m;
    EXPECT_NE(m.find("rank 0 is also claimed by " + job + "/a.json, " + job + "/b.json; each kept"),
              std::string::npos) << mode;
  }
}

// Paddle profiles are planned by their file name's rank, so shards split
// them like Kineto files: the union equals a single run (shard 0 used to
// read them all and fail on the odd GPUs).
TEST(OverlapReview, PaddleProfilesShardLikeKinetoFiles) {
  const std::string job = std::string(TEST_SOURCE_DIR) + "/../data/paddle-csp/small/data/profile";
  std::string single = Fresh("pp-single");
  ASSERT_EQ(Tracemill({"convert", job, "-o", single, "-q"}).code, 0);
  std::string out = Fresh("pp-shards");
  for (int i = 0; i < 2; ++i) {
    Result r = Tracemill({"convert", job, "-o", out, "--shard", std::to_string(i) + "/2", "-q"});
    EXPECT_EQ(r.code, 0) << r.err;
  }
  Result m = Tracemill({"manifest", "merge", out});
  EXPECT_EQ(m.code, 0) << m.err;
  auto want = Traces(single);
  EXPECT_EQ(want.size(), 8u);
  EXPECT_EQ(Traces(out), want);
}

// --resume after an input was rejected (too large for --memory-limit then):
// the output completed without it is redone with it, not kept.
TEST(OverlapReview, ResumeRedoesAnOutputThatLacksAPlannedInput) {
  std::string job = Fresh("rs-job");
  WriteFile(job + "/big.json", Kineto(0, 40000, 2));
  WriteFile(job + "/small.json", Kineto(2, 100, 2));
  std::string out = Fresh("rs-out");
  Result first = Tracemill({"convert", job, "-o", out, "--memory-limit", "16M", "-q"});
  ASSERT_EQ(first.code, 3) << first.err;
  Result again = Tracemill({"convert", job, "-o", out, "--resume", "-q"});
  EXPECT_EQ(again.code, 0) << again.err;
  std::string m = ReadFile(out + "/manifest.json");
  EXPECT_NE(m.find("\"balanced\":true"), std::string::npos) << m.substr(0, 800);
  std::string fresh = Fresh("rs-fresh");
  ASSERT_EQ(Tracemill({"convert", job, "-o", fresh, "-q"}).code, 0);
  EXPECT_EQ(Traces(out), Traces(fresh));
}

// Symlink loops end: each directory is walked once.
TEST(OverlapReview, SymlinkLoopsEnd) {
  std::string job = Fresh("loop-job");
  WriteFile(job + "/rank0.json", Kineto(0, 50, 1));
  fs::create_directory_symlink(".", job + "/a");
  fs::create_directory_symlink(".", job + "/b");
  std::string out = Fresh("loop-out");
  Result r = Tracemill({"convert", job, "-o", out, "-q"});
  EXPECT_EQ(r.code, 0) << r.err;
  std::string m = ReadFile(out + "/manifest.json");
  EXPECT_NE(m.find("\"inputs\":1,"), std::string::npos) << m.substr(0, 600);
}

// Removes this process's directories when the tests end.
class CleanUp : public ::testing::Environment {
 public:
  void TearDown() override {
    if (!::testing::UnitTest::GetInstance()->Failed())
      fs::remove_all(std::string(TEST_TMP_ROOT) + "/p" + std::to_string(getpid()));
  }
};
const auto* const kCleanUp = ::testing::AddGlobalTestEnvironment(new CleanUp);

}  // namespace
