#include "pipeline/csp.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include <tbb/enumerable_thread_specific.h>
#include <tbb/flow_graph.h>
#include <tbb/global_control.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "formats/chrome/output_file.h"
#include "formats/common/byte_buffer.h"
#include "formats/common/cleanup.h"
#include "formats/common/json_text.h"
#include "formats/common/ts_text.h"
#include "formats/dcgm/dcgm_reader.h"
#include "formats/paddle/paddle_profile.h"
#include "pipeline/cpus.h"
#include "pipeline/console.h"
#include "pipeline/options.h"
#include "pipeline/out_dir_lock.h"
#include "tracemill/version.h"

namespace tracemill::pipeline {
namespace {

using Clock = std::chrono::steady_clock;
using formats::DropReason;


// A file of `<dir>/<anything>.<N>`.
struct SuffixedFile {
  std::string path;
  int64_t id = -1;  // N, or -1 if the name has no numeric suffix
};

// Lists the regular files of `dir` (sorted by name). Returns false if `dir`
// cannot be opened (`*err` = errno).
bool ListSuffixed(const std::string& dir, std::vector<SuffixedFile>* out, int* err) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) {
    *err = errno;
    return false;
  }
  std::vector<std::string> names;
  while (dirent* de = ::readdir(d)) {
    std::string n = de->d_name;
    if (n == "." || n == ".." || formats::IsTemporaryName(n)) continue;
    names.push_back(std::move(n));
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    std::string path = absl::StrCat(dir, dir.back() == '/' ? "" : "/", n);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    SuffixedFile f;
    f.path = std::move(path);
    // CrossStackProfiler: int(fileName.split(".")[-1]).
    size_t dot = n.rfind('.');
    if (dot != std::string::npos && dot + 1 < n.size() && n.size() - dot - 1 <= 9) {
      int64_t v = 0;
      bool digits = true;
      for (size_t k = dot + 1; k < n.size(); ++k) {
        if (n[k] < '0' || n[k] > '9') {
          digits = false;
          break;
        }
        v = v * 10 + (n[k] - '0');
      }
      if (digits) f.id = v;
    }
    out->push_back(std::move(f));
  }
  return true;
}

// Reads a whole file into `out` (one read() for a regular file).
absl::Status ReadWholeFile(const std::string& path, formats::ByteBuffer* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return absl::ErrnoToStatus(e, "cannot open");
  }
  struct stat st;
  size_t size = 0;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) size = static_cast<size_t>(st.st_size);
  out->Clear();
  out->Reserve(std::max<size_t>(size + 1, 1 << 16));
  while (true) {
    size_t old = out->size();
    if (out->capacity() == old) out->Reserve(old * 2);
    ssize_t n = ::read(fd, out->data() + old, out->capacity() - old);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      out->Clear();
      return absl::ErrnoToStatus(e, "cannot read");
    }
    if (n == 0) break;
    out->Resize(old + static_cast<size_t>(n));
  }
  ::close(fd);
  return absl::OkStatus();
}

// Per-rank facts for the manifest's `csp` section.
struct RankInfo {
  int64_t rank = 0;
  size_t input = 0;  // index into summary.inputs
  bool displayed = false;
  formats::MarkerPairing pairing;
  uint64_t lanes = 0;
  uint64_t gpu_lanes_other_device = 0;
};

struct OutputTask {
  int64_t group = 0;
  int64_t gpu = 0;
  std::string name;
  uint64_t fb_ratio_null = 0;
  uint64_t spans = 0;
  uint64_t dcgm_rows = 0;
};

// The DCGM logs of one group's displayed trainers, each parsed once, by the
// first output that needs it, and freed after the group's last output.
struct GroupDcgm {
  explicit GroupDcgm(size_t slots) : once(slots), files(slots) {}
  std::vector<std::once_flag> once;                        // per displayed slot
  std::vector<std::unique_ptr<formats::DcgmFile>> files;   // per displayed slot; null if none
  std::atomic<int> outputs_left{0};
};

// Per-worker buffers, reused across outputs: peak memory is bounded by the
// threads, not the job.
struct CspWorker {
  std::vector<formats::ByteBuffer> rank_files;  // one per displayed slot; [0] also scans
  std::vector<formats::CspRankPlan> plans;      // one per displayed slot
  std::vector<formats::PipelineMarker> markers;
  std::vector<formats::PipelineSpan> spans;
  formats::CspScratch scratch;
};

