// `tracemill convert --follow` end to end (issue 26): the real binary
// follows folders that a writer in the test fills at accelerated time, as
// SageMaker Debugger (rotated framework files renamed from *.tmp, system
// metrics appended per period, the end markers) and PyTorch's profiler
// (one Kineto file per rank and cycle, written in pieces) do. One trace
// second passes in ~120 ms; windows are 1 s of trace time.
//
// What is checked is counted from the outputs: every window's manifest
// (`follow.events`), every trace's events (each writer event in exactly
// one window), the window folders' exact names, and with --tables the rows
// of OUTDIR/tables.sqlite against the windows' own tables.sqlite.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/tables/tables_test_util.h"
#include "tests/testing/convert_harness.h"
#include "tests/testing/output_trace.h"

extern char** environ;

namespace tracemill::testing {
namespace {

constexpr int64_t kT0s = 1'700'000'000;  // 2023-11-14T22:13:20Z, a whole minute
constexpr char kHourFolder[] = "2023111422";

void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

void MakeDirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i)
    if (i == path.size() || path[i] == '/') ::mkdir(path.substr(0, i).c_str(), 0755);
}

// WriteInPieces writes `text` to `path` in two writes with a pause between
// (a reader may see the first half), as a profiler writing a large file.
void WriteInPieces(const std::string& path, const std::string& text, int pause_ms) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0) << path;
  const size_t half = text.size() / 2;
  ASSERT_EQ(::write(fd, text.data(), half), static_cast<ssize_t>(half));
  SleepMs(pause_ms);
  ASSERT_EQ(::write(fd, text.data() + half, text.size() - half), static_cast<ssize_t>(text.size() - half));
  ::close(fd);
}

void AppendTo(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fd);
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* de = ::readdir(d)) {
      const std::string n = de->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Window folders written so far (whole ones: not the temporaries).
std::vector<std::string> WindowFolders(const std::string& out_dir) {
  std::vector<std::string> names;
  for (const std::string& n : Entries(out_dir + "/windows"))
    if (n[0] != '.') names.push_back(n);
  return names;
}

// WaitFor polls `ready` every 20 ms for up to `ms`; false on timeout.
bool WaitFor(const std::function<bool()>& ready, int ms) {
  for (int waited = 0; waited < ms; waited += 20) {
    if (ready()) return true;
    SleepMs(20);
  }
  return ready();
}

// The name of trace-time window [T0 + a, T0 + b) seconds.
std::string SecondsWindow(int a, int b) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "20231114T2213%02dZ-20231114T2213%02dZ", 20 + a, 20 + b);
  return buf;
}

// Child: the tracemill binary running beside the writer.
class Child {
 public:
  Child(const std::vector<std::string>& args, const std::string& err_path) : err_path_(err_path) {
    std::vector<std::string> argv = {TracemillBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> cargs;
    for (auto& a : argv) cargs.push_back(a.data());
    cargs.push_back(nullptr);
    const int rc = posix_spawn(&pid_, cargs[0], &fa, nullptr, cargs.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
      ADD_FAILURE() << "cannot run " << argv[0];
      pid_ = -1;
    }
  }
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  void Signal(int sig) {
    if (pid_ > 0) ::kill(pid_, sig);
  }
  // Wait: the exit status (128 + signal), or -1 after `ms` (then killed).
  int Wait(int ms) {
    if (pid_ <= 0) return -1;
    int status = 0;
    for (int waited = 0; waited <= ms; waited += 10) {
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      SleepMs(10);
    }
    ADD_FAILURE() << "tracemill did not stop within " << ms << " ms:\n" << err();
    return -1;
  }
  std::string err() const { return ReadFileBytes(err_path_); }

 private:
  pid_t pid_ = -1;
  std::string err_path_;
};

// ---------------- the writers ----------------

// An smdebug job: `nodes` nodes (rank n, node id 100n_000n), for each trace
// second k a framework file [k, k+1) written as *.tmp in pieces and renamed
// (4 events: the step and three ops), and system metrics files of two
// seconds each, appended per second (4 samples per node and second).
struct SmdebugJob {
  std::string root;
  int nodes = 2;
  int seconds = 8;
  int ms_per_second = 120;
  int system_file_seconds = 2;  // trace seconds per system-metrics file
  // > 0: each step lasts 1 s + this (crossing into the next second's window)
  // and its file holds one more op, starting 1 s + this / 2 after it, so
  // that the next window reads the file too.
  int64_t step_spill_us = 0;
  // GPUUtilization in trace second k (default 95: never low).
  std::function<double(int k)> gpu_value;
  // Called before trace second k is written (the tests' synchronization).
  std::function<void(int k)> before_second;
  // Filled by Write: timed events written, and each framework event as
  // "name|ts_ns|rank n".
  int64_t events = 0;
  std::vector<std::string> framework_keys;

  static std::string Node(int n) { return std::to_string(1000 + n) + "_000" + std::to_string(n); }

