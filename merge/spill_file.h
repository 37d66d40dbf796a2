#pragma once
// SpillFile: an append-only scratch file for sorted runs that do not fit in
// the memory budget.
//
// Created in `--tmp-dir` ($TMPDIR by default: node-local scratch under Slurm
// and Kubernetes) and unlinked at once, so it disappears when its descriptor
// closes, whatever ends the process (success, error, SIGINT/SIGTERM, even
// SIGKILL). One file per decode worker: runs are regions of it, read back
// with pread(2), so the number of open files is bounded by the number of
// workers, not by the number of inputs (no EMFILE with 4,096 inputs and
// `ulimit -n 256`).
//
// Page cache or direct I/O, per run (the caller chooses, UseDirect): a
// spilled run is written once and read back once. Through the page cache
// that costs a copy into fresh pages each way, but while the machine has
// memory to spare the bytes never reach the disk (a merged run is punched
// out first): 64 real ranks under --memory-limit 512M ran 25 % slower with
// every run written and read direct. Where memory is short (a cgroup limit
// counts the page cache), buffered spill bytes push out the inputs' pages
// and throttle the writer: the 512-rank job in a 6 GiB cgroup ran 14 %
// faster direct. Direct runs are staged in kSpillBuffers buffers of
// kSpillBufferBytes and written by the ring's thread (direct_io.h); Flush
// writes the partial last block padded with zeros and writes that block
// again, whole, when more bytes follow (the padding is never read: runs end
// where their bytes end). A run is read the way it was written: direct
// reads (on a descriptor of their own) go through an aligned per-thread
// buffer of kSpillReadBytes.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "formats/common/direct_io.h"

namespace tracemill::merge {

inline constexpr size_t kSpillBufferBytes = 256u << 10;
inline constexpr size_t kSpillBuffers = 16;  // 4 MiB per spill file
// Direct reads go through a per-thread aligned buffer of this size.
inline constexpr size_t kSpillReadBytes = 1u << 20;

class SpillFile {
 public:
  // Create makes an unlinked temporary in `dir`, written through the page
  // cache until UseDirect(true). `direct_ok`: whether O_DIRECT may be used
  // at all (--no-direct-io: false). Errors: the errno of mkstemp(3) or
  // open(2) (kNotFound, kPermissionDenied, ...), naming the directory;
  // kResourceExhausted without memory for the buffers.
  static absl::StatusOr<std::unique_ptr<SpillFile>> Create(const std::string& dir, bool direct_ok = true);
  ~SpillFile();

  // Append buffers `bytes` at the end. Errors: kResourceExhausted on ENOSPC,
  // else the errno of write(2).
  absl::Status Append(std::string_view bytes);
  // Flush writes buffered bytes so that ReadAt sees them (waits for the
  // writer thread).
  absl::Status Flush();
  // ReadAt reads up to `n` bytes at `offset` into `out`, direct if the
  // bytes were written direct (`direct`); returns the count (0 at end).
  // Thread-safe (pread).
  absl::StatusOr<size_t> ReadAt(uint64_t offset, char* out, size_t n, bool direct) const;
  // Discard frees the bytes [begin, end) once their run has been merged:
  // fallocate(2) punches a hole, so the page cache and disk blocks go back
  // now (and dirty pages are never written back), not when the file closes.
  // Thread-safe. Best effort: a file system without hole punching keeps
  // the bytes until the file closes; returns false then (not an error).
  bool Discard(uint64_t begin, uint64_t end) const;
  // Bytes of disk the file holds now (fstat's st_blocks x 512; 0 on error).
  uint64_t AllocatedBytes() const;

  // Offset where the next Append lands (bytes).
  uint64_t end_offset() const { return ring_->offset() + ring_->fill_len(); }
  // UseDirect: the bytes appended from now on bypass the page cache (on)
  // or not. Call between runs (after Flush). Returns whether they do: not
  // where the file system refuses O_DIRECT or Create said not to.
  bool UseDirect(bool on);
  // Whether appended bytes bypass the page cache now.
  bool direct() const { return direct_; }

 private:
  SpillFile() = default;
  absl::Status WriteError(int e) const;
  int fd_ = -1;         // writes (O_DIRECT while direct_)
  int read_fd_ = -1;    // reads through the page cache
  int direct_fd_ = -1;  // direct reads (-1: none)
  bool direct_ = false;
  mutable std::atomic<bool> direct_reads_ok_{true};  // false once refused
  std::unique_ptr<formats::DirectRing> ring_;
  std::string dir_;
};

}  // namespace tracemill::merge
