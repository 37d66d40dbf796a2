#pragma once
// Out: the text buffer the rank files are written into.
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace tracemill::tools::gen_kineto {

// Append-only text buffer with std::to_chars number formatting.
class Out {
 public:
  void Reserve(size_t n) { s_.reserve(n); }
  Out& operator<<(std::string_view v) {
    s_.append(v);
    return *this;
  }
  Out& operator<<(char c) {
    s_.push_back(c);
    return *this;
  }
  Out& Int(int64_t v) {
    char b[24];
    auto r = std::to_chars(b, b + sizeof b, v);
    s_.append(b, r.ptr);
    return *this;
  }
  // A JSON string with a known-safe body.
  Out& Str(std::string_view v) {
    s_.push_back('"');
    s_.append(v);
    s_.push_back('"');
    return *this;
  }
  // Fixed-point `units / 10^decimals` with exactly `decimals` digits.
  Out& Fixed(int64_t units, int decimals) {
    int64_t scale = 1;
    for (int i = 0; i < decimals; ++i) scale *= 10;
    if (units < 0) {
      s_.push_back('-');
      units = -units;
    }
    Int(units / scale);
    if (decimals == 0) return *this;
    s_.push_back('.');
    char b[24];
    int64_t frac = units % scale;
    for (int i = decimals - 1; i >= 0; --i) {
      b[i] = static_cast<char>('0' + frac % 10);
      frac /= 10;
    }
    s_.append(b, decimals);
    return *this;
  }
  std::string& str() { return s_; }
  size_t size() const { return s_.size(); }

 private:
  std::string s_;
};

}  // namespace tracemill::tools::gen_kineto
