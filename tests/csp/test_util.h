#pragma once
// Helpers for the csp tests: temporary folders, running the `tracemill`
// binary, python3's json module as an independent parser, canonical JSON
// (sorted keys, numbers normalized) for multiset comparisons, and a small
// protobuf wire builder for hand-made quirks.
#include <simdjson.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tracemill::testing {

// The Paddle tests' clock: a profile's start time in ns (2023-11-14).
inline constexpr uint64_t kT0 = 1700000000000000000ull;

// TempDir: a fresh folder under $TMPDIR (or /tmp), removed with its content.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string operator/(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

void MakeDirs(const std::string& path);
std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, std::string_view bytes);
bool Exists(const std::string& path);
// ListDir returns the names in `dir` (sorted), "." and ".." excluded.
std::vector<std::string> ListDir(const std::string& dir);
// CopyTree copies a folder recursively.
void CopyTree(const std::string& from, const std::string& to);
// Gunzip inflates a gzip file's bytes.
std::string Gunzip(std::string_view gz);

// RunResult: exit status and stderr of a `tracemill` run.
struct RunResult {
  int exit_code = -1;
  std::string err;
};
// RunTracemill runs the built binary with `args` (shell-quoted here) in `cwd`
// (empty: the current folder).
RunResult RunTracemill(const std::vector<std::string>& args, const std::string& cwd = "");

// PythonJsonErrors parses each file with python3's json module, rejecting
// NaN / Infinity; returns "" if every file parses, else python's message.
// Files named *.html (the run report) are not JSON and are passed over.
std::string PythonJsonErrors(const std::vector<std::string>& paths);

// Trace: a parsed Chrome trace (simdjson DOM).
class Trace {
 public:
  explicit Trace(std::string json);
  simdjson::dom::array events() const;
  simdjson::dom::element root() const { return root_; }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::unique_ptr<simdjson::dom::parser> parser_;
  simdjson::dom::element root_;
};

// Canonical renders a JSON value with sorted keys and normalized numbers
// (integral doubles as integers: the reference writes `500.0` where
// tracemill writes `500`; any other double as its shortest round-trip form).
std::string Canonical(simdjson::dom::element v);

// Field accessors that fail loudly (empty/0 if missing).
std::string Str(simdjson::dom::element e, const char* key);
int64_t Int(simdjson::dom::element e, const char* key);
double Num(simdjson::dom::element e, const char* key);
bool Has(simdjson::dom::element e, const char* key);

// ProcessNames maps pid -> process_name of a trace's `M` events.
std::map<int64_t, std::string> ProcessNames(const Trace& t);

// Wire: a minimal protobuf wire builder for hand-made inputs (quirks the
// generated serializer never writes: fields out of order, unknown fields,
// overlong varints, truncation).
class Wire {
 public:
  Wire& Varint(uint64_t v);
  Wire& Tag(uint32_t field, uint32_t wire_type) { return Varint((uint64_t{field} << 3) | wire_type); }
  Wire& U64(uint32_t field, uint64_t v) { return Tag(field, 0).Varint(v); }
  Wire& Str(uint32_t field, std::string_view v);
  Wire& Msg(uint32_t field, const Wire& m) { return Str(field, m.bytes()); }
  Wire& Raw(std::string_view bytes) {
    s_.append(bytes);
    return *this;
  }
  const std::string& bytes() const { return s_; }
  size_t size() const { return s_.size(); }

 private:
  std::string s_;
};

}  // namespace tracemill::testing
