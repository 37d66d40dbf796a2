#include "formats/common/json_text.h"

#include <array>
#include <cstring>
#include <memory>
#include <vector>

// The x86 kernels (byte_kernel.h): SSE2 is the x86-64 baseline, the wider
// ones are compiled in regions for their instruction set (GCC's and Clang's
// spelling; simdjson does the same for its own kernels).
#if defined(__x86_64__) && defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
#define TM_X86_KERNELS 1
#include <immintrin.h>
#if defined(__clang__)
#define TM_TARGET_REGION(isa) _Pragma(TM_STRINGIFY(clang attribute push(__attribute__((target(isa))), apply_to = function)))
#define TM_TARGET_REGION_END _Pragma("clang attribute pop")
#else
#define TM_TARGET_REGION(isa) _Pragma("GCC push_options") _Pragma(TM_STRINGIFY(GCC target(isa)))
#define TM_TARGET_REGION_END _Pragma("GCC pop_options")
#endif
#define TM_STRINGIFY(x) #x
#else
#define TM_X86_KERNELS 0
#endif

#include "formats/common/byte_kernel.h"

namespace tracemill::formats {
namespace {

constexpr bool IsDelim(unsigned char c) {
  return IsJsonWhitespace(c) || c == ',' || c == ':' || c == ']' || c == '}' || c == '[' || c == '{' ||
         c == '"';
}
constexpr char kHex[] = "0123456789abcdef";
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

int HexVal(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Length of the valid UTF-8 sequence at s[i] (2..4), or 0 if invalid.
size_t Utf8SeqLen(std::string_view s, size_t i) {
  auto b = [&](size_t k) -> unsigned { return static_cast<unsigned char>(s[k]); };
  unsigned c = b(i);
  size_t n = s.size();
  if (c >= 0xC2 && c <= 0xDF) {
    return (i + 1 < n && (b(i + 1) & 0xC0) == 0x80) ? 2 : 0;
  }
  if (c >= 0xE0 && c <= 0xEF) {
    if (i + 2 >= n) return 0;
    unsigned c1 = b(i + 1);
    if ((c1 & 0xC0) != 0x80 || (b(i + 2) & 0xC0) != 0x80) return 0;
    if (c == 0xE0 && c1 < 0xA0) return 0;   // overlong
    if (c == 0xED && c1 >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (i + 3 >= n) return 0;
    unsigned c1 = b(i + 1);
    if ((c1 & 0xC0) != 0x80 || (b(i + 2) & 0xC0) != 0x80 || (b(i + 3) & 0xC0) != 0x80) return 0;
    if (c == 0xF0 && c1 < 0x90) return 0;  // overlong
    if (c == 0xF4 && c1 >= 0x90) return 0;  // > U+10FFFF
    return 4;
  }
  return 0;
}

bool IsValidNumber(std::string_view t) {
  size_t i = 0, n = t.size();
  if (i < n && t[i] == '-') ++i;
  if (i >= n) return false;
  if (t[i] == '0') {
    ++i;
  } else if (t[i] >= '1' && t[i] <= '9') {
    while (i < n && t[i] >= '0' && t[i] <= '9') ++i;
  } else {
    return false;
  }
  if (i < n && t[i] == '.') {
    ++i;
    size_t s = i;
    while (i < n && t[i] >= '0' && t[i] <= '9') ++i;
    if (i == s) return false;
  }
  if (i < n && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < n && (t[i] == '+' || t[i] == '-')) ++i;
    size_t s = i;
    while (i < n && t[i] >= '0' && t[i] <= '9') ++i;
    if (i == s) return false;
  }
  return i == n;
}

// Reads 4 hex digits at s[i]; -1 if not there.
int Hex4(std::string_view s, size_t i) {
  if (i + 4 > s.size()) return -1;
  int v = 0;
  for (size_t k = 0; k < 4; ++k) {
    int h = HexVal(s[i + k]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

}  // namespace

bool IsJsonLiteralOrNumber(std::string_view t) {
  return t == "true" || t == "false" || t == "null" || IsValidNumber(t);
}

size_t SkipWhitespace(std::string_view t, size_t pos) {
  while (pos < t.size() && IsJsonWhitespace(static_cast<unsigned char>(t[pos]))) ++pos;
  return pos;
}

size_t SkipJsonValue(std::string_view t, size_t pos) {
  const size_t n = t.size();
  pos = SkipWhitespace(t, pos);
  if (pos >= n) return std::string_view::npos;
  size_t depth = 0;
  while (pos < n) {
    unsigned char c = static_cast<unsigned char>(t[pos]);
    if (c == '"') {
      ++pos;
      while (true) {
        // Fast skip to the next quote or backslash.
        while (pos < n && t[pos] != '"' && t[pos] != '\\') ++pos;
        if (pos >= n) return std::string_view::npos;
        if (t[pos] == '\\') {
          pos += 2;
          continue;
        }
        ++pos;  // closing quote
        break;
      }
      if (depth == 0) return pos;
    } else if (c == '{' || c == '[') {
      ++depth;
      ++pos;
    } else if (c == '}' || c == ']') {
      if (depth == 0) return pos;  // not ours: an empty value
      --depth;
      ++pos;
      if (depth == 0) return pos;
    } else if (depth == 0) {
      // A bare token at top level.
      while (pos < n && !IsDelim(static_cast<unsigned char>(t[pos]))) ++pos;
      if (pos >= n) return std::string_view::npos;  // may be cut off
      return pos;
    } else {
      ++pos;
    }
  }
  return std::string_view::npos;
}

namespace {

// The byte loops, once per kernel (json_text_kernel.inc): FindStringSpecial,
// StringEnd, CopyCleanJson, CopyCleanToken.
namespace scalar_kernel {
#define TM_KERNEL_WIDTH 0
#include "formats/common/json_text_kernel.inc"
#undef TM_KERNEL_WIDTH
}  // namespace scalar_kernel
#if TM_X86_KERNELS
namespace sse2_kernel {
#define TM_KERNEL_WIDTH 16
#include "formats/common/json_text_kernel.inc"
#undef TM_KERNEL_WIDTH
}  // namespace sse2_kernel
// The wider kernels: every function defined in these regions is compiled
// for that instruction set (the binary's baseline stays x86-64); only
// called once ActiveByteKernel says the CPU runs it.
TM_TARGET_REGION("avx2")
namespace avx2_kernel {
#define TM_KERNEL_WIDTH 32
#include "formats/common/json_text_kernel.inc"
#undef TM_KERNEL_WIDTH
}  // namespace avx2_kernel
TM_TARGET_REGION_END
TM_TARGET_REGION("avx2,avx512f,avx512bw")
namespace avx512bw_kernel {
#define TM_KERNEL_WIDTH 64
#include "formats/common/json_text_kernel.inc"
#undef TM_KERNEL_WIDTH
}  // namespace avx512bw_kernel
TM_TARGET_REGION_END
#endif

// One kernel's entry points.
struct Kernel {
  size_t (*find_string_special)(std::string_view s, size_t i);
  size_t (*string_end)(std::string_view s, size_t i);
  char* (*copy_clean_json)(std::string_view in, char* out, const char** stop, size_t depth);
  char* (*copy_clean_token)(std::string_view token, char* out);
};

#define TM_KERNEL_ENTRIES(ns) \
  Kernel { &ns::FindStringSpecial, &ns::StringEnd, &ns::CopyCleanJson, &ns::CopyCleanToken }
constexpr Kernel kKernels[kByteKernelCount] = {
#if TM_X86_KERNELS
    TM_KERNEL_ENTRIES(scalar_kernel), TM_KERNEL_ENTRIES(sse2_kernel), TM_KERNEL_ENTRIES(avx2_kernel),
    TM_KERNEL_ENTRIES(avx512bw_kernel),
#else  // only the scalar kernel runs (RunsByteKernel)
    TM_KERNEL_ENTRIES(scalar_kernel), TM_KERNEL_ENTRIES(scalar_kernel), TM_KERNEL_ENTRIES(scalar_kernel),
    TM_KERNEL_ENTRIES(scalar_kernel),
#endif
};
#undef TM_KERNEL_ENTRIES

// Active: the entry points of the kernel in use (ActiveByteKernel).
inline const Kernel& Active() { return kKernels[static_cast<int>(ActiveByteKernel())]; }

size_t FindStringSpecial(std::string_view s, size_t i) { return Active().find_string_special(s, i); }
char* CopyCleanJson(std::string_view in, char* out) { return Active().copy_clean_json(in, out, nullptr, 0); }

}  // namespace

size_t JsonStringEnd(std::string_view s, size_t i) { return Active().string_end(s, i); }

size_t JsonStringSpecial(std::string_view s, size_t i) { return FindStringSpecial(s, i); }

bool IsCleanJsonString(std::string_view token) {
  if (token.size() < 2 || token.front() != '"' || token.back() != '"') return false;
  if (FindStringSpecial(token, 1) == token.size() - 1) return true;  // plain ASCII, no escape
  // Escapes or UTF-8: the copy's own check, into a scratch buffer.
  char stack[256];
  std::unique_ptr<char[]> heap;
  char* out = stack;
  if (token.size() > sizeof stack) {
    heap.reset(new char[token.size()]);
    out = heap.get();
  }
  return CopyCleanJsonString(token, out) != nullptr;
}

namespace {

// Sanitizes string text from s[i] into `out`: plain runs are copied in one
// append, escapes, control characters and UTF-8 are checked and repaired as
// AppendSanitizedJson documents. With `quoted`, stops at the first
// unescaped `"` and returns its offset (npos if the text ends first, with
// `out` then holding a partial string); else runs to the end of `s`,
// escaping any `"`, and returns s.size().
size_t SanitizeStringText(std::string_view s, size_t i, bool quoted, std::string* out, bool* repaired) {
  const size_t n = s.size();
  while (true) {
    size_t run = FindStringSpecial(s, i);
    if (run > i) out->append(s.data() + i, run - i);
    i = run;
    if (i >= n) return quoted ? std::string_view::npos : n;
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"') {
      if (quoted) return i;
      out->append("\\\"");
      *repaired = true;
      ++i;
    } else if (c == '\\') {
      if (i + 1 >= n) {  // dangling backslash
        if (quoted) return std::string_view::npos;
        out->append("\\\\");
        *repaired = true;
        ++i;
        continue;
      }
      char e = s[i + 1];
      if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' ||
          e == 't') {
        out->append(s.data() + i, 2);
        i += 2;
      } else if (e == 'u') {
        int v = Hex4(s, i + 2);
        if (v < 0) {
          out->append("\\\\");
          *repaired = true;
          ++i;
        } else if (v >= 0xD800 && v <= 0xDBFF) {
          int lo = (i + 7 < n && s[i + 6] == '\\' && s[i + 7] == 'u') ? Hex4(s, i + 8) : -1;
          if (lo >= 0xDC00 && lo <= 0xDFFF) {
            out->append(s.data() + i, 12);
            i += 12;
          } else {
            out->append("\\ufffd");
            *repaired = true;
            i += 6;
          }
        } else if (v >= 0xDC00 && v <= 0xDFFF) {
          out->append("\\ufffd");
          *repaired = true;
          i += 6;
        } else {
          out->append(s.data() + i, 6);
          i += 6;
        }
      } else {
        // An invalid escape: the backslash is escaped, the next character
        // is read as text.
        out->append("\\\\");
        *repaired = true;
        ++i;
      }
    } else if (c < 0x20) {
      char buf[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
      out->append(buf, 6);
      *repaired = true;
      ++i;
    } else {
      size_t len = Utf8SeqLen(s, i);
      if (len) {
        out->append(s.data() + i, len);
        i += len;
      } else {
        out->append(kReplacement);
        *repaired = true;
        ++i;
      }
    }
  }
}

}  // namespace

bool AppendSanitizedStringBody(std::string_view s, std::string* out) {
  bool repaired = false;
  SanitizeStringText(s, 0, /*quoted=*/false, out, &repaired);
  return repaired;
}


char* CopyCleanJsonValue(std::string_view in, char* out) { return CopyCleanJson(in, out); }

char* CopyCleanJsonPrefix(std::string_view in, char* out, size_t* consumed, size_t depth) {
  const char* stop = nullptr;
  char* end = Active().copy_clean_json(in, out, &stop, depth);
  if (end) *consumed = static_cast<size_t>(stop - in.data());
  return end;
}

char* CopyCleanJsonString(std::string_view token, char* out) { return Active().copy_clean_token(token, out); }

SanitizeResult AppendSanitizedJson(std::string_view in, std::string* out) {
  const size_t start_size = out->size();
  // Most values need no repair: one pass with raw stores, then the general
  // path below only for the rest.
  out->resize(start_size + in.size());
  if (char* end = CopyCleanJson(in, out->data() + start_size)) {
    out->resize(static_cast<size_t>(end - out->data()));
    return SanitizeResult::kOk;
  }
  out->resize(start_size);
  return internal::AppendSanitizedJsonGeneral(in, out);
}

namespace internal {

SanitizeResult AppendSanitizedJsonGeneral(std::string_view in, std::string* out) {
  const size_t start_size = out->size();
  bool repaired = false;
  // Container stack: '{' or '['. State says what may come next.
  enum State { kValue, kKeyOrEnd, kKey, kColon, kCommaOrEnd, kValueOrEnd, kDone };
  constexpr size_t kMaxDepth = 512;
  char stack[kMaxDepth];
  size_t depth = 0;
  State st = kValue;
  size_t i = 0, n = in.size();
  auto fail = [&] {
    out->resize(start_size);
    return SanitizeResult::kMalformed;
  };
  auto after_value = [&] { st = depth == 0 ? kDone : kCommaOrEnd; };
  // The output is at most a little longer than the input unless repaired.
  out->reserve(start_size + n + 16);
  while (true) {
    i = SkipWhitespace(in, i);
    if (i >= n) break;
    unsigned char c = static_cast<unsigned char>(in[i]);
    if (st == kDone) return fail();
    if (c == '"') {
      if (st != kValue && st != kValueOrEnd && st != kKeyOrEnd && st != kKey) return fail();
      out->push_back('"');
      size_t j = SanitizeStringText(in, i + 1, /*quoted=*/true, out, &repaired);
      if (j == std::string_view::npos) return fail();
      out->push_back('"');
      i = j + 1;
      if (st == kKeyOrEnd || st == kKey) {
        st = kColon;
      } else {
        after_value();
      }
    } else if (c == '{' || c == '[') {
      if (st != kValue && st != kValueOrEnd) return fail();
      if (depth >= kMaxDepth) return fail();
      stack[depth++] = static_cast<char>(c);
      out->push_back(static_cast<char>(c));
      st = c == '{' ? kKeyOrEnd : kValueOrEnd;
      ++i;
    } else if (c == '}' || c == ']') {
      char open = c == '}' ? '{' : '[';
      if (depth == 0 || stack[depth - 1] != open) return fail();
      if (st == kKey || st == kValue) {
        // Trailing comma: `[1,]` or `{"a":1,}`. Drop the comma we wrote.
        if (st == kValue && open == '{') return fail();  // `{"a":}`
        if (out->size() > start_size && out->back() == ',') {
          out->pop_back();
          repaired = true;
        } else {
          return fail();
        }
      } else if (st != kCommaOrEnd && st != kKeyOrEnd && st != kValueOrEnd) {
        return fail();
      }
      --depth;
      out->push_back(static_cast<char>(c));
      ++i;
      after_value();
    } else if (c == ':') {
      if (st != kColon) return fail();
      out->push_back(':');
      st = kValue;
      ++i;
    } else if (c == ',') {
      if (st != kCommaOrEnd) return fail();
      out->push_back(',');
      st = stack[depth - 1] == '{' ? kKey : kValue;
      ++i;
    } else {
      if (st != kValue && st != kValueOrEnd) return fail();
      size_t j = i;
      while (j < n && !IsDelim(static_cast<unsigned char>(in[j]))) ++j;
      std::string_view tok = in.substr(i, j - i);
      if (tok == "true" || tok == "false" || tok == "null" ||
          (IsValidNumber(tok) && tok.size() <= kMaxNumberChars)) {
        out->append(tok);
      } else {
        out->push_back('"');
        AppendSanitizedStringBody(tok, out);
        out->push_back('"');
        repaired = true;
      }
      i = j;
      after_value();
    }
  }
  if (st != kDone) return fail();
  return repaired ? SanitizeResult::kRepaired : SanitizeResult::kOk;
}

}  // namespace internal

void AppendJsonString(std::string_view text, std::string* out) {
  out->push_back('"');
  size_t i = 0, n = text.size();
  while (i < n) {
    // Plain runs a block at a time (a journal line's overview blocks are
    // ~200 KB of JSON: pushed back a byte at a time they cost 0.4 % of a job).
    const size_t plain = FindStringSpecial(text, i);
    out->append(text.data() + i, plain - i);
    i = plain;
    if (i >= n) break;
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
      ++i;
    } else if (c < 0x20) {
      char buf[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
      out->append(buf, 6);
      ++i;
    } else if (c < 0x80) {
      out->push_back(static_cast<char>(c));
      ++i;
    } else {
      size_t len = Utf8SeqLen(text, i);
      if (len) {
        out->append(text.data() + i, len);
        i += len;
      } else {
        out->append(kReplacement);
        ++i;
      }
    }
  }
  out->push_back('"');
}

std::string UnescapeJsonStringBody(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 >= s.size()) {
      out.push_back(s[i]);
      continue;
    }
    char e = s[++i];
    switch (e) {
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'u': {
        int v = Hex4(s, i + 1);
        if (v < 0) { out.push_back('u'); break; }
        i += 4;
        unsigned cp = static_cast<unsigned>(v);
        if (cp >= 0xD800 && cp <= 0xDBFF && i + 6 < s.size() + 0 && s[i + 1] == '\\' &&
            s[i + 2] == 'u') {
          int lo = Hex4(s, i + 3);
          if (lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (static_cast<unsigned>(lo) - 0xDC00);
            i += 6;
          }
        }
        if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
        if (cp < 0x80) {
          out.push_back(static_cast<char>(cp));
        } else if (cp < 0x800) {
          out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
          out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else if (cp < 0x10000) {
          out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
          out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
          out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else {
          out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
          out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
          out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
          out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        }
        break;
      }
      default: out.push_back(e);
    }
  }
  return out;
}

void RestArgValues(std::string_view rest, std::span<const std::string_view> keys, std::string_view* values) {
  std::fill_n(values, keys.size(), std::string_view());
  size_t at = rest.find("\"args\":{");
  if (at == std::string_view::npos) return;
  size_t pos = at + 8;
  size_t left = keys.size();
  while (left > 0 && pos < rest.size() && rest[pos] == '"') {
    const size_t close = JsonStringEnd(rest, pos + 1);  // the key's closing quote
    if (close + 1 >= rest.size() || rest[close + 1] != ':') return;
    const std::string_view k = rest.substr(pos + 1, close - pos - 1);
    const size_t value_end = SkipJsonValue(rest, close + 2);
    if (value_end == std::string_view::npos) return;
    for (size_t i = 0; i < keys.size(); ++i)
      if (values[i].empty() && k == keys[i]) {
        values[i] = rest.substr(close + 2, value_end - close - 2);
        --left;
      }
    pos = value_end;
    if (pos < rest.size() && rest[pos] == ',') ++pos;
  }
}

std::string_view RestArgValue(std::string_view rest, std::string_view key) {
  std::string_view value;
  RestArgValues(rest, std::span<const std::string_view>(&key, 1), &value);
  return value;
}

}  // namespace tracemill::formats
