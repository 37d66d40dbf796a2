// The plan: the shard rule (AssignOutputs), output names, and what the head
// of a document tells (formats/chrome/tef_head.h, the gzip head inflater).
#include <zlib.h>

#include <string>

#include <gtest/gtest.h>

#include "formats/chrome/tef_head.h"
#include "formats/gzip/gzip_reader.h"
#include "pipeline/plan.h"
#include "pipeline/shard.h"

namespace tracemill {
namespace {

using formats::ScanTefHead;
using formats::TefDecoder;
using formats::TefHead;

// Largest first, each to the least loaded shard, ties to the lowest index;
// equal sizes are taken in name order.
TEST(AssignOutputs, GreedyByBytesThenName) {
  std::vector<std::string> names = {"gpu0", "gpu1", "gpu2", "gpu3", "gpu4"};
  std::vector<uint64_t> bytes = {10, 50, 30, 30, 20};
  // Order: gpu1(50) gpu2(30) gpu3(30) gpu4(20) gpu0(10)
  // gpu1->0 (50,0,0) gpu2->1 (50,30,0) gpu3->2 (50,30,30) gpu4->1 (50,50,30) gpu0->2
  EXPECT_EQ(pipeline::AssignOutputs(names, bytes, 3), (std::vector<int>{2, 0, 1, 2, 1}));
  EXPECT_EQ(pipeline::AssignOutputs(names, bytes, 1), (std::vector<int>{0, 0, 0, 0, 0}));
  // More shards than outputs: one each, the last shards idle.
  EXPECT_EQ(pipeline::AssignOutputs(names, bytes, 7), (std::vector<int>{4, 0, 1, 2, 3}));
}

TEST(OutputName, RoundTrips) {
  using pipeline::GroupBy;
  auto k = pipeline::KeyFor(13, GroupBy::kLocalGpu, 8);
  EXPECT_EQ(pipeline::OutputFileName(k, false), "gpu5.trace.json");
  auto back = pipeline::ParseOutputName("gpu5.trace.json.gz");
  ASSERT_TRUE(back);
  EXPECT_TRUE(*back == k);
  EXPECT_EQ(pipeline::ParseOutputName("unranked.trace.json")->kind, 1);
  EXPECT_EQ(pipeline::ParseOutputName("node12.trace.json")->number, 12);
  EXPECT_FALSE(pipeline::ParseOutputName("manifest.json"));
  EXPECT_FALSE(pipeline::ParseOutputName("gpux.trace.json"));
}

// Time ranges (--time-ranges) and their parts name their output.
TEST(OutputName, TimeRangesNameTheirOutput) {
  EXPECT_EQ(pipeline::RangeFileName("gpu3.trace.json.gz", 1, 4), "gpu3.time-2-of-4.trace.json.gz");
  EXPECT_EQ(pipeline::RangeFileName("gpu3.trace.json", 0, 1), "gpu3.trace.json");
  EXPECT_EQ(pipeline::OutputNameOf("gpu3.time-2-of-4.trace.json.gz"), "gpu3.trace.json.gz");
  EXPECT_EQ(pipeline::ParseOutputName("gpu3.time-2-of-4.part-001.trace.json")->number, 3);
  EXPECT_EQ(pipeline::ParseOutputName("gpu3.time-2-of-4.trace.json")->stem, "gpu3");
  EXPECT_EQ(pipeline::ParseRangeName("gpu3.time-2-of-4.part-001.trace.json"), (std::pair{1, 4}));
  EXPECT_FALSE(pipeline::ParseRangeName("gpu3.time-5-of-4.trace.json"));
  EXPECT_FALSE(pipeline::ParseRangeName("gpu3.trace.json"));
  EXPECT_EQ(pipeline::OutputRangeOf("gpu3.time-4-of-4.trace.json"), 3);
}

// Kineto's order: the keys, then the events (the head ends mid-events).
TEST(TefHead, KinetoKeysBeforeEvents) {
  TefDecoder d;
  TefHead h = ScanTefHead(
      R"({"schemaVersion":1,"deviceProperties":[{"id":0},{"id":1},{"id":2},{"id":3}],)"
      R"("distributedInfo":{"backend":"nccl","rank":5,"world_size":8},"traceEvents":[{"ph":"X","na)",
      /*head_is_whole=*/false, &d);
  EXPECT_EQ(h.shape, TefHead::Shape::kObject);
  EXPECT_TRUE(h.reached_events);
  EXPECT_FALSE(h.complete);
  EXPECT_EQ(h.rank, 5);
  EXPECT_EQ(h.device_count, 4);
}

// distributedInfo after traceEvents: the head cannot tell.
TEST(TefHead, RankAfterEventsIsUnknownUnlessWhole) {
  TefDecoder d;
  std::string doc = R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2}],)"
                    R"("distributedInfo":{"rank":"7"}})";
  TefHead cut = ScanTefHead(std::string_view(doc).substr(0, 30), false, &d);
  EXPECT_TRUE(cut.reached_events);
  EXPECT_FALSE(cut.complete);
  EXPECT_FALSE(cut.rank);
  TefHead whole = ScanTefHead(doc, true, &d);
  EXPECT_TRUE(whole.complete);
  EXPECT_EQ(whole.rank, 7);  // a string rank is read as the decoder reads it
}

