#include "formats/chrome/output_file.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <unistd.h>

#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "formats/common/cleanup.h"
#include "formats/common/large_alloc.h"

namespace tracemill::formats {

absl::StatusOr<std::unique_ptr<OutputFile>> OutputFile::Create(std::string final_path, bool gzip,
                                                                int gzip_level) {
  auto f = std::unique_ptr<OutputFile>(new OutputFile);
  size_t slash = final_path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : final_path.substr(0, slash);
  std::string base = slash == std::string::npos ? final_path : final_path.substr(slash + 1);
  f->temp_path_ = absl::StrCat(dir, "/.", base, ".tmp.", getpid());
  f->final_path_ = std::move(final_path);
  f->gzip_ = gzip;
  f->level_ = gzip_level;
  f->fd_ = OpenTemporary(f->temp_path_, &f->cleanup_slot_);
  if (f->fd_ < 0) {
    int e = errno;
    return absl::ErrnoToStatus(e, absl::StrCat("cannot create ", f->temp_path_));
  }
  return f;
}

std::unique_ptr<OutputFile> OutputFile::CreateInMemory(bool gzip, int gzip_level) {
  auto f = std::unique_ptr<OutputFile>(new OutputFile);
  f->in_memory_ = true;
  f->gzip_ = gzip;
  f->level_ = gzip_level;
  return f;
}

OutputFile::~OutputFile() {
  if (!committed_) Abort();
}

// The direct-I/O state of one output: the staging buffers and the writer
// thread's hand-off (at most one buffer in flight while the other fills).
struct OutputFile::Direct {
  int fd = -1;
  char* mem = nullptr;  // kDirectBuffers x kDirectBufferBytes, kDirectAlign-aligned
  size_t filling = 0;   // the buffer being filled
  size_t fill_len = 0;
  uint64_t offset = 0;  // file offset of the filling buffer
  std::mutex mu;
  std::condition_variable cv;
  // Full buffers handed to the writer thread, and written, since the start:
  // buffer k (the file's bytes [k, k+1) x kDirectBufferBytes) is
  // buf(k % kDirectBuffers); submitted - written of them wait or are in
  // flight, at most kDirectBuffers - 1 (one is being filled).
  uint64_t submitted = 0, written = 0;
  bool stop = false;
  int error = 0;  // errno of the first failed write (then nothing more is written)
  std::thread thread;   // started at the first full buffer (StartWriter)
  bool no_thread = false;  // none could be started: full buffers are written inline

  char* buf(size_t k) { return mem + k * kDirectBufferBytes; }
  // StartWriter starts the writer thread; false (and no_thread) if the
  // process cannot have another thread (ulimit -u).
  bool StartWriter();
  // From the block pool (large_alloc.h): an output after the first reuses
  // warm pages instead of faulting fresh ones (mmap'd, so 4 KiB-aligned).
  ~Direct() { FreeLarge(mem, kDirectBuffers * kDirectBufferBytes); }
};

namespace {

// ClearDirect turns O_DIRECT off on `fd`; true if it was on.
bool ClearDirect(int fd) {
  const int fl = ::fcntl(fd, F_GETFL);
  return fl >= 0 && (fl & O_DIRECT) && ::fcntl(fd, F_SETFL, fl & ~O_DIRECT) == 0;
}

// PwriteAll writes [p, p+n) at `off`; with O_DIRECT, p, n and off are
// kDirectAlign-aligned. A file system that takes O_DIRECT at fcntl but
// refuses the write (EINVAL: a larger alignment) gets the same bytes
// buffered, O_DIRECT cleared. Returns 0 or the errno.
int PwriteAll(int fd, const char* p, size_t n, uint64_t off) {
  while (n > 0) {
    ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(off));
    if (w < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      if (e == EINVAL && ClearDirect(fd)) continue;
      return e;
    }
    if (w == 0) return EIO;
    p += w;
    n -= static_cast<size_t>(w);
    off += static_cast<uint64_t>(w);
    if (n > 0 && (off % kDirectAlign) != 0) {
      // A short direct write (a full disk) leaves an unaligned rest: buffered.
      (void)ClearDirect(fd);
    }
  }
  return 0;
}

}  // namespace

namespace {
std::atomic<bool> g_no_writer_threads{false};  // SetNoDirectWriterThreadsForTesting
}  // namespace

void SetNoDirectWriterThreadsForTesting(bool on) { g_no_writer_threads = on; }

