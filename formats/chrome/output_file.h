#pragma once
// OutputFile: an output written under a temporary name and renamed into place
// by Commit(), so a partial output is never visible under its final name.
//
// With gzip, every Append() chunk becomes one independent gzip member
// (RFC 1952 members may be concatenated; gunzip, Python's gzip and browsers
// read them all). Chunks are collected in batches of kGzipBatch and
// compressed in parallel (oneTBB parallel_for, one libdeflate compressor per
// thread), then written in order: one large output uses every core for its
// compression while formatting stays sequential.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "formats/common/direct_io.h"

namespace tracemill::formats {

// Chunks compressed together (memory: about 2 x kGzipBatch x chunk size).
inline constexpr size_t kGzipBatch = 4;

// Drop-behind: outputs are written once and not read back by the job, so
// once a job has written more output than 1/8 of physical memory (about
// where the kernel's background writeback starts anyway, dirty_background_ratio
// 10%), their page cache is given back as they grow (OutputFile::DropBehind):
// a 10 GB job then keeps a few windows per output in the page cache, not
// every byte it wrote, and the kernel does not reclaim under pressure (on
// this project's VMs that made writing 8x slower per byte at 10 GB than at
// 1 GB). Below that, writeback is left to the kernel, after the job: forcing
// it early made a 2.85 GB job 20% slower.
inline constexpr uint64_t kDropWindow = 16ull << 20;  // bytes
inline constexpr uint64_t kDropLag = 3;               // windows
// DropBehindAfter: bytes of output the process writes before drop-behind
// starts (1/8 of physical memory, sysconf).
uint64_t DropBehindAfter();
// DropBehindStep: the drop-behind of one file descriptor `fd` that holds
// `file_bytes` (written so far) in a job that has written `job_bytes`;
// `*windows` (start at 0) is the file's progress. Never blocks or fails.
void DropBehindStep(int fd, uint64_t job_bytes, uint64_t file_bytes, uint64_t* windows);

// Direct I/O: outputs are written once and never read back by the job, so
// they bypass the page cache (O_DIRECT) where the file system allows it:
// bytes are staged in kDirectBuffers aligned buffers of kDirectBufferBytes,
// and a writer thread per output (started at the first full buffer) writes
// full buffers in order while the next ones fill, so the disk overlaps
// formatting. With two 2 MiB buffers the formatting thread waited for the
// disk 0.11-0.13 s of a 1.5 s job (real16_resnet50, 2 threads: formatted
// bytes come in bursts of parallel batches); with six 1 MiB buffers (up to
// five full ones queued) 0.02-0.03 s, in 6 MiB per output instead of 4 (six
// of 2 MiB waited 0.01 s but raised the peak RSS under 512M by 2.6 %).
// The last partial block is written after clearing O_DIRECT; an output that
// never fills a buffer is written buffered in one call; without a thread
// (ulimit -u) full buffers are written inline. Buffered writes cost a page-cache copy per byte
// and, on VMs whose free memory the host reclaims, a host-side fault per
// page: 7.3 s of CPU for 2.8 GB against 0.3 s direct (bench/RESULTS.md).
inline constexpr size_t kDirectBufferBytes = 1u << 20;
inline constexpr size_t kDirectBuffers = 6;

class OutputFile {
 public:
  // Create opens `<dir>/.<name>.tmp.<pid>` next to `final_path`.
  // Errors: kPermissionDenied / kNotFound / kInternal from open(2).
  static absl::StatusOr<std::unique_ptr<OutputFile>> Create(std::string final_path, bool gzip,
                                                            int gzip_level = 6);
  // CreateInMemory: an output that collects its bytes in `memory()` instead of
  // a file (tests and fuzz targets); Commit() only marks it complete.
  static std::unique_ptr<OutputFile> CreateInMemory(bool gzip, int gzip_level = 6);
  ~OutputFile();  // aborts (removes the temporary) unless committed

