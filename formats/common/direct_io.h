#pragma once
// Writes that bypass the page cache (O_DIRECT), for the outputs
// (formats/chrome/output_file.h) and the spill files (merge/spill_file.h,
// which also stage their buffered runs in a DirectRing).
//
// Bytes written once and not read back by the job gain nothing from the
// page cache: a buffered write costs a copy per byte into fresh page-cache
// pages and, on VMs whose free memory the host reclaims, a host-side fault
// per page (7.3 s of CPU for 2.8 GB of output against 0.3 s direct,
// bench/RESULTS.md).
//
// DirectRing stages bytes in a ring of aligned buffers; a writer thread
// writes each full buffer at its file offset while the next ones fill, so
// the disk overlaps the caller's work. The bytes are reserved in file order
// by one caller and may be copied in by several threads at once (Reserve,
// then Copy): an output's formatted ranges are copied by the threads that
// formatted them, not by its serial append stage. A serial caller may instead
// write in place into the filling buffer (OpenSpan, CommitSpan): the serial
// loop formats events there. Without a thread (ulimit -u)
// full buffers are written inline. The caller writes the last, partial
// buffer itself (Drain first; Consume drops what it wrote): outputs clear
// O_DIRECT for their unaligned tail, spill files pad it to a block and
// write that block again when more bytes follow.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace tracemill::formats {

inline constexpr size_t kDirectAlign = 4096;  // offset, length and address alignment

// ClearDirect turns O_DIRECT off on `fd`; true if it was on.
bool ClearDirect(int fd);
// SetDirect turns O_DIRECT on for `fd`; false if the file system refuses it
// (tmpfs before Linux 6.6, some FUSE).
bool SetDirect(int fd);
// PwriteAll writes [p, p+n) at `off`; with O_DIRECT, p, n and off are
// kDirectAlign-aligned. A file system that takes O_DIRECT at fcntl but
// refuses the write (EINVAL: a larger alignment) gets the same bytes
// buffered, O_DIRECT cleared. Returns 0 or the errno.
int PwriteAll(int fd, const char* p, size_t n, uint64_t off);

// SetNoDirectWriterThreadsForTesting: when on, rings start no writer thread,
// as when the process cannot create one (tests only).
void SetNoDirectWriterThreadsForTesting(bool on);

class DirectRing {
 public:
  // Create: `count` (>= 2) buffers of `bytes` (a multiple of kDirectAlign)
  // for `fd`, the first filled for file offset `offset` (aligned). The
  // buffers come from the block pool (large_alloc.h). nullptr if the memory
  // cannot be had. The thread starts at the first full buffer.
  static std::unique_ptr<DirectRing> Create(int fd, size_t count, size_t bytes, uint64_t offset);
  ~DirectRing();  // Close()

  // A reservation: the ring's pieces [first, end) (a piece is the part of
  // a reserved span that falls in one buffer), or none (ring nullptr).
  struct Reservation {
    DirectRing* ring = nullptr;
    uint64_t first = 0, end = 0;
  };
  // Reserve takes the next `n` bytes of the file for [p, p+n), which must
  // stay valid until Copy(the reservation) returns; Copy then puts them in
  // the ring. One caller at a time, in file order; never waits. Returns
  // none (and Copy has nothing to do) after a failed write or Close.
  Reservation Reserve(const char* p, size_t n);
  // Copy copies the reservation's bytes into their buffers, handing off
  // each buffer it fills (the writer thread writes full buffers in any
  // order, each at its own offset). Any thread, any order, beside Reserve
  // and other Copy calls. Waits only for the disk: a piece whose buffer
  // still holds earlier bytes first copies the earlier reservations' pieces
  // no thread has taken, then waits for their copies and the writes.
  // Returns 0 or the errno of a failed write (after one, nothing more is
  // copied or written).
  int Copy(const Reservation& r);
  // Stage copies [p, p+n) into the filling buffer: Copy(Reserve(p, n)).
  int Stage(const char* p, size_t n);
  // OpenSpan (one serial caller, as Stage's): the filling buffer's free
  // bytes, to be written in place instead of staged; `*room` is fewer than
  // its rest (the buffer never fills this way: Stage fills and hands it
  // off). nullptr if reserved bytes wait, after an error or Close, or while
  // its slot holds an earlier buffer. CommitSpan: `n` (<= room) bytes were
  // written there; nothing else may be staged or reserved in between.
  char* OpenSpan(size_t* room);
  void CommitSpan(size_t n);
  // Drain copies what is reserved and waits until every handed-off buffer
  // is written. 0 or the errno.
  int Drain();
  // Close drops the reserved bytes no Copy has taken (Drain first to keep
  // them), waits for the copies under way, writes what was handed off,
  // stops the writer thread and frees the buffers. Copy calls that come
  // later find their pieces done (the object must outlive them).
  void Close();
  // After Drain: the filling buffer (never handed off yet), its length
  // and file offset.
  char* filling() { return buf(filling_); }
  size_t fill_len() const { return fill_len_; }
  uint64_t offset() const { return offset_; }
  size_t buffer_bytes() const { return bytes_; }
  // Nanoseconds copies have waited for a free buffer (the disk behind the
  // writer thread), or written a full one themselves without a thread.
  int64_t waited_ns() const { return waited_ns_.load(std::memory_order_relaxed); }
  // Consume (after Drain): the caller wrote the filling buffer's first `n`
  // bytes (a multiple of kDirectAlign) itself; the rest moves to the front.
  void Consume(size_t n);

