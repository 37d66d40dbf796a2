#pragma once
// Byte-level JSON helpers shared by decoders and writers: a tolerant value
// skipper, a sanitizing re-emitter and a string escaper.
//
// Why a sanitizer: simdjson On-Demand validates UTF-8 and structure only for
// what the decoder touches; args are copied as raw text, and profiler files
// contain bare `NaN`/`Infinity` tokens (Python's json.dump default), invalid
// UTF-8 in op names and raw control characters. Everything we copy into an
// output goes through `AppendSanitizedJson`, so every output is valid JSON
// (RFC 8259) whatever the input held.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tracemill::formats {

// SkipJsonValue returns the offset just past the JSON value that starts at
// `text[pos]` (after any leading whitespace), or `npos` if the value is cut
// off by the end of `text`. Strings and nesting are tracked with a counter
// (no recursion, so 100,000 nested arrays cost nothing); content is not
// validated. A bare token ends at whitespace, `,`, `:`, `]` or `}`.
size_t SkipJsonValue(std::string_view text, size_t pos);

// IsJsonWhitespace: true for JSON's insignificant whitespace (RFC 8259):
// space, tab, CR, LF. One compare and one mask test.
constexpr bool IsJsonWhitespace(unsigned char c) {
  return c <= ' ' && ((uint64_t{1} << c) & ((uint64_t{1} << ' ') | (uint64_t{1} << '\n') |
                                           (uint64_t{1} << '\r') | (uint64_t{1} << '\t')));
}

// SkipWhitespace returns the first offset >= pos that is not JSON whitespace
// (space, tab, CR, LF), or text.size().
size_t SkipWhitespace(std::string_view text, size_t pos);

#if defined(__SSE2__)
// NonDigitBits16: bit k set where p[k] is not an ASCII digit, for the 16
// bytes at p (signed compares: bytes from 0x80 up are below '0').
inline unsigned NonDigitBits16(const char* p) {
  const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i digit =
      _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(x, _mm_set1_epi8('9' + 1)));
  return ~static_cast<unsigned>(_mm_movemask_epi8(digit)) & 0xFFFFu;
}
#endif

// JsonDigitsEnd: the end of the run of ASCII digits from text[pos] (pos
// itself if there is none; at most text.size()), 16 bytes a step (SSE2;
// else 8, a word at a time). The loads read up to 15 bytes past
// text.size(): `text` must lie inside a buffer padded by at least that much
// (the TEF decoder's scan path: a padded input or a window of one); digits
// found there are not counted. (Kineto's ts have 16 digits: two steps of 16,
// not three of 8.)
inline size_t JsonDigitsEnd(std::string_view text, size_t pos) {
  const size_t n = text.size();
#if defined(__SSE2__)
  for (; pos < n; pos += 16)
    if (const unsigned other = NonDigitBits16(text.data() + pos))
      return std::min(n, pos + static_cast<size_t>(__builtin_ctz(other)));
#else
  for (; pos < n; pos += 8) {
    uint64_t w;
    std::memcpy(&w, text.data() + pos, sizeof(w));
    // Per byte, x = byte ^ '0' is below 10 for a digit; bit 7 of
    // ((x & 0x7F) + 0x76) | x is set for every other byte (no carries).
    const uint64_t x = w ^ 0x3030303030303030ull;
    const uint64_t other = (((x & 0x7F7F7F7F7F7F7F7Full) + 0x7676767676767676ull) | x) & 0x8080808080808080ull;
    if (other) return std::min(n, pos + static_cast<size_t>(__builtin_ctzll(other) >> 3));
  }
#endif
  return n;
}

// Result of AppendSanitizedJson.
enum class SanitizeResult {
  kOk,         // `out` holds a valid JSON value
  kRepaired,   // valid now, but something was replaced (see the header comment)
  kMalformed,  // structure broken (unbalanced, missing `:` ...); `out` unchanged
};

// AppendSanitizedJson re-emits the single JSON value in `in` to `out` without
// insignificant whitespace, repairing what a strict parser would reject:
// invalid UTF-8 -> U+FFFD, raw control characters -> `\u00XX`, lone UTF-16
// surrogate escapes -> `\ufffd`, invalid escapes -> escaped backslash, bare
// words other than true/false/null (`NaN`, `-Infinity`, `inf`) and invalid
// numbers -> strings (`"NaN"`), numbers longer than 1,000 characters ->
// strings (Python's json rejects integers past 4,300 digits), a trailing
// comma before `]`/`}` -> removed.
// Nesting deeper than 512 levels is kMalformed.
SanitizeResult AppendSanitizedJson(std::string_view in, std::string* out);

// kMaxNumberChars: a longer number token needs repair (the sanitizer writes
// it as a string): valid JSON, but Python's json refuses integers past 4,300
// digits (tests/malformed number_10000_digits).
inline constexpr size_t kMaxNumberChars = 1000;

// CopyCleanJsonValue: AppendSanitizedJson's one-pass path on its own. If
// `in` is one JSON value that needs no repair, writes it without
// insignificant whitespace to `out` (room for in.size() bytes: the result is
// never longer) and returns the end of what it wrote; else nullptr (`out`
// then holds garbage, and AppendSanitizedJson would repair or reject `in`).
// The bytes are the ones AppendSanitizedJson appends with kOk.
char* CopyCleanJsonValue(std::string_view in, char* out);

