#include "tests/testing/convert_harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

extern char** environ;

namespace tracemill::testing {
namespace {

void RemoveTree(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    if (DIR* d = ::opendir(path.c_str())) {
      while (dirent* de = ::readdir(d)) {
        std::string n = de->d_name;
        if (n != "." && n != "..") RemoveTree(path + "/" + n);
      }
      ::closedir(d);
    }
    ::rmdir(path.c_str());
  } else {
    ::unlink(path.c_str());
  }
}

std::string ReadOrEmpty(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string StdString(std::string_view s) { return std::string(s); }

}  // namespace

std::string TracemillBinary() { return TRACEMILL_BINARY; }

std::string DataPath(std::string_view rel) {
  return StdString(TRACEMILL_TEST_DATA_DIR) + "/" + StdString(rel);
}

TempDir::TempDir() {
  std::string base = ::testing::TempDir();
  if (base.empty()) base = "/tmp/";
  if (base.back() != '/') base.push_back('/');
  std::string templ = base + "tracemill_test.XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp(" << templ << "): " << std::strerror(errno);
    return;
  }
  path_ = buf.data();
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info && info->result() && info->result()->Failed()) {
    std::fprintf(stderr, "[ kept     ] test outputs in %s\n", path_.c_str());
    return;
  }
  RemoveTree(path_);
}

std::string TempDir::Join(std::string_view name) const { return path_ + "/" + StdString(name); }

CommandResult RunCommand(const std::vector<std::string>& argv, const std::string& scratch_dir) {
  static int counter = 0;
  CommandResult r;
  const std::string out_path = scratch_dir + "/.cmd" + std::to_string(counter) + ".out";
  const std::string err_path = scratch_dir + "/.cmd" + std::to_string(counter) + ".err";
  ++counter;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    ADD_FAILURE() << "cannot run " << argv[0] << ": " << std::strerror(rc);
    return r;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadOrEmpty(out_path);
  r.err = ReadOrEmpty(err_path);
  ::unlink(out_path.c_str());
  ::unlink(err_path.c_str());
  return r;
}

std::string ReadFileBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) ADD_FAILURE() << "cannot read " << path;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void WriteFileBytes(const std::string& path, std::string_view bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) ADD_FAILURE() << "cannot write " << path;
}