bool OutputFile::Direct::StartWriter() {
  if (g_no_writer_threads) {
    no_thread = true;
    return false;
  }
  Direct* raw = this;
  auto writer = [raw] {
    std::unique_lock lk(raw->mu);
    for (;;) {
      raw->cv.wait(lk, [raw] { return raw->written < raw->submitted || raw->stop; });
      if (raw->written == raw->submitted) return;  // stop, nothing pending
      const char* p = raw->buf(static_cast<size_t>(raw->written % kDirectBuffers));
      const uint64_t off = raw->written * kDirectBufferBytes;
      const bool failed = raw->error != 0;  // after a failed write, write nothing more
      lk.unlock();
      int e = failed ? 0 : PwriteAll(raw->fd, p, kDirectBufferBytes, off);
      lk.lock();
      if (e && !raw->error) raw->error = e;
      ++raw->written;
      raw->cv.notify_all();
    }
  };
  try {
    thread = std::thread(writer);
  } catch (const std::system_error&) {
    no_thread = true;
    return false;
  }
  return true;
}

bool OutputFile::EnableDirectIo() {
  if (in_memory_ || fd_ < 0 || direct_ || bytes_written_ != 0) return false;
  int fl = ::fcntl(fd_, F_GETFL);
  if (fl < 0 || ::fcntl(fd_, F_SETFL, fl | O_DIRECT) != 0) return false;
  auto d = std::make_unique<Direct>();
  d->fd = fd_;
  try {
    d->mem = static_cast<char*>(AllocateLarge(kDirectBuffers * kDirectBufferBytes));
  } catch (const std::bad_alloc&) {
    (void)::fcntl(fd_, F_SETFL, fl);
    return false;
  }
  direct_ = std::move(d);
  return true;
}

absl::Status OutputFile::StageDirect(const char* p, size_t n) {
  Direct& d = *direct_;
  while (n > 0) {
    const size_t k = std::min(n, kDirectBufferBytes - d.fill_len);
    std::memcpy(d.buf(d.filling) + d.fill_len, p, k);
    d.fill_len += k;
    p += k;
    n -= k;
    if (d.fill_len < kDirectBufferBytes) break;
    if (!d.thread.joinable() && (d.no_thread || !d.StartWriter())) {
      // No writer thread: write the full buffer here, then refill it.
      if (int e = PwriteAll(d.fd, d.buf(d.filling), kDirectBufferBytes, d.offset))
        return absl::ErrnoToStatus(e, absl::StrCat("cannot write ", temp_path_));
      d.offset += kDirectBufferBytes;
      d.fill_len = 0;
      continue;
    }
    std::unique_lock lk(d.mu);
    // The next buffer to fill must not be waiting or in flight.
    d.cv.wait(lk, [&d] { return d.submitted + 1 - d.written < kDirectBuffers; });
    if (d.error) return absl::ErrnoToStatus(d.error, absl::StrCat("cannot write ", temp_path_));
    ++d.submitted;
    d.offset += kDirectBufferBytes;
    d.filling = (d.filling + 1) % kDirectBuffers;
    d.fill_len = 0;
    d.cv.notify_all();
  }
  return absl::OkStatus();
}

void OutputFile::StopDirect() {
  if (!direct_) return;
  {
    std::lock_guard lk(direct_->mu);
    direct_->stop = true;
  }
  direct_->cv.notify_all();
  if (direct_->thread.joinable()) direct_->thread.join();
}

absl::Status OutputFile::FinishDirect() {
  Direct& d = *direct_;
  StopDirect();  // writes what is in flight, then ends
  int e = d.error;
  // An output that never filled a buffer (offset 0) is written buffered in
  // one call: for a small file O_DIRECT's synchronous write only costs.
  const size_t aligned = d.offset == 0 ? 0 : d.fill_len / kDirectAlign * kDirectAlign;
  if (!e && aligned) e = PwriteAll(d.fd, d.buf(d.filling), aligned, d.offset);
  if (!e && d.fill_len > aligned) {
    (void)ClearDirect(d.fd);
    e = PwriteAll(d.fd, d.buf(d.filling) + aligned, d.fill_len - aligned, d.offset + aligned);
  }
  direct_.reset();
  if (e) return absl::ErrnoToStatus(e, absl::StrCat("cannot write ", temp_path_));
  return absl::OkStatus();
}

absl::Status OutputFile::WriteAll(const char* p, size_t n) {
  if (in_memory_) {
    memory_.append(p, n);
    bytes_written_ += n;
    return absl::OkStatus();
  }
  if (direct_) {
    crc32_ = libdeflate_crc32(crc32_, p, n);
    bytes_written_ += n;
    return StageDirect(p, n);
  }
  while (n > 0) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      return absl::ErrnoToStatus(e, absl::StrCat("cannot write ", temp_path_));
    }
    crc32_ = libdeflate_crc32(crc32_, p, static_cast<size_t>(w));
    p += w;
    n -= static_cast<size_t>(w);
    bytes_written_ += static_cast<uint64_t>(w);
  }
  DropBehind();
  return absl::OkStatus();
}