  void Write() {
    const std::string fw = root + "/framework/pevents/" + kHourFolder;
    const std::string sys = root + "/system/incremental/" + kHourFolder;
    MakeDirs(fw);
    MakeDirs(sys);
    for (int k = 0; k < seconds; ++k) {
      if (before_second) before_second(k);
      const int64_t base_us = (kT0s + k) * 1'000'000;
      for (int n = 0; n < nodes; ++n) {
        std::string t = "[\n{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"args\": "
                         "{\"start_time_since_epoch_in_micros\": " + std::to_string(base_us) + "}},\n"
                         "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"args\": {\"name\": \"Step:ModeKeys.TRAIN\"}},\n"
                         "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 2, \"args\": {\"name\": \"Forward\"}},\n";
        t += "{\"name\": \"Step:ModeKeys.TRAIN\", \"pid\": 1, \"ph\": \"X\", \"ts\": 0, \"dur\": " +
             std::to_string(step_spill_us ? 1'000'000 + step_spill_us : 900000) +
             ", \"args\": {\"step_num\": \"" + std::to_string(k) + "\"}}";
        if (step_spill_us) {
          t += ",\n{\"name\": \"late_op\", \"pid\": 2, \"ph\": \"X\", \"ts\": " +
               std::to_string(1'000'000 + step_spill_us / 2) + ", \"dur\": 1000}";
          ++events;
        }
        const std::string rank = "rank " + std::to_string(n);
        framework_keys.push_back("Step:ModeKeys.TRAIN|" + std::to_string(base_us * 1000) + "|" + rank);
        for (int i = 0; i < 3; ++i) {
          const int64_t rel = 100000 + 250000 * i;
          const std::string name = "fwd_n" + std::to_string(n) + "_s" + std::to_string(k) + "_" + std::to_string(i);
          t += ",\n{\"name\": \"" + name + "\", \"pid\": 2, \"ph\": \"X\", \"ts\": " + std::to_string(rel) +
               ", \"dur\": 50000}";
          framework_keys.push_back(name + "|" + std::to_string((base_us + rel) * 1000) + "|" + rank);
        }
        t += "\n]\n";
        events += 4;
        const std::string name = std::to_string(base_us + 1'000'000) + "_" + Node(n) + "_pythontimeline.json";
        WriteInPieces(fw + "/" + name + ".tmp", t, 5);
        ASSERT_EQ(::rename((fw + "/" + name + ".tmp").c_str(), (fw + "/" + name).c_str()), 0);
        // System metrics: a file per two seconds, appended each second.
        std::string lines;
        for (int half = 0; half < 2; ++half) {
          const std::string ts = std::to_string(kT0s + k) + (half ? ".5" : ".0");
          lines += "{\"Type\":\"gpu\",\"Name\":\"gpu0\",\"Dimension\":\"GPUUtilization\",\"Value\":" +
                   std::to_string(gpu_value ? gpu_value(k) : 95.0) + ",\"NodeId\":\"algo-" + std::to_string(n + 1) +
                   "\",\"Timestamp\":" + ts + "}\n";
          lines += "{\"Type\":\"cpu\",\"Name\":\"cpu0\",\"Dimension\":\"CPUUtilization\",\"Value\":40.0,\"NodeId\":\"algo-" +
                   std::to_string(n + 1) + "\",\"Timestamp\":" + ts + "}\n";
        }
        AppendTo(sys + "/" + std::to_string(kT0s + k - k % system_file_seconds) + ".algo-" + std::to_string(n + 1) +
                     ".json",
                 lines);
        events += 4;
      }
      SleepMs(ms_per_second);
    }
    AppendTo(root + "/framework/training_job_end.ts", "");
    AppendTo(root + "/system/training_job_end.ts", "");
  }
};

// A PyTorch profiler job with a repeating schedule: for each cycle, one
// Kineto file per rank (`worker<r>.<cycle>.pt.trace.json`, written in
// pieces), covering trace time [2c, 2c + 0.5) s: ProfilerStep#c and five ops.
std::string KinetoCycle(int rank, int world, int cycle, const std::string& tag) {
  std::string t = "{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " +
                  std::to_string(rank) + ", \"world_size\": " + std::to_string(world) +
                  "}, \"deviceProperties\": [{\"id\": 0}], \"baseTimeNanoseconds\": " +
                  std::to_string(kT0s * 1'000'000'000) + ", \"traceEvents\": [\n";
  const int64_t start_us = cycle * 2'000'000;
  t += "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#" + std::to_string(cycle) +
       "\", \"pid\": 10, \"tid\": 10, \"ts\": \"" + std::to_string(start_us) + ".000\", \"dur\": 450000}";
  for (int i = 0; i < 5; ++i)
    t += ",\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" + tag + "_r" + std::to_string(rank) + "_c" +
         std::to_string(cycle) + "_" + std::to_string(i) + "\", \"pid\": 10, \"tid\": 10, \"ts\": \"" +
         std::to_string(start_us + 10'000 + 90'000 * i) + ".000\", \"dur\": 5000}";
  t += ",\n{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 10, \"args\": {\"name\": \"python\"}}\n";
  t += "], \"traceName\": \"worker" + std::to_string(rank) + "\"}\n";
  return t;
}
constexpr int kKinetoEventsPerFile = 6;

std::string KinetoPath(const std::string& dir, int rank, int cycle) {
  return dir + "/worker" + std::to_string(rank) + "." + std::to_string(1700000000000 + cycle) + ".pt.trace.json";
}

// ---------------- reading the outputs ----------------

// WindowFacts: what one window folder holds.
struct WindowFacts {
  std::string name;
  int64_t events = -1;  // manifest follow.events
  bool late = false;
  std::string follow_window;
};

class FollowTest : public ::testing::Test {
 protected:
  std::string Job() const { return tmp_.Join("job"); }
  std::string Out(const std::string& name = "out") const { return tmp_.Join(name); }

  WindowFacts Facts(const std::string& out_dir, const std::string& name) {
    WindowFacts f;
    f.name = name;
    auto m = Manifest::Load(out_dir + "/windows/" + name + "/manifest.json");
    if (!m) {
      ADD_FAILURE() << "no manifest in window " << name;
      return f;
    }
    f.events = m->Int("/follow/events");
    f.late = m->Bool("/follow/late");
    f.follow_window = m->Str("/follow/window");
    EXPECT_TRUE(ManifestBalances(*m)) << name;
    return f;
  }

  // Events of every trace of every window, as "name|ts_ns|<process name>"
  // -> how many times written (metadata left out).
  std::map<std::string, int> EventsInWindows(const std::string& out_dir) {
    std::map<std::string, int> seen;
    for (const std::string& w : WindowFolders(out_dir)) {
      const std::string dir = out_dir + "/windows/" + w;
      for (const std::string& file : ListDir(dir)) {
        if (file.find(".trace.json") == std::string::npos) continue;
        std::string error;
        auto t = OutputTrace::Load(dir + "/" + file, &error);
        if (!t) {
          ADD_FAILURE() << dir << "/" << file << ": " << error;
          continue;
        }
        const auto procs = t->ProcessNames();
        for (const OutEvent& e : t->events) {
          if (e.ph == "M") continue;
          const auto ns = MicrosToNanos(e.ts);
          std::string proc = e.pid && procs.count(*e.pid) ? procs.at(*e.pid) : "";
          ++seen[e.name + "|" + (ns ? std::to_string(*ns) : e.ts) + "|" + proc];
        }
      }
    }
    return seen;
  }

  // Every window's manifest: their follow.events add up to `events`, each
  // names its folder, no temporary is left.
  int64_t SumOfWindows(const std::string& out_dir, int* late_windows = nullptr) {
    int64_t sum = 0;
    int late = 0;
    for (const std::string& n : Entries(out_dir + "/windows")) {
      EXPECT_NE(n[0], '.') << "a temporary left in windows/: " << n;
      if (n[0] == '.') continue;
      const WindowFacts f = Facts(out_dir, n);
      EXPECT_EQ(f.follow_window, n);
      EXPECT_EQ(f.late, n.rfind("late-", 0) == 0) << n;
      late += f.late;
      sum += f.events;
    }
    if (late_windows) *late_windows = late;
    return sum;
  }

  std::string LatestLink(const std::string& out_dir) {
    char buf[512];
    const ssize_t n = ::readlink((out_dir + "/latest").c_str(), buf, sizeof(buf));
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  }

  TempDir tmp_;
};

// ---------------- tests ----------------

// The acceptance test for smdebug: every event in exactly one window,
// windows out while the job writes, a stop at the end markers.
TEST_F(FollowTest, SmdebugJobEveryEventOnceWindowsWhileWritingStopsAtEndMarkers) {
  SmdebugJob job;
  job.root = Job();
  MakeDirs(job.root);
  std::atomic<bool> window_while_writing{false};
  job.before_second = [&](int k) {
    // Before the last two seconds: a window must be out by now.
    if (k == job.seconds - 2) window_while_writing = WaitFor([&] { return !WindowFolders(Out()).empty(); }, 10000);
  };
  Child follower({"convert", "--follow", Job(), "-o", Out(), "--window", "1s", "--grace", "30s", "--idle-timeout",
                  "20s", "--group-by", "node"},
                 tmp_.Join("follow.err"));
  std::thread writer([&] { job.Write(); });
  writer.join();
  const int exit_code = follower.Wait(30000);
  const std::string err = follower.err();
  ASSERT_EQ(exit_code, 0) << err;
  EXPECT_TRUE(window_while_writing) << "no window was written while the job was still writing";
  EXPECT_NE(err.find("stopped (the job's end markers)"), std::string::npos) << err;

  // The windows: one per trace second, exactly these names.
  std::vector<std::string> want;
  for (int k = 0; k < job.seconds; ++k) want.push_back(SecondsWindow(k, k + 1));
  EXPECT_EQ(WindowFolders(Out()), want) << err;
  EXPECT_EQ(LatestLink(Out()), "windows/" + want.back());

  // Conservation: the windows' own events add up to what was written.
  int late = -1;
  EXPECT_EQ(SumOfWindows(Out(), &late), job.events);
  EXPECT_EQ(late, 0);
  EXPECT_EQ(job.events, 2 * 8 * 8);
  // ... each framework event in exactly one window's trace.
  const std::map<std::string, int> seen = EventsInWindows(Out());
  int64_t total = 0;
  for (const auto& [key, n] : seen) total += n;
  EXPECT_EQ(total, job.events);
  for (const std::string& key : job.framework_keys) {
    const std::string name_ts = key.substr(0, key.rfind('|'));
    const std::string label = key.substr(key.rfind('|') + 1) + " (";  // its process: "rank n (<node>) · ..."
    int found = 0;
    for (const auto& [k, n] : seen)
      if (k.rfind(name_ts + "|" + label, 0) == 0) found += n;
    EXPECT_EQ(found, 1) << key;
  }
  // The job so far, in OUTDIR: manifest.json and report.html.
  auto m = Manifest::Load(Out() + "/manifest.json");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->Int("/follow/events"), job.events);
  EXPECT_EQ(m->Int("/follow/windows"), job.seconds);
  EXPECT_EQ(m->Int("/follow/late_windows"), 0);
  EXPECT_EQ(m->Str("/follow/state"), "stopped: the job's end markers");
  EXPECT_EQ(m->Str("/follow/latest"), "windows/" + want.back());
  struct stat st;
  EXPECT_EQ(::stat((Out() + "/report.html").c_str(), &st), 0);
}

// LowGpuSlices: the `low GPU utilization` slices of the traces in `dir`
// (the windows' folders under it, or its own), as (start, end) in ms after
// T0, sorted.
std::vector<std::pair<int64_t, int64_t>> LowGpuSlices(const std::vector<std::string>& dirs) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const std::string& dir : dirs)
    for (const std::string& file : ListDir(dir)) {
      if (file.find(".trace.json") == std::string::npos || file == "overview.trace.json") continue;
      std::string error;
      auto t = OutputTrace::Load(dir + "/" + file, &error);
      if (!t) {
        ADD_FAILURE() << dir << "/" << file << ": " << error;
        continue;
      }
      for (const OutEvent& e : t->events)
        if (e.name == "low GPU utilization") {
          const int64_t ts = MicrosToNanos(e.ts).value_or(0), dur = MicrosToNanos(e.dur).value_or(-1);
          out.push_back({(ts - kT0s * 1'000'000'000) / 1'000'000, (ts + dur - kT0s * 1'000'000'000) / 1'000'000});
        }
    }
  std::sort(out.begin(), out.end());
  return out;
}

