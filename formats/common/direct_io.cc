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
  r->copied_.assign(r->count_, 0);
  r->slot_state_.assign(r->count_, kWritten);
  for (size_t k = 0; k < r->count_; ++k) r->gen_.push_back(static_cast<int64_t>(k) - static_cast<int64_t>(r->count_));
  try {
    r->mem_ = static_cast<char*>(AllocateLarge(r->count_ * r->bytes_));
    // Filled whole, buffer after buffer: its pages made at once.
    if (r->count_ * r->bytes_ >= kPooledMinBytes) Prefault(r->mem_, r->count_ * r->bytes_);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
  return r;
}

DirectRing::~DirectRing() { Close(); }

int64_t DirectRing::Since(std::chrono::steady_clock::time_point t0) const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
}

void DirectRing::WriterLoop() {
  std::unique_lock lk(mu_);
  for (;;) {
    // Any full buffer, the earliest first: each has its own offset.
    size_t slot = count_;
    cv_.wait(lk, [&] {
      slot = count_;
      for (size_t k = 0; k < count_; ++k)
        if (slot_state_[k] == kFull && (slot == count_ || gen_[k] < gen_[slot])) slot = k;
      return slot < count_ || stop_;
    });
    if (slot == count_) return;  // stop, nothing handed off
    WriteSlot(lk, slot);
    cv_.notify_all();
  }
}

