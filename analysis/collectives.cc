// Collectives across ranks: the tap's rows and the match (collectives.h).
#include "analysis/collectives.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/schema.h"
#include "formats/common/json_text.h"
#include "formats/common/ts_text.h"

namespace tracemill::analysis {
namespace {

using formats::CollectiveClass;

// A JSON value's text: a string's body unescaped, else the token itself.
std::string ValueText(std::string_view v) {
  if (v.size() >= 2 && v.front() == '"') return formats::UnescapeJsonStringBody(v.substr(1, v.size() - 2));
  return std::string(v);
}

// An integer arg (`7` or `"7"`), nullopt if absent or not an integer.
std::optional<int64_t> IntValue(std::string_view rest, std::string_view key) {
  std::string_view v = formats::RestArgValue(rest, key);
  if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
  return formats::ParseInt64(v);
}

// The group's size: `Group size`, else the entries of `Process Group Ranks`
// ("[0, 1, 2]"); nullopt if neither tells.
std::optional<int64_t> GroupSize(std::string_view rest) {
  if (auto n = IntValue(rest, "Group size"); n && *n > 0) return n;
  const std::string ranks = ValueText(formats::RestArgValue(rest, "Process Group Ranks"));
  if (ranks.find_first_of("0123456789") == std::string::npos) return std::nullopt;
  return static_cast<int64_t>(std::count(ranks.begin(), ranks.end(), ',')) + 1;
}

bool KindHasPrefix(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

std::string CanonicalCollective(std::string_view kind) {
  for (std::string_view p : {"nccl:", "gloo:", "NCCL_", "MPI_", "GLOO_"})
    if (KindHasPrefix(kind, p) && kind.size() > p.size()) {
      kind.remove_prefix(p.size());
      break;
    }
  std::string k;
  for (char c : kind)
    if (c != '_') k.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  // The kind proper, without variants' tails (`allgatherbase`,
  // `reducescattertensorcoalesced`, `allreducecoalesced`).
  for (std::string_view base : {"allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "sendrecv", "barrier"})
    if (KindHasPrefix(k, base)) return std::string(base);
  if (k == "bcast") return "broadcast";
  if (k == "send" || k == "recv") return "sendrecv";
  if (KindHasPrefix(k, "reduce")) return "reduce";
  return k;
}

int DtypeBytes(std::string_view t) {
  if (t == "Float" || t == "Int" || t == "float" || t == "int" || t == "float32" || t == "int32" || t == "UInt32")
    return 4;
  if (t == "Double" || t == "Long" || t == "ComplexFloat" || t == "double" || t == "int64" || t == "UInt64") return 8;
  if (t == "Half" || t == "BFloat16" || t == "Short" || t == "ComplexHalf" || t == "half" || t == "bfloat16" ||
      t == "UInt16")
    return 2;
  if (t == "Byte" || t == "Char" || t == "Bool" || t == "uint8" || t == "int8" || KindHasPrefix(t, "Float8")) return 1;
  if (t == "ComplexDouble") return 16;
  return 0;
}

int64_t CollectiveBytes(std::string_view rest) {
  const std::optional<int64_t> in = IntValue(rest, "In msg nelems"), out = IntValue(rest, "Out msg nelems");
  const int size = DtypeBytes(ValueText(formats::RestArgValue(rest, "dtype")));
  if ((!in && !out) || size == 0) return -1;
  const int64_t n = std::max(in.value_or(0), out.value_or(0));
  return n >= 0 ? n * size : -1;
}

double BusBandwidthFactor(std::string_view c, int64_t n) {
  if (n <= 0) return 0;
  const double d = static_cast<double>(n);
  if (c == "allreduce") return 2 * (d - 1) / d;
  if (c == "allgather" || c == "reducescatter" || c == "alltoall") return (d - 1) / d;
  if (c == "broadcast" || c == "reduce" || c == "sendrecv") return 1;
  return 0;
}

CollectiveRows::CollectiveRows(const InputFacts& r, const formats::TraceData* d)
    : d_(d), input_(r.index), rank_(r.rank), aligned_(r.on_job_clock) {
  // The digest's rule: GPU kernels, else CPU records, else wrappers.
  for (uint8_t c : d->collective_of_name) {
    if (c == static_cast<uint8_t>(CollectiveClass::kGpuKernel)) use_ = c;
    else if (c == static_cast<uint8_t>(CollectiveClass::kCpuRecord) && use_ != static_cast<uint8_t>(CollectiveClass::kGpuKernel)) use_ = c;
    else if (c && !use_) use_ = c;
  }
  kind_.resize(d->collective_of_name.size());
  kind_set_.assign(d->collective_of_name.size(), 0);
}

void CollectiveRows::Add(const formats::Event& e, int64_t ts, int64_t dur, std::string_view rest, int64_t step,
                         formats::RowBatch* b) {
  const auto cls = static_cast<CollectiveClass>(use_);
  // Kineto's `Collective name` where present (the op the program called:
  // an all_to_all runs SendRecv kernels), else the kind in a kernel's name
  // (or a CPU record's name itself).
  std::string kind = CanonicalCollective(ValueText(formats::RestArgValue(rest, "Collective name")));
  if (kind.empty()) {
    if (!kind_set_[e.name]) {
      const std::string name = formats::UnescapeJsonStringBody(d_->strings[e.name]);
      kind_[e.name] = CanonicalCollective(
          cls == CollectiveClass::kCpuWrapper ? name : formats::CollectiveKind(cls, name, {}));
      kind_set_[e.name] = 1;
    }
    kind = kind_[e.name];
  }
  b->Null();  // instance: MatchCollectives
  b->Text(ValueText(formats::RestArgValue(rest, "Process Group Name")));
  if (auto seq = IntValue(rest, "Seq"); seq && *seq >= 0) b->Int(*seq); else b->Null();
  b->Text(kind);
  if (rank_) b->Int(*rank_); else b->Null();
  b->Int(ts);
  b->Int(ts + std::max<int64_t>(dur, 0));
  b->Null();  // wait_ns: MatchCollectives
  if (const int64_t bytes = CollectiveBytes(rest); bytes >= 0) b->Int(bytes); else b->Null();
  b->Int(aligned_);
  b->Int(input_);
  if (auto n = GroupSize(rest)) b->Int(*n); else b->Null();
  if (step >= 0) b->Int(step); else b->Null();
}

namespace {

// One `collectives` row as the match reads it.
struct Op {
  int64_t row = 0, input = 0;
  std::optional<int64_t> rank;
  std::string group;
  std::optional<int64_t> seq;
  std::string collective;
  int64_t arrival = 0, end = 0;
  std::optional<int64_t> bytes, group_size, step;
  int64_t aligned = 1;
};

class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st_, nullptr) != SQLITE_OK) st_ = nullptr;
  }
  ~Statement() { sqlite3_finalize(st_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  sqlite3_stmt* get() const { return st_; }
  absl::Status Error(const char* what) const {
    return absl::InternalError(absl::StrCat("collectives: ", what, ": ", sqlite3_errmsg(db_)));
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* st_ = nullptr;
};

std::optional<int64_t> ColumnInt(sqlite3_stmt* st, int i) {
  if (sqlite3_column_type(st, i) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_int64(st, i);
}
std::string ColumnText(sqlite3_stmt* st, int i) {
  const unsigned char* t = sqlite3_column_text(st, i);
  return t ? std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(st, i))) : "";
}

void BindOpt(sqlite3_stmt* st, int i, const std::optional<int64_t>& v) {
  if (v) sqlite3_bind_int64(st, i, *v); else sqlite3_bind_null(st, i);
}

// GroupFacts: what the notices need of one process group, gathered by the
// walks (memory: a few numbers per group).
struct GroupFacts {
  std::optional<int64_t> size;              // the first `group_size` seen
  bool sizes_differ = false;                // another one seen
  int64_t most_ranks = 0;                   // the most ranks of any instance
  std::map<int64_t, int64_t> by_ranks;      // ranks -> instances with that many
};

// RankWaitFacts: one rank's `rank_waits` row, summed over its instances.
struct RankWaitFacts {
  int64_t instances = 0, times_last = 0, caused = 0, waited = 0;
};

// SeqFacts: of one input in the process group the Seq walk is in.
struct SeqFacts {
  std::optional<int64_t> seq;   // its previous op's
  int64_t arrival = INT64_MIN;  // the latest arrival of its ops so far
};

// Matcher: walks rows in an order where each instance's rows are adjacent,
// cuts instances, and writes them to the temp tables tm_cw (row -> cluster,
// wait) and tm_ci (cluster -> the instance's columns). On the way it sums
// what `rank_waits` and the notices need, so that neither reads the 1 M
// rows of a large job again.
class Matcher {
 public:
  explicit Matcher(sqlite3* db)
      : db_(db),
        row_(db, "INSERT INTO temp.tm_cw VALUES (?,?,?)"),
        inst_(db, "INSERT INTO temp.tm_ci VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)") {}

  // Walk reads `sql`'s rows (Op's columns in order); `same(first, op)`:
  // whether `op` may join the instance whose first row is `first`.
  template <typename Same>
  absl::Status Walk(const std::string& sql, Same same) {
    if (!row_.get() || !inst_.get()) return row_.Error("prepare");
    Statement st(db_, sql);
    if (!st.get()) return st.Error("prepare");
    int rc;
    while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) {
      Op op = Read(st.get());
      NoteOp(op);
      const bool joins = !ops_.empty() && same(ops_.front(), op) &&
                         std::none_of(ops_.begin(), ops_.end(), [&](const Op& o) { return o.input == op.input; });
      if (!joins) {
        if (absl::Status s = Cut(); !s.ok()) return s;
      }
      ops_.push_back(std::move(op));
    }
    if (rc != SQLITE_DONE) return st.Error("read");
    return Cut();
  }

  // WriteRankWaits: the `rank_waits` rows, by rank (no rank first).
  absl::Status WriteRankWaits() {
    Statement ins(db_, "INSERT INTO main.rank_waits VALUES (?,?,?,?,?)");
    if (!ins.get()) return ins.Error("prepare");
    for (const auto& [rank, w] : ranks_) {
      sqlite3_stmt* s = ins.get();
      BindOpt(s, 1, rank);
      sqlite3_bind_int64(s, 2, w.instances);
      sqlite3_bind_int64(s, 3, w.times_last);
      sqlite3_bind_int64(s, 4, w.caused);
      sqlite3_bind_int64(s, 5, w.waited);
      if (sqlite3_step(s) != SQLITE_DONE) return ins.Error("write");
      sqlite3_reset(s);
    }
    return absl::OkStatus();
  }

  // Notices: the lines MatchCollectives' comment lists.
  std::vector<std::string> Notices() const {
    std::vector<std::string> out;
    const int64_t total = next_cluster_;
    if (total == 0) return out;
    int64_t missing = 0, disagree = 0;
    for (const auto& [name, g] : groups_) {
      // A group's size: its `Group size` (the largest given), else the most
      // ranks any of its instances has.
      const int64_t size = std::max(g.size.value_or(0), g.most_ranks);
      for (const auto& [ranks, n] : g.by_ranks) missing += ranks < size ? n : 0;
      disagree += g.sizes_differ;
    }
    if (missing)
      out.push_back(absl::StrCat("collectives: ", missing, " of ", total,
                                 " instances are missing on some ranks of their process group (sampled traces, "
                                 "windows that start at different steps, or files cut short): their skew and waits "
                                 "count only the ranks that have them"));
    if (disagree)
      out.push_back(absl::StrCat("collectives: ", disagree, " process group", disagree == 1 ? "'s" : "s'",
                                 " ranks disagree on its size (Group size, Process Group Ranks): different jobs' "
                                 "files, or ranks of different runs?"));
    if (seq_odd_)
      out.push_back(absl::StrCat("collectives: ", seq_odd_,
                                 seq_odd_ == 1 ? " op repeats or goes back" : " ops repeat or go back",
                                 " in its rank's Seq (in arrival order): matched by "
                                 "(process group, Seq) all the same, one op per rank and instance"));
    if (kinds_differ_)
      out.push_back(absl::StrCat("collectives: at ", kinds_differ_, kinds_differ_ == 1 ? " instance" : " instances",
                                 " the ranks disagree on the collective's kind (the first rank's is listed)"));
    if (sized_ > 0 && sized_ < total)
      out.push_back(absl::StrCat("collectives: ", total - sized_, " of ", total,
                                 " instances have no message size (In/Out msg nelems and dtype): no bandwidth for them"));
    if (unaligned_)
      out.push_back(absl::StrCat("collectives: ", unaligned_, " of ", total,
                                 " instances involve ranks whose clock is not aligned with the job's (aligned = 0): "
                                 "their skews and waits mix clock offsets with late arrivals (see --align-clocks)"));
    return out;
  }

 private:
  static Op Read(sqlite3_stmt* st) {
    Op o;
    o.row = sqlite3_column_int64(st, 0);
    o.input = sqlite3_column_int64(st, 1);
    o.rank = ColumnInt(st, 2);
    o.group = ColumnText(st, 3);
    o.seq = ColumnInt(st, 4);
    o.collective = ColumnText(st, 5);
    o.arrival = sqlite3_column_int64(st, 6);
    o.end = sqlite3_column_int64(st, 7);
    o.bytes = ColumnInt(st, 8);
    o.group_size = ColumnInt(st, 9);
    o.aligned = sqlite3_column_int64(st, 10);
    o.step = ColumnInt(st, 11);
    return o;
  }

  // NoteOp: the group's sizes, and whether `op` repeats its input's Seq or
  // arrived before an op of a lower Seq (the Seq walk reads a group's ops
  // by Seq, then arrival).
  void NoteOp(const Op& op) {
    GroupFacts& g = Group(op.group);
    if (op.group_size) {
      if (!g.size) g.size = op.group_size;
      else if (*g.size != *op.group_size) g.sizes_differ = true, g.size = std::max(*g.size, *op.group_size);
    }
    if (!op.seq) return;
    if (op.group != seq_group_) {
      seq_group_ = op.group;
      seq_inputs_.clear();
    }
    SeqFacts& f = seq_inputs_[op.input];
    if ((f.seq && *f.seq == *op.seq) || op.arrival < f.arrival) ++seq_odd_;
    f.seq = op.seq;
    f.arrival = std::max(f.arrival, op.arrival);
  }

  GroupFacts& Group(const std::string& name) {
    if (last_group_ == nullptr || last_group_name_ != name) {
      last_group_ = &groups_[name];
      last_group_name_ = name;
    }
    return *last_group_;
  }

  // Cut writes the instance held in ops_ and starts an empty one.
  absl::Status Cut() {
    if (ops_.empty()) return absl::OkStatus();
    const int64_t cluster = next_cluster_++;
    int64_t first = INT64_MAX, last = INT64_MIN, latency = INT64_MAX, aligned = 1;
    std::optional<int64_t> last_rank, bytes, group_size, step;
    bool kinds_differ = false;
    for (const Op& o : ops_) {
      first = std::min(first, o.arrival);
      // The last arrival; on a tie the lowest rank. Its step is the instance's.
      if (o.arrival > last || (o.arrival == last && o.rank && (!last_rank || *o.rank < *last_rank))) {
        last = o.arrival;
        last_rank = o.rank;
        step = o.step;
      }
      latency = std::min(latency, o.end - o.arrival);
      if (o.bytes) bytes = std::max(bytes.value_or(0), *o.bytes);
      if (o.group_size) group_size = std::max(group_size.value_or(0), *o.group_size);
      aligned = std::min(aligned, o.aligned);
      kinds_differ |= o.collective != ops_.front().collective;
    }
    const int64_t ranks = static_cast<int64_t>(ops_.size());
    int64_t waits = 0;
    for (const Op& o : ops_) {
      sqlite3_stmt* s = row_.get();
      sqlite3_bind_int64(s, 1, o.row);
      sqlite3_bind_int64(s, 2, cluster);
      sqlite3_bind_int64(s, 3, last - o.arrival);
      if (sqlite3_step(s) != SQLITE_DONE) return row_.Error("write");
      sqlite3_reset(s);
      RankWaitFacts& w = ranks_[o.rank];
      ++w.instances;
      w.waited += last - o.arrival;
      waits += last - o.arrival;
      if (ranks > 1 && o.rank == last_rank) ++w.times_last;
    }
    // The waiting the last arrival made the others do (instances of 2+ ranks).
    if (ranks > 1) ranks_[last_rank].caused += waits;
    GroupFacts& g = Group(ops_.front().group);
    g.most_ranks = std::max(g.most_ranks, ranks);
    ++g.by_ranks[ranks];
    kinds_differ_ += kinds_differ;
    sized_ += bytes.has_value();
    unaligned_ += aligned == 0;
    const Op& f = ops_.front();
    sqlite3_stmt* s = inst_.get();
    sqlite3_bind_int64(s, 1, cluster);
    sqlite3_bind_text(s, 2, f.group.data(), static_cast<int>(f.group.size()), SQLITE_TRANSIENT);
    BindOpt(s, 3, f.seq);
    sqlite3_bind_text(s, 4, f.collective.data(), static_cast<int>(f.collective.size()), SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 5, ranks);
    sqlite3_bind_int64(s, 6, first);
    sqlite3_bind_int64(s, 7, last);
    BindOpt(s, 8, last_rank);
    sqlite3_bind_int64(s, 9, last - first);
    sqlite3_bind_int64(s, 10, latency);
    BindOpt(s, 11, bytes);
    // Bandwidths: bytes per ns are GB/s (10^9 bytes a second).
    if (bytes && latency > 0) {
      const double algbw = static_cast<double>(*bytes) / static_cast<double>(latency);
      const double factor = BusBandwidthFactor(f.collective, std::max(ranks, group_size.value_or(0)));
      sqlite3_bind_double(s, 12, algbw);
      if (factor > 0) sqlite3_bind_double(s, 13, algbw * factor); else sqlite3_bind_null(s, 13);
    } else {
      sqlite3_bind_null(s, 12);
      sqlite3_bind_null(s, 13);
    }
    sqlite3_bind_int64(s, 14, aligned);
    BindOpt(s, 15, step);
    if (sqlite3_step(s) != SQLITE_DONE) return inst_.Error("write");
    sqlite3_reset(s);
    ops_.clear();
    return absl::OkStatus();
  }

  sqlite3* db_;
  Statement row_, inst_;
  std::vector<Op> ops_;  // the instance being gathered
  int64_t next_cluster_ = 0;
  std::map<std::string, GroupFacts> groups_;
  GroupFacts* last_group_ = nullptr;  // groups_[last_group_name_] (map nodes stay put)
  std::string last_group_name_;
  std::map<std::optional<int64_t>, RankWaitFacts> ranks_;  // no rank first, as SQLite orders NULL
  std::string seq_group_;
  std::unordered_map<int64_t, SeqFacts> seq_inputs_;  // input -> its Seq so far, in seq_group_
  int64_t seq_odd_ = 0, kinds_differ_ = 0, sized_ = 0, unaligned_ = 0;
};

absl::Status Exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) == SQLITE_OK) return absl::OkStatus();
  absl::Status s = absl::InternalError(absl::StrCat("collectives: ", err ? err : "error"));
  sqlite3_free(err);
  return s;
}

}  // namespace

