// formats/common/json_text: the tolerant value skipper and the sanitizing
// re-emitter every copied byte goes through.
#include "formats/common/json_text.h"

#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/byte_kernel.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tracemill::formats {
namespace {

constexpr size_t npos = std::string_view::npos;

struct Sanitized {
  SanitizeResult result;
  std::string out;
};

// XorShift: a reproducible pseudo-random stream for the mutation tests.
struct XorShift {
  uint64_t x;
  explicit XorShift(uint64_t seed) : x(seed) {}
  uint64_t operator()() {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  }
};

Sanitized Sanitize(std::string_view in) {
  Sanitized s{SanitizeResult::kOk, ""};
  s.result = AppendSanitizedJson(in, &s.out);
  return s;
}

// ---- SkipJsonValue ----

TEST(SkipJsonValue, ReturnsTheOffsetPastOneValue) {
  EXPECT_EQ(SkipJsonValue(R"({"a":[1,2,{"b":"]}"}]} , {})", 0), 22u);
  EXPECT_EQ(SkipJsonValue(R"(  [1, [2, [3]]], 4)", 0), 15u);
  EXPECT_EQ(SkipJsonValue(R"("str\"ing" rest)", 0), 10u);
  EXPECT_EQ(SkipJsonValue(R"(123, 4)", 0), 3u);
  EXPECT_EQ(SkipJsonValue(R"(true})", 0), 4u);
  EXPECT_EQ(SkipJsonValue(R"([{"a":1},{"b":2}])", 1), 8u);  // from an inner position
  EXPECT_EQ(SkipJsonValue(R"({})", 0), 2u);
}

