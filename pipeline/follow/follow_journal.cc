#include "pipeline/follow/follow_journal.h"

#include <fcntl.h>
#include <simdjson.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "formats/common/json_text.h"
#include "formats/common/read_file.h"
#include "formats/common/status_macros.h"

namespace tracemill::pipeline::follow {
namespace {

absl::Status WriteAllTo(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::ErrnoToStatus(errno, absl::StrCat("cannot write ", path));
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

std::string HeaderJson(const std::string& fingerprint) {
  std::string o = "{\"follow_journal\":\"tracemill\",\"fingerprint\":";
  formats::AppendJsonString(fingerprint, &o);
  o += "}";
  return o;
}

// ParseWindowLine: one window line back; false if it does not parse.
bool ParseWindowLine(simdjson::dom::element line, JournalWindow* w) {
  std::string_view name;
  if (line["window"].get(name)) return false;
  w->window.name = std::string(name);
  bool late = false;
  if (line["late"].get(late)) return false;
  w->window.late = late;
  int64_t v = 0;
  if (!line["start_ns"].get(v)) w->window.start_ns = v;
  else w->window.start_ns = kNoTime;  // null: a late window
  if (line["end_ns"].get(v)) return false;
  w->window.end_ns = v;
  if (!line["exit_code"].get(v)) w->exit_code = static_cast<int>(v);
  simdjson::dom::array files;
  if (line["files"].get(files)) return false;
  for (simdjson::dom::element e : files) {
    FollowFile f;
    std::string_view s;
    uint64_t u = 0;
    if (e["path"].get(s)) return false;
    f.path = std::string(s);
    if (e["size"].get(u)) return false;
    f.size = u;
    if (e["mtime_ns"].get(v)) return false;
    f.mtime_ns = v;
    if (e["events"].get(u)) return false;
    f.probe.events = u;
    f.probe.has_events = u > 0;
    if (!e["min_ns"].get(v)) f.probe.min_start_ns = v;
    if (!e["max_ns"].get(v)) f.probe.max_start_ns = v;
    if (!e["source"].get(s)) f.source = std::string(s);
    if (!e["hint_ns"].get(v)) f.hint_ns = v;
    w->files.push_back(std::move(f));
  }
  return true;
}

}  // namespace

std::string WindowLineJson(const JournalWindow& w) {
  std::string o = "{\"window\":";
  formats::AppendJsonString(w.window.name, &o);
  absl::StrAppend(&o, ",\"start_ns\":", w.window.late ? std::string("null") : absl::StrCat(w.window.start_ns),
                  ",\"end_ns\":", w.window.end_ns, ",\"late\":", w.window.late ? "true" : "false",
                  ",\"exit_code\":", w.exit_code, ",\"files\":[");
  for (size_t i = 0; i < w.files.size(); ++i) {
    const FollowFile& f = w.files[i];
    o += i ? ",{\"path\":" : "{\"path\":";
    formats::AppendJsonString(f.path, &o);
    absl::StrAppend(&o, ",\"size\":", f.size, ",\"mtime_ns\":", f.mtime_ns, ",\"events\":", f.probe.events);
    if (f.has_events()) absl::StrAppend(&o, ",\"min_ns\":", f.min_ns(), ",\"max_ns\":", f.max_ns());
    o += ",\"source\":";
    formats::AppendJsonString(f.source, &o);
    if (f.hint_ns != kNoTime) absl::StrAppend(&o, ",\"hint_ns\":", f.hint_ns);
    o += "}";
  }
  o += "]}";
  return o;
}

absl::StatusOr<FollowJournalContents> LoadFollowJournal(const std::string& path) {
  formats::ByteBuffer buf;
  if (absl::Status st = formats::ReadWholeFile(path, simdjson::SIMDJSON_PADDING, &buf); !st.ok()) return st;
  std::string_view text = buf.view();
  FollowJournalContents out;
  simdjson::dom::parser parser;
  bool header = false;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    if (nl == std::string_view::npos) break;  // a torn last line
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    simdjson::dom::element e;
    if (parser.parse(line.data(), line.size()).get(e)) break;
    if (!header) {
      std::string_view fp;
      if (e["follow_journal"].error() || e["fingerprint"].get(fp)) break;
      out.fingerprint = std::string(fp);
      header = true;
      continue;
    }
    JournalWindow w;
    if (!ParseWindowLine(e, &w)) break;
    out.windows.push_back(std::move(w));
  }
  if (!header) return absl::DataLossError(absl::StrCat(path, ": not a follow journal"));
  return out;
}

FollowJournal::~FollowJournal() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status FollowJournal::Create(const std::string& path, const std::string& fingerprint,
                                   const std::vector<JournalWindow>& carried) {
  std::string text = HeaderJson(fingerprint) + "\n";
  for (const JournalWindow& w : carried) absl::StrAppend(&text, WindowLineJson(w), "\n");
  const size_t slash = path.rfind('/');
  const std::string tmp = slash == std::string::npos
                              ? absl::StrCat(".", path, ".tmp.", ::getpid())
                              : absl::StrCat(path.substr(0, slash + 1), ".", path.substr(slash + 1), ".tmp.", ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("cannot create ", tmp));
  absl::Status st = WriteAllTo(fd, text, tmp);
  if (st.ok() && ::fsync(fd) != 0) st = absl::ErrnoToStatus(errno, absl::StrCat("cannot sync ", tmp));
  ::close(fd);
  if (st.ok() && ::rename(tmp.c_str(), path.c_str()) != 0)
    st = absl::ErrnoToStatus(errno, absl::StrCat("cannot rename ", tmp));
  if (!st.ok()) {
    ::unlink(tmp.c_str());
    return st;
  }
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_ < 0) return absl::ErrnoToStatus(errno, absl::StrCat("cannot open ", path));
  return absl::OkStatus();
}

absl::Status FollowJournal::Append(const JournalWindow& w) {
  if (fd_ < 0) return absl::FailedPreconditionError("the follow journal is not open");
  // One write(2) per line: a crash leaves whole lines and at most one torn one.
  TM_RETURN_IF_ERROR(WriteAllTo(fd_, WindowLineJson(w) + "\n", "the follow journal"));
  if (::fdatasync(fd_) != 0) return absl::ErrnoToStatus(errno, "cannot sync the follow journal");
  return absl::OkStatus();
}

}  // namespace tracemill::pipeline::follow
