// TefDecoder's scan path (issue 38): it either decodes an input exactly as
// the fast path does (the same events, strings, rest bytes, processes,
// metadata and report) or declines and lets the fast path run. Each input is
// decoded twice, scan path on and off, and compared in full; the real
// Kineto traces must take the scan path (else this would test nothing).
#include <simdjson.h>
#include <zlib.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "formats/chrome/tef_decoder.h"
#include "formats/common/trace_data.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/testing/convert_harness.h"

namespace tracemill::formats {
namespace {

using ::tracemill::testing::DataPath;

// Text: a file's bytes (gunzipped if it ends in .gz).
std::string Text(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  EXPECT_TRUE(f) << path;
  std::string r;
  if (!f) return r;
  char buf[1 << 16];
  for (int n; (n = gzread(f, buf, sizeof buf)) > 0;) r.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return r;
}

struct Decoded {
  std::string dump;
  bool scanned = false;
};

Decoded Decode(const std::string& text, bool scan) {
  std::string padded = text;
  padded.append(simdjson::SIMDJSON_PADDING, '\0');
  TefDecoder dec;
  dec.set_scan_path(scan);
  TraceBuilder b;
  const DecodeReport r = dec.Decode(std::string_view(padded.data(), text.size()), padded.size(), &b);
  const bool scanned = dec.scanned();
  auto data = b.Finish();
  return {fuzz::DecodeDump(*data, r), scanned};
}

// ExpectSame: the scan path on and off give the same decode; returns
// whether the scan path took the input.
bool ExpectSame(const std::string& text, const std::string& what) {
  const Decoded on = Decode(text, true), off = Decode(text, false);
  EXPECT_FALSE(off.scanned) << what;
  if (on.dump != off.dump) {  // the first line that differs (a dump may be megabytes)
    std::istringstream a(on.dump), b(off.dump);
    std::string la, lb;
    size_t line = 1;
    while (std::getline(a, la) && std::getline(b, lb) && la == lb) ++line;
    ADD_FAILURE() << what << ": line " << line << " differs:\nscan: " << la.substr(0, 2000)
                  << "\nfast: " << lb.substr(0, 2000);
  }
  return on.scanned;
}

TEST(TefScanPath, RealTracesTakeItAndDecodeAsTheFastPath) {
  const char* kRealTraces[] = {
      "kineto-tb-plugin/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
      "hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
      "hta/nccl_parser_config/nccl_data.json.gz",
      "hta/trace_filter/sampled_rank-0.json.gz",
      "kineto-2026/newest_layout.json",
      "kineto-2026/memory_instants.json",
      "kineto-2026/logger_buckets.json",
      "kineto-2026/trailing_keys.json",
      "perfetto/flow_events_json_v2.json",
      // the array form
      "smdebug/horovod_timeline_small.json",
      "smdebug/1589314018481947000_1234-testhost_model_timeline.json",
  };
  for (const char* rel : kRealTraces) {
    const std::string text = Text(DataPath(rel));
    ASSERT_GT(text.size(), 1000u) << rel;
    EXPECT_TRUE(ExpectSame(text, rel)) << rel << ": declined";
  }
}

TEST(TefScanPath, MalformedCorpusDecodesAsBefore) {
  int scanned = 0, files = 0;
  for (const char* name :
       {"crlf.json", "duplicate_keys.json", "dur_negative.json", "empty.json", "id2_global_reused_across_events.json",
        "id2_local_and_global.json", "not_a_trace.json", "nul_bytes.json", "nul_run_between_events.json",
        "nul_run_inside_event.json", "nul_hole_quotes_in_step.json", "ph_missing.json", "ph_unknown.json"}) {
    const std::string text = Text(DataPath(absl::StrCat("../malformed/", name)));
    ++files;
    scanned += ExpectSame(text, name);
  }
  EXPECT_EQ(files, 13);
  EXPECT_GT(scanned, 0);  // the well-formed ones among them
}

TEST(TefScanPath, DeclinesWhatItDoesNotTakeAndTheFastPathDecodes) {
  const std::string ok = R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2, "args": {"k": [1, 2.5e3, "x", true, null]}}]})";
  EXPECT_TRUE(ExpectSame(ok, "clean"));
  EXPECT_TRUE(ExpectSame(R"( [{"ph": "X", "name": "a", "ts": 1}, {"ph": "i", "ts": 2, "s": "g"}] )", "array"));
  EXPECT_TRUE(ExpectSame("[]", "empty array"));
  const std::vector<std::string> declined = {
      // a value the fast path repairs (and warns about)
      R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "args": {"k": NaN}}]})",
      // a key given twice (the last value is kept)
      R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "ts": 5}]})",
      // the array form with an element that is not an object, or text after it
      R"([{"ph": "X", "name": "a", "ts": 1}, []])",
      R"([{"ph": "X", "name": "a", "ts": 1}] [])",
      // text after the document
      R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1}]} x)",
      // an invalid escape, a control character, invalid UTF-8 in a name
      "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\\q\", \"ts\": 1}]}",
      "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\tb\", \"ts\": 1}]}",
      "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\xC3\", \"ts\": 1}]}",
      // a number glued to a string; a bare word where ts is read
      R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1"x"}]})",
      R"({"traceEvents": [{"ph": "X", "name": "a", "ts": tid}]})",
      // a container where ph is read, needing repair
      R"({"traceEvents": [{"ph": [NaN], "name": "a", "ts": 1}]})",
      // a cut input, an element that is not an object
      R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1}, {"ph": "X", "na)",
      R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1}, 5]})",
      // a core key whose value Interpret keeps in the rest (name not a string)
      R"({"traceEvents": [{"ph": "X", "name": {"a": 1}, "ts": 1}]})",
      // a number of 1,001 digits in the rest (the fast path writes it as a string)
      R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "n": )" + std::string(1001, '7') + "}]}",
      // brackets of two kinds closing each other in args
      R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "args": {"k": [1}]}]})",
  };
  for (const std::string& text : declined) EXPECT_FALSE(ExpectSame(text, text)) << text;
  // A rest larger than the scan path's room at the arena's end (16 KiB):
  // the rest of that event is made by Interpret, the events around it as
  // usual.
  const std::string big(40000, 'x');
  EXPECT_TRUE(ExpectSame(R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "args": {"k": [1]}},
      {"ph": "X", "name": "b", "ts": 2, "s": "g", "args": {"long": ")" + big + R"(", "n": [1, 2]}, "z": 5},
      {"ph": "X", "name": "c", "ts": 3, "args": {"k": ")" + big + R"("}, "args2": [1]},
      {"ph": "X", "name": "d", "ts": 4, "args": {"k": 2}}]})", "a large rest"));
  // Two keys of one signature (length, first and last byte: one bit of the
  // duplicate filter) are not a key given twice: taken, by the collecting
  // scan, in events whose leads match and in one that is scanned.
  EXPECT_TRUE(ExpectSame(R"([{"ph": "X", "name": "a", "ts": 1, "kab": 1, "kcb": 2},
      {"ph": "X", "name": "b", "ts": 2, "kab": 3, "kcb": 4}, {"ph": "X", "kab": 5, "name": "c", "kcb": 6, "ts": 3}])",
                         "keys that share a filter bit"));
  // Separators between events of every shape, each shape again after others
  // (the bytes from one event's end to the next one's `{` are leads too), in
  // both forms of the document; a separator cut by the end, declined.
  const std::vector<std::string> seps = {",", ", ", ",\n  ", " ,", "\n,\n", ",\t\t", ",                                  "};
  std::string events;
  for (int round = 0; round < 3; ++round)
    for (size_t i = 0; i < seps.size(); ++i) {
      if (round || i) events += seps[(i * (round + 2)) % seps.size()];
      events += R"({"ph": "X", "name": "s", "ts": )" + std::to_string(round * 10 + i) + "}";
    }
  EXPECT_TRUE(ExpectSame("[" + events + "]", "separators, array"));
  EXPECT_TRUE(ExpectSame(R"({"traceEvents": [)" + events + "]}", "separators, object"));
  EXPECT_FALSE(ExpectSame("[" + events + ",\n  ", "a separator at the end"));
  // UTF-8 and escapes that need no repair are taken.
  EXPECT_TRUE(ExpectSame("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"\xC3\xA9\\n\\u0041\", \"ts\": 1}]}", "utf8"));
}

