#pragma once
// MappedInput: a large local input file mapped read-only instead of read(2)
// into a buffer.
//
// read(2) of the 64-rank job's 2.8 GB copied every byte out of the page cache
// (`_copy_to_iter`, 4.4 % of a 2-thread run's samples) into buffers whose
// first touch the kernel zero-fills (3.3 % more: `clear_page_erms`); mapping
// the page cache costs neither (perf, bench/RESULTS.md, 2026-12-01 evening).
// simdjson reads up to SIMDJSON_PADDING bytes past the end: the mapping is
// followed by anonymous zero pages, so those bytes are readable. A file 7/8
// or more of whose pages are in the page cache is mapped in whole at Map
// (MADV_POPULATE_READ), not a fault every 16 pages as it is read.
//
// A mapped file that another process truncates while it is read would raise
// SIGBUS and kill the job. Mapped inputs are therefore registered, and a
// SIGBUS handler replaces the vanished pages of a registered mapping with
// zero pages and records the first byte that read as zeros (`shrunk_at`):
// the decoder sees the input end in zeros (a damaged file, its events up to
// there kept) and the caller reports the input as changed while read. A
// SIGBUS outside the registered mappings goes to the previous handler (or
// kills the process, as before).
//
// Only regular files of at least kMinMappedBytes on a local file system
// (ext4, XFS, btrfs, tmpfs, overlayfs, ZFS, F2FS) are mapped: on network
// and cluster file systems (NFS, Lustre, GPFS) page faults become remote
// reads, and large sequential read(2) calls suit them better.
#include <sys/stat.h>

#include <cstddef>
#include <optional>
#include <string_view>

namespace tracemill::formats {

inline constexpr size_t kMinMappedBytes = size_t{1} << 20;

// ShouldMapInput: true if `fd` (with `st` from fstat) is a regular file of at
// least kMinMappedBytes on a local file system (statfs f_type).
bool ShouldMapInput(int fd, const struct stat& st);

class MappedInput {
 public:
  MappedInput() = default;
  ~MappedInput() { Unmap(); }
  MappedInput(const MappedInput&) = delete;
  MappedInput& operator=(const MappedInput&) = delete;

  // Map maps the first `size` bytes of `fd` read-only, with `padding`
  // readable bytes after them. False (errno set) if it cannot: mmap failed or
  // all registration slots (one per mapping alive, 256) are taken; the caller
  // then reads the file. The fd may be closed after Map returns.
  bool Map(int fd, size_t size, size_t padding);
  // The file's bytes (size() of them); valid until Unmap.
  std::string_view view() const { return {data_, size_}; }
  // size() + padding: the bytes readable from view().data().
  size_t capacity() const { return size_ + padding_; }
  // The first byte offset that read as zeros because the file shrank while
  // mapped, or nullopt.
  std::optional<size_t> shrunk_at() const;
  // Unmap releases the mapping and its registration (idempotent).
  void Unmap();

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
  size_t padding_ = 0;
  size_t length_ = 0;  // bytes mapped in all, whole pages
  int slot_ = -1;
};

}  // namespace tracemill::formats
