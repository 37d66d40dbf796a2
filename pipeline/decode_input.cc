#include "pipeline/decode_input.h"

#include <simdjson.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "formats/common/status_macros.h"
#include "formats/detect.h"
#include "formats/gzip/gzip_reader.h"

namespace tracemill::pipeline {
namespace {

std::string HeadBytes(std::string_view data) {
  std::string s;
  for (char c : data.substr(0, 16)) {
    unsigned char u = static_cast<unsigned char>(c);
    absl::StrAppend(&s, s.empty() ? "" : " ", absl::Hex(u, absl::kZeroPad2));
  }
  return s;
}

}  // namespace

std::unique_ptr<merge::SortedRun> DecodeInput(std::string_view data, size_t capacity,
                                              DecodeWorker& w, const RankMatcher& ranks,
                                              InputRecord& r, uint64_t max_inflated_bytes) {
  formats::TefDecoder& decoder = w.decoder;
  formats::FormatId f = formats::Sniff(data);
  std::string format_prefix;
  if (f == formats::FormatId::kGzip) {
    formats::GunzipResult g = formats::Gunzip(data, &w.inflated, simdjson::SIMDJSON_PADDING,
                                               max_inflated_bytes);
    if (!g.status.ok()) {
      r.status = absl::Status(g.status.code(), absl::StrCat("gzip: ", g.status.message()));
      r.error_offset = g.error_offset;
    }
    if (absl::IsResourceExhausted(g.status)) {  // a decompression bomb, or too big for memory
      r.rejected = true;
      r.format = "gzip";
      w.inflated.Release();
      return nullptr;
    }
    data = w.inflated.view();
    capacity = w.inflated.capacity();
    f = formats::Sniff(data);
    format_prefix = "gzip+";
  }
  r.decoded_bytes = data.size();
  r.format = absl::StrCat(format_prefix, AbslView(formats::FormatName(f)));
  std::unique_ptr<formats::TraceData> trace;
  switch (f) {
    case formats::FormatId::kTraceEventArray:
    case formats::FormatId::kTraceEventObject: {
      formats::TraceBuilder builder;
      formats::DecodeReport rep = decoder.Decode(data, capacity, &builder);
      r.events_read = rep.events_read;
      r.dropped = rep.dropped;
      r.warnings = std::move(rep.warnings);
      if (rep.tolerant) r.format += "+tolerant";
      if (!rep.status.ok() && r.status.ok()) {
        r.status = rep.status;
        r.error_offset = rep.error_offset;
      }
      if (absl::IsInvalidArgument(rep.status)) r.rejected = true;
      trace = builder.Finish();
      break;
    }
    case formats::FormatId::kEmpty:
      if (r.status.ok()) r.status = absl::InvalidArgumentError("empty input: no JSON document");
      r.rejected = true;
      break;
    default:
      if (r.from_directory && r.status.ok() && format_prefix.empty()) {
        // A README or log next to the traces: not an input, not an error.
        r.skipped = true;
        r.warnings.push_back(absl::StrCat("skipped: not a trace (first bytes: ", HeadBytes(data), ")"));
        break;
      }
      if (r.status.ok())
        r.status = absl::InvalidArgumentError(
            absl::StrCat("unrecognized format (first bytes: ", HeadBytes(data), ")"));
      r.rejected = true;
      break;
  }
  if (!trace || r.rejected) return nullptr;
  if (trace->meta.rank) {
    r.rank = trace->meta.rank;
    r.rank_source = "distributedInfo";
  } else if (auto named = ranks.Match(r.path)) {
    r.rank = named;
    r.rank_source = "file name";
  } else {
    r.warnings.push_back(
        "no rank in distributedInfo or in the file name; kept as an unranked process "
        "labelled by its file name (see --rank-pattern)");
  }
  r.world_size = trace->meta.world_size;
  return merge::SortedRun::Sort(std::move(trace));
}


}  // namespace tracemill::pipeline
