#include "merge/spill_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace tracemill::merge {
namespace {
constexpr size_t kWriteBuffer = 1 << 20;
}  // namespace

absl::StatusOr<std::unique_ptr<SpillFile>> SpillFile::Create(const std::string& dir) {
  std::string path = absl::StrCat(dir.empty() ? "/tmp" : dir, "/tracemill-spill-XXXXXX");
  int fd = ::mkostemp(path.data(), O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return absl::ErrnoToStatus(e, absl::StrCat("cannot create a spill file in ", dir,
                                               " (set --tmp-dir or $TMPDIR)"));
  }
  ::unlink(path.c_str());  // gone when the descriptor closes, whatever happens
  auto f = std::unique_ptr<SpillFile>(new SpillFile);
  f->fd_ = fd;
  f->dir_ = dir;
  f->buffer_.reserve(kWriteBuffer);
  return f;
}

SpillFile::~SpillFile() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status SpillFile::Append(std::string_view bytes) {
  if (buffer_.size() + bytes.size() > kWriteBuffer) {
    if (absl::Status s = Flush(); !s.ok()) return s;
  }
  if (bytes.size() >= kWriteBuffer) {
    buffer_.assign(bytes.data(), bytes.size());
    return Flush();
  }
  buffer_.append(bytes.data(), bytes.size());
  return absl::OkStatus();
}

absl::Status SpillFile::Flush() {
  const char* p = buffer_.data();
  size_t n = buffer_.size();
  while (n > 0) {
    ssize_t w = ::pwrite(fd_, p, n, static_cast<off_t>(flushed_));
    if (w < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      return e == ENOSPC ? absl::ResourceExhaustedError(absl::StrCat(
                               "no space left for spill files in ", dir_, " (--tmp-dir)"))
                         : absl::ErrnoToStatus(e, "cannot write spill file");
    }
    p += w;
    n -= static_cast<size_t>(w);
    flushed_ += static_cast<uint64_t>(w);
  }
  buffer_.clear();
  return absl::OkStatus();
}

bool SpillFile::Discard(uint64_t begin, uint64_t end) const {
  // A run's region is flushed when its Spill() returns (no race with Append).
  if (begin >= end) return true;
  return ::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(begin),
                     static_cast<off_t>(end - begin)) == 0;
}

uint64_t SpillFile::AllocatedBytes() const {
  struct stat st;
  if (::fstat(fd_, &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

absl::StatusOr<size_t> SpillFile::ReadAt(uint64_t offset, char* out, size_t n) const {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd_, out + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      return absl::ErrnoToStatus(e, "cannot read spill file");
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

}  // namespace tracemill::merge
