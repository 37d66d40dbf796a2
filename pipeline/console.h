#pragma once
// Console: stderr for worker threads, shared by `tracemill convert` and
// `tracemill csp`. Lines are printed whole, one at a time, and clear a
// progress line first; the progress line (TTY only, off with --quiet) is
// redrawn at most every 100 ms unless forced.
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

namespace tracemill::pipeline {

class Console {
 public:
  // `show_progress`: stderr is a TTY and the user did not ask for quiet.
  explicit Console(bool show_progress) : show_progress_(show_progress) {}
  void Line(const std::string& s) {
    std::lock_guard<std::mutex> lock(mu_);
    if (progress_shown_) std::fputs("\r\033[K", stderr);
    std::fprintf(stderr, "%s\n", s.c_str());
    progress_shown_ = false;
  }
  // Progress replaces the progress line; skipped if another thread is
  // printing or (unless `force`) the last redraw was under 100 ms ago.
  void Progress(const std::string& s, bool force = false) {
    if (!show_progress_) return;
    auto now = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
    if (!lock.owns_lock()) return;
    if (!force && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    std::fprintf(stderr, "\r\033[K%s", s.c_str());
    std::fflush(stderr);
    progress_shown_ = true;
  }
  void EndProgress() {
    std::lock_guard<std::mutex> lock(mu_);
    if (progress_shown_) std::fputs("\r\033[K", stderr);
    progress_shown_ = false;
  }

 private:
  const bool show_progress_;
  std::mutex mu_;
  std::chrono::steady_clock::time_point last_{};
  bool progress_shown_ = false;
};

// BaseName: the last component of a `/`-separated path (a view into it).
inline std::string_view BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace tracemill::pipeline
