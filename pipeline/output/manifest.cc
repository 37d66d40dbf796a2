#include "pipeline/output/manifest.h"

#include <simdjson.h>

#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "formats/chrome/output_file.h"
#include "formats/common/json_text.h"
#include "formats/common/status_macros.h"
#include "formats/common/ts_text.h"
#include "tracemill/version.h"

namespace tracemill::pipeline {
namespace {

using formats::AppendJsonString;

void Key(std::string* o, std::string_view k) {
  AppendJsonString(k, o);
  o->push_back(':');
}

void Micros(std::string* o, int64_t ns) {
  char buf[32];
  o->append(buf, formats::FormatNanosAsMicros(ns, buf) - buf);
}

void Drops(const formats::DropCounts& d, std::string* o) {
  o->push_back('{');
  bool first = true;
  for (int k = 0; k < formats::kNumDropReasons; ++k) {
    if (!d.n[k]) continue;
    if (!first) o->push_back(',');
    first = false;
    Key(o, formats::DropReasonKey(static_cast<formats::DropReason>(k)));
    absl::StrAppend(o, d.n[k]);
  }
  o->push_back('}');
}

// Steps as compact arrays: [step, start_us, end_us] or, for rounds with
// survivors, [step, start_us, end_us, survivors, total].
// Steps lists the steps of `steps` listed at `stride` (formats::ListedStride:
// at most kMaxStepsPerTrack, spread over the run); Unlisted: how many are not.
size_t Unlisted(const std::vector<formats::StepSpan>& steps, int64_t stride) {
  size_t listed = 0;
  for (const formats::StepSpan& st : steps) listed += formats::IsListed(st.step, stride);
  return steps.size() - listed;
}
void Steps(std::string* o, const std::vector<formats::StepSpan>& steps, int64_t stride) {
  o->push_back('[');
  bool first = true;
  for (const formats::StepSpan& st : steps) {
    if (!formats::IsListed(st.step, stride)) continue;
    absl::StrAppend(o, first ? "[" : ",[", st.step, ",");
    first = false;
    Micros(o, st.start_ns);
    o->push_back(',');
    Micros(o, st.end_ns);
    if (st.survivors >= 0 || st.total >= 0) absl::StrAppend(o, ",", st.survivors, ",", st.total);
    o->push_back(']');
  }
  o->push_back(']');
  if (stride > 1) absl::StrAppend(o, ",\"steps_stride\":", stride);
}

// `,"gpu_utilization":[...]` of a DCGM log (none if empty): per GPU its
// samples and means (4 decimals) and GPUTL's maximum.
void GpuUtilizationJson(std::string* o, const std::vector<formats::GpuUtilization>& gpus) {
  if (gpus.empty()) return;
  o->append(",\"gpu_utilization\":[");
  for (size_t k = 0; k < gpus.size(); ++k) {
    const formats::GpuUtilization& g = gpus[k];
    const double n = static_cast<double>(std::max<uint64_t>(g.samples, 1));
    absl::StrAppend(o, k ? ",{" : "{", "\"gpu\":", g.gpu, ",\"samples\":", g.samples,
                    absl::StrFormat(",\"gpu_util_mean\":%.4f,\"gpu_util_max\":%.4f,\"sm_active_mean\":%.4f,"
                                    "\"sm_occupancy_mean\":%.4f,\"dram_active_mean\":%.4f,"
                                    "\"tensor_active_mean\":%.4f}",
                                    g.gputl_sum / n, g.gputl_max, g.smact_sum / n, g.smocc_sum / n, g.drama_sum / n,
                                    g.tenso_sum / n));
  }
  o->push_back(']');
}

// The report's part of an input: span, steps, tracks, bytes moved.
void TimelineJson(std::string* o, const InputRecord& r) {
  o->append(",\"span_us\":");
  if (r.has_span) {
    o->push_back('[');
    Micros(o, r.first_ts_ns);
    o->push_back(',');
    Micros(o, r.last_ts_ns);
    o->push_back(']');
  } else {
    o->append("null");
  }
  const formats::Timeline& tl = r.timeline;
  o->append(",\"steps\":");
  const int64_t stride = formats::ListedStride(tl.steps, tl.steps_stride);
  Steps(o, tl.steps, stride);
  // Not listed: the steps between those listed, and those not kept at all.
  uint64_t unlisted = tl.steps_dropped + Unlisted(tl.steps, stride);
  for (const formats::TrackTimeline& tr : tl.tracks)
    unlisted += Unlisted(tr.steps, formats::ListedStride(tr.steps, tr.steps_stride));
  GpuUtilizationJson(o, tl.gpus);
  absl::StrAppend(o, ",\"steps_dropped\":", unlisted, ",\"bytes_pushed\":", tl.bytes_pushed,
                  ",\"bytes_pulled\":", tl.bytes_pulled, ",\"tracks\":[");
  for (size_t t = 0; t < tl.tracks.size(); ++t) {
    const formats::TrackTimeline& tr = tl.tracks[t];
    o->append(t ? ",{" : "{");
    Key(o, "name");
    AppendJsonString(tr.name, o);
    o->append(",\"rank\":");
    if (tr.rank) absl::StrAppend(o, *tr.rank); else o->append("null");
    o->append(",\"steps\":");
    Steps(o, tr.steps, formats::ListedStride(tr.steps, tr.steps_stride));
    o->append(",\"failed_at_us\":");
    if (tr.failed_at_ns) Micros(o, *tr.failed_at_ns); else o->append("null");
    o->append(",\"failure\":");
    if (tr.failed_at_ns) AppendJsonString(tr.failure, o); else o->append("null");
    o->push_back('}');
  }
  o->push_back(']');
}

}  // namespace

std::string ManifestFileName(const ShardSpec& shard) {
  if (!shard.sharded()) return "manifest.json";
  return absl::StrCat("manifest.shard-", shard.index, "-of-", shard.count, ".json");
}

void AppendInputJson(const InputRecord& r, bool with_index, std::string* op) {
  std::string& o = *op;
  o.push_back('{');
  Key(&o, "path");
  AppendJsonString(r.path, &o);
  if (with_index) absl::StrAppend(&o, ",\"index\":", r.index);
  if (r.owner_shard >= 0) absl::StrAppend(&o, ",\"owner_shard\":", r.owner_shard);
  absl::StrAppend(&o, ",\"bytes\":", r.bytes, ",\"decoded_bytes\":", r.decoded_bytes, ",");
  Key(&o, "format");
  AppendJsonString(r.format, &o);
  o.push_back(',');
  Key(&o, "rank");
  if (r.rank) absl::StrAppend(&o, *r.rank); else o.append("null");
  o.push_back(',');
  Key(&o, "rank_source");
  AppendJsonString(r.rank_source, &o);
  o.push_back(',');
  Key(&o, "world_size");
  if (r.world_size) absl::StrAppend(&o, *r.world_size); else o.append("null");
  o.push_back(',');
  Key(&o, "label");
  AppendJsonString(r.label, &o);
  o.push_back(',');
  absl::StrAppend(&o, "\"skipped\":", r.skipped ? "true" : "false", ",");
  Key(&o, "output");
  if (r.output.empty()) o.append("null"); else AppendJsonString(r.output, &o);
  absl::StrAppend(&o, ",\"events_read\":", r.events_read, ",\"events_written\":", r.events_written,
                  ",\"events_dropped\":", r.dropped.Total(), ",\"dropped_by_reason\":");
  Drops(r.dropped, &o);
  o.append(",\"time_span_ns\":");
  if (r.has_span) absl::StrAppend(&o, "[", r.first_ts_ns, ",", r.last_ts_ns, "]");
  else o.append("null");
  absl::StrAppend(&o, ",\"reused\":", r.reused ? "true" : "false");
  if (r.clock_decided) {
    o.append(",\"clock\":{\"domain\":");
    if (r.clock_domain.empty()) o.append("null"); else AppendJsonString(r.clock_domain, &o);
    absl::StrAppend(&o, ",\"offset_ns\":", r.clock_offset_ns, ",\"applied\":", r.clock_applied ? "true" : "false",
                    ",\"note\":");
    AppendJsonString(r.clock_note, &o);
    if (r.clock_disagrees_ns) absl::StrAppend(&o, ",\"disagrees_ns\":", *r.clock_disagrees_ns);
    o.push_back('}');
  }
  o.append(",\"warnings\":[");
  for (size_t w = 0; w < r.warnings.size(); ++w) {
    if (w) o.push_back(',');
    AppendJsonString(r.warnings[w], &o);
  }
  o.append("],\"error\":");
  if (r.status.ok()) {
    o.append("null");
  } else {
    o.append("{\"message\":");
    AppendJsonString(StdView(r.status.message()), &o);
    o.append(",\"code\":");
    AppendJsonString(absl::StatusCodeToString(r.status.code()), &o);
    absl::StrAppend(&o, ",\"byte_offset\":", r.error_offset,
                    ",\"rejected\":", r.rejected ? "true" : "false", "}");
  }
  TimelineJson(&o, r);
  o.push_back('}');
}

void AppendOutputJson(const OutputRecord& out, std::string* op) {
  std::string& o = *op;
  o.push_back('{');
  Key(&o, "path");
  AppendJsonString(out.path, &o);
  o.append(",\"ranks\":[");
  for (size_t k = 0; k < out.ranks.size(); ++k) absl::StrAppend(&o, k ? "," : "", out.ranks[k]);
  o.append("],\"inputs\":[");
  for (size_t k = 0; k < out.inputs.size(); ++k) {
    if (k) o.push_back(',');
    AppendJsonString(out.inputs[k], &o);
  }
  absl::StrAppend(&o, "],\"events\":", out.events, ",\"metadata_added\":", out.metadata_added,
                  ",\"bytes\":", out.bytes, ",\"crc32\":", out.crc32,
                  ",\"reused\":", out.reused ? "true" : "false", ",\"error\":");
  if (out.error.empty()) o.append("null"); else AppendJsonString(out.error, &o);
  if (!out.parts.empty()) {
    o.append(",\"parts\":[");
    for (size_t k = 0; k < out.parts.size(); ++k) {
      const OutputPart& p = out.parts[k];
      o.append(k ? ",{\"path\":" : "{\"path\":");
      AppendJsonString(p.path, &o);
      absl::StrAppend(&o, ",\"events\":", p.events, ",\"bytes\":", p.bytes, ",\"crc32\":", p.crc32,
                      ",\"time_span_ns\":");
      if (p.has_span) absl::StrAppend(&o, "[", p.first_ts_ns, ",", p.last_ts_ns, "]");
      else o.append("null");
      o.append(",\"starts_ns\":");
      if (p.has_span) absl::StrAppend(&o, "[", p.first_ts_ns, ",", p.last_start_ns, "]");
      else o.append("null");
      absl::StrAppend(&o, ",\"flows_across_parts\":", p.flows_across_parts, ",\"spans_cut\":", p.spans_cut, "}");
    }
    o.push_back(']');
  }
  o.push_back('}');
}

std::string ManifestJson(const RunSummary& s) {
  std::string o;
  uint64_t read = 0, written = 0, bytes_in = 0, bytes_out = 0, listed = 0;
  formats::DropCounts dropped;
  int rejected = 0, with_errors = 0, skipped = 0;
  uint64_t pushed = 0, pulled = 0;
  for (const auto& r : s.inputs) {
    if (r.owner_shard >= 0) continue;  // another shard reports it
    ++listed;
    pushed += r.timeline.bytes_pushed;
    pulled += r.timeline.bytes_pulled;
    read += r.events_read;
    written += r.events_written;
    bytes_in += r.bytes;
    for (int k = 0; k < formats::kNumDropReasons; ++k) dropped.n[k] += r.dropped.n[k];
    rejected += r.rejected;
    skipped += r.skipped;
    with_errors += !r.status.ok();
  }
  for (const auto& out : s.outputs) bytes_out += out.bytes;
  o.append("{\n");
  Key(&o, "tracemill_version");
  AppendJsonString(kVersion, &o);
  o.append(",\n");
  Key(&o, "command_line");
  AppendJsonString(s.command_line, &o);
  o.append(",\n");
  Key(&o, "exit_code");
  absl::StrAppend(&o, s.exit_code, ",\n");
  Key(&o, "wall_seconds");
  absl::StrAppend(&o, absl::StrFormat("%.3f", s.wall_seconds), ",\n");
  Key(&o, "threads");
  absl::StrAppend(&o, s.threads, ",\n");
  Key(&o, "group_by");
  AppendJsonString(s.group_by, &o);
  o.append(",\n");
  Key(&o, "gpus_per_node");
  absl::StrAppend(&o, s.gpus_per_node, ",\n");
  if (s.cpu_only) {
    Key(&o, "cpu_only");
    o.append("true,\n");
  }
  Key(&o, "fingerprint");
  AppendJsonString(s.fingerprint, &o);
  o.append(",\n");
  if (s.shard.sharded()) {
    Key(&o, "shard");
    absl::StrAppend(&o, "{\"index\":", s.shard.index, ",\"count\":", s.shard.count, ",\"source\":");
    AppendJsonString(s.shard.source, &o);
    absl::StrAppend(&o, ",\"inputs_in_job\":", s.inputs_in_job, "},\n");
  }
  if (!s.shards.empty()) {
    Key(&o, "shards");
    o.push_back('[');
    for (size_t k = 0; k < s.shards.size(); ++k) {
      const ShardRun& r = s.shards[k];
      absl::StrAppend(&o, k ? ",\n" : "\n", "{\"index\":", r.index, ",\"exit_code\":", r.exit_code,
                      ",\"wall_seconds\":", absl::StrFormat("%.3f", r.wall_seconds),
                      ",\"threads\":", r.threads, ",\"source\":");
      AppendJsonString(r.source, &o);
      o.append(",\"command_line\":");
      AppendJsonString(r.command_line, &o);
      o.push_back('}');
    }
    o.append("\n],\n");
  }
  if (s.resumed) {
    Key(&o, "resume");
    absl::StrAppend(&o, "{\"outputs_reused\":", s.outputs_reused,
                    ",\"inputs_not_read\":", s.inputs_not_read, "},\n");
  }
  Key(&o, "time_span_us");
  if (s.has_span) {
    o.push_back('[');
    Micros(&o, s.first_ts_ns);
    o.push_back(',');
    Micros(&o, s.last_ts_ns);
    o.push_back(']');
  } else {
    o.append("null");
  }
  o.append(",\n");
  Key(&o, "totals");
  absl::StrAppend(&o, "{\"inputs\":", listed, ",\"inputs_rejected\":", rejected,
                  ",\"inputs_with_errors\":", with_errors, ",\"inputs_skipped\":", skipped, ",\"input_bytes\":", bytes_in,
                  ",\"events_read\":", read, ",\"events_written\":", written,
                  ",\"events_dropped\":", dropped.Total(), ",\"events_lost\":", dropped.Of(formats::DropKind::kLoss),
                  ",\"events_left_out\":", dropped.Of(formats::DropKind::kDesign), ",\"dropped_by_reason\":");
  Drops(dropped, &o);
  absl::StrAppend(&o, ",\"bytes_pushed\":", pushed, ",\"bytes_pulled\":", pulled);
  absl::StrAppend(&o, ",\"outputs\":", s.outputs.size(), ",\"output_bytes\":", bytes_out,
                  ",\"balanced\":", read == written + dropped.Total() ? "true" : "false", "},\n");
  Key(&o, "inputs");
  o.append("[\n");
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    if (i) o.append(",\n");
    AppendInputJson(s.inputs[i], s.shard.sharded(), &o);
  }
  o.append("\n],\n");
  Key(&o, "outputs");
  o.append("[\n");
  for (size_t i = 0; i < s.outputs.size(); ++i) {
    if (i) o.append(",\n");
    AppendOutputJson(s.outputs[i], &o);
  }
  o.append("\n]");
  if (!s.notices.empty()) {
    o.append(",\n\"notices\":[");
    for (size_t k = 0; k < s.notices.size(); ++k) {
      if (k) o.append(",\n");
      AppendJsonString(s.notices[k], &o);
    }
    o.push_back(']');
  }
  o.append(s.clocks_json);
  o.append(s.extra_members);
  o.append("\n}\n");
  return o;
}

