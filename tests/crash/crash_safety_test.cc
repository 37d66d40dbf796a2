// Crash safety: `tracemill convert` killed with SIGKILL at random moments
// never leaves a partial output. Outputs are written to `.<name>.tmp.<pid>`
// and renamed when complete (formats/chrome/output_file.h), so after any kill
// the output directory holds only complete files (byte-identical to an
// uninterrupted run: the outputs are deterministic) and temporaries, and the
// next run removes the temporaries.
//
// The input is generated here: 4 Kineto-like ranks, unsorted, ~15 MB of JSON,
// so a run takes long enough for kills to land while outputs are written.
// Half the kills come at a uniformly random moment of a run, half right after
// the first temporary appears (plus a random delay), i.e. while writing.
#include <gtest/gtest.h>
#include <signal.h>
#include <simdjson.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kKills = 6;
const fs::path kWork = fs::path(TRACEMILL_TEST_TMP) / "crash_safety";

// Writes rank files of `events` events each (fixed seed: same bytes every run).
void GenerateInput(const fs::path& dir, int ranks, int events) {
  fs::create_directories(dir);
  std::mt19937_64 rng(42);
  for (int r = 0; r < ranks; ++r) {
    std::ofstream out(dir / ("rank" + std::to_string(r) + ".json"));
    out << "{\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":" << r
        << ",\"world_size\":" << ranks << "},\"traceEvents\":[\n";
    out << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"args\":{\"name\":\"GPU 0\"}}";
    for (int i = 0; i < events; ++i) {
      uint64_t ts = 1682725897000000 + rng() % 10000000;
      out << ",\n{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"kernel_" << rng() % 500
          << "\",\"pid\":" << (i % 3 ? 0 : 4037) << ",\"tid\":" << rng() % 8 << ",\"ts\":" << ts
          << "." << rng() % 1000 << ",\"dur\":" << rng() % 5000
          << ",\"args\":{\"correlation\":" << i << ",\"stream\":7,\"grid\":[128,1,1]}}";
    }
    out << "\n]}\n";
  }
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool IsTemporary(const std::string& name) {
  return name.size() > 1 && name[0] == '.' && name.find(".tmp.") != std::string::npos;
}

pid_t Start(const fs::path& input, const fs::path& out, bool compress) {
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<std::string> args = {TRACEMILL_BIN, "convert", input.string(), "-o", out.string(),
                                     "--quiet", "--group-by", "rank", "--threads", "2"};
    if (compress) args.push_back("--compress");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(TRACEMILL_BIN, argv.data());
    _exit(127);
  }
  return pid;
}

int Wait(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool AnyTemporary(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (IsTemporary(e.path().filename().string())) return true;
  return false;
}

// True for the files that differ between runs (wall time, paths): the
// manifest, the run report and the resume journal.
bool IsRunSpecific(const std::string& name) {
  return name == "manifest.json" || name == "report.html" || name == "journal.jsonl";
}

// Every file in `dir` is a temporary or identical to the reference run's;
// the run-specific ones must be whole: the manifest parses, the report ends
// with `</html>`, every line of the journal (appended one line per write)
// parses.
void ExpectNoPartialOutput(const fs::path& dir, const std::map<std::string, std::string>& reference,
                           const std::string& when) {
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (IsTemporary(name)) continue;
    if (name == "manifest.json") {
      simdjson::dom::parser parser;
      simdjson::dom::element doc;
      EXPECT_EQ(parser.load(e.path().string()).get(doc), simdjson::SUCCESS) << when << ": " << name;
      continue;
    }
    if (name == "report.html") {
      std::string html = Slurp(e.path());
      EXPECT_NE(html.rfind("</html>"), std::string::npos) << when << ": report.html is partial";
      continue;
    }
    if (name == "journal.jsonl") {
      // A SIGKILL may cut the line being appended (a long write to a file
      // is killable): the last line then has no newline, and LoadJournal
      // skips it (its output is redone). Every complete line parses.
      const std::string text = Slurp(e.path());
      std::istringstream lines(text);
      simdjson::dom::parser parser;
      size_t at = 0;
      for (std::string line; std::getline(lines, line);) {
        at += line.size() + 1;
        const bool complete = at <= text.size();  // a newline ended it
        simdjson::dom::element doc;
        if (complete) {
          EXPECT_EQ(parser.parse(line).get(doc), simdjson::SUCCESS) << when << ": journal line " << line;
        }
      }
      continue;
    }
    auto it = reference.find(name);
    ASSERT_NE(it, reference.end()) << when << ": unexpected file " << name;
    EXPECT_TRUE(Slurp(e.path()) == it->second) << when << ": " << name << " is partial or differs";
  }
}

