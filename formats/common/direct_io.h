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
// writes each full buffer at its file offset, in order, while the next ones
// fill, so the disk overlaps the caller's work. Without a thread (ulimit -u)
// full buffers are written inline. The caller writes the last, partial
// buffer itself (Drain first; Consume drops what it wrote): outputs clear
// O_DIRECT for their unaligned tail, spill files pad it to a block and
// write that block again when more bytes follow.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
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
  ~DirectRing();  // writes what was handed off, joins the thread, frees the buffers

  // Stage copies [p, p+n) into the filling buffer; every buffer that fills
  // is handed to the writer. Returns 0 or the errno of a failed write (this
  // call's or an earlier one's; after one, nothing more is written).
  int Stage(const char* p, size_t n);
  // Drain waits until every handed-off buffer is written. 0 or the errno.
  int Drain();
  // The filling buffer (never handed off yet), its length and file offset.
  char* filling() { return buf(filling_); }
  size_t fill_len() const { return fill_len_; }
  uint64_t offset() const { return offset_; }
  size_t buffer_bytes() const { return bytes_; }
  // Nanoseconds Stage has waited for a free buffer (the disk behind the
  // writer thread), or written a full one itself without a thread.
  int64_t waited_ns() const { return waited_ns_; }
  // Consume: the caller wrote the filling buffer's first `n` bytes (a
  // multiple of kDirectAlign) itself; the rest moves to the front.
  void Consume(size_t n);

 private:
  DirectRing() = default;
  char* buf(size_t k) { return mem_ + k * bytes_; }
  bool StartWriter();
  void Stop();
  void WriterLoop();

  int fd_ = -1;
  size_t count_ = 0, bytes_ = 0;
  char* mem_ = nullptr;  // count_ x bytes_, page-aligned (mmap'd)
  size_t filling_ = 0;
  size_t fill_len_ = 0;
  uint64_t offset_ = 0;  // file offset of the filling buffer
  std::vector<uint64_t> slot_offset_;  // file offset of each handed-off buffer
  std::mutex mu_;
  std::condition_variable cv_;
  // Buffers handed off and written since the start: buffer k is
  // buf(k % count_); submitted_ - written_ wait or are in flight, at most
  // count_ - 1 (one is being filled).
  uint64_t submitted_ = 0, written_ = 0;
  bool stop_ = false;
  int error_ = 0;  // errno of the first failed write
  std::thread thread_;
  bool no_thread_ = false;  // none could be started: full buffers are written inline
  int64_t waited_ns_ = 0;
};

}  // namespace tracemill::formats