absl::Status WriteManifest(const std::string& out_dir, const RunSummary& s) {
  auto file = formats::OutputFile::Create(out_dir + "/" + ManifestFileName(s.shard), /*gzip=*/false);
  if (!file.ok()) return file.status();
  std::string text = ManifestJson(s);
  if (absl::Status st = (*file)->Append(text); !st.ok()) return st;
  return (*file)->Commit();
}

// ---------------- reading manifests back ----------------

namespace {

namespace dom = simdjson::dom;
namespace od = simdjson::ondemand;

// Field readers: each returns false if the field is missing or of another type.
bool Str(dom::object o, const char* k, std::string* v) {
  std::string_view s;
  if (o[k].get_string().get(s)) return false;
  v->assign(s);
  return true;
}
bool U64(dom::object o, const char* k, uint64_t* v) { return !o[k].get_uint64().get(*v); }
bool I64(dom::object o, const char* k, int64_t* v) { return !o[k].get_int64().get(*v); }
bool Bool(dom::object o, const char* k, bool* v) { return !o[k].get_bool().get(*v); }
bool OptI64(dom::object o, const char* k, std::optional<int64_t>* v) {
  dom::element e;
  if (o[k].get(e)) return false;
  if (e.is_null()) {
    v->reset();
    return true;
  }
  int64_t x;
  if (e.get_int64().get(x)) return false;
  *v = x;
  return true;
}

absl::StatusCode CodeFromName(std::string_view name) {
  for (int c = 0; c <= 16; ++c) {
    auto code = static_cast<absl::StatusCode>(c);
    if (StdView(absl::StatusCodeToString(code)) == name) return code;
  }
  return absl::StatusCode::kUnknown;
}

absl::Status Bad(std::string_view what) {
  return absl::DataLossError(absl::StrCat("manifest: missing or malformed ", AbslView(what)));
}

// Micros (as written by Micros()) back to ns: exact for integer microseconds;
// a fraction goes through a double here (sub-microsecond digits of
// epoch-scale values round, by up to ~128 ns), and ExactTimes then reads
// every such time again from its text.
bool MicrosElement(dom::element e, int64_t* ns) {
  int64_t i;
  if (!e.get_int64().get(i)) {
    *ns = i * 1000;
    return true;
  }
  double d;
  if (e.get_double().get(d)) return false;
  *ns = static_cast<int64_t>(std::llround(d * 1000.0));
  return true;
}

bool ParseSteps(dom::element e, std::vector<formats::StepSpan>* out) {
  dom::array a;
  if (e.get_array().get(a)) return false;
  for (dom::element st : a) {
    dom::array v;
    if (st.get_array().get(v) || v.size() < 3) return false;
    formats::StepSpan span;
    if (v.at(0).get_int64().get(span.step) || !MicrosElement(v.at(1), &span.start_ns) ||
        !MicrosElement(v.at(2), &span.end_ns))
      return false;
    if (v.size() >= 5) {
      int64_t sv, tv;
      if (v.at(3).get_int64().get(sv) || v.at(4).get_int64().get(tv)) return false;
      span.survivors = static_cast<int32_t>(sv);
      span.total = static_cast<int32_t>(tv);
    }
    out->push_back(span);
  }
  return true;
}

// GpuUtilizationOf: one entry of `gpu_utilization` back into sums (mean x
// samples; the means were written with 4 decimals).
formats::GpuUtilization GpuUtilizationOf(dom::element e) {
  formats::GpuUtilization g;
  int64_t gpu = 0;
  uint64_t samples = 0;
  double v = 0;
  if (!e["gpu"].get_int64().get(gpu)) g.gpu = gpu;
  if (!e["samples"].get_uint64().get(samples)) g.samples = samples;
  const double n = static_cast<double>(g.samples);
  if (!e["gpu_util_mean"].get_double().get(v)) g.gputl_sum = v * n;
  if (!e["gpu_util_max"].get_double().get(v)) g.gputl_max = v;
  if (!e["sm_active_mean"].get_double().get(v)) g.smact_sum = v * n;
  if (!e["sm_occupancy_mean"].get_double().get(v)) g.smocc_sum = v * n;
  if (!e["dram_active_mean"].get_double().get(v)) g.drama_sum = v * n;
  if (!e["tensor_active_mean"].get_double().get(v)) g.tenso_sum = v * n;
  return g;
}

// OptStride: `steps_stride` (a power of two; absent: 1) into `*stride`.
void OptStride(dom::object o, int64_t* stride) {
  int64_t v = 0;
  if (!o["steps_stride"].get_int64().get(v) && v > 1 && (v & (v - 1)) == 0) *stride = v;
}

// The report's part of an input (TimelineJson), read back so that merged
// manifests keep it.
void ParseTimeline(dom::object o, InputRecord* r) {
  formats::Timeline& tl = r->timeline;
  dom::element e;
  if (!o["steps"].get(e)) ParseSteps(e, &tl.steps);
  OptStride(o, &tl.steps_stride);
  dom::array gpus;
  if (!o["gpu_utilization"].get_array().get(gpus))
    for (dom::element ge : gpus) tl.gpus.push_back(GpuUtilizationOf(ge));
  U64(o, "steps_dropped", &tl.steps_dropped);
  U64(o, "bytes_pushed", &tl.bytes_pushed);
  U64(o, "bytes_pulled", &tl.bytes_pulled);
  dom::array tracks;
  if (o["tracks"].get_array().get(tracks)) return;
  for (dom::element te : tracks) {
    dom::object to;
    if (te.get_object().get(to)) continue;
    formats::TrackTimeline t;
    Str(to, "name", &t.name);
    OptI64(to, "rank", &t.rank);
    dom::element se;
    if (!to["steps"].get(se)) ParseSteps(se, &t.steps);
    OptStride(to, &t.steps_stride);
    dom::element fe;
    if (!to["failed_at_us"].get(fe) && !fe.is_null()) {
      int64_t ns;
      if (MicrosElement(fe, &ns)) t.failed_at_ns = ns;
      Str(to, "failure", &t.failure);
    }
    tl.tracks.push_back(std::move(t));
  }
}

absl::Status ParseInput(dom::object o, InputRecord* r) {
  if (!Str(o, "path", &r->path)) return Bad("input path");
  int64_t v;
  if (I64(o, "index", &v)) r->index = v;
  if (I64(o, "owner_shard", &v)) r->owner_shard = static_cast<int>(v);
  if (!U64(o, "bytes", &r->bytes) || !U64(o, "decoded_bytes", &r->decoded_bytes) ||
      !Str(o, "format", &r->format) || !OptI64(o, "rank", &r->rank) ||
      !Str(o, "rank_source", &r->rank_source) || !OptI64(o, "world_size", &r->world_size) ||
      !Str(o, "label", &r->label) || !Bool(o, "skipped", &r->skipped) ||
      !U64(o, "events_read", &r->events_read) || !U64(o, "events_written", &r->events_written))
    return Bad(absl::StrCat("fields of input ", r->path));
  dom::element out;
  if (!o["output"].get(out) && !out.is_null()) {
    std::string_view s;
    if (out.get_string().get(s)) return Bad("input output");
    r->output.assign(s);
  }
  dom::object drops;
  if (o["dropped_by_reason"].get_object().get(drops)) return Bad("dropped_by_reason");
  for (auto [key, value] : drops) {
    uint64_t n;
    if (value.get_uint64().get(n)) return Bad("dropped_by_reason");
    for (int k = 0; k < formats::kNumDropReasons; ++k)
      if (formats::DropReasonKey(static_cast<formats::DropReason>(k)) == key) r->dropped.n[k] = n;
  }
  dom::element span;
  if (!o["time_span_ns"].get(span) && !span.is_null()) {
    dom::array a;
    if (span.get_array().get(a) || a.size() != 2 || a.at(0).get_int64().get(r->first_ts_ns) ||
        a.at(1).get_int64().get(r->last_ts_ns))
      return Bad("time_span_ns");
    r->has_span = true;
  }
  Bool(o, "reused", &r->reused);
  dom::object clock;
  if (!o["clock"].get_object().get(clock)) {
    r->clock_decided = true;
    Str(clock, "domain", &r->clock_domain);
    I64(clock, "offset_ns", &r->clock_offset_ns);
    Bool(clock, "applied", &r->clock_applied);
    Str(clock, "note", &r->clock_note);
    if (int64_t d; I64(clock, "disagrees_ns", &d)) r->clock_disagrees_ns = d;
  }
  dom::array warnings;
  if (o["warnings"].get_array().get(warnings)) return Bad("warnings");
  for (dom::element w : warnings) {
    std::string_view s;
    if (w.get_string().get(s)) return Bad("warnings");
    r->warnings.emplace_back(s);
  }
  dom::element err;
  if (o["error"].get(err)) return Bad("error");
  if (!err.is_null()) {
    dom::object eo;
    std::string message, code;
    if (err.get_object().get(eo) || !Str(eo, "message", &message) || !Str(eo, "code", &code) ||
        !U64(eo, "byte_offset", &r->error_offset) || !Bool(eo, "rejected", &r->rejected))
      return Bad("error");
    absl::StatusCode c = CodeFromName(code);
    if (c == absl::StatusCode::kOk) c = absl::StatusCode::kUnknown;
    r->status = absl::Status(c, message);
  }
  ParseTimeline(o, r);
  return absl::OkStatus();
}

absl::Status ParseOutput(dom::object o, OutputRecord* r) {
  uint64_t crc = 0;
  if (!Str(o, "path", &r->path) || !U64(o, "events", &r->events) ||
      !U64(o, "metadata_added", &r->metadata_added) || !U64(o, "bytes", &r->bytes) ||
      !U64(o, "crc32", &crc))
    return Bad("output fields");
  r->crc32 = static_cast<uint32_t>(crc);
  Bool(o, "reused", &r->reused);
  dom::array ranks, inputs;
  if (o["ranks"].get_array().get(ranks) || o["inputs"].get_array().get(inputs)) return Bad("output lists");
  for (dom::element e : ranks) {
    int64_t v;
    if (e.get_int64().get(v)) return Bad("output ranks");
    r->ranks.push_back(v);
  }
  for (dom::element e : inputs) {
    std::string_view s;
    if (e.get_string().get(s)) return Bad("output inputs");
    r->inputs.emplace_back(s);
  }
  dom::element err;
  if (!o["error"].get(err) && !err.is_null()) {
    std::string_view s;
    if (err.get_string().get(s)) return Bad("output error");
    r->error.assign(s);
  }
  dom::array parts;
  if (!o["parts"].get_array().get(parts)) {
    for (dom::element e : parts) {
      dom::object po;
      OutputPart p;
      uint64_t pcrc = 0;
      if (e.get_object().get(po) || !Str(po, "path", &p.path) || !U64(po, "events", &p.events) ||
          !U64(po, "bytes", &p.bytes) || !U64(po, "crc32", &pcrc))
        return Bad("output parts");
      p.crc32 = static_cast<uint32_t>(pcrc);
      dom::array span;
      if (!po["time_span_ns"].get_array().get(span) && span.size() == 2 && !span.at(0).get_int64().get(p.first_ts_ns) &&
          !span.at(1).get_int64().get(p.last_ts_ns))
        p.has_span = true;
      // Manifests before `starts_ns` was added: the latest end stands in.
      p.last_start_ns = p.last_ts_ns;
      if (!po["starts_ns"].get_array().get(span) && span.size() == 2 && span.at(1).get_int64().get(p.last_start_ns))
        p.last_start_ns = p.last_ts_ns;
      U64(po, "flows_across_parts", &p.flows_across_parts);
      U64(po, "spans_cut", &p.spans_cut);
      r->parts.push_back(std::move(p));
    }
  }
  return absl::OkStatus();
}

// ExactSteps: a `steps` array ([step, start_us, end_us(, survivors,
// total)]...) read with On-Demand, each time from its number's text
// (ParseMicrosToNanos, exact); nullopt if it is not as ManifestJson writes
// it.
std::optional<std::vector<formats::StepSpan>> ExactSteps(od::value v) {
  od::array a;
  if (v.get_array().get(a)) return std::nullopt;
  std::vector<formats::StepSpan> steps;
  for (auto item : a) {
    od::array fields;
    if (item.get_array().get(fields)) return std::nullopt;
    formats::StepSpan span;
    size_t k = 0;
    for (auto f : fields) {
      od::value x;
      if (f.get(x)) return std::nullopt;
      int64_t n = 0;
      if (k == 1 || k == 2) {
        auto ns = formats::ParseMicrosToNanos(x.raw_json_token());
        if (!ns) return std::nullopt;
        (k == 1 ? span.start_ns : span.end_ns) = *ns;
      } else if (x.get_int64().get(n)) {
        return std::nullopt;
      } else if (k == 0) {
        span.step = n;
      } else if (k == 3) {
        span.survivors = static_cast<int32_t>(n);
      } else if (k == 4) {
        span.total = static_cast<int32_t>(n);
      }
      ++k;
    }
    if (k < 3) return std::nullopt;
    steps.push_back(span);
  }
  return steps;
}

// ExactTracks: the steps and failed_at_us of each of `tracks` again, exactly.
void ExactTracks(od::value v, std::vector<formats::TrackTimeline>* tracks) {
  od::array a;
  if (v.get_array().get(a)) return;
  size_t t = 0;
  for (auto item : a) {
    od::object o;
    if (t >= tracks->size() || item.get_object().get(o)) return;
    for (auto field : o) {
      std::string_view key;
      od::value x;
      if (field.unescaped_key().get(key) || field.value().get(x)) return;
      if (key == "steps") {
        if (auto steps = ExactSteps(x)) (*tracks)[t].steps = std::move(*steps);
      } else if (key == "failed_at_us" && (*tracks)[t].failed_at_ns) {
        if (auto ns = formats::ParseMicrosToNanos(x.raw_json_token())) (*tracks)[t].failed_at_ns = *ns;
      }
    }
    ++t;
  }
}

// ExactTimes reads the step times (and failed_at_us) of every input of
// manifest `text` again from their text: the DOM hands numbers out as
// doubles, and a time with a fraction of a µs at epoch scale does not fit
// one (it came back up to ~128 ns off after --resume or `manifest merge`).
// What does not read back as written keeps the DOM's value.
void ExactTimes(const simdjson::padded_string& text, RunSummary* s) {
  od::parser parser;
  od::document doc;
  od::object top;
  if (parser.iterate(text).get(doc) || doc.get_object().get(top)) return;
  for (auto field : top) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return;
    if (key != "inputs") continue;
    od::array inputs;
    if (field.value().get_array().get(inputs)) return;
    size_t i = 0;
    for (auto item : inputs) {
      od::object o;
      if (i >= s->inputs.size() || item.get_object().get(o)) return;
      formats::Timeline& tl = s->inputs[i].timeline;
      for (auto f : o) {
        std::string_view k;
        od::value x;
        if (f.unescaped_key().get(k) || f.value().get(x)) return;
        if (k == "steps") {
          if (auto steps = ExactSteps(x)) tl.steps = std::move(*steps);
        } else if (k == "tracks") {
          ExactTracks(x, &tl.tracks);
        }
      }
      ++i;
    }
    return;
  }
}

}  // namespace