 private:
  // A piece's state: reserved, taken by a copier (waiting for its buffer),
  // being copied (outside the lock), done.
  enum PieceState : uint8_t { kReserved, kTaken, kCopying, kDone };
  struct Piece {
    const char* src;
    size_t n;
    int64_t gen;       // the buffer's sequence number (its slot: gen % count_)
    size_t at;         // offset in the buffer
    uint64_t buf_off;  // the buffer's file offset
    PieceState state;
  };
  // A slot's state: taking copies for buffer gen_[slot], handed off (full),
  // being written, written (free for buffer gen_[slot] + count_).
  enum SlotState : uint8_t { kFilling, kFull, kWriting, kWritten };

  DirectRing() = default;
  char* buf(size_t k) { return mem_ + k * bytes_; }
  Piece* PieceAt(uint64_t seq) { return seq < first_piece_ ? nullptr : &pieces_[seq - first_piece_]; }
  // CopyPiece copies piece `seq` (kReserved; the lock held, released while
  // copying and waiting).
  void CopyPiece(std::unique_lock<std::mutex>& lk, uint64_t seq);
  // EarliestReserved: the first kReserved piece before `seq`, or none.
  std::optional<uint64_t> EarliestReserved(uint64_t before) const;
  // HandOff: slot `slot` is full: the writer thread's, or written here
  // without one.
  void HandOff(std::unique_lock<std::mutex>& lk, size_t slot);
  // WriteSlot writes full slot `slot` at its offset (nothing after an
  // error; the lock released meanwhile) and marks it written.
  void WriteSlot(std::unique_lock<std::mutex>& lk, size_t slot);
  bool StartWriter();
  void WriterLoop();
  int64_t Since(std::chrono::steady_clock::time_point t0) const;

  int fd_ = -1;
  size_t count_ = 0, bytes_ = 0;
  char* mem_ = nullptr;  // count_ x bytes_, page-aligned (mmap'd)
  // The reservation cursor: buffer cur_gen_ (slot filling_, file offset
  // offset_) holds fill_len_ reserved bytes.
  int64_t cur_gen_ = 0;
  size_t filling_ = 0;
  size_t fill_len_ = 0;
  uint64_t offset_ = 0;
  std::deque<Piece> pieces_;  // reserved and not yet all done, in file order
  uint64_t first_piece_ = 0;  // sequence number of pieces_.front()
  std::vector<int64_t> gen_;  // per slot: the buffer it holds (at first slot - count_, written)
  std::vector<size_t> copied_;
  std::vector<SlotState> slot_state_;
  std::vector<uint64_t> slot_offset_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool closed_ = false;
  int error_ = 0;  // errno of the first failed write
  std::thread thread_;
  bool no_thread_ = false;  // none could be started: full buffers are written inline
  std::atomic<int64_t> waited_ns_{0};
};

}  // namespace tracemill::formats
