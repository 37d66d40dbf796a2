#include "formats/chrome/output_file.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <unistd.h>
#include <zlib.h>

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
#include "formats/common/direct_io.h"
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

bool OutputFile::EnableDirectIo() {
  if (in_memory_ || fd_ < 0 || direct_ || bytes_written_ != 0) return false;
  if (!SetDirect(fd_)) return false;
  direct_ = DirectRing::Create(fd_, kDirectBuffers, kDirectBufferBytes, 0);
  if (!direct_) {
    (void)ClearDirect(fd_);
    return false;
  }
  return true;
}

absl::Status OutputFile::FinishDirect() {
  DirectRing& d = *direct_;
  int e = d.Drain();
  // An output that never filled a buffer (offset 0) is written buffered in
  // one call: for a small file O_DIRECT's synchronous write only costs.
  const size_t aligned = d.offset() == 0 ? 0 : d.fill_len() / kDirectAlign * kDirectAlign;
  if (!e && aligned) e = PwriteAll(fd_, d.filling(), aligned, d.offset());
  if (!e && d.fill_len() > aligned) {
    (void)ClearDirect(fd_);
    e = PwriteAll(fd_, d.filling() + aligned, d.fill_len() - aligned, d.offset() + aligned);
  }
  CloseRing();
  if (e) return absl::ErrnoToStatus(e, absl::StrCat("cannot write ", temp_path_));
  return absl::OkStatus();
}

absl::Status OutputFile::WriteAll(const char* p, size_t n, std::optional<uint32_t> crc) {
  if (crc) {  // whole or not at all: a failed write reports its error
    crc32_ = static_cast<uint32_t>(crc32_combine(crc32_, *crc, static_cast<z_off_t>(n)));
  }
  if (in_memory_) {
    if (!crc) crc32_ = libdeflate_crc32(crc32_, p, n);
    memory_.append(p, n);
    bytes_written_ += n;
    return absl::OkStatus();
  }
  if (direct_) {
    if (!crc) crc32_ = libdeflate_crc32(crc32_, p, n);
    bytes_written_ += n;
    if (int e = direct_->Stage(p, n)) return absl::ErrnoToStatus(e, absl::StrCat("cannot write ", temp_path_));
    return absl::OkStatus();
  }
  while (n > 0) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      return absl::ErrnoToStatus(e, absl::StrCat("cannot write ", temp_path_));
    }
    if (!crc) crc32_ = libdeflate_crc32(crc32_, p, static_cast<size_t>(w));
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

int64_t OutputFile::disk_wait_ns() const {
  const DirectRing* ring = direct_ ? direct_.get() : closed_ring_.get();
  return ring ? ring->waited_ns() : 0;
}

absl::Status OutputFile::AppendWithCrc(std::string_view bytes, uint32_t crc) {
  if (gzip_ || (fd_ < 0 && !in_memory_) || bytes.empty()) return Append(bytes);
  return WriteAll(bytes.data(), bytes.size(), crc);
}

absl::StatusOr<DirectRing::Reservation> OutputFile::ReserveWithCrc(std::string_view bytes, uint32_t crc) {
  if (!direct_ || gzip_ || fd_ < 0 || bytes.empty()) {
    if (absl::Status s = AppendWithCrc(bytes, crc); !s.ok()) return s;
    return DirectRing::Reservation{};
  }
  const DirectRing::Reservation r = direct_->Reserve(bytes.data(), bytes.size());
  if (!r.ring) {  // an earlier write failed: its error
    if (absl::Status s = AppendWithCrc(bytes, crc); !s.ok()) return s;
    return r;
  }
  crc32_ = static_cast<uint32_t>(crc32_combine(crc32_, crc, static_cast<z_off_t>(bytes.size())));
  bytes_written_ += bytes.size();
  return r;
}

char* OutputFile::OpenSpan(size_t* room) {
  if (!spans()) return nullptr;
  return direct_->OpenSpan(room);
}

void OutputFile::CommitSpan(const char* p, size_t n) {
  if (n == 0) return;
  crc32_ = libdeflate_crc32(crc32_, p, n);
  bytes_written_ += n;
  direct_->CommitSpan(n);
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
  CloseRing();
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

void OutputFile::CloseRing() {
  if (!direct_) return;
  direct_->Close();
  closed_ring_ = std::move(direct_);
}

void OutputFile::Abort() {
  CloseRing();  // writes what was handed off, then stops
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