// Issue 37, point 9: a low-GPU run crossing a window's edge ended early in
// follow mode (at the last low sample of the window's files), and the next
// window's part began at its first low sample, unlike a one-shot convert's
// slice. One-second system files and windows, low in seconds 2-4: the
// windows' parts are the one-shot slice [2 s, 5 s) cut at the edges.
TEST_F(FollowTest, LowGpuRunsAcrossWindowEdgesAreTheOneShotSliceCut) {
  SmdebugJob job;
  job.root = Job();
  job.nodes = 1;
  job.seconds = 7;
  job.ms_per_second = 60;
  job.system_file_seconds = 1;
  job.gpu_value = [](int k) { return k >= 2 && k <= 4 ? 10.0 : 95.0; };
  MakeDirs(job.root);
  Child follower({"convert", "--follow", Job(), "-o", Out(), "--window", "1s", "--grace", "30s", "--idle-timeout",
                  "20s"},
                 tmp_.Join("follow.err"));
  std::thread writer([&] { job.Write(); });
  writer.join();
  ASSERT_EQ(follower.Wait(30000), 0) << follower.err();
  const CommandResult one = RunCommand({TracemillBinary(), "convert", Job(), "-o", Out("one"), "-q"}, tmp_.path());
  ASSERT_EQ(one.exit_code, 0) << one.err;
  using Spans = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(LowGpuSlices({Out("one")}), (Spans{{2000, 5000}}));
  std::vector<std::string> windows;
  for (const std::string& w : WindowFolders(Out())) windows.push_back(Out() + "/windows/" + w);
  EXPECT_EQ(LowGpuSlices(windows), (Spans{{2000, 3000}, {3000, 4000}, {4000, 5000}})) << follower.err();
}

