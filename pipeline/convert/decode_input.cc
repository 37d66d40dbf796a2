#include "pipeline/convert/decode_input.h"

#include <simdjson.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "formats/chrome/chrome_writer.h"
#include "formats/common/read_file.h"
#include "formats/common/status_macros.h"
#include "formats/common/time_window.h"
#include "formats/common/ts_text.h"
#include "formats/detect.h"
#include "formats/gzip/gzip_reader.h"
#include "pipeline/budget.h"

namespace tracemill::pipeline {
namespace {

// Copies what a decoder reported into `r` (a gzip error already there wins).
void TakeReport(formats::DecodeReport& rep, InputRecord& r) {
  r.events_read = rep.events_read;
  r.dropped = rep.dropped;
  r.warnings = std::move(rep.warnings);
  if (!rep.status.ok() && r.status.ok()) {
    r.status = rep.status;
    r.error_offset = rep.error_offset;
  }
}

// NotATrace: why a decoded document is no trace at all (its decoder said
// kInvalidArgument, e.g. a JSON object without `traceEvents`; or an array
// none of whose elements is an event object, `[1,2,3]`), or "".
std::string NotATrace(const formats::DecodeReport& rep, size_t events_kept) {
  if (absl::IsInvalidArgument(rep.status)) return std::string(rep.status.message());
  using formats::DropReason;
  const uint64_t not_events = rep.dropped[DropReason::kNotAnObject] + rep.dropped[DropReason::kEmptyObject];
  if (rep.status.ok() && events_kept == 0 && rep.events_read > 0 && not_events == rep.events_read)
    return "not a Trace Event Format file: no element of its array is an event object";
  return {};
}

// Skippable: a file that is no trace may be skipped (with a note) rather
// than rejected: found in a directory, and its name gives no rank (a
// config.json beside the traces; an empty or broken rank5.json is a rank that
// failed).
bool Skippable(const InputRecord& r, const RankMatcher& ranks) {
  return r.from_directory && r.status.ok() && !ranks.Match(r.path);
}

// DecodeAs decodes `in` as `format` into a new builder and returns its data
// (nullptr if the input was skipped or is no trace); the report goes into
// `r`. A document that is no trace is skipped if Skippable, else rejected.
std::unique_ptr<formats::TraceData> DecodeAs(const formats::InputFormat& format, const formats::InputBytes& in,
                                             DecodeWorker& w, const DecodeOptions& o, const RankMatcher& ranks,
                                             InputRecord& r) {
  formats::TraceBuilder builder;
  formats::DecodeReport rep = w.decoders.For(format).Decode(in, o.settings, &builder);
  if (!rep.skip_note.empty()) {
    r.skipped = true;
    r.warnings.push_back(std::move(rep.skip_note));
    return nullptr;
  }
  if (std::string why = NotATrace(rep, builder.event_count()); !why.empty() && r.status.ok()) {
    if (Skippable(r, ranks)) {
      r.skipped = true;
      r.warnings.push_back(absl::StrCat("skipped: ", why));
    } else {
      r.status = absl::InvalidArgumentError(why);
      r.error_offset = rep.error_offset;
      r.rejected = true;
    }
    return nullptr;
  }
  TakeReport(rep, r);
  if (rep.tolerant) r.format += "+tolerant";
  if (absl::IsInvalidArgument(rep.status)) r.rejected = true;
  return builder.Finish();
}

// RejectOrSkip: an input no format recognizes. A file found in a directory
// that is not a trace (a README or log next to the traces) is skipped, not
// an error; anything else is rejected. `plain`: not inflated from gzip.
void RejectOrSkip(formats::FormatId shape, std::string_view data, bool plain, const RankMatcher& ranks,
                  InputRecord& r) {
  if (shape == formats::FormatId::kEmpty) {
    if (Skippable(r, ranks)) {  // an empty file beside the traces
      r.skipped = true;
      r.warnings.push_back("skipped: empty file");
      return;
    }
    if (r.status.ok()) r.status = absl::InvalidArgumentError("empty input: no JSON document");
    r.rejected = true;
    return;
  }
  if (Skippable(r, ranks) && plain) {  // rank1.json holding "hello" is a rank that failed
    r.skipped = true;
    r.warnings.push_back(absl::StrCat("skipped: not a trace (first bytes: ", formats::FirstBytesHex(data), ")"));
    return;
  }
  if (r.status.ok())
    r.status = absl::InvalidArgumentError(absl::StrCat("unrecognized format (first bytes: ", formats::FirstBytesHex(data), ")"));
  r.rejected = true;
}

// DigestCollectives: the input's collective operations (formats/common/
// collectives.h), from its events after B/E pairing (Horovod's activities
// are B/E pairs). Names were classified when interned.
formats::CollectiveDigest DigestCollectives(const formats::TraceData& trace, size_t max_ops) {
  using formats::CollectiveClass;
  formats::CollectiveCollector collector;
  const auto& cls = trace.collective_of_name;
  std::vector<std::string> kind_of_name(cls.size());  // cached: a kernel's kind is in its name
  for (const formats::Event& e : trace.events) {
    if (e.name >= cls.size() || !cls[e.name] || !(e.flags & formats::kHasTs)) continue;
    const bool span = e.phase == 'X' || (e.phase == 'B' && (e.flags & formats::kHasSpan));
    if (!span) continue;
    const auto c = static_cast<CollectiveClass>(cls[e.name]);
    const std::string_view rest(e.rest, e.rest_len);
    std::string& kind = kind_of_name[e.name];
    if (kind.empty() || c == CollectiveClass::kCpuWrapper) kind = formats::CollectiveKind(c, trace.strings[e.name], rest);
    const int64_t dur = (e.flags & (formats::kHasDur | formats::kHasSpan)) ? e.dur_ns : 0;
    collector.Add(c, kind, rest, e.ts_ns, e.ts_ns + dur);
  }
  return collector.Finish(max_ops);
}

}  // namespace

std::unique_ptr<merge::SortedRun> DecodeInput(std::string_view data, size_t capacity,
                                              DecodeWorker& w, const RankMatcher& ranks,
                                              InputRecord& r, uint64_t max_decoded_bytes,
                                              const DecodeOptions& o) {
  formats::FormatId f = formats::Sniff(data);
  std::string format_prefix;
  if (f == formats::FormatId::kGzip) {
    formats::GunzipResult g =
        formats::Gunzip(data, &w.inflated, simdjson::SIMDJSON_PADDING, max_decoded_bytes);
    if (absl::IsResourceExhausted(g.status)) {  // a decompression bomb, or too big for the budget
      // Say what would fit: the real inflated size, counted by streaming.
      const uint64_t inflated = formats::InflatedSize(data);
      r.status = absl::ResourceExhaustedError(absl::StrCat(
          "gzip: inflates to ", inflated >> 20, " MiB, more than the decode budget allows (",
          max_decoded_bytes >> 20, " MiB); rerun with --memory-limit ",
          (DecodeCost(inflated) * 10 / 6 >> 20) + 1, "M or more"));
      r.error_offset = g.error_offset;
      r.rejected = true;
      r.format = "gzip";
      w.inflated.Release();
      return nullptr;
    }
    if (!g.status.ok()) {
      r.status = absl::Status(g.status.code(), absl::StrCat("gzip: ", g.status.message()));
      r.error_offset = g.error_offset;
    }
    data = w.inflated.view();
    capacity = w.inflated.capacity();
    f = formats::Sniff(data);
    format_prefix = "gzip+";
  }
  r.decoded_bytes = data.size();
  std::unique_ptr<formats::TraceData> trace;
  if (const formats::InputFormat* format = formats::RecognizeFormat(f, data)) {
    r.format = absl::StrCat(format_prefix, AbslView(format->name));
    trace = DecodeAs(*format, formats::InputBytes{data, capacity, r.path}, w, o, ranks, r);
  } else {
    r.format = absl::StrCat(format_prefix, AbslView(formats::FormatName(f)));
    RejectOrSkip(f, data, format_prefix.empty(), ranks, r);
  }
  return SortDecoded(r, std::move(trace), ranks, o);
}

std::unique_ptr<merge::SortedRun> SortDecoded(InputRecord& r, std::unique_ptr<formats::TraceData> trace,
                                              const RankMatcher& ranks, const DecodeOptions& o) {
  if (!trace || r.rejected) return nullptr;
  if (o.time_offset_ns) {
    // Held to +-kMaxAbsTimeNs again, so that later sums (ts + dur) and spans
    // cannot overflow: timed events pushed out of it are dropped as bad_ts.
    // Both are within that range (the CLI holds --time-offset to it): the
    // step sums fit, and are clamped.
    if (uint64_t out = formats::ShiftEventTimes(&trace->events, o.time_offset_ns)) {
      r.dropped.Add(formats::DropReason::kBadTs, out);
      r.warnings.push_back(
          absl::StrCat(out, " events moved out of the time range (+-2^62 ns) by --time-offset dropped"));
    }
    for (formats::StepSpan& st : trace->timeline.steps) {
      st.start_ns = std::clamp(st.start_ns + o.time_offset_ns, -formats::kMaxAbsTimeNs, formats::kMaxAbsTimeNs);
      st.end_ns = std::clamp(st.end_ns + o.time_offset_ns, -formats::kMaxAbsTimeNs, formats::kMaxAbsTimeNs);
    }
  }
  formats::PairBeginEnd(trace.get(), &r.dropped, &r.warnings);
  r.dropped.Add(formats::DropReason::kEmptyProcess, formats::DropEmptyProcesses(trace.get()));
  r.timeline = std::move(trace->timeline);
  if (r.timeline.steps_dropped)
    r.warnings.push_back(absl::StrCat(r.timeline.steps_dropped, " steps past the first ",
                                      formats::kMaxStepsKept, " per track are not kept (tables, report, --start-step)"));
  if (!r.timeline.tracks.empty()) {
    // A multi-actor input (run event log) is the whole job, not one rank.
  } else if (!r.files.empty()) {
    // An smdebug node: its rank (if any) came from the node id when grouped.
  } else if (trace->meta.rank) {
    r.rank = trace->meta.rank;
    r.rank_source = "distributedInfo";
  } else if (auto named = ranks.Match(r.path); named && trace->meta.name_number_is_trainer) {
    // A trainer's file (a Paddle network log): its counters go with the
    // trainer's first GPU, so that --group-by node and the clock domains
    // (node = rank / gpus per node) see the trainer's host.
    r.trainer = named;
    r.rank = *named * o.gpus_per_node;
    r.rank_source = absl::StrCat("file name (trainer ", *named, " x ", o.gpus_per_node, " GPUs per node)");
  } else if (named) {
    r.rank = named;
    r.rank_source = "file name";
  } else {
    r.warnings.push_back(
        "no rank in distributedInfo or in the file name; kept as an unranked process "
        "labelled by its file name (see --rank-pattern)");
  }
  r.world_size = trace->meta.world_size;
  r.process_meta_events.clear();
  r.entry_bound_bytes = formats::ChromeWriter::SumBounds(*trace, &r.process_meta_events);
  r.entry_bound_events = trace->events.size();
  for (const auto& e : trace->events) {
    if (e.phase == 'M' || !(e.flags & formats::kHasTs)) continue;
    // ts and dur are each within +-2^62 ns (ts_text.h), so their sum fits;
    // the span's end is held to the same range, so that differences of span
    // times (the report's scales) cannot overflow either.
    int64_t end = std::min(e.ts_ns + ((e.flags & formats::kHasDur) ? e.dur_ns : 0),
                           formats::kMaxAbsTimeNs);
    if (!r.has_span) {
      r.first_ts_ns = e.ts_ns;
      r.last_ts_ns = end;
      r.has_span = true;
    } else {
      r.first_ts_ns = std::min(r.first_ts_ns, e.ts_ns);
      r.last_ts_ns = std::max(r.last_ts_ns, end);
    }
  }
  if (o.collect_collectives)
    r.collectives = DigestCollectives(*trace, r.clock_probe ? formats::kMaxProbeCollectives : formats::kMaxCollectives);
  return merge::SortedRun::Sort(std::move(trace));
}

}  // namespace tracemill::pipeline