absl::StatusOr<RunSummary> ParseManifest(std::string_view json) {
  dom::parser parser;
  simdjson::padded_string text(json);
  dom::object top;
  if (parser.parse(text).get_object().get(top)) return absl::DataLossError("manifest: not a JSON object");
  RunSummary s;
  int64_t exit_code = 0, threads = 0, gpn = 0;
  if (!I64(top, "exit_code", &exit_code)) return Bad("exit_code");
  s.exit_code = static_cast<int>(exit_code);
  Str(top, "command_line", &s.command_line);
  if (top["wall_seconds"].get_double().get(s.wall_seconds)) s.wall_seconds = 0;
  if (I64(top, "threads", &threads)) s.threads = static_cast<int>(threads);
  if (!Str(top, "group_by", &s.group_by)) return Bad("group_by");
  if (I64(top, "gpus_per_node", &gpn)) s.gpus_per_node = static_cast<int>(gpn);
  if (!Bool(top, "cpu_only", &s.cpu_only)) s.cpu_only = false;
  Str(top, "fingerprint", &s.fingerprint);
  dom::object shard;
  if (!top["shard"].get_object().get(shard)) {
    int64_t index = 0, count = 1;
    if (!I64(shard, "index", &index) || !I64(shard, "count", &count)) return Bad("shard");
    s.shard.index = static_cast<int>(index);
    s.shard.count = static_cast<int>(count);
    Str(shard, "source", &s.shard.source);
    U64(shard, "inputs_in_job", &s.inputs_in_job);
  }
  dom::element clocks;
  if (!top["clocks"].get(clocks)) s.clocks_json = absl::StrCat(",\n\"clocks\":", simdjson::to_string(clocks));
  dom::array inputs, outputs;
  if (top["inputs"].get_array().get(inputs)) return Bad("inputs");
  if (top["outputs"].get_array().get(outputs)) return Bad("outputs");
  for (dom::element e : inputs) {
    dom::object o;
    if (e.get_object().get(o)) return Bad("input");
    InputRecord r;
    TM_RETURN_IF_ERROR(ParseInput(o, &r));
    if (r.owner_shard < 0 && r.has_span) {
      s.first_ts_ns = s.has_span ? std::min(s.first_ts_ns, r.first_ts_ns) : r.first_ts_ns;
      s.last_ts_ns = s.has_span ? std::max(s.last_ts_ns, r.last_ts_ns) : r.last_ts_ns;
      s.has_span = true;
    }
    s.inputs.push_back(std::move(r));
  }
  for (dom::element e : outputs) {
    dom::object o;
    if (e.get_object().get(o)) return Bad("output");
    OutputRecord r;
    TM_RETURN_IF_ERROR(ParseOutput(o, &r));
    s.outputs.push_back(std::move(r));
  }
  ExactTimes(text, &s);
  return s;
}

absl::Status ParseRecordsJson(std::string_view json, OutputRecord* out,
                              std::vector<InputRecord>* inputs) {
  dom::parser parser;
  simdjson::padded_string text(json);
  dom::object top, o;
  if (parser.parse(text).get_object().get(top)) return absl::DataLossError("journal: not a JSON object");
  if (top["output"].get_object().get(o)) return Bad("journal output");
  TM_RETURN_IF_ERROR(ParseOutput(o, out));
  dom::array a;
  if (top["inputs"].get_array().get(a)) return Bad("journal inputs");
  for (dom::element e : a) {
    dom::object io;
    if (e.get_object().get(io)) return Bad("journal input");
    InputRecord r;
    TM_RETURN_IF_ERROR(ParseInput(io, &r));
    inputs->push_back(std::move(r));
  }
  return absl::OkStatus();
}

}  // namespace tracemill::pipeline