void CopyFileTo(const std::string& from, const std::string& to) {
  WriteFileBytes(to, ReadFileBytes(from));
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* de = ::readdir(d)) {
      std::string n = de->d_name;
      if (n == "." || n == "..") continue;
      // The HTML run report and the job's overview trace sit next to every
      // run's outputs; tests/report and tests/pipeline/view_test.cc check them.
      if (n == "report.html" || n.rfind("overview.", 0) == 0) continue;
      struct stat st;
      if (::stat((dir + "/" + n).c_str(), &st) == 0 && S_ISREG(st.st_mode)) names.push_back(n);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string GzipBytes(std::string_view bytes) {
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, bytes.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = static_cast<uInt>(bytes.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&zs, Z_FINISH);
  if (rc != Z_STREAM_END) ADD_FAILURE() << "deflate failed: " << rc;
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

::testing::AssertionResult OutputsParse(const std::string& dir, const std::string& scratch_dir) {
  std::vector<std::string> argv = {TRACEMILL_PYTHON3, "-S", TRACEMILL_TRACE_TOOL, "validate"};
  std::vector<std::string> names = ListDir(dir);
  if (names.empty()) return ::testing::AssertionFailure() << "no files in " << dir;
  for (const auto& n : names)  // tables.sqlite (--tables) is no JSON: tests/tables reads it
    if (n.size() < 7 || n.compare(n.size() - 7, 7, ".sqlite") != 0) argv.push_back(dir + "/" + n);
  CommandResult r = RunCommand(argv, scratch_dir);
  if (r.exit_code != 0)
    return ::testing::AssertionFailure()
           << "python3 json rejects outputs (exit " << r.exit_code << "):\n" << r.out << r.err;
  return ::testing::AssertionSuccess();
}

// ---------------- Manifest ----------------

std::unique_ptr<Manifest> Manifest::Load(const std::string& path) {
  auto m = std::unique_ptr<Manifest>(new Manifest);
  std::string text = ReadOrEmpty(path);
  if (text.empty()) return nullptr;
  m->text_ = simdjson::padded_string(text);
  if (auto e = m->parser_.parse(m->text_).get(m->root_)) {
    ADD_FAILURE() << path << ": " << simdjson::error_message(e);
    return nullptr;
  }
  return m;
}

int64_t Manifest::Int(std::string_view pointer) const {
  int64_t v = -1;
  if (auto e = root_.at_pointer(pointer).get_int64().get(v)) {
    ADD_FAILURE() << "manifest" << pointer << ": " << simdjson::error_message(e);
    return -1;
  }
  return v;
}

std::string Manifest::Str(std::string_view pointer) const {
  std::string_view v;
  if (auto e = root_.at_pointer(pointer).get_string().get(v)) {
    ADD_FAILURE() << "manifest" << pointer << ": " << simdjson::error_message(e);
    return "";
  }
  return std::string(v);
}

bool Manifest::Bool(std::string_view pointer) const {
  bool v = false;
  if (auto e = root_.at_pointer(pointer).get_bool().get(v)) {
    ADD_FAILURE() << "manifest" << pointer << ": " << simdjson::error_message(e);
    return false;
  }
  return v;
}

bool Manifest::IsNull(std::string_view pointer) const {
  simdjson::dom::element el;
  if (auto e = root_.at_pointer(pointer).get(el)) {
    ADD_FAILURE() << "manifest" << pointer << ": " << simdjson::error_message(e);
    return false;
  }
  return el.is_null();
}

bool Manifest::Has(std::string_view pointer) const {
  simdjson::dom::element el;
  return root_.at_pointer(pointer).get(el) == simdjson::SUCCESS;
}

size_t Manifest::ArraySize(std::string_view pointer) const {
  simdjson::dom::array a;
  if (auto e = root_.at_pointer(pointer).get_array().get(a)) {
    ADD_FAILURE() << "manifest" << pointer << ": " << simdjson::error_message(e);
    return 0;
  }
  return a.size();
}

std::string Manifest::Json(std::string_view pointer) const {
  simdjson::dom::element el;
  if (auto e = root_.at_pointer(pointer).get(el)) {
    ADD_FAILURE() << "manifest" << pointer << ": " << simdjson::error_message(e);
    return "";
  }
  return simdjson::to_string(el);
}

int Manifest::InputIndex(std::string_view path_suffix) const {
  size_t n = ArraySize("/inputs");
  for (size_t i = 0; i < n; ++i) {
    std::string p = Str(InputPointer(static_cast<int>(i), "/path"));
    if (p.size() >= path_suffix.size() && p.compare(p.size() - path_suffix.size(), std::string::npos,
                                                    path_suffix) == 0)
      return static_cast<int>(i);
  }
  ADD_FAILURE() << "no manifest input ends with " << path_suffix;
  return -1;
}

std::string Manifest::InputPointer(int i, std::string_view rest) {
  return "/inputs/" + std::to_string(i) + StdString(rest);
}

// ---------------- input facts ----------------

std::optional<InputFacts> ReadInputFacts(const std::string& path, bool with_times, bool with_ids,
                                         const std::string& scratch_dir) {
  std::vector<std::string> argv = {TRACEMILL_PYTHON3, "-S", TRACEMILL_TRACE_TOOL, "facts"};
  if (with_times) argv.push_back("--times");
  if (with_ids) argv.push_back("--ids");
  argv.push_back(path);
  CommandResult r = RunCommand(argv, scratch_dir);
  if (r.exit_code != 0) {
    ADD_FAILURE() << "trace_tool.py facts " << path << " failed: " << r.err;
    return std::nullopt;
  }
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto e = parser.parse(r.out).get(root)) {
    ADD_FAILURE() << "trace_tool.py facts output: " << simdjson::error_message(e);
    return std::nullopt;
  }
  InputFacts f;
  bool trace = false;
  if (root["trace"].get(trace)) return std::nullopt;
  f.trace = trace;
  simdjson::dom::array keys;
  if (!root["top_level_keys"].get(keys))
    for (auto k : keys) f.top_level_keys.emplace_back(std::string_view(k));
  if (!trace) return f;
  f.events = int64_t(root["events"]);
  f.empty_objects = int64_t(root["empty_objects"]);
  f.non_objects = int64_t(root["non_objects"]);
  f.empty_process_meta = int64_t(root["empty_process_meta"]);
  for (auto [k, v] : simdjson::dom::object(root["by_ph"])) f.by_ph[std::string(k)] = int64_t(v);
  simdjson::dom::array times;
  if (with_times && !root["times"].get(times)) {
    f.times.reserve(times.size());
    for (simdjson::dom::array t : times) {
      std::string key;
      for (auto part : t) {
        key.append(std::string_view(part));
        key.push_back('|');
      }
      key.pop_back();
      f.times.push_back(std::move(key));
    }
  }
  simdjson::dom::array ids;
  if (with_ids && !root["ids"].get(ids)) {
    for (simdjson::dom::array t : ids) {
      std::array<std::string, 4> row;
      size_t k = 0;
      for (auto part : t)
        if (k < 4) row[k++] = std::string(std::string_view(part));
      f.ids.push_back(std::move(row));
    }
  }
  return f;
}

std::string TimeKey(const OutEvent& e) {
  return e.ph + "|" + e.name + "|" + e.cat + "|" + e.ts + "|" + e.dur;
}

// ---------------- checks ----------------

::testing::AssertionResult ManifestBalances(const Manifest& m) {
  auto check = [&](const std::string& at) -> std::string {
    int64_t read = m.Int(at + "/events_read");
    int64_t written = m.Int(at + "/events_written");
    int64_t dropped = m.Int(at + "/events_dropped");
    int64_t by_reason = 0;
    simdjson::dom::object reasons;
    if (auto e = m.root().at_pointer(at + "/dropped_by_reason").get_object().get(reasons))
      return at + "/dropped_by_reason: " + simdjson::error_message(e);
    for (auto [k, v] : reasons) by_reason += int64_t(v);
    std::ostringstream s;
    if (read != written + dropped)
      s << at << ": events_read " << read << " != events_written " << written
        << " + events_dropped " << dropped << "\n";
    if (by_reason != dropped)
      s << at << ": dropped_by_reason sums to " << by_reason << ", events_dropped is " << dropped
        << "\n";
    return s.str();
  };
  std::string errors;
  size_t n = m.ArraySize("/inputs");
  int64_t read = 0, written = 0, dropped = 0;
  for (size_t i = 0; i < n; ++i) {
    std::string at = Manifest::InputPointer(static_cast<int>(i), "");
    errors += check(at);
    read += m.Int(at + "/events_read");
    written += m.Int(at + "/events_written");
    dropped += m.Int(at + "/events_dropped");
  }
  errors += check("/totals");
  if (m.Int("/totals/events_read") != read || m.Int("/totals/events_written") != written ||
      m.Int("/totals/events_dropped") != dropped)
    errors += "totals are not the sums of the inputs\n";
  if (!m.Bool("/totals/balanced")) errors += "totals.balanced is false\n";
  if (!errors.empty()) return ::testing::AssertionFailure() << errors;
  return ::testing::AssertionSuccess();
}

std::optional<int64_t> MicrosToNanos(std::string_view s) {
  bool neg = !s.empty() && s[0] == '-';
  if (neg) s.remove_prefix(1);
  size_t dot = s.find('.');
  std::string_view ip = s.substr(0, dot);
  std::string_view fp = dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1);
  if (ip.empty() || ip.size() > 16 || (dot != std::string_view::npos && (fp.empty() || fp.size() > 3)))
    return std::nullopt;
  int64_t v = 0;
  for (char c : ip) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v > INT64_MAX / 1000 - 1) return std::nullopt;
  int64_t f = 0;
  for (size_t k = 0; k < 3; ++k) {
    char c = k < fp.size() ? fp[k] : '0';
    if (c < '0' || c > '9') return std::nullopt;
    f = f * 10 + (c - '0');
  }
  int64_t ns = v * 1000 + f;
  return neg ? -ns : ns;
}

