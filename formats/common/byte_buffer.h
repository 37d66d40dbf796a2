#pragma once
// ByteBuffer: a growable byte buffer that never zero-fills.
//
// Reading a 35 MB trace into a std::string spent more time in memset (resize
// zero-fills) and first-touch page faults than simdjson spent parsing it
// (perf, bench/RESULTS.md). Workers keep one ByteBuffer each and reuse it
// across inputs, so the pages are touched once per thread, not per file;
// buffers of 256 KiB and more are mapped and pooled (large_alloc.h).
#include <cstddef>
#include <cstring>
#include <string_view>
#include <utility>

#include "formats/common/large_alloc.h"

namespace tracemill::formats {

class ByteBuffer {
 public:
  ByteBuffer() = default;
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;
  ByteBuffer(ByteBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        capacity_(std::exchange(o.capacity_, 0)) {}
  ByteBuffer& operator=(ByteBuffer&& o) noexcept {
    if (this != &o) {
      Release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      capacity_ = std::exchange(o.capacity_, 0);
    }
    return *this;
  }
  ~ByteBuffer() { Release(); }

  char* data() { return data_; }
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  std::string_view view() const { return {data_, size_}; }

  // Reserve grows the allocation to at least `n` bytes, keeping the content.
  void Reserve(size_t n) {
    if (n <= capacity_) return;
    size_t cap = capacity_ ? capacity_ : 4096;
    while (cap < n) cap += cap / 2 + 4096;
    char* next = static_cast<char*>(AllocateLarge(cap));  // uninitialized
    if (size_) std::memcpy(next, data_, size_);
    FreeLarge(data_, capacity_);
    data_ = next;
    capacity_ = cap;
  }
  // Resize sets the size (growing the allocation if needed); new bytes are
  // uninitialized.
  void Resize(size_t n) {
    Reserve(n);
    size_ = n;
  }
  void Clear() { size_ = 0; }
  // Extend adds `n` uninitialized bytes at the end and returns where they
  // begin (valid until the next call that grows the buffer).
  char* Extend(size_t n) {
    Reserve(size_ + n);
    char* p = data_ + size_;
    size_ += n;
    return p;
  }
  // Truncate drops the bytes from `n` on (`n` <= size()).
  void Truncate(size_t n) { size_ = n; }
  // EraseFront drops the first `n` bytes (`n` <= size()), moving the rest
  // to the front.
  void EraseFront(size_t n) {
    if (n == 0) return;
    std::memmove(data_, data_ + n, size_ - n);
    size_ -= n;
  }
  // Append copies `bytes` to the end.
  void Append(std::string_view bytes) {
    if (!bytes.empty()) std::memcpy(Extend(bytes.size()), bytes.data(), bytes.size());
  }
  // ZeroPadding makes the `padding` bytes after the content zeros (growing
  // the allocation if needed). A reused buffer holds an earlier input's
  // bytes there, and simdjson On-Demand walks a whole document's structurals
  // once more to check its balance when the byte after it is `}`
  // (value_iterator::check_root_object, simdjson issue 1834): 4.9 % of a
  // 16-rank gzip job's CPU went there (bench/RESULTS.md, session 10).
  void ZeroPadding(size_t padding) {
    Reserve(size_ + padding);
    std::memset(data_ + size_, 0, padding);
  }
  // Release frees the allocation.
  void Release() {
    FreeLarge(data_, capacity_);
    data_ = nullptr;
    size_ = capacity_ = 0;
  }

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace tracemill::formats
