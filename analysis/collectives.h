#pragma once
// Collectives across ranks (issue 35): the `collectives`,
// `collective_instances` and `rank_waits` tables of `--tables`.
//
// Two halves, so that memory stays fixed for any number of ranks:
// - CollectiveRows (the tap side, analysis/tables.h): each collective op an
//   input writes becomes a `collectives` row (its rank, process group,
//   `Seq`, kind, arrival = its start, end, bytes), streamed to SQLite with
//   the other per-input rows. Which records are an input's collectives is
//   the clock digest's rule (formats/common/collectives.h): its GPU
//   collective kernels if it has any, else its CPU records (`nccl:*`,
//   `gloo:*`, Horovod's), else `record_param_comms`.
// - MatchCollectives (the account stage, and `manifest merge` after the
//   shards' rows are joined): instances matched across ranks by a walk over
//   the rows in SQLite's sorted order (on disk: memory holds one instance),
//   then `instance` and `wait_ns` set, `collective_instances` written and
//   `rank_waits` summed from them.
//
// Matching: ops with Kineto's `Seq` are the same instance when they share
// (process group, Seq). Ops without it are matched by time, never by
// ordinal (a rank may miss instances): within a (process group, kind), in
// order of aligned end, an instance takes ops while they end within
// kMatchToleranceNs of its first and come from inputs it does not hold yet
// (a collective ends at nearly the same instant on every member). Times are
// the aligned ones (`--align-clocks`); rows of an input whose clock could
// not be aligned have `aligned` 0 and their own clock's times.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <sqlite3.h>

#include "absl/status/status.h"
#include "analysis/facts.h"
#include "formats/common/collectives.h"
#include "formats/common/event.h"
#include "formats/common/trace_data.h"
#include "formats/sqlite/sqlite_writer.h"

namespace tracemill::analysis {

// Ops without `Seq` ending within this of an instance's first end are
// candidates for it (ns): the clock alignment's own tolerance
// (merge::MatchOptions::tolerance_ns).
inline constexpr int64_t kMatchToleranceNs = 50'000;

// CanonicalCollective: the `collective` column: the kind lowercased, without
// `_`, `nccl:`/`gloo:` or Horovod's `NCCL_`/`MPI_`/`GLOO_` prefixes, and with
// the usual aliases merged (`all_reduce`, `ALLREDUCE`, `AllReduce` ->
// `allreduce`; `_allgather_base` -> `allgather`; `bcast` -> `broadcast`;
// `reduce_scatter_tensor` -> `reducescatter`; `send`, `recv` -> `sendrecv`).
std::string CanonicalCollective(std::string_view kind);

// DtypeBytes: bytes of one element of Kineto's `dtype` (c10's ScalarType
// names: `Float` 4, `BFloat16` 2, ...), 0 if unknown.
int DtypeBytes(std::string_view dtype);

// CollectiveBytes: the message size of a collective from its args
// (`In msg nelems`, `Out msg nelems`, `dtype`): the larger element count
// times the element size, which is NCCL's size S for allreduce (in = out),
// allgather (the gathered output) and reducescatter (the whole input).
// -1 when the args do not tell.
int64_t CollectiveBytes(std::string_view rest);

// BusBandwidthFactor: NCCL's bus bandwidth over algorithm bandwidth for a
// collective of `n` ranks (nccl-tests' doc/PERFORMANCE.md): allreduce
// 2(n-1)/n; allgather, reducescatter, alltoall (n-1)/n; broadcast, reduce,
// sendrecv 1; 0 for other kinds (no bus bandwidth).
double BusBandwidthFactor(std::string_view collective, int64_t n);

// CollectiveRows: one input's collectives -> `collectives` rows. Fed every
// complete span the input writes (its tap's Span, aligned ns).
class CollectiveRows {
 public:
  CollectiveRows(const InputFacts& r, const formats::TraceData* d);
  // Wants: `e` is one of the input's collectives.
  bool Wants(const formats::Event& e) const {
    return use_ && e.name < kind_.size() && d_->collective_of_name[e.name] == use_;
  }
  // Add adds the row of collective `e` to `b`. `ts`, `dur`: aligned ns;
  // `rest`: its members (a B/E pair's B); `step`: the rank's step holding
  // `ts`, -1 if none.
  void Add(const formats::Event& e, int64_t ts, int64_t dur, std::string_view rest, int64_t step,
           formats::RowBatch* b);

 private:
  const formats::TraceData* d_;
  int64_t input_;
  std::optional<int64_t> rank_;
  bool aligned_;
  uint8_t use_ = 0;                 // the CollectiveClass kept
  std::vector<std::string> kind_;   // name id -> canonical kind ("" unknown or from args)
  std::vector<uint8_t> kind_set_;
};

// MatchCollectives matches the `collectives` rows of `db` across ranks (see
// the file comment), sets their `instance` and `wait_ns` (the rows rewritten
// in input order, each input's in the order it wrote them) and rewrites
// `collective_instances` and `rank_waits`. Run inside a transaction.
// `notices`, if given, gets one line per oddity of the inputs' collectives
// (the job's notices: the terminal and the manifest), gathered by the same
// walk: instances that some ranks of their group do not have, a process
// group whose ranks give different sizes, ops that repeat their rank's `Seq`
// or arrived before an op of a lower `Seq` in their group, ranks that
// disagree on an instance's kind, message sizes on some instances only,
// instances on clocks not aligned; empty when all is well.
// Errors: SQLite's.
absl::Status MatchCollectives(sqlite3* db, std::vector<std::string>* notices = nullptr);

// LastArrival: an instance of two or more ranks as the overview marks it
// (pipeline/output/overview.h): from its first arrival to its last, on the
// row of the rank that arrived last.
struct LastArrival {
  int64_t instance = 0, ranks = 0;
  int64_t first_ns = 0, last_ns = 0;  // arrivals (aligned ns)
  std::optional<int64_t> seq, rank;   // rank: the last arrival's
  std::string collective, process_group;
};

// The overview's marks at most (the largest skews when there are more).
inline constexpr size_t kMaxLastArrivals = 16384;

// LastArrivals: after MatchCollectives, the instances of two or more ranks,
// in order of first arrival; the `max` largest skews if there are more
// (ties: the earlier). Empty on a SQLite error.
std::vector<LastArrival> LastArrivals(sqlite3* db, size_t max = kMaxLastArrivals);

}  // namespace tracemill::analysis