// CopyCleanJsonPrefix: CopyCleanJsonValue for the value at the start of
// `in`, which may go on after it: `*consumed` is set to the offset after
// the value's last byte. nullptr also when `in` ends inside the value.
// `depth`: the containers the value is inside of, for the nesting limit
// (512 open containers in all), when a caller copies an enclosing object
// member by member (the TEF scan path's args).
char* CopyCleanJsonPrefix(std::string_view in, char* out, size_t* consumed, size_t depth = 0);

// CopyCleanJsonString: the same for `token`, a JSON string with its quotes
// (a member's key as it appears in the input): copied as it is if it is one
// clean string (no control character, invalid escape or UTF-8), else
// nullptr. Room for token.size() bytes.
char* CopyCleanJsonString(std::string_view token, char* out);

namespace internal {
// AppendSanitizedJsonGeneral: AppendSanitizedJson without its one-pass path
// for values that need no repair (a byte-at-a-time state machine). Exposed
// for the test that checks both paths agree.
SanitizeResult AppendSanitizedJsonGeneral(std::string_view in, std::string* out);
}  // namespace internal

// JsonStringEnd returns the offset of the `"` that closes the JSON string
// whose body starts at text[pos] (escapes skipped: `\"` does not close it),
// or text.size() if the text ends first. 16 bytes per step (SSE2).
size_t JsonStringEnd(std::string_view text, size_t pos);

// JsonStringSpecial returns the offset of the first byte at or after `pos`
// that a JSON string cannot hold as is: `"`, `\\`, a control character or
// a non-ASCII byte; text.size() if there is none. A block per step (the
// byte kernel's width): the scan path's test for a clean string body.
size_t JsonStringSpecial(std::string_view text, size_t pos);

// IsCleanJsonString: `token` (with its quotes) is one JSON string that needs
// no repair: the strings CopyCleanJsonString copies.
bool IsCleanJsonString(std::string_view token);

// IsJsonLiteralOrNumber: `true`, `false`, `null` or a JSON number (RFC 8259
// grammar, any length).
bool IsJsonLiteralOrNumber(std::string_view token);

// AppendSanitizedStringBody appends the body of a JSON string (the escaped
// text between the quotes, as it appears in the input) to `out`, repaired as
// above, without quotes. Returns true if anything had to be repaired.
bool AppendSanitizedStringBody(std::string_view body, std::string* out);

// JsonStringBody returns the text between the quotes of a raw JSON string
// token (`"..."`, as On-Demand's raw tokens give it, escapes kept), or
// nullopt if `raw` is not a string token.
inline std::optional<std::string_view> JsonStringBody(std::string_view raw) {
  if (raw.size() >= 2 && raw.front() == '"' && raw.back() == '"') return raw.substr(1, raw.size() - 2);
  return std::nullopt;
}

// ForEachCompactMember calls `fn(key_body, raw_value)` for each member of
// `obj`, a JSON object as `AppendSanitizedJson` writes it (valid, no
// whitespace), in order: `key_body` is the escaped key without quotes,
// `raw_value` the value's text. Stops at the first member it cannot frame.
template <typename Fn>
void ForEachCompactMember(std::string_view obj, Fn fn) {
  size_t pos = 1;
  while (pos < obj.size() && obj[pos] == '"') {
    size_t key_end = SkipJsonValue(obj, pos);
    if (key_end == std::string_view::npos || key_end >= obj.size()) return;
    std::string_view key = obj.substr(pos + 1, key_end - pos - 2);
    pos = key_end + 1;  // past ':'
    size_t value_end = SkipJsonValue(obj, pos);
    if (value_end == std::string_view::npos) return;
    fn(key, obj.substr(pos, value_end - pos));
    pos = value_end;
    if (pos < obj.size() && obj[pos] == ',') ++pos;
  }
}

// RestArgValue: the raw JSON value of `args.<key>` in `rest`, an event's
// other members as the decoders store them (sanitized compact JSON members,
// `"args":{...},...`; formats/common/event.h), or "" if there is none.
// `key` is compared with the escaped key text. Linear in `rest`.
std::string_view RestArgValue(std::string_view rest, std::string_view key);

// RestArgValues: RestArgValue for each of `keys` in one walk of `rest`:
// values[i] for keys[i] ("" if there is none; `values` has keys.size()
// entries). A key given twice gets the same value twice.
void RestArgValues(std::string_view rest, std::span<const std::string_view> keys, std::string_view* values);

// NumberText returns the text of a numeric token, or the body of a string
// token holding one (`12.5` and `"12.5"` both give `12.5`), for the exact
// decimal parsers of ts_text.h (`"ts": "12.5"` is a number to Chrome too).
inline std::string_view NumberText(std::string_view raw) {
  if (auto body = JsonStringBody(raw)) return *body;
  return raw;
}

// AppendJsonString appends `text` (raw bytes, e.g. a file path) as a quoted
// JSON string: `"` `\` and control characters escaped, invalid UTF-8 ->
// U+FFFD.
void AppendJsonString(std::string_view text, std::string* out);

// UnescapeJsonStringBody decodes the body of a (sanitized) JSON string into
// UTF-8 text. Used for file names and labels, not on the hot path.
std::string UnescapeJsonStringBody(std::string_view body);

}  // namespace tracemill::formats
