#include "report/run_model.h"

#include <simdjson.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "formats/common/read_file.h"
#include "formats/common/status_macros.h"
#include "formats/common/ts_text.h"

namespace tracemill::report {
namespace {

namespace od = simdjson::ondemand;

// The manifest is ours and small (KBs to a few MBs), so this reader uses
// simdjson's exception interface for brevity; ParseManifest catches at its
// boundary and nothing escapes.
struct BadManifest {
  std::string what;
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

std::string Str(od::value v) {
  std::string_view s = v.get_string();
  return std::string(s);
}

bool IsNull(od::value& v) { return v.is_null(); }

std::optional<int64_t> OptInt(od::value v) {
  if (IsNull(v)) return std::nullopt;
  return int64_t(v.get_int64());
}

// A time in exact decimal microseconds -> ns, held within +-2^62 ns (where
// tracemill keeps every time it writes; ts_text.h), so that differences of
// two times, which the report draws, fit in int64 whatever the manifest says.
int64_t MicrosToNs(od::value v) {
  std::string_view raw = Trim(v.raw_json_token());
  auto ns = formats::ParseMicrosToNanos(raw);
  if (!ns) throw BadManifest{absl::StrCat("bad time value ", AbslView(raw))};
  return std::clamp(*ns, -formats::kMaxAbsTimeNs, formats::kMaxAbsTimeNs);
}

std::optional<std::pair<int64_t, int64_t>> Span(od::value v) {
  if (IsNull(v)) return std::nullopt;
  std::pair<int64_t, int64_t> span{0, 0};
  int k = 0;
  for (od::value x : v.get_array()) {
    if (k == 0) span.first = MicrosToNs(x);
    if (k == 1) span.second = MicrosToNs(x);
    ++k;
  }
  if (k != 2) throw BadManifest{"a span is not [start, end]"};
  return span;
}

std::vector<std::pair<std::string, uint64_t>> Counts(od::value v) {
  std::vector<std::pair<std::string, uint64_t>> out;
  for (auto field : v.get_object()) {
    std::string_view key = field.unescaped_key();
    std::string k(key);
    out.emplace_back(std::move(k), uint64_t(field.value().get_uint64()));
  }
  return out;
}

std::vector<formats::StepSpan> Steps(od::value v) {
  std::vector<formats::StepSpan> out;
  for (od::value item : v.get_array()) {
    formats::StepSpan s;
    int k = 0;
    for (od::value x : item.get_array()) {
      switch (k++) {
        case 0: s.step = x.get_int64(); break;
        case 1: s.start_ns = MicrosToNs(x); break;
        case 2: s.end_ns = MicrosToNs(x); break;
        case 3: s.survivors = static_cast<int32_t>(int64_t(x.get_int64())); break;
        case 4: s.total = static_cast<int32_t>(int64_t(x.get_int64())); break;
        default: break;
      }
    }
    if (k < 3) throw BadManifest{"a step is not [step, start_us, end_us]"};
    out.push_back(s);
  }
  return out;
}

formats::TrackTimeline Track(od::value v) {
  formats::TrackTimeline t;
  for (auto field : v.get_object()) {
    std::string_view key = field.unescaped_key();
    od::value x = field.value();
    if (key == "name") t.name = Str(x);
    else if (key == "rank") t.rank = OptInt(x);
    else if (key == "steps") t.steps = Steps(x);
    else if (key == "steps_stride") t.steps_stride = x.get_int64();
    else if (key == "failed_at_us") { if (!IsNull(x)) t.failed_at_ns = MicrosToNs(x); }
    else if (key == "failure") { if (!IsNull(x)) t.failure = Str(x); }
  }
  return t;
}

InputClock Clock(od::value v) {
  InputClock c;
  for (auto field : v.get_object()) {
    std::string_view key = field.unescaped_key();
    od::value x = field.value();
    if (key == "domain") { if (!IsNull(x)) c.domain = Str(x); }
    else if (key == "offset_ns") c.offset_ns = x.get_int64();
    else if (key == "applied") c.applied = x.get_bool();
    else if (key == "note") c.note = Str(x);
    else if (key == "disagrees_ns") c.disagrees_ns = int64_t(x.get_int64());
  }
  return c;
}

ClockDomainModel ClockDomain(od::value v) {
  ClockDomainModel d;
  for (auto field : v.get_object()) {
    std::string_view key = field.unescaped_key();
    od::value x = field.value();
    if (key == "domain") d.domain = Str(x);
    else if (key == "probe_rank") d.probe_rank = OptInt(x);
    else if (key == "probe") d.probe = Str(x);
    else if (key == "collectives") d.collectives = x.get_uint64();
    else if (key == "estimated") d.estimated = x.get_bool();
    else if (key == "confident") d.confident = x.get_bool();
    else if (key == "applied") d.applied = x.get_bool();
    else if (key == "offset_ns") d.offset_ns = x.get_int64();
    else if (key == "matched") d.matched = x.get_uint64();
    else if (key == "spread_ns") d.spread_ns = x.get_int64();
    else if (key == "via") { if (!IsNull(x)) d.via = Str(x); }
    else if (key == "note") d.note = Str(x);
  }
  return d;
}

ClocksModel Clocks(od::value v) {
  ClocksModel c;
  c.present = true;
  for (auto field : v.get_object()) {
    std::string_view key = field.unescaped_key();
    od::value x = field.value();
    if (key == "mode") c.mode = Str(x);
    else if (key == "applied") c.applied = x.get_bool();
    else if (key == "reference") { if (!IsNull(x)) c.reference = Str(x); }
    else if (key == "domains") {
      for (od::value d : x.get_array()) c.domains.push_back(ClockDomain(d));
    } else if (key == "warnings") {
      for (od::value w : x.get_array()) c.warnings.push_back(Str(w));
    }
  }
  return c;
}

// The rows of the tables member's report summaries (analysis::ReportTablesJson).
std::string TextOrEmpty(od::value v) { return IsNull(v) ? std::string() : Str(v); }

TablesModel::System SystemRow(od::value v) {
  TablesModel::System s;
  for (auto f : v.get_object()) {
    std::string_view k = f.unescaped_key();
    od::value y = f.value();
    if (k == "node") s.node = TextOrEmpty(y);
    else if (k == "dimension") s.dimension = TextOrEmpty(y);
    else if (k == "samples") s.samples = y.get_int64();
    else if (k == "mean") s.mean = y.get_double();
    else if (k == "max") s.max = y.get_double();
  }
  return s;
}

TablesModel::Phase PhaseRow(od::value v) {
  TablesModel::Phase p;
  for (auto f : v.get_object()) {
    std::string_view k = f.unescaped_key();
    od::value y = f.value();
    if (k == "node") p.node = TextOrEmpty(y);
    else if (k == "phase") p.phase = TextOrEmpty(y);
    else if (k == "time_ns") p.time_ns = y.get_int64();
    else if (k == "steps") p.steps = y.get_int64();
  }
  return p;
}

TablesModel::Loader LoaderRow(od::value v) {
  TablesModel::Loader l;
  for (auto f : v.get_object()) {
    std::string_view k = f.unescaped_key();
    od::value y = f.value();
    if (k == "node") l.node = TextOrEmpty(y);
    else if (k == "spans") l.spans = y.get_int64();
    else if (k == "time_ns") l.time_ns = IsNull(y) ? 0 : int64_t{y.get_int64()};
    else if (k == "longest_ns") l.longest_ns = IsNull(y) ? 0 : int64_t{y.get_int64()};
  }
  return l;
}

// GpuRow: one `gpu_utilization` entry (pipeline/output/manifest.cc) as sums.
formats::GpuUtilization GpuRow(od::value v) {
  formats::GpuUtilization g;
  double mean[5] = {};
  for (auto f : v.get_object()) {
    std::string_view k = f.unescaped_key();
    od::value y = f.value();
    if (k == "gpu") g.gpu = y.get_int64();
    else if (k == "samples") g.samples = y.get_uint64();
    else if (k == "gpu_util_mean") mean[0] = y.get_double();
    else if (k == "gpu_util_max") g.gputl_max = y.get_double();
    else if (k == "sm_active_mean") mean[1] = y.get_double();
    else if (k == "sm_occupancy_mean") mean[2] = y.get_double();
    else if (k == "dram_active_mean") mean[3] = y.get_double();
    else if (k == "tensor_active_mean") mean[4] = y.get_double();
  }
  const double n = static_cast<double>(g.samples);
  g.gputl_sum = mean[0] * n;
  g.smact_sum = mean[1] * n;
  g.smocc_sum = mean[2] * n;
  g.drama_sum = mean[3] * n;
  g.tenso_sum = mean[4] * n;
  return g;
}

// CollectivesOf: the `tables.collectives` member (analysis/tables.h's
// ReportTablesJson).
int64_t IntOr0(od::value y) { return y.is_null() ? 0 : int64_t{y.get_int64()}; }
std::optional<double> OptDouble(od::value y) {
  if (y.is_null()) return std::nullopt;
  return double{y.get_double()};
}

TablesModel::Collectives CollectivesOf(od::value v) {
  TablesModel::Collectives c;
  c.present = true;
  for (auto field : v.get_object()) {
    std::string_view key = field.unescaped_key();
    od::value x = field.value();
    for (od::value r : x.get_array()) {
      if (key == "totals") {
        c.instances = r["instances"].get_int64();
        c.shared = r["shared"].get_int64();
        c.unaligned = r["unaligned"].get_int64();
        continue;
      }
      if (key == "ranks") {
        auto& k = c.ranks.emplace_back();
        for (auto f : r.get_object()) {
          std::string_view n = f.unescaped_key();
          od::value y = f.value();
          if (n == "rank") k.rank = OptInt(y);
          else if (n == "instances") k.instances = IntOr0(y);
          else if (n == "times_last") k.times_last = IntOr0(y);
          else if (n == "caused_ns") k.caused_ns = IntOr0(y);
          else if (n == "waited_ns") k.waited_ns = IntOr0(y);
        }
      } else if (key == "worst") {
        auto& i = c.worst.emplace_back();
        for (auto f : r.get_object()) {
          std::string_view n = f.unescaped_key();
          od::value y = f.value();
          if (n == "instance") i.instance = IntOr0(y);
          else if (n == "collective") i.collective = TextOrEmpty(y);
          else if (n == "process_group") i.process_group = TextOrEmpty(y);
          else if (n == "seq") i.seq = OptInt(y);
          else if (n == "ranks") i.ranks = IntOr0(y);
          else if (n == "first_arrival_ns") i.first_arrival_ns = IntOr0(y);
          else if (n == "last_rank") i.last_rank = OptInt(y);
          else if (n == "skew_ns") i.skew_ns = IntOr0(y);
          else if (n == "latency_ns") i.latency_ns = IntOr0(y);
          else if (n == "aligned") i.aligned = IntOr0(y) != 0;
        }
      } else if (key == "skew") {
        auto& b = c.skew.emplace_back();
        for (auto f : r.get_object()) {
          std::string_view n = f.unescaped_key();
          od::value y = f.value();
          if (n == "start_ns") b.start_ns = IntOr0(y);
          else if (n == "instances") b.instances = IntOr0(y);
          else if (n == "mean_skew_ns") b.mean_skew_ns = IntOr0(y);
          else if (n == "max_skew_ns") b.max_skew_ns = IntOr0(y);
        }
      } else if (key == "steps") {
        auto& s = c.steps.emplace_back();
        for (auto f : r.get_object()) {
          std::string_view n = f.unescaped_key();
          od::value y = f.value();
          if (n == "step") s.step = IntOr0(y);
          else if (n == "rank") s.rank = IntOr0(y);
          else if (n == "late_ns") s.late_ns = IntOr0(y);
          else if (n == "times_last") s.times_last = IntOr0(y);
          else if (n == "instances") s.instances = IntOr0(y);
        }
      } else if (key == "bandwidth") {
        auto& b = c.bandwidth.emplace_back();
        for (auto f : r.get_object()) {
          std::string_view n = f.unescaped_key();
          od::value y = f.value();
          if (n == "collective") b.collective = TextOrEmpty(y);
          else if (n == "size") b.size = TextOrEmpty(y);
          else if (n == "instances") b.instances = IntOr0(y);
          else if (n == "mean_latency_ns") b.mean_latency_ns = IntOr0(y);
          else if (n == "algbw_gbps") b.algbw_gbps = OptDouble(y);
          else if (n == "busbw_gbps") b.busbw_gbps = OptDouble(y);
        }
      }
    }
  }
  return c;
}

TablesModel Tables(od::value v) {
  TablesModel t;
  t.present = true;
  for (auto field : v.get_object()) {
    std::string_view key = field.unescaped_key();
    od::value x = field.value();
    if (key == "path") t.path = Str(x);
    else if (key == "mode") t.mode = Str(x);
    else if (key == "error") t.error = Str(x);
    else if (key == "temporal_breakdown") {
      for (od::value r : x.get_array()) {
        TablesModel::Breakdown b;
        for (auto f : r.get_object()) {
          std::string_view k = f.unescaped_key();
          od::value y = f.value();
          if (k == "input") b.input = y.get_int64();
          else if (k == "rank") b.rank = OptInt(y);
          else if (k == "kernel_ns") b.kernel_ns = y.get_int64();
          else if (k == "compute_ns") b.compute_ns = y.get_int64();
          else if (k == "non_compute_ns") b.non_compute_ns = y.get_int64();
          else if (k == "idle_ns") b.idle_ns = y.get_int64();
        }
        t.temporal_breakdown.push_back(b);
      }
    } else if (key == "system") {
      for (od::value r : x.get_array()) t.system.push_back(SystemRow(r));
    } else if (key == "phases") {
      for (od::value r : x.get_array()) t.phases.push_back(PhaseRow(r));
    } else if (key == "dataloader") {
      for (od::value r : x.get_array()) t.dataloader.push_back(LoaderRow(r));
    } else if (key == "collectives") {
      t.collectives = CollectivesOf(x);
    }
  }
  return t;
}

InputModel Input(od::value v) {
  InputModel in;
  for (auto field : v.get_object()) {
    std::string_view key = field.unescaped_key();
    od::value x = field.value();
    if (key == "path") in.path = Str(x);
    else if (key == "bytes") in.bytes = x.get_uint64();
    else if (key == "decoded_bytes") in.decoded_bytes = x.get_uint64();
    else if (key == "format") in.format = Str(x);
    else if (key == "rank") in.rank = OptInt(x);
    else if (key == "rank_source") in.rank_source = Str(x);
    else if (key == "world_size") in.world_size = OptInt(x);
    else if (key == "label") in.label = Str(x);
    else if (key == "skipped") in.skipped = x.get_bool();
    else if (key == "output") { if (!IsNull(x)) in.output = Str(x); }
    else if (key == "events_read") in.events_read = x.get_uint64();
    else if (key == "events_written") in.events_written = x.get_uint64();
    else if (key == "events_dropped") in.events_dropped = x.get_uint64();
    else if (key == "dropped_by_reason") in.dropped_by_reason = Counts(x);
    else if (key == "warnings") {
      for (od::value w : x.get_array()) in.warnings.push_back(Str(w));
    } else if (key == "error") {
      if (IsNull(x)) continue;
      in.has_error = true;
      for (auto ef : x.get_object()) {
        std::string_view ek = ef.unescaped_key();
        od::value ev = ef.value();
        if (ek == "message") in.error_message = Str(ev);
        else if (ek == "code") in.error_code = Str(ev);
        else if (ek == "byte_offset") in.error_offset = ev.get_uint64();
        else if (ek == "rejected") in.rejected = ev.get_bool();
      }
    } else if (key == "span_us") {
      in.span_ns = Span(x);
    } else if (key == "steps") {
      in.timeline.steps = Steps(x);
    } else if (key == "steps_stride") {
      in.timeline.steps_stride = x.get_int64();
    } else if (key == "steps_dropped") {
      in.timeline.steps_dropped = x.get_uint64();
    } else if (key == "bytes_pushed") {
      in.timeline.bytes_pushed = x.get_uint64();
    } else if (key == "bytes_pulled") {
      in.timeline.bytes_pulled = x.get_uint64();
    } else if (key == "gpu_utilization") {
      for (od::value g : x.get_array()) in.timeline.gpus.push_back(GpuRow(g));
    } else if (key == "tracks") {
      for (od::value t : x.get_array()) in.timeline.tracks.push_back(Track(t));
    } else if (key == "clock") {
      in.clock = Clock(x);
    }
  }
  return in;
}

PartModel Part(od::value v) {
  PartModel p;
  for (auto field : v.get_object()) {
    std::string_view key = field.unescaped_key();
    od::value x = field.value();
    if (key == "path") p.path = Str(x);
    else if (key == "events") p.events = x.get_uint64();
    else if (key == "bytes") p.bytes = x.get_uint64();
    else if (key == "time_span_ns" && !IsNull(x)) {
      std::vector<int64_t> v;
      for (od::value t : x.get_array()) v.push_back(std::clamp<int64_t>(t.get_int64(), -formats::kMaxAbsTimeNs, formats::kMaxAbsTimeNs));
      if (v.size() == 2) p.span_ns = std::make_pair(v[0], v[1]);
    } else if (key == "starts_ns" && !IsNull(x)) {
      std::vector<int64_t> v;
      for (od::value t : x.get_array()) v.push_back(std::clamp<int64_t>(t.get_int64(), -formats::kMaxAbsTimeNs, formats::kMaxAbsTimeNs));
      if (v.size() == 2) p.starts_ns = std::make_pair(v[0], v[1]);
    }
  }
  return p;
}

OutputModel Output(od::value v) {
  OutputModel out;
  for (auto field : v.get_object()) {
    std::string_view key = field.unescaped_key();
    od::value x = field.value();
    if (key == "path") out.path = Str(x);
    else if (key == "ranks") {
      for (od::value r : x.get_array()) out.ranks.push_back(r.get_int64());
    } else if (key == "inputs") {
      for (od::value r : x.get_array()) {
        (void)r.get_string();
        ++out.inputs;
      }
    } else if (key == "events") out.events = x.get_uint64();
    else if (key == "bytes") out.bytes = x.get_uint64();
    else if (key == "error") { if (!IsNull(x)) out.error = Str(x); }
    else if (key == "parts") {
      for (od::value p : x.get_array()) out.parts.push_back(Part(p));
    }
  }
  return out;
}

Totals TotalsOf(od::value v) {
  Totals t;
  for (auto field : v.get_object()) {
    std::string_view key = field.unescaped_key();
    od::value x = field.value();
    if (key == "inputs") t.inputs = x.get_uint64();
    else if (key == "inputs_rejected") t.inputs_rejected = x.get_uint64();
    else if (key == "inputs_with_errors") t.inputs_with_errors = x.get_uint64();
    else if (key == "inputs_skipped") t.inputs_skipped = x.get_uint64();
    else if (key == "input_bytes") t.input_bytes = x.get_uint64();
    else if (key == "events_read") t.events_read = x.get_uint64();
    else if (key == "events_written") t.events_written = x.get_uint64();
    else if (key == "events_dropped") t.events_dropped = x.get_uint64();
    else if (key == "events_lost") t.events_lost = x.get_uint64();
    else if (key == "events_left_out") t.events_left_out = x.get_uint64();
    else if (key == "dropped_by_reason") t.dropped_by_reason = Counts(x);
    else if (key == "bytes_pushed") t.bytes_pushed = x.get_uint64();
    else if (key == "bytes_pulled") t.bytes_pulled = x.get_uint64();
    else if (key == "outputs") t.outputs = x.get_uint64();
    else if (key == "output_bytes") t.output_bytes = x.get_uint64();
    else if (key == "balanced") t.balanced = x.get_bool();
  }
  return t;
}

// A manifest older than issue 21 has no `events_lost`/`events_left_out`:
// they are summed from the reasons (a reason this version does not know
// counts as lost, the side that warns).
void SplitDrops(Totals* t) {
  if (t->events_lost + t->events_left_out == t->events_dropped) return;
  t->events_lost = t->events_left_out = 0;
  for (const auto& [key, n] : t->dropped_by_reason)
    (DropKindOfKey(key) == formats::DropKind::kDesign ? t->events_left_out : t->events_lost) += n;
}

}  // namespace

formats::DropKind DropKindOfKey(std::string_view key) {
  const auto reason = formats::DropReasonFromKey(key);
  return reason ? formats::DropReasonKind(*reason) : formats::DropKind::kLoss;
}

namespace {

// ParsePadded: ParseManifest over `len` bytes at `data` with `capacity` >=
// len + SIMDJSON_PADDING bytes readable.
absl::StatusOr<RunModel> ParsePadded(const char* data, size_t len, size_t capacity) {
  RunModel m;
  bool have_inputs = false;
  try {
    od::parser parser;
    od::document doc = parser.iterate(data, len, capacity);
    for (auto field : doc.get_object()) {
      std::string_view key = field.unescaped_key();
      od::value x = field.value();
      if (key == "tracemill_version") m.version = Str(x);
      else if (key == "command_line") m.command_line = Str(x);
      else if (key == "exit_code") m.exit_code = static_cast<int>(int64_t(x.get_int64()));
      else if (key == "wall_seconds") {
        m.wall_seconds_text = std::string(Trim(x.raw_json_token()));
        m.wall_seconds = x.get_double();
      } else if (key == "threads") m.threads = static_cast<int>(int64_t(x.get_int64()));
      else if (key == "group_by") m.group_by = Str(x);
      else if (key == "gpus_per_node") m.gpus_per_node = static_cast<int>(int64_t(x.get_int64()));
      else if (key == "cpu_only") m.cpu_only = x.get_bool();
      else if (key == "time_span_us") m.span_ns = Span(x);
      else if (key == "totals") m.totals = TotalsOf(x);
      else if (key == "inputs") {
        have_inputs = true;
        for (od::value v : x.get_array()) m.inputs.push_back(Input(v));
      } else if (key == "outputs") {
        for (od::value v : x.get_array()) m.outputs.push_back(Output(v));
      } else if (key == "clocks") {
        m.clocks = Clocks(x);
      } else if (key == "notices") {
        for (od::value n : x.get_array()) m.notices.push_back(Str(n));
      } else if (key == "tables") {
        m.tables = Tables(x);
      }
    }
  } catch (const simdjson::simdjson_error& e) {
    return absl::InvalidArgumentError(absl::StrCat("manifest.json: ", e.what()));
  } catch (const BadManifest& e) {
    return absl::InvalidArgumentError(absl::StrCat("manifest.json: ", e.what));
  }
  if (!have_inputs)
    return absl::InvalidArgumentError("manifest.json: no `inputs` array (not a tracemill manifest)");
  SplitDrops(&m.totals);
  return m;
}

}  // namespace

absl::StatusOr<RunModel> ParseManifest(std::string_view json) {
  simdjson::padded_string padded(json);
  return ParsePadded(padded.data(), padded.size(), padded.size() + simdjson::SIMDJSON_PADDING);
}

absl::StatusOr<RunModel> ReadManifest(const std::string& out_dir) {
  const std::string path = out_dir + "/manifest.json";
  // Only a regular file of a size a manifest can have: a directory, a device
  // (a link to /dev/zero) or a sparse file of GBs is said at once, not read
  // until memory runs out.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    if (e == ENOENT || e == ENOTDIR || e == ELOOP)
      return absl::NotFoundError(absl::StrCat(path, ": no manifest (", std::strerror(e), ")"));
    return absl::ErrnoToStatus(e, absl::StrCat("cannot open ", path));
  }
  if (!S_ISREG(st.st_mode))
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file (not a tracemill manifest)"));
  if (static_cast<uint64_t>(st.st_size) > kMaxManifestBytes)
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", st.st_size >> 20, " MiB, more than a manifest has (",
                                                   kMaxManifestBytes >> 30, " GiB at most)"));
  // Read with simdjson's padding and parsed in place: a follow job refreshes
  // its report from a manifest of MBs after every window, and a second copy
  // (and a string grown by doubling) raised the refresh's peak.
  formats::ByteBuffer text;
  if (absl::Status s = formats::ReadWholeFile(path, simdjson::SIMDJSON_PADDING, &text, kMaxManifestBytes); !s.ok())
    return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
  absl::StatusOr<RunModel> m = ParsePadded(text.data(), text.size(), text.capacity());
  if (!m.ok() && absl::StartsWith(m.status().message(), "manifest.json: "))  // name the file given
    return absl::Status(m.status().code(), absl::StrCat(path, m.status().message().substr(13)));
  return m;
}

}  // namespace tracemill::report
