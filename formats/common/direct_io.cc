#include "formats/common/direct_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <new>
#include <system_error>

#include "formats/common/large_alloc.h"

namespace tracemill::formats {
namespace {
std::atomic<bool> g_no_writer_threads{false};  // SetNoDirectWriterThreadsForTesting
}  // namespace

void SetNoDirectWriterThreadsForTesting(bool on) { g_no_writer_threads = on; }

bool ClearDirect(int fd) {
  const int fl = ::fcntl(fd, F_GETFL);
  return fl >= 0 && (fl & O_DIRECT) && ::fcntl(fd, F_SETFL, fl & ~O_DIRECT) == 0;
}

bool SetDirect(int fd) {
  const int fl = ::fcntl(fd, F_GETFL);
  return fl >= 0 && ::fcntl(fd, F_SETFL, fl | O_DIRECT) == 0;
}

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

std::unique_ptr<DirectRing> DirectRing::Create(int fd, size_t count, size_t bytes, uint64_t offset) {
  auto r = std::unique_ptr<DirectRing>(new DirectRing);
  r->fd_ = fd;
  r->count_ = std::max<size_t>(count, 2);
  r->bytes_ = bytes;
  r->offset_ = offset;
  r->slot_offset_.assign(r->count_, 0);
  try {
    r->mem_ = static_cast<char*>(AllocateLarge(r->count_ * r->bytes_));
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
  return r;
}

DirectRing::~DirectRing() {
  Stop();
  FreeLarge(mem_, count_ * bytes_);
}

void DirectRing::WriterLoop() {
  std::unique_lock lk(mu_);
  for (;;) {
    cv_.wait(lk, [this] { return written_ < submitted_ || stop_; });
    if (written_ == submitted_) return;  // stop, nothing pending
    const size_t slot = static_cast<size_t>(written_ % count_);
    const char* p = buf(slot);
    const uint64_t off = slot_offset_[slot];
    const bool failed = error_ != 0;  // after a failed write, write nothing more
    lk.unlock();
    int e = failed ? 0 : PwriteAll(fd_, p, bytes_, off);
    lk.lock();
    if (e && !error_) error_ = e;
    ++written_;
    cv_.notify_all();
  }
}

bool DirectRing::StartWriter() {
  if (g_no_writer_threads) {
    no_thread_ = true;
    return false;
  }
  try {
    thread_ = std::thread([this] { WriterLoop(); });
  } catch (const std::system_error&) {
    no_thread_ = true;
    return false;
  }
  return true;
}

void DirectRing::Stop() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

int DirectRing::Stage(const char* p, size_t n) {
  while (n > 0) {
    const size_t k = std::min(n, bytes_ - fill_len_);
    std::memcpy(filling() + fill_len_, p, k);
    fill_len_ += k;
    p += k;
    n -= k;
    if (fill_len_ < bytes_) break;
    if (!thread_.joinable() && (no_thread_ || !StartWriter())) {
      // No writer thread: write the full buffer here, then refill it.
      const auto t0 = std::chrono::steady_clock::now();
      if (error_ == 0) error_ = PwriteAll(fd_, filling(), bytes_, offset_);
      waited_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
      if (error_) return error_;
      offset_ += bytes_;
      fill_len_ = 0;
      continue;
    }
    std::unique_lock lk(mu_);
    // The next buffer to fill must not be waiting or in flight.
    auto free = [this] { return submitted_ + 1 - written_ < count_; };
    if (!free()) {
      const auto t0 = std::chrono::steady_clock::now();
      cv_.wait(lk, free);
      waited_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    }
    if (error_) return error_;
    slot_offset_[filling_] = offset_;
    ++submitted_;
    offset_ += bytes_;
    filling_ = (filling_ + 1) % count_;
    fill_len_ = 0;
    cv_.notify_all();
  }
  return 0;
}

int DirectRing::Drain() {
  std::unique_lock lk(mu_);
  cv_.wait(lk, [this] { return written_ == submitted_; });
  return error_;
}

void DirectRing::Consume(size_t n) {
  n = std::min(n, fill_len_);
  std::memmove(filling(), filling() + n, fill_len_ - n);
  fill_len_ -= n;
  offset_ += n;
}

}  // namespace tracemill::formats
