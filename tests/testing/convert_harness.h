#pragma once
// Harness for the end-to-end tests: run the real `tracemill` binary into a
// fresh temporary directory, then judge what it wrote with code that shares
// nothing with the product.
//
// - `ConvertTest::Convert` runs `tracemill convert ARGS -o <new dir>`, then
//   runs python3's strict JSON reader (tests/tools/trace_tool.py validate) on
//   every file in the output directory, so every output of every test is
//   checked by an independent parser, and parses manifest.json.
// - `ReadInputFacts` counts an input's events with python3 and, on request,
//   computes the exact output text of every event's ts and dur.
// - Checks (`ManifestBalances`, `TsNonDecreasing`, `RanksNamespaced`) return
//   `::testing::AssertionResult`, to be used as EXPECT_TRUE(Check(...)).
//
// Paths of the binary, of tests/data and of python3 are compiled in by
// tests/CMakeLists.txt.
#include <simdjson.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/output_trace.h"

namespace tracemill::testing {

// " · ", between an input's label and its process name in output process
// names ("rank 3 · GPU 3").
inline constexpr char kLabelDot[] = " \xC2\xB7 ";

// The `tracemill` binary under test.
std::string TracemillBinary();
// `rel` inside tests/data (e.g. "hta/trace_filter/sampled_rank-0.json.gz").
std::string DataPath(std::string_view rel);

// TempDir: a fresh directory under ::testing::TempDir() (normally /tmp),
// removed with its content on destruction unless the test failed (then it is
// kept and its path printed, to look at the outputs).
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // Join returns path()/name.
  std::string Join(std::string_view name) const;

 private:
  std::string path_;
};

// CommandResult: what a child process did.
struct CommandResult {
  int exit_code = -1;  // exit status, or 128 + signal
  std::string out;     // its stdout
  std::string err;     // its stderr
};

// RunCommand runs `argv` (argv[0] is a path, not looked up in PATH) with
// stdout and stderr captured through files in `scratch_dir`.
CommandResult RunCommand(const std::vector<std::string>& argv, const std::string& scratch_dir);

// File helpers; failures are test failures.
std::string ReadFileBytes(const std::string& path);
void WriteFileBytes(const std::string& path, std::string_view bytes);
void CopyFileTo(const std::string& from, const std::string& to);
// Names (not paths) of the regular files in `dir`, sorted; the HTML run
// report (`report.html`, checked by tests/report) is left out.
std::vector<std::string> ListDir(const std::string& dir);
// GzipBytes compresses `bytes` as one gzip member (zlib).
std::string GzipBytes(std::string_view bytes);

// OutputsParse runs python3's strict JSON check on every file in `dir`
// (`.gz` inflated): valid JSON, valid UTF-8, no NaN/Infinity tokens, no lone
// surrogate escapes.
::testing::AssertionResult OutputsParse(const std::string& dir, const std::string& scratch_dir);

// Manifest: OUTDIR/manifest.json, read with simdjson's DOM API.
class Manifest {
 public:
  static std::unique_ptr<Manifest> Load(const std::string& path);

  simdjson::dom::element root() const { return root_; }
  // Value at a JSON pointer ("/totals/events_read"); a missing or mistyped
  // value is a test failure and returns -1 / "" / false.
  int64_t Int(std::string_view pointer) const;
  std::string Str(std::string_view pointer) const;
  bool Bool(std::string_view pointer) const;
  bool IsNull(std::string_view pointer) const;
  bool Has(std::string_view pointer) const;
  size_t ArraySize(std::string_view pointer) const;
  // Minified JSON text of the value at `pointer`.
  std::string Json(std::string_view pointer) const;
  // Index in "/inputs" of the input whose path ends with `path_suffix`, or -1
  // (a test failure).
  int InputIndex(std::string_view path_suffix) const;
  // "/inputs/<i>" + rest, for Int/Str/...
  static std::string InputPointer(int i, std::string_view rest);

