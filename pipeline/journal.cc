#include "pipeline/journal.h"

#include <simdjson.h>

#include <fcntl.h>
#include <libdeflate.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "formats/chrome/output_file.h"
#include "formats/common/json_text.h"
#include "formats/common/status_macros.h"

namespace tracemill::pipeline {
namespace {

std::string EntryLine(const OutputRecord& output, const std::vector<const InputRecord*>& inputs,
                      const std::vector<std::string>& overview_blocks) {
  std::string line = "{\"output\":";
  AppendOutputJson(output, &line);
  line.append(",\"inputs\":[");
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (k) line.push_back(',');
    AppendInputJson(*inputs[k], /*with_index=*/false, &line);
  }
  line.append("],\"overview\":[");
  for (size_t k = 0; k < overview_blocks.size(); ++k) {
    if (k) line.push_back(',');
    formats::AppendJsonString(overview_blocks[k], &line);
  }
  line.append("]}\n");
  return line;
}

// The overview blocks of a journal line ("overview":[...]), if any.
std::vector<std::string> OverviewBlocks(const std::string& line) {
  std::vector<std::string> blocks;
  simdjson::dom::parser parser;
  simdjson::dom::array a;
  if (parser.parse(line)["overview"].get_array().get(a)) return blocks;
  for (simdjson::dom::element e : a) {
    std::string_view s;
    if (e.get_string().get(s)) return {};
    blocks.emplace_back(s);
  }
  return blocks;
}

absl::Status WriteAll(int fd, std::string_view s, const std::string& path) {
  while (!s.empty()) {
    ssize_t n = ::write(fd, s.data(), s.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      return absl::ErrnoToStatus(e, absl::StrCat("cannot write ", path));
    }
    s.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

}  // namespace

std::string JournalFileName(const ShardSpec& shard) {
  if (!shard.sharded()) return "journal.jsonl";
  return absl::StrCat("journal.shard-", shard.index, "-of-", shard.count, ".jsonl");
}

absl::StatusOr<JournalContents> LoadJournal(const std::string& path) {
  std::ifstream f(path);
  if (!f) return absl::NotFoundError(absl::StrCat("no journal ", path));
  JournalContents j;
  std::string line;
  bool header = false;
  while (std::getline(f, line)) {
    if (!header) {
      // {"journal":"tracemill","fingerprint":"xxxxxxxx",...}
      size_t k = line.find("\"fingerprint\":\"");
      if (line.rfind("{\"journal\":\"tracemill\"", 0) != 0 || k == std::string::npos)
        return absl::DataLossError(absl::StrCat(path, ": not a tracemill journal"));
      size_t b = k + 15, e = line.find('"', b);
      j.fingerprint = line.substr(b, e == std::string::npos ? 0 : e - b);
      header = true;
      continue;
    }
    CompletedOutput c;
    if (!ParseRecordsJson(line, &c.output, &c.inputs).ok()) continue;
    c.overview_blocks = OverviewBlocks(line);
    j.outputs.push_back(std::move(c));
  }
  if (!header) return absl::DataLossError(absl::StrCat(path, ": empty journal"));
  return j;
}

absl::StatusOr<std::pair<uint64_t, uint32_t>> FileSizeAndCrc32(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return absl::ErrnoToStatus(e, absl::StrCat("cannot open ", path));
  }
  std::vector<char> buf(1 << 20);
  uint64_t size = 0;
  uint32_t crc = 0;
  while (true) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      return absl::ErrnoToStatus(e, absl::StrCat("cannot read ", path));
    }
    if (n == 0) break;
    crc = libdeflate_crc32(crc, buf.data(), static_cast<size_t>(n));
    size += static_cast<uint64_t>(n);
  }
  ::close(fd);
  return std::make_pair(size, crc);
}

absl::StatusOr<std::unique_ptr<Journal>> Journal::Create(const std::string& path,
                                                         const std::string& fingerprint,
                                                         const ShardSpec& shard,
                                                         const std::vector<CompletedOutput>& carried) {
  std::string text = "{\"journal\":\"tracemill\",\"fingerprint\":";
  formats::AppendJsonString(fingerprint, &text);
  absl::StrAppend(&text, ",\"shard\":", shard.index, ",\"count\":", shard.count, "}\n");
  for (const auto& c : carried) {
    std::vector<const InputRecord*> in;
    for (const auto& r : c.inputs) in.push_back(&r);
    text.append(EntryLine(c.output, in, c.overview_blocks));
  }
  // Temporary + rename: a crash here leaves the old journal or the new one.
  auto tmp = formats::OutputFile::Create(path, /*gzip=*/false);
  if (!tmp.ok()) return tmp.status();
  TM_RETURN_IF_ERROR((*tmp)->Append(text));
  TM_RETURN_IF_ERROR((*tmp)->Commit());
  auto j = std::unique_ptr<Journal>(new Journal);
  j->path_ = path;
  j->fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (j->fd_ < 0) {
    int e = errno;
    return absl::ErrnoToStatus(e, absl::StrCat("cannot open ", path));
  }
  return j;
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status Journal::Append(const OutputRecord& output, const std::vector<const InputRecord*>& inputs,
                             const std::vector<std::string>& overview_blocks) {
  std::string line = EntryLine(output, inputs, overview_blocks);
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ < 0) return absl::FailedPreconditionError("journal closed");
  return WriteAll(fd_, line, path_);
}

void Journal::Remove() {
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(path_.c_str());
}

}  // namespace tracemill::pipeline
