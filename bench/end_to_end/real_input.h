#pragma once
// Real-trace benchmark input (issue 22): real PyTorch profiler (Kineto) files
// the repository carries, replicated to N ranks at benchmark time. Rank r is
// template r % T, with `distributedInfo` {nccl, rank r, world_size N} in
// place of any it had and every `ts` shifted so that its first event is at
// template 0's first ts + r x shift_us µs (exact, on the number's text): the
// templates were taken minutes apart, and the k-way merge must interleave the
// ranks for real.
// Everything else, bytes included, is the template's: its args, its
// pretty-printing, its unsorted events.
#include <cstdint>
#include <string>
#include <vector>

namespace tracemill::bench {

struct RealSpec {
  std::vector<std::string> templates;  // Kineto JSON files, plain or gzip
  int ranks = 16;
  int64_t shift_us = 173;  // rank r's ts + r x shift_us
};

// What ReplicateKineto wrote into one directory.
struct RealOutput {
  uint64_t events = 0;      // trace events, all files (traceEvents elements)
  uint64_t json_bytes = 0;  // uncompressed bytes, all files
  uint64_t file_bytes = 0;  // bytes on disk, all files
};

// ReplicateKineto writes DIR/rank<r>.pt.trace.json (gzip: .json.gz, one
// libdeflate member, level 6) for r in [0, spec.ranks). Returns false with a
// message on stderr if a template cannot be read, is not a Kineto JSON object
// with `traceEvents`, or a file cannot be written.
bool ReplicateKineto(const RealSpec& spec, const std::string& dir, bool gzip, RealOutput* out);

// ShiftTs returns `json` with `shift_us` added to the integer after every
// `"ts": ` key (a fraction after it is kept as written; a string ts is left).
std::string ShiftTs(const std::string& json, int64_t shift_us);

// WithDistributedInfo returns `json` (a JSON object) with any top-level-looking
// `"distributedInfo": {...}` member removed and
// `"distributedInfo": {"backend": "nccl", "rank": R, "world_size": N}` first.
std::string WithDistributedInfo(const std::string& json, int rank, int world_size);

}  // namespace tracemill::bench
