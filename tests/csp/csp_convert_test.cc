// `tracemill convert` detects Paddle profiles by content and writes correct
// microseconds; the rank comes from the `.N` file-name suffix.
#include <gtest/gtest.h>

#include "formats/paddle/profiler.pb.h"
#include "tests/csp/test_util.h"

namespace tracemill::testing {
namespace {

using paddle::platform::proto::Event;
using paddle::platform::proto::MemEvent;
using paddle::platform::proto::Profile;

TEST(ConvertPaddle, DetectedByContentWithCorrectMicroseconds) {
  TempDir job;
  Profile p;
  Event* e = p.add_events();
  e->set_name("cudaLaunchKernel");
  e->set_start_ns(kT0 + 40500);
  e->set_end_ns(kT0 + 41000);
  e->set_device_id(-1);
  e->set_sub_device_id(2);
  e = p.add_events();
  e->set_name("volta_sgemm_128x64_nn");
  e->set_start_ns(kT0 + 50000);
  e->set_end_ns(kT0 + 52250);
  e->set_device_id(5);
  e->set_sub_device_id(7);
  e->set_type(Event::GPUKernel);
  e->set_detail_info("gemm");
  e->mutable_memcopy()->set_bytes(4096);
  MemEvent* m = p.add_mem_events();
  m->set_start_ns(kT0 + 10000);
  m->set_end_ns(kT0 + 90000);
  m->set_bytes(1 << 20);
  m->set_place(MemEvent::CUDAPlace);
  m->set_device_id(5);
  WriteFile(job / "profile.5", p.SerializeAsString());  // the name says nothing of the format
  TempDir out;
  RunResult r = RunTracemill({"convert", job.path(), "-o", out.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(ListDir(out.path()),
            (std::vector<std::string>{"gpu5.trace.json", "manifest.json", "overview.trace.json", "report.html"}));
  ASSERT_EQ(PythonJsonErrors({out / "gpu5.trace.json", out / "manifest.json"}), "");
  Trace m_json(ReadFile(out / "manifest.json"));
  auto in = m_json.root()["inputs"].at(0).value();
  EXPECT_EQ(Str(in, "format"), "paddle_profile");
  EXPECT_EQ(Int(in, "rank"), 5);
  EXPECT_EQ(Str(in, "rank_source"), "file name");
  EXPECT_EQ(Int(in, "events_read"), 4);  // 2 ops + 2 counter samples (alloc, free)
  EXPECT_EQ(Int(in, "events_written"), 4);
  const std::string text = ReadFile(out / "gpu5.trace.json");
  EXPECT_NE(text.find("\"ts\":1700000000000040.5,\"dur\":0.5"), std::string::npos) << text;
  EXPECT_NE(text.find("\"ts\":1700000000000050,\"dur\":2.25"), std::string::npos) << text;
  Trace t(text);
  auto names = ProcessNames(t);
  std::set<std::string> lanes;
  for (auto& [pid, name] : names) lanes.insert(name);
  EXPECT_TRUE(lanes.count("rank 5 \xC2\xB7 cuda_api"));
  EXPECT_TRUE(lanes.count("rank 5 \xC2\xB7 gpu:5"));
  EXPECT_TRUE(lanes.count("rank 5 \xC2\xB7 memory usage on gpu:5"));
  int kernels = 0, counters = 0;
  for (auto ev : t.events()) {
    if (Str(ev, "name") == "volta_sgemm_128x64_nn") {
      ++kernels;
      EXPECT_EQ(Int(ev, "tid"), 7);
      EXPECT_EQ(Str(ev, "cat"), "Op");
      EXPECT_EQ(Int(ev["args"].value(), "mem_bytes"), 4096);
      EXPECT_EQ(Str(ev["args"].value(), "detail_info"), "gemm");
    }
    if (Str(ev, "ph") == "C") {
      EXPECT_EQ(Str(ev, "name"), "Memory");
      EXPECT_EQ(Int(ev["args"].value(), "bytes"), counters == 0 ? (1 << 20) : 0);
      ++counters;
    }
  }
  EXPECT_EQ(kernels, 1);
  EXPECT_EQ(counters, 2);
}

TEST(ConvertPaddle, TruncatedProfileKeepsTheRestAndExits3) {
  TempDir job;
  Profile p;
  for (int i = 0; i < 4; ++i) {
    Event* e = p.add_events();
    e->set_name("op");
    e->set_start_ns(kT0 + i * 100);
    e->set_end_ns(kT0 + i * 100 + 50);
  }
  const std::string bytes = p.SerializeAsString();
  WriteFile(job / "profile.0", bytes.substr(0, bytes.size() - 3));
  WriteFile(job / "profile.1", bytes);
  TempDir out;
  RunResult r = RunTracemill({"convert", job.path(), "-o", out.path()});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("profile.0: at byte "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("paddle profile: Event #4"), std::string::npos) << r.err;
  ASSERT_EQ(PythonJsonErrors({out / "gpu0.trace.json", out / "gpu1.trace.json", out / "manifest.json"}), "");
  Trace m(ReadFile(out / "manifest.json"));
  EXPECT_EQ(Int(m.root()["totals"].value(), "events_written"), 3 + 4);
}

}  // namespace
}  // namespace tracemill::testing
