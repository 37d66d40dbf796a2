#pragma once
// ConvertProgress: the convert job's progress line on a TTY ("decoded 12/64
// inputs, 812.3 MB/s, wrote 1 outputs"), fed by the decode and write nodes
// from any thread. Console throttles redraws to one per 100 ms.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "pipeline/console.h"

namespace tracemill::pipeline {

class ConvertProgress {
 public:
  // `inputs`: how many will be decoded; `overlap`: outputs are written
  // while inputs decode (then the line counts them from the start).
  ConvertProgress(Console& console, size_t inputs, bool overlap)
      : console_(console), inputs_(inputs), overlap_(overlap), start_(std::chrono::steady_clock::now()) {}

  // InputDecoded: one more input decoded (`bytes` read from disk); the
  // line is redrawn, forced after the last input of a two-stage job.
  void InputDecoded(uint64_t bytes) {
    bytes_ += bytes;
    const size_t d = ++decoded_;
    Show(d == inputs_ && !overlap_);
  }
  // OutputWritten: one more output written (or failed).
  void OutputWritten() {
    ++written_;
    Show(false);
  }
  // Show redraws the line (at most every 100 ms unless `force`).
  void Show(bool force) {
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const size_t d = decoded_.load();
    std::string line = absl::StrFormat("tracemill: decoded %zu/%zu inputs, %.1f MB/s", d, inputs_,
                                       secs > 0 ? bytes_.load() / 1e6 / secs : 0.0);
    if (overlap_ || d == inputs_) absl::StrAppend(&line, ", wrote ", written_.load(), " outputs");
    console_.Progress(line, force);
  }
  // End shows the final line and clears it.
  void End() {
    Show(true);
    console_.EndProgress();
  }

 private:
  Console& console_;
  const size_t inputs_;
  const bool overlap_;
  const std::chrono::steady_clock::time_point start_;
  std::atomic<size_t> decoded_{0}, written_{0};
  std::atomic<uint64_t> bytes_{0};
};

}  // namespace tracemill::pipeline
