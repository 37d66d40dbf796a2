#pragma once
// Collective operations of one input: a small digest kept while decoding, so
// that the ranks' clocks can be aligned (merge/clock_offsets.h) without
// keeping or re-reading the events.
//
// What counts as a collective, by event name (checked once per distinct
// name, when it is interned: TraceBuilder):
// - GPU collective kernels: `ncclKernel_<Kind>_...` and `ncclDevKernel_<Kind>...`
//   (NCCL, and RCCL, which keeps NCCL's names); the kind is the token after
//   the prefix (`AllReduce`, `SendRecv`, `Generic`).
// - CPU-side records, used only when an input has no GPU collective kernel:
//   `nccl:<op>` and `gloo:<op>` (PyTorch's c10d annotations), Horovod's
//   activities (`ALLREDUCE`, `NCCL_ALLREDUCE`, `MPI_ALLREDUCE`, `ALLGATHER`,
//   `BROADCAST`, ...), and `record_param_comms` (PyTorch's wrapper record)
//   only when none of those is present; the kind is the whole name
//   (`record_param_comms`: its `Collective name` arg).
// Each op's process group comes from Kineto's `Process Group Name` and
// `Process Group Ranks` args where present (else the world group, ""), and
// its sequence number in that group from `Seq`.
//
// Bounded: at most `max_ops` ops per input are kept. When an input has more,
// those kept end in the first 1/2^k of each 2^26 ns (67 ms) window of the
// time axis, with the smallest k that fits: every rank samples the same
// instants (the sets are nested whatever each rank's k), so matched pairs
// survive on both sides as long as clock offsets are well below 67/2^k ms.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tracemill::formats {

// CollectiveClass: what kind of record an event name is, for the digest.
enum class CollectiveClass : uint8_t {
  kNone = 0,
  kGpuKernel = 1,  // ncclKernel_*, ncclDevKernel_*
  kCpuRecord = 2,  // nccl:*, gloo:*, Horovod activities
  kCpuWrapper = 3, // record_param_comms (used only without kCpuRecord)
};


// ClassifyCollectiveName: the class of an event named `name` (a sanitized
// JSON string body), kNone for everything else.
CollectiveClass ClassifyCollectiveName(std::string_view name);

// CollectiveKind: the kind of a collective named `name` of class `cls`
// ("AllReduce" for a kernel, the name itself for a CPU record; for
// record_param_comms, its `Collective name` arg from `rest`).
std::string CollectiveKind(CollectiveClass cls, std::string_view name, std::string_view rest);

// CollectiveOp: one collective on one rank. Times in absolute ns.
struct CollectiveOp {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t key = 0;   // index into CollectiveDigest::keys
  int64_t seq = -1;   // `Seq` in its process group, -1 if unknown
};

// CollectiveDigest: the collectives of one input.
struct CollectiveDigest {
  std::vector<std::string> keys;  // "<process group>\x1f<kind>", one per distinct pair
  std::vector<CollectiveOp> ops;  // sorted by (end_ns, start_ns, key)
  bool gpu = false;               // from GPU kernels (else from CPU-side records)
  uint64_t seen = 0;              // collectives seen, before sampling
  int sample_shift = 0;           // k above (0: every op kept)

  bool empty() const { return ops.empty(); }
  void clear() { *this = CollectiveDigest{}; }
};

// CollectiveCollector: builds the digest of one input from its events, in
// any order. Not thread-safe.
class CollectiveCollector {
 public:
  // Add one collective record: its class, kind, `rest` (the event's other
  // members, sanitized JSON, for the group args) and times (ns).
  void Add(CollectiveClass cls, std::string_view kind, std::string_view rest, int64_t start_ns, int64_t end_ns);
  // Finish keeps GPU kernels if there are any, else CPU records (else
  // record_param_comms), samples down to `max_ops` and sorts.
  CollectiveDigest Finish(size_t max_ops);

 private:
  struct Pending {
    CollectiveOp op;
    CollectiveClass cls;
  };
  std::vector<Pending> pending_;
  std::vector<std::string> keys_;
};

// Ops kept per input: any input, and the probe of a clock domain (its
// lowest rank, whose digest measures the domain's offset).
inline constexpr size_t kMaxCollectives = 512;
inline constexpr size_t kMaxProbeCollectives = 8192;

// The sampling window (2^26 ns) and the exponent cap of the digest's rule.
inline constexpr int kCollectiveWindowBits = 26;
inline constexpr int kMaxCollectiveSampleShift = 20;

}  // namespace tracemill::formats
