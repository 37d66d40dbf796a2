#include "pipeline/manifest.h"

#include <charconv>

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

// Steps as compact arrays: [step, start_us, end_us] or, for rounds with
// survivors, [step, start_us, end_us, survivors, total].
void Steps(std::string* o, const std::vector<formats::StepSpan>& steps) {
  o->push_back('[');
  for (size_t k = 0; k < steps.size(); ++k) {
    const formats::StepSpan& st = steps[k];
    absl::StrAppend(o, k ? ",[" : "[", st.step, ",");
    Micros(o, st.start_ns);
    o->push_back(',');
    Micros(o, st.end_ns);
    if (st.survivors >= 0 || st.total >= 0) absl::StrAppend(o, ",", st.survivors, ",", st.total);
    o->push_back(']');
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
  Steps(o, tl.steps);
  absl::StrAppend(o, ",\"steps_dropped\":", tl.steps_dropped, ",\"bytes_pushed\":", tl.bytes_pushed,
                  ",\"bytes_pulled\":", tl.bytes_pulled, ",\"tracks\":[");
  for (size_t t = 0; t < tl.tracks.size(); ++t) {
    const formats::TrackTimeline& tr = tl.tracks[t];
    o->append(t ? ",{" : "{");
    Key(o, "name");
    AppendJsonString(tr.name, o);
    o->append(",\"rank\":");
    if (tr.rank) absl::StrAppend(o, *tr.rank); else o->append("null");
    o->append(",\"steps\":");
    Steps(o, tr.steps);
    o->append(",\"failed_at_us\":");
    if (tr.failed_at_ns) Micros(o, *tr.failed_at_ns); else o->append("null");
    o->append(",\"failure\":");
    if (tr.failed_at_ns) AppendJsonString(tr.failure, o); else o->append("null");
    o->push_back('}');
  }
  o->push_back(']');
}

}  // namespace

std::string ManifestJson(const RunSummary& s) {
  std::string o;
  uint64_t read = 0, written = 0, bytes_in = 0, bytes_out = 0, out_events = 0;
  formats::DropCounts dropped;
  int rejected = 0, with_errors = 0, skipped = 0;
  uint64_t pushed = 0, pulled = 0;
  for (const auto& r : s.inputs) {
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
  for (const auto& out : s.outputs) {
    bytes_out += out.bytes;
    out_events += out.events;
  }
  auto drops = [&](const formats::DropCounts& d) {
    o.push_back('{');
    bool first = true;
    for (int k = 0; k < formats::kNumDropReasons; ++k) {
      if (!d.n[k]) continue;
      if (!first) o.push_back(',');
      first = false;
      Key(&o, formats::DropReasonKey(static_cast<formats::DropReason>(k)));
      absl::StrAppend(&o, d.n[k]);
    }
    o.push_back('}');
  };
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
  absl::StrAppend(&o, "{\"inputs\":", s.inputs.size(), ",\"inputs_rejected\":", rejected,
                  ",\"inputs_with_errors\":", with_errors, ",\"inputs_skipped\":", skipped, ",\"input_bytes\":", bytes_in,
                  ",\"events_read\":", read, ",\"events_written\":", written,
                  ",\"events_dropped\":", dropped.Total(), ",\"dropped_by_reason\":");
  drops(dropped);
  absl::StrAppend(&o, ",\"bytes_pushed\":", pushed, ",\"bytes_pulled\":", pulled);
  absl::StrAppend(&o, ",\"outputs\":", s.outputs.size(), ",\"output_bytes\":", bytes_out,
                  ",\"balanced\":", read == written + dropped.Total() ? "true" : "false", "},\n");
  Key(&o, "inputs");
  o.append("[\n");
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    const InputRecord& r = s.inputs[i];
    o.append(i ? ",\n{" : "{");
    Key(&o, "path");
    AppendJsonString(r.path, &o);
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
    drops(r.dropped);
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
  o.append("\n],\n");
  Key(&o, "outputs");
  o.append("[\n");
  for (size_t i = 0; i < s.outputs.size(); ++i) {
    const OutputRecord& out = s.outputs[i];
    o.append(i ? ",\n{" : "{");
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
                    ",\"bytes\":", out.bytes, ",\"error\":");
    if (out.error.empty()) o.append("null"); else AppendJsonString(out.error, &o);
    o.push_back('}');
  }
  o.append("\n]\n}\n");
  return o;
}

absl::Status WriteManifest(const std::string& out_dir, const RunSummary& s) {
  auto file = formats::OutputFile::Create(out_dir + "/manifest.json", /*gzip=*/false);
  if (!file.ok()) return file.status();
  std::string text = ManifestJson(s);
  if (absl::Status st = (*file)->Append(text); !st.ok()) return st;
  return (*file)->Commit();
}

}  // namespace tracemill::pipeline
