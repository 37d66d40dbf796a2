#include "pipeline/csp/csp_output.h"

#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "formats/chrome/output_file.h"
#include "formats/common/cleanup.h"
#include "formats/common/read_file.h"
#include "formats/common/ts_text.h"
#include "formats/paddle/paddle_profile.h"
#include "tracemill/version.h"

namespace tracemill::pipeline {
namespace {

using formats::DropReason;

std::string UnitName(formats::CspTimeUnit u) { return u == formats::CspTimeUnit::kMicros ? "us" : "ns"; }

// NotAPaddleProfile: why the bytes of rank `rank`'s file are no Paddle
// profile (empty, or not protobuf of its shape: formats/detect.h's sniff),
// or OK. CrossStackProfiler would read an empty file as a rank without
// events, and fail on text with a protobuf error.
absl::Status NotAPaddleProfile(std::string_view buf, int64_t rank) {
  constexpr size_t kSniffBytes = 4096;
  if (buf.empty())
    return absl::InvalidArgumentError(
        absl::StrCat("empty input (0 bytes): no Paddle profile, so rank ", rank, " has no lanes"));
  if (!formats::LooksLikePaddleProfile(buf.substr(0, kSniffBytes), buf.size() <= kSniffBytes))
    return absl::InvalidArgumentError(
        absl::StrCat("not a Paddle profile (first bytes: ", formats::FirstBytesHex(buf), ")"));
  return absl::OkStatus();
}

}  // namespace

CspOutputs::CspOutputs(const CspOptions& opts, const CspShape& shape, const CspInputs& in, Job& job)
    : opts_(opts),
      shape_(shape),
      in_(in),
      job_(job),
      inputs_(job.summary().inputs),
      dcgm_written_(job.summary().inputs.size()),
      dcgm_failed_(job.summary().inputs.size()),
      net_outputs_written_(job.summary().inputs.size()),
      net_samples_(job.summary().inputs.size()),
      dcgm_lines_(job.summary().inputs.size()) {
  for (int64_t g = 0; g < shape.groups; ++g)
    for (int64_t n = 0; n < shape.gpus_per_trainer; ++n)
      tasks_.push_back({g, n, absl::StrCat("traceFile_", g, "_", n, ".json", opts.compress ? ".gz" : "")});
  group_dcgm_.resize(shape.groups);
  for (auto& gd : group_dcgm_) {
    gd = std::make_unique<GroupDcgm>(static_cast<size_t>(shape.shown));
    gd->outputs_left = static_cast<int>(shape.gpus_per_trainer);
  }
  job.summary().outputs.resize(tasks_.size());
  for (auto& [rank, idx] : in.rank_input) {
    if (rank >= shape.trainer_num * shape.gpus_per_trainer) continue;
    rank_info_index_[rank] = rank_info_.size();
    CspRankInfo ri;
    ri.rank = rank;
    ri.input = idx;
    ri.displayed = (rank / shape.gpus_per_trainer) % shape.group_size < shape.display;
    rank_info_.push_back(ri);
  }
}

void CspOutputs::Write(size_t k) {
  try {
    WriteTask(k);
  } catch (const std::exception& e) {  // nothing throws across a node
    OutputRecord& out = job_.summary().outputs[k];
    out.error = absl::StrCat("internal error: ", e.what());
    job_.Say(absl::StrCat(tasks_[k].name, ": ", out.error));
  }
}

void CspOutputs::WriteTask(size_t k) {
  CspOutputTask& task = tasks_[k];
  OutputRecord& out = job_.summary().outputs[k];
  out.path = task.name;
  Worker& w = workers_.local();
  if (w.rank_files.size() < static_cast<size_t>(shape_.shown)) {
    w.rank_files.resize(shape_.shown);
    w.plans.resize(shape_.shown);
  }
  Reading rd;
  ReadRanks(task, w, rd);
  for (int64_t s = 0; s < shape_.group_size; ++s) {
    const int64_t rank = shape_.RankAt(task.group, s, task.gpu);
    auto it = rank_info_index_.find(rank);
    if (it == rank_info_index_.end()) continue;
    out.inputs.push_back(inputs_[rank_info_[it->second].input].path);
    out.ranks.push_back(rank);
  }
  rd.in.spans = &w.spans;
  AddDcgm(task, rd);
  AddNet(task, rd);
  rd.in.other_data_json = OtherData(task);
  if (opts_.stop_after_decode) {
    GroupDone(task.group);
    ++done_;
    return;
  }
  formats::CspTraceStats stats;
  auto file = formats::OutputFile::Create(absl::StrCat(opts_.timeline_path, "/", task.name), opts_.compress);
  absl::Status st = file.status();
  if (st.ok()) st = formats::WriteCspTrace(rd.in, file->get(), &w.scratch, &stats);
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
  Record(task, out, st, rd, stats);
  GroupDone(task.group);
  const size_t d = ++done_;
  job_.console().Progress(absl::StrFormat("tracemill csp: wrote %zu/%zu outputs", d, tasks_.size()),
                          d == tasks_.size());
}

void CspOutputs::ReadRanks(const CspOutputTask& task, Worker& w, Reading& rd) {
  w.spans.clear();
  rd.in.group = task.group;
  rd.in.gpu = task.gpu;
  rd.in.unit = opts_.unit;
  // Ranks not displayed first (their markers only, through buffer 0), then
  // the displayed ones (one buffer each, alive until written): a worker
  // holds display_size rank files and nothing per event.
  for (int64_t s = shape_.shown; s < shape_.group_size; ++s) ReadRank(task, s, w, rd);
  for (int64_t s = 0; s < shape_.shown; ++s) ReadRank(task, s, w, rd);
  // Rank order in the pipeline lane and in the records, whatever the reading order.
  std::stable_sort(w.spans.begin(), w.spans.end(),
                   [](const formats::PipelineSpan& a, const formats::PipelineSpan& b) { return a.rank < b.rank; });
}

void CspOutputs::ReadRank(const CspOutputTask& task, int64_t s, Worker& w, Reading& rd) {
  const int64_t rank = shape_.RankAt(task.group, s, task.gpu);
  auto it = rank_info_index_.find(rank);
  if (it == rank_info_index_.end()) return;
  CspRankInfo& ri = rank_info_[it->second];
  InputRecord& r = inputs_[ri.input];
  r.output = task.name;
  const bool displayed = s < shape_.display;
  // read(), not mmap: mapped page-cache pages are cold in the CPU caches
  // and decoding them cost more than read()'s copy (perf stat: 0.75 vs
  // 0.61 CPU-s for the 64-rank job).
  formats::ByteBuffer& file = w.rank_files[displayed ? s : 0];
  if (absl::Status st = formats::ReadWholeFile(r.path, 0, &file); !st.ok()) {
    r.status = st;
    r.rejected = true;
    return;
  }
  std::string_view buf = file.view();
  r.decoded_bytes = buf.size();
  if (absl::Status st = NotAPaddleProfile(buf, rank); !st.ok()) {
    r.status = std::move(st);
    r.rejected = true;
    return;
  }
  formats::PaddleParseResult res;
  std::vector<formats::PipelineMarker>* markers = &w.markers;
  if (displayed) {
    formats::CspRankPlan& plan = w.plans[s];
    formats::PlanCspRank(buf, task.gpu, &plan);
    res = plan.parse;
    markers = &plan.markers;
    if (plan.first_ns <= plan.last_ns) {
      // uint64 ns on the wire; spans stay within +-2^62 ns like convert's
      // (ts_text.h), so the report's differences fit.
      constexpr uint64_t kMax = formats::kMaxAbsTimeNs;
      r.has_span = true;
      r.first_ts_ns = static_cast<int64_t>(std::min(plan.first_ns, kMax));
      r.last_ts_ns = static_cast<int64_t>(std::min(plan.last_ns, kMax));
    }
    ri.lanes = plan.lanes.lanes().size();
    ri.gpu_lanes_other_device = plan.gpu_lanes_other_device;
    for (const auto& lane : plan.lanes.lanes())
      if (lane.kind == formats::CspLanes::Kind::kGpu) ri.max_gpu_device = std::max(ri.max_gpu_device, lane.device);
    if (plan.gpu_lanes_other_device)
      r.warnings.push_back(absl::StrCat(plan.gpu_lanes_other_device, " GPU kernel devices other than GPU ",
                                        task.gpu, " got their own gpu:<d> lanes"));
    rd.in.ranks.push_back({rank, buf, &plan});
    rd.displayed_info.push_back(it->second);
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
  const size_t first_span = w.spans.size();
  ri.pairing = formats::PairPipelineMarkers(rank, markers, &w.spans);
  // The rank's steps, for the report and the manifest (as convert finds them).
  r.timeline.steps.clear();
  formats::StepsOfPipelineSpans(w.spans.data() + first_span, w.spans.size() - first_span, &r.timeline.steps);
  if (ri.pairing.dropped())
    r.warnings.push_back(absl::StrCat("pipeline markers: ", ri.pairing.dropped(), " of ", ri.pairing.markers,
                                      " dropped (", ri.pairing.dropped_end_without_begin, " E without B, ",
                                      ri.pairing.dropped_begin_without_end, " B without E or nested, ",
                                      ri.pairing.dropped_mismatched, " forward/backward mismatched)"));
}

void CspOutputs::AddDcgm(const CspOutputTask& task, Reading& rd) {
  // Outputs of a group visit the slots in a rotated order (output n starts
  // at n % shown), so the first outputs of a group parse different logs at
  // the same time instead of waiting on one another.
  GroupDcgm& gd = *group_dcgm_[task.group];
  for (int64_t i = 0; i < shape_.shown; ++i) LoadDcgm(task.group, (task.gpu + i) % shape_.shown);
  for (int64_t slot = 0; slot < shape_.shown; ++slot) {
    const formats::DcgmFile* file = gd.files[slot].get();
    if (!file) continue;
    rd.in.dcgm_lanes = true;
    formats::CspDcgmTrainer t;
    t.slot = slot;
    for (const formats::DcgmSample& s : file->samples)
      if (s.gpu == task.gpu) t.samples.push_back(&s);
    rd.in.dcgm.push_back(std::move(t));
  }
}

size_t CspOutputs::ReadTrainerLog(const std::map<int64_t, size_t>& by_trainer, int64_t t, formats::ByteBuffer* buf) {
  auto it = by_trainer.find(t);
  if (it == by_trainer.end()) return SIZE_MAX;
  InputRecord& r = inputs_[it->second];
  if (absl::Status st = formats::ReadWholeFile(r.path, 0, buf); !st.ok()) {
    r.status = st;
    r.rejected = true;
    return SIZE_MAX;
  }
  return it->second;
}

void CspOutputs::AddNet(const CspOutputTask& task, Reading& rd) {
  GroupDcgm& gd = *group_dcgm_[task.group];
  for (int64_t i = 0; i < shape_.shown; ++i) LoadNet(task.group, (task.gpu + i) % shape_.shown);
  for (int64_t slot = 0; slot < shape_.shown; ++slot) {
    const formats::NetLogFile* file = gd.net_files[slot].get();
    if (!file) continue;
    rd.in.net_lanes = true;
    rd.in.net.push_back({task.group * shape_.group_size + slot, file});
  }
}

void CspOutputs::LoadNet(int64_t g, int64_t s) {
  GroupDcgm& gd = *group_dcgm_[g];
  std::call_once(gd.net_once[s], [&] {
    formats::ByteBuffer buf;
    const size_t idx = ReadTrainerLog(in_.net_input, g * shape_.group_size + s, &buf);
    if (idx == SIZE_MAX) return;
    InputRecord& r = inputs_[idx];
    const std::string_view path = r.path;
    auto file = std::make_unique<formats::NetLogFile>(
        formats::ParseNetLog(path.substr(path.rfind('/') + 1), buf.view()));
    r.decoded_bytes = buf.size();
    r.events_read = file->report.events_read;
    r.dropped = file->report.dropped;
    r.warnings.insert(r.warnings.end(), file->report.warnings.begin(), file->report.warnings.end());
    if (!file->report.status.ok()) {
      r.status = file->report.status;
      r.error_offset = file->report.error_offset;
    }
    net_samples_[idx] = file->samples.size();
    gd.net_files[s] = std::move(file);
  });
}

void CspOutputs::LoadDcgm(int64_t g, int64_t s) {
  GroupDcgm& gd = *group_dcgm_[g];
  std::call_once(gd.once[s], [&] {
    formats::ByteBuffer buf;
    const size_t idx = ReadTrainerLog(in_.trainer_input, g * shape_.group_size + s, &buf);
    if (idx == SIZE_MAX) return;
    InputRecord& r = inputs_[idx];
    auto file = std::make_unique<formats::DcgmFile>(formats::ParseDcgmDmon(buf.view()));
    r.decoded_bytes = buf.size();
    r.events_read = file->rows;
    r.dropped.Add(DropReason::kNaSample, file->dropped_na);
    r.dropped.Add(DropReason::kBadRow, file->dropped_malformed);
    dcgm_lines_[idx] = {file->headers, file->noise_lines};
    r.timeline.gpus = formats::SummarizeDcgm(*file);
    if (file->headers > 1)
      r.warnings.push_back(absl::StrCat(file->headers - 1, " repeated `# Entity` header line",
                                        file->headers == 2 ? "" : "s", " ignored"));
    for (std::string& w : formats::DcgmDropWarnings(*file, "")) r.warnings.push_back(std::move(w));
    if (!file->status.ok()) {
      r.status = file->status;
      r.rejected = true;
      return;
    }
    for (const formats::DcgmSample& sample : file->samples) {
      const int64_t ts = std::clamp(sample.ts_ns, -formats::kMaxAbsTimeNs, formats::kMaxAbsTimeNs);
      r.first_ts_ns = r.has_span ? std::min(r.first_ts_ns, ts) : ts;
      r.last_ts_ns = r.has_span ? std::max(r.last_ts_ns, ts) : ts;
      r.has_span = true;
    }
    gd.files[s] = std::move(file);
  });
}

std::string CspOutputs::OtherData(const CspOutputTask& task) const {
  return absl::StrCat(
      "{\"tracemill_version\":\"", kVersion, "\",\"generator\":\"tracemill csp\",\"group\":", task.group,
      ",\"gpu\":", task.gpu, ",\"time_unit\":\"", UnitName(opts_.unit), "\",\"note\":",
      opts_.unit == formats::CspTimeUnit::kMicros
          ? "\"ts and dur are microseconds\""
          : "\"ts and dur hold nanoseconds, as Paddle CrossStackProfiler writes them (viewers "
            "read microseconds, so the timeline looks 1000x longer); tracemill csp "
            "--time-unit us writes microseconds\"",
      "}");
}

void CspOutputs::Record(CspOutputTask& task, OutputRecord& out, const absl::Status& st, const Reading& rd,
                        const formats::CspTraceStats& stats) {
  out.events = stats.events;
  task.fb_ratio_null = stats.fb_ratio_null;
  task.spans = stats.spans;
  task.dcgm_rows = stats.dcgm_rows;
  task.net_rows = stats.net_rows;
  if (!st.ok()) {
    out.error = std::string(st.message());
    job_.Say(absl::StrCat("cannot write ", opts_.timeline_path, "/", task.name, ": ", st.message()));
  } else {
    for (size_t j = 0; j < rd.in.ranks.size(); ++j) {
      InputRecord& r = inputs_[rank_info_[rd.displayed_info[j]].input];
      const formats::CspRankStats& rs = stats.ranks[j];
      r.events_written = rs.events_written + rs.mem_events_written;
      r.dropped.Add(DropReason::kOtherDevice, rs.mem_events_other_device);
    }
  }
  // The output's DCGM rows: written, or lost with it (output_failed).
  auto& dcgm_rows = st.ok() ? dcgm_written_ : dcgm_failed_;
  for (const formats::CspDcgmTrainer& t : rd.in.dcgm)
    dcgm_rows[in_.trainer_input.at(task.group * shape_.group_size + t.slot)] += t.samples.size();
  if (st.ok())
    for (const formats::CspNetTrainer& t : rd.in.net) ++net_outputs_written_[in_.net_input.at(t.trainer)];
}

void CspOutputs::GroupDone(int64_t g) {
  GroupDcgm& gd = *group_dcgm_[g];
  if (--gd.outputs_left == 0) {
    for (auto& f : gd.files) f.reset();
    for (auto& f : gd.net_files) f.reset();
  }
}

}  // namespace tracemill::pipeline
