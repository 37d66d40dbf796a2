#pragma once
// OutputFile: an output written under a temporary name and renamed into place
// by Commit(), so a partial output is never visible under its final name.
//
// With gzip, every Append() chunk becomes one independent gzip member
// (RFC 1952 members may be concatenated; gunzip, Python's gzip and browsers
// read them all), which is what lets chunks be compressed in parallel later.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tracemill::formats {

class OutputFile {
 public:
  // Create opens `<dir>/.<name>.tmp.<pid>` next to `final_path`.
  // Errors: kPermissionDenied / kNotFound / kInternal from open(2).
  static absl::StatusOr<std::unique_ptr<OutputFile>> Create(std::string final_path, bool gzip,
                                                            int gzip_level = 6);
  ~OutputFile();  // aborts (removes the temporary) unless committed

  // Append writes `bytes` (compressed as one member if gzip). Errors: kInternal
  // with strerror (ENOSPC, EIO).
  absl::Status Append(std::string_view bytes);
  // Commit closes and renames the temporary to the final path.
  absl::Status Commit();
  // Abort closes and removes the temporary.
  void Abort();

  uint64_t bytes_written() const { return bytes_written_; }
  const std::string& final_path() const { return final_path_; }
  const std::string& temp_path() const { return temp_path_; }

 private:
  OutputFile() = default;
  absl::Status WriteAll(const char* p, size_t n);

  std::string final_path_, temp_path_;
  int fd_ = -1;
  bool gzip_ = false;
  int level_ = 6;
  bool committed_ = false;
  uint64_t bytes_written_ = 0;
  std::string compressed_;
  void* compressor_ = nullptr;
  int cleanup_slot_ = -1;  // formats/common/cleanup.h
};

// TempPrefixFor returns the prefix of temporaries for outputs in a directory
// (".", then the file name): `CleanStaleTemporaries` removes `.*.tmp.*`.
bool IsTemporaryName(std::string_view file_name);

}  // namespace tracemill::formats