// Member leads (ScanEvent): the bytes from one value to the next member's
// value are matched against those of earlier events and a match takes
// their key. Here neighbouring events differ from each other by one byte of
// a lead (a key's byte, one space more or less after the colon, a byte past the
// first 16 of a long lead, a lead of exactly 32 and of 33 bytes, an escape
// in a key) and more shapes rotate than a member position keeps leads for:
// a lead matched on fewer bytes than its own, a key taken from the wrong
// place or whitespace left after a match would change the decode (or
// decline the document).
TEST(TefScanPath, MemberLeadsMatchByteForByte) {
  const std::string pad16(16, ' ');
  const std::vector<std::string> shapes = {
      R"({"ph": "X", "cat": "c", "name": "n", "pid": 1, "tid": 2, "ts": 10, "dur": 3, "args": {"a": 1}})",
      R"({"ph": "X", "cat": "c", "name": "n", "pid": 1, "tid": 2, "ts":10, "dur": 3, "args": {"a": 1}})",
      R"({"ph": "X", "cat": "c", "name": "n", "pid": 1, "tid": 2, "tx": 10, "dur": 3, "args": {"a": 1}})",
      R"({"ph": "X", "cat": "c", "name": "n", "pid": 1, "tia": 2, "ts": 11, "dur": 3, "args": {"a": 1}})",
      R"({"ph": "X", "cat": "c", "name": "n", "pid": 1, "tid": 2, "ts":  12, "dur": 3, "args": {"a": 1}})",
      "{\"ph\": \"X\", \"cat\": \"c\",\n" + pad16 + "\"nameAAAAAAa\": 5, \"name\": \"m\", \"ts\": 13}",
      "{\"ph\": \"X\", \"cat\": \"c\",\n" + pad16 + "\"nameAAAAAAb\": 6, \"name\": \"m\", \"ts\": 14}",
      // leads of 32 and 33 bytes (`, ` + 16 spaces + the key + `: `)
      "{\"ph\": \"X\", \"cat\": \"c\", " + pad16 + "\"k123456789\": 7, \"ts\": 15}",
      "{\"ph\": \"X\", \"cat\": \"c\", " + pad16 + "\"k1234567890\": 8, \"ts\": 16}",
      "{\"ph\": \"X\", \"cat\": \"c\", " + pad16 + "\"k123456789\": 9, \"ts\": 17}",
      R"({"ph": "X", "cat": "c", "n\u0061me": "e", "ts": 18})",
      R"({"ph": "X", "cat": "c", "name": "e", "ts": 19})",
      R"({"ph": "i", "s": "g", "name": "e", "ts": 20})",
      R"({"ph": "i", "id": 3, "name": "e", "ts": 21})",
      R"({"ph": "X", "cat": "c", "name": "n", "pid": 1, "tid": 2, "ts": 22, "dur": 3, "args": {"a": 1}})",
      R"({})",
      R"({ "ph": "X", "ts": 23 })",
  };
  std::string doc = "{\"traceEvents\": [";
  for (int round = 0; round < 3; ++round)
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (round || i) doc += ",\n";
      doc += shapes[(i * (round + 1)) % shapes.size()];
    }
  doc += "]}";
  EXPECT_TRUE(ExpectSame(doc, "member leads"));
  // A key given twice, once by a lead and once scanned, is found (declined).
  EXPECT_FALSE(ExpectSame(R"([{"ph": "X", "name": "a", "ts": 1, "dur": 2}, {"ph": "X", "name": "a", "ts": 1, "ts": 5}])",
                          "a key by a lead and again"));
  // A decoder keeps its leads from one input to the next: a second input
  // whose leads differ from the first's by one byte decodes as it does
  // alone.
  const std::string first = R"([{"ph": "X", "name": "a", "ts": 1, "tid": 2}])";
  const std::string second = R"([{"ph": "X", "name": "a", "ts": 1, "tix": 2}])";
  auto decode_with = [](TefDecoder* dec, const std::string& text) {
    std::string padded = text + std::string(simdjson::SIMDJSON_PADDING, '\0');
    TraceBuilder b;
    const DecodeReport r = dec->Decode(std::string_view(padded.data(), text.size()), padded.size(), &b);
    EXPECT_TRUE(dec->scanned()) << text;
    return fuzz::DecodeDump(*b.Finish(), r);
  };
  TefDecoder reused;
  decode_with(&reused, first);
  EXPECT_EQ(decode_with(&reused, second), Decode(second, false).dump);
}

