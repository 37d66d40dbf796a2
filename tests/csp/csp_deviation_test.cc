// `tracemill csp` on small jobs written with protobuf's generated serializer
// (and hand-made bytes): one test per deliberate deviation from
// CrossStackProfiler (README.md, "Paddle CrossStackProfiler"), plus the wire
// details, invalid UTF-8, a truncated profile, time units and the folder
// layout. Every output is parsed by python3's json module.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "formats/paddle/profiler.pb.h"
#include "pipeline/journal.h"
#include "tests/csp/test_util.h"

namespace tracemill::testing {
namespace {

using paddle::platform::proto::Event;
using paddle::platform::proto::MemEvent;
using paddle::platform::proto::Profile;

void AddOp(Profile* p, const std::string& name, uint64_t start, uint64_t end, int64_t device,
           int64_t sub = 0, Event::EventType type = Event::CPU, const std::string& detail = "",
           uint64_t memcopy = 0) {
  Event* e = p->add_events();
  e->set_name(name);
  e->set_start_ns(start);
  e->set_end_ns(end);
  e->set_device_id(device);
  e->set_sub_device_id(sub);
  e->set_type(type);
  if (!detail.empty()) e->set_detail_info(detail);
  if (memcopy) e->mutable_memcopy()->set_bytes(memcopy);
}

void AddMarker(Profile* p, const std::string& detail, uint64_t ts) {
  AddOp(p, "marker/compute/MarkerCUDA", ts, ts + 500, 0, 0, Event::CPU, detail);
}

void AddMem(Profile* p, uint64_t start, uint64_t end, uint64_t bytes, MemEvent::Place place,
            uint32_t device) {
  MemEvent* m = p->add_mem_events();
  m->set_start_ns(start);
  m->set_end_ns(end);
  m->set_bytes(bytes);
  m->set_place(place);
  m->set_device_id(device);
  m->set_thread_id(1);
}

void WriteProfile(const std::string& root, int rank, const Profile& p) {
  WriteFile(root + "/profile/profile." + std::to_string(rank), p.SerializeAsString());
}

// A dmon log with one sample per (GPU, time).
std::string DcgmLog(int gpus, int samples, const std::string& fbusd = "100",
                    const std::string& fbttl = "400") {
  std::string s =
      "Host Engine Listener Started\n"
      "# Entity  TIMESTAMP  GPUTL  GRACT  SMACT  SMOCC  FBUSD  FBTTL  DRAMA  NVLTX  NVLRX  PCITX  "
      "PCIRX  FP32A  FP16A  TENSO\n      Id\n";
  for (int k = 0; k < samples; ++k)
    for (int g = 0; g < gpus; ++g)
      s += "    GPU " + std::to_string(g) + "  1700000000." + std::to_string(k) +
           "  50  0.5  0.25  0.125  " + fbusd + "  " + fbttl +
           "  0.5  1000  2000  3000  4000  0.1  0.2  0.3\n";
  return s + "dmon finished\n";
}

std::vector<std::string> Outputs(const std::string& dir) {
  std::vector<std::string> v;
  for (const auto& n : ListDir(dir)) v.push_back(dir + "/" + n);
  return v;
}

// The events of a trace on the lanes whose process name contains `lane`.
std::vector<simdjson::dom::element> OnLane(const Trace& t, const std::string& lane) {
  std::set<int64_t> pids;
  for (auto& [pid, name] : ProcessNames(t))
    if (name.find(lane) != std::string::npos) pids.insert(pid);
  std::vector<simdjson::dom::element> v;
  for (auto e : t.events())
    if (Str(e, "ph") != "M" && pids.count(Int(e, "pid"))) v.push_back(e);
  return v;
}

simdjson::dom::element InputOf(const Trace& manifest, const std::string& suffix) {
  simdjson::dom::array inputs = manifest.root()["inputs"].get_array().value();
  for (auto in : inputs) {
    const std::string p = Str(in, "path");
    if (p.size() >= suffix.size() && p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0)
      return in;
  }
  throw std::runtime_error("no input " + suffix);
}

// Deviation: memory counters are running totals per (rank, place, device)
// lane, and every group gets them. The reference sums all places of a rank
// into one total and drops the counters of groups >= 1 entirely.
TEST(CspDeviation, MemoryCountersPerLaneInEveryGroup) {
  TempDir job;
  for (int rank = 0; rank < 4; ++rank) {  // 2 trainers x 2 GPUs, one group per trainer
    Profile p;
    AddOp(&p, "op", kT0 + 1, kT0 + 2, 0);
    if (rank == 2) {  // trainer 1 (group 1), GPU 0
      AddMem(&p, kT0 + 10, kT0 + 30, 100, MemEvent::CUDAPlace, 0);
      AddMem(&p, kT0 + 20, kT0 + 40, 50, MemEvent::CUDAPlace, 0);
      AddMem(&p, kT0 + 15, kT0 + 25, 7, MemEvent::CPUPlace, 0);
      AddMem(&p, kT0 + 20, kT0 + 50, 1000, MemEvent::CUDAPinnedPlace, 0);
      AddMem(&p, kT0 + 5, kT0 + 60, 999, MemEvent::CUDAPlace, 1);  // another GPU: not shown
    }
    WriteProfile(job.path(), rank, p);
  }
  TempDir out;
  RunResult r = RunTracemill({"csp", "--profile-path", job.path(), "--timeline-path", out.path(),
                              "--gpus-per-trainer", "2", "--trainer-num", "2", "--group-size", "1",
                              "--display-size", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(PythonJsonErrors(Outputs(out.path())), "");
  Trace t(ReadFile(out / "traceFile_1_0.json"));
  auto names = ProcessNames(t);
  EXPECT_EQ(names[8], "09_trainerRank.002:cpu:block:0");
  EXPECT_EQ(names[9], "10_memory usage on trainerRank.002:gpu:0");
  EXPECT_EQ(names[10], "11_memory usage on trainerRank.002:cpu:0");
  EXPECT_EQ(names[11], "12_memory usage on trainerRank.002:cudapinnedplace:0");
  std::vector<std::tuple<int64_t, int64_t, int64_t>> got;  // (ts - T0, pid, value)
  for (auto e : t.events())
    if (Str(e, "cat") == "Memory") {
      EXPECT_EQ(Str(e, "ph"), "C");
      EXPECT_EQ(Str(e, "name"), "Memory");
      EXPECT_EQ(Int(e, "tid"), 0);
      got.emplace_back(Int(e, "ts") - static_cast<int64_t>(kT0), Int(e, "pid"),
                       Int(e["args"].value(), "0"));
    }
  const std::vector<std::tuple<int64_t, int64_t, int64_t>> want = {
      {10, 9, 100}, {15, 10, 7}, {20, 9, 150}, {20, 11, 1000}, {25, 10, 0},
      {30, 9, 50},  {40, 9, 0},  {50, 11, 0}};
  EXPECT_EQ(got, want);
  Trace m(ReadFile(out / "manifest.json"));
  auto rank2 = InputOf(m, "profile.2");
  EXPECT_EQ(Int(rank2["dropped_by_reason"].value(), "other_device"), 1);
  EXPECT_EQ(Int(rank2, "events_read"), 6);
  EXPECT_EQ(Int(rank2, "events_written"), 5);
  // Each output's size and CRC-32 in the manifest are those of the file (the
  // CRC-32 was 0 in csp manifests).
  int outputs = 0;
  auto outputs_array = m.root()["outputs"].get_array().value();
  for (auto o : outputs_array) {
    auto disk = pipeline::FileSizeAndCrc32(out / Str(o, "path"));
    ASSERT_TRUE(disk.ok()) << Str(o, "path");
    EXPECT_EQ(Int(o, "bytes"), static_cast<int64_t>(disk->first));
    EXPECT_EQ(Int(o, "crc32"), static_cast<int64_t>(disk->second));
    EXPECT_NE(disk->second, 0u);
    ++outputs;
  }
  EXPECT_GT(outputs, 0);
}

// Deviation: a GPU kernel on a device other than the output's GPU gets its
// own lane (the reference raises KeyError, and still exits 0 without that
// output file).
TEST(CspDeviation, GpuKernelOnUnexpectedDeviceGetsALane) {
  TempDir job;
  Profile p0, p1;
  AddOp(&p0, "kernel_here", kT0 + 100, kT0 + 200, 0, 7, Event::GPUKernel);
  AddOp(&p0, "kernel_elsewhere", kT0 + 300, kT0 + 400, 1, 13, Event::GPUKernel);
  AddOp(&p1, "op", kT0 + 100, kT0 + 200, 0);
  WriteProfile(job.path(), 0, p0);
  WriteProfile(job.path(), 1, p1);
  TempDir out;
  RunResult r = RunTracemill({"csp", "--profile-path", job.path(), "--timeline-path", out.path(),
                              "--gpus-per-trainer", "2", "--trainer-num", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(PythonJsonErrors(Outputs(out.path())), "");
  Trace t(ReadFile(out / "traceFile_0_0.json"));
  auto names = ProcessNames(t);
  EXPECT_EQ(names[8], "09_trainerRank.000:gpu:0");
  EXPECT_EQ(names[9], "10_trainerRank.000:gpu:1");
  auto on1 = OnLane(t, "trainerRank.000:gpu:1");
  ASSERT_EQ(on1.size(), 1u);
  EXPECT_EQ(Str(on1[0], "name"), "kernel_elsewhere");
  EXPECT_EQ(Int(on1[0], "tid"), 13);
  EXPECT_EQ(Int(on1[0], "ts"), static_cast<int64_t>(kT0 + 300));
  EXPECT_EQ(Int(on1[0], "dur"), 100);
  Trace m(ReadFile(out / "manifest.json"));
  EXPECT_EQ(Int(m.root()["csp"]["ranks"].at(0).value(), "gpu_lanes_other_device"), 1);
}

// Deviation: unpaired, repeated or nested pipeline markers are dropped and
// counted, never a crash (the reference raises IndexError on two E in a
// row). Markers come from every trainer of the group on that GPU, displayed
// or not (tid = global rank).
TEST(CspDeviation, PipelineMarkersUnpairedRepeatedNested) {
  TempDir job;
  Profile p0;
  AddOp(&p0, "op", kT0 + 1, kT0 + 2, 0);
  // In file order (shuffled); in time order: fB fE | fE | bB fB fE | bE | fB bE | bB bE | fB
  AddMarker(&p0, "marker_backward_E", kT0 + 450);  // E without B
  AddMarker(&p0, "marker_forward_B", kT0 + 100);
  AddMarker(&p0, "marker_forward_E", kT0 + 200);   // span forward [100, 200]
  AddMarker(&p0, "marker_forward_E", kT0 + 250);   // a second E in a row
  AddMarker(&p0, "marker_backward_B", kT0 + 300);  // nested: dropped when fB opens
  AddMarker(&p0, "marker_forward_B", kT0 + 350);
  AddMarker(&p0, "marker_forward_E", kT0 + 400);   // span forward [350, 400]
  AddMarker(&p0, "marker_forward_B", kT0 + 500);
  AddMarker(&p0, "marker_backward_E", kT0 + 600);  // mismatched: both dropped
  AddMarker(&p0, "marker_backward_B", kT0 + 700);
  AddMarker(&p0, "marker_backward_E", kT0 + 800);  // span backward [700, 800]
  AddMarker(&p0, "marker_forward_B", kT0 + 900);   // never closed
  WriteProfile(job.path(), 0, p0);
  Profile p1;  // trainer 1: not displayed (--display-size 1), its markers still count
  AddOp(&p1, "op", kT0 + 1, kT0 + 2, 0);
  AddMarker(&p1, "marker_forward_B", kT0 + 1000);
  AddMarker(&p1, "marker_forward_E", kT0 + 1600);
  WriteProfile(job.path(), 1, p1);
  TempDir out;
  RunResult r = RunTracemill({"csp", "--profile-path", job.path(), "--timeline-path", out.path(),
                              "--gpus-per-trainer", "1", "--trainer-num", "2", "--group-size", "2",
                              "--display-size", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(PythonJsonErrors(Outputs(out.path())), "");
  Trace t(ReadFile(out / "traceFile_0_0.json"));
  std::vector<std::tuple<int64_t, int64_t, int64_t, std::string, std::string>> spans;
  for (auto e : t.events())
    if (Str(e, "ph") == "X" && Int(e, "pid") == 0)
      spans.emplace_back(Int(e, "tid"), Int(e, "ts") - static_cast<int64_t>(kT0), Int(e, "dur"),
                         Str(e, "name"), Str(e, "cname"));
  const std::vector<std::tuple<int64_t, int64_t, int64_t, std::string, std::string>> want = {
      {0, 100, 100, "forward", "bad"},
      {0, 350, 50, "forward", "bad"},
      {0, 700, 100, "backward", "good"},
      {1, 1000, 600, "forward", "bad"}};
  EXPECT_EQ(spans, want);
  // Rank 1 is not displayed: no op lanes of its own.
  for (auto& [pid, name] : ProcessNames(t)) EXPECT_EQ(name.find("trainerRank.001"), std::string::npos);
  Trace m(ReadFile(out / "manifest.json"));
  auto pipe = m.root()["csp"]["pipeline"].value();
  EXPECT_EQ(Int(pipe, "markers"), 14);
  EXPECT_EQ(Int(pipe, "spans"), 4);
  EXPECT_EQ(Int(pipe, "markers_dropped"), 6);
  auto why = pipe["markers_dropped_by_reason"].value();
  EXPECT_EQ(Int(why, "end_without_begin"), 2);
  EXPECT_EQ(Int(why, "begin_without_end"), 2);
  EXPECT_EQ(Int(why, "mismatched"), 2);
  EXPECT_EQ(Int(InputOf(m, "profile.1")["dropped_by_reason"].value(), "not_displayed"), 3);
}

// Deviation: no Infinity/NaN in any output. FBTTL = 0 makes FB_USED_RATIO
// null, with a warning (the reference writes Infinity, or drops the row when
// FBUSD is 0 too).
TEST(CspDeviation, FbttlZeroGivesNullNotInfinity) {
  TempDir job;
  Profile p;
  AddOp(&p, "op", kT0 + 1, kT0 + 2, 0);
  WriteProfile(job.path(), 0, p);
  std::string log = DcgmLog(1, 1, "5", "0");
  log += "    GPU 0  1700000000.5  50  0.5  0.25  0.125  0  0  0.5  1000  2000  3000  4000  0.1  0.2  0.3\n";
  WriteFile(job / "dcgm/dcgm.0", log);
  TempDir out;
  RunResult r = RunTracemill({"csp", "--profile-path", job.path(), "--timeline-path", out.path(),
                              "--gpus-per-trainer", "1", "--trainer-num", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("FBTTL = 0"), std::string::npos) << r.err;
  ASSERT_EQ(PythonJsonErrors(Outputs(out.path())), "");  // rejects NaN and Infinity
  const std::string text = ReadFile(out / "traceFile_0_0.json");
  EXPECT_EQ(text.find("Infinity"), std::string::npos);
  EXPECT_EQ(text.find("NaN"), std::string::npos);
  Trace t(text);
  int nulls = 0;
  for (auto e : t.events())
    if (Str(e, "name") == "04_memUtility") {
      simdjson::dom::element v = e["args"]["FB_USED_RATIO"].value();
      EXPECT_TRUE(v.is_null());
      nulls += v.is_null();
      EXPECT_EQ(Num(e["args"].value(), "DRAMA"), 0.5);
    }
  EXPECT_EQ(nulls, 2);
  Trace m(ReadFile(out / "manifest.json"));
  EXPECT_EQ(Int(m.root()["csp"]["outputs"].at(0).value(), "fb_used_ratio_null"), 2);
}

// Missing ranks: the first 3 named, then one line for the rest (the README's
// example named 48, one line each), and the summary line counts them all.
TEST(CspDeviation, MissingRanksNamedUpToThreeThenCounted) {
  TempDir job;
  Profile p;
  AddOp(&p, "op", kT0, kT0 + 10, 0);
  WriteProfile(job.path(), 0, p);
  const std::string dir = job.path() + "/profile";
  auto line = [&](int rank) {
    return "tracemill csp: rank " + std::to_string(rank) + " (trainer " + std::to_string(rank / 2) + ", GPU " +
           std::to_string(rank % 2) + ", group 0) has no profile file in " + dir + "\n";
  };
  for (const auto& [trainers, more] : std::vector<std::pair<std::string, std::string>>{
           {"2", ""},
           {"3", "tracemill csp: and 2 more ranks have no profile file (all of them: manifest.json "
                 "csp.missing_ranks)\n"}}) {
    SCOPED_TRACE(trainers);
    TempDir out;
    RunResult r = RunTracemill({"csp", "--profile-path", job.path(), "--timeline-path", out.path(),
                                "--gpus-per-trainer", "2", "--trainer-num", trainers, "--display-size", "1"});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    const std::string named = line(1) + line(2) + line(3) + more;
    ASSERT_EQ(r.err.substr(0, named.size()), named);
    const std::string missing = trainers == "2" ? ", 3 ranks missing, " : ", 5 ranks missing, ";
    EXPECT_EQ(r.err.substr(named.size()).rfind("tracemill csp: 1 input (0 with errors)" + missing, 0), 0u) << r.err;
  }
}

// Deviation: groups are formed from rank ids, not from positions in a sorted
// file list, and a missing rank is reported. With rank 1 missing, the
// reference's group 0 would be files [0, 2, 3, 4] (rank 4 belongs to group 1).
TEST(CspDeviation, GroupsFromRankIdsWithMissingRank) {
  TempDir job;
  for (int rank = 0; rank < 8; ++rank) {
    if (rank == 1) continue;
    Profile p;
    AddOp(&p, "op_of_rank_" + std::to_string(rank), kT0 + rank, kT0 + rank + 10, 0);
    AddMarker(&p, "marker_forward_B", kT0 + 100);
    AddMarker(&p, "marker_forward_E", kT0 + 200 + rank);
    WriteProfile(job.path(), rank, p);
  }
  for (int t = 0; t < 4; ++t) WriteFile(job / ("dcgm/dcgm." + std::to_string(t)), DcgmLog(2, 2));
  TempDir out;
  RunResult r = RunTracemill({"csp", "--profile-path", job.path(), "--timeline-path", out.path(),
                              "--gpus-per-trainer", "2", "--trainer-num", "4", "--group-size", "2",
                              "--display-size", "2"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("rank 1 (trainer 0, GPU 1, group 0) has no profile file"), std::string::npos)
      << r.err;
  ASSERT_EQ(PythonJsonErrors(Outputs(out.path())), "");
  auto ranks_in = [&](const std::string& file) {
    Trace t(ReadFile(out / file));
    std::set<std::string> ranks;
    for (auto e : t.events())
      if (Str(e, "ph") == "X" && Int(e, "pid") >= 8) ranks.insert(Str(e, "name"));
    std::set<int64_t> tids;
    for (auto e : t.events())
      if (Str(e, "ph") == "X" && Int(e, "pid") == 0) tids.insert(Int(e, "tid"));
    std::set<std::string> dcgm_tids;
    for (auto e : t.events())
      if (Str(e, "ph") == "C" && Str(e, "cat") == "02_gpuUtility") dcgm_tids.insert(Str(e, "tid"));
    return std::make_tuple(ranks, tids, dcgm_tids);
  };
  using S = std::set<std::string>;
  using I = std::set<int64_t>;
  auto marker = std::string("marker/compute/MarkerCUDA");
  EXPECT_EQ(ranks_in("traceFile_0_0.json"), std::make_tuple(S{"op_of_rank_0", "op_of_rank_2", marker}, I{0, 2}, S{"0_0", "0_1"}));
  EXPECT_EQ(ranks_in("traceFile_0_1.json"), std::make_tuple(S{"op_of_rank_3", marker}, I{3}, S{"0_0", "0_1"}));
  EXPECT_EQ(ranks_in("traceFile_1_0.json"), std::make_tuple(S{"op_of_rank_4", "op_of_rank_6", marker}, I{4, 6}, S{"1_0", "1_1"}));
  EXPECT_EQ(ranks_in("traceFile_1_1.json"), std::make_tuple(S{"op_of_rank_5", "op_of_rank_7", marker}, I{5, 7}, S{"1_0", "1_1"}));
  Trace m(ReadFile(out / "manifest.json"));
  auto missing = m.root()["csp"]["missing_ranks"].get_array().value();
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing.at(0).get_int64().value(), 1);
  EXPECT_EQ(Int(m.root(), "exit_code"), 3);
}

// Deviation: no ./tmp intermediates and no log files outside the output
// folder (the reference writes ./tmp/*.json and ../Logs/*.log); a missing or
// empty dcgm/ folder is fine; an empty or missing profile/ folder is a clear
// error (exit 2), not an IndexError.
TEST(CspDeviation, FolderLayout) {
  TempDir root;
  const std::string work = root / "a/work";
  MakeDirs(work + "/job/profile");
  Profile p;
  AddOp(&p, "op", kT0 + 1, kT0 + 2, 0);
  WriteProfile(work + "/job", 0, p);
  RunResult r = RunTracemill({"csp", "--profile-path", "job", "--timeline-path", "out",
                              "--gpus-per-trainer", "1"},
                             work);
  ASSERT_EQ(r.exit_code, 0) << r.err;  // no dcgm/ folder at all
  EXPECT_EQ(ListDir(work), (std::vector<std::string>{"job", "out"}));
  EXPECT_EQ(ListDir(root / "a"), (std::vector<std::string>{"work"}));
  EXPECT_EQ(ListDir(work + "/out"),
            (std::vector<std::string>{"manifest.json", "report.html", "traceFile_0_0.json"}));
  EXPECT_EQ(PythonJsonErrors(Outputs(work + "/out")), "");
  Trace t(ReadFile(work + "/out/traceFile_0_0.json"));
  for (auto& [pid, name] : ProcessNames(t)) EXPECT_EQ(name.find("Utility"), std::string::npos);

  MakeDirs(work + "/job/dcgm");  // empty dcgm/: fine too
  r = RunTracemill({"csp", "--profile-path", "job", "--timeline-path", "out2", "--gpus-per-trainer", "1"}, work);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(PythonJsonErrors(Outputs(work + "/out2")), "");

  MakeDirs(root / "empty/profile");
  r = RunTracemill({"csp", "--profile-path", root / "empty", "--timeline-path", root / "o3"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no rank profiles"), std::string::npos) << r.err;
  r = RunTracemill({"csp", "--profile-path", root / "nowhere", "--timeline-path", root / "o4"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--profile-path must be the folder holding profile/"), std::string::npos) << r.err;
  r = RunTracemill({"csp", "--profile-path", work + "/job", "--trainer-num", "3", "--group-size", "2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not a multiple of --group-size"), std::string::npos) << r.err;
}

// Names are raw bytes in the protobuf: invalid UTF-8 becomes U+FFFD, so the
// output stays valid JSON.
TEST(CspDetails, InvalidUtf8InNameAndDetail) {
  TempDir job;
  Profile p;
  AddOp(&p, std::string("bad\xff\xfename", 9), kT0 + 1, kT0 + 2, 0, 0, Event::CPU,
        std::string("d\xc3", 2));
  AddOp(&p, "quote\"back\\slash\ttab", kT0 + 3, kT0 + 4, 0);
  WriteProfile(job.path(), 0, p);
  TempDir out;
  RunResult r = RunTracemill({"csp", "--profile-path", job.path(), "--timeline-path", out.path(),
                              "--gpus-per-trainer", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(PythonJsonErrors(Outputs(out.path())), "");
  Trace t(ReadFile(out / "traceFile_0_0.json"));
  std::vector<std::string> names, args_names, details;
  for (auto e : t.events())
    if (Str(e, "ph") == "X") {
      names.push_back(Str(e, "name"));
      args_names.push_back(Str(e["args"].value(), "name"));
      details.push_back(Str(e["args"].value(), "detail_info"));
    }
  const std::vector<std::string> want = {"bad\xEF\xBF\xBD\xEF\xBF\xBDname", "quote\"back\\slash\ttab"};
  EXPECT_EQ(names, want);
  EXPECT_EQ(args_names, want);
  EXPECT_EQ(details, (std::vector<std::string>{"d\xEF\xBF\xBD", ""}));
}

// A truncated profile: a clear error with the byte offset, the events before
// the damage kept, every other rank converted, exit 3.
TEST(CspDetails, TruncatedProfile) {
  TempDir job;
  Profile p0, p1;
  for (int i = 0; i < 10; ++i) {
    AddOp(&p0, "op0_" + std::to_string(i), kT0 + i, kT0 + i + 5, 0);
    AddOp(&p1, "op1_" + std::to_string(i), kT0 + i, kT0 + i + 5, 0);
  }
  std::string bytes = p0.SerializeAsString();
  Profile nine;
  for (int i = 0; i < 9; ++i) *nine.add_events() = p0.events(i);
  const size_t tenth_at = nine.SerializeAsString().size();
  WriteFile(job / "profile/profile.0", bytes.substr(0, bytes.size() - 7));
  WriteProfile(job.path(), 1, p1);
  TempDir out;
  RunResult r = RunTracemill({"csp", "--profile-path", job.path(), "--timeline-path", out.path(),
                              "--gpus-per-trainer", "2"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("profile.0: at byte " + std::to_string(tenth_at) + ": paddle profile: Event #10: "),
            std::string::npos)
      << r.err;
  ASSERT_EQ(PythonJsonErrors(Outputs(out.path())), "");
  auto ops = [&](const std::string& file) {
    Trace t(ReadFile(out / file));
    int n = 0;
    for (auto e : t.events()) n += Str(e, "ph") == "X";
    return n;
  };
  EXPECT_EQ(ops("traceFile_0_0.json"), 9);
  EXPECT_EQ(ops("traceFile_0_1.json"), 10);
  Trace m(ReadFile(out / "manifest.json"));
  auto in0 = InputOf(m, "profile.0");
  EXPECT_EQ(Int(in0["error"].value(), "byte_offset"), static_cast<int64_t>(tenth_at));
  EXPECT_EQ(Str(in0["error"].value(), "code"), "DATA_LOSS");
  EXPECT_EQ(Int(in0, "events_read"), 10);
  EXPECT_EQ(Int(in0, "events_written"), 9);
  EXPECT_EQ(Int(in0["dropped_by_reason"].value(), "corrupt_message"), 1);
  EXPECT_TRUE(InputOf(m, "profile.1")["error"].value().is_null());
}

// Wire details end to end: a hand-made profile (fields out of order, device_id
// -1 as a 10-byte varint, an unknown type value, a repeated memcopy).
TEST(CspDetails, WireDetailsEndToEnd) {
  Wire mc1, mc2, ev1, ev2, file;
  mc1.U64(1, 64);
  mc2.U64(1, 128);
  ev1.U64(8, 0).U64(6, 2).U64(5, static_cast<uint64_t>(int64_t{-1})).U64(3, kT0 + 90).U64(2, kT0 + 10).Str(1, "cudaMemcpyAsync");
  ev2.Str(9, "copy").Msg(7, mc1).U64(8, 9).Msg(7, mc2).Str(1, "memcpy DtoH").U64(2, kT0 + 20).U64(3, kT0 + 30).U64(5, 3).U64(6, 1);
  file.U64(3, kT0 + 1000).Msg(1, ev1).U64(2, kT0).Msg(1, ev2);
  TempDir job;
  WriteFile(job / "profile/trace.0", file.bytes());
  TempDir out;
  RunResult r = RunTracemill({"csp", "--profile-path", job.path(), "--timeline-path", out.path(),
                              "--gpus-per-trainer", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(PythonJsonErrors(Outputs(out.path())), "");
  Trace t(ReadFile(out / "traceFile_0_0.json"));
  auto names = ProcessNames(t);
  EXPECT_EQ(names[8], "09_trainerRank.000:cuda_api");
  EXPECT_EQ(names[9], "10_trainerRank.000:cpu:block:3");  // type 9 is unknown: CPU
  auto api = OnLane(t, ":cuda_api");
  ASSERT_EQ(api.size(), 1u);
  EXPECT_EQ(Int(api[0], "dur"), 80);
  EXPECT_EQ(Int(api[0], "tid"), 2);
  auto copy = OnLane(t, ":cpu:block:3");
  ASSERT_EQ(copy.size(), 1u);
  EXPECT_EQ(Int(copy[0]["args"].value(), "mem_bytes"), 128);
  EXPECT_EQ(Str(copy[0]["args"].value(), "detail_info"), "copy");
}

// --time-unit us writes exact microseconds (the default keeps the
// reference's nanoseconds in the µs fields).
TEST(CspDetails, TimeUnits) {
  TempDir job;
  Profile p;
  AddOp(&p, "op", kT0 + 40500, kT0 + 41734, 0);
  WriteProfile(job.path(), 0, p);
  std::string log = DcgmLog(1, 0);
  log += "    GPU 0  1700000000.003  50  0.5  0.25  0.125  1  2  0.5  1000  2000  3000  4000  0.1  0.2  0.3\n";
  WriteFile(job / "dcgm/dcgm.0", log);
  TempDir ns, us;
  ASSERT_EQ(RunTracemill({"csp", "--profile-path", job.path(), "--timeline-path", ns.path(),
                          "--gpus-per-trainer", "1"}).exit_code, 0);
  ASSERT_EQ(RunTracemill({"csp", "--profile-path", job.path(), "--timeline-path", us.path(),
                          "--gpus-per-trainer", "1", "--time-unit", "us"}).exit_code, 0);
  ASSERT_EQ(PythonJsonErrors(Outputs(ns.path())), "");
  ASSERT_EQ(PythonJsonErrors(Outputs(us.path())), "");
  const std::string a = ReadFile(ns / "traceFile_0_0.json"), b = ReadFile(us / "traceFile_0_0.json");
  EXPECT_NE(a.find("\"ts\":1700000000000040500,\"dur\":1234,"), std::string::npos);
  EXPECT_NE(b.find("\"ts\":1700000000000040.5,\"dur\":1.234,"), std::string::npos);
  // DCGM: the reference's float product in ns; exact decimal µs with --time-unit us.
  EXPECT_NE(a.find("\"ts\":1700000000003000064,"), std::string::npos);
  EXPECT_NE(b.find("\"ts\":1700000000003000,"), std::string::npos);
  EXPECT_NE(a.find("\"time_unit\":\"ns\""), std::string::npos);
  EXPECT_NE(b.find("\"time_unit\":\"us\""), std::string::npos);
}

// Reference spellings of the flags are accepted (drop-in), and a file without
// a numeric suffix is skipped with a note, not a crash.
TEST(CspDetails, ReferenceFlagSpellingsAndStrayFiles) {
  TempDir job;
  Profile p;
  AddOp(&p, "op", kT0 + 1, kT0 + 2, 0);
  WriteProfile(job.path(), 0, p);
  WriteProfile(job.path(), 1, p);
  WriteFile(job / "profile/README.md", "not a profile\n");
  TempDir out;
  RunResult r = RunTracemill({"csp", "--profile_path", job.path(), "--timeline_path", out.path(),
                              "--gpuPerTrainer", "2", "--trainerNum", "1", "--groupSize", "1",
                              "--displaySize", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ListDir(out.path()),
            (std::vector<std::string>{"manifest.json", "report.html", "traceFile_0_0.json", "traceFile_0_1.json"}));
  ASSERT_EQ(PythonJsonErrors(Outputs(out.path())), "");
  Trace m(ReadFile(out / "manifest.json"));
  EXPECT_TRUE(InputOf(m, "README.md")["skipped"].value().get_bool().value());
}

}  // namespace
}  // namespace tracemill::testing

namespace tracemill::testing {
namespace {

// --compress writes multi-member gzip that inflates to the same bytes.
TEST(CspDetails, CompressWritesTheSameTraceGzipped) {
  const std::string data = std::string(PADDLE_CSP_DATA) + "/small/data";
  TempDir plain, gz;
  ASSERT_EQ(RunTracemill({"csp", "--profile-path", data, "--timeline-path", plain.path(),
                          "--trainer-num", "2", "--threads", "2"}).exit_code, 0);
  RunResult r = RunTracemill({"csp", "--profile-path", data, "--timeline-path", gz.path(),
                              "--trainer-num", "2", "--compress"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ListDir(gz.path()).size(), 10u);  // 8 traces, manifest, report
  for (int n = 0; n < 8; ++n) {
    const std::string name = "traceFile_0_" + std::to_string(n) + ".json";
    const std::string inflated = Gunzip(ReadFile(gz / (name + ".gz")));
    EXPECT_TRUE(inflated == ReadFile(plain / name)) << name;
  }
  // The plain files are the inflated ones: all of them, and both manifests, parse.
  std::vector<std::string> files = Outputs(plain.path());
  files.push_back(gz / "manifest.json");
  EXPECT_EQ(PythonJsonErrors(files), "");
}

}  // namespace
}  // namespace tracemill::testing

namespace tracemill::testing {
namespace {

// Rerunning into the same folder replaces the outputs (the previous run's
// files are removed first, as the reference does) and leaves no temporaries.
TEST(CspDetails, RerunReplacesOutputs) {
  const std::string data = std::string(PADDLE_CSP_DATA) + "/small/data";
  TempDir out;
  WriteFile(out / "traceFile_0_0.json", "stale");
  for (int run = 0; run < 2; ++run) {
    RunResult r = RunTracemill({"csp", "--profile-path", data, "--timeline-path", out.path(),
                                "--trainer-num", "2", "--display-size", "1"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const auto names = ListDir(out.path());
  EXPECT_EQ(names.size(), 10u);  // 8 traces, manifest, report
  for (const auto& n : names) EXPECT_EQ(n.find(".tmp."), std::string::npos) << n;
  EXPECT_NE(ReadFile(out / "traceFile_0_0.json"), "stale");
  EXPECT_EQ(PythonJsonErrors(Outputs(out.path())), "");
  Trace t(ReadFile(out / "traceFile_0_0.json"));
  for (auto& [pid, name] : ProcessNames(t)) EXPECT_EQ(name.find("trainerRank.008"), std::string::npos);
}

// Issue 40, point 6: what csp leaves out is said on the terminal, not only
// in the manifest. A job of 2 trainers x 4 GPUs, each rank with a kernel on
// its own GPU, and a DCGM log per trainer.
void WriteFourGpuJob(const std::string& root) {
  for (int rank = 0; rank < 8; ++rank) {
    Profile p;
    AddOp(&p, "op", kT0 + 100, kT0 + 200, 0);
    AddOp(&p, "kernel", kT0 + 300, kT0 + 400, rank % 4, 7, Event::GPUKernel);
    WriteProfile(root, rank, p);
  }
  for (int t = 0; t < 2; ++t) WriteFile(root + "/dcgm/dcgm." + std::to_string(t), DcgmLog(4, 2));
}

std::vector<std::string> Notices(const Trace& manifest) {
  std::vector<std::string> v;
  simdjson::dom::array a;
  if (manifest.root()["notices"].get_array().get(a) != simdjson::SUCCESS) return v;
  for (auto n : a) v.emplace_back(n.get_string().value());
  return v;
}

TEST(CspNews, DefaultGpusPerTrainerOnAFourGpuJobIsNamed) {
  TempDir job;
  WriteFourGpuJob(job.path());
  TempDir out;
  RunResult r = RunTracemill({"csp", "--profile-path", job.path(), "--timeline-path", out.path()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string dcgm = "1 DCGM log (trainer 1) outside --trainer-num 1: not read";
  const std::string gpus =
      "ranks 4-7 ran GPU kernels on another device than their GPU (rank r is GPU r % 8 under --gpus-per-trainer 8): "
      "drawn on gpu:<d> lanes of their own; the job's kernels use GPUs 0-3 only: if a trainer has 4 GPUs, give "
      "--gpus-per-trainer 4";
  EXPECT_NE(r.err.find("tracemill csp: warning: " + dcgm + "\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tracemill csp: warning: " + gpus + "\n"), std::string::npos) << r.err;
  EXPECT_EQ(Notices(Trace(ReadFile(out / "manifest.json"))), (std::vector<std::string>{dcgm, gpus}));
  // The right value: nothing to say.
  TempDir out4;
  r = RunTracemill({"csp", "--profile-path", job.path(), "--timeline-path", out4.path(), "--gpus-per-trainer", "4"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  EXPECT_TRUE(Notices(Trace(ReadFile(out4 / "manifest.json"))).empty());
}

TEST(CspNews, TrainersLeftOutByTrainerNumAreNamedEvenWhenQuiet) {
  TempDir job;
  WriteFourGpuJob(job.path());
  TempDir out;
  RunResult r = RunTracemill({"csp", "--profile-path", job.path(), "--timeline-path", out.path(),
                              "--gpus-per-trainer", "4", "--trainer-num", "1", "-q"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err,
            "tracemill csp: warning: 4 rank files (ranks 4-7) outside --trainer-num 1 x --gpus-per-trainer 4: not "
            "converted\n"
            "tracemill csp: warning: 1 DCGM log (trainer 1) outside --trainer-num 1: not read\n");
}

TEST(CspNews, EmptyOrTextProfileIsARejectedInput) {
  TempDir job;
  WriteFourGpuJob(job.path());
  WriteFile(job / "profile/profile.5", "");
  WriteFile(job / "profile/profile.6", "rank 6 crashed\n");
  TempDir out;
  RunResult r = RunTracemill({"csp", "--profile-path", job.path(), "--timeline-path", out.path(),
                              "--gpus-per-trainer", "4"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("profile.5: empty input (0 bytes): no Paddle profile, so rank 5 has no lanes (input "
                       "rejected)\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("profile.6: not a Paddle profile (first bytes: 72 61 6e 6b 20 36 20 63 72 61 73 68 65 64 "
                       "0a) (input rejected)\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("tracemill csp: 10 inputs (2 with errors), 28 events read, 28 written"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("tracemill csp: rejected 2 inputs: 1 empty, 1 not a trace\n"), std::string::npos) << r.err;
  Trace m(ReadFile(out / "manifest.json"));
  EXPECT_EQ(Str(InputOf(m, "profile.5")["error"], "code"), "INVALID_ARGUMENT");
  EXPECT_EQ(Int(m.root(), "exit_code"), 3);
}

TEST(CspNews, DcgmRowsDroppedAndNoiseLinesAreCounted) {
  TempDir job;
  Profile p;
  AddOp(&p, "op", kT0 + 100, kT0 + 200, 0);
  WriteProfile(job.path(), 0, p);
  std::string log = DcgmLog(1, 3);
  log.insert(0, "Started host engine version 2.2.9 using socket path /tmp/nv-hostengine\n");
  log += "    GPU 0  1700000009.0  50  0.5\n";  // short: the job was killed mid-line
  log += "    GPU 0  1700000009.5  50  0.5  0.25  0.125  100  400  0.5  1000  2000  3000  4000  0.1  0.2  0.3  9\n";
  log += "    GPU 0  1700000010.0  N/A  0.5  0.25  0.125  100  400  0.5  1000  2000  3000  4000  0.1  0.2  0.3\n";
  WriteFile(job / "dcgm/dcgm.0", log);
  TempDir out;
  RunResult r = RunTracemill({"csp", "--profile-path", job.path(), "--timeline-path", out.path(),
                              "--gpus-per-trainer", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("tracemill csp: dropped 3 events: bad_row 2, na_sample 1;"), std::string::npos) << r.err;
  Trace m(ReadFile(out / "manifest.json"));
  simdjson::dom::element in = InputOf(m, "dcgm.0");
  EXPECT_EQ(Int(in, "events_read"), 6);
  EXPECT_EQ(Int(in, "events_written"), 3);
  std::vector<std::string> warnings;
  simdjson::dom::array list = in["warnings"].get_array().value();
  for (auto w : list) warnings.emplace_back(w.get_string().value());
  EXPECT_EQ(warnings, (std::vector<std::string>{
                          "1 GPU row with N/A or a non-numeric value dropped (as CrossStackProfiler does)",
                          "2 GPU rows with another number of columns than the header's, or before it, dropped"}));
  simdjson::dom::element logs = m.root()["csp"]["dcgm_logs"].at(0).value();
  EXPECT_EQ(Int(logs, "trainer"), 0);
  EXPECT_EQ(Int(logs, "gpu_rows"), 6);
  EXPECT_EQ(Int(logs, "header_lines"), 1);
  EXPECT_EQ(Int(logs, "noise_lines"), 3);  // Started host engine, Host Engine Listener Started, dmon finished
}

// Issue 40, point 7: csp's messages say what is wrong in the user's terms.
TEST(CspNews, ARangeErrorIsOneShortLine) {
  TempDir job;
  WriteFourGpuJob(job.path());
  for (const char* flag : {"--displaySize", "--gpus-per-trainer"}) {
    SCOPED_TRACE(flag);
    TempDir out;
    RunResult r = RunTracemill({"csp", "--profile-path", job.path(), "--timeline-path", out.path(), flag, "0"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("Value 0 not in range 1 to 65536"), std::string::npos) << r.err;
    EXPECT_LT(r.err.size(), 160u) << r.err;
  }
}

// Without --trainer-num, a group whose last trainer left no file at all has
// a missing rank; --group-size is not called wrong.
TEST(CspNews, AMissingLastTrainerIsAMissingRank) {
  TempDir job;
  for (int rank = 0; rank < 3; ++rank) {
    Profile p;
    AddOp(&p, "op", kT0 + 100, kT0 + 200, 0);
    WriteProfile(job.path(), rank, p);
  }
  TempDir out;
  RunResult r = RunTracemill({"csp", "--profile-path", job.path(), "--timeline-path", out.path(),
                              "--gpus-per-trainer", "1", "--group-size", "2"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.err.find("not a multiple"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tracemill csp: rank 3 (trainer 3, GPU 0, group 1) has no profile file in"),
            std::string::npos)
      << r.err;
  Trace m(ReadFile(out / "manifest.json"));
  EXPECT_EQ(Int(m.root()["csp"], "trainer_num"), 4);
  EXPECT_EQ(Int(m.root()["csp"], "groups"), 2);
  // Given explicitly, the same numbers are still a usage error.
  TempDir out2;
  r = RunTracemill({"csp", "--profile-path", job.path(), "--timeline-path", out2.path(), "--gpus-per-trainer", "1",
                    "--group-size", "2", "--trainer-num", "3"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--trainer-num 3 is not a multiple of --group-size 2"), std::string::npos) << r.err;
}

// Issue 40, point 8: csp writes convert's run report, with the ranks'
// pipeline spans as steps, and its job span is convert's on the same files.
TEST(CspNews, ReportWithStepsAndTheSpanOfConvert) {
  const std::string data = std::string(PADDLE_CSP_DATA) + "/small/data";
  TempDir out, conv;
  RunResult r = RunTracemill({"csp", "--profile-path", data, "--timeline-path", out.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("8 outputs in " + out.path() + " ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("; also report.html\n"), std::string::npos) << r.err;
  EXPECT_TRUE(Exists(out / "report.html"));
  Trace m(ReadFile(out / "manifest.json"));
  simdjson::dom::element rank0 = InputOf(m, "profile/profile.0");
  simdjson::dom::array steps = rank0["steps"].get_array().value();
  ASSERT_EQ(steps.size(), 10u);
  EXPECT_EQ(Canonical(steps.at(0).value()), "[0,1700000000000040,1700000000000360]");
  EXPECT_EQ(Canonical(steps.at(9).value()), "[9,1700000000003640,1700000000003960]");
  EXPECT_EQ(Canonical(rank0["time_span_ns"].value()), "[1700000000000000654,1700000000004789874]");
  r = RunTracemill({"convert", data + "/profile", data + "/dcgm", "-o", conv.path(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Trace c(ReadFile(conv / "manifest.json"));
  EXPECT_EQ(Canonical(m.root()["time_span_us"].value()), Canonical(c.root()["time_span_us"].value()));
  EXPECT_EQ(Canonical(m.root()["time_span_us"].value()), "[1700000000000000,1700000003903000]");
  EXPECT_EQ(Canonical(rank0["steps"].value()), Canonical(InputOf(c, "profile/profile.0")["steps"].value()));
  // The report draws the steps: one bar per rank and step.
  const std::string html = ReadFile(out / "report.html");
  EXPECT_NE(html.find("trainerRank.015"), std::string::npos);
  TempDir quiet;
  r = RunTracemill({"csp", "--profile-path", data, "--timeline-path", quiet.path(), "--no-report"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(Exists(quiet / "report.html"));
  EXPECT_EQ(r.err.find("also report.html"), std::string::npos) << r.err;
}

TEST(CspNews, AnEarlierRunsTraceFilesAreRemoved) {
  const std::string data = std::string(PADDLE_CSP_DATA) + "/small/data";
  TempDir out;
  RunResult r = RunTracemill({"csp", "--profile-path", data, "--timeline-path", out.path(), "--group-size", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ListDir(out.path()).size(), 18u);  // 16 traces, manifest, report
  WriteFile(out / "notes.txt", "mine");        // not the earlier run's: kept
  r = RunTracemill({"csp", "--profile-path", data, "--timeline-path", out.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("tracemill csp: removed 8 files of an earlier run in " + out.path() +
                       " that this run does not write (manifest.json `removed`): traceFile_1_0.json, "
                       "traceFile_1_1.json, traceFile_1_2.json, traceFile_1_3.json, traceFile_1_4.json and 3 more\n"),
            std::string::npos)
      << r.err;
  std::vector<std::string> names = ListDir(out.path());
  EXPECT_EQ(names.size(), 11u);
  EXPECT_FALSE(Exists(out / "traceFile_1_0.json"));
  EXPECT_TRUE(Exists(out / "notes.txt"));
  Trace m(ReadFile(out / "manifest.json"));
  EXPECT_EQ(m.root()["removed"].get_array().value().size(), 8u);
}

// Issue 40, point 9: the DCGM logs' GPU utilization per trainer and GPU, in
// the manifest (csp and convert alike) and the report. dcgm.0's GPU 0: 40
// rows, GPUTL mean 45.55 and max 100, SMACT mean 0.49085, TENSO 0.4853 (as
// python computes them from the log's text).
TEST(CspNews, DcgmUtilizationPerTrainerAndGpu) {
  const std::string data = std::string(PADDLE_CSP_DATA) + "/small/data";
  TempDir out, conv;
  RunResult r = RunTracemill({"csp", "--profile-path", data, "--timeline-path", out.path(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunTracemill({"convert", data + "/profile", data + "/dcgm", "-o", conv.path(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string want =
      "{\"dram_active_mean\":0.5079,\"gpu\":0,\"gpu_util_max\":100,\"gpu_util_mean\":45.55,\"samples\":40,"
      "\"sm_active_mean\":0.4908,\"sm_occupancy_mean\":0.4181,\"tensor_active_mean\":0.4853}";
  for (const std::string& dir : {out.path(), conv.path()}) {
    SCOPED_TRACE(dir);
    Trace m(ReadFile(dir + "/manifest.json"));
    simdjson::dom::array gpus = InputOf(m, "dcgm/dcgm.0")["gpu_utilization"].get_array().value();
    ASSERT_EQ(gpus.size(), 8u);
    EXPECT_EQ(Canonical(gpus.at(0).value()), want);
    // The log's label: "trainer 0" (csp), "rank 0 (trainer 0)" (convert).
    EXPECT_NE(ReadFile(dir + "/report.html")
                  .find(dir == out.path() ? "<td>trainer 0</td>" : "<td>rank 0 (trainer 0)</td>"),
              std::string::npos);
    EXPECT_NE(ReadFile(dir + "/report.html")
                  .find("</td><td class=\"n\">0</td><td class=\"n\">40</td><td class=\"n\">45.55</td>"
                        "<td class=\"n\">100.00</td><td class=\"n\">0.491</td>"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace tracemill::testing