TEST(SkipJsonValue, TruncatedInputIsNpos) {
  EXPECT_EQ(SkipJsonValue(R"({"a":[1,2)", 0), npos);
  EXPECT_EQ(SkipJsonValue(R"({"name":"cut)", 0), npos);
  EXPECT_EQ(SkipJsonValue(R"("ends in backslash\)", 0), npos);
  EXPECT_EQ(SkipJsonValue(R"([[[])", 0), npos);
  EXPECT_EQ(SkipJsonValue("", 0), npos);
  EXPECT_EQ(SkipJsonValue("   ", 0), npos);
  EXPECT_EQ(SkipJsonValue("123", 0), npos);  // a bare number may go on
}

TEST(SkipJsonValue, StrayCloserIsAnEmptyValue) {
  EXPECT_EQ(SkipJsonValue("}", 0), 0u);
  EXPECT_EQ(SkipJsonValue("  ]", 0), 2u);
}

TEST(SkipJsonValue, HundredThousandNestedArraysDoNotCrash) {
  std::string deep(100000, '[');
  deep.append(100000, ']');
  EXPECT_EQ(SkipJsonValue(deep, 0), deep.size());
  EXPECT_EQ(SkipJsonValue(std::string_view(deep).substr(0, 150000), 0), npos);
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += "{\"a\":";
  objects += "1";
  objects.append(100000, '}');
  EXPECT_EQ(SkipJsonValue(objects, 0), objects.size());
}

TEST(SkipWhitespace, SkipsJsonWhitespaceOnly) {
  EXPECT_EQ(SkipWhitespace(" \t\r\n x", 0), 5u);
  EXPECT_EQ(SkipWhitespace("x", 0), 0u);
  EXPECT_EQ(SkipWhitespace("  ", 0), 2u);
  EXPECT_EQ(SkipWhitespace("\v", 0), 0u);
}

// ---- AppendSanitizedJson ----

TEST(JsonDigitsEnd, RunsOfEveryLengthAtEveryOffsetStopAtTheViewsEnd) {
  // Digits run on past the view's end in the buffer (a scan-path window
  // cut inside an input), up to a `]` at 41: they are not counted.
  const std::string buf = "x0123456789012345678901234567890123456789]" + std::string(64, ' ');
  for (size_t pos = 1; pos < 41; ++pos) {
    for (size_t len = 0; pos + len <= 41; ++len) {
      const std::string_view view(buf.data(), pos + len);
      EXPECT_EQ(JsonDigitsEnd(view, pos), pos + len) << pos << " " << len;
    }
  }
  // Each byte value after a run of 0..17 digits: a digit or not.
  std::string s(40, ' ');
  for (size_t run = 0; run < 18; ++run) {
    for (int c = 0; c < 256; ++c) {
      s.assign(40, ' ');
      for (size_t k = 0; k < run; ++k) s[3 + k] = static_cast<char>('0' + k % 10);
      s[3 + run] = static_cast<char>(c);
      const bool digit = c >= '0' && c <= '9';
      EXPECT_EQ(JsonDigitsEnd(std::string_view(s.data(), 30), 3), 3 + run + (digit ? 1 : 0)) << run << " " << c;
    }
  }
  EXPECT_EQ(JsonDigitsEnd(std::string_view(buf.data(), 20), 0), 0u);   // 'x'
  EXPECT_EQ(JsonDigitsEnd(std::string_view(buf.data(), 20), 20), 20u);  // at the end
}

TEST(AppendSanitizedJson, ValidJsonIsCopiedWithoutWhitespace) {
  auto s = Sanitize(R"( { "a" : [ 1 , -2.5e3 , true , false , null ] , "b" : { } } )");
  EXPECT_EQ(s.result, SanitizeResult::kOk);
  EXPECT_EQ(s.out, R"({"a":[1,-2.5e3,true,false,null],"b":{}})");
  s = Sanitize(R"("caf\u00e9 \"q\" \\ \/ \n \ud83d\ude00")");
  EXPECT_EQ(s.result, SanitizeResult::kOk);
  EXPECT_EQ(s.out, R"("caf\u00e9 \"q\" \\ \/ \n \ud83d\ude00")");
}

TEST(AppendSanitizedJson, IntegersBeyondInt64AreCopiedVerbatim) {
  auto s = Sanitize(R"({"a":18446744073709551616,"b":-123456789012345678901234567890})");
  EXPECT_EQ(s.result, SanitizeResult::kOk);
  EXPECT_EQ(s.out, R"({"a":18446744073709551616,"b":-123456789012345678901234567890})");
}

TEST(AppendSanitizedJson, NonFiniteTokensBecomeStrings) {
  auto s = Sanitize(R"({"a":NaN,"b":Infinity,"c":-Infinity,"d":inf,"e":[nan,-inf]})");
  EXPECT_EQ(s.result, SanitizeResult::kRepaired);
  EXPECT_EQ(s.out, R"({"a":"NaN","b":"Infinity","c":"-Infinity","d":"inf","e":["nan","-inf"]})");
  s = Sanitize("NaN");
  EXPECT_EQ(s.result, SanitizeResult::kRepaired);
  EXPECT_EQ(s.out, R"("NaN")");
}

TEST(AppendSanitizedJson, InvalidNumbersBecomeStrings) {
  auto s = Sanitize(R"([01,1.,.5,+1,0x1f])");
  EXPECT_EQ(s.result, SanitizeResult::kRepaired);
  EXPECT_EQ(s.out, R"(["01","1.",".5","+1","0x1f"])");
}

TEST(AppendSanitizedJson, TrailingCommaIsRemoved) {
  auto s = Sanitize(R"([1,2,])");
  EXPECT_EQ(s.result, SanitizeResult::kRepaired);
  EXPECT_EQ(s.out, "[1,2]");
  s = Sanitize(R"({"a":1,"b":{"c":[true,],},})");
  EXPECT_EQ(s.result, SanitizeResult::kRepaired);
  EXPECT_EQ(s.out, R"({"a":1,"b":{"c":[true]}})");
}

TEST(AppendSanitizedJson, InvalidUtf8BecomesReplacementCharacter) {
  auto s = Sanitize("\"op\xff\xfe" "end\"");
  EXPECT_EQ(s.result, SanitizeResult::kRepaired);
  EXPECT_EQ(s.out, "\"op\xEF\xBF\xBD\xEF\xBF\xBD" "end\"");
  // Overlong encoding of '/', an encoded surrogate, a cut sequence at the end.
  s = Sanitize("[\"\xc0\xaf\",\"\xed\xa0\x80\",\"x\xe2\x82\"]");
  EXPECT_EQ(s.result, SanitizeResult::kRepaired);
  EXPECT_THAT(s.out, ::testing::Not(::testing::HasSubstr("\xc0")));
  EXPECT_THAT(s.out, ::testing::Not(::testing::HasSubstr("\xed\xa0")));
  EXPECT_THAT(s.out, ::testing::StartsWith("[\"\xEF\xBF\xBD"));
  // Valid multi-byte UTF-8 is kept as is.
  s = Sanitize("\"\xC2\xB5s \xE2\x82\xAC \xF0\x9F\x98\x80\"");
  EXPECT_EQ(s.result, SanitizeResult::kOk);
  EXPECT_EQ(s.out, "\"\xC2\xB5s \xE2\x82\xAC \xF0\x9F\x98\x80\"");
}

TEST(AppendSanitizedJson, LoneSurrogateEscapeBecomesFffd) {
  auto s = Sanitize(R"(["\ud800","\udc00x","a\ud83d","\ud83d\ude00"])");
  EXPECT_EQ(s.result, SanitizeResult::kRepaired);
  EXPECT_EQ(s.out, R"(["\ufffd","\ufffdx","a\ufffd","\ud83d\ude00"])");
}

TEST(AppendSanitizedJson, ControlCharacterIsEscaped) {
  auto s = Sanitize("{\"tab\there\":\"a\x01z\nb\x1f\"}");
  EXPECT_EQ(s.result, SanitizeResult::kRepaired);
  EXPECT_EQ(s.out, R"({"tab\u0009here":"a\u0001z\u000ab\u001f"})");
}

TEST(AppendSanitizedJson, InvalidEscapeBecomesEscapedBackslash) {
  auto s = Sanitize(R"("C:\path\x")");
  EXPECT_EQ(s.result, SanitizeResult::kRepaired);
  EXPECT_EQ(s.out, R"("C:\\path\\x")");
}

TEST(AppendSanitizedJson, MalformedStructureLeavesOutputUnchanged) {
  for (const char* bad : {"", "   ", "{", "[1,2", R"({"a":1)", R"({"a" 1})", R"({"a":})",
                          R"({"a":1,,"b":2})", R"([1 2])", R"({1:2})", "[}", "{]", "]",
                          R"("unterminated)", R"([1],[2])", "[,]", R"({"a":1}x)", ":", ","}) {
    std::string out = "prefix";
    EXPECT_EQ(AppendSanitizedJson(bad, &out), SanitizeResult::kMalformed) << "'" << bad << "'";
    EXPECT_EQ(out, "prefix") << "'" << bad << "'";
  }
}

TEST(AppendSanitizedJson, DeepNestingIsMalformedNotACrash) {
  std::string deep(100000, '[');
  deep.append(100000, ']');
  std::string out;
  EXPECT_EQ(AppendSanitizedJson(deep, &out), SanitizeResult::kMalformed);
  EXPECT_TRUE(out.empty());
  // 512 levels are fine.
  std::string ok(512, '[');
  ok.append(512, ']');
  EXPECT_EQ(AppendSanitizedJson(ok, &out), SanitizeResult::kOk);
  EXPECT_EQ(out, ok);
}

TEST(AppendSanitizedJson, AppendsToExistingContent) {
  std::string out = "\"args\":";
  EXPECT_EQ(AppendSanitizedJson(R"({"x":1,})", &out), SanitizeResult::kRepaired);
  EXPECT_EQ(out, R"("args":{"x":1})");
}

// ---- strings ----

TEST(AppendSanitizedStringBody, RepairsAndReportsIt) {
  std::string out;
  EXPECT_FALSE(AppendSanitizedStringBody(R"(plain \"ok\" \u00e9)", &out));
  EXPECT_EQ(out, R"(plain \"ok\" \u00e9)");
  out.clear();
  EXPECT_TRUE(AppendSanitizedStringBody("a\x01" "b\xff\\", &out));
  EXPECT_EQ(out, "a\\u0001b\xEF\xBF\xBD\\\\");
}

// The string scan takes 16 bytes at a time: a special byte at every
// position around the block edges (0..40) must be seen and repaired exactly.
TEST(AppendSanitizedJson, SpecialBytesAtEveryBlockPosition) {
  struct Case {
    std::string in;    // inserted into the string
    std::string want;  // what the output holds in its place
  };
  const Case cases[] = {{"\x01", "\\u0001"},       {"\\n", "\\n"},           {"\\q", "\\\\q"},
                        {"\xff", "\xEF\xBF\xBD"},  {"\xC2\xB5", "\xC2\xB5"}, {"\\ud800", "\\ufffd"},
                        {"\\\"", "\\\""}};
  for (const Case& c : cases) {
    for (size_t p = 0; p <= 40; ++p) {
      std::string body = std::string(p, 'a') + c.in + std::string(23, 'b');
      auto s = Sanitize("[\"" + body + "\",1]");
      std::string want = "[\"" + std::string(p, 'a') + c.want + std::string(23, 'b') + "\",1]";
      EXPECT_EQ(s.out, want) << "at " << p << ": " << c.in;
      bool clean = c.in == c.want;
      EXPECT_EQ(s.result, clean ? SanitizeResult::kOk : SanitizeResult::kRepaired) << "at " << p;
    }
  }
  // An unterminated long string is malformed, whatever its length.
  for (size_t p = 0; p <= 40; ++p)
    EXPECT_EQ(Sanitize("[\"" + std::string(p, 'a')).result, SanitizeResult::kMalformed) << p;
}

// AppendSanitizedJson copies values that need no repair in one pass and
// hands everything else to the general path. Both must agree, result and
// bytes, on valid values and on every kind of damage: a Kineto args object
// mutated at random (bytes replaced, inserted or removed from an alphabet of
// JSON's significant characters, bare words and multi-byte UTF-8).
TEST(AppendSanitizedJson, CleanPathAgreesWithGeneralPath) {
  const std::string base =
      R"({"External id": 101, "Input Dims": [[8], [], [1024, 512]], "Input type": ["long int", ""],)"
      R"( "ok": true, "none": null, "no": false, "x": -0.5e+3, "big": 123456789012345678901234,)"
      R"( "s": "a\"b\\c\/d\n\u00e9 \u2028", "u": ")"
      "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"
      R"(", "e": {}, "a": []})";
  const std::string_view alphabet[] = {"{", "}", "[", "]", ":", ",", "\"", "\\", " ", "\n", "0",
                                       "-", ".", "e", "1", "t", "true", "nul", "NaN", "\x01",
                                       "\xff", "\xC3", "\\u", "\\ud800", "\\q", "+", "00"};
  XorShift next(0x9E3779B97F4A7C15ull);
  int counts[3] = {0, 0, 0};
  for (int round = 0; round < 30000; ++round) {
    std::string in = base;
    const int edits = round == 0 ? 0 : 1 + static_cast<int>(next() % 3);
    for (int k = 0; k < edits; ++k) {
      const size_t at = next() % (in.size() + 1);
      const std::string_view piece = alphabet[next() % std::size(alphabet)];
      switch (next() % 3) {
        case 0: in.insert(at, piece); break;
        case 1: if (at < in.size()) in.erase(at, 1 + next() % 3); break;
        default: in.replace(std::min(at, in.size()), 1, piece); break;
      }
    }
    std::string fast = "prefix,", general = "prefix,";
    const SanitizeResult rf = AppendSanitizedJson(in, &fast);
    const SanitizeResult rg = internal::AppendSanitizedJsonGeneral(in, &general);
    ASSERT_EQ(rf, rg) << in;
    ASSERT_EQ(fast, general) << in;
    ++counts[static_cast<int>(rf)];
  }
  // Every outcome is exercised many times.
  EXPECT_GT(counts[static_cast<int>(SanitizeResult::kOk)], 1000);
  EXPECT_GT(counts[static_cast<int>(SanitizeResult::kRepaired)], 1000);
  EXPECT_GT(counts[static_cast<int>(SanitizeResult::kMalformed)], 1000);
  // The unmutated value: compact and clean.
  auto s = Sanitize(base);
  EXPECT_EQ(s.result, SanitizeResult::kOk);
  EXPECT_EQ(s.out.substr(0, 60), R"({"External id":101,"Input Dims":[[8],[],[1024,512]],"Input t)");
}