// An event's own members of non-core keys that are strings or scalars are
// copied into its rest as the scan path's loops found them: the same bytes
// as the fast path's, the same refusals (a number past 1,000 digits, a bad
// literal, a leading zero, a control character).
TEST(TefScanPath, EventScalarsCopiedAsFound) {
  const std::string base = R"({"ph": "X", "name": "a", "ts": 1, )";
  for (const std::string& m : {std::string(R"("s": "t", "bp": "e")"), std::string(R"("x": 1.5e3, "y": true, "z": null)"),
                               std::string(R"("w": -0, "v": -12.25E-1, "u": "\u00e9\n\"")"),
                               "\"n\": " + std::string(1000, '7'), "\"q\": \"" + std::string(40, 'q') + "\""}) {
    const std::string doc = "[" + base + m + "}, " + base + m + "}]";
    EXPECT_TRUE(ExpectSame(doc, m.substr(0, 60))) << m.substr(0, 60);
  }
  for (const std::string& bad : {"\"m\": " + std::string(1001, '7'), std::string(R"("b": 01)"),
                                 std::string(R"("d": tru)"), std::string("\"c\": \"a\x01\""),
                                 std::string(R"("e": 1.)"), std::string(R"("f": -)")}) {
    const std::string doc = "[" + base + R"("k": 1}, )" + base + bad + "}]";
    EXPECT_FALSE(ExpectSame(doc, bad.substr(0, 60))) << bad.substr(0, 60);
  }
}

// An object's end is a lead too (the bytes from the last value to its `}`,
// marked as an end): events and args objects that end at a member position
// where others go on, with more layouts there than a position has ways, so
// end leads and member leads take each other's ways; each object still
// ends where its `}` is.
TEST(TefScanPath, ObjectsEndByALeadWhereOthersGoOn) {
  const std::vector<std::string> tails = {"}", ", \"dur\": 2}", " }", ",\"dur\": 2}", ", \"tid\": 3}", "\n}",
                                          ", \"dur\": 2 }"};
  const std::vector<std::string> args = {"{}", "{ }", R"({"a": 1})", R"({"a": 1, "b": 2})", R"({"a": 1 })",
                                         R"({"a": 1,"b": 2})", R"({"a": 1, "c": [1]})", "{\"a\": 1\n}"};
  std::string doc = "[";
  for (int round = 0; round < 4; ++round)
    for (size_t i = 0; i < tails.size() * args.size(); ++i) {
      const size_t k = i * (round + 1) + round;
      absl::StrAppend(&doc, round || i ? ",\n" : "", R"({"ph": "X", "name": "a", "args": )",
                      args[k % args.size()], R"(, "ts": 1)", tails[(k / args.size()) % tails.size()]);
    }
  doc += "]";
  EXPECT_TRUE(ExpectSame(doc, "object ends"));
}