void KillRepeatedly(bool compress) {
  const std::string tag = compress ? "gz" : "plain";
  const fs::path input = kWork / ("input_" + tag);  // one per test: they may run in parallel
  if (!fs::exists(input / "rank3.json")) GenerateInput(input, 4, 30000);
  const fs::path ref_dir = kWork / ("reference_" + tag);
  const fs::path out = kWork / ("killed_" + tag);
  fs::remove_all(ref_dir);
  fs::remove_all(out);

  // An uninterrupted run: its outputs are the reference, its time the scale.
  auto t0 = Clock::now();
  ASSERT_EQ(Wait(Start(input, ref_dir, compress)), 0);
  const double run_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  std::map<std::string, std::string> reference;
  for (const auto& e : fs::directory_iterator(ref_dir))
    if (!IsRunSpecific(e.path().filename().string()))
      reference[e.path().filename().string()] = Slurp(e.path());
  ASSERT_EQ(reference.size(), 5u);  // rank0..3.trace.json and overview.trace.json
  ASSERT_EQ(std::system((std::string("'") + TRACEMILL_PYTHON3 + "' '" + TRACEMILL_CHECK_OUTPUTS +
                         "' '" + ref_dir.string() + "'").c_str()),
            0);

  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<double> anytime(0, run_seconds), soon(0, run_seconds / 10);
  int killed = 0, killed_while_writing = 0, temporaries_seen = 0;
  // At least kKills runs, and on until two kills landed while an output was
  // being written (timing varies with the machine's load), at most 3 x kKills.
  int k = 0;
  for (; k < 3 * kKills && (k < kKills || killed_while_writing < 2); ++k) {
    pid_t pid = Start(input, out, compress);
    if (k % 2 == 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(anytime(rng)));
    } else {
      // Wait for the first temporary (an output being written), then a bit.
      auto deadline = Clock::now() + std::chrono::duration<double>(run_seconds * 3 + 5);
      while (!AnyTemporary(out) && Clock::now() < deadline) usleep(200);
      std::this_thread::sleep_for(std::chrono::duration<double>(soon(rng)));
    }
    bool writing = fs::exists(out) && AnyTemporary(out);
    ::kill(pid, SIGKILL);
    int status = Wait(pid);
    if (status == 128 + SIGKILL) {
      ++killed;
      killed_while_writing += writing;
    }
    temporaries_seen += AnyTemporary(out);
    if (fs::exists(out)) ExpectNoPartialOutput(out, reference, "after kill " + std::to_string(k));
  }
  std::printf("crash safety (%s): run %.2f s; %d of %d runs killed, %d while an output was being "
              "written; %d kills left temporaries\n",
              tag.c_str(), run_seconds, killed, k, killed_while_writing, temporaries_seen);
  EXPECT_GE(killed_while_writing, 2) << "kills did not land while writing: the input is too small";

  // The next run removes the temporaries and completes every output.
  ASSERT_EQ(Wait(Start(input, out, compress)), 0);
  for (const auto& e : fs::directory_iterator(out))
    EXPECT_FALSE(IsTemporary(e.path().filename().string())) << e.path() << " left behind";
  ExpectNoPartialOutput(out, reference, "after the final run");
  EXPECT_EQ(std::system((std::string("'") + TRACEMILL_PYTHON3 + "' '" + TRACEMILL_CHECK_OUTPUTS +
                         "' '" + out.string() + "'").c_str()),
            0);
}

TEST(CrashSafety, SigkillWhileWritingPlain) { KillRepeatedly(/*compress=*/false); }
TEST(CrashSafety, SigkillWhileWritingCompressed) { KillRepeatedly(/*compress=*/true); }

}  // namespace