TEST(AppendJsonString, QuotesAndEscapesRawBytes) {
  std::string out;
  AppendJsonString("path/with \"quote\" \\ and\ttab \xff", &out);
  EXPECT_EQ(out, "\"path/with \\\"quote\\\" \\\\ and\\u0009tab \xEF\xBF\xBD\"");
}

// Plain runs are appended a block at a time: strings of every length up to
// 200 bytes with a quote, a backslash, a control byte, a UTF-8 sequence (2
// to 4 bytes, or cut) or an invalid byte at random offsets give, on every
// kernel, what escaping one byte at a time gives.
TEST(AppendJsonString, BlockAtATimeAsByteByByteOnEveryKernel) {
  // RFC 3629's well-formed sequences (no overlongs, surrogates or past
  // U+10FFFF): their length, 0 for a byte that begins none.
  auto seq_len = [](std::string_view t, size_t i) -> size_t {
    auto b = [&](size_t k) { return k < t.size() ? static_cast<unsigned char>(t[k]) : 0u; };
    auto cont = [&](size_t k) { return (b(k) & 0xC0) == 0x80; };
    const unsigned c = b(i);
    if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
      if (!cont(i + 1) || !cont(i + 2) || (c == 0xE0 && b(i + 1) < 0xA0) || (c == 0xED && b(i + 1) >= 0xA0)) return 0;
      return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
      if (!cont(i + 1) || !cont(i + 2) || !cont(i + 3) || (c == 0xF0 && b(i + 1) < 0x90) ||
          (c == 0xF4 && b(i + 1) >= 0x90))
        return 0;
      return 4;
    }
    return 0;
  };
  auto byte_by_byte = [&](std::string_view t) {
    std::string r = "\"";
    for (size_t i = 0; i < t.size();) {
      const unsigned char c = static_cast<unsigned char>(t[i]);
      if (c == '"' || c == '\\') {
        r += '\\';
        r += static_cast<char>(c);
        ++i;
      } else if (c < 0x20) {
        const char* hex = "0123456789abcdef";
        r += std::string("\\u00") + hex[c >> 4] + hex[c & 15];
        ++i;
      } else if (c < 0x80) {
        r += static_cast<char>(c);
        ++i;
      } else if (const size_t len = seq_len(t, i)) {
        r.append(t.substr(i, len));
        i += len;
      } else {
        r += "\xEF\xBF\xBD";
        ++i;
      }
    }
    return r + "\"";
  };
  const std::vector<std::string> specials = {"\"", "\\", "\x01", "\x1f", "\xC3\xA9", "\xE2\x82\xAC",
                                             "\xF0\x9F\x98\x80", "\xE2\x82", "\xff", "\x7f"};
  std::mt19937 rng(11);
  const ByteKernel before = ActiveByteKernel();
  size_t checked = 0;
  for (ByteKernel k : RunnableByteKernels()) {
    ASSERT_TRUE(SetByteKernel(k));
    for (size_t len = 0; len <= 200; ++len) {
      std::string t;
      while (t.size() < len) {
        if (rng() % 24 == 0) t += specials[rng() % specials.size()];
        else t += static_cast<char>('a' + rng() % 26);
      }
      std::string out = "x";
      AppendJsonString(t, &out);
      ASSERT_EQ(out, "x" + byte_by_byte(t)) << ByteKernelName(k) << " " << len;
      ++checked;
    }
  }
  ASSERT_TRUE(SetByteKernel(before));
  EXPECT_EQ(checked, 201 * RunnableByteKernels().size());
}

