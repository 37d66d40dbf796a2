#pragma once
// The memory budget: `--memory-limit` and how it is split between stages.
//
// Rule (printed by --verbose):
// - Stage 1 (decode): `decode` = 60% of the limit for inputs being decoded.
//   Decoding one input holds about kDecodeFactor x its decoded JSON size
//   (the JSON itself, simdjson's structural index, the decoded events and
//   their copied args). The number of inputs in flight (the limiter_node's
//   threshold) is decode / (kDecodeFactor x the largest input), at least 1,
//   at most the thread count. An input that alone exceeds `decode` is
//   rejected with a message naming the limit it would need.
// - `runs` = 40%: sorted runs kept in memory between the stages. A run that
//   does not fit is spilled to --tmp-dir and streamed back during the merge.
// - Stage 2 (merge and write, after the decode buffers are freed): `merge` =
//   60%, split evenly between the outputs written at once; each output's
//   share pays its writer buffers (kWriterBytes) and one read buffer per
//   spilled run (between kMinReadBuffer and kMaxReadBuffer).
// So at any time: resident runs (<= 40%) + the stage's buffers (<= 60%).
// Not counted, being small and fixed: each decode worker's spill file ring
// (merge/spill_file.h: 4 MiB) and, for direct spill reads, 1 MiB per
// thread that reads (the I/O threads of merge/io_pool.h).
// - When outputs are written while later inputs decode (overlap, graph.cc),
//   both stages run at once: `merge` = 10% (the buffers of the outputs
//   being written), `decode` = what the inputs decoded at once need: as
//   many of the largest input (DecodeCost) as there are threads, within 75%;
//   `runs` = the rest (at least 15%; runs wait for their output, and leave
//   it when written). The 512-rank job on 2 threads: decode 5%, runs 85%
//   (it was 50% and 40%, and 290 of its 512 runs spilled instead of 84).
//   Under a small limit, two inputs decoding at once use both cores, where
//   one decode and a spilling merge left one core mostly idle. (An input
//   over 60% is rejected before; one over 37.5% is decoded alone, with the
//   overlap.) Without any input's cost known: 50/40/10.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

namespace tracemill::pipeline {

inline constexpr double kDecodeFactor = 3.0;
// 1 MiB format buffer + the merge's ranges in flight (up to kMaxBatchTokens
// x about 256 KiB formatted, 256 KiB of copied spilled events and 64 bytes
// per kept event: about 5 MiB, pipeline/convert/merge_write.h) + gzip
// batches (2 x kGzipBatch chunks) + direct-I/O staging (kDirectBuffers x
// kDirectBufferBytes, formats/chrome/output_file.h).
inline constexpr uint64_t kWriterBytes = 24ull << 20;
inline constexpr uint64_t kMinReadBuffer = 16ull << 10;
inline constexpr uint64_t kMaxReadBuffer = 1ull << 20;

// MemoryPlan: the budget of one run, in bytes.
struct MemoryPlan {
  uint64_t limit = 0;
  uint64_t decode = 0;
  uint64_t runs = 0;
  uint64_t merge = 0;
  bool overlap = false;          // the split of ForOverlap()
  std::string Describe() const;  // one line for --verbose
  // ForOverlap: the same limit split for overlapped stages: decode as many
  // inputs of `largest_cost` bytes (DecodeCost) as `threads` within 75%,
  // merge 10%, runs the rest (rule above).
  MemoryPlan ForOverlap(uint64_t largest_cost, int threads) const;
};

// PlanMemory splits `limit_bytes` by the rule above.
MemoryPlan PlanMemory(uint64_t limit_bytes);

// CgroupMemoryLimit: the memory limit of the process's own cgroup (bytes):
// the smallest v2 memory.max, else v1 memory.limit_in_bytes, from the
// cgroup named in `root`/proc/self/cgroup up to the mount root under
// `root`/sys/fs/cgroup (a Slurm job step's limit is several levels down).
// nullopt if none is set. `root` is "" but in tests.
std::optional<uint64_t> CgroupMemoryLimit(const std::string& root);

// DefaultMemoryLimit: half the cgroup memory limit (CgroupMemoryLimit) if
// there is one, else half the physical memory, at most 4 GiB (bytes).
uint64_t DefaultMemoryLimit();

// SpillPageCacheBytes: how many spilled bytes may sit in the page cache at
// once (pipeline/convert/decoded_runs.h) in a job whose --memory-limit is
// `limit_bytes`: half of what the process's memory (its cgroup's limit,
// else the physical memory) leaves beyond that limit; 0 if nothing.
uint64_t SpillPageCacheBytes(uint64_t limit_bytes);

// ParseBytes parses "512M", "4G", "1048576", "64K" (powers of 1024; an
// optional trailing "B" or "iB"). nullopt on anything else or zero.
std::optional<uint64_t> ParseBytes(const std::string& text);

// DecodeCost estimates the bytes decoding an input of `decoded_bytes` holds:
// kDecodeFactor x its size, more for dense events (`bytes_per_event` from its
// head, 0 unknown): each event costs ~150 bytes beyond its text (event record,
// sort key, structural index), so below 150 bytes per event the factor is
// 2 + 150 / bytes_per_event (measured peak: 2.3x at 444 B/event, 4.5x at 60
// B/event; this gives 3.0 and 4.5), at most 8.
inline double DecodeFactor(uint32_t bytes_per_event) {
  if (bytes_per_event == 0 || bytes_per_event >= 150) return kDecodeFactor;
  return std::min(8.0, 2.0 + 150.0 / bytes_per_event);
}
inline uint64_t DecodeCost(uint64_t decoded_bytes, uint32_t bytes_per_event = 0) {
  return static_cast<uint64_t>(static_cast<double>(decoded_bytes) * DecodeFactor(bytes_per_event)) +
         (1 << 20);
}

}  // namespace tracemill::pipeline
