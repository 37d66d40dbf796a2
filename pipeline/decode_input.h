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

#include "formats/chrome/tef_decoder.h"
#include "formats/common/byte_buffer.h"
#include "formats/orchestrator/run_event_log_decoder.h"
#include "merge/sorted_run.h"
#include "pipeline/input_record.h"
#include "pipeline/rank_name.h"

namespace tracemill::pipeline {

// DecodeWorker: per-worker state reused across inputs (one per decode slot):
// the decoders (simdjson parsers) and the read and inflate buffers.
struct DecodeWorker {
  formats::TefDecoder decoder;
  formats::RunEventLogDecoder run_log;
  formats::ByteBuffer file;
  formats::ByteBuffer inflated;
};

// DecodeInput decodes `data` (the whole input; its allocation extends to
// `capacity` bytes, at least `data.size() + SIMDJSON_PADDING` for the fast
// path) and returns its sorted run, or nullptr if the input is rejected or
// skipped. Formats: Trace Event JSON (both forms), Paddle protobuf, JSON
// Lines (run event logs), each plain or gzip. Fills `r`: format,
// decoded_bytes, events_read, dropped, warnings, status (kDataLoss: damaged,
// what was readable is kept; kInvalidArgument: rejected), error_offset, rank
// and rank_source, timeline, world_size and the time span. `r.path` names
// the rank (see `RankMatcher`) and `r.from_directory` lets non-trace files be
// skipped. `max_decoded_bytes` bounds the inflated size of a gzip input (past
// it the input is rejected with kResourceExhausted, nothing decoded).
std::unique_ptr<merge::SortedRun> DecodeInput(std::string_view data, size_t capacity,
                                              DecodeWorker& w, const RankMatcher& ranks,
                                              InputRecord& r,
                                              uint64_t max_decoded_bytes = UINT64_MAX);

}  // namespace tracemill::pipeline
