// Acceptance tests of issue 2 on real profiler files: `tracemill convert` on
// HTA's 2-rank job, on Kineto's 75k-event ResNet-50 traces and on a
// baseTimeNanoseconds trace, checked against counts and timestamps computed
// independently (python3) from the inputs.
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <map>
#include <cctype>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/convert_harness.h"

namespace tracemill::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class ConvertAcceptanceTest : public ConvertTest {};

// Non-M events of `t` whose pid belongs to input `k`, by phase.
std::map<std::string, int64_t> TimedPhasesOfInput(const OutputTrace& t, int k) {
  std::map<std::string, int64_t> by_ph;
  for (const auto& e : t.events)
    if (e.ph != "M" && e.pid && t.InputOfPid(*e.pid) == k) ++by_ph[e.ph];
  return by_ph;
}

std::map<std::string, int64_t> WithoutMetadata(std::map<std::string, int64_t> by_ph) {
  by_ph.erase("M");
  return by_ph;
}

// Compares the sorted "ph|name|cat|ts|dur" keys of input `k`'s events in the
// output with those computed from the input text; reports the first few
// differences.
::testing::AssertionResult SameTimes(const OutputTrace& t, int k, std::vector<std::string> want) {
  std::vector<std::string> got;
  for (const auto& e : t.events)
    if (e.ph != "M" && e.pid && t.InputOfPid(*e.pid) == k) got.push_back(TimeKey(e));
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  if (got == want) return ::testing::AssertionSuccess();
  std::vector<std::string> missing, extra;
  std::set_difference(want.begin(), want.end(), got.begin(), got.end(), std::back_inserter(missing));
  std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(extra));
  auto r = ::testing::AssertionFailure();
  r << "input " << k << ": " << got.size() << " events in the output, " << want.size()
    << " expected; " << missing.size() << " expected keys missing, " << extra.size()
    << " unexpected (key: ph|name|cat|ts|dur)\n";
  for (size_t i = 0; i < std::min<size_t>(5, missing.size()); ++i) r << "  missing: " << missing[i] << "\n";
  for (size_t i = 0; i < std::min<size_t>(5, extra.size()); ++i) r << "  unexpected: " << extra[i] << "\n";
  return r;
}

// Up to `n` `"ts": <number>` texts of the input, in input order, every
// `step`th (a plain scan: std::regex is far too slow for 35 MB).
std::vector<std::string> SampleTsTexts(std::string_view text, size_t n, size_t step) {
  std::vector<std::string> out;
  size_t seen = 0, pos = 0;
  while (out.size() < n && (pos = text.find("\"ts\":", pos)) != std::string_view::npos) {
    pos += 5;
    while (pos < text.size() && text[pos] == ' ') ++pos;
    size_t end = pos;
    while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) ||
                                 text[end] == '.' || text[end] == '-'))
      ++end;
    if (end == pos) continue;  // a string ts: not sampled
    if (seen++ % step == 0) out.emplace_back(text.substr(pos, end - pos));
    pos = end;
  }
  return out;
}