 private:
  simdjson::dom::parser parser_;
  simdjson::padded_string text_;
  simdjson::dom::element root_;
};

// InputFacts: an input counted by python3 (tests/tools/trace_tool.py facts).
struct InputFacts {
  bool trace = false;           // has a traceEvents array (or is an array)
  int64_t events = 0;           // traceEvents elements, all of them
  int64_t empty_objects = 0;    // `{}` elements
  int64_t non_objects = 0;      // elements that are not objects
  // `M` records of processes (pid tokens) with no other event: tracemill
  // leaves them out (dropped `empty_process`).
  int64_t empty_process_meta = 0;
  // The events tracemill writes when it drops none but those.
  int64_t Written() const { return events - empty_process_meta; }
  std::map<std::string, int64_t> by_ph;  // non-empty objects by `ph`
  std::vector<std::string> top_level_keys;
  // With times: "ph|name|cat|ts|dur" of every non-M event with a ts, where ts
  // and dur are the exact text tracemill must write (absolute microseconds,
  // baseTimeNanoseconds applied, at most three fraction digits).
  std::vector<std::string> times;
  // With ids: every non-M event with an `id` or `bind_id`, as
  // {"id" or "bind_id", ph, ts (as in times), the id's JSON text}.
  std::vector<std::array<std::string, 4>> ids;
};
std::optional<InputFacts> ReadInputFacts(const std::string& path, bool with_times, bool with_ids,
                                         const std::string& scratch_dir);

// The same "ph|name|cat|ts|dur" key for an output event.
std::string TimeKey(const OutEvent& e);

// ManifestBalances: per input and in the totals, events_read ==
// events_written + events_dropped, and dropped_by_reason sums to
// events_dropped; totals.balanced is true.
::testing::AssertionResult ManifestBalances(const Manifest& m);

// TsNonDecreasing: metadata (M) events come first, then every event's ts is
// non-decreasing; every ts/dur is a plain decimal number of microseconds with
// at most three fraction digits.
::testing::AssertionResult TsNonDecreasing(const OutputTrace& t);

// RanksNamespaced: the pid ranges of otherData.inputs[] do not overlap, every
// event's pid lies in exactly one of them, and every pid that carries events
// has a process_name starting with its input's label and " · " (for a ranked
// input the label starts with "rank N").
::testing::AssertionResult RanksNamespaced(const OutputTrace& t);

// MicrosToNanos parses output ts/dur text (`-`? digits (`.` 1-3 digits)?) into
// ns; nullopt for anything else. Written for the tests, not shared with the
// product.
std::optional<int64_t> MicrosToNanos(std::string_view text);

// ConvertTest: fixture for tests that run the binary.
class ConvertTest : public ::testing::Test {
 protected:
  struct Run {
    int exit_code = -1;
    std::string err;      // stderr
    std::string out_dir;  // the output directory
    std::unique_ptr<Manifest> manifest;  // null if it was not written
    std::string Output(std::string_view name) const { return out_dir + "/" + std::string(name); }
  };

  // Convert runs `tracemill convert ARGS -o <fresh dir>` and checks that
  // every file it wrote parses with python3 (a test failure otherwise).
  Run Convert(const std::vector<std::string>& args);
  // Runs `tracemill ARGS` as given (for usage errors).
  CommandResult Tracemill(const std::vector<std::string>& args);
  // Facts of an input, counted by python3; a failure if it cannot be read.
  InputFacts Facts(const std::string& path, bool with_times = false, bool with_ids = false);
  // Loads an output trace; null (and a test failure) if it cannot be read.
  std::unique_ptr<OutputTrace> LoadTrace(const std::string& path);
  // The only output trace of `run` (every file but manifest.json); null
  // (and a test failure) if there is not exactly one.
  std::unique_ptr<OutputTrace> OnlyTrace(const Run& run);

  TempDir tmp_;
  int runs_ = 0;
};

}  // namespace tracemill::testing
