// Issue 25: Kineto's 2024-2026 output, end to end through the real binary.
// One fixture per point (tests/data/kineto-2026; its PROVENANCE.md cites
// the writer's source lines each follows).
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/convert_harness.h"

namespace tracemill::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class NewestInputsTest : public ConvertTest {
 protected:
  std::string Kineto(const std::string& name) { return DataPath("kineto-2026/" + name); }

  // Converts `args` (exit 0 and a balanced manifest expected; the run in
  // `*run` if given) and loads `output`, or the only output trace.
  std::unique_ptr<OutputTrace> ConvertAndLoad(const std::vector<std::string>& args, const std::string& output = "",
                                              Run* run = nullptr) {
    Run local;
    Run& r = run ? *run : local;
    r = Convert(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (!r.manifest) {
      ADD_FAILURE() << "no manifest";
      return nullptr;
    }
    EXPECT_TRUE(ManifestBalances(*r.manifest));
    auto t = output.empty() ? OnlyTrace(r) : LoadTrace(r.Output(output));
    if (t) {
      EXPECT_TRUE(RanksNamespaced(*t));
    }
    return t;
  }

  // Keys of otherData.inputs[k].metadata, in order.
  static std::vector<std::string> MetadataKeys(const OutputTrace& t, size_t k = 0) {
    simdjson::dom::parser p;
    simdjson::dom::element meta;
    std::vector<std::string> keys;
    if (p.parse(t.inputs[k].metadata).get(meta)) return keys;
    for (auto [key, v] : simdjson::dom::object(meta)) keys.emplace_back(key);
    return keys;
  }

  // The one event named `name` (a test failure if not exactly one).
  static const OutEvent* One(const OutputTrace& t, std::string_view name) {
    auto v = t.Named(name);
    if (v.size() != 1) {
      ADD_FAILURE() << v.size() << " events named " << name;
      return nullptr;
    }
    return v[0];
  }
};

// ---- Kineto ----

TEST_F(NewestInputsTest, NewestKinetoLayoutConverts) {
  // One rank of a 2-rank NCCL job as Kineto at 114171df writes it: relative
  // ts with baseTimeNanoseconds, flows, a Stream Sync row, [memory]
  // instants, NCCL args on the kernel, Record Window End on pid "", traceName last.
  const std::string in = Kineto("newest_layout.json");
  InputFacts f = Facts(in);
  ASSERT_EQ(f.events, 36);
  Run run = Convert({in});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_TRUE(ManifestBalances(*run.manifest));
  // deviceProperties holds 2 GPUs: gpus-per-node 2; rank 0 from distributedInfo.
  EXPECT_THAT(ListDir(run.out_dir), ElementsAre("gpu0.trace.json", "manifest.json"));
  EXPECT_EQ(run.manifest->Int("/inputs/0/rank"), 0);
  EXPECT_EQ(run.manifest->Str("/inputs/0/rank_source"), "distributedInfo");
  EXPECT_EQ(run.manifest->Int("/inputs/0/events_read"), 36 + 3);  // + 3 derived memory counter samples
  EXPECT_EQ(run.manifest->Int("/inputs/0/events_written"), 39);
  auto t = LoadTrace(run.Output("gpu0.trace.json"));
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(TsNonDecreasing(*t));
  EXPECT_TRUE(RanksNamespaced(*t));
  // base 1780000000123456789 ns + 20.250 us, exactly.
  const OutEvent* mm = One(*t, "aten::mm");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->ts, "1780000000123477.039");
  EXPECT_EQ(mm->dur, "30.125");
  // Every s/f flow pair keeps one id.
  std::map<std::string, std::vector<std::string>> flows;
  for (const auto& e : t->events)
    if (e.ph == "s" || e.ph == "f") flows[e.id].push_back(e.ph + " " + e.tid);
  EXPECT_EQ(flows.size(), 3u);
  for (const auto& [id, v] : flows) EXPECT_EQ(v.size(), 2u) << "flow " << id;
  // The sync row: its virtual tid kept, named, on GPU 0's output pid.
  const OutEvent* sync = One(*t, "Stream Sync");
  ASSERT_NE(sync, nullptr);
  EXPECT_EQ(sync->tid, "1000007");
  const OutEvent* gemm = nullptr;
  for (const auto& e : t->events)
    if (e.name.rfind("sm90_xmma_gemm", 0) == 0) gemm = &e;
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(sync->pid, gemm->pid);
  int sync_names = 0;
  for (const auto* m : t->Named("thread_name")) {
    if (m->pid != sync->pid || m->tid != "1000007") continue;
    ++sync_names;
    EXPECT_EQ(m->ArgsName(), "stream 7 (sync)");
  }
  EXPECT_EQ(sync_names, 1);
  // [memory] instants kept, and drawn as memory counters.
  EXPECT_EQ(t->Named("[memory]").size(), 3u);
  auto cuda0 = t->Named("memory cuda:0");
  ASSERT_EQ(cuda0.size(), 2u);
  EXPECT_EQ(cuda0[0]->ph, "C");
  EXPECT_EQ(cuda0[0]->args, R"({"Total Allocated":16384,"Total Reserved":2097152})");
  EXPECT_EQ(cuda0[1]->args, R"({"Total Allocated":0,"Total Reserved":2097152})");
  EXPECT_EQ(cuda0[1]->ts, "1780000000123507.164");
  EXPECT_EQ(t->Named("memory cpu").size(), 1u);
  EXPECT_EQ(cuda0[0]->pid, mm->pid);  // on the host process that allocated
  // NCCL metadata on the kernel, as written.
  const OutEvent* nccl = One(*t, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  ASSERT_NE(nccl, nullptr);
  EXPECT_THAT(nccl->args, HasSubstr(R"("Collective name":"allreduce","In msg nelems":1048576,)"
                                    R"("Out msg nelems":1048576,"Group size":2,"dtype":"Float",)"
                                    R"("Process Group Name":"0","Process Group Description":"default_pg",)"
                                    R"("Process Group Ranks":"[0, 1]","Seq":7})"));
  // Record Window End: on a process named for its empty pid.
  const OutEvent* end = One(*t, "Record Window End");
  ASSERT_NE(end, nullptr);
  EXPECT_EQ(t->ProcessNames()[*end->pid], std::string("rank 0") + kLabelDot + "pid \"\"");
  EXPECT_EQ(end->ts, "1780000000124456.789");
  // Every top-level key, traceName last, in otherData.
  EXPECT_THAT(MetadataKeys(*t), ElementsAre("schemaVersion", "deviceProperties", "host_name", "distributedInfo",
                                            "displayTimeUnit", "baseTimeNanoseconds", "traceName"));
  EXPECT_THAT(t->inputs[0].metadata, HasSubstr(R"("traceName":"/tmp/trace_rank0.json")"));
  EXPECT_THAT(run.manifest->Json("/inputs/0/warnings"),
              HasSubstr("3 memory counter samples derived from [memory] events (counted as events read)"));
}

TEST_F(NewestInputsTest, RelativeTsWithBaseTimeNanosecondsIsExact) {
  // `us.nnn` relative to baseTimeNanoseconds (fmtTs): absolute ns, no double.
  auto t = ConvertAndLoad({Kineto("relative_ts.json")});
  ASSERT_NE(t, nullptr);
  std::vector<std::string> got;
  for (const auto& e : t->events)
    if (e.ph == "X") got.push_back(e.name + " " + e.ts + " " + e.dur);
  EXPECT_THAT(got, ElementsAre("op0 1780000000123456.79 0.999",         // 0.001 us after the base
                               "op1 1780000000123469.134 0.001",        // 12.345
                               "op2 1780000000124456.788 1",            // 999.999
                               "op3 1780003600123456.912 0.877"));      // 3600000000.123
}

TEST_F(NewestInputsTest, StreamSyncRowsKeepTheirVirtualTidsAndNames) {
  // Stream Sync on tid stream + 1,000,000 (output_json.cpp, handleActivity),
  // with a thread_name and the stream's thread_sort_index.
  auto t = ConvertAndLoad({Kineto("stream_sync.json")});
  ASSERT_NE(t, nullptr);
  std::vector<std::string> syncs;
  for (const auto* e : t->Named("Stream Sync")) syncs.push_back(e->tid + " " + e->ts);
  EXPECT_THAT(syncs, ElementsAre("1000007 1780000000123458.789", "1000013 1780000000123460.289",
                                 "1000007 1780000000123464.789"));
  std::map<std::string, std::string> names, sort_index;  // tid -> name / sort index
  for (const auto* m : t->Named("thread_name")) names[m->tid] = m->ArgsName();
  for (const auto* m : t->Named("thread_sort_index")) sort_index[m->tid] = m->args;
  EXPECT_EQ(names, (std::map<std::string, std::string>{{"7", "stream 7"},
                                                       {"13", "stream 13"},
                                                       {"1000007", "stream 7 (sync)"},
                                                       {"1000013", "stream 13 (sync)"}}));
  // The sync row sorts with its stream.
  EXPECT_EQ(sort_index["1000007"], R"({"sort_index":7})");
  EXPECT_EQ(sort_index["1000013"], R"({"sort_index":13})");
  std::set<int64_t> pids;
  for (const auto& e : t->events)
    if (e.ph != "M" && e.name != "Record Window End") pids.insert(*e.pid);
  EXPECT_EQ(pids.size(), 1u) << "kernels and their sync rows are on one GPU process";
}

TEST_F(NewestInputsTest, FlowV2PairsStayPairedAndRanksNeverCollide) {
  // bind_id with flow_out / flow_in (Catapult's flow v2), the same ids on
  // both ranks.
  auto t = ConvertAndLoad({Kineto("flow_v2"), "--group-by", "all"}, "all.trace.json");
  ASSERT_NE(t, nullptr);
  // Per rank: bind_id -> the events bound to it, with their flow direction.
  std::map<std::string, std::vector<std::string>> by_id[2];
  for (const auto& e : t->events) {
    if (e.bind_id.empty()) continue;
    const int k = t->InputOfPid(*e.pid);
    ASSERT_GE(k, 0);
    std::string dir;
    if (e.Member("flow_in") == "true") dir += "in";
    if (e.Member("flow_out") == "true") dir += dir.empty() ? "out" : "+out";
    by_id[k][e.bind_id].push_back(e.name + ":" + dir);
  }
  for (int k = 0; k < 2; ++k) {
    SCOPED_TRACE(k);
    std::set<std::vector<std::string>> groups;
    for (auto& [id, v] : by_id[k]) groups.insert(v);
    EXPECT_EQ(groups, (std::set<std::vector<std::string>>{
                          {"launch_a:out", "kernel_a:in"},
                          {"launch_b:out", "kernel_b:in+out", "copy_b:in"},
                          {"launch_c:out", "kernel_c:in"},
                      }));
  }
  for (const auto& [id, v] : by_id[0]) EXPECT_EQ(by_id[1].count(id), 0u) << "bind_id " << id << " on both ranks";
}

TEST_F(NewestInputsTest, MemoryInstantsAreAlsoPerDeviceCounters) {
  Run run;
  auto t = ConvertAndLoad({Kineto("memory_instants.json")}, "", &run);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(run.manifest->Int("/inputs/0/events_read"), 8 + 5);
  EXPECT_EQ(run.manifest->Int("/inputs/0/events_written"), 13);
  EXPECT_EQ(t->Named("[memory]").size(), 6u);  // every instant kept as written
  std::vector<std::string> got;
  for (const auto& e : t->events)
    if (e.ph == "C") got.push_back(e.name + " " + e.ts + " " + e.args);
  EXPECT_THAT(got, ElementsAre(
                       R"(memory cuda:0 1780000000123457.789 {"Total Allocated":4096,"Total Reserved":2097152})",
                       R"(memory cuda:1 1780000000123458.789 {"Total Allocated":8192,"Total Reserved":2097152})",
                       R"(memory cuda:0 1780000000123459.789 {"Total Allocated":0,"Total Reserved":2097152})",
                       R"(memory cpu 1780000000123460.789 {"Total Allocated":64,"Total Reserved":0})",
                       R"(memory cuda:1 1780000000123461.789 {"Total Allocated":1056768,"Total Reserved":4194304})"));
}

TEST_F(NewestInputsTest, LoggerErrorAndWarningBecomeManifestWarnings) {
  // "ERROR"/"WARNING" arrays between `],` and traceName (Kineto before
  // 9612d061, built without glog).
  Run run = Convert({Kineto("logger_buckets.json")});
  EXPECT_EQ(run.exit_code, 0) << run.err;  // Kineto's log lines are warnings, not damage
  ASSERT_NE(run.manifest, nullptr);
  const std::string w = run.manifest->Json("/inputs/0/warnings");
  EXPECT_THAT(w, HasSubstr("Kineto logged ERROR: CUPTI_ERROR_NOT_INITIALIZED: "
                           "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) failed"));
  EXPECT_THAT(w, HasSubstr("Kineto logged WARNING: Failed to record CUDA event. 'cudaEventRecord' returned 700"));
  EXPECT_THAT(w, HasSubstr("Kineto logged 2 more WARNING entries (all kept in the output's otherData)"));
  size_t logged = 0;
  simdjson::dom::parser p;
  simdjson::dom::element warnings;
  ASSERT_EQ(p.parse(w).get(warnings), simdjson::SUCCESS);
  for (auto x : simdjson::dom::array(warnings)) logged += std::string_view(x).rfind("Kineto logged ", 0) == 0;
  EXPECT_EQ(logged, 7u);  // 1 ERROR, 5 WARNING and the count of the 2 others
  auto t = OnlyTrace(run);
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(MetadataKeys(*t), ElementsAre("schemaVersion", "deviceProperties", "displayTimeUnit",
                                            "baseTimeNanoseconds", "ERROR", "WARNING", "traceName"));
}

TEST_F(NewestInputsTest, TrailingKeysLandInOtherDataLikeLeadingOnes) {
  // An on-demand trace: distributedInfo written after traceEvents
  // (addOnDemandDistMetadata), then traceName.
  Run run = Convert({Kineto("trailing_keys.json")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_EQ(run.manifest->Int("/inputs/0/rank"), 1);
  EXPECT_EQ(run.manifest->Str("/inputs/0/rank_source"), "distributedInfo");
  EXPECT_EQ(run.manifest->Int("/inputs/0/world_size"), 2);
  // One GPU in deviceProperties: rank 1 is on node 1's GPU 0.
  auto t = LoadTrace(run.Output("gpu0.trace.json"));
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(MetadataKeys(*t), ElementsAre("schemaVersion", "deviceProperties", "displayTimeUnit",
                                            "baseTimeNanoseconds", "distributedInfo", "traceName"));
  EXPECT_THAT(t->inputs[0].metadata,
              HasSubstr(R"("nccl_version":"unknown"},"traceName":"/tmp/trailing_keys.json"})"));
}

TEST_F(NewestInputsTest, RecordWindowEndOnTheEmptyPid) {
  auto t = ConvertAndLoad({Kineto("record_window_end.json")});
  ASSERT_NE(t, nullptr);
  const OutEvent* end = One(*t, "Record Window End");
  ASSERT_NE(end, nullptr);
  EXPECT_EQ(end->tid, R"("")");
  EXPECT_EQ(end->Member("s"), R"("g")");
  auto names = t->ProcessNames();
  EXPECT_EQ(names[*end->pid], std::string("record_window_end.json") + kLabelDot + "pid \"\"");
  EXPECT_EQ(names.size(), 2u);  // python3 and the empty pid: distinct processes
}

TEST_F(NewestInputsTest, NcclMetadataOnGpuKernelsIsKeptAsWritten) {
  auto t = ConvertAndLoad({Kineto("nccl_kernel_metadata.json")});
  ASSERT_NE(t, nullptr);
  const OutEvent* k = One(*t, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  ASSERT_NE(k, nullptr);
  // Re-emitted compact (`[24,1,1]`); every member and value as written.
  EXPECT_EQ(k->args,
            R"({"External id":12,"queued":0,"device":0,"context":1,"stream":20,"correlation":130,)"
            R"("registers per thread":96,"shared memory":0,"blocks per SM":0.181818,"warps per SM":0.727273,)"
            R"("grid":[24,1,1],"block":[640,1,1],"est. achieved occupancy %":0,"Collective name":"allreduce",)"
            R"("In msg nelems":1048576,"Out msg nelems":1048576,"Group size":2,"dtype":"Float",)"
            R"("Process Group Name":"0","Process Group Description":"default_pg","Process Group Ranks":"[0, 1]",)"
            R"("Seq":7})");
}

}  // namespace
}  // namespace tracemill::testing