std::string UnitName(formats::CspTimeUnit u) {
  return u == formats::CspTimeUnit::kMicros ? "us" : "ns";
}

}  // namespace

RunSummary RunCsp(const CspOptions& opts) {
  const auto t0 = Clock::now();
  RunSummary summary;
  summary.command_line = opts.command_line;
  summary.group_by = "csp";
  summary.gpus_per_node = opts.gpus_per_trainer;
  Console console(opts.progress && !opts.quiet);
  // SIGINT/SIGTERM (Slurm's time limit, a pod's deletion) remove the outputs'
  // temporaries and exit 130/143, as in convert.
  formats::InstallInterruptCleanup();
  auto usage = [&](const std::string& msg) {
    console.Line(absl::StrCat("tracemill csp: ", msg));
    summary.exit_code = kExitUsage;
    return summary;
  };
  if (opts.gpus_per_trainer < 1) return usage("--gpus-per-trainer must be >= 1");
  if (opts.display_size < 1) return usage("--display-size must be >= 1");
  if (opts.trainer_num < 0 || opts.group_size < 0) return usage("--trainer-num and --group-size must be >= 1");

  // ---- Inputs: profile/<anything>.<rank>, dcgm/<anything>.<trainer>.
  const std::string root = opts.profile_path.empty() ? "." : opts.profile_path;
  const std::string profile_dir = absl::StrCat(root, "/profile");
  const std::string dcgm_dir = absl::StrCat(root, "/dcgm");
  std::vector<SuffixedFile> profile_files, dcgm_files;
  int err = 0;
  if (!ListSuffixed(profile_dir, &profile_files, &err))
    return usage(absl::StrCat("cannot read ", profile_dir, ": ", std::strerror(err),
                              " (--profile-path must be the folder holding profile/ and dcgm/)"));
  bool have_dcgm_dir = ListSuffixed(dcgm_dir, &dcgm_files, &err);  // missing: fine
  std::vector<InputRecord>& inputs = summary.inputs;
  std::map<int64_t, size_t> rank_input;     // rank -> input index
  std::map<int64_t, size_t> trainer_input;  // trainer -> input index
  auto add_files = [&](const std::vector<SuffixedFile>& files, bool profile,
                       std::map<int64_t, size_t>* by_id) {
    for (const auto& f : files) {
      InputRecord r;
      r.path = f.path;
      r.from_directory = true;
      r.format = profile ? "paddle_profile" : "dcgm_dmon";
      struct stat st;
      if (::stat(f.path.c_str(), &st) == 0) r.bytes = static_cast<uint64_t>(st.st_size);
      if (f.id < 0) {
        r.skipped = true;
        r.format = "";
        r.warnings.push_back(absl::StrCat("skipped: no .<", profile ? "rank" : "trainer",
                                          "> suffix in the file name"));
      } else if (auto it = by_id->find(f.id); it != by_id->end()) {
        r.rejected = true;
        r.status = absl::InvalidArgumentError(absl::StrCat(
            profile ? "rank " : "trainer ", f.id, " is already read from ", inputs[it->second].path,
            "; this file is ignored (CrossStackProfiler stops on duplicates)"));
      } else {
        (*by_id)[f.id] = inputs.size();
        if (profile) {
          r.rank = f.id;
          r.rank_source = "file name";
          r.label = formats::CspRankLabel(f.id);
        } else {
          r.label = absl::StrCat("trainer ", f.id);
        }
      }
      inputs.push_back(std::move(r));
    }
  };
  add_files(profile_files, true, &rank_input);
  if (rank_input.empty())
    return usage(absl::StrCat("no rank profiles (<name>.<rank>) in ", profile_dir));
  add_files(dcgm_files, false, &trainer_input);

  // ---- Job shape.
  const int64_t gpt = opts.gpus_per_trainer;
  const int64_t trainer_num = opts.trainer_num > 0 ? opts.trainer_num : rank_input.rbegin()->first / gpt + 1;
  const int64_t group_size = opts.group_size > 0 ? opts.group_size : trainer_num;
  const int64_t display = opts.display_size;
  if (trainer_num % group_size != 0)
    return usage(absl::StrCat("--trainer-num ", trainer_num, " is not a multiple of --group-size ",
                              group_size));
  const int64_t groups = trainer_num / group_size;
  const int64_t shown = std::min(display, group_size);  // displayed slots per group
  std::vector<int64_t> missing_ranks, missing_dcgm;
  for (int64_t r = 0; r < trainer_num * gpt; ++r)
    if (!rank_input.count(r)) missing_ranks.push_back(r);
  for (auto& [rank, idx] : rank_input)
    if (rank >= trainer_num * gpt)
      inputs[idx].warnings.push_back(absl::StrCat(
          "rank ", rank, " is outside --trainer-num x --gpus-per-trainer (", trainer_num, " x ",
          gpt, "): not converted"));
  for (auto& [t, idx] : trainer_input) {
    if (t >= trainer_num)
      inputs[idx].warnings.push_back(absl::StrCat("trainer ", t, " is outside --trainer-num (",
                                                  trainer_num, "): not read"));
    else if (t % group_size >= display)
      inputs[idx].warnings.push_back(
          absl::StrCat("trainer ", t, " is not displayed (--display-size ", display, "): not read"));
  }
  if (have_dcgm_dir && !trainer_input.empty())
    for (int64_t t = 0; t < trainer_num; ++t)
      if (t % group_size < display && !trainer_input.count(t)) missing_dcgm.push_back(t);
  for (int64_t r : missing_ranks)
    if (!opts.quiet)
      console.Line(absl::StrFormat(
          "tracemill csp: rank %d (trainer %d, GPU %d, group %d) has no profile file in %s", r,
          r / gpt, r % gpt, (r / gpt) / group_size, profile_dir));

  // Created with its parents, as convert's -o; a path that exists as a file
  // is a usage error now, not a job that fails at every output.
  bool created_timeline_dir = false;
  std::string mkdir_error;
  if (int code = CreateOutputDirectory(opts.timeline_path, &created_timeline_dir, &mkdir_error)) {
    console.Line(absl::StrCat("tracemill csp: cannot create output directory ", opts.timeline_path, ": ",
                              mkdir_error));
    summary.exit_code = code;
    return summary;
  }
  // One job at a time in the output folder: the stale temporaries removed
  // below could be another running job's.
  OutDirLock out_lock;
  if (!out_lock.Acquire(opts.timeline_path)) return usage(OutDirLock::InUseMessage(opts.timeline_path));
  if (DIR* d = ::opendir(opts.timeline_path.c_str())) {
    while (dirent* de = ::readdir(d))
      if (formats::IsTemporaryName(de->d_name))
        ::unlink((opts.timeline_path + "/" + de->d_name).c_str());
    ::closedir(d);
  }

  // ---- Outputs: one task per (group, GPU), group-major.
  std::vector<OutputTask> tasks;
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t n = 0; n < gpt; ++n)
      tasks.push_back({g, n, absl::StrCat("traceFile_", g, "_", n, ".json", opts.compress ? ".gz" : "")});
  std::vector<std::unique_ptr<GroupDcgm>> group_dcgm(groups);
  for (auto& gd : group_dcgm) {
    gd = std::make_unique<GroupDcgm>(static_cast<size_t>(shown));
    gd->outputs_left = static_cast<int>(gpt);
  }
  summary.outputs.resize(tasks.size());
  std::vector<RankInfo> rank_info;
  std::map<int64_t, size_t> rank_info_index;
  for (auto& [rank, idx] : rank_input) {
    if (rank >= trainer_num * gpt) continue;
    rank_info_index[rank] = rank_info.size();
    RankInfo ri;
    ri.rank = rank;
    ri.input = idx;
    ri.displayed = (rank / gpt) % group_size < display;
    rank_info.push_back(ri);
  }
  std::vector<std::atomic<uint64_t>> dcgm_written(inputs.size());
  std::vector<std::atomic<uint64_t>> dcgm_failed(inputs.size());  // rows of outputs not written
  std::vector<std::atomic<uint64_t>> dcgm_other_gpu(inputs.size());
  std::atomic<int64_t> span_first{INT64_MAX}, span_last{INT64_MIN};

  std::string threads_note;
  const int threads = ThreadsToUse(opts.threads, &threads_note);
  if (!threads_note.empty() && !opts.quiet) console.Line("tracemill csp: " + threads_note);
  summary.threads = threads;
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, threads);
  tbb::enumerable_thread_specific<CspWorker> workers;
  std::atomic<size_t> done{0};

  // Parses the DCGM log of group g's displayed slot s (once). Outputs of a
  // group visit the slots in a rotated order (output n starts at n %
  // display), so the first outputs of a group parse different logs at the
  // same time instead of waiting on one another.
  auto load_dcgm = [&](int64_t g, int64_t s) {
    GroupDcgm& gd = *group_dcgm[g];
    std::call_once(gd.once[s], [&] {
      const int64_t t = g * group_size + s;
      auto it = trainer_input.find(t);
      if (it == trainer_input.end()) return;
      InputRecord& r = inputs[it->second];
      formats::ByteBuffer buf;
      if (absl::Status st = ReadWholeFile(r.path, &buf); !st.ok()) {
        r.status = st;
        r.rejected = true;
        return;
      }
      auto file = std::make_unique<formats::DcgmFile>(formats::ParseDcgmDmon(buf.view()));
      r.decoded_bytes = buf.size();
      r.events_read = file->rows;
      r.dropped.Add(DropReason::kNaSample, file->dropped_na);
      r.dropped.Add(DropReason::kBadRow, file->dropped_malformed);
      if (file->headers > 1)
        r.warnings.push_back(absl::StrCat(file->headers - 1, " repeated `# Entity` header lines ignored"));
      if (file->dropped_na)
        r.warnings.push_back(absl::StrCat(file->dropped_na, " rows with N/A dropped"));
      if (!file->status.ok()) {
        r.status = file->status;
        r.rejected = true;
        return;
      }
      gd.files[s] = std::move(file);
    });
  };

  auto run_output = [&](size_t k) {
    OutputTask& task = tasks[k];
    OutputRecord& out = summary.outputs[k];
    out.path = task.name;
    CspWorker& w = workers.local();
    if (w.rank_files.size() < static_cast<size_t>(shown)) {
      w.rank_files.resize(shown);
      w.plans.resize(shown);
    }
    w.spans.clear();
    formats::CspTraceInput in;
    in.group = task.group;
    in.gpu = task.gpu;
    in.unit = opts.unit;
    std::vector<size_t> displayed_info;  // rank_info index per in.ranks entry
    int64_t first = INT64_MAX, last = INT64_MIN;
    // Ranks not displayed first (their markers only, through buffer 0), then
    // the displayed ones (one buffer each, alive until written): a worker
    // holds display_size rank files and nothing per event.
    std::vector<int64_t> slots;
    for (int64_t s = shown; s < group_size; ++s) slots.push_back(s);
    for (int64_t s = 0; s < shown; ++s) slots.push_back(s);
    for (int64_t s : slots) {
      const int64_t rank = (task.group * group_size + s) * gpt + task.gpu;
      auto it = rank_info_index.find(rank);
      if (it == rank_info_index.end()) continue;
      RankInfo& ri = rank_info[it->second];
      InputRecord& r = inputs[ri.input];
      r.output = task.name;
      const bool displayed = s < display;
      // read(), not mmap: mapped page-cache pages are cold in the CPU caches
      // and decoding them cost more than read()'s copy (perf stat: 0.75 vs
      // 0.61 CPU-s for the 64-rank job).
      formats::ByteBuffer& file = w.rank_files[displayed ? s : 0];
      if (absl::Status st = ReadWholeFile(r.path, &file); !st.ok()) {
        r.status = st;
        r.rejected = true;
        continue;
      }
      std::string_view buf = file.view();
      r.decoded_bytes = buf.size();
      formats::PaddleParseResult res;
      std::vector<formats::PipelineMarker>* markers = &w.markers;
      if (displayed) {
        formats::CspRankPlan& plan = w.plans[s];
        formats::PlanCspRank(buf, task.gpu, &plan);
        res = plan.parse;
        markers = &plan.markers;
        if (plan.first_ns <= plan.last_ns) {
          // uint64 ns on the wire; the job's span stays within +-2^62 ns
          // like convert's (ts_text.h), so the report's differences fit.
          constexpr uint64_t kMax = formats::kMaxAbsTimeNs;
          first = std::min(first, static_cast<int64_t>(std::min(plan.first_ns, kMax)));
          last = std::max(last, static_cast<int64_t>(std::min(plan.last_ns, kMax)));
        }
        ri.lanes = plan.lanes.lanes().size();
        ri.gpu_lanes_other_device = plan.gpu_lanes_other_device;
        if (plan.gpu_lanes_other_device)
          r.warnings.push_back(absl::StrCat(plan.gpu_lanes_other_device,
                                            " GPU kernel devices other than GPU ", task.gpu,
                                            " got their own gpu:<d> lanes"));
        in.ranks.push_back({rank, buf, &plan});
        displayed_info.push_back(it->second);
      } else {
        w.markers.clear();
        res = formats::ScanPipelineMarkers(buf, &w.markers);
      }
      r.events_read = res.events + res.mem_events;
      if (res.damaged_event || res.damaged_mem_event) {
        r.events_read += 1;
        r.dropped.Add(DropReason::kCorruptMessage);
      }
      if (!displayed) r.dropped.Add(DropReason::kNotDisplayed, res.events + res.mem_events);
      if (!res.status.ok()) {
        r.status = res.status;
        r.error_offset = res.error_offset;
      }
      ri.pairing = formats::PairPipelineMarkers(rank, markers, &w.spans);
      if (ri.pairing.dropped())
        r.warnings.push_back(absl::StrCat(
            "pipeline markers: ", ri.pairing.dropped(), " of ", ri.pairing.markers, " dropped (",
            ri.pairing.dropped_end_without_begin, " E without B, ",
            ri.pairing.dropped_begin_without_end, " B without E or nested, ",
            ri.pairing.dropped_mismatched, " forward/backward mismatched)"));
    }
    // Rank order in the pipeline lane and in the records, whatever the reading order.
    std::stable_sort(w.spans.begin(), w.spans.end(),
                     [](const formats::PipelineSpan& a, const formats::PipelineSpan& b) {
                       return a.rank < b.rank;
                     });
    for (int64_t s = 0; s < group_size; ++s) {
      const int64_t rank = (task.group * group_size + s) * gpt + task.gpu;
      auto it = rank_info_index.find(rank);
      if (it == rank_info_index.end()) continue;
      out.inputs.push_back(inputs[rank_info[it->second].input].path);
      out.ranks.push_back(rank);
    }
    in.spans = &w.spans;
    // DCGM rows of the displayed trainers for this GPU.
    GroupDcgm& gd = *group_dcgm[task.group];
    for (int64_t i = 0; i < shown; ++i) load_dcgm(task.group, (task.gpu + i) % shown);
    for (int64_t slot = 0; slot < shown; ++slot) {
      const formats::DcgmFile* file = gd.files[slot].get();
      if (!file) continue;
      in.dcgm_lanes = true;
      formats::CspDcgmTrainer t;
      t.slot = slot;
      for (const formats::DcgmSample& s : file->samples)
        if (s.gpu == task.gpu) t.samples.push_back(&s);
      in.dcgm.push_back(std::move(t));
    }
    in.other_data_json = absl::StrCat(
        "{\"tracemill_version\":\"", kVersion, "\",\"generator\":\"tracemill csp\",\"group\":",
        task.group, ",\"gpu\":", task.gpu, ",\"time_unit\":\"", UnitName(opts.unit), "\",\"note\":",
        opts.unit == formats::CspTimeUnit::kMicros
            ? "\"ts and dur are microseconds\""
            : "\"ts and dur hold nanoseconds, as Paddle CrossStackProfiler writes them (viewers "
              "read microseconds, so the timeline looks 1000x longer); tracemill csp "
              "--time-unit us writes microseconds\"",
        "}");
    formats::CspTraceStats stats;
    if (opts.stop_after_decode) {
      if (--gd.outputs_left == 0)
        for (auto& f : gd.files) f.reset();
      ++done;
      return;
    }
    auto file = formats::OutputFile::Create(absl::StrCat(opts.timeline_path, "/", task.name), opts.compress);
    absl::Status st = file.status();
    if (st.ok()) st = formats::WriteCspTrace(in, file->get(), &w.scratch, &stats);
    if (st.ok()) {
      // Remove the previous run's file first, as CrossStackProfiler does
      // (os.remove, then write): renaming over an existing file makes ext4
      // (auto_da_alloc) start writeback of the new one inside rename(2), which
      // cost ~0.1 s per run when rerunning into the same folder.
      formats::DeferInterrupts defer;  // both, or the temporary is removed
      ::unlink((*file)->final_path().c_str());
      st = (*file)->Commit();
    }
    if (file.ok()) {
      out.bytes = (*file)->bytes_written();
      out.crc32 = (*file)->crc32();
    }
    out.events = stats.events;
    task.fb_ratio_null = stats.fb_ratio_null;
    task.spans = stats.spans;
    task.dcgm_rows = stats.dcgm_rows;
    if (!st.ok()) {
      out.error = std::string(st.message());
      console.Line(absl::StrCat("tracemill csp: cannot write ", opts.timeline_path, "/", task.name,
                                ": ", st.message()));
    } else {
      for (size_t j = 0; j < in.ranks.size(); ++j) {
        RankInfo& ri = rank_info[displayed_info[j]];
        InputRecord& r = inputs[ri.input];
        const formats::CspRankStats& rs = stats.ranks[j];
        r.events_written = rs.events_written + rs.mem_events_written;
        r.dropped.Add(DropReason::kOtherDevice, rs.mem_events_other_device);
      }
    }
    // The output's DCGM rows: written, or lost with it (output_failed).
    auto& dcgm_rows = st.ok() ? dcgm_written : dcgm_failed;
    for (const formats::CspDcgmTrainer& t : in.dcgm)
      dcgm_rows[trainer_input.at(task.group * group_size + t.slot)] += t.samples.size();
    if (first <= last) {
      int64_t cur = span_first.load();
      while (first < cur && !span_first.compare_exchange_weak(cur, first)) {}
      cur = span_last.load();
      while (last > cur && !span_last.compare_exchange_weak(cur, last)) {}
    }
    // The last output of a group frees its DCGM rows.
    if (--gd.outputs_left == 0)
      for (auto& f : gd.files) f.reset();
    size_t d = ++done;
    console.Progress(absl::StrFormat("tracemill csp: wrote %zu/%zu outputs", d, tasks.size()),
                     d == tasks.size());
  };

  {
    using namespace tbb::flow;
    graph g;
    size_t next = 0;
    input_node<size_t> source(g, [&](tbb::flow_control& fc) -> size_t {
      if (next >= tasks.size()) {
        fc.stop();
        return 0;
      }
      return next++;
    });
    // At most `threads` outputs in flight: each holds display_size rank files.
    limiter_node<size_t> limiter(g, static_cast<size_t>(threads));
    function_node<size_t, continue_msg> write(g, unlimited, [&](size_t k) {
      try {
        run_output(k);
      } catch (const std::exception& e) {  // nothing throws across a node
        summary.outputs[k].error = absl::StrCat("internal error: ", e.what());
        console.Line(absl::StrCat("tracemill csp: ", tasks[k].name, ": ", summary.outputs[k].error));
      }
      return continue_msg();
    });
    make_edge(source, limiter);
    make_edge(limiter, write);
    make_edge(write, limiter.decrementer());
    source.activate();
    g.wait_for_all();
  }
  console.EndProgress();

  // DCGM rows of displayed trainers that no output holds (GPU id >= gpus-per-trainer).
  for (auto& [t, idx] : trainer_input) {
    InputRecord& r = inputs[idx];
    if (t >= trainer_num || t % group_size >= display) continue;
    r.events_written = dcgm_written[idx];
    if (dcgm_failed[idx]) r.dropped.Add(DropReason::kOutputFailed, dcgm_failed[idx]);
    const uint64_t rest = r.events_read - r.dropped.Total();
    if (rest > r.events_written) r.dropped.Add(DropReason::kOtherDevice, rest - r.events_written);
    r.output = absl::StrCat("traceFile_", t / group_size, "_*.json", opts.compress ? ".gz" : "");
  }
  // One line per damaged or rejected input, in input order (deterministic).
  for (const auto& r : inputs) {
    if (r.status.ok() || opts.quiet) continue;
    if (r.format == "paddle_profile" && !r.rejected)
      console.Line(absl::StrCat("tracemill: ", r.path, ": at byte ", r.error_offset, ": ",
                                r.status.message(), " (kept the ",
                                r.events_read - r.dropped[DropReason::kCorruptMessage],
                                " events and memory events before it)"));
    else
      console.Line(absl::StrCat("tracemill: ", r.path, ": ", r.status.message(),
                                r.rejected ? " (input rejected)" : ""));
  }
  if (span_first.load() <= span_last.load()) {
    summary.has_span = true;
    summary.first_ts_ns = span_first.load();
    summary.last_ts_ns = span_last.load();
  }

  // ---- The manifest's `csp` section.
  using formats::AppendJsonString;
  std::string& x = summary.extra_members;
  x.append(",\n\"csp\":{");
  x.append("\"profile_path\":");
  AppendJsonString(root, &x);
  x.append(",\"timeline_path\":");
  AppendJsonString(opts.timeline_path, &x);
  absl::StrAppend(&x, ",\"gpus_per_trainer\":", gpt, ",\"trainer_num\":", trainer_num,
                  ",\"group_size\":", group_size, ",\"display_size\":", display,
                  ",\"groups\":", groups, ",\"time_unit\":\"", UnitName(opts.unit), "\"");
  auto list = [&](const char* key, const std::vector<int64_t>& v) {
    absl::StrAppend(&x, ",\"", key, "\":[");
    for (size_t i = 0; i < v.size(); ++i) absl::StrAppend(&x, i ? "," : "", v[i]);
    x.append("]");
  };
  list("missing_ranks", missing_ranks);
  list("missing_dcgm_trainers", missing_dcgm);
  formats::MarkerPairing total;
  for (const auto& ri : rank_info) {
    total.markers += ri.pairing.markers;
    total.spans += ri.pairing.spans;
    total.dropped_end_without_begin += ri.pairing.dropped_end_without_begin;
    total.dropped_begin_without_end += ri.pairing.dropped_begin_without_end;
    total.dropped_mismatched += ri.pairing.dropped_mismatched;
  }
  auto pairing = [&](const formats::MarkerPairing& p) {
    absl::StrAppend(&x, "\"markers\":", p.markers, ",\"spans\":", p.spans,
                    ",\"markers_dropped\":", p.dropped(),
                    ",\"markers_dropped_by_reason\":{\"end_without_begin\":",
                    p.dropped_end_without_begin, ",\"begin_without_end\":",
                    p.dropped_begin_without_end, ",\"mismatched\":", p.dropped_mismatched, "}");
  };
  x.append(",\"pipeline\":{");
  pairing(total);
  x.append("},\"ranks\":[");
  for (size_t i = 0; i < rank_info.size(); ++i) {
    const RankInfo& ri = rank_info[i];
    absl::StrAppend(&x, i ? ",\n" : "\n", "{\"rank\":", ri.rank, ",\"trainer\":", ri.rank / gpt,
                    ",\"gpu\":", ri.rank % gpt, ",\"group\":", (ri.rank / gpt) / group_size,
                    ",\"displayed\":", ri.displayed ? "true" : "false", ",\"lanes\":", ri.lanes,
                    ",\"gpu_lanes_other_device\":", ri.gpu_lanes_other_device, ",");
    pairing(ri.pairing);
    x.append("}");
  }
  x.append("],\"outputs\":[");
  for (size_t k = 0; k < tasks.size(); ++k)
    absl::StrAppend(&x, k ? ",\n" : "\n", "{\"path\":\"", tasks[k].name, "\",\"group\":",
                    tasks[k].group, ",\"gpu\":", tasks[k].gpu, ",\"pipeline_spans\":", tasks[k].spans,
                    ",\"dcgm_rows\":", tasks[k].dcgm_rows, ",\"fb_used_ratio_null\":",
                    tasks[k].fb_ratio_null, "}");
  x.append("]}");
  for (const auto& t : tasks)
    if (t.fb_ratio_null && !opts.quiet)
      console.Line(absl::StrCat("tracemill csp: ", t.name, ": ", t.fb_ratio_null,
                                " DCGM samples have FBTTL = 0: FB_USED_RATIO written as null"));

  bool output_failed = false;
  for (const auto& out : summary.outputs) output_failed |= !out.error.empty();
  // Events of outputs that could not be written (removed): neither written
  // nor dropped for another reason, they count as output_failed.
  if (output_failed)
    for (auto& r : inputs) r.DropUnaccounted(DropReason::kOutputFailed);
  bool any_input_error = !missing_ranks.empty();
  for (const auto& r : inputs) any_input_error |= !r.status.ok();
  summary.exit_code = output_failed ? kExitInternal : any_input_error ? kExitSomeRejected : kExitOk;
  summary.wall_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (absl::Status st = WriteManifest(opts.timeline_path, summary); !st.ok()) {
    console.Line(absl::StrCat("tracemill csp: cannot write manifest: ", st.message()));
    summary.exit_code = kExitInternal;
  }
  return summary;
}

}  // namespace tracemill::pipeline