// Issue 40, point 4: a step crossing a window's edge was in the job's
// tables.sqlite `steps` twice (each window kept the steps overlapping it).
// A follow window keeps the steps that start in it, as its events.
TEST_F(FollowTest, StepsCrossingWindowEdgesAreInTheJobTablesOnce) {
  SmdebugJob job;
  job.root = Job();
  job.nodes = 1;
  job.seconds = 5;
  job.ms_per_second = 60;
  job.step_spill_us = 300'000;  // step k: [k, k + 1.3 s); an op at k + 1.15 s
  MakeDirs(job.root);
  Child follower({"convert", "--follow", Job(), "-o", Out(), "--window", "1s", "--grace", "30s", "--idle-timeout",
                  "20s", "--tables"},
                 tmp_.Join("follow.err"));
  std::thread writer([&] { job.Write(); });
  writer.join();
  ASSERT_EQ(follower.Wait(30000), 0) << follower.err();
  const std::string db = Out() + "/tables.sqlite";
  EXPECT_EQ(Query(db, "SELECT count(*), count(DISTINCT step) FROM steps"), (Rows{{"count(*)", "count(DISTINCT step)"},
                                                                                 {"5", "5"}}));
  // Each in the window its start is in.
  const Rows rows = Query(db, "SELECT step, \"window\" FROM steps ORDER BY step");
  ASSERT_EQ(rows.size(), 6u);
  for (int k = 0; k < 5; ++k) EXPECT_EQ(rows[static_cast<size_t>(k) + 1][1], SecondsWindow(k, k + 1)) << k;
}

