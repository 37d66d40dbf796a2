#include "formats/common/read_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "absl/strings/str_cat.h"

namespace tracemill::formats {

namespace {

absl::Status TooLarge(size_t max_bytes) {
  return absl::ResourceExhaustedError(
      absl::StrCat("holds more than ", max_bytes >> 20, " MiB, more than the memory limit allows (a pipe or "
                   "device is read whole; raise --memory-limit or convert a file)"));
}

}  // namespace

int OpenInputFile(const std::string& path) { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK); }

absl::Status ReadWholeFile(const std::string& path, size_t padding, ByteBuffer* out, size_t max_bytes) {
  // Reads block again (a writer's data is waited for, none reads as EOF).
  int fd = OpenInputFile(path);
  if (fd < 0) {
    int e = errno;
    return absl::ErrnoToStatus(e, "cannot open");
  }
  if (const int flags = ::fcntl(fd, F_GETFL); flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  struct stat st;
  size_t size = 0;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) size = static_cast<size_t>(st.st_size);
  out->Clear();
  if (size > max_bytes) {  // a regular file: known before reading (and before reserving its size)
    ::close(fd);
    return TooLarge(max_bytes);
  }
  // One read for a regular file (+1 byte to see EOF without growing); pipes grow.
  out->Reserve(std::max<size_t>(size + 1, 1 << 16) + padding);
  while (true) {
    size_t old = out->size();
    if (out->capacity() - padding == old) out->Reserve(old * 2 + padding);
    ssize_t n = ::read(fd, out->data() + old, out->capacity() - padding - old);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      out->Clear();
      return absl::ErrnoToStatus(e, "cannot read");
    }
    if (n == 0) break;
    out->Resize(old + static_cast<size_t>(n));
    if (out->size() > max_bytes) {
      ::close(fd);
      out->Clear();
      return TooLarge(max_bytes);
    }
  }
  ::close(fd);
  out->ZeroPadding(padding);
  return absl::OkStatus();
}

std::optional<std::string> ReadTextFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return std::nullopt;
  std::string text;
  char buf[1 << 16];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, got);
  std::fclose(f);
  return text;
}

std::optional<std::vector<std::string>> ListFolder(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return std::nullopt;
  std::vector<std::string> names;
  while (dirent* de = ::readdir(d)) {
    std::string n = de->d_name;
    if (n != "." && n != "..") names.push_back(std::move(n));
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::string FirstBytesHex(std::string_view data) {
  std::string s;
  for (char c : data.substr(0, 16)) {
    const auto u = static_cast<unsigned char>(c);
    absl::StrAppend(&s, s.empty() ? "" : " ", absl::Hex(u, absl::kZeroPad2));
  }
  return s;
}

}  // namespace tracemill::formats
