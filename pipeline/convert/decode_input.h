#pragma once
// DecodeInput: the bytes of one input -> its sorted run (InputBytes ->
// SortedRun), the body of the convert graph's decode node minus the read.
//
// Split out of `graph.cc` so the fuzz target `tests/fuzz/convert_fuzzer.cc`
// drives exactly the code a real run does: gzip (any number of members,
// salvage of a damaged one) -> detect -> decode (fast or tolerant path) ->
// rank -> sort. Everything that happened goes into the `InputRecord`.
#include <memory>
#include <string_view>

#include "formats/common/byte_buffer.h"
#include "formats/registry.h"
#include "merge/sorted_run.h"
#include "pipeline/inputs/input_record.h"
#include "pipeline/inputs/rank_name.h"
#include "pipeline/options.h"

namespace tracemill::pipeline {

// DecodeWorker: per-worker state reused across inputs (one per decode slot):
// a decoder per format (formats/registry.h: simdjson parsers and scratch)
// and the read and inflate buffers.
struct DecodeWorker {
  formats::DecoderSet decoders;
  formats::ByteBuffer file;
  formats::ByteBuffer inflated;
};

// DecodeOptions: the convert options that change how an input decodes.
struct DecodeOptions {
  int64_t time_offset_ns = 0;          // --time-offset, added to every ts and step (ns)
  formats::DecodeSettings settings;    // the decoders' own (formats/registry.h)
  bool collect_collectives = false;    // fill InputRecord::collectives (clock alignment)
  // The job's GPUs per node: a trainer's file (Paddle network logs) goes to
  // rank trainer x gpus_per_node.
  int gpus_per_node = 8;
};

// DecodeOptionsOf picks them out of a convert job's options (a follow
// window's edges cut low-GPU slices: each window holds its part of a run).
inline DecodeOptions DecodeOptionsOf(const ConvertOptions& o) {
  formats::DecodeSettings s{o.low_gpu_threshold, o.no_system_metrics};
  if (o.follow_window) s.low_gpu_cuts_ns = {o.follow_window->late ? INT64_MIN : o.follow_window->start_ns,
                                            o.follow_window->end_ns};
  return DecodeOptions{o.time_offset_ns, s, false, o.gpus_per_node > 0 ? o.gpus_per_node : 8};
}

// DecodeInput decodes `data` (the whole input; its allocation extends to
// `capacity` bytes, at least `data.size() + SIMDJSON_PADDING` for the fast
// path) and returns its sorted run, or nullptr if the input is rejected or
// skipped. Formats: Trace Event JSON (both forms), Paddle protobuf, JSON
// Lines (run event logs, smdebug system metrics), each plain or gzip. Fills `r`: format,
// decoded_bytes, events_read, dropped, warnings, status (kDataLoss: damaged,
// what was readable is kept; kInvalidArgument: rejected), error_offset, rank
// and rank_source, timeline, world_size and the time span. `r.path` names
// the rank (see `RankMatcher`) and `r.from_directory` lets non-trace files be
// skipped. `max_decoded_bytes` bounds the inflated size of a gzip input (past
// it the input is rejected with kResourceExhausted, nothing decoded).
std::unique_ptr<merge::SortedRun> DecodeInput(std::string_view data, size_t capacity,
                                              DecodeWorker& w, const RankMatcher& ranks,
                                              InputRecord& r,
                                              uint64_t max_decoded_bytes = UINT64_MAX,
                                              const DecodeOptions& o = DecodeOptions{});

// SortDecoded finishes a decoded input (DecodeInput's last part, also used
// for an smdebug node decoded file by file): --time-offset, B/E pairing
// (`PairBeginEnd`), rank, world size and time span into `r`, then the sort.
// Returns nullptr if `trace` is null or `r` rejected.
std::unique_ptr<merge::SortedRun> SortDecoded(InputRecord& r, std::unique_ptr<formats::TraceData> trace,
                                              const RankMatcher& ranks, const DecodeOptions& o);

}  // namespace tracemill::pipeline