// The acceptance test for PyTorch's per-cycle files: one window per cycle,
// every event once, windows while writing; Kineto leaves no end marker, so
// --idle-timeout stops it.
TEST_F(FollowTest, KinetoPerCycleFilesOneWindowPerCycleEveryEventOnce) {
  MakeDirs(Job());
  constexpr int kCycles = 4;
  // --idle-timeout well above the writer's pauses, a loaded machine's included.
  Child follower({"convert", "--follow", Job(), "-o", Out(), "--window", "cycle", "--grace", "30s",
                  "--idle-timeout", "3s", "--group-by", "rank"},
                 tmp_.Join("follow.err"));
  bool window_while_writing = false;
  for (int c = 0; c < kCycles; ++c) {
    if (c == kCycles - 1) window_while_writing = WaitFor([&] { return !WindowFolders(Out()).empty(); }, 10000);
    for (int r = 0; r < 2; ++r) WriteInPieces(KinetoPath(Job(), r, c), KinetoCycle(r, 2, c, "op"), 30);
    SleepMs(150);
  }
  const int exit_code = follower.Wait(30000);
  const std::string err = follower.err();
  ASSERT_EQ(exit_code, 0) << err;
  EXPECT_TRUE(window_while_writing);
  EXPECT_NE(err.find("stopped (no new data for --idle-timeout 3s)"), std::string::npos) << err;
  // Cycle c: from its first start (ProfilerStep#c at 2c s) to its last
  // start (the fifth op, 2c s + 370 ms) plus 1 ns, rounded up to the µs.
  std::vector<std::string> want;
  for (int c = 0; c < kCycles; ++c) {
    char buf[96];
    std::snprintf(buf, sizeof(buf), "20231114T2213%02d.000000Z-20231114T2213%02d.370001Z", 20 + 2 * c, 20 + 2 * c);
    want.push_back(buf);
  }
  EXPECT_EQ(WindowFolders(Out()), want) << err;
  EXPECT_EQ(SumOfWindows(Out()), 2 * kCycles * kKinetoEventsPerFile);
  const std::map<std::string, int> seen = EventsInWindows(Out());
  EXPECT_EQ(seen.size(), 2u * kCycles * kKinetoEventsPerFile);
  for (const auto& [key, n] : seen) EXPECT_EQ(n, 1) << key;
  for (int c = 0; c < kCycles; ++c) {
    auto m = Manifest::Load(Out() + "/windows/" + want[c] + "/manifest.json");
    ASSERT_TRUE(m);
    EXPECT_EQ(m->ArraySize("/inputs"), 2u) << "a cycle's window reads that cycle's two files only";
  }
}

// A counter at ts 0 beside events of 2023: the files' spans cross 53 years
// of nothing, and the windows are the two minutes with events, not one per
// minute since 1970 (which filled the disk and never ended).
TEST_F(FollowTest, WindowsSkipTheEmptyYearsOfAFileSpan) {
  MakeDirs(Job());
  for (int r = 0; r < 2; ++r) {
    std::string t = "{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " +
                    std::to_string(r) + ", \"world_size\": 2}, \"traceEvents\": [\n";
    t += "{\"ph\": \"C\", \"name\": \"memory\", \"pid\": 10, \"ts\": 0, \"args\": {\"bytes\": 1}},\n";
    for (int i = 0; i < 3; ++i)
      t += "{\"ph\": \"X\", \"name\": \"op" + std::to_string(i) + "\", \"pid\": 10, \"tid\": 10, \"ts\": " +
           std::to_string(kT0s * 1'000'000 + 1000 * i) + ", \"dur\": 10}" + (i < 2 ? ",\n" : "\n");
    t += "]}\n";
    WriteFileBytes(Job() + "/worker" + std::to_string(r) + ".pt.trace.json", t);
  }
  Child follower({"convert", "--follow", Job(), "-o", Out(), "--grace", "1s", "--idle-timeout", "2s"},
                 tmp_.Join("follow.err"));
  const int exit_code = follower.Wait(30000);
  ASSERT_EQ(exit_code, 0) << follower.err();
  EXPECT_EQ(WindowFolders(Out()),
            (std::vector<std::string>{"19700101T000000Z-19700101T000100Z", "20231114T221300Z-20231114T221400Z"}))
      << follower.err();
  EXPECT_EQ(SumOfWindows(Out()), 2 * 4);
}

