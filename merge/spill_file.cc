#include "merge/spill_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "formats/common/large_alloc.h"

namespace tracemill::merge {
absl::StatusOr<std::unique_ptr<SpillFile>> SpillFile::Create(const std::string& dir, bool direct_ok) {
  const std::string where = dir.empty() ? "/tmp" : dir;
  std::string path = absl::StrCat(where, "/tracemill-spill-XXXXXX");
  int fd = ::mkostemp(path.data(), O_CLOEXEC);
  int read_fd = fd < 0 ? -1 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || read_fd < 0) {
    int e = errno;
    if (fd >= 0) {
      ::unlink(path.c_str());
      ::close(fd);
    }
    return absl::ErrnoToStatus(e, absl::StrCat("cannot create a spill file in ", where,
                                               " (set --tmp-dir or $TMPDIR)"));
  }
  auto f = std::unique_ptr<SpillFile>(new SpillFile);
  f->fd_ = fd;
  f->read_fd_ = read_fd;
  f->dir_ = where;
  if (direct_ok) {  // the file system may refuse: then buffered, same bytes
    f->direct_fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
    if (f->direct_fd_ < 0 || !formats::SetDirect(fd) || !formats::ClearDirect(fd)) {
      if (f->direct_fd_ >= 0) ::close(f->direct_fd_);
      f->direct_fd_ = -1;
    }
  }
  ::unlink(path.c_str());  // gone when the descriptors close, whatever happens
  f->ring_ = formats::DirectRing::Create(fd, kSpillBuffers, kSpillBufferBytes, 0);
  if (!f->ring_) return absl::ResourceExhaustedError("no memory for a spill file's buffers");
  return f;
}

SpillFile::~SpillFile() {
  ring_.reset();  // joins its writer thread
  for (int fd : {fd_, read_fd_, direct_fd_})
    if (fd >= 0) ::close(fd);
}

bool SpillFile::UseDirect(bool on) {
  on = on && direct_fd_ >= 0;
  if (on == direct_) return direct_;
  if (on) {
    direct_ = formats::SetDirect(fd_);
  } else {
    (void)formats::ClearDirect(fd_);
    direct_ = false;
  }
  return direct_;
}

absl::Status SpillFile::WriteError(int e) const {
  return e == ENOSPC ? absl::ResourceExhaustedError(
                           absl::StrCat("no space left for spill files in ", dir_, " (--tmp-dir)"))
                     : absl::ErrnoToStatus(e, "cannot write spill file");
}

absl::Status SpillFile::Append(std::string_view bytes) {
  if (int e = ring_->Stage(bytes.data(), bytes.size())) return WriteError(e);
  return absl::OkStatus();
}

absl::Status SpillFile::Flush() {
  int e = ring_->Drain();
  const size_t len = ring_->fill_len();
  if (!e && len > 0) {
    // The partial last block is padded and written now; it stays in the
    // buffer, to be written again with what follows it.
    const size_t padded = (len + formats::kDirectAlign - 1) / formats::kDirectAlign * formats::kDirectAlign;
    std::memset(ring_->filling() + len, 0, padded - len);
    e = formats::PwriteAll(fd_, ring_->filling(), padded, ring_->offset());
  }
  if (e) return WriteError(e);
  ring_->Consume(len / formats::kDirectAlign * formats::kDirectAlign);
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

namespace {

// PreadSome reads up to `n` bytes at `offset`; the count (short only at the
// end of the file) or -errno.
ssize_t PreadSome(int fd, char* out, size_t n, uint64_t offset) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd, out + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return static_cast<ssize_t>(got);
}

// The calling thread's aligned buffer for direct reads (kSpillReadBytes +
// one block; kept for the thread's life: a decode or merge thread reuses it).
char* ReadBounce() {
  struct Bounce {
    char* p = static_cast<char*>(formats::AllocateLarge(kSpillReadBytes + formats::kDirectAlign));
    ~Bounce() { formats::FreeLarge(p, kSpillReadBytes + formats::kDirectAlign); }
  };
  thread_local Bounce b;
  return b.p;
}

}  // namespace

absl::StatusOr<size_t> SpillFile::ReadAt(uint64_t offset, char* out, size_t n, bool direct) const {
  size_t got = 0;
  while (direct && got < n && direct_fd_ >= 0 && direct_reads_ok_.load(std::memory_order_relaxed)) {
    // Whole blocks around [at, at + want) into the bounce buffer.
    const uint64_t at = offset + got;
    const uint64_t begin = at / formats::kDirectAlign * formats::kDirectAlign;
    const size_t skip = static_cast<size_t>(at - begin);
    const size_t want = std::min(n - got, kSpillReadBytes);
    const size_t len = (skip + want + formats::kDirectAlign - 1) / formats::kDirectAlign * formats::kDirectAlign;
    char* bounce = ReadBounce();
    ssize_t r = PreadSome(direct_fd_, bounce, len, begin);
    if (r == -EINVAL) {
      direct_reads_ok_ = false;  // refused after all: buffered from here on
      break;
    }
    if (r < 0) return absl::ErrnoToStatus(static_cast<int>(-r), "cannot read spill file");
    const size_t k = static_cast<size_t>(r) > skip ? std::min(want, static_cast<size_t>(r) - skip) : 0;
    std::memcpy(out + got, bounce + skip, k);
    got += k;
    if (k < want) return got;  // the end of the file
  }
  if (got == n) return got;
  ssize_t r = PreadSome(read_fd_, out + got, n - got, offset + got);
  if (r < 0) return absl::ErrnoToStatus(static_cast<int>(-r), "cannot read spill file");
  return got + static_cast<size_t>(r);
}

}  // namespace tracemill::merge
