#pragma once
// Shared oracles for the fuzz targets in this folder, so each target stays a
// few lines (Perfetto's manner). A broken oracle aborts, which libFuzzer
// reports as a crash with the input saved.
//
// - `CheckTrace`: what every decoder must leave in a TraceBuilder, whatever
//   the format: every event read is kept or dropped with a reason; every
//   kept event's `rest` and every top-level value is strict JSON; every kept
//   time is within +-2^62 ns (ts_text.h), durations are not negative; steps
//   are well-formed.
// - `DecodeAndCheck`: TefDecoder on its paths (scan, which must decode as
//   the fast path or decline; fast with padding; tolerant when the capacity
//   leaves no padding), each checked by `CheckTrace`.
// - `WriteAndCheck`: a sorted run through namespacing, the k-way merge and
//   ChromeWriter into memory; the output must be strict JSON with every
//   timed event in non-decreasing `ts` and as many events as the run holds.
// - `ConvertAndCheck`: the whole DecodeAndSort path (`pipeline::DecodeInput`,
//   every input kind) then `WriteAndCheck`.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace tracemill {
namespace formats {
class ByteBuffer;
struct DecodeReport;
struct TraceData;
}  // namespace formats
namespace merge {
class SortedRun;
}  // namespace merge
}  // namespace tracemill

namespace tracemill::fuzz {

// TM_FUZZ_CHECK aborts with the failed condition: libFuzzer saves the input.
#define TM_FUZZ_CHECK(cond)                                                          \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      std::fprintf(stderr, "%s:%d: fuzz oracle failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                  \
    }                                                                                \
  } while (0)

// Padded sets `out` to `prefix + data` (unless `data` already starts with
// `prefix`), with simdjson padding allocated after the bytes.
void Padded(std::string_view prefix, std::string_view data, formats::ByteBuffer* out);

// StrictJson is true if `json` is exactly one strict JSON value (RFC 8259):
// valid UTF-8, no raw control characters, valid escapes with paired
// surrogates, numbers of any length (simdjson's DOM rejects valid
// 10,000-digit numbers, so this oracle is written out, independent of the
// sanitizer under test).
bool StrictJson(std::string_view json);

// CheckTrace checks the invariants of one decoded input (`data`, from
// `TraceBuilder::Finish`) and the decoder's report `rep` (see above).
void CheckTrace(const formats::TraceData& data, const formats::DecodeReport& rep);

// DecodeDump: everything a decode leaves, as text (events in order with
// their strings and rest, processes, metadata, the report with its drops by
// reason), to compare two.
std::string DecodeDump(const formats::TraceData& data, const formats::DecodeReport& rep);

// DecodeAndCheck decodes `prefix + data` with TefDecoder on the scan path
// (which must decode it as the fast path does, or decline), on the fast path
// (falling back as the product does) and on the tolerant path alone, checks
// both (`CheckTrace`); a document the fast path accepts must decode to the
// same events on the tolerant path.
void DecodeAndCheck(std::string_view prefix, std::string_view data);

// WriteAndCheck writes `run` as one input through namespacing, the k-way
// merge and ChromeWriter into memory, with absolute times or relative to
// `ts_offset_ns`, and checks the output (see above).
void WriteAndCheck(merge::SortedRun& run, int64_t ts_offset_ns);

// ConvertAndCheck runs `data` through `pipeline::DecodeInput` (gzip, detect,
// decode, sort) and `WriteAndCheck` (relative times when the size is odd).
// `max_decoded_bytes` keeps gzip bombs inside the fuzzer's RSS limit.
void ConvertAndCheck(std::string_view data, uint64_t max_decoded_bytes = 64 << 20);

}  // namespace tracemill::fuzz