// A file rewritten after its first window with events in the stretch the
// windows had skipped (nothing of it was there): they are written, in a
// regular window, not lost; the window read again is a late one, and no
// window without events of its own is written.
TEST_F(FollowTest, EventsRewrittenIntoASkippedStretchAreWritten) {
  MakeDirs(Job());
  constexpr int64_t kYearUs = int64_t{365} * 86400 * 1'000'000;
  auto file = [&](bool gap) {
    std::string t = "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}, \"traceEvents\": [\n"
                    "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"args\": {\"name\": \"p\"}}";
    for (const auto& [name, at] : std::vector<std::pair<std::string, int64_t>>{{"a", 0}, {"gap", kYearUs}, {"b", 2 * kYearUs}}) {
      if (name == "gap" && !gap) continue;
      for (int i = 0; i < 5; ++i)
        t += ",\n{\"ph\": \"X\", \"name\": \"" + name + "\", \"pid\": 1, \"tid\": 1, \"ts\": " +
             std::to_string(kT0s * 1'000'000 + at + i) + ", \"dur\": 1}";
    }
    WriteFileBytes(Job() + "/.rank0.tmp", t + "\n]}\n");
    ASSERT_EQ(::rename((Job() + "/.rank0.tmp").c_str(), (Job() + "/rank0.json").c_str()), 0);
  };
  file(false);
  Child follower({"convert", "--follow", Job(), "-o", Out(), "--grace", "1s", "--idle-timeout", "3s"},
                 tmp_.Join("follow.err"));
  ASSERT_TRUE(WaitFor([&] { return !WindowFolders(Out()).empty(); }, 10000));
  file(true);
  const int exit_code = follower.Wait(30000);
  ASSERT_EQ(exit_code, 0) << follower.err();
  EXPECT_EQ(WindowFolders(Out()),
            (std::vector<std::string>{"20231114T221300Z-20231114T221400Z", "20241113T221300Z-20241113T221400Z",
                                      "20251113T221300Z-20251113T221400Z", "late-0001"}))
      << follower.err();
  std::map<std::string, int> names;
  for (const auto& [key, n] : EventsInWindows(Out())) names[key.substr(0, key.find('|'))] += n;
  EXPECT_EQ(names, (std::map<std::string, int>{{"a", 10}, {"b", 5}, {"gap", 5}}));
}