TEST(UnescapeJsonStringBody, DecodesEscapes) {
  EXPECT_EQ(UnescapeJsonStringBody(R"(a\"b\\c\/d\ne\u00e9\ud83d\ude00)"),
            "a\"b\\c/d\ne\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(UnescapeJsonStringBody(R"(\ud800)"), "\xEF\xBF\xBD");
}

// Issue 38: every byte kernel this CPU runs gives the scalar kernel's results
// and bytes: AppendSanitizedJson (both of its paths), CopyCleanJsonString,
// JsonStringEnd and AppendSanitizedStringBody, on a Kineto args object with
// long strings (a call stack) mutated at random, so that special bytes fall
// at every offset of a 16-byte block and at the ends of the input.
TEST(ByteKernels, EveryKernelGivesTheScalarBytes) {
  const ByteKernel before = ActiveByteKernel();
  const std::vector<ByteKernel> kernels = RunnableByteKernels();
  ASSERT_EQ(kernels.front(), ByteKernel::kScalar);
  std::string stack;
  for (int k = 0; k < 12; ++k) stack += "torch/nn/modules/module.py(1501): _call_impl\\n";
  const std::string base = R"({"Call stack": ")" + stack + R"(", "Input Dims": [[8, 1024], []], "name": )" +
                           R"("aten::linear caf\u00e9 \" x", "Sequence number": 3, "Fwd thread id": 1})";
  const std::string_view alphabet[] = {"\"", "\\", "\x01", "\xff", "\xC3\xA9", "\\u00e9", "\\q", "\\ud800",
                                       "a",   "\n",  "}",    ",",    "\xF0\x9F\x98\x80", "\xE2\x82"};
  XorShift next(0x2545F4914F6CDD1Dull);
  // What one kernel makes of `in`, as text.
  auto results = [](const std::string& in) {
    std::string r;
    std::string out = "p,";
    r += std::to_string(static_cast<int>(AppendSanitizedJson(in, &out))) + "|" + out + "|";
    out.clear();
    r += std::to_string(static_cast<int>(internal::AppendSanitizedJsonGeneral(in, &out))) + "|" + out + "|";
    out.clear();
    r += std::to_string(AppendSanitizedStringBody(in, &out)) + "|" + out + "|";
    for (size_t at = 0; at < in.size(); at += 7) r += std::to_string(JsonStringEnd(in, at)) + ",";
    std::string token(in.size() + 1, '\0');
    const size_t q = in.find('"', 1);
    const std::string_view t(in.data(), q == std::string::npos ? in.size() : q + 1);
    char* end = CopyCleanJsonString(t, token.data());
    r += end ? std::string(token.data(), end) : std::string("null");
    r += "|" + std::to_string(IsCleanJsonString(t)) + "|";
    for (size_t at = 0; at < in.size(); at += 5) r += std::to_string(JsonStringSpecial(in, at)) + ",";
    // The scan path's copy of a value that text may follow, from each `{`/`[`.
    for (size_t at = 0; at < in.size(); ++at) {
      if (in[at] != '{' && in[at] != '[') continue;
      size_t consumed = 0;
      std::string copy(in.size(), '\0');
      char* e = CopyCleanJsonPrefix(std::string_view(in).substr(at), copy.data(), &consumed);
      r += e ? std::to_string(consumed) + ":" + std::string(copy.data(), e) : std::string("null");
    }
    return r;
  };
  for (int round = 0; round < 3000; ++round) {
    std::string in = base;
    const int edits = round == 0 ? 0 : 1 + static_cast<int>(next() % 3);
    for (int k = 0; k < edits; ++k) {
      const size_t at = next() % (in.size() + 1);
      in.insert(at, alphabet[next() % std::size(alphabet)]);
    }
    if (round % 5 == 1) in.resize(next() % (in.size() + 1));  // cut anywhere
    ASSERT_TRUE(SetByteKernel(ByteKernel::kScalar));
    const std::string scalar = results(in);
    for (ByteKernel k : kernels) {
      ASSERT_TRUE(SetByteKernel(k));
      ASSERT_EQ(results(in), scalar) << ByteKernelName(k) << " on " << in;
    }
  }
  ASSERT_TRUE(SetByteKernel(before));
}

