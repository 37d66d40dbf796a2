#pragma once
// gzip container: inflate every member of a (possibly multi-member) gzip file.
//
// libdeflate inflates one whole member per call (RFC 1952 allows any number of
// concatenated members; `gzip -c a b > ab.gz` and parallel compressors write
// them), so we loop, using `actual_in_nbytes` to find the next member. The
// output buffer starts at the last member's ISIZE trailer (or 4x the input)
// and doubles on LIBDEFLATE_INSUFFICIENT_SPACE. A member libdeflate rejects
// (truncated file, bad CRC, corrupt data) is inflated again with zlib's
// streaming inflater to salvage every byte before the damage: a crashed
// profiler leaves truncated .gz files, and what was written is still data.
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "formats/common/byte_buffer.h"

namespace tracemill::formats {

// True if `bytes` starts with the gzip magic 1f 8b.
bool IsGzip(std::string_view bytes);

// GunzipResult: what inflating found.
struct GunzipResult {
  int members = 0;       // members inflated completely
  // OK, or kDataLoss naming the compressed byte offset of the damaged member
  // and the reason ("truncated", "bad CRC", ...). On kDataLoss, the output
  // still holds everything inflated before the damage.
  absl::Status status;
  uint64_t error_offset = 0;  // compressed offset where the damage was found
};

// Gunzip inflates all members of `compressed` into `out` (replacing its
// content). At least `padding` zero bytes stay allocated after the data so
// parsers that need padding (simdjson's SIMDJSON_PADDING) use it without a
// copy. `max_output_bytes` bounds the inflated size; past it the result is
// kResourceExhausted.
GunzipResult Gunzip(std::string_view compressed, ByteBuffer* out, size_t padding = 0,
                    uint64_t max_output_bytes = UINT64_MAX);

// HeadResult: what inflating the head of a gzip file found.
struct HeadResult {
  // The inflated bytes reached the end of the input: every member was
  // inflated completely and nothing but members (or trailing zeros) follows.
  // Only meaningful when `compressed_is_whole` was true.
  bool whole = false;
  bool damaged = false;  // inflating stopped at corrupt or truncated data
};

// GunzipHead inflates at most `max_output_bytes` from the start of
// `compressed` (a prefix of a gzip file, or all of it when
// `compressed_is_whole`) into `out` (replacing its content), with zlib's
// streaming inflater, member after member. For the pre-scan, which needs the
// first few hundred KiB of a file's JSON, not the file: libdeflate only
// inflates whole members. It reads what `Gunzip` reads: member headers are
// parsed here and their optional header CRC skipped, as libdeflate does (a
// writer's wrong header CRC made the pre-scan see no data in a file the
// decode read; found by gzip_reader_fuzzer); the member CRC-32s are left to
// `Gunzip`.
HeadResult GunzipHead(std::string_view compressed, bool compressed_is_whole,
                      size_t max_output_bytes, std::string* out);

// InflatedSize returns how many bytes all the gzip members of `compressed`
// inflate to (up to the first damage), streaming through a 256 KiB buffer
// with zlib: for messages about inputs too large to inflate in memory.
uint64_t InflatedSize(std::string_view compressed);

}  // namespace tracemill::formats