// A Kineto file seen half-written, then truncated and written again (and a
// complete one rewritten before its window): only the final content is
// converted, once. Polled (--poll), as on a network file system.
TEST_F(FollowTest, FileTruncatedAndRewrittenWhileFollowed) {
  MakeDirs(Job());
  Child follower({"convert", "--follow", Job(), "-o", Out(), "--window", "cycle", "--grace", "30s",
                  "--idle-timeout", "2s", "--group-by", "rank", "--poll", "--poll-interval", "100ms"},
                 tmp_.Join("follow.err"));
  // Cycle 0, rank 0: half of a first content, long enough to be probed.
  const std::string first = KinetoCycle(0, 2, 0, "old");
  const std::string path0 = KinetoPath(Job(), 0, 0);
  WriteFileBytes(path0, first.substr(0, first.size() / 2));
  SleepMs(600);
  WriteFileBytes(path0, "");  // truncated
  SleepMs(400);
  WriteInPieces(path0, KinetoCycle(0, 2, 0, "new"), 30);
  WriteFileBytes(KinetoPath(Job(), 1, 0), KinetoCycle(1, 2, 0, "new"));
  // Cycle 1, rank 0: complete, then rewritten while rank 1's file of the
  // cycle is still missing (so its window is not written yet).
  const std::string path1 = KinetoPath(Job(), 0, 1);
  WriteFileBytes(path1, KinetoCycle(0, 2, 1, "old"));
  SleepMs(600);
  WriteInPieces(path1, KinetoCycle(0, 2, 1, "new"), 30);
  WriteFileBytes(KinetoPath(Job(), 1, 1), KinetoCycle(1, 2, 1, "new"));
  const int exit_code = follower.Wait(30000);
  const std::string err = follower.err();
  ASSERT_EQ(exit_code, 0) << err;
  EXPECT_NE(err.find("polling the input folders (--poll)"), std::string::npos) << err;
  EXPECT_EQ(WindowFolders(Out()).size(), 2u) << err;
  EXPECT_EQ(SumOfWindows(Out()), 4 * kKinetoEventsPerFile);
  const std::map<std::string, int> seen = EventsInWindows(Out());
  EXPECT_EQ(seen.size(), 4u * kKinetoEventsPerFile);
  for (const auto& [key, n] : seen) {
    EXPECT_EQ(n, 1) << key;
    EXPECT_EQ(key.find("old_"), std::string::npos) << "the first content was converted: " << key;
  }
  EXPECT_EQ(seen.count("new_r0_c0_4|" + std::to_string(kT0s * 1'000'000'000 + 370'000'000) + "|rank 0" +
                       std::string(kLabelDot) + "python (pid 10)"),
            1u);
}

// A rank that falls behind: after --grace the windows go on without it, and
// the file it writes later (past the grace period) goes to a late window,
// counted, not lost.
TEST_F(FollowTest, LateFilePastGracePeriodGoesToLateWindow) {
  MakeDirs(Job());
  Child follower({"convert", "--follow", Job(), "-o", Out(), "--window", "1s", "--grace", "300ms",
                  "--idle-timeout", "3s", "--group-by", "rank"},
                 tmp_.Join("follow.err"));
  WriteFileBytes(KinetoPath(Job(), 0, 0), KinetoCycle(0, 2, 0, "op"));
  WriteFileBytes(KinetoPath(Job(), 1, 0), KinetoCycle(1, 2, 0, "op"));
  SleepMs(100);
  WriteFileBytes(KinetoPath(Job(), 0, 1), KinetoCycle(0, 2, 1, "op"));
  WriteFileBytes(KinetoPath(Job(), 0, 2), KinetoCycle(0, 2, 2, "op"));
  // Rank 1 is silent: windows [0,1) s and [2,3) s are written without it.
  ASSERT_TRUE(WaitFor(
      [&] {
        const auto w = WindowFolders(Out());
        return std::find(w.begin(), w.end(), SecondsWindow(2, 3)) != w.end();
      },
      10000))
      << follower.err();
  // Then it writes its cycle 1 (events in [2, 2.5) s: windows written) and 2.
  WriteFileBytes(KinetoPath(Job(), 1, 1), KinetoCycle(1, 2, 1, "op"));
  WriteFileBytes(KinetoPath(Job(), 1, 2), KinetoCycle(1, 2, 2, "op"));
  const int exit_code = follower.Wait(30000);
  const std::string err = follower.err();
  ASSERT_EQ(exit_code, 0) << err;
  EXPECT_NE(err.find("rank 1 is behind by --grace 300ms"), std::string::npos) << err;
  EXPECT_EQ(WindowFolders(Out()),
            (std::vector<std::string>{SecondsWindow(0, 1), SecondsWindow(2, 3), SecondsWindow(4, 5), "late-0001"}))
      << err;
  const WindowFacts late = Facts(Out(), "late-0001");
  EXPECT_TRUE(late.late);
  EXPECT_EQ(late.events, kKinetoEventsPerFile);  // rank 1's cycle 1, all of it
  auto lm = Manifest::Load(Out() + "/windows/late-0001/manifest.json");
  ASSERT_TRUE(lm);
  EXPECT_EQ(lm->ArraySize("/inputs"), 1u);
  EXPECT_EQ(lm->Int("/follow/end_ns"), (kT0s + 3) * 1'000'000'000);
  EXPECT_TRUE(lm->IsNull("/follow/start_ns"));
  int late_windows = 0;
  EXPECT_EQ(SumOfWindows(Out(), &late_windows), 6 * kKinetoEventsPerFile);
  EXPECT_EQ(late_windows, 1);
  const std::map<std::string, int> seen = EventsInWindows(Out());
  EXPECT_EQ(seen.size(), 6u * kKinetoEventsPerFile);
  for (const auto& [key, n] : seen) EXPECT_EQ(n, 1) << key;
  auto m = Manifest::Load(Out() + "/manifest.json");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->Int("/follow/late_windows"), 1);
  EXPECT_EQ(m->Int("/follow/late_events"), kKinetoEventsPerFile);
  EXPECT_EQ(m->Int("/follow/events"), 6 * kKinetoEventsPerFile);
  EXPECT_EQ(LatestLink(Out()), "windows/" + SecondsWindow(4, 5));
}

// SIGTERM in the middle, then --resume: the same windows, byte for byte, as
// a run that was never interrupted.
TEST_F(FollowTest, SigtermMidRunThenResumeWritesTheSameWindows) {
  auto args = [&](const std::string& out) {
    return std::vector<std::string>{"convert", "--follow", Job(), "-o", out, "--window", "1s", "--grace", "30s",
                                    "--idle-timeout", "20s"};
  };
  // The uninterrupted run.
  {
    SmdebugJob job;
    job.root = Job();
    Child follower(args(Out("whole")), tmp_.Join("whole.err"));
    job.Write();
    ASSERT_EQ(follower.Wait(30000), 0) << follower.err();
  }
  ASSERT_EQ(std::system(("rm -rf " + Job()).c_str()), 0);
  // The same job again, followed by a run stopped with SIGTERM halfway.
  {
    SmdebugJob job;
    job.root = Job();
    Child follower(args(Out("resumed")), tmp_.Join("first.err"));
    job.before_second = [&](int k) {
      if (k != job.seconds / 2) return;
      ASSERT_TRUE(WaitFor([&] { return !WindowFolders(Out("resumed")).empty(); }, 10000));
      follower.Signal(SIGTERM);
    };
    job.Write();
    EXPECT_EQ(follower.Wait(30000), 143) << follower.err();
    EXPECT_NE(follower.err().find("rerun the same command with --resume"), std::string::npos) << follower.err();
    for (const std::string& n : Entries(Out("resumed") + "/windows")) EXPECT_NE(n[0], '.') << n;
    EXPECT_LT(WindowFolders(Out("resumed")).size(), static_cast<size_t>(job.seconds));
  }
  std::vector<std::string> resume_args = args(Out("resumed"));
  resume_args.push_back("--resume");
  Child resumed(resume_args, tmp_.Join("second.err"));
  ASSERT_EQ(resumed.Wait(30000), 0) << resumed.err();
  EXPECT_NE(resumed.err().find("windows kept from the journal"), std::string::npos) << resumed.err();

  const std::vector<std::string> windows = WindowFolders(Out("whole"));
  ASSERT_EQ(windows.size(), 8u);
  EXPECT_EQ(WindowFolders(Out("resumed")), windows);
  for (const std::string& w : windows) {
    const std::string a = Out("whole") + "/windows/" + w, b = Out("resumed") + "/windows/" + w;
    EXPECT_EQ(ListDir(a), ListDir(b)) << w;
    for (const std::string& f : ListDir(a)) {
      if (f == "manifest.json") continue;  // its command line and wall time differ
      EXPECT_EQ(ReadFileBytes(a + "/" + f), ReadFileBytes(b + "/" + f)) << w << "/" << f;
    }
    EXPECT_EQ(Facts(Out("whole"), w).events, Facts(Out("resumed"), w).events) << w;
  }
  EXPECT_EQ(SumOfWindows(Out("resumed")), 2 * 8 * 8);
}

// --tables: each window's rows are appended to OUTDIR/tables.sqlite as it
// is written, each window once, also across a SIGTERM and a --resume: per
// table, the job's rows of a window are the window's own rows.
TEST_F(FollowTest, TablesEveryWindowsRowsOnceInTheJobFileAcrossSigtermAndResume) {
  std::vector<std::string> args = {"convert", "--follow", Job(), "-o", Out(), "--window", "1s", "--tables"};
  for (const char* a : {"--grace", "30s", "--idle-timeout", "20s"}) args.push_back(a);
  {
    SmdebugJob job;
    job.root = Job();
    Child follower(args, tmp_.Join("first.err"));
    job.before_second = [&](int k) {
      if (k != job.seconds / 2) return;
      ASSERT_TRUE(WaitFor([&] { return !WindowFolders(Out()).empty(); }, 10000));
      follower.Signal(SIGTERM);
    };
    job.Write();
    EXPECT_EQ(follower.Wait(30000), 143) << follower.err();
  }
  const std::string job_file = Out() + "/tables.sqlite";
  const size_t first_run = WindowFolders(Out()).size();
  ASSERT_GT(first_run, 0u);
  EXPECT_EQ(Query(job_file, "SELECT count(*) FROM follow_windows")[1][0], std::to_string(first_run));
  args.push_back("--resume");
  Child resumed(args, tmp_.Join("second.err"));
  ASSERT_EQ(resumed.Wait(30000), 0) << resumed.err();

  const std::vector<std::string> windows = WindowFolders(Out());
  ASSERT_EQ(windows.size(), 8u);
  std::string names;
  for (const std::string& w : windows) names += (names.empty() ? "" : ",") + w;
  const std::string listed = "SELECT group_concat(\"window\") FROM (SELECT \"window\" FROM follow_windows ORDER BY 1)";
  EXPECT_EQ(Query(job_file, listed)[1][0], names);
  const Rows tables = Query(Out() + "/windows/" + windows[0] + "/tables.sqlite",
                            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  ASSERT_GT(tables.size(), 10u);
  int64_t total = 0;
  for (size_t t = 1; t < tables.size(); ++t) {
    const std::string& table = tables[t][0];
    int64_t sum = 0;
    for (const std::string& w : windows) {
      const std::string count = "SELECT count(*) FROM \"" + table + "\"";
      const std::string own = Query(Out() + "/windows/" + w + "/tables.sqlite", count)[1][0];
      EXPECT_EQ(Query(job_file, count + " WHERE \"window\" = '" + w + "'")[1][0], own) << table << " " << w;
      sum += std::stoll(own);
    }
    EXPECT_EQ(Query(job_file, "SELECT count(*) FROM \"" + table + "\" WHERE \"window\" IS NOT NULL")[1][0],
              std::to_string(sum))
        << table;
    total += sum;
  }
  EXPECT_GT(std::stoll(Query(job_file, "SELECT count(*) FROM steps")[1][0]), 0);
  EXPECT_EQ(Query(job_file, "SELECT sum(\"rows\") FROM follow_windows")[1][0], std::to_string(total));
  auto m = Manifest::Load(Out() + "/manifest.json");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->Str("/tables/path"), "tables.sqlite");
  EXPECT_EQ(m->Int("/tables/windows"), 8);
  EXPECT_FALSE(m->Has("/tables/error"));
}

TEST_F(FollowTest, UsageErrors) {
  MakeDirs(Job());
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--window", "1s"}, "--window is an option of --follow"},
      {{"--follow", "--window", "1.5s"}, "--window 1.5s: expected a duration like 30s"},
      {{"--follow", "--window", "0"}, "at least 1ms"},
      {{"--follow", "--idle-timeout", "soon"}, "--idle-timeout soon: expected a duration"},
      {{"--follow", "--start", "1700000000000000"}, "--start/--end does not go with --follow"},
      {{"--follow", "--relative-time"}, "--relative-time does not go with --follow"},
      {{"--follow", "--align-clocks", "on"}, "--align-clocks does not go with --follow"},
      {{"--follow", "--time-ranges", "2"}, "--time-ranges does not go with --follow"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {TracemillBinary(), "convert", Job(), "-o", Out()};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    const CommandResult r = RunCommand(argv, tmp_.path());
    EXPECT_EQ(r.exit_code, 2) << c.says;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace tracemill::testing
