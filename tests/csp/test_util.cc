#include "tests/csp/test_util.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "formats/common/byte_buffer.h"
#include "formats/gzip/gzip_reader.h"

namespace tracemill::testing {
namespace {

std::string ShellQuote(std::string_view s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''";
    else q.push_back(c);
  }
  q += "'";
  return q;
}

void RemoveTree(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    for (const auto& n : ListDir(path)) RemoveTree(path + "/" + n);
    ::rmdir(path.c_str());
  } else {
    ::unlink(path.c_str());
  }
}

}  // namespace

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/tracemill-csp-test-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() { RemoveTree(path_); }

void MakeDirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i)
    if (i == path.size() || path[i] == '/') ::mkdir(path.substr(0, i).c_str(), 0755);
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void WriteFile(const std::string& path, std::string_view bytes) {
  size_t slash = path.rfind('/');
  if (slash != std::string::npos) MakeDirs(path.substr(0, slash));
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw std::runtime_error("cannot write " + path);
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* de = ::readdir(d)) {
      std::string n = de->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

void CopyTree(const std::string& from, const std::string& to) {
  struct stat st;
  if (::stat(from.c_str(), &st) != 0) throw std::runtime_error("no " + from);
  if (S_ISDIR(st.st_mode)) {
    MakeDirs(to);
    for (const auto& n : ListDir(from)) CopyTree(from + "/" + n, to + "/" + n);
  } else {
    WriteFile(to, ReadFile(from));
  }
}

std::string Gunzip(std::string_view gz) {
  formats::ByteBuffer out;
  formats::GunzipResult r = formats::Gunzip(gz, &out);
  if (!r.status.ok()) throw std::runtime_error("gunzip failed");
  return std::string(out.view());
}

RunResult RunTracemill(const std::vector<std::string>& args, const std::string& cwd) {
  static int counter = 0;
  TempDir scratch;
  std::string err_name = "stderr.";
  err_name.append(std::to_string(++counter));
  const std::string err_path = scratch / err_name;
  std::string cmd;
  if (!cwd.empty()) cmd = "cd " + ShellQuote(cwd) + " && ";
  cmd += ShellQuote(TRACEMILL_BIN);
  for (const auto& a : args) cmd += " " + ShellQuote(a);
  cmd += " 2>" + ShellQuote(err_path) + " </dev/null";
  RunResult r;
  int status = std::system(cmd.c_str());
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = Exists(err_path) ? ReadFile(err_path) : "";
  return r;
}

std::string PythonJsonErrors(const std::vector<std::string>& all) {
  std::vector<std::string> paths;
  for (const std::string& p : all)
    if (p.size() < 5 || p.compare(p.size() - 5, 5, ".html") != 0) paths.push_back(p);  // the run report
  TempDir scratch;
  const std::string script = scratch / "check.py";
  WriteFile(script,
            "import json, sys\n"
            "def no_constant(name):\n"
            "    raise ValueError('non-JSON constant ' + name)\n"
            "bad = []\n"
            "for p in sys.argv[1:]:\n"
            "    try:\n"
            "        with open(p, 'rb') as f:\n"
            "            json.loads(f.read().decode('utf-8'), parse_constant=no_constant)\n"
            "    except Exception as e:\n"
            "        bad.append('%s: %s' % (p, e))\n"
            "print('\\n'.join(bad))\n"
            "sys.exit(1 if bad else 0)\n");
  const std::string out = scratch / "out.txt";
  std::string cmd = ShellQuote(PYTHON3_BIN) + " " + ShellQuote(script);
  for (const auto& p : paths) cmd += " " + ShellQuote(p);
  cmd += " >" + ShellQuote(out) + " 2>&1";
  int status = std::system(cmd.c_str());
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  std::string msg = "python3 json: ";
  msg.append(Exists(out) ? ReadFile(out) : std::string("did not run"));
  return msg;
}

Trace::Trace(std::string json) : text_(std::move(json)), parser_(new simdjson::dom::parser) {
  auto r = parser_->parse(text_);
  if (r.error()) throw std::runtime_error(std::string("simdjson: ") + simdjson::error_message(r.error()));
  root_ = r.value();
}

simdjson::dom::array Trace::events() const {
  simdjson::dom::array a;
  if (root_.is_array()) return root_.get_array().value();
  if (root_["traceEvents"].get_array().get(a)) throw std::runtime_error("no traceEvents array");
  return a;
}

namespace {

void CanonicalTo(simdjson::dom::element v, std::string* out) {
  using simdjson::dom::element_type;
  char buf[64];
  switch (v.type()) {
    case element_type::OBJECT: {
      std::vector<std::pair<std::string, simdjson::dom::element>> kv;
      simdjson::dom::object obj = v.get_object().value();
      for (auto field : obj) kv.emplace_back(std::string(field.key), field.value);
      std::sort(kv.begin(), kv.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      out->push_back('{');
      for (size_t i = 0; i < kv.size(); ++i) {
        if (i) out->push_back(',');
        out->push_back('"');
        out->append(kv[i].first);
        out->append("\":");
        CanonicalTo(kv[i].second, out);
      }
      out->push_back('}');
      break;
    }
    case element_type::ARRAY: {
      out->push_back('[');
      bool first = true;
      simdjson::dom::array arr = v.get_array().value();
      for (auto e : arr) {
        if (!first) out->push_back(',');
        first = false;
        CanonicalTo(e, out);
      }
      out->push_back(']');
      break;
    }
    case element_type::STRING:
      out->push_back('"');
      out->append(v.get_string().value());
      out->push_back('"');
      break;
    case element_type::INT64:
      *out += std::to_string(v.get_int64().value());
      break;
    case element_type::UINT64:
      *out += std::to_string(v.get_uint64().value());
      break;
    case element_type::DOUBLE: {
      double d = v.get_double().value();
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18) {
        *out += std::to_string(static_cast<int64_t>(d));
      } else {
        *out += std::string(buf, std::to_chars(buf, buf + sizeof(buf), d).ptr);
      }
      break;
    }
    case element_type::BOOL:
      *out += v.get_bool().value() ? "true" : "false";
      break;
    case element_type::NULL_VALUE:
      *out += "null";
      break;
  }
}

}  // namespace

std::string Canonical(simdjson::dom::element v) {
  std::string s;
  CanonicalTo(v, &s);
  return s;
}

std::string Str(simdjson::dom::element e, const char* key) {
  std::string_view s;
  if (e[key].get_string().get(s)) return "";
  return std::string(s);
}

int64_t Int(simdjson::dom::element e, const char* key) {
  simdjson::dom::element v;
  if (e[key].get(v)) return 0;
  if (v.is_int64()) return v.get_int64().value();
  if (v.is_uint64()) return static_cast<int64_t>(v.get_uint64().value());
  if (v.is_double()) return static_cast<int64_t>(v.get_double().value());
  return 0;
}

double Num(simdjson::dom::element e, const char* key) {
  simdjson::dom::element v;
  if (e[key].get(v)) return NAN;
  if (v.is_double()) return v.get_double().value();
  if (v.is_int64()) return static_cast<double>(v.get_int64().value());
  if (v.is_uint64()) return static_cast<double>(v.get_uint64().value());
  return NAN;
}

bool Has(simdjson::dom::element e, const char* key) {
  simdjson::dom::element v;
  return !e[key].get(v);
}

std::map<int64_t, std::string> ProcessNames(const Trace& t) {
  std::map<int64_t, std::string> m;
  for (auto e : t.events())
    if (Str(e, "ph") == "M" && Str(e, "name") == "process_name")
      m[Int(e, "pid")] = Str(e["args"].value(), "name");
  return m;
}

Wire& Wire::Varint(uint64_t v) {
  while (v >= 0x80) {
    s_.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  s_.push_back(static_cast<char>(v));
  return *this;
}

Wire& Wire::Str(uint32_t field, std::string_view v) {
  Tag(field, 2).Varint(v.size());
  s_.append(v);
  return *this;
}

}  // namespace tracemill::testing
