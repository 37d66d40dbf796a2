// formats/chrome/chrome_writer: FormatEvent writes an event in place within
// FormatBound, the exact bytes of every field at its longest.
#include "formats/chrome/chrome_writer.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "gtest/gtest.h"

namespace tracemill::formats {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// One input whose strings are "", "X", a name, a cat and a tid token.
TraceData Strings() {
  TraceData data;
  data.strings = {"", "X", "ncclDevKernel_AllReduce", "kernel", "\"stream 7\""};
  return data;
}

Event EveryField(const std::string& rest) {
  Event e{};
  e.phase = 'X';
  e.ph = 1;
  e.name = 2;
  e.cat = 3;
  e.tid = 4;
  e.flags = kHasTs | kHasDur | kHasId | kHasBindId | kHasId2Global | kHasTid | kHasPid;
  e.ts_ns = kMin;
  e.dur_ns = kMin;
  e.id = 0;
  e.bind_id = 0;
  e.id2 = 0;
  e.rest = rest.data();
  e.rest_len = static_cast<uint32_t>(rest.size());
  return e;
}

TEST(ChromeWriterFormat, EveryFieldAtItsLongestWithinTheBound) {
  TraceData data = Strings();
  WriterInput in;
  in.data = &data;
  in.out_pid = {kMin};
  in.id_base = uint64_t{1} << 63;  // the ids print as INT64_MIN
  const std::string rest = R"("args":{"k":[1,2]})";
  const Event e = EveryField(rest);
  ByteBuffer out;
  out.Append("head");
  ChromeWriter::FormatEvent(in, e, /*ts_offset_ns=*/0, /*first=*/false, &out);
  const std::string want =
      "head,\n{\"ph\":\"X\",\"name\":\"ncclDevKernel_AllReduce\",\"cat\":\"kernel\",\"pid\":-9223372036854775808,"
      "\"tid\":\"stream 7\",\"ts\":-9223372036854775.808,\"dur\":-9223372036854775.808,"
      "\"id\":-9223372036854775808,\"bind_id\":-9223372036854775808,"
      "\"id2\":{\"global\":-9223372036854775808},\"args\":{\"k\":[1,2]}}";
  EXPECT_EQ(out.view(), want);
  // The bound holds with little to spare: 6 bytes (ts and dur print 21 of
  // their 24 characters at most).
  const size_t written = want.size() - 4;
  EXPECT_LE(written, ChromeWriter::FormatBound(in, e));
  EXPECT_EQ(ChromeWriter::FormatBound(in, e) - written, 6u);
}

TEST(ChromeWriterFormat, FieldsAbsentAndTheFirstSeparator) {
  TraceData data = Strings();
  WriterInput in;
  in.data = &data;
  in.out_pid = {3};
  Event e{};
  e.phase = 'i';
  e.ph = 1;  // "X" as text: only the ph string is written
  e.flags = kHasTs;
  e.ts_ns = 1500;
  ByteBuffer out;
  ChromeWriter::FormatEvent(in, e, /*ts_offset_ns=*/500, /*first=*/true, &out);
  EXPECT_EQ(out.view(), "\n{\"ph\":\"X\",\"ts\":1}");
  // A metadata event's ts is not written; its rest is.
  const std::string rest = R"("args":{"name":"x"})";
  e.phase = 'M';
  e.rest = rest.data();
  e.rest_len = static_cast<uint32_t>(rest.size());
  out.Clear();
  ChromeWriter::FormatEvent(in, e, 0, false, &out);
  EXPECT_EQ(out.view(), ",\n{\"ph\":\"X\",\"args\":{\"name\":\"x\"}}");
}

// Output pids set by SetOutPids are written from their text where it has
// at most 16 characters, else formatted: every pid gives the bytes it gives
// without the texts, and the bound holds.
TEST(ChromeWriterFormat, PidsFromTheirTextAsFormatted) {
  TraceData data = Strings();
  const std::vector<int64_t> pids = {kMin, 3, 0, -5, 1234567890123456, 12345678901234567, -123456789012345, 99};
  WriterInput with, without;
  with.data = without.data = &data;
  with.SetOutPids(pids);
  without.out_pid = pids;
  ASSERT_EQ(with.pid_text.size(), pids.size());
  EXPECT_EQ(with.pid_text[0].len, 0u);  // 20 characters
  EXPECT_EQ(with.pid_text[4].len, 16u);
  EXPECT_EQ(with.pid_text[5].len, 0u);  // 17
  const std::string rest = R"("args":{"k":[1,2]})";
  Event e = EveryField(rest);
  for (uint32_t pid = 0; pid < pids.size(); ++pid) {
    e.pid = pid;
    ByteBuffer a, b;
    ChromeWriter::FormatEvent(with, e, 0, false, &a);
    ChromeWriter::FormatEvent(without, e, 0, false, &b);
    EXPECT_EQ(a.view(), b.view()) << pids[pid];
    EXPECT_NE(a.view().find(",\"pid\":" + std::to_string(pids[pid]) + ",\"tid\""), std::string_view::npos)
        << a.view();
    EXPECT_LE(a.size(), ChromeWriter::FormatBound(with, e));
  }
}

// FormatOne: event `e` of `data` (its pid 0 written as 3) as FormatEvent
// writes it.
std::string FormatOne(const TraceData& data, const Event& e, bool first) {
  WriterInput in;
  in.data = &data;
  in.out_pid = {3};
  ByteBuffer out;
  ChromeWriter::FormatEvent(in, e, 0, first, &out);
  return std::string(out.view());
}

// An empty string whose view has no data (Paddle's decoder leaves some so):
// nothing is copied from it (memcpy from a null pointer is undefined even
// for 0 bytes; the asan preset's UBSan stops there, as the Paddle profile
// fuzzer's seed corpus did).
TEST(ChromeWriterFormat, EmptyViewsWithoutData) {
  TraceData data;
  data.strings = {std::string_view(), "X", std::string_view()};
  Event e{};
  e.phase = 'X';
  e.ph = 1;
  e.tid = 2;
  e.flags = kHasTid | kHasPid;
  EXPECT_EQ(FormatOne(data, e, /*first=*/true), "\n{\"ph\":\"X\",\"pid\":3,\"tid\":}");
}

// Strings of every length up to 40 (Put copies short ones by overlapping
// words, 1-3 bytes by their first, middle and last): each byte in its place.
TEST(ChromeWriterFormat, NamesOfEveryLength) {
  for (size_t len = 0; len <= 40; ++len) {
    std::string name;
    for (size_t k = 0; k < len; ++k) name += static_cast<char>('a' + k % 26);
    TraceData data;
    data.strings = {"", "X", name};
    Event e{};
    e.phase = 'X';
    e.ph = 1;
    e.name = len ? 2 : 0;
    e.cat = 2;
    e.flags = kHasPid;
    const std::string want = len ? ",\n{\"ph\":\"X\",\"name\":\"" + name + "\",\"cat\":\"" + name + "\",\"pid\":3}"
                                 : ",\n{\"ph\":\"X\",\"cat\":\"\",\"pid\":3}";
    EXPECT_EQ(FormatOne(data, e, /*first=*/false), want) << len;
  }
}

}  // namespace
}  // namespace tracemill::formats
