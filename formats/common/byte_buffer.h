#pragma once
// ByteBuffer: a growable byte buffer that never zero-fills.
//
// Reading a 35 MB trace into a std::string spent more time in memset (resize
// zero-fills) and first-touch page faults than simdjson spent parsing it
// (perf, bench/RESULTS.md). Workers keep one ByteBuffer each and reuse it
// across inputs, so the pages are touched once per thread, not per file.
#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>

namespace tracemill::formats {

class ByteBuffer {
 public:
  char* data() { return data_.get(); }
  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  std::string_view view() const { return {data_.get(), size_}; }

  // Reserve grows the allocation to at least `n` bytes, keeping the content.
  void Reserve(size_t n) {
    if (n <= capacity_) return;
    size_t cap = capacity_ ? capacity_ : 4096;
    while (cap < n) cap += cap / 2 + 4096;
    std::unique_ptr<char[]> next(new char[cap]);  // uninitialized
    if (size_) std::memcpy(next.get(), data_.get(), size_);
    data_ = std::move(next);
    capacity_ = cap;
  }
  // Resize sets the size (growing the allocation if needed); new bytes are
  // uninitialized.
  void Resize(size_t n) {
    Reserve(n);
    size_ = n;
  }
  void Clear() { size_ = 0; }
  // Release frees the allocation.
  void Release() {
    data_.reset();
    size_ = capacity_ = 0;
  }

 private:
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace tracemill::formats