::testing::AssertionResult TsNonDecreasing(const OutputTrace& t) {
  bool seen_timed = false;
  int64_t last = INT64_MIN;
  for (size_t i = 0; i < t.events.size(); ++i) {
    const OutEvent& e = t.events[i];
    if (e.ph == "M") {
      if (seen_timed)
        return ::testing::AssertionFailure() << "metadata event " << i << " (" << e.name
                                             << ") after a timed event";
      continue;
    }
    seen_timed = true;
    if (e.ts.empty()) return ::testing::AssertionFailure() << "event " << i << " has no ts";
    auto ns = MicrosToNanos(e.ts);
    if (!ns) return ::testing::AssertionFailure() << "event " << i << ": ts " << e.ts
                                                  << " is not plain decimal microseconds";
    if (!e.dur.empty() && !MicrosToNanos(e.dur))
      return ::testing::AssertionFailure() << "event " << i << ": dur " << e.dur
                                           << " is not plain decimal microseconds";
    if (*ns < last)
      return ::testing::AssertionFailure() << "event " << i << " (" << e.ph << " " << e.name
                                           << ") ts " << e.ts << " < previous ts";
    last = *ns;
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult RanksNamespaced(const OutputTrace& t) {
  if (t.inputs.empty()) return ::testing::AssertionFailure() << "otherData.inputs is empty";
  for (size_t a = 0; a < t.inputs.size(); ++a) {
    const OutInput& ia = t.inputs[a];
    if (ia.pid_lo > ia.pid_hi)
      return ::testing::AssertionFailure() << "input " << a << " pids [" << ia.pid_lo << ","
                                           << ia.pid_hi << "]";
    if (ia.rank && ia.label.rfind("rank " + std::to_string(*ia.rank), 0) != 0)
      return ::testing::AssertionFailure() << "input " << a << " has rank " << *ia.rank
                                           << " but label \"" << ia.label << "\"";
    for (size_t b = a + 1; b < t.inputs.size(); ++b) {
      const OutInput& ib = t.inputs[b];
      if (ia.pid_lo <= ib.pid_hi && ib.pid_lo <= ia.pid_hi)
        return ::testing::AssertionFailure()
               << "inputs " << a << " and " << b << " share pids: [" << ia.pid_lo << ","
               << ia.pid_hi << "] and [" << ib.pid_lo << "," << ib.pid_hi << "]";
    }
  }
  std::map<int64_t, std::string> names = t.ProcessNames();
  std::set<int64_t> used;
  for (size_t i = 0; i < t.events.size(); ++i) {
    const OutEvent& e = t.events[i];
    if (!e.pid) continue;
    if (t.InputOfPid(*e.pid) < 0)
      return ::testing::AssertionFailure() << "event " << i << " (" << e.ph << " " << e.name
                                           << ") has pid " << *e.pid << " outside every input's range";
    used.insert(*e.pid);
  }
  for (int64_t pid : used) {
    const OutInput& in = t.inputs[t.InputOfPid(pid)];
    auto it = names.find(pid);
    if (it == names.end()) return ::testing::AssertionFailure() << "pid " << pid << " has no process_name";
    const std::string want = in.label + " \xC2\xB7 ";
    if (it->second.rfind(want, 0) != 0)
      return ::testing::AssertionFailure() << "pid " << pid << " is named \"" << it->second
                                           << "\", expected it to start with \"" << want << "\"";
  }
  return ::testing::AssertionSuccess();
}

// ---------------- fixture ----------------

ConvertTest::Run ConvertTest::Convert(const std::vector<std::string>& args) {
  Run run;
  run.out_dir = tmp_.Join("out" + std::to_string(runs_++));
  std::vector<std::string> argv = {TracemillBinary(), "convert"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("-o");
  argv.push_back(run.out_dir);
  CommandResult r = RunCommand(argv, tmp_.path());
  run.exit_code = r.exit_code;
  run.err = r.err;
  struct stat st;
  if (::stat(run.out_dir.c_str(), &st) == 0) {
    EXPECT_TRUE(OutputsParse(run.out_dir, tmp_.path()));
    run.manifest = Manifest::Load(run.out_dir + "/manifest.json");
  }
  return run;
}

CommandResult ConvertTest::Tracemill(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {TracemillBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, tmp_.path());
}

InputFacts ConvertTest::Facts(const std::string& path, bool with_times, bool with_ids) {
  auto f = ReadInputFacts(path, with_times, with_ids, tmp_.path());
  if (!f) {
    ADD_FAILURE() << "no facts for " << path;
    return InputFacts{};
  }
  return *f;
}

std::unique_ptr<OutputTrace> ConvertTest::LoadTrace(const std::string& path) {
  std::string error;
  auto t = OutputTrace::Load(path, &error);
  if (!t) ADD_FAILURE() << error;
  return t;
}

std::unique_ptr<OutputTrace> ConvertTest::OnlyTrace(const Run& run) {
  std::vector<std::string> traces;
  for (const auto& n : ListDir(run.out_dir))
    if (n != "manifest.json") traces.push_back(n);
  if (traces.size() != 1) {
    ADD_FAILURE() << "expected one output trace, got " << traces.size();
    return nullptr;
  }
  return LoadTrace(run.Output(traces[0]));
}

}  // namespace tracemill::testing