void DirectRing::WriteSlot(std::unique_lock<std::mutex>& lk, size_t slot) {
  slot_state_[slot] = kWriting;
  const bool failed = error_ != 0;  // after a failed write, write nothing more
  const uint64_t off = slot_offset_[slot];
  lk.unlock();
  int e = failed ? 0 : PwriteAll(fd_, buf(slot), bytes_, off);
  lk.lock();
  if (e && !error_) error_ = e;
  slot_state_[slot] = kWritten;
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

void DirectRing::HandOff(std::unique_lock<std::mutex>& lk, size_t slot) {
  slot_state_[slot] = kFull;
  if (thread_.joinable() || (!no_thread_ && StartWriter())) return;  // notified by the caller
  // No writer thread: write the full buffer here.
  const auto t0 = std::chrono::steady_clock::now();
  WriteSlot(lk, slot);
  waited_ns_.fetch_add(Since(t0), std::memory_order_relaxed);
}

DirectRing::Reservation DirectRing::Reserve(const char* p, size_t n) {
  std::lock_guard lk(mu_);
  if (error_ || closed_ || n == 0) return {};
  Reservation r{this, first_piece_ + pieces_.size(), 0};
  while (n > 0) {
    const size_t k = std::min(n, bytes_ - fill_len_);
    pieces_.push_back({p, k, cur_gen_, fill_len_, offset_, kReserved});
    fill_len_ += k;
    p += k;
    n -= k;
    if (fill_len_ == bytes_) {  // the next buffer
      ++cur_gen_;
      filling_ = static_cast<size_t>(cur_gen_ % static_cast<int64_t>(count_));
      offset_ += bytes_;
      fill_len_ = 0;
    }
  }
  r.end = first_piece_ + pieces_.size();
  return r;
}

std::optional<uint64_t> DirectRing::EarliestReserved(uint64_t before) const {
  for (size_t i = 0; i < pieces_.size() && first_piece_ + i < before; ++i)
    if (pieces_[i].state == kReserved) return first_piece_ + i;
  return std::nullopt;
}

void DirectRing::CopyPiece(std::unique_lock<std::mutex>& lk, uint64_t seq) {
  Piece* pc = PieceAt(seq);  // deque references stay valid while it grows at the back
  pc->state = kTaken;
  const size_t slot = static_cast<size_t>(pc->gen % static_cast<int64_t>(count_));
  // The slot holds this buffer already, or an earlier one that must be
  // written first: its missing bytes are earlier pieces (copied here if no
  // thread has taken them), then the disk.
  while (gen_[slot] != pc->gen && !(gen_[slot] + static_cast<int64_t>(count_) == pc->gen && slot_state_[slot] == kWritten) &&
         !error_ && !closed_) {
    if (std::optional<uint64_t> earlier = EarliestReserved(seq)) {
      CopyPiece(lk, *earlier);
      continue;
    }
    const auto t0 = std::chrono::steady_clock::now();
    cv_.wait(lk);
    waited_ns_.fetch_add(Since(t0), std::memory_order_relaxed);
  }
  const bool copy = !error_ && !closed_;
  if (copy && gen_[slot] != pc->gen) {
    gen_[slot] = pc->gen;
    copied_[slot] = 0;
    slot_state_[slot] = kFilling;
  }
  if (copy) {
    pc->state = kCopying;
    lk.unlock();
    std::memcpy(buf(slot) + pc->at, pc->src, pc->n);
    lk.lock();
    slot_offset_[slot] = pc->buf_off;
    if ((copied_[slot] += pc->n) == bytes_) HandOff(lk, slot);
  }
  pc->state = kDone;
  while (!pieces_.empty() && pieces_.front().state == kDone) {
    pieces_.pop_front();
    ++first_piece_;
  }
  cv_.notify_all();
}

int DirectRing::Copy(const Reservation& r) {
  std::unique_lock lk(mu_);
  for (uint64_t seq = r.first; seq < r.end; ++seq) {
    Piece* pc = PieceAt(seq);
    if (pc && pc->state == kReserved) CopyPiece(lk, seq);
    // Taken by another thread (helping): wait for it.
    cv_.wait(lk, [&] { return PieceAt(seq) == nullptr || PieceAt(seq)->state == kDone; });
  }
  return error_;
}

int DirectRing::Stage(const char* p, size_t n) {
  {
    // The serial caller's common case (a spill file's events, one by one):
    // nothing reserved waits and the bytes fit in the filling buffer, whose
    // slot is already its own: copied here, without a piece.
    std::lock_guard lk(mu_);
    if (error_) return error_;
    if (pieces_.empty() && !closed_ && n < bytes_ - fill_len_ && gen_[filling_] == cur_gen_) {
      std::memcpy(buf(filling_) + fill_len_, p, n);
      fill_len_ += n;
      copied_[filling_] += n;
      slot_offset_[filling_] = offset_;
      return 0;
    }
  }
  const Reservation r = Reserve(p, n);
  if (r.ring) return Copy(r);
  std::lock_guard lk(mu_);
  return error_;
}

char* DirectRing::OpenSpan(size_t* room) {
  std::lock_guard lk(mu_);
  if (error_ || closed_ || !pieces_.empty() || gen_[filling_] != cur_gen_ || fill_len_ + 1 >= bytes_) return nullptr;
  *room = bytes_ - fill_len_ - 1;
  return buf(filling_) + fill_len_;
}

void DirectRing::CommitSpan(size_t n) {
  std::lock_guard lk(mu_);
  fill_len_ += n;
  copied_[filling_] += n;
  slot_offset_[filling_] = offset_;
}

int DirectRing::Drain() {
  std::unique_lock lk(mu_);
  while (std::optional<uint64_t> seq = EarliestReserved(UINT64_MAX)) CopyPiece(lk, *seq);
  cv_.wait(lk, [this] {
    if (!pieces_.empty()) return false;
    for (SlotState s : slot_state_)
      if (s == kFull || s == kWriting) return false;
    return true;
  });
  return error_;
}

void DirectRing::Close() {
  if (!mem_) return;
  {
    // Reserved pieces no Copy took are dropped (an output given up); those
    // being copied finish; what was handed off is written.
    std::unique_lock lk(mu_);
    closed_ = true;
    for (Piece& pc : pieces_)
      if (pc.state == kReserved) pc.state = kDone;
    cv_.notify_all();
    cv_.wait(lk, [this] {
      return std::none_of(pieces_.begin(), pieces_.end(), [](const Piece& pc) { return pc.state != kDone; });
    });
    first_piece_ += pieces_.size();
    pieces_.clear();
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  FreeLarge(mem_, count_ * bytes_);
  mem_ = nullptr;
}

void DirectRing::Consume(size_t n) {
  n = std::min(n, fill_len_);
  std::memmove(filling(), filling() + n, fill_len_ - n);
  fill_len_ -= n;
  offset_ += n;
  copied_[filling_] -= n;
}

}  // namespace tracemill::formats
