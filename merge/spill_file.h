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
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tracemill::merge {

class SpillFile {
 public:
  // Create makes an unlinked temporary in `dir`. Errors: the errno of
  // mkstemp(3) (kNotFound, kPermissionDenied, ...), naming the directory.
  static absl::StatusOr<std::unique_ptr<SpillFile>> Create(const std::string& dir);
  ~SpillFile();

  // Append buffers `bytes` at the end. Errors: kResourceExhausted on ENOSPC,
  // else the errno of write(2).
  absl::Status Append(std::string_view bytes);
  // Flush writes buffered bytes so that ReadAt sees them.
  absl::Status Flush();
  // ReadAt reads up to `n` bytes at `offset` into `out`; returns the count
  // (0 at end). Thread-safe (pread).
  absl::StatusOr<size_t> ReadAt(uint64_t offset, char* out, size_t n) const;
  // Discard frees the bytes [begin, end) once their run has been merged:
  // fallocate(2) punches a hole, so the page cache and disk blocks go back
  // now (and dirty pages are never written back), not when the file closes.
  // Thread-safe. Best effort: a file system without hole punching keeps
  // the bytes until the file closes; returns false then (not an error).
  bool Discard(uint64_t begin, uint64_t end) const;
  // Bytes of disk the file holds now (fstat's st_blocks x 512; 0 on error).
  uint64_t AllocatedBytes() const;

  // Offset where the next Append lands (bytes).
  uint64_t end_offset() const { return flushed_ + buffer_.size(); }

 private:
  SpillFile() = default;
  int fd_ = -1;
  uint64_t flushed_ = 0;
  std::string buffer_;
  std::string dir_;
};

}  // namespace tracemill::merge