  // gzip: whether the output is compressed (each Append one member).
  bool gzip() const { return gzip_; }
  // Append writes `bytes` (compressed as one member if gzip). Errors: kInternal
  // with strerror (ENOSPC, EIO).
  absl::Status Append(std::string_view bytes);
  // AppendWithCrc: Append, `crc` being the CRC-32 of `bytes` (computed by
  // the caller on another thread; combined here in O(log n) instead of a
  // pass over the bytes). A gzip file ignores it.
  absl::Status AppendWithCrc(std::string_view bytes, uint32_t crc);
  // ReserveWithCrc: AppendWithCrc, except that with direct I/O the copy of
  // `bytes` into the ring is left to `Copy` on the reservation it returns
  // (direct_io.h: any thread, beside later appends); `bytes` must stay
  // valid until then. Without direct I/O, or for a gzip file, the bytes are
  // appended at once and the reservation is none. A write error shows at a
  // later append or at Seal.
  absl::StatusOr<DirectRing::Reservation> ReserveWithCrc(std::string_view bytes, uint32_t crc);
  // OpenSpan: a plain file written with direct I/O: memory at the file's
  // end to format into in place (DirectRing::OpenSpan; `*room` bytes), or
  // nullptr (then Append). CommitSpan: the `n` bytes written at `p` (the
  // span's start) are the file's next: counted and in its CRC. Nothing may
  // be appended between the two.
  char* OpenSpan(size_t* room);
  void CommitSpan(const char* p, size_t n);
  // spans: whether OpenSpan can give memory (else Append, always).
  bool spans() const { return direct_ && !gzip_ && fd_ >= 0 && !in_memory_; }
  // EnableDropBehind: count this output's bytes into `job_bytes` (shared by
  // the outputs of one job, must outlive them) and drop its page cache
  // behind it once the job's total passes DropBehindAfter(). Off by default.
  void EnableDropBehind(std::atomic<uint64_t>* job_bytes) { job_bytes_ = job_bytes; }
  // EnableDirectIo: write this output with O_DIRECT from now on (comment at
  // kDirectBufferBytes). Returns false, and the output stays buffered, if
  // the file system refuses O_DIRECT (tmpfs before Linux 6.6, some FUSE) or
  // bytes were already written. Never fails the output.
  bool EnableDirectIo();
  bool direct_io() const { return direct_ != nullptr; }
  // Seal writes what is pending and closes the temporary, keeping it (and
  // its removal on interrupt) until Commit or Abort: an output written in
  // parts holds its finished parts this way, without their buffers, until
  // the last is done. Errors: as Append's and close(2)'s.
  absl::Status Seal();
  // SetFinalPath changes the name Commit renames to (same directory).
  void SetFinalPath(std::string final_path) { final_path_ = std::move(final_path); }
  // Commit closes and renames the temporary to the final path.
  absl::Status Commit();
  // Abort closes and removes the temporary.
  void Abort();

  uint64_t bytes_written() const { return bytes_written_; }
  // CRC-32 (gzip's, libdeflate_crc32) of the bytes written so far, as they
  // are on disk (compressed for gzip): `--resume` checks outputs against it.
  uint32_t crc32() const { return crc32_; }
  // Nanoseconds appends and reservations' copies have waited for the disk
  // (DirectRing::waited_ns; 0 for a file written through the page cache).
  int64_t disk_wait_ns() const;
  const std::string& final_path() const { return final_path_; }
  const std::string& temp_path() const { return temp_path_; }
  // The bytes written so far by an in-memory output.
  const std::string& memory() const { return memory_; }

 private:
  OutputFile() = default;
  // WriteAll writes [p, p+n) and adds it to the CRC (`crc`: its CRC-32, if
  // known).
  absl::Status WriteAll(const char* p, size_t n, std::optional<uint32_t> crc = std::nullopt);
  // Direct I/O: the ring (direct_io.h) stages bytes and writes full
  // buffers; FinishDirect drains it, writes the aligned part of the last
  // buffer directly and its tail (< kDirectAlign) buffered.
  absl::Status FinishDirect();
  // CloseRing closes the ring (DirectRing::Close) and keeps it in
  // closed_ring_.
  void CloseRing();
  absl::Status CompressPending();
  // Past the threshold above, after each kDropWindow bytes:
  // posix_fadvise(DONTNEED) on the window just
  // written (starts its writeback) and on the one kDropLag windows back
  // (drops its now clean pages). Best effort, never blocks, reports nothing.
  void DropBehind();

  std::string final_path_, temp_path_;
  int fd_ = -1;
  bool gzip_ = false;
  int level_ = 6;
  bool committed_ = false;
  bool sealed_ = false;
  bool in_memory_ = false;
  std::string memory_;
  uint64_t bytes_written_ = 0;
  uint64_t dropped_windows_ = 0;  // DropBehind has visited windows [0, this)
  uint64_t counted_bytes_ = 0;    // of bytes_written_, added to *job_bytes_
  std::atomic<uint64_t>* job_bytes_ = nullptr;
  uint32_t crc32_ = 0;
  std::vector<std::string> pending_;     // raw chunks waiting for compression
  std::vector<std::string> compressed_;  // their gzip members
  int cleanup_slot_ = -1;  // formats/common/cleanup.h
  std::unique_ptr<DirectRing> direct_;
  // The ring once closed (Seal, Abort): kept for the reservations' late
  // Copy calls, which find nothing left to do.
  std::unique_ptr<DirectRing> closed_ring_;
};

// TempPrefixFor returns the prefix of temporaries for outputs in a directory
// (".", then the file name): `CleanStaleTemporaries` removes `.*.tmp.*`.
bool IsTemporaryName(std::string_view file_name);

}  // namespace tracemill::formats