TEST_F(ConvertAcceptanceTest, HtaTraceFilterGroupByAll) {
  // Two ranks of one 128-rank NCCL job, given as a directory (recursed).
  const std::string r0 = DataPath("hta/trace_filter/sampled_rank-0.json.gz");
  const std::string r1 = DataPath("hta/trace_filter/sampled_rank-1.json.gz");
  InputFacts f0 = Facts(r0), f1 = Facts(r1);
  ASSERT_GT(f0.events, 4000);
  ASSERT_GT(f1.events, 4000);

  Run run = Convert({DataPath("hta/trace_filter"), "--group-by", "all"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(ListDir(run.out_dir), ElementsAre("all.trace.json", "manifest.json"));
  ASSERT_NE(run.manifest, nullptr);
  const Manifest& m = *run.manifest;
  EXPECT_TRUE(ManifestBalances(m));
  ASSERT_EQ(m.ArraySize("/inputs"), 2u);
  for (auto [suffix, facts, rank] :
       {std::tuple{"sampled_rank-0.json.gz", &f0, 0}, std::tuple{"sampled_rank-1.json.gz", &f1, 1}}) {
    int i = m.InputIndex(suffix);
    ASSERT_GE(i, 0);
    EXPECT_EQ(m.Int(Manifest::InputPointer(i, "/events_read")), facts->events) << suffix;
    // Kineto lists GPUs 0-7 on every rank: the 7 unused ones are left out
    // (3 metadata records each), counted as empty_process.
    EXPECT_EQ(facts->empty_process_meta, 21) << suffix;
    EXPECT_EQ(m.Int(Manifest::InputPointer(i, "/dropped_by_reason/empty_process")), 21) << suffix;
    EXPECT_EQ(m.Int(Manifest::InputPointer(i, "/events_written")), facts->Written()) << suffix;
    EXPECT_EQ(m.Int(Manifest::InputPointer(i, "/rank")), rank) << suffix;
    EXPECT_EQ(m.Str(Manifest::InputPointer(i, "/rank_source")), "distributedInfo") << suffix;
  }
  EXPECT_EQ(m.Int("/totals/events_written"), f0.Written() + f1.Written());
  EXPECT_EQ(m.Int("/outputs/0/events"), f0.Written() + f1.Written());

  auto t = LoadTrace(run.Output("all.trace.json"));
  ASSERT_NE(t, nullptr);
  // Exactly the inputs' events, plus the process metadata tracemill added.
  EXPECT_EQ(static_cast<int64_t>(t->events.size()),
            f0.Written() + f1.Written() + m.Int("/outputs/0/metadata_added"));
  ASSERT_EQ(t->inputs.size(), 2u);
  EXPECT_EQ(t->inputs[0].rank, 0);
  EXPECT_EQ(t->inputs[1].rank, 1);
  EXPECT_EQ(TimedPhasesOfInput(*t, 0), WithoutMetadata(f0.by_ph));
  EXPECT_EQ(TimedPhasesOfInput(*t, 1), WithoutMetadata(f1.by_ph));
  EXPECT_GE(static_cast<int64_t>(t->CountPh("M")), f0.by_ph["M"] + f1.by_ph["M"] - 42);

  EXPECT_TRUE(TsNonDecreasing(*t));
  EXPECT_TRUE(RanksNamespaced(*t));
  // Each rank's processes carry its rank; "Spans" exists on both ranks and
  // stays two processes.
  std::map<int64_t, std::string> names = t->ProcessNames();
  std::set<int64_t> spans;
  for (const auto& [pid, name] : names) {
    int k = t->InputOfPid(pid);
    ASSERT_GE(k, 0) << name;
    EXPECT_THAT(name, StartsWith(k == 0 ? "rank 0 \xC2\xB7 " : "rank 1 \xC2\xB7 "));
    if (name.find("Spans") != std::string::npos) spans.insert(pid);
  }
  EXPECT_EQ(spans.size(), 2u);
  // Per rank: the CPU process, the rank's own GPU, Spans; no empty GPU rows.
  EXPECT_EQ(names.size(), 6u);
  std::vector<std::string> gpus;
  for (const auto& [pid, name] : names)
    if (name.find("GPU") != std::string::npos) gpus.push_back(name);
  EXPECT_THAT(gpus, ElementsAre("rank 0 \xC2\xB7 GPU 0", "rank 1 \xC2\xB7 GPU 1"));

  // process_sort_index orders processes rank-major: every process of rank 0
  // before every process of rank 1.
  std::map<int64_t, int64_t> sort_index;
  for (const auto& e : t->events) {
    if (e.ph != "M" || e.name != "process_sort_index" || !e.pid) continue;
    simdjson::dom::parser parser;
    int64_t v = 0;
    ASSERT_EQ(parser.parse(e.args).at_key("sort_index").get(v), simdjson::SUCCESS) << e.args;
    sort_index[*e.pid] = v;
  }
  int64_t max0 = INT64_MIN, min1 = INT64_MAX;
  for (const auto& [pid, name] : names) {
    ASSERT_TRUE(sort_index.count(pid)) << "pid " << pid << " (" << name << ") has no process_sort_index";
    if (t->InputOfPid(pid) == 0) max0 = std::max(max0, sort_index[pid]);
    if (t->InputOfPid(pid) == 1) min1 = std::min(min1, sort_index[pid]);
  }
  EXPECT_LT(max0, min1);

  // The manifest describes the run and the output file as written.
  EXPECT_EQ(m.Str("/outputs/0/path"), "all.trace.json");
  EXPECT_EQ(m.Int("/outputs/0/bytes"),
            static_cast<int64_t>(ReadFileBytes(run.Output("all.trace.json")).size()));
  EXPECT_EQ(m.Json("/outputs/0/ranks"), "[0,1]");
  EXPECT_EQ(m.Int("/exit_code"), 0);
  EXPECT_FALSE(m.Str("/tracemill_version").empty());
  EXPECT_THAT(m.Str("/command_line"), HasSubstr("--group-by all"));
  EXPECT_TRUE(m.Has("/wall_seconds"));
  EXPECT_EQ(m.Int("/totals/inputs"), 2);
  EXPECT_EQ(m.Int("/totals/inputs_rejected"), 0);
  // otherData names the version, the inputs with their ranks, and the time base.
  simdjson::dom::parser parser;
  simdjson::dom::element other;
  ASSERT_EQ(parser.parse(t->other_data).get(other), simdjson::SUCCESS);
  std::string_view version;
  EXPECT_EQ(other["tracemill_version"].get(version), simdjson::SUCCESS);
  EXPECT_EQ(version, m.Str("/tracemill_version"));
  bool relative = true;
  EXPECT_EQ(other.at_pointer("/time_base/relative").get(relative), simdjson::SUCCESS);
  EXPECT_FALSE(relative);
}

TEST_F(ConvertAcceptanceTest, KinetoTbPluginExactTimestamps) {
  // A 75k-event ResNet-50 trace, not time-sorted, with string pids ('',
  // 'Traces'); named worker0.*, so rank 0 by file name.
  const std::string in =
      DataPath("kineto-tb-plugin/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz");
  InputFacts f = Facts(in, /*with_times=*/true);
  ASSERT_EQ(f.events, 75718);

  Run run = Convert({in});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(ListDir(run.out_dir), ElementsAre("gpu0.trace.json", "manifest.json"));
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_TRUE(ManifestBalances(*run.manifest));
  EXPECT_EQ(f.empty_process_meta, 14);  // GPUs 1-7, two records each
  EXPECT_EQ(run.manifest->Int("/inputs/0/dropped_by_reason/empty_process"), 14);
  EXPECT_EQ(run.manifest->Int("/inputs/0/events_written"), f.Written());
  EXPECT_EQ(run.manifest->Int("/inputs/0/rank"), 0);
  EXPECT_EQ(run.manifest->Str("/inputs/0/rank_source"), "file name");
  EXPECT_EQ(run.manifest->Int("/gpus_per_node"), 4);  // 4 deviceProperties entries

  auto t = LoadTrace(run.Output("gpu0.trace.json"));
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(TsNonDecreasing(*t));
  EXPECT_TRUE(RanksNamespaced(*t));
  EXPECT_EQ(static_cast<int64_t>(t->events.size()),
            f.Written() + run.manifest->Int("/outputs/0/metadata_added"));
  // Every event's ts and dur, digit for digit.
  EXPECT_TRUE(SameTimes(*t, 0, f.times));

  // And straight from the input text (integer us here: written unchanged).
  auto input_text = ReadMaybeGzip(in);
  auto output_text = ReadMaybeGzip(run.Output("gpu0.trace.json"));
  ASSERT_TRUE(input_text && output_text);
  std::vector<std::string> sample = SampleTsTexts(*input_text, 200, 331);
  ASSERT_EQ(sample.size(), 200u);
  // (A plain find: a gMock matcher would copy the 30 MB text per call.)
  for (const std::string& ts : sample)
    EXPECT_NE(output_text->find("\"ts\":" + ts + ","), std::string::npos) << "input ts " << ts;
}

TEST_F(ConvertAcceptanceTest, NcclParserConfigExactTimestamps) {
  // baseTimeNanoseconds 1711964646000000000 (after traceEvents) with float
  // relative ts such as 4458676522690.655.
  const std::string in = DataPath("hta/nccl_parser_config/nccl_data.json.gz");
  InputFacts f = Facts(in, /*with_times=*/true);
  ASSERT_EQ(f.events, 40573);

  Run run = Convert({in, "--group-by", "rank"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(ListDir(run.out_dir), ElementsAre("manifest.json", "rank0.trace.json"));
  ASSERT_NE(run.manifest, nullptr);
  EXPECT_TRUE(ManifestBalances(*run.manifest));
  EXPECT_EQ(f.empty_process_meta, 21);
  EXPECT_EQ(run.manifest->Int("/inputs/0/events_written"), f.Written());
  EXPECT_EQ(run.manifest->Int("/inputs/0/world_size"), 2);

  auto t = LoadTrace(run.Output("rank0.trace.json"));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->display_time_unit, "ms");
  EXPECT_TRUE(TsNonDecreasing(*t));
  EXPECT_TRUE(RanksNamespaced(*t));
  EXPECT_TRUE(SameTimes(*t, 0, f.times));

  // The first event of the file, by hand: 1711964646000000000 ns +
  // 4458676522690.655 us = 1716423322522690.655 us.
  bool found = false;
  for (const OutEvent* e : t->Named("autograd::engine::evaluate_function: DivBackward1")) {
    if (e->ts == "1716423322522690.655") {
      found = true;
      EXPECT_EQ(e->dur, "156.777");
    }
  }
  EXPECT_TRUE(found) << "DivBackward1 at 1716423322522690.655 not in the output";
}

TEST_F(ConvertAcceptanceTest, CompressedOutputHoldsTheSameEvents) {
  Run plain = Convert({DataPath("hta/trace_filter"), "--group-by", "all"});
  Run gz = Convert({DataPath("hta/trace_filter"), "--group-by", "all", "--compress"});
  ASSERT_EQ(gz.exit_code, 0) << gz.err;
  EXPECT_THAT(ListDir(gz.out_dir), ElementsAre("all.trace.json.gz", "manifest.json"));
  std::string bytes = ReadFileBytes(gz.Output("all.trace.json.gz"));
  ASSERT_GE(bytes.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8b);
  auto a = LoadTrace(plain.Output("all.trace.json"));
  auto b = LoadTrace(gz.Output("all.trace.json.gz"));
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->events.size(), b->events.size());
  for (size_t i = 0; i < a->events.size(); ++i) {
    ASSERT_EQ(TimeKey(a->events[i]), TimeKey(b->events[i])) << "event " << i;
  }
}

TEST_F(ConvertAcceptanceTest, RelativeTimeSubtractsTheJobsFirstEvent) {
  Run abs = Convert({DataPath("hta/trace_filter"), "--group-by", "all"});
  Run rel = Convert({DataPath("hta/trace_filter"), "--group-by", "all", "--relative-time"});
  ASSERT_EQ(rel.exit_code, 0) << rel.err;
  auto a = LoadTrace(abs.Output("all.trace.json"));
  auto r = LoadTrace(rel.Output("all.trace.json"));
  ASSERT_TRUE(a && r);
  EXPECT_TRUE(TsNonDecreasing(*r));
  simdjson::dom::parser parser;
  simdjson::dom::element other;
  ASSERT_EQ(parser.parse(r->other_data).get(other), simdjson::SUCCESS);
  bool relative = false;
  int64_t offset_ns = 0;
  ASSERT_EQ(other.at_pointer("/time_base/relative").get(relative), simdjson::SUCCESS);
  ASSERT_EQ(other.at_pointer("/time_base/offset_ns").get(offset_ns), simdjson::SUCCESS);
  EXPECT_TRUE(relative);
  // The first timed event of the job is at 0; everything else is shifted by
  // exactly offset_ns.
  EXPECT_EQ(offset_ns, *MicrosToNanos("1682725897226747"));
  ASSERT_EQ(a->events.size(), r->events.size());
  size_t first_timed = 0;
  while (first_timed < r->events.size() && r->events[first_timed].ph == "M") ++first_timed;
  ASSERT_LT(first_timed, r->events.size());
  EXPECT_EQ(r->events[first_timed].ts, "0");
  for (size_t i = first_timed; i < a->events.size(); ++i) {
    auto ta = MicrosToNanos(a->events[i].ts), tr = MicrosToNanos(r->events[i].ts);
    ASSERT_TRUE(ta && tr) << "event " << i;
    ASSERT_EQ(*tr + offset_ns, *ta) << "event " << i;
    ASSERT_EQ(a->events[i].dur, r->events[i].dur) << "event " << i;
  }
}

TEST_F(ConvertAcceptanceTest, GroupByNamesOutputsForWhatTheyHold) {
  const std::string dir = DataPath("hta/trace_filter");
  // Default: one output per local GPU (8 per node without deviceProperties).
  Run gpu = Convert({dir});
  ASSERT_EQ(gpu.exit_code, 0) << gpu.err;
  EXPECT_THAT(ListDir(gpu.out_dir), ElementsAre("gpu0.trace.json", "gpu1.trace.json", "manifest.json"));
  Run rank = Convert({dir, "--group-by", "rank"});
  ASSERT_EQ(rank.exit_code, 0) << rank.err;
  EXPECT_THAT(ListDir(rank.out_dir), ElementsAre("manifest.json", "rank0.trace.json", "rank1.trace.json"));
  Run node = Convert({dir, "--group-by", "node", "--gpus-per-node", "2"});
  ASSERT_EQ(node.exit_code, 0) << node.err;
  EXPECT_THAT(ListDir(node.out_dir), ElementsAre("manifest.json", "node0.trace.json"));
  ASSERT_NE(node.manifest, nullptr);
  EXPECT_EQ(node.manifest->Json("/outputs/0/ranks"), "[0,1]");
  // local-gpu with 1 GPU per node: ranks 0 and 1 share gpu0.
  Run one = Convert({dir, "--gpus-per-node", "1"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_THAT(ListDir(one.out_dir), ElementsAre("gpu0.trace.json", "manifest.json"));
  auto t = LoadTrace(one.Output("gpu0.trace.json"));
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(RanksNamespaced(*t));
  EXPECT_TRUE(TsNonDecreasing(*t));
}

TEST_F(ConvertAcceptanceTest, OutputsDoNotDependOnThreadCount) {
  const std::vector<std::string> inputs = {DataPath("hta/trace_filter"), DataPath("hta/trace_compare"),
                                           DataPath("rules/string_pids_across_ranks"),
                                           DataPath("perfetto/flow_events_json_v1.json")};
  std::vector<Run> runs;
  for (const char* threads : {"1", "2", "4"}) {
    std::vector<std::string> args = inputs;
    args.insert(args.end(), {"--threads", threads});
    runs.push_back(Convert(args));
    ASSERT_EQ(runs.back().exit_code, 0) << runs.back().err;
  }
  std::vector<std::string> names = ListDir(runs[0].out_dir);
  EXPECT_THAT(names, ElementsAre("gpu0.trace.json", "gpu1.trace.json", "manifest.json",
                                 "unranked.trace.json"));
  for (size_t r = 1; r < runs.size(); ++r) {
    EXPECT_EQ(ListDir(runs[r].out_dir), names);
    for (const auto& n : names) {
      if (n == "manifest.json") continue;
      EXPECT_TRUE(ReadFileBytes(runs[0].Output(n)) == ReadFileBytes(runs[r].Output(n)))
          << n << " differs between --threads 1 and run " << r;
    }
  }
}

// A rank of a gloo job on CPUs, as a CUDA build of PyTorch writes it:
// `deviceProperties` is empty (`devices`), and the eight GPUs of the host
// are listed anyway (process_name and process_labels each).
std::string GlooRank(int rank, const std::string& devices = "[]") {
  const std::string r = std::to_string(rank);
  std::string j = "{\"schemaVersion\": 1, \"deviceProperties\": " + devices +
                  ", \"distributedInfo\": {\"backend\": \"gloo\", \"rank\": " + r +
                  ", \"world_size\": 2}, \"traceEvents\": [\n";
  for (int g = 0; g < 8; ++g) {
    const std::string gs = std::to_string(g);
    j += "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " + gs + ", \"tid\": 0, \"args\": {\"name\": \"python3\"}},\n";
    j += "{\"ph\": \"M\", \"name\": \"process_labels\", \"pid\": " + gs + ", \"tid\": 0, \"args\": {\"labels\": \"GPU " +
         gs + "\"}},\n";
  }
  j += "{\"ph\": \"X\", \"name\": \"gloo:all_reduce\", \"pid\": 4" + r + ", \"tid\": 1, \"ts\": 100, \"dur\": 50},\n";
  j += "{\"ph\": \"X\", \"name\": \"aten::mm\", \"pid\": 4" + r + ", \"tid\": 1, \"ts\": 10, \"dur\": 80}\n]}\n";
  return j;
}

// A CPU-only job says so (issue 37, point 4): one output per rank instead
// of "GPUs" numbered by rank, a line on the terminal, the manifest, the
// report's cards; no empty GPU process in the outputs.
TEST_F(ConvertAcceptanceTest, CpuOnlyJobIsNamedAsSuch) {
  const std::string dir = tmp_.Join("gloo");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  WriteFileBytes(dir + "/rank-0.json", GlooRank(0));
  WriteFileBytes(dir + "/rank-1.json", GlooRank(1));
  Run run = Convert({dir});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(ListDir(run.out_dir), ElementsAre("manifest.json", "rank0.trace.json", "rank1.trace.json"));
  EXPECT_THAT(run.err, HasSubstr("tracemill: a CPU-only job: no input lists a GPU (deviceProperties is empty in "
                                 "each); one output per rank, not per GPU\n"));
  const Manifest& m = *run.manifest;
  EXPECT_TRUE(ManifestBalances(m));
  EXPECT_EQ(m.Str("/group_by"), "rank");
  EXPECT_TRUE(m.Bool("/cpu_only"));
  EXPECT_EQ(m.Int("/totals/dropped_by_reason/empty_process"), 32);  // 2 ranks x 8 GPUs x 2 records
  auto t = LoadTrace(run.Output("rank1.trace.json"));
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(t->ProcessNames(), ElementsAre(std::pair<const int64_t, std::string>(1, "rank 1 \xC2\xB7 pid 41")));
  const std::string report = ReadFileBytes(run.Output("report.html"));
  EXPECT_THAT(report, HasSubstr("id=\"card-gpus\" data-value=\"0\"><div class=\"k\">GPUs</div><div class=\"v\">0</div>"
                                "<div class=\"d\">CPU-only job: no input lists a GPU (deviceProperties empty)</div>"));
  EXPECT_THAT(report, HasSubstr("<div class=\"d\">8 ranks per node (rank / 8)</div>"));

  // A grouping the user chose stays; the line still says what the job is.
  Run node = Convert({dir, "--group-by", "node"});
  ASSERT_EQ(node.exit_code, 0) << node.err;
  EXPECT_THAT(ListDir(node.out_dir), ElementsAre("manifest.json", "node0.trace.json"));
  EXPECT_THAT(node.err, HasSubstr("tracemill: a CPU-only job: no input lists a GPU (deviceProperties is empty in "
                                  "each)\n"));

  // One rank that lists a GPU makes it a GPU job: per-GPU outputs as ever.
  WriteFileBytes(dir + "/rank-1.json", GlooRank(1, "[{\"id\": 0, \"name\": \"A100\"}]"));
  Run gpu = Convert({dir});
  ASSERT_EQ(gpu.exit_code, 0) << gpu.err;
  EXPECT_THAT(ListDir(gpu.out_dir), ElementsAre("gpu0.trace.json", "manifest.json"));
  EXPECT_EQ(gpu.manifest->Str("/group_by"), "local-gpu");
  EXPECT_FALSE(gpu.manifest->Has("/cpu_only"));
  EXPECT_THAT(gpu.err, Not(HasSubstr("CPU-only")));

  // HTA's cpu_only trace: rank 34 of a 300-rank gloo job.
  Run hta = Convert({DataPath("hta/cpu_only")});
  ASSERT_EQ(hta.exit_code, 0) << hta.err;
  EXPECT_THAT(ListDir(hta.out_dir), ElementsAre("manifest.json", "rank34.trace.json"));
  EXPECT_TRUE(hta.manifest->Bool("/cpu_only"));
}

TEST_F(ConvertAcceptanceTest, FlowIdsAreUniquePerRank) {
  // Perfetto's v1 (s/t/f with id) and v2 (bind_id) flow fixtures, each copied
  // as two ranks: the same ids on both ranks must not meet in the output.
  for (const char* name : {"flow_events_json_v1.json", "flow_events_json_v2.json"}) {
    SCOPED_TRACE(name);
    const std::string dir = tmp_.Join(std::string(name) + ".d");
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
    CopyFileTo(DataPath(std::string("perfetto/") + name), dir + "/rank-0.json");
    CopyFileTo(DataPath(std::string("perfetto/") + name), dir + "/rank-1.json");
    Run run = Convert({dir, "--group-by", "all"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    auto t = LoadTrace(run.Output("all.trace.json"));
    ASSERT_NE(t, nullptr);
    EXPECT_TRUE(RanksNamespaced(*t));
    std::set<std::string> ids[2];
    size_t with_ids = 0;
    for (const auto& e : t->events) {
      if (!e.pid) continue;
      int k = t->InputOfPid(*e.pid);
      ASSERT_GE(k, 0);
      if (!e.id.empty()) ids[k].insert(e.id), ++with_ids;
      if (!e.bind_id.empty()) ids[k].insert(e.bind_id), ++with_ids;
    }
    EXPECT_GT(with_ids, 0u);
    EXPECT_EQ(ids[0].size(), ids[1].size());
    for (const std::string& id : ids[0]) EXPECT_EQ(ids[1].count(id), 0u) << "id " << id << " on both ranks";
  }
}

}  // namespace
}  // namespace tracemill::testing