// Args are copied member by member (CopyArgs), with their own leads: the
// same bytes as a copy of the whole object, the same inputs refused. Args
// whose leads differ by one byte from the event before, more members than
// positions with leads, containers nested up to the limit of 512 open
// containers and just past it, numbers of 1,000 and 1,001 characters.
TEST(TefScanPath, ArgsCopiedMemberByMemberAsAWhole) {
  auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  std::string many = "{";
  for (int i = 0; i < 20; ++i) absl::StrAppend(&many, i ? ", " : "", "\"k", i, "\": ", i);
  many += "}";
  const std::vector<std::string> args = {
      R"({"Device": 1, "External id": 2, "Trace name": "PyTorch Profiler", "Input Dims": [[3, 224], []]})",
      R"({"Device": 1, "External iX": 2, "Trace name": "PyTorch Profiler", "Input Dims": [[3, 224], []]})",
      R"({"Device": 1,"External id": 2, "Trace name": "p", "Input Dims": [[3, 224], []]})",
      R"({"Device":  1, "External id": 2 , "Trace name": "p\n\u00e9", "Input Dims": {"a": [true, null, -1.5e3]}})",
      "{\n      \"Device\": 1, \"External id\": 2,\n      \"Trace name\": \"\xC3\xA9\", \"Input Dims\": []\n    }",
      R"({"D\u0065vice": 1, "Call stack": "a;b;c"})",
      R"({})",
      R"({ })",
      many,
      "{\"a\": 1, " + std::string(20, ' ') + "\"k123456789\": 2, " + std::string(20, ' ') + "\"k1234567890\": 3}",
      "{\"deep\": " + nested(511) + "}",
      "{\"deep\": " + nested(512) + "}",
      "{\"n\": " + std::string(1000, '7') + ", \"m\": -" + std::string(999, '7') + "}",
      "{\"n\": " + std::string(1001, '7') + "}",
  };
  std::string doc = "[";
  for (int round = 0; round < 2; ++round)
    for (size_t i = 0; i < args.size(); ++i)
      absl::StrAppend(&doc, round || i ? ",\n" : "", R"({"ph": "X", "name": "a", "ts": )", i, R"(, "args": )",
                      args[i], "}");
  doc += "]";
  // The whole: 512 open containers and a 1,001-character number need
  // repair, so the scan path declines; without those two it takes the rest.
  EXPECT_FALSE(ExpectSame(doc, "args"));
  for (const std::string& a : args) {
    const bool needs_repair = a.find(nested(512)) != std::string::npos || a.find(std::string(1001, '7')) != std::string::npos;
    EXPECT_EQ(ExpectSame(R"([{"ph": "X", "name": "a", "ts": 1, "args": )" + a + "}]", a.substr(0, 80)), !needs_repair)
        << a.substr(0, 80);
  }
  // Args that end near the end of the scan path's 16 KiB room for a rest:
  // their last leads are written where fewer than 32 bytes are left.
  std::string near = R"([{"ph": "X", "name": "a", "ts": 1, "args": {"f": "", "a": 1, "b": 2, "c": 3, "d": 4}})";
  for (int k = 0; k < 80; ++k)
    absl::StrAppend(&near, R"(, {"ph": "X", "name": "a", "ts": 1, "args": {"f": ")", std::string(16300 + k, 'x'),
                    R"(", "a": 1, "b": 2, "c": 3, "d": 4}})");
  near += "]";
  EXPECT_TRUE(ExpectSame(near, "args near the room's end"));
  // Args that are not clean JSON: declined, and decoded as before.
  for (const char* bad : {R"({"k": 1,})", R"({"k" 1})", R"({"k": 01})", "{\"k\": \"a\x01\"}", R"({1: 2})",
                          R"({"k": 1 "j": 2})", R"({"k": [1}})", R"({"k": tru})", R"({"k": 1)"}) {
    const std::string one = R"([{"ph": "X", "name": "a", "ts": 1, "args": {"k": 0}}, {"ph": "X", "name": "a", "ts": 1, "args": )" +
                            std::string(bad) + "}]";
    EXPECT_FALSE(ExpectSame(one, bad)) << bad;
  }
}

// Args integers are found and copied in one 16-byte block (CopyUnsigned)
// where they are plain: 1 to 15 digits followed by anything but a digit,
// `.`, `e` or `E`. Every length from 1 to 18 digits, each followed by each
// byte that may or may not end it, decodes as the fast path does; plain
// ones are taken, glued ones (`12x`, `12\xC3`, `12"`) declined, and a
// number that the block cannot hold (16 digits and more, a fraction or an
// exponent, `0`, `-`) is scanned as before.
TEST(TefScanPath, ArgsIntegersCopiedInOneBlock) {
  const std::string digits = "123456789012345678";
  struct After {
    std::string text;
    bool taken;
  };
  const std::vector<After> afters = {{",", true},    {"}", true},     {" ,", true},   {"\n}", true},
                                     {".5,", true},   {"e3,", true},   {"E-2}", true}, {".0e+1}", true},
                                     {"x,", false},   {"\xC3\xA9,", false}, {"\",", false}, {".,", false},
                                     {"e,", false},   {"-1,", false},  {":,", false},  {"/,", false}};
  size_t tried = 0;
  for (size_t len = 1; len <= digits.size(); ++len) {
    for (const After& a : afters) {
      const std::string num = digits.substr(0, len);
      const std::string args = "{\"External id\": " + num + a.text + (a.text.back() == '}' ? "" : " \"k\": 7}");
      const std::string doc = R"([{"ph": "X", "name": "a", "ts": 1, "args": {"External id": 3, "k": 7}},)"
                              "\n" R"({"ph": "X", "name": "a", "ts": 2, "args": )" + args + "}]";
      EXPECT_EQ(ExpectSame(doc, args), a.taken) << args;
      ++tried;
    }
  }
  EXPECT_EQ(tried, 18u * 16u);
  // Integers that begin otherwise: scanned as before.
  for (const char* v : {"0", "-12", "-0", "07", "0.5", "100000000000000000000"}) {
    const std::string doc = std::string(R"([{"ph": "X", "name": "a", "ts": 1, "args": {"n": )") + v + ", \"m\": 1}}]";
    EXPECT_EQ(ExpectSame(doc, v), std::string(v) != "07") << v;
  }
  // An integer that the input's end cuts: the block reads into the padding,
  // the scan path declines and the fast path reports the truncation.
  EXPECT_FALSE(ExpectSame(R"([{"ph": "X", "name": "a", "ts": 1, "args": {"n": 12345)", "cut"));
  // Integers that the end of the 16 KiB room for an event's rest cuts, at
  // each of their digits: the copy stops at the room's end.
  for (const char* after : {", \"b\": 2}", "}"}) {
    std::string near = R"([{"ph": "X", "name": "a", "ts": 1, "args": {"f": "", "a": 123456789012345)" +
                       std::string(after) + "}";
    for (int k = 0; k < 48; ++k)
      absl::StrAppend(&near, R"(, {"ph": "X", "name": "a", "ts": 1, "args": {"f": ")", std::string(16330 + k, 'x'),
                      R"(", "a": 123456789012345)", after, "}");
    near += "]";
    EXPECT_TRUE(ExpectSame(near, after));
  }
}

