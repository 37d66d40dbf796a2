#include "pipeline/csp/csp_account.h"

#include <unistd.h>

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "formats/common/json_text.h"
#include "pipeline/job_notes.h"
#include "pipeline/output/earlier_run.h"
#include "report/html_report.h"

namespace tracemill::pipeline {
namespace {

using formats::DropReason;

// DCGM rows of displayed trainers: written, lost with an output that could
// not be written, or of no output (GPU id >= gpus-per-trainer).
void AccountDcgmRows(const CspOptions& opts, const CspInputs& in, const CspShape& shape, const CspOutputs& outputs,
                     std::vector<InputRecord>& inputs) {
  for (auto& [t, idx] : in.trainer_input) {
    InputRecord& r = inputs[idx];
    if (t >= shape.trainer_num || t % shape.group_size >= shape.display) continue;
    r.events_written = outputs.dcgm_written(idx);
    if (outputs.dcgm_failed(idx)) r.dropped.Add(DropReason::kOutputFailed, outputs.dcgm_failed(idx));
    const uint64_t rest = r.events_read - r.dropped.Total();
    if (rest > r.events_written) r.dropped.Add(DropReason::kOtherDevice, rest - r.events_written);
    r.output = absl::StrCat("traceFile_", t / shape.group_size, "_*.json", opts.compress ? ".gz" : "");
  }
}

// Network samples of displayed trainers: each goes to every output of its
// group, so it counts as written once any of them was written, else as
// lost with them (output_failed).
void AccountNetSamples(const CspOptions& opts, const CspInputs& in, const CspShape& shape, const CspOutputs& outputs,
                       std::vector<InputRecord>& inputs) {
  for (auto& [t, idx] : in.net_input) {
    InputRecord& r = inputs[idx];
    if (t >= shape.trainer_num || t % shape.group_size >= shape.display || r.rejected) continue;
    if (outputs.net_outputs_written(idx)) r.events_written = outputs.net_samples(idx);
    else r.dropped.Add(DropReason::kOutputFailed, outputs.net_samples(idx));
    r.output = absl::StrCat("traceFile_", t / shape.group_size, "_*.json", opts.compress ? ".gz" : "");
  }
}

// One line per damaged or rejected input, in input order (deterministic).
void SayInputErrors(const std::vector<InputRecord>& inputs, Job& job) {
  for (const auto& r : inputs) {
    if (r.status.ok()) continue;
    if (r.format == "paddle_net_log" && !r.rejected)
      job.console().Line(absl::StrCat("tracemill csp: ", r.path, ": at byte ", r.error_offset, ": ", r.status.message(),
                                      " (", r.dropped.Total(), " bad lines dropped, every other line kept)"));
    else if (r.format == "paddle_profile" && !r.rejected)
      job.console().Line(absl::StrCat("tracemill csp: ", r.path, ": at byte ", r.error_offset, ": ", r.status.message(),
                                      " (kept the ", r.events_read - r.dropped[DropReason::kCorruptMessage],
                                      " events and memory events before it)"));
    else
      job.console().Line(
          absl::StrCat("tracemill csp: ", r.path, ": ", r.status.message(), r.rejected ? " (input rejected)" : ""));
  }
}

// GpuDeviceNotice: displayed ranks whose GPU kernels ran on a device other
// than their GPU (rank r is GPU r % gpus-per-trainer), once for the job;
// when every kernel of the job is on a GPU below --gpus-per-trainer, the
// likely value (the default 8 on a job of 4-GPU trainers).
void GpuDeviceNotice(const CspShape& shape, const CspOutputs& outputs, std::vector<std::string>* notices) {
  std::vector<int64_t> odd;
  int64_t max_device = -1;
  for (const CspRankInfo& ri : outputs.ranks()) {
    max_device = std::max(max_device, ri.max_gpu_device);
    if (ri.gpu_lanes_other_device) odd.push_back(ri.rank);
  }
  if (odd.empty()) return;
  const int64_t gpt = shape.gpus_per_trainer;
  std::string n = absl::StrCat(odd.size() == 1 ? "rank " : "ranks ", RankRanges(odd),
                               " ran GPU kernels on another device than their GPU (rank r is GPU r % ", gpt,
                               " under --gpus-per-trainer ", gpt, "): drawn on gpu:<d> lanes of their own");
  if (max_device + 1 < gpt)
    absl::StrAppend(&n, "; the job's kernels use GPUs 0-", max_device, " only: if a trainer has ", max_device + 1,
                    " GPUs, give --gpus-per-trainer ", max_device + 1);
  notices->push_back(std::move(n));
}

void AppendPairing(const formats::MarkerPairing& p, std::string* x) {
  absl::StrAppend(x, "\"markers\":", p.markers, ",\"spans\":", p.spans, ",\"markers_dropped\":", p.dropped(),
                  ",\"markers_dropped_by_reason\":{\"end_without_begin\":", p.dropped_end_without_begin,
                  ",\"begin_without_end\":", p.dropped_begin_without_end, ",\"mismatched\":", p.dropped_mismatched,
                  "}");
}

void AppendList(const char* key, const std::vector<int64_t>& v, std::string* x) {
  absl::StrAppend(x, ",\"", key, "\":[");
  for (size_t i = 0; i < v.size(); ++i) absl::StrAppend(x, i ? "," : "", v[i]);
  x->append("]");
}

// The manifest's `csp` section: `,\n"csp":{...}`.
std::string CspSection(const CspOptions& opts, const CspInputs& in, const CspShape& shape,
                       const CspOutputs& outputs, const std::vector<InputRecord>& inputs) {
  using formats::AppendJsonString;
  std::string x = ",\n\"csp\":{\"profile_path\":";
  AppendJsonString(in.root, &x);
  x.append(",\"timeline_path\":");
  AppendJsonString(opts.timeline_path, &x);
  absl::StrAppend(&x, ",\"gpus_per_trainer\":", shape.gpus_per_trainer, ",\"trainer_num\":", shape.trainer_num,
                  ",\"group_size\":", shape.group_size, ",\"display_size\":", shape.display,
                  ",\"groups\":", shape.groups, ",\"time_unit\":\"",
                  opts.unit == formats::CspTimeUnit::kMicros ? "us" : "ns", "\"");
  AppendList("missing_ranks", shape.missing_ranks, &x);
  AppendList("missing_dcgm_trainers", shape.missing_dcgm, &x);
  AppendList("missing_net_trainers", shape.missing_net, &x);
  formats::MarkerPairing total;
  for (const auto& ri : outputs.ranks()) {
    total.markers += ri.pairing.markers;
    total.spans += ri.pairing.spans;
    total.dropped_end_without_begin += ri.pairing.dropped_end_without_begin;
    total.dropped_begin_without_end += ri.pairing.dropped_begin_without_end;
    total.dropped_mismatched += ri.pairing.dropped_mismatched;
  }
  x.append(",\"pipeline\":{");
  AppendPairing(total, &x);
  x.append("},\"ranks\":[");
  const int64_t gpt = shape.gpus_per_trainer;
  for (size_t i = 0; i < outputs.ranks().size(); ++i) {
    const CspRankInfo& ri = outputs.ranks()[i];
    absl::StrAppend(&x, i ? ",\n" : "\n", "{\"rank\":", ri.rank, ",\"trainer\":", ri.rank / gpt,
                    ",\"gpu\":", ri.rank % gpt, ",\"group\":", (ri.rank / gpt) / shape.group_size,
                    ",\"displayed\":", ri.displayed ? "true" : "false", ",\"lanes\":", ri.lanes,
                    ",\"gpu_lanes_other_device\":", ri.gpu_lanes_other_device, ",");
    AppendPairing(ri.pairing, &x);
    x.append("}");
  }
  x.append("],\"dcgm_logs\":[");
  bool first = true;
  for (auto& [t, idx] : in.trainer_input) {
    const InputRecord& r = inputs[idx];
    const CspDcgmLines& lines = outputs.dcgm_lines(idx);
    if (!r.decoded_bytes) continue;  // not read
    absl::StrAppend(&x, first ? "\n" : ",\n", "{\"trainer\":", t, ",\"gpu_rows\":", r.events_read,
                    ",\"header_lines\":", lines.headers, ",\"noise_lines\":", lines.noise, "}");
    first = false;
  }
  x.append("],\"outputs\":[");
  for (size_t k = 0; k < outputs.tasks().size(); ++k) {
    const CspOutputTask& t = outputs.tasks()[k];
    absl::StrAppend(&x, k ? ",\n" : "\n", "{\"path\":\"", t.name, "\",\"group\":", t.group, ",\"gpu\":", t.gpu,
                    ",\"pipeline_spans\":", t.spans, ",\"dcgm_rows\":", t.dcgm_rows,
                    ",\"fb_used_ratio_null\":", t.fb_ratio_null, ",\"net_rows\":", t.net_rows, "}");
  }
  x.append("]}");
  return x;
}

// RemoveEarlierRunsTraces: the earlier run's files (another --group-size
// wrote other traceFile_<g>_<n>.json) that this run did not write again.
void RemoveEarlierRunsTraces(const CspOptions& opts, const std::vector<std::string>& earlier, Job& job) {
  if (earlier.empty() || opts.stop_after_decode) return;
  std::set<std::string> written;
  for (const OutputRecord& o : job.summary().outputs)
    if (o.error.empty()) written.insert(o.path);  // an earlier file of a failed output's name is not this run's
  if (opts.write_report) written.insert("report.html");  // written after the manifest
  RemoveEarlierRunsFiles(opts.timeline_path, earlier, written, opts.quiet, job);
}

// WriteCspReport: report.html from the manifest just written, as convert's.
void WriteCspReport(const CspOptions& opts, Job& job) {
  RunSummary& s = job.summary();
  if (s.exit_code == kExitInternal) ::unlink((opts.timeline_path + "/report.html").c_str());
  if (s.exit_code == kExitInternal || !opts.write_report || opts.stop_after_decode) return;
  if (absl::Status rs = report::WriteReport(opts.timeline_path); !rs.ok()) {
    job.Say(absl::StrCat("cannot write report: ", rs.message()));
    job.WriteManifest(opts.timeline_path, true, s.ranks_missing > 0).IgnoreError();  // exit 1
  }
}

}  // namespace

void AccountForCsp(const CspOptions& opts, const CspInputs& in, const CspShape& shape, const CspOutputs& outputs,
                   const std::vector<std::string>& earlier, Job& job) {
  RunSummary& s = job.summary();
  AccountDcgmRows(opts, in, shape, outputs, s.inputs);
  AccountNetSamples(opts, in, shape, outputs, s.inputs);
  if (!opts.quiet) SayInputErrors(s.inputs, job);
  for (const InputRecord& r : s.inputs) {  // the job's span: what was read and drawn, as convert's
    if (!r.has_span) continue;
    s.first_ts_ns = s.has_span ? std::min(s.first_ts_ns, r.first_ts_ns) : r.first_ts_ns;
    s.last_ts_ns = s.has_span ? std::max(s.last_ts_ns, r.last_ts_ns) : r.last_ts_ns;
    s.has_span = true;
  }
  s.extra_members = CspSection(opts, in, shape, outputs, s.inputs);
  GpuDeviceNotice(shape, outputs, &s.notices);
  s.ranks_missing = shape.missing_ranks.size();
  for (const auto& t : outputs.tasks())
    if (t.fb_ratio_null && !opts.quiet)
      job.Say(absl::StrCat(t.name, ": ", t.fb_ratio_null, " DCGM samples have FBTTL = 0: FB_USED_RATIO written as null"));
  bool output_failed = false;
  for (const auto& out : s.outputs) output_failed |= !out.error.empty();
  // Events of outputs that could not be written (removed): neither written
  // nor dropped for another reason, they count as output_failed.
  if (output_failed)
    for (auto& r : s.inputs) r.DropUnaccounted(DropReason::kOutputFailed);
  RemoveEarlierRunsTraces(opts, earlier, job);
  job.WriteManifest(opts.timeline_path, false, !shape.missing_ranks.empty()).IgnoreError();  // said there
  WriteCspReport(opts, job);
}

}  // namespace tracemill::pipeline
