#pragma once
// ReadWholeFile: a whole file into a reusable buffer, with spare capacity
// past its end for parsers that read ahead (simdjson's SIMDJSON_PADDING).
// Large local inputs of `convert` are mapped instead (mapped_input.h).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "formats/common/byte_buffer.h"

namespace tracemill::formats {

// ReadWholeFile replaces the contents of `out` with the file at `path`
// (one read(2) for a regular file, +1 byte to see EOF without growing;
// pipes and devices grow the buffer), leaving at least `padding` zero bytes of
// capacity past the data. A FIFO is opened without waiting for a writer
// (none: it reads as empty). Errors: the errno of open(2) ("cannot open")
// or read(2) ("cannot read") as a Status; ResourceExhausted when the file
// holds more than `max_bytes` (a pipe or device such as /dev/zero never
// ends: the read stops there instead of growing past the memory limit);
// `out` is then empty.
absl::Status ReadWholeFile(const std::string& path, size_t padding, ByteBuffer* out,
                           size_t max_bytes = SIZE_MAX);

// OpenInputFile: `path` opened read-only (close-on-exec) without waiting
// for a writer if it is a FIFO (open(2) would block until one came; the
// descriptor is non-blocking: clear O_NONBLOCK before reading it). -1 with
// errno set if it cannot be opened.
int OpenInputFile(const std::string& path);

// ReadTextFile: a small file (a manifest, an overview, a journal) whole
// into a string; nullopt if it cannot be opened (a read error ends the
// text where it happened).
std::optional<std::string> ReadTextFile(const std::string& path);

// ListFolder: the names in folder `dir` (not `.` and `..`), sorted;
// nullopt (errno set by opendir(3)) if it cannot be listed.
std::optional<std::vector<std::string>> ListFolder(const std::string& dir);

// FirstBytesHex: the first 16 bytes of `data` in hex ("53 74 61 72 ..."),
// how an error names what a file holds instead of what was expected.
std::string FirstBytesHex(std::string_view data);

}  // namespace tracemill::formats