// Args containers are remembered by their bytes (ValueMemo, a slot chosen
// by the 32 bytes at the value): values that share their first 32 bytes
// (one slot) but differ after, a value that is another's start, the same
// value with other whitespace, values of 64 and 65 bytes, strings that
// differ in one byte: each event keeps its own value, in an order that
// revisits them, on a decoder's first and second input; a remembered
// value's start followed by no end is declined.
TEST(TefScanPath, RepeatedArgsContainersKeepTheirOwnBytes) {
  const std::string head = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, ";
  std::string sixty_four = "[\"" + std::string(60, 'x') + "\"]", sixty_five = "[\"" + std::string(61, 'x') + "\"]";
  ASSERT_EQ(sixty_four.size(), 64u);
  const std::vector<std::string> values = {
      head + "12]", head + "13]", head + "12, 14]", head + " 12]", head + "12 ]", "[[1, 3], [], [7]]",
      "[[1, 3], [], [7], []]", R"(["float", "float"])", R"(["float", "floaT"])", R"({"a": [1], "b": {}})",
      R"({"a": [1], "b": []})", sixty_four, sixty_five, "[]", "[ ]", "[[]]",
  };
  std::string doc = "[";
  int n = 0;
  for (int round = 0; round < 3; ++round)
    for (size_t i = 0; i < values.size(); ++i) {
      const std::string& a = values[(i * (round + 1)) % values.size()];
      const std::string& b = values[(i * 7 + round) % values.size()];
      absl::StrAppend(&doc, n ? ",\n" : "", R"({"ph": "X", "name": "a", "ts": )", n + 1,
                      R"(, "args": {"Input Dims": )", a, R"(, "grid": )", b, R"(, "block": )", a, "}}");
      ++n;
    }
  doc += "]";
  EXPECT_TRUE(ExpectSame(doc, "repeated containers"));
  // One decoder, two inputs: the second finds the first's values remembered.
  std::string padded = doc + doc;
  padded.append(simdjson::SIMDJSON_PADDING, '\0');
  TefDecoder dec;
  std::string dumps[2];
  for (int k = 0; k < 2; ++k) {
    TraceBuilder b;
    const DecodeReport r = dec.Decode(std::string_view(padded.data() + k * doc.size(), doc.size()),
                                      padded.size() - k * doc.size(), &b);
    EXPECT_TRUE(dec.scanned());
    dumps[k] = fuzz::DecodeDump(*b.Finish(), r);
  }
  EXPECT_EQ(dumps[0], dumps[1]);
  EXPECT_EQ(dumps[0], Decode(doc, false).dump);
  // The exact rest of an event whose value begins with a remembered one.
  EXPECT_NE(dumps[0].find(R"({"Input Dims":[1,2,3,4,5,6,7,8,9,10,11,12,14],"grid":)"), std::string::npos);
  // Remembered values near the end of the scan path's 16 KiB room for a
  // rest, where fewer bytes are left than the value has.
  std::string near = R"([{"ph": "X", "name": "a", "ts": 1, "args": {"f": "", "k": )" + head + "12]}}";
  for (int k = 0; k < 80; ++k)
    absl::StrAppend(&near, R"(, {"ph": "X", "name": "a", "ts": 1, "args": {"f": ")", std::string(16300 + k, 'x'),
                    R"(", "k": )", head, "12]}}");
  near += "]";
  EXPECT_TRUE(ExpectSame(near, "remembered values near the room's end"));
  // A remembered value's start with no end: declined.
  const std::string cut = R"([{"ph": "X", "name": "a", "ts": 1, "args": {"k": )" + head + R"(12]}}, {"ph": "X", "name": "a", "ts": 2, "args": {"k": )" + head + "12}}]";
  EXPECT_FALSE(ExpectSame(cut, "cut"));
}