std::vector<LastArrival> LastArrivals(sqlite3* db, size_t max) {
  std::vector<LastArrival> out;
  Statement st(db, absl::StrCat("SELECT instance, ranks, first_arrival_ns, last_arrival_ns, seq, last_rank, collective, "
                                "process_group FROM (SELECT * FROM collective_instances WHERE ranks > 1 ORDER BY "
                                "skew_ns DESC, instance LIMIT ", max, ") ORDER BY first_arrival_ns, instance"));
  if (!st.get()) return out;
  while (sqlite3_step(st.get()) == SQLITE_ROW) {
    LastArrival& a = out.emplace_back();
    a.instance = sqlite3_column_int64(st.get(), 0);
    a.ranks = sqlite3_column_int64(st.get(), 1);
    a.first_ns = sqlite3_column_int64(st.get(), 2);
    a.last_ns = sqlite3_column_int64(st.get(), 3);
    a.seq = ColumnInt(st.get(), 4);
    a.rank = ColumnInt(st.get(), 5);
    a.collective = ColumnText(st.get(), 6);
    a.process_group = ColumnText(st.get(), 7);
  }
  return out;
}

absl::Status MatchCollectives(sqlite3* db, std::vector<std::string>* notices) {
  if (absl::Status s = Exec(db,
                            "DROP TABLE IF EXISTS temp.tm_cw; DROP TABLE IF EXISTS temp.tm_ci; "
                            "DROP TABLE IF EXISTS temp.tm_num; DROP TABLE IF EXISTS temp.tm_new; "
                            "CREATE TEMP TABLE tm_cw (row INTEGER PRIMARY KEY, cluster INTEGER, wait INTEGER); "
                            "CREATE TEMP TABLE tm_ci (cluster INTEGER PRIMARY KEY, process_group TEXT, seq INTEGER, "
                            "collective TEXT, ranks INTEGER, first_arrival_ns INTEGER, last_arrival_ns INTEGER, "
                            "last_rank INTEGER, skew_ns INTEGER, latency_ns INTEGER, bytes INTEGER, algbw_gbps REAL, "
                            "busbw_gbps REAL, aligned INTEGER, step INTEGER)");
      !s.ok())
    return s;
  Matcher m(db);
  const std::string cols =
      "SELECT rowid, \"input\", rank, process_group, seq, collective, arrival_ns, end_ns, bytes, group_size, aligned, "
      "step "
      "FROM main.collectives WHERE ";
  // By Seq: one instance per (process group, Seq).
  absl::Status s = m.Walk(cols + "seq IS NOT NULL ORDER BY process_group, seq, arrival_ns, \"input\", rowid",
                          [](const Op& f, const Op& o) { return o.group == f.group && o.seq == f.seq; });
  if (!s.ok()) return s;
  // By time: within a (process group, kind), ends within the tolerance.
  s = m.Walk(cols + "seq IS NULL ORDER BY process_group, collective, end_ns, \"input\", rowid", [](const Op& f, const Op& o) {
    return o.group == f.group && o.collective == f.collective && o.end - f.end <= kMatchToleranceNs;
  });
  if (!s.ok()) return s;
  // Instances numbered from 0 by first arrival; the rows rewritten in input
  // order (each input's in the order it wrote them) with their instance and
  // wait: one pass that writes each row once (an UPDATE of a million rows in
  // place cost more than the whole walk).
  s = Exec(db,
           "CREATE TEMP TABLE tm_num (cluster INTEGER PRIMARY KEY, instance INTEGER); "
           "INSERT INTO temp.tm_num SELECT cluster, ROW_NUMBER() OVER (ORDER BY first_arrival_ns, process_group, seq, "
           "collective, cluster) - 1 FROM temp.tm_ci; "
           "CREATE TEMP TABLE tm_new AS SELECT n.instance AS instance, c.process_group AS process_group, c.seq AS seq, "
           "c.collective AS collective, c.rank AS rank, c.arrival_ns AS arrival_ns, c.end_ns AS end_ns, w.wait AS wait_ns, "
           "c.bytes AS bytes, c.aligned AS aligned, c.\"input\" AS \"input\", c.group_size AS group_size, c.step AS step "
           "FROM main.collectives c JOIN temp.tm_cw w ON w.row = c.rowid JOIN temp.tm_num n ON n.cluster = w.cluster "
           "ORDER BY c.\"input\", c.rowid; "
           "DELETE FROM main.collectives; "
           "INSERT INTO main.collectives SELECT * FROM temp.tm_new ORDER BY rowid; "
           "DELETE FROM main.collective_instances; "
           "INSERT INTO main.collective_instances SELECT n.instance, c.process_group, c.seq, c.collective, c.ranks, "
           "c.first_arrival_ns, c.last_arrival_ns, c.last_rank, c.skew_ns, c.latency_ns, c.bytes, c.algbw_gbps, "
           "c.busbw_gbps, c.aligned, c.step FROM temp.tm_ci c JOIN temp.tm_num n ON n.cluster = c.cluster ORDER BY n.instance; "
           "DROP TABLE temp.tm_cw; DROP TABLE temp.tm_ci; DROP TABLE temp.tm_num; DROP TABLE temp.tm_new; "
           "DELETE FROM main.rank_waits");
  if (!s.ok()) return s;
  // Per rank: instances of two or more ranks it was last at, and the
  // waiting it caused there (the others' waits), beside its own waits.
  s = m.WriteRankWaits();
  if (s.ok() && notices) *notices = m.Notices();
  return s;
}

}  // namespace tracemill::analysis