uint64_t DropBehindAfter() {
  static const uint64_t after = [] {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t ram = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page)
                                         : (uint64_t{8} << 30);
    return ram / 8;
  }();
  return after;
}

void DropBehindStep(int fd, uint64_t job_bytes, uint64_t file_bytes, uint64_t* windows) {
  if (job_bytes < DropBehindAfter()) {
    *windows = file_bytes / kDropWindow;  // start from here once active
    return;
  }
  // Every kDropWindow bytes: ask the kernel to start writing back the window
  // just finished, and to drop the window kDropLag windows back (written
  // back by now). POSIX_FADV_DONTNEED never blocks: it starts asynchronous
  // writeback of dirty pages and drops the clean ones.
  for (; file_bytes >= (*windows + 1) * kDropWindow; ++*windows) {
    const uint64_t k = *windows;
    (void)::posix_fadvise(fd, static_cast<off_t>(k * kDropWindow), static_cast<off_t>(kDropWindow),
                          POSIX_FADV_DONTNEED);
    if (k >= kDropLag)
      (void)::posix_fadvise(fd, static_cast<off_t>((k - kDropLag) * kDropWindow),
                            static_cast<off_t>(kDropWindow), POSIX_FADV_DONTNEED);
  }
}

void OutputFile::DropBehind() {
  if (!job_bytes_) return;
  const uint64_t added = bytes_written_ - counted_bytes_;
  const uint64_t job = job_bytes_->fetch_add(added, std::memory_order_relaxed) + added;
  counted_bytes_ = bytes_written_;
  DropBehindStep(fd_, job, bytes_written_, &dropped_windows_);
}

absl::Status OutputFile::Append(std::string_view bytes) {
  if (fd_ < 0 && !in_memory_) return absl::FailedPreconditionError("output already closed");
  if (bytes.empty()) return absl::OkStatus();
  if (!gzip_) return WriteAll(bytes.data(), bytes.size());
  pending_.emplace_back(bytes);
  if (pending_.size() >= kGzipBatch) return CompressPending();
  return absl::OkStatus();
}

absl::Status OutputFile::CompressPending() {
  if (pending_.empty()) return absl::OkStatus();
  compressed_.resize(pending_.size());
  std::atomic<bool> failed{false};
  const int level = level_;
  tbb::parallel_for(size_t{0}, pending_.size(), [&](size_t k) {
    struct Deleter {
      void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
    };
    static thread_local std::unique_ptr<libdeflate_compressor, Deleter> c;
    static thread_local int c_level = -1;
    if (!c || c_level != level) {
      c.reset(libdeflate_alloc_compressor(level));
      c_level = level;
    }
    std::string& out = compressed_[k];
    out.resize(libdeflate_gzip_compress_bound(c.get(), pending_[k].size()));
    size_t n = libdeflate_gzip_compress(c.get(), pending_[k].data(), pending_[k].size(), out.data(),
                                        out.size());
    if (n == 0) failed = true;
    out.resize(n);
  });
  pending_.clear();
  if (failed) return absl::InternalError("gzip compression failed");
  for (const std::string& member : compressed_) {
    if (absl::Status s = WriteAll(member.data(), member.size()); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status OutputFile::Seal() {
  if (sealed_) return absl::OkStatus();
  if (fd_ < 0 && !in_memory_) return absl::FailedPreconditionError("output already closed");
  if (absl::Status s = CompressPending(); !s.ok()) return s;
  if (in_memory_) {
    sealed_ = true;
    return absl::OkStatus();
  }
  if (direct_) {
    if (absl::Status s = FinishDirect(); !s.ok()) return s;
  }
  direct_.reset();
  int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) {
    int e = errno;
    return absl::ErrnoToStatus(e, absl::StrCat("cannot close ", temp_path_));
  }
  sealed_ = true;
  return absl::OkStatus();
}

absl::Status OutputFile::Commit() {
  if (!sealed_) {
    if (absl::Status s = Seal(); !s.ok()) return s;
  }
  if (in_memory_) {
    committed_ = true;
    return absl::OkStatus();
  }
  if (::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
    int e = errno;
    ::unlink(temp_path_.c_str());
    return absl::ErrnoToStatus(e, absl::StrCat("cannot rename to ", final_path_));
  }
  committed_ = true;
  UnregisterTemporary(cleanup_slot_);
  cleanup_slot_ = -1;
  return absl::OkStatus();
}

void OutputFile::Abort() {
  StopDirect();
  direct_.reset();
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!committed_ && !temp_path_.empty()) ::unlink(temp_path_.c_str());
  UnregisterTemporary(cleanup_slot_);
  cleanup_slot_ = -1;
}

bool IsTemporaryName(std::string_view name) {
  return name.size() > 1 && name[0] == '.' && name.find(".tmp.") != std::string_view::npos;
}

}  // namespace tracemill::formats