// Args strings and scalars kept with their lead (ArgsLead::value, the
// value and the byte after it): values that are another's start (`5` and
// `50`, `"a"` and `"ab"`), the same value before another byte (`5,` `5 ,`
// `5}`), literals, fractions, escapes, strings of 30 to 33 bytes (the last
// kept fits 32 bytes with the byte after it), in an order that repeats
// some and changes others, then values that change at every event (the
// lead stops keeping, kValueMisses) and repeat again (kValueRest later):
// each event keeps its own value; kept values near the input's end and the
// 16 KiB room's end; a kept value the input's end cuts is declined.
TEST(TefScanPath, RepeatedArgsScalarsKeepTheirOwnBytes) {
  const std::vector<std::string> values = {
      "5", "50", "5 ", "-5", "5.5", "5e1", "0", "true", "false", "null", R"("a")", R"("ab")", R"("a\"b")",
      R"("")", "\"" + std::string(28, 's') + "\"", "\"" + std::string(29, 's') + "\"",
      "\"" + std::string(30, 's') + "\"", "\"" + std::string(31, 's') + "\"", "123456789012345",
      "1234567890123456"};
  const std::vector<std::string> afters = {", \"k\": 7}", " , \"k\": 7}", "}", ",\"k\":7}"};
  std::string doc = "[";
  int n = 0;
  auto event = [&](const std::string& value, const std::string& after) {
    absl::StrAppend(&doc, n ? ",\n" : "", R"({"ph": "X", "name": "a", "ts": )", n + 1, R"(, "args": {"n": )", value,
                    after, "}");
    ++n;
  };
  for (int round = 0; round < 3; ++round)
    for (size_t i = 0; i < values.size(); ++i)
      for (size_t r = 0; r <= (i + round) % 3; ++r) event(values[i], afters[(i + r + round) % afters.size()]);
  for (int k = 0; k < 150; ++k) event(std::to_string(1000 + k), afters[0]);  // changes at every event
  for (int round = 0; round < 2; ++round)
    for (size_t i = 0; i < values.size(); ++i)
      for (int r = 0; r < 3; ++r) event(values[i], afters[0]);
  const std::string body = doc;
  doc += "]";
  EXPECT_TRUE(ExpectSame(doc, "repeated scalars"));
  const Decoded on = Decode(doc, true);
  EXPECT_NE(on.dump.find(R"({"n":50,"k":7})"), std::string::npos);
  EXPECT_NE(on.dump.find(R"({"n":"a\"b"})"), std::string::npos);
  // Kept values at the input's end: the last value's byte after it is the
  // end of the input (its `}` then `]`), then one the end cuts.
  EXPECT_TRUE(ExpectSame(body + R"(, {"ph": "X", "name": "a", "ts": 9, "args": {"n": 5}}])", "at the end"));
  EXPECT_FALSE(ExpectSame(body + R"(, {"ph": "X", "name": "a", "ts": 9, "args": {"n": 5)", "cut"));
  EXPECT_FALSE(ExpectSame(body + R"(, {"ph": "X", "name": "a", "ts": 9, "args": {"n": "a")", "cut string"));
  // Kept values at each position around the end of the 16 KiB room for a
  // rest, where fewer bytes are left than the value has.
  for (const std::string& value : {std::string("123456789012345"), "\"" + std::string(30, 's') + "\""}) {
    std::string near = R"([{"ph": "X", "name": "a", "ts": 1, "args": {"f": "", "n": )" + value + "}}";
    for (int k = 0; k < 48; ++k)
      absl::StrAppend(&near, R"(, {"ph": "X", "name": "a", "ts": 1, "args": {"f": ")", std::string(16320 + k, 'x'),
                      R"(", "n": )", value, "}}");
    near += "]";
    EXPECT_TRUE(ExpectSame(near, "near the room's end: " + value));
  }
}

// Names, categories and phases are interned through a cache of recent
// strings (256 slots, views into the input): with thousands of names that
// share slots, in an order that revisits them, every event keeps its own
// name, category and phase, on both paths and on a decoder's second input.
TEST(TefScanPath, RecentStringsKeepEachEventsOwnName) {
  // pids and tids (raw tokens, through their own recent slots) revisit too.
  auto TidOf = [](int n) { return n % 2 ? absl::StrCat(n % 11) : absl::StrCat("\"t", n % 13, "\""); };
  std::string doc = "[";
  std::vector<std::string> names;
  for (int i = 0; i < 3000; ++i) {
    const int n = (i * 7919) % 1100;  // revisits, in an order that jumps
    names.push_back(absl::StrCat("op", n % 10 == 0 ? "" : "::x", n));
    absl::StrAppend(&doc, i ? "," : "", R"({"ph": ")", i % 3 ? "X" : "i", R"(", "cat": "c)", n % 5, R"(", "name": ")",
                    names.back(), R"(", "ts": )", i, R"(, "pid": )", n % 7, R"(, "tid": )", TidOf(n), "}");
  }
  doc += "]";
  TefDecoder dec;
  for (int input = 0; input < 2; ++input)
    for (bool scan : {true, false}) {
      dec.set_scan_path(scan);
      std::string padded = doc + std::string(simdjson::SIMDJSON_PADDING, '\0');
      TraceBuilder b;
      dec.Decode(std::string_view(padded.data(), doc.size()), padded.size(), &b);
      EXPECT_EQ(dec.scanned(), scan);
      auto data = b.Finish();
      ASSERT_EQ(data->events.size(), names.size());
      std::vector<int> seen(names.size(), 0);
      for (const Event& e : data->events) {
        const std::string_view name = data->strings[e.name];
        ASSERT_LT(e.ts_ns / 1000, static_cast<int64_t>(names.size()));
        const size_t i = static_cast<size_t>(e.ts_ns / 1000);
        EXPECT_EQ(name, names[i]) << "event " << i;
        EXPECT_EQ(data->strings[e.ph], i % 3 ? "X" : "i") << "event " << i;
        EXPECT_EQ(data->strings[e.cat], absl::StrCat("c", (i * 7919 % 1100) % 5)) << "event " << i;
        EXPECT_EQ(data->processes[e.pid].pid_token, absl::StrCat((i * 7919 % 1100) % 7)) << "event " << i;
        EXPECT_EQ(data->strings[e.tid], TidOf(static_cast<int>(i * 7919 % 1100))) << "event " << i;
        ++seen[i];
      }
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(names.size()));
    }
}

