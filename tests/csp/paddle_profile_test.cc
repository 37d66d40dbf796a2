// The direct wire reader (formats/paddle/paddle_profile.h) against protobuf's
// own serializer and parser (generated from formats/paddle/profiler.proto),
// and on hand-made bytes for the proto2 details and the damage it reports.
#include "formats/paddle/paddle_profile.h"

#include <gtest/gtest.h>

#include "formats/detect.h"
#include "formats/paddle/profiler.pb.h"
#include "tests/csp/test_util.h"

namespace tracemill::formats {
namespace {

using paddle::platform::proto::Event;
using paddle::platform::proto::MemEvent;
using paddle::platform::proto::Profile;
using testing::Wire;

PaddleProfile Decode(const std::string& bytes, PaddleParseResult* result = nullptr) {
  PaddleProfile p;
  PaddleParseResult r = DecodePaddleProfile(bytes, &p);
  if (result) *result = r;
  else EXPECT_TRUE(r.status.ok()) << r.status;
  return p;
}

Profile SampleProfile() {
  Profile p;
  Event* e = p.add_events();
  e->set_name("cudaLaunchKernel");
  e->set_start_ns(1700000000000040000ull);
  e->set_end_ns(1700000000000048813ull);
  e->set_device_id(-1);
  e->set_sub_device_id(3);
  e->set_type(Event::CPU);
  e = p.add_events();
  e->set_name("memcpy DtoH");
  e->set_start_ns(1700000000003186836ull);
  e->set_end_ns(1700000000003263394ull);
  e->set_device_id(3);
  e->set_sub_device_id(13);
  e->mutable_memcopy()->set_bytes(25698095);
  e->set_type(Event::GPUKernel);
  e->set_detail_info("op_detail_7");
  p.set_start_ns(1700000000000003000ull);
  p.set_end_ns(1700000000005003000ull);
  MemEvent* m = p.add_mem_events();
  m->set_start_ns(1700000000000726499ull);
  m->set_end_ns(1700000000001243403ull);
  m->set_bytes(15899911);
  m->set_place(MemEvent::CUDAPinnedPlace);
  m->set_thread_id(44);
  m->set_device_id(3);
  m->set_alloc_in("split");
  m->set_free_in("reduce_sum");
  return p;
}

// Every field of every message, as protobuf's serializer writes it.
TEST(PaddleProfile, MatchesProtobufSerializer) {
  const std::string bytes = SampleProfile().SerializeAsString();
  PaddleParseResult r;
  PaddleProfile p = Decode(bytes, &r);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.start_ns, 1700000000000003000ull);
  EXPECT_EQ(r.end_ns, 1700000000005003000ull);
  ASSERT_EQ(p.events.size(), 2u);
  EXPECT_EQ(p.events[0].name, "cudaLaunchKernel");
  EXPECT_EQ(p.events[0].start_ns, 1700000000000040000ull);
  EXPECT_EQ(p.events[0].end_ns, 1700000000000048813ull);
  EXPECT_EQ(p.events[0].device_id, -1);
  EXPECT_EQ(p.events[0].sub_device_id, 3);
  EXPECT_EQ(p.events[0].memcopy_bytes, 0u);
  EXPECT_EQ(p.events[0].type, PaddleEventType::kCpu);
  EXPECT_TRUE(p.events[0].detail_info.empty());
  EXPECT_EQ(p.events[1].name, "memcpy DtoH");
  EXPECT_EQ(p.events[1].device_id, 3);
  EXPECT_EQ(p.events[1].sub_device_id, 13);
  EXPECT_EQ(p.events[1].memcopy_bytes, 25698095u);
  EXPECT_EQ(p.events[1].type, PaddleEventType::kGpuKernel);
  EXPECT_EQ(p.events[1].detail_info, "op_detail_7");
  ASSERT_EQ(p.mem_events.size(), 1u);
  EXPECT_EQ(p.mem_events[0].start_ns, 1700000000000726499ull);
  EXPECT_EQ(p.mem_events[0].end_ns, 1700000000001243403ull);
  EXPECT_EQ(p.mem_events[0].bytes, 15899911u);
  EXPECT_EQ(p.mem_events[0].place, PaddleMemPlace::kCudaPinnedPlace);
  EXPECT_EQ(p.mem_events[0].thread_id, 44u);
  EXPECT_EQ(p.mem_events[0].device_id, 3u);
  EXPECT_EQ(p.mem_events[0].alloc_in, "split");
  EXPECT_EQ(p.mem_events[0].free_in, "reduce_sum");
  // Zero-copy: names are views into the input.
  EXPECT_GE(p.events[0].name.data(), bytes.data());
  EXPECT_LT(p.events[0].name.data(), bytes.data() + bytes.size());
}

// device_id is a plain int64 varint: -1 is ten bytes (ff x9, 01), not zigzag.
TEST(PaddleProfile, DeviceIdMinusOneIsATenByteVarint) {
  Profile p;
  p.add_events()->set_device_id(-1);
  const std::string bytes = p.SerializeAsString();
  EXPECT_NE(bytes.find(std::string("\x28\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11)),
            std::string::npos);
  // Our own bytes, with the varint ending exactly at the end of the file (the
  // reader's 8-byte loads must not read past it).
  Wire ev;
  ev.U64(5, static_cast<uint64_t>(int64_t{-1}));
  Wire file;
  file.Msg(1, ev);
  EXPECT_EQ(file.size(), 13u);
  EXPECT_EQ(Decode(file.bytes()).events.at(0).device_id, -1);
  EXPECT_EQ(Decode(bytes).events.at(0).device_id, -1);
}

// An enum value the schema does not know leaves the field as it was, as in
// protobuf's parser: CPU / CUDAPlace by default, the previous value if set.
TEST(PaddleProfile, UnknownEnumValueReadsAsFirstValue) {
  Wire e1, e2, m1, file;
  e1.Str(1, "a").U64(8, 7);             // type = 7: unknown
  e2.Str(1, "b").U64(8, 1).U64(8, 5);   // GPUKernel, then unknown 5
  m1.U64(3, 10).U64(4, 9);              // place = 9: unknown
  file.Msg(1, e1).Msg(1, e2).Msg(4, m1);
  PaddleProfile p = Decode(file.bytes());
  ASSERT_EQ(p.events.size(), 2u);
  EXPECT_EQ(p.events[0].type, PaddleEventType::kCpu);
  EXPECT_EQ(p.events[1].type, PaddleEventType::kGpuKernel);
  EXPECT_EQ(p.mem_events.at(0).place, PaddleMemPlace::kCudaPlace);
  Profile ref;
  ASSERT_TRUE(ref.ParseFromString(file.bytes()));
  EXPECT_EQ(ref.events(0).type(), Event::CPU);
  EXPECT_EQ(ref.events(1).type(), Event::GPUKernel);
  EXPECT_EQ(ref.mem_events(0).place(), MemEvent::CUDAPlace);
}

// proto2 lets fields come in any order, top level included.
TEST(PaddleProfile, FieldsOutOfOrder) {
  Wire mc, ev, mem, file;
  mc.U64(1, 4096);
  ev.Str(9, "detail").U64(8, 1).Msg(7, mc).U64(6, 14).U64(5, 2).U64(3, 2000).U64(2, 1000).Str(1, "k");
  mem.Str(8, "free").Str(7, "alloc").U64(6, 2).U64(5, 9).U64(4, 1).U64(3, 77).U64(2, 30).U64(1, 20);
  file.U64(3, 99).Msg(4, mem).U64(2, 11).Msg(1, ev);
  PaddleParseResult r;
  PaddleProfile p = Decode(file.bytes(), &r);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.start_ns, 11u);
  EXPECT_EQ(r.end_ns, 99u);
  const PaddleEvent& e = p.events.at(0);
  EXPECT_EQ(e.name, "k");
  EXPECT_EQ(e.start_ns, 1000u);
  EXPECT_EQ(e.end_ns, 2000u);
  EXPECT_EQ(e.device_id, 2);
  EXPECT_EQ(e.sub_device_id, 14);
  EXPECT_EQ(e.memcopy_bytes, 4096u);
  EXPECT_EQ(e.type, PaddleEventType::kGpuKernel);
  EXPECT_EQ(e.detail_info, "detail");
  const PaddleMemEvent& m = p.mem_events.at(0);
  EXPECT_EQ(m.start_ns, 20u);
  EXPECT_EQ(m.end_ns, 30u);
  EXPECT_EQ(m.bytes, 77u);
  EXPECT_EQ(m.place, PaddleMemPlace::kCpuPlace);
  EXPECT_EQ(m.thread_id, 9u);
  EXPECT_EQ(m.device_id, 2u);
  EXPECT_EQ(m.alloc_in, "alloc");
  EXPECT_EQ(m.free_in, "free");
}

// A message field that appears twice merges (a later `bytes` wins, a later
// empty MemCopy keeps it); a repeated scalar keeps the last value.
TEST(PaddleProfile, RepeatedMemcopyMergesAndLastScalarWins) {
  Wire five, nine, empty, e1, e2, e3, file;
  five.U64(1, 5);
  nine.U64(1, 9);
  e1.Str(1, "first").Msg(7, five).Msg(7, empty).Str(1, "second");
  e2.Msg(7, five).Msg(7, nine).U64(2, 1).U64(2, 2);
  e3.Msg(7, empty).Msg(7, five);
  file.Msg(1, e1).Msg(1, e2).Msg(1, e3);
  PaddleProfile p = Decode(file.bytes());
  ASSERT_EQ(p.events.size(), 3u);
  EXPECT_EQ(p.events[0].memcopy_bytes, 5u);
  EXPECT_EQ(p.events[0].name, "second");
  EXPECT_EQ(p.events[1].memcopy_bytes, 9u);
  EXPECT_EQ(p.events[1].start_ns, 2u);
  EXPECT_EQ(p.events[2].memcopy_bytes, 5u);
  Profile ref;
  ASSERT_TRUE(ref.ParseFromString(file.bytes()));
  EXPECT_EQ(ref.events(0).memcopy().bytes(), 5u);
  EXPECT_EQ(ref.events(0).name(), "second");
  EXPECT_EQ(ref.events(1).memcopy().bytes(), 9u);
  EXPECT_EQ(ref.events(2).memcopy().bytes(), 5u);
}

// Unknown fields of every wire type are skipped (field 4 of Event included:
// the schema has no field 4), proto2 groups too.
TEST(PaddleProfile, UnknownFieldsAreSkipped) {
  Wire group_body, ev, file;
  group_body.U64(1, 3).Str(2, "x");
  ev.Str(1, "op")
      .U64(4, 123)                                    // no field 4 in Event
      .Tag(10, 1).Raw(std::string(8, '\x11'))         // fixed64
      .Tag(11, 5).Raw(std::string(4, '\x22'))         // fixed32
      .Str(12, "payload")                             // length-delimited
      .Tag(13, 3).Raw(group_body.bytes()).Tag(13, 4)  // group
      .U64(2, 42);
  file.Msg(1, ev).Str(100, "top-level unknown").U64(5, 1).Msg(1, ev);
  PaddleProfile p = Decode(file.bytes());
  ASSERT_EQ(p.events.size(), 2u);
  EXPECT_EQ(p.events[0].name, "op");
  EXPECT_EQ(p.events[0].start_ns, 42u);
  Profile ref;
  ASSERT_TRUE(ref.ParseFromString(file.bytes()));
  EXPECT_EQ(ref.events_size(), 2);
}

Wire ThreeEvents(size_t* third_at) {
  Wire file;
  for (int i = 0; i < 3; ++i) {
    if (i == 2) *third_at = file.size();
    Wire ev;
    ev.Str(1, "op" + std::to_string(i)).U64(2, 1700000000000000000ull + i).U64(3, 1700000000000000500ull + i);
    file.Msg(1, ev);
  }
  return file;
}

// A file cut inside the third event: the first two are kept, the error names
// the message, its number and byte offset.
TEST(PaddleProfile, TruncatedFileKeepsEventsBefore) {
  size_t third = 0;
  const std::string bytes = ThreeEvents(&third).bytes();
  const std::string cut = bytes.substr(0, bytes.size() - 5);
  PaddleParseResult r;
  PaddleProfile p = Decode(cut, &r);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(p.events.size(), 2u);
  EXPECT_EQ(r.events, 2u);
  EXPECT_TRUE(r.damaged_event);
  EXPECT_EQ(r.error_offset, third);
  const std::string msg(r.status.message());
  EXPECT_NE(msg.find("paddle profile: Event #3: "), std::string::npos) << msg;
  EXPECT_EQ(msg.find("at byte"), std::string::npos) << msg;  // the caller says error_offset
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
}

TEST(PaddleProfile, LengthPastTheEndIsAnError) {
  Wire file;
  Wire ev;
  ev.Str(1, "ok");
  file.Msg(1, ev).Tag(1, 2).Varint(1000).Raw("short");
  PaddleParseResult r;
  PaddleProfile p = Decode(file.bytes(), &r);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(p.events.size(), 1u);
  EXPECT_EQ(r.error_offset, 6u);  // the second event's tag (the first is 0a 04 0a 02 'o' 'k')
  EXPECT_NE(std::string(r.status.message()).find("length 1000"), std::string::npos) << r.status;
}

TEST(PaddleProfile, WrongWireTypeIsAnError) {
  Wire good, bad, file;
  good.Str(1, "ok");
  bad.Str(1, "bad").Str(2, "not a varint");  // start_ns as length-delimited
  file.Msg(1, good).Msg(1, bad);
  PaddleParseResult r;
  PaddleProfile p = Decode(file.bytes(), &r);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(p.events.size(), 1u);
  EXPECT_EQ(r.error_offset, 6u + 2u + 5u);  // first event, second's tag+len, its name field
  EXPECT_NE(std::string(r.status.message())
                .find("Event #2: field 2 (start_ns) has wire type 2 (length-delimited), "
                      "expected 0 (varint)"),
            std::string::npos)
      << r.status;
}

TEST(PaddleProfile, ElevenByteVarintIsAnError) {
  Wire ev, file;
  ev.Str(1, "x").Tag(2, 0).Raw(std::string(10, '\xff')).Raw("\x01");  // 11 bytes
  file.Msg(1, ev);
  PaddleParseResult r;
  Decode(file.bytes(), &r);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(std::string(r.status.message()).find("longer than 10 bytes"), std::string::npos)
      << r.status;
  EXPECT_EQ(r.error_offset, 2u + 3u + 1u);  // file tag+len, name, start_ns tag
  Profile ref;
  EXPECT_FALSE(ref.ParseFromString(file.bytes()));  // protobuf refuses it too
}

TEST(PaddleProfile, InvalidUtf8NameIsKeptAsBytes) {
  Wire ev, file;
  ev.Str(1, std::string("bad\xff\xfename", 9));
  file.Msg(1, ev);
  EXPECT_EQ(Decode(file.bytes()).events.at(0).name, std::string("bad\xff\xfename", 9));
}

// Detection by content: the protobuf wire shape, not JSON that starts with a
// newline (0x0a is also the tag of field 1).
TEST(PaddleProfile, SniffRecognizesProfilesOnly) {
  const std::string profile = testing::ReadFile(std::string(PADDLE_CSP_DATA) + "/small/data/profile/profile.3");
  EXPECT_EQ(Sniff(profile), FormatId::kPaddleProfile);
  EXPECT_TRUE(LooksLikePaddleProfile(std::string_view(profile).substr(0, 4096), false));
  EXPECT_EQ(Sniff(SampleProfile().SerializeAsString()), FormatId::kPaddleProfile);
  EXPECT_EQ(Sniff("\n[{\"ph\":\"X\",\"ts\":1}]"), FormatId::kTraceEventArray);
  EXPECT_EQ(Sniff("\n\n  {\"traceEvents\":[]}"), FormatId::kTraceEventObject);
  EXPECT_EQ(Sniff("\n  [\n"), FormatId::kTraceEventArray);
  EXPECT_EQ(Sniff("# Entity  TIMESTAMP  GPUTL\n"), FormatId::kUnknown);
  EXPECT_EQ(Sniff("Started host engine version 2.2.9\n"), FormatId::kUnknown);
  EXPECT_EQ(Sniff(""), FormatId::kEmpty);
}

}  // namespace
}  // namespace tracemill::formats