// The first rank wins, as in the full decode (tef_decoder.cc).
TEST(TefHead, FirstDistributedInfoWins) {
  TefDecoder d;
  TefHead h = ScanTefHead(R"({"distributedInfo":{"rank":1},"distributedInfo":{"rank":2},"traceEvents":[)",
                          false, &d);
  EXPECT_EQ(h.rank, 1);
}

// Issue 37, point 3: a head whose every ts is before 2000 and that names no
// baseTimeNanoseconds may count from the file's own start (PyTorch 1.x).
TEST(TefHead, TimesBefore2000) {
  using formats::HeadTimesBefore2000;
  EXPECT_TRUE(HeadTimesBefore2000(R"({"traceEvents":[{"ph":"X","ts":100,"dur":5},{"ts": "250.5"}]})"));
  EXPECT_FALSE(HeadTimesBefore2000(R"({"traceEvents":[{"ph":"X","ts":100},{"ts":1700000000000000}]})"));
  EXPECT_FALSE(HeadTimesBefore2000(R"({"baseTimeNanoseconds":1700000000000000000,"traceEvents":[{"ts":100}]})"));
  EXPECT_FALSE(HeadTimesBefore2000(R"({"traceEvents":[{"ph":"M","name":"process_name"}]})"));  // no ts at all
  // A number cut by the head's end says nothing: "17" may be 1700000000000000.
  EXPECT_FALSE(HeadTimesBefore2000(R"({"traceEvents":[{"ts":17)"));
  EXPECT_TRUE(HeadTimesBefore2000(R"([{"ph":"X","ts":-5,"dur":1})"));  // JSON Array Format
}

TEST(TefHead, ArrayAndOther) {
  TefDecoder d;
  EXPECT_EQ(ScanTefHead("  [{\"ph\":\"X\"", false, &d).shape, TefHead::Shape::kArray);
  EXPECT_EQ(ScanTefHead("# README", true, &d).shape, TefHead::Shape::kOther);
  EXPECT_TRUE(ScanTefHead(R"({"a":1, 2})", true, &d).malformed);
}

std::string Gzip(const std::string& s) {
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, s.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
  zs.avail_in = static_cast<uInt>(s.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// Two members; a head limit inside the first; a truncated file.
TEST(GunzipHead, MembersLimitsAndTruncation) {
  std::string a(100000, 'a'), b = "bbbb";
  std::string gz = Gzip(a) + Gzip(b);
  std::string out;
  formats::HeadResult r = formats::GunzipHead(gz, true, 1 << 20, &out);
  EXPECT_TRUE(r.whole);
  EXPECT_EQ(out, a + b);
  r = formats::GunzipHead(gz, true, 1000, &out);
  EXPECT_FALSE(r.whole);
  EXPECT_EQ(out, a.substr(0, 1000));
  r = formats::GunzipHead(std::string_view(gz).substr(0, 20), true, 1 << 20, &out);
  EXPECT_FALSE(r.whole);
  EXPECT_TRUE(r.damaged);
  r = formats::GunzipHead(std::string_view(gz).substr(0, 20), false, 1 << 20, &out);
  EXPECT_FALSE(r.damaged);  // just a prefix
}

}  // namespace
}  // namespace tracemill