// The scan path's helpers: CopyCleanJsonPrefix copies the value at the
// start and says where it ended; IsCleanJsonString is CopyCleanJsonString's
// verdict.
TEST(CopyCleanJsonPrefix, CopiesTheFirstValueAndSaysWhereItEnds) {
  std::string out(64, '\0');
  size_t consumed = 0;
  const std::string_view in = R"({"a": [1, 2.5e3, "x\n"], "b": {}} , "next": 1})";
  char* end = CopyCleanJsonPrefix(in, out.data(), &consumed);
  ASSERT_NE(end, nullptr);
  EXPECT_EQ(std::string(out.data(), end), R"({"a":[1,2.5e3,"x\n"],"b":{}})");
  EXPECT_EQ(consumed, 33u);
  EXPECT_EQ(in.substr(consumed, 3), " , ");
  EXPECT_EQ(CopyCleanJsonPrefix(R"({"a": [1, 2)", out.data(), &consumed), nullptr);   // cut
  EXPECT_EQ(CopyCleanJsonPrefix(R"({"a": NaN} x)", out.data(), &consumed), nullptr);  // needs repair
  EXPECT_EQ(CopyCleanJsonPrefix(R"([1}, 2])", out.data(), &consumed), nullptr);        // brackets
  EXPECT_TRUE(IsCleanJsonString(R"("a\u00e9 \" b")"));
  EXPECT_TRUE(IsCleanJsonString("\"caf\xC3\xA9\""));
  EXPECT_FALSE(IsCleanJsonString(R"("a\q")"));
  EXPECT_FALSE(IsCleanJsonString("\"a\tb\""));
  EXPECT_FALSE(IsCleanJsonString("\"a\xC3\""));
  EXPECT_FALSE(IsCleanJsonString(R"("a"b")"));
  EXPECT_EQ(JsonStringSpecial("abc\"d", 0), 3u);
  EXPECT_EQ(JsonStringSpecial("abcdefghijklmnopqrstuvwxyz\x01", 2), 26u);
  EXPECT_EQ(JsonStringSpecial("abc", 0), 3u);
}

TEST(ByteKernels, NamesAndChoice) {
  EXPECT_EQ(ParseByteKernel("sse2"), ByteKernel::kSse2);
  EXPECT_EQ(ParseByteKernel("avx9"), std::nullopt);
  EXPECT_STREQ(ByteKernelName(ByteKernel::kScalar), "scalar");
  EXPECT_TRUE(RunsByteKernel(ByteKernel::kScalar));
#if defined(__x86_64__)
  EXPECT_TRUE(RunsByteKernel(ByteKernel::kSse2));  // every x86-64 CPU
#endif
  // With no TRACEMILL_BYTE_KERNEL (ctest sets none here): the default,
  // SSE2 on x86-64 (the wider ones measured no faster).
  if (!std::getenv("TRACEMILL_BYTE_KERNEL")) {
    EXPECT_EQ(ActiveByteKernel(), DefaultByteKernel());
#if defined(__x86_64__)
    EXPECT_EQ(DefaultByteKernel(), ByteKernel::kSse2);
#endif
    EXPECT_EQ(ByteKernelNote(), ByteKernelName(ActiveByteKernel()));
  }
}

// RestArgValues: one walk, each key's value as RestArgValue gives it (the
// first member of that key in args; "" if none, or if the walk stops at a
// malformed member before it).
TEST(RestArgValues, EachKeyAsRestArgValueInOneWalk) {
  const std::string_view keys[] = {"Total Allocated", "Device Id", "Device Type", "missing", "Device Id"};
  for (std::string_view rest :
       {std::string_view(R"("s":"t","args":{"Device Type":0,"Device Id":-1,"Total Allocated":12,"Bytes":4})"),
        std::string_view(R"("args":{"Device Id":"x\"y","Device Type":{"a":[1,2]},"Device Id":3},"z":1)"),
        std::string_view(R"("n":{"args":{"Device Id":9}},"args":{"Device Type":0,"Device Id":5})"),
        std::string_view(R"("args":{"Device Type":0,bad,"Total Allocated":1})"),
        std::string_view(R"("args":{"Device Type":0,"Device Id":)"), std::string_view(R"("s":"t")"),
        std::string_view("")}) {
    std::string_view values[std::size(keys)];
    RestArgValues(rest, keys, values);
    for (size_t i = 0; i < std::size(keys); ++i) EXPECT_EQ(values[i], RestArgValue(rest, keys[i])) << rest << " " << keys[i];
  }
  std::string_view values[std::size(keys)];
  RestArgValues(R"("s":"t","args":{"Device Type":0,"Device Id":-1,"Total Allocated":12,"Bytes":4})", keys, values);
  EXPECT_EQ(values[0], "12");
  EXPECT_EQ(values[1], "-1");
  EXPECT_EQ(values[2], "0");
  EXPECT_EQ(values[3], "");
  EXPECT_EQ(values[4], "-1");
  RestArgValues(R"("args":{"Device Id":"x\"y","Device Type":{"a":[1,2]},"Device Id":3},"z":1)", keys, values);
  EXPECT_EQ(values[1], R"("x\"y")");
  EXPECT_EQ(values[2], R"({"a":[1,2]})");
  RestArgValues(R"("args":{"Device Type":0,bad,"Total Allocated":1})", keys, values);
  EXPECT_EQ(values[0], "");
  EXPECT_EQ(values[2], "0");
}

}  // namespace
}  // namespace tracemill::formats