// An event's name, category, pid and tid are compared with the last ones
// in place (SameText): strings of every length up to 20 that differ from
// the event before in one byte only, at each place in turn, each kept as
// its own, on both paths.
TEST(TefScanPath, NamesDifferingInOneByteStayApart) {
  std::string doc = "[";
  std::vector<std::string> texts;
  for (size_t len = 1; len <= 20; ++len)
    for (size_t k = 0; k < len; ++k)
      for (char c : {'1', '2'}) {
        std::string t(len, '7');
        t[k] = c;
        texts.push_back(t);
      }
  for (size_t i = 0; i < texts.size(); ++i)
    absl::StrAppend(&doc, i ? "," : "", R"({"ph": "X", "cat": "c)", texts[i], R"(", "name": "n)", texts[i],
                    R"(", "pid": )", texts[i], R"(, "tid": )", texts[i], R"(, "ts": )", i, "}");
  doc += "]";
  for (bool scan : {true, false}) {
    std::string padded = doc + std::string(simdjson::SIMDJSON_PADDING, '\0');
    TefDecoder dec;
    dec.set_scan_path(scan);
    TraceBuilder b;
    dec.Decode(std::string_view(padded.data(), doc.size()), padded.size(), &b);
    EXPECT_EQ(dec.scanned(), scan);
    auto data = b.Finish();
    ASSERT_EQ(data->events.size(), texts.size());
    for (const Event& e : data->events) {
      const size_t i = static_cast<size_t>(e.ts_ns / 1000);
      ASSERT_LT(i, texts.size());
      EXPECT_EQ(data->strings[e.name], "n" + texts[i]) << "event " << i;
      EXPECT_EQ(data->strings[e.cat], "c" + texts[i]) << "event " << i;
      EXPECT_EQ(data->strings[e.tid], texts[i]) << "event " << i;
      EXPECT_EQ(data->processes[e.pid].pid_token, texts[i]) << "event " << i;
    }
  }
}

// pid, tid, id and bind_id are read from a scalar token only; a container
// value stays in the event's rest as it is, on both paths.
// ScanEvent reads an event's members as it finds them while it has at most
// 16 (their keys kept for the duplicate check); a longer event is scanned
// again with its members collected, as is one whose rest outgrows the room
// (DeclinesWhatItDoesNotTake...). Core keys past the 16th member, a key
// given again as the 16th or 17th member and an event without members
// must decode as on the fast path (a duplicate, with its warning, there).
TEST(TefScanPath, LongEventsScannedAgainWithTheirMembersCollected) {
  // `{"ph": "X", "k1": 1, ..., "kN": N` then `tail`.
  auto event = [](int n, const std::string& tail) {
    std::string e = R"({"ph": "X")";
    for (int k = 1; k <= n; ++k) absl::StrAppend(&e, ", \"k", k, "\": ", k);
    return e + tail;
  };
  const std::string longer = absl::StrCat(
      R"({"traceEvents": [)", event(13, R"(, "name": "n16", "ts": 16})"), ", ",
      event(14, R"(, "name": "n17", "ts": 17})"), ", ", event(20, R"(, "name": "late", "tid": 3, "ts": 5, "dur": 2})"),
      R"(, {}, {"ph": "i", "name": "n17", "ts": 9}]})");
  EXPECT_TRUE(ExpectSame(longer, "16, 17 and 25 members"));
  const Decoded d = Decode(longer, true);
  EXPECT_NE(d.dump.find("late"), std::string::npos);
  for (const std::string& again : {event(14, R"(, "k3": 0})"), event(15, R"(, "k3": 0})"),
                                   event(13, R"(, "ph": "i", "ts": 1})"), event(20, R"(, "ts": 1, "ts": 2})")}) {
    EXPECT_FALSE(ExpectSame(absl::StrCat(R"({"traceEvents": [{"ph": "X", "ts": 1}, )", again, "]}"), again)) << again;
  }
}

