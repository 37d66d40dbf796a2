// `tracemill csp` reads Paddle network logs (`net/<name>.<trainer>`,
// tests/data/paddle-net, issue 25): tx and rx counters of the group's
// displayed trainers in every output of the group, on pids 6 and 7 (named
// `01_tx`, `02_rx` as NetFileReader.py names them), exact ns from the ms
// text; bad lines dropped and counted, with file:line.
#include <gtest/gtest.h>

#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "tests/csp/test_util.h"

namespace tracemill::testing {
namespace {

// The small job (2 trainers x 8 GPUs) with `net/` from tests/data/paddle-net/<net>.
std::string JobWithNet(const TempDir& dir, const std::string& net) {
  const std::string job = dir / "job";
  CopyTree(std::string(PADDLE_CSP_DATA) + "/small/data", job);
  CopyTree(std::string(PADDLE_NET_DATA) + "/" + net, job + "/net");
  return job;
}

// The events of `t` on `pid`, as compact text of (name, ph, ts, id, args).
std::vector<std::string> EventsOnPid(const Trace& t, int64_t pid) {
  std::vector<std::string> out;
  for (auto ev : t.events()) {
    int64_t p;
    if (ev["pid"].get(p) || p != pid || Str(ev, "ph") == "M") continue;
    std::string ts = simdjson::to_string(ev["ts"].value());
    out.push_back(Str(ev, "name") + " " + Str(ev, "ph") + " " + ts + " id=" + std::to_string(Int(ev, "id")) + " " +
                  simdjson::to_string(ev["args"].value()));
  }
  return out;
}

TEST(CspNet, TwoTrainersOnLanesOfTheirOwn) {
  TempDir dir;
  const std::string job = JobWithNet(dir, "job/net");
  const std::string out = dir / "out";
  RunResult r = RunTracemill({"csp", "--profile-path", job, "--timeline-path", out, "--trainer-num", "2",
                              "--group-size", "2", "--display-size", "2", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> tx_rx_ns = {
      // trainer 0 (net.0), then trainer 1 (net.1), each in file order; ms text -> exact ns
      "tx C 1700000000000500000 id=0 {\"bytes\":1048576}",
      "rx C 1700000000000500000 id=0 {\"bytes\":524288}",
      "tx C 1700000000010123457 id=0 {\"bytes\":2097152}",  // .1234567 ms: the 7th digit rounds
      "rx C 1700000000010123457 id=0 {\"bytes\":1048576}",
      "tx C 1700000000001000000 id=1 {\"bytes\":4096}",
      "rx C 1700000000001000000 id=1 {\"bytes\":8192}",
      "tx C 1700000000011000001 id=1 {\"bytes\":0}",
  };
  for (int gpu = 0; gpu < 8; ++gpu) {
    SCOPED_TRACE(gpu);
    const std::string path = out + "/traceFile_0_" + std::to_string(gpu) + ".json";
    ASSERT_EQ(PythonJsonErrors({path}), "");
    Trace t(ReadFile(path));
    auto names = ProcessNames(t);
    EXPECT_EQ(names[6], "01_tx");
    EXPECT_EQ(names[7], "02_rx");
    // The DCGM lanes keep their pids: nothing collides.
    EXPECT_EQ(names[1], "02_gpuUtility");
    EXPECT_EQ(names[5], "06_calUtility");
    std::vector<std::string> net = EventsOnPid(t, 6), rx = EventsOnPid(t, 7);
    net.insert(net.end(), rx.begin(), rx.end());
    std::vector<std::string> want_tx, want_rx;
    for (const auto& e : tx_rx_ns) (e[0] == 't' ? want_tx : want_rx).push_back(e);
    want_tx.insert(want_tx.end(), want_rx.begin(), want_rx.end());
    EXPECT_EQ(net, want_tx);
    // No other event shares the pids, and the tx/rx counters sit nowhere else.
    for (auto ev : t.events()) {
      const std::string name = Str(ev, "name");
      if (name == "tx" || name == "rx") {
        EXPECT_EQ(Int(ev, "pid"), name == "tx" ? 6 : 7);
      }
    }
  }
  Trace m(ReadFile(out + "/manifest.json"));
  auto csp = m.root()["csp"].value();
  EXPECT_EQ(simdjson::to_string(csp["missing_net_trainers"].value()), "[]");
  simdjson::dom::array outputs = csp["outputs"].get_array().value();
  for (auto o : outputs) EXPECT_EQ(Int(o, "net_rows"), 7);
  std::map<std::string, std::pair<int64_t, int64_t>> net_inputs;  // name -> read, written
  simdjson::dom::array inputs = m.root()["inputs"].get_array().value();
  for (auto in : inputs) {
    if (Str(in, "format") != "paddle_net_log") continue;
    const std::string path = Str(in, "path");
    net_inputs[path.substr(path.rfind('/') + 1)] = {Int(in, "events_read"), Int(in, "events_written")};
    EXPECT_EQ(Int(in, "events_dropped"), 0);
  }
  EXPECT_EQ(net_inputs, (std::map<std::string, std::pair<int64_t, int64_t>>{{"net.0", {4, 4}}, {"net.1", {3, 3}}}));
  EXPECT_TRUE(m.root()["totals"]["balanced"].get_bool().value());

  // --time-unit us: the same samples in exact decimal microseconds.
  const std::string out_us = dir / "out_us";
  r = RunTracemill({"csp", "--profile-path", job, "--timeline-path", out_us, "--trainer-num", "2", "--group-size",
                    "2", "--time-unit", "us", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The raw text (a DOM would re-print the numbers as doubles).
  const std::string us = ReadFile(out_us + "/traceFile_0_3.json");
  for (const char* e : {
           R"({"name":"tx","ph":"C","pid":6,"ts":1700000000000500,"id":0,"args":{"bytes":1048576}})",
           R"({"name":"tx","ph":"C","pid":6,"ts":1700000000010123.457,"id":0,"args":{"bytes":2097152}})",
           R"({"name":"rx","ph":"C","pid":7,"ts":1700000000001000,"id":1,"args":{"bytes":8192}})",
           R"({"name":"tx","ph":"C","pid":6,"ts":1700000000011000.001,"id":1,"args":{"bytes":0}})",
       })
    EXPECT_NE(us.find(std::string("\n") + e), std::string::npos) << e;
}

TEST(CspNet, TrainersNotDisplayedOrMissing) {
  // Two groups of one trainer, one displayed slot each: each group's
  // outputs get only their own trainer's samples.
  TempDir dir;
  const std::string job = JobWithNet(dir, "job/net");
  ::unlink((job + "/net/net.1").c_str());
  const std::string out = dir / "out";
  RunResult r = RunTracemill({"csp", "--profile-path", job, "--timeline-path", out, "--trainer-num", "2",
                              "--group-size", "1", "--display-size", "1", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Trace g0(ReadFile(out + "/traceFile_0_0.json")), g1(ReadFile(out + "/traceFile_1_0.json"));
  EXPECT_EQ(EventsOnPid(g0, 6).size(), 2u);
  EXPECT_EQ(EventsOnPid(g1, 6).size(), 0u);
  EXPECT_EQ(ProcessNames(g1).count(6), 0u);  // no network log in that group: no lanes
  Trace m(ReadFile(out + "/manifest.json"));
  EXPECT_EQ(simdjson::to_string(m.root()["csp"]["missing_net_trainers"].value()), "[1]");
}

TEST(CspNet, MalformedLinesAreDroppedAndCountedWithFileAndLine) {
  TempDir dir;
  const std::string job = JobWithNet(dir, "malformed/net");
  const std::string out = dir / "out";
  RunResult r = RunTracemill({"csp", "--profile-path", job, "--timeline-path", out, "--trainer-num", "2",
                              "--group-size", "2"});
  EXPECT_EQ(r.exit_code, 3) << r.err;  // a damaged input; everything else converted
  // One line naming the file, the byte offset of the first bad line and its line number.
  const std::string want = "tracemill csp: " + job + "/net/net.1: at byte 71: net: net.1:2: not valid JSON "
                           "(5 bad lines dropped, every other line kept)";
  EXPECT_NE(r.err.find(want), std::string::npos) << r.err;
  Trace m(ReadFile(out + "/manifest.json"));
  bool seen = false;
  simdjson::dom::array inputs = m.root()["inputs"].get_array().value();
  for (auto in : inputs) {
    if (Str(in, "format") != "paddle_net_log") continue;
    seen = true;
    EXPECT_EQ(Int(in, "events_read"), 8);
    EXPECT_EQ(Int(in, "events_written"), 3);
    EXPECT_EQ(simdjson::to_string(in["dropped_by_reason"].value()),
              R"({"truncated":1,"malformed":1,"missing_ts":1,"bad_ts":1,"bad_net_sample":1})");
    EXPECT_EQ(Str(in["error"].value(), "message"), "net: net.1:2: not valid JSON");
    EXPECT_EQ(Int(in["error"].value(), "byte_offset"), 71);
  }
  EXPECT_TRUE(seen);
  EXPECT_TRUE(m.root()["totals"]["balanced"].get_bool().value());
  Trace t(ReadFile(out + "/traceFile_0_0.json"));
  std::vector<std::string> tx = EventsOnPid(t, 6), rx = EventsOnPid(t, 7);
  EXPECT_EQ(tx, (std::vector<std::string>{"tx C 1700000000002000000 id=1 {\"bytes\":100}",
                                          "tx C 1700000000005000000 id=1 {\"bytes\":500}"}));
  EXPECT_EQ(rx, (std::vector<std::string>{"rx C 1700000000003000000 id=1 {\"bytes\":300}"}));
}

}  // namespace
}  // namespace tracemill::testing