// Runs: an event's ph, cat, pid and tid members that repeat an earlier
// event's byte for byte are taken as a whole (with the byte after the last
// value): among events whose runs differ from one another in one byte (the
// last of a category, a tid that is a prefix of another: `1`, `12`), runs
// of every length up to 64 bytes and past it, more kinds than a position
// keeps, and events of other layouts in between, each event keeps its own
// values and the input takes the scan path.
TEST(TefScanPath, RunsOfRepeatedMembersTakenAsAWhole) {
  const char* tids[] = {"1", "12", "123", "\"s 1\"", "\"s 12\""};
  std::string doc = "{\"traceEvents\": [";
  int ts = 0;
  bool opening = true;
  auto add = [&](const std::string& event) {
    absl::StrAppend(&doc, opening ? "" : ",\n  ", event);
    opening = false;
  };
  for (int len = 1; len <= 56; ++len)
    for (int k = 0; k < 12; ++k) {
      const std::string cat = std::string(static_cast<size_t>(len - 1), 'c') + static_cast<char>('a' + k % 3);
      const char* tid = tids[(k * 3 + len) % 5 / (k % 4 == 3 ? 5 : 1)];
      add(absl::StrCat(R"({"ph": "X", "cat": ")", cat, R"(", "pid": )", len % 2, R"(, "tid": )", tid,
                       R"(, "ts": )", ++ts, R"(, "dur": 1})"));
      if (k % 5 == 4)
        add(absl::StrCat(R"({"ph": "f", "id": )", k, R"(, "pid": 0, "tid": )", tid, R"(, "ts": )", ++ts,
                         R"(, "cat": "async", "name": "launch", "bp": "e"})"));
      if (k % 7 == 6) add(absl::StrCat(R"({"ph": "i", "s": "t", "name": "m", "pid": 1, "tid": 1, "ts": )", ++ts, "}"));
    }
  doc += "]}";
  EXPECT_TRUE(ExpectSame(doc, "runs"));
  // A run that holds a key given earlier in the event: declined (the fast
  // path keeps the last value), as the same members read one by one are.
  EXPECT_FALSE(ExpectSame(R"([{"name": "n", "ts": 1, "pid": 1, "tid": 2, "ph": "X", "dur": 1},)"
                          R"({"name": "n", "pid": 9, "pid": 1, "tid": 2, "ph": "X", "ts": 2, "dur": 1}])",
                          "a key given again by a run"));
  // A run that ends with the next member's lead, whose key was given
  // earlier in the event: declined too.
  EXPECT_FALSE(ExpectSame(R"([{"name": "n", "ts": 1, "pid": 1, "tid": 2, "ph": "X", "dur": 1},)"
                          R"({"name": "n", "dur": 5, "pid": 1, "tid": 2, "ph": "X", "dur": 1, "ts": 2}])",
                          "a key given again by a run's lead"));
  // Runs hold the builder's ids: a second input, whose strings are
  // interned in another order, decodes as it does alone.
  const std::string first = R"([{"ph": "X", "cat": "a", "name": "n", "pid": 1, "tid": 2, "ts": 1}])";
  const std::string second =
      R"([{"ph": "i", "cat": "z", "name": "q", "pid": 3, "tid": 4, "ts": 0},)"
      R"({"ph": "X", "cat": "a", "name": "n", "pid": 1, "tid": 2, "ts": 1}])";
  TefDecoder reused;
  for (const std::string* text : {&first, &second}) {
    std::string padded = *text + std::string(simdjson::SIMDJSON_PADDING, '\0');
    TraceBuilder b;
    const DecodeReport r = reused.Decode(std::string_view(padded.data(), text->size()), padded.size(), &b);
    EXPECT_TRUE(reused.scanned());
    if (text == &second) {
      EXPECT_EQ(fuzz::DecodeDump(*b.Finish(), r), Decode(second, false).dump);
    }
  }
}

TEST(TefScanPath, ContainerPidTidIdsStayInTheRest) {
  const std::string text =
      R"({"traceEvents": [{"ph": "X", "name": "a", "pid": {"p": 1}, "tid": [2, 3], "ts": 1, "dur": 2},)"
      R"({"ph": "s", "name": "b", "pid": 4, "tid": 5, "ts": 2, "id": [6], "bind_id": {"b": 7}},)"
      R"({"ph": "X", "name": "c", "pid": 4, "tid": 5, "ts": 3, "dur": 1, "id": 8, "bind_id": 9}]})";
  for (bool scan : {true, false}) {
    std::string padded = text;
    padded.append(simdjson::SIMDJSON_PADDING, '\0');
    TefDecoder dec;
    dec.set_scan_path(scan);
    TraceBuilder b;
    dec.Decode(std::string_view(padded.data(), text.size()), padded.size(), &b);
    auto data = b.Finish();
    ASSERT_EQ(data->events.size(), 3u) << scan;
    const Event& a = data->events[0];
    const Event& s = data->events[1];
    const Event& c = data->events[2];
    EXPECT_EQ(a.flags & (kHasPid | kHasTid), 0) << scan;
    EXPECT_EQ(std::string_view(a.rest, a.rest_len), R"("pid":{"p":1},"tid":[2,3])") << scan;
    EXPECT_EQ(s.flags & (kHasPid | kHasTid | kHasId | kHasBindId), kHasPid | kHasTid) << scan;
    EXPECT_EQ(std::string_view(s.rest, s.rest_len), R"("id":[6],"bind_id":{"b":7})") << scan;
    EXPECT_EQ(c.flags & (kHasPid | kHasTid | kHasId | kHasBindId), kHasPid | kHasTid | kHasId | kHasBindId) << scan;
    EXPECT_EQ(c.rest_len, 0u) << scan;
  }
}

}  // namespace
}  // namespace tracemill::formats
