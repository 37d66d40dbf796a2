// TablesCollector: the database, the per-input aggregates and the account
// stage's rows (tables.h).
#include <sqlite3.h>

#include <unistd.h>

#include <algorithm>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/tables.h"
#include "analysis/tables_text.h"
#include "formats/common/json_text.h"
#include "formats/common/status_macros.h"

namespace tracemill::analysis {
namespace {

void OptInt(const std::optional<int64_t>& v, formats::RowBatch* b) {
  if (v) b->Int(*v); else b->Null();
}

// The first two cells of every per-input row: `input`, `rank`.
void InputCells(const InputFacts& r, formats::RowBatch* b) {
  b->Int(r.index);
  OptInt(r.rank, b);
}

// The mask of exactly-running kernel types -> HTA's name for it
// ("COMPUTATION overlapping COMMUNICATION", breakdown_analysis.py:543-556).
std::string MaskName(int mask) {
  static const char* kNames[] = {"COMPUTATION", "COMMUNICATION", "MEMORY"};
  std::vector<std::string> parts;
  for (int t = 0; t < kKernelTypes; ++t)
    if (mask & (1 << t)) parts.push_back(kNames[t]);
  return absl::StrJoin(parts, " overlapping ");
}

// IdleGapRows: idle_gaps, per stream in HTA's order (stream_order 0, 1,
// ..): its first kernel (no gap: gap_us NULL, HTA's NaN), then its gaps by
// (host_wait, gap_us) with their count.
void IdleGapRows(const InputFacts& r, const HtaResult& h, formats::RowBatch* b) {
  int64_t order = 0;
  for (const IdleGaps& s : h.idle) {
    auto row = [&](bool host_wait) {
      InputCells(r, b);
      b->Int(s.stream);
      b->Int(order);
      b->Int(host_wait);
    };
    row(false);
    b->Null();
    b->Int(1);
    b->Text(h.stream_dtype);
    for (const IdleGaps::Gap& g : s.gaps) {
      row(g.host_wait);
      b->Int(g.gap_us);
      b->Int(static_cast<int64_t>(g.count));
      b->Text(h.stream_dtype);
    }
    ++order;
  }
}

void HtaRows(const InputFacts& r, const HtaResult& h, std::vector<formats::RowBatch>* out) {
  auto& tb = (*out)[0];
  InputCells(r, &tb);
  tb.Real(h.idle_us);
  tb.Real(h.compute_us);
  tb.Real(h.non_compute_us);
  tb.Real(h.kernel_us);
  for (double x : {h.idle_us, h.compute_us, h.non_compute_us}) {
    if (h.kernel_us > 0) tb.Real(HtaPctg(x, h.kernel_us)); else tb.Null();
  }
  tb.Int(h.idle_ns);
  tb.Int(h.compute_ns);
  tb.Int(h.non_compute_ns);
  tb.Int(h.kernel_ns);
  tb.Int(static_cast<int64_t>(h.device_rows));
  tb.Int(h.iteration_filter);
  tb.Int(h.rounded);
  auto& kb = (*out)[1];
  for (const KernelRow& k : h.kernels) {
    InputCells(r, &kb);
    kb.Text(KernelTypeName(k.type));
    kb.Text(k.name);
    for (double v : {k.sum_us, k.max_us, k.min_us, k.stddev, k.mean_us}) kb.Real(v);
    kb.Int(static_cast<int64_t>(k.count));
    kb.Int(k.sum_ns);
    // The true mean per kernel (HTA's `mean (us)` is a mean over names).
    kb.Int(k.count ? FloorDiv(k.sum_ns, static_cast<int64_t>(k.count)) : 0);
  }
  auto& kt = (*out)[2];
  double total = 0;
  for (int m = 1; m < (1 << kKernelTypes); ++m) total += h.exact_us[m];
  for (int m = 1; m < (1 << kKernelTypes); ++m) {
    InputCells(r, &kt);
    kt.Text(MaskName(m));
    kt.Real(h.exact_us[m]);
    if (total > 0) kt.Real(HtaPctg(h.exact_us[m], total, 1)); else kt.Null();
    kt.Int(h.exact_ns[m]);
  }
  auto& co = (*out)[3];
  InputCells(r, &co);
  if (h.comm_us > 0) co.Real(HtaPctg(h.comm_comp_overlap_us, h.comm_us)); else co.Null();
  co.Int(h.comm_ns);
  co.Int(h.comp_ns);
  co.Int(h.comm_comp_overlap_ns);
  auto& it = (*out)[4];
  for (const auto& s : h.streams) {
    InputCells(r, &it);
    it.Int(s.stream);
    it.Int(s.span_ns);
    it.Int(s.busy_ns);
    it.Int(s.span_ns - s.busy_ns);
    it.Int(static_cast<int64_t>(s.rows));
  }
  if (!h.streams.empty()) {  // the rank: every stream merged (HTA's idle)
    InputCells(r, &it);
    it.Null();
    it.Int(h.kernel_ns);
    it.Int(h.kernel_ns - h.idle_ns);
    it.Int(h.idle_ns);
    it.Int(static_cast<int64_t>(h.device_rows));
  }
  IdleGapRows(r, h, &(*out)[5]);
}

}  // namespace

std::string PartialTablesName(const std::string& file_name) { return absl::StrCat(".", file_name, ".partial"); }

namespace {

// The meta keys of a partial file: the job, and one row per input whose
// rows a commit point committed. Finish removes them.
constexpr char kPartialFingerprint[] = "partial_fingerprint";
constexpr char kPartialInput[] = "partial_input";

// InputRows: input `r`'s steps (those in `window`) and, if it was tapped
// (`t`), its phases and HTA breakdowns.
std::vector<formats::RowBatch> InputRows(const InputFacts& r, const InputTables* t, const formats::TimeWindow& window) {
  std::vector<formats::RowBatch> out;
  formats::RowBatch& steps = out.emplace_back(TableIndex(Table::kSteps));
  for (const formats::StepSpan& s : r.steps) {
    // A follow window (by start) holds the steps that start in it, so a step
    // crossing its edge is in the job's tables once; --start/--end keep
    // the steps that overlap the window, as they keep events.
    if (window.by_start ? s.start_ns < window.start_ns || s.start_ns >= window.end_ns
                        : s.end_ns < window.start_ns || s.start_ns > window.end_ns)
      continue;
    InputCells(r, &steps);
    steps.Int(s.step);
    steps.Int(s.start_ns);
    steps.Int(s.end_ns);
    steps.Int(s.end_ns - s.start_ns);
    steps.Int(FloorDiv(s.start_ns, 1000));
    steps.Int(FloorDiv(s.end_ns, 1000));
    AppendIsoTime(s.start_ns, &steps);
  }
  if (!t) return out;
  formats::RowBatch& phases = out.emplace_back(TableIndex(Table::kPhaseByStep));
  for (const auto& [key, v] : t->phases) {
    InputCells(r, &phases);
    phases.Int(key.first);
    phases.Text(key.second);
    phases.Int(v.first);
    phases.Int(static_cast<int64_t>(v.second));
  }
  formats::RowBatch& ops = out.emplace_back(TableIndex(Table::kOpSummary));
  for (const OpSummaryRow& o : t->ops) {
    InputCells(r, &ops);
    ops.Int(o.iteration);
    ops.Text(o.gpu ? "gpu" : "cpu");
    ops.Text(o.cat);
    ops.Text(o.name);
    ops.Int(static_cast<int64_t>(o.counts));
    ops.Int(o.total_us);
    ops.Int(o.total_ns);
    ops.Text(t->hta_dur_dtype);
  }
  if (!t->hta.has_device_rows) return out;  // HTA raises IndexError: no row
  std::vector<formats::RowBatch> hta = {
      formats::RowBatch(TableIndex(Table::kTemporalBreakdown)), formats::RowBatch(TableIndex(Table::kKernelBreakdown)),
      formats::RowBatch(TableIndex(Table::kKernelTypeBreakdown)), formats::RowBatch(TableIndex(Table::kCommCompOverlap)),
      formats::RowBatch(TableIndex(Table::kIdleTime)), formats::RowBatch(TableIndex(Table::kIdleGaps))};
  HtaRows(r, t->hta, &hta);
  for (auto& h : hta) out.push_back(std::move(h));
  return out;
}

formats::RowBatch MetaRow(std::string_view key, std::string_view value) {
  formats::RowBatch m(TableIndex(Table::kMeta));
  m.Text(key);
  m.Text(value);
  return m;
}

// SortAggregates rewrites the per-input aggregate tables (steps ..
// idle_time_breakdown) in input order, each input's rows in the order they
// were written: Done writes them as outputs complete, carried ones first.
absl::Status SortAggregates(formats::SqliteWriter* w) {
  for (Table t : PerInputTables()) {
    if (TableIndex(t) < TableIndex(Table::kSteps)) continue;  // per-event rows keep the merge's order
    if (t == Table::kCollectives) continue;                     // MatchCollectives rewrites it in this order
    const std::string name = absl::StrCat("main.\"", TableName(t), "\"");
    TM_RETURN_IF_ERROR(w->Exec(absl::StrCat("CREATE TEMP TABLE tm_sorted AS SELECT * FROM ", name,
                                            " ORDER BY \"input\", rowid; DELETE FROM ", name, "; INSERT INTO ", name,
                                            " SELECT * FROM temp.tm_sorted ORDER BY rowid; DROP TABLE temp.tm_sorted")));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<TablesCollector>> TablesCollector::Start(const TablesStart& how) {
  auto c = std::unique_ptr<TablesCollector>(new TablesCollector);
  c->mode_ = how.mode;
  c->hta_last_step_ = how.hta_last_step;
  formats::SqliteWriter::Options o;
  o.final_path = how.out_dir + "/" + how.file_name;
  if (how.resumable) o.work_path = how.out_dir + "/" + PartialTablesName(how.file_name);
  o.tmp_dir = how.tmp_dir;
  o.cache_bytes = how.cache_bytes;
  o.queue_bytes = how.queue_bytes;
  o.tables = TableSpecs();
  o.views = ViewSqls();
  TablesCollector* self = c.get();
  o.seed = [self, &how](formats::SqliteWriter& w) { return self->Seed(w, how); };
  TM_ASSIGN_OR_RETURN(c->writer_, formats::SqliteWriter::Create(std::move(o)));
  return c;
}

absl::Status TablesCollector::Seed(formats::SqliteWriter& w, const TablesStart& how) {
  if (how.resumable) TM_RETURN_IF_ERROR(w.Insert(MetaRow(kPartialFingerprint, how.fingerprint)));
  if (how.carried.empty() || how.previous.empty()) return w.Exec("COMMIT; BEGIN");
  // ATTACH and DETACH are refused inside a transaction.
  TM_RETURN_IF_ERROR(w.Exec("COMMIT"));
  TM_RETURN_IF_ERROR(w.AttachDatabase(how.previous, "prev"));
  TM_RETURN_IF_ERROR(w.Exec("BEGIN"));
  TM_RETURN_IF_ERROR(CopyInputRows(&w, "prev", how.carried));
  for (int64_t i : how.carried) {
    done_.insert(i);
    if (how.resumable) TM_RETURN_IF_ERROR(w.Insert(MetaRow(kPartialInput, absl::StrCat(i))));
  }
  TM_RETURN_IF_ERROR(w.Exec("COMMIT"));
  TM_RETURN_IF_ERROR(w.Exec("DETACH prev"));
  return w.Exec("BEGIN");
}

void TablesCollector::Keep(int64_t index, InputTables t) {
  std::lock_guard<std::mutex> lock(mu_);
  inputs_[index] = std::move(t);
}

void TablesCollector::Done(const std::vector<InputFacts>& rs, const formats::TimeWindow& window) {
  for (const InputFacts& r : rs) {
    std::vector<formats::RowBatch> rows;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!done_.insert(r.index).second) continue;
      auto it = inputs_.find(r.index);
      rows = InputRows(r, it == inputs_.end() ? nullptr : &it->second, window);
    }
    rows.push_back(MetaRow(kPartialInput, absl::StrCat(r.index)));
    for (auto& b : rows) writer_->Push(&b);
  }
  writer_->PushCommitPoint();
}

absl::Status TablesCollector::WriteRecords(const JobFacts& s) {
  formats::RowBatch in(TableIndex(Table::kInputs));
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    const InputFacts& r = s.inputs[k];
    if (r.owner_shard >= 0) continue;
    in.Int(r.index >= 0 ? r.index : static_cast<int64_t>(k));
    in.Text(r.path);
    in.Text(r.format);
    OptInt(r.rank, &in);
    in.Text(r.label);
    if (!r.node.empty()) in.Text(r.node); else in.Null();
    if (!r.output.empty()) in.Text(r.output); else in.Null();
    in.Int(static_cast<int64_t>(r.events_read));
    in.Int(static_cast<int64_t>(r.events_written));
    in.Int(static_cast<int64_t>(r.dropped));
    if (r.has_span) in.Int(r.first_ts_ns), in.Int(r.last_ts_ns); else in.Null(), in.Null();
    in.Int(r.clock_offset_ns);
    in.Int(r.clock_applied);
    if (r.error) in.Text(*r.error); else in.Null();
    in.Int(r.reused);
  }
  TM_RETURN_IF_ERROR(writer_->Insert(in));
  formats::RowBatch out(TableIndex(Table::kOutputs));
  for (const OutputFacts& o : s.outputs) {
    out.Text(o.path);
    out.Text(absl::StrJoin(o.ranks, ","));
    out.Int(static_cast<int64_t>(o.inputs));
    out.Int(static_cast<int64_t>(o.events));
    out.Int(static_cast<int64_t>(o.bytes));
    out.Int(o.crc32);
    out.Int(static_cast<int64_t>(o.parts));
    if (!o.error.empty()) out.Text(o.error); else out.Null();
    out.Int(o.reused);
  }
  return writer_->Insert(out);
}

absl::Status TablesCollector::Finish(const JobFacts& summary,
                                     const std::vector<std::pair<std::string, std::string>>& meta,
                                     const formats::TimeWindow& window) {
  TM_RETURN_IF_ERROR(writer_->Drain());
  for (const InputFacts& r : summary.inputs) {
    if (r.owner_shard >= 0 || r.reused || r.skipped || done_.count(r.index)) continue;
    auto it = inputs_.find(r.index);
    for (const auto& b : InputRows(r, it == inputs_.end() ? nullptr : &it->second, window))
      TM_RETURN_IF_ERROR(writer_->Insert(b));
  }
  TM_RETURN_IF_ERROR(SortAggregates(writer_.get()));
  TM_RETURN_IF_ERROR(MatchCollectives(writer_->db(), &notices_));
  last_arrivals_ = LastArrivals(writer_->db());
  TM_RETURN_IF_ERROR(writer_->Exec(absl::StrCat("DELETE FROM main.tables_meta WHERE key IN ('", kPartialFingerprint,
                                                "', '", kPartialInput, "')")));
  TM_RETURN_IF_ERROR(WriteJobKernelTypes(writer_.get()));
  TM_RETURN_IF_ERROR(WriteRecords(summary));
  formats::RowBatch m(TableIndex(Table::kMeta));
  for (const auto& [k, v] : meta) m.Text(k), m.Text(v);
  TM_RETURN_IF_ERROR(writer_->Insert(m));
  breakdown_json_ = absl::StrCat(TemporalBreakdownJson(writer_->db()), ReportTablesJson(writer_->db()));
  return writer_->Commit();
}

absl::Status CopyInputRows(formats::SqliteWriter* writer, const std::string& alias, const std::vector<int64_t>& inputs) {
  // The indexes are ours (integers), never input text.
  const std::string where =
      inputs.empty() ? "\"input\" IS NOT NULL" : absl::StrCat("\"input\" IN (", absl::StrJoin(inputs, ","), ")");
  for (Table t : PerInputTables())
    TM_RETURN_IF_ERROR(writer->Exec(absl::StrCat("INSERT INTO main.\"", TableName(t), "\" SELECT * FROM \"", alias,
                                                 "\".\"", TableName(t), "\" WHERE ", where)));
  return absl::OkStatus();
}

absl::Status WriteJobKernelTypes(formats::SqliteWriter* writer) {
  sqlite3_stmt* st = nullptr;
  int rc = sqlite3_prepare_v2(writer->db(),
                              "SELECT kernel_type, SUM(\"sum\"), SUM(sum_ns) FROM kernel_type_breakdown "
                              "WHERE \"input\" IS NOT NULL GROUP BY kernel_type",
                              -1, &st, nullptr);
  if (rc != SQLITE_OK) return absl::InternalError(sqlite3_errmsg(writer->db()));
  std::vector<std::tuple<std::string, double, int64_t>> rows;
  double total = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    rows.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), sqlite3_column_double(st, 1),
                      sqlite3_column_int64(st, 2));
    total += std::get<1>(rows.back());
  }
  sqlite3_finalize(st);
  formats::RowBatch b(TableIndex(Table::kKernelTypeBreakdown));
  for (const auto& [type, sum, ns] : rows) {
    b.Null();
    b.Null();
    b.Text(type);
    b.Real(sum);
    if (total > 0) b.Real(HtaPctg(sum, total, 1)); else b.Null();
    b.Int(ns);
  }
  return writer->Insert(b);
}

namespace {

// JsonRows appends, per row of `sql`, `{"<key>":value,...}` to a JSON array:
// columns in `keys` order; TEXT as JSON strings, INTEGER as integers, REAL
// with 2 decimals (utilization percents), NULL as null.
std::string JsonRows(sqlite3* db, const char* sql, const std::vector<const char*>& keys) {
  std::string o = "[";
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK) {
    while (sqlite3_step(st) == SQLITE_ROW) {
      o.append(o.size() > 1 ? ",{" : "{");
      for (int c = 0; c < static_cast<int>(keys.size()); ++c) {
        absl::StrAppend(&o, c ? ",\"" : "\"", keys[static_cast<size_t>(c)], "\":");
        switch (sqlite3_column_type(st, c)) {
          case SQLITE_INTEGER: absl::StrAppend(&o, sqlite3_column_int64(st, c)); break;
          case SQLITE_FLOAT: absl::StrAppend(&o, absl::StrFormat("%.2f", sqlite3_column_double(st, c))); break;
          case SQLITE_TEXT:
            formats::AppendJsonString(reinterpret_cast<const char*>(sqlite3_column_text(st, c)), &o);
            break;
          default: o.append("null");
        }
      }
      o.push_back('}');
    }
  }
  sqlite3_finalize(st);
  o.push_back(']');
  return o;
}

// CollectivesJson: `,"collectives":{...}` for the report's Collectives
// section (report/collectives_section.cc), "" when the job has none: the
// totals, the 16 ranks that caused the most waiting, the 10 instances of
// the largest skew, skew over time in 64 bins of first arrival, latency
// and bandwidths per collective kind and message size, and per step the
// rank that kept the others waiting longest (the report's straggler rule).
std::string CollectivesJson(sqlite3* db) {
  const std::string totals = JsonRows(
      db, "SELECT count(*), ifnull(sum(ranks > 1), 0), ifnull(sum(aligned = 0), 0) FROM collective_instances",
      {"instances", "shared", "unaligned"});
  if (totals.find("\"instances\":0,") != std::string::npos || totals == "[]") return {};
  return absl::StrCat(
      ",\"collectives\":{\"totals\":", totals, ",\"ranks\":",
      JsonRows(db,
               "SELECT rank, instances, times_last, caused_ns, waited_ns FROM rank_waits "
               "ORDER BY caused_ns DESC, rank LIMIT 16",
               {"rank", "instances", "times_last", "caused_ns", "waited_ns"}),
      ",\"worst\":",
      JsonRows(db,
               "SELECT instance, collective, process_group, seq, ranks, first_arrival_ns, last_rank, skew_ns, "
               "latency_ns, aligned FROM collective_instances WHERE ranks > 1 ORDER BY skew_ns DESC, instance LIMIT 10",
               {"instance", "collective", "process_group", "seq", "ranks", "first_arrival_ns", "last_rank", "skew_ns",
                "latency_ns", "aligned"}),
      ",\"skew\":",
      JsonRows(db,
               "WITH r AS (SELECT min(first_arrival_ns) AS lo, max(first_arrival_ns) AS hi FROM collective_instances "
               "WHERE ranks > 1) SELECT min(first_arrival_ns), count(*), CAST(avg(skew_ns) AS INTEGER), max(skew_ns) "
               "FROM collective_instances, r WHERE ranks > 1 GROUP BY (first_arrival_ns - lo) * 64 / (hi - lo + 1) "
               "ORDER BY 1",
               {"start_ns", "instances", "mean_skew_ns", "max_skew_ns"}),
      ",\"bandwidth\":",
      JsonRows(db,
               "SELECT collective, CASE WHEN bytes IS NULL THEN 'unknown' WHEN bytes < 65536 THEN '< 64 KiB' "
               "WHEN bytes < 1048576 THEN '64 KiB - 1 MiB' WHEN bytes < 16777216 THEN '1 - 16 MiB' "
               "WHEN bytes < 268435456 THEN '16 - 256 MiB' ELSE '256 MiB or more' END, count(*), "
               "CAST(avg(latency_ns) AS INTEGER), avg(algbw_gbps), avg(busbw_gbps) FROM collective_instances "
               "GROUP BY 1, 2 ORDER BY 1, min(ifnull(bytes, -1)) LIMIT 256",
               {"collective", "size", "instances", "mean_latency_ns", "algbw_gbps", "busbw_gbps"}),
      ",\"steps\":",
      // Per step (the last arrival's step), the rank that kept the others
      // waiting longest there: the skews of the instances it was last at.
      JsonRows(db,
               "SELECT step, rank, late_ns, times_last, instances FROM (SELECT step, last_rank AS rank, "
               "sum(skew_ns) AS late_ns, count(*) AS times_last, sum(count(*)) OVER (PARTITION BY step) AS instances, "
               "row_number() OVER (PARTITION BY step ORDER BY sum(skew_ns) DESC, last_rank) AS k "
               "FROM collective_instances WHERE ranks > 1 AND step IS NOT NULL AND last_rank IS NOT NULL "
               "GROUP BY step, last_rank) WHERE k = 1 ORDER BY step LIMIT 65536",
               {"step", "rank", "late_ns", "times_last", "instances"}),
      "}");
}

}  // namespace

std::string ReportTablesJson(sqlite3* db) {
  // Per node and dimension (GPUUtilization, CPUUtilization, ...): smdebug's
  // system samples. Per node and phase (smdebug's process: Forward,
  // Backward, DataIterator, ...; else the category), the 8 longest: the time
  // of the spans that touch each step, summed. Per node, the data loader's
  // spans. Nodes are the inputs table's (a rank's node, an smdebug node id).
  return absl::StrCat(
      ",\"system\":",
      JsonRows(db,
               "SELECT nodeID, dimension, count(*), avg(value), max(value) FROM system_metrics "
               "GROUP BY nodeID, dimension ORDER BY nodeID, dimension LIMIT 4096",
               {"node", "dimension", "samples", "mean", "max"}),
      ",\"phases\":",
      JsonRows(db,
               "SELECT node, phase, time_ns, steps FROM (SELECT coalesce(i.node, 'rank ' || p.rank) AS node, "
               "p.phase AS phase, sum(p.time_ns) AS time_ns, count(DISTINCT p.step) AS steps, "
               "row_number() OVER (PARTITION BY coalesce(i.node, 'rank ' || p.rank) ORDER BY sum(p.time_ns) DESC, "
               "p.phase) AS k FROM phase_by_step p LEFT JOIN inputs i ON i.\"input\" = p.\"input\" "
               "GROUP BY 1, 2) WHERE k <= 8 ORDER BY node, time_ns DESC, phase LIMIT 4096",
               {"node", "phase", "time_ns", "steps"}),
      ",\"dataloader\":",
      JsonRows(db,
               "SELECT coalesce(node_id, 'rank ' || rank), count(*), sum(dur_ns), max(dur_ns) FROM "
               "dataloader_metrics GROUP BY 1 ORDER BY 1 LIMIT 4096",
               {"node", "spans", "time_ns", "longest_ns"}),
      CollectivesJson(db));
}

std::string TemporalBreakdownJson(sqlite3* db) {
  std::string o = "[";
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db,
                         "SELECT \"input\", rank, kernel_time_ns, compute_time_ns, non_compute_time_ns, idle_time_ns "
                         "FROM temporal_breakdown ORDER BY \"input\"",
                         -1, &st, nullptr) == SQLITE_OK) {
    while (sqlite3_step(st) == SQLITE_ROW) {
      if (o.size() > 1) o.push_back(',');
      absl::StrAppend(&o, "{\"input\":", sqlite3_column_int64(st, 0), ",\"rank\":",
                      sqlite3_column_type(st, 1) == SQLITE_NULL ? "null" : absl::StrCat(sqlite3_column_int64(st, 1)),
                      ",\"kernel_ns\":", sqlite3_column_int64(st, 2), ",\"compute_ns\":", sqlite3_column_int64(st, 3),
                      ",\"non_compute_ns\":", sqlite3_column_int64(st, 4), ",\"idle_ns\":",
                      sqlite3_column_int64(st, 5), "}");
    }
  }
  sqlite3_finalize(st);
  o.push_back(']');
  return o;
}

namespace {

// MetaValue: `key`'s value in the attached database `schema`'s tables_meta,
// or "" if it has none.
std::string MetaValue(sqlite3* db, const std::string& schema, const char* key) {
  sqlite3_stmt* st = nullptr;
  std::string value;
  const std::string sql = absl::StrCat("SELECT value FROM ", schema, ".tables_meta WHERE key = ?");
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    if (const unsigned char* t = sqlite3_column_text(st, 0)) value = reinterpret_cast<const char*>(t);
  sqlite3_finalize(st);
  return value;
}

// CheckShardMeta: the attached shard file is shard `i` of `n` of this job
// (its tables_meta `fingerprint` and `shard`), not another job's or
// another shard's copy, whose rows would be merged under this job's input
// numbers.
absl::Status CheckShardMeta(sqlite3* db, const std::string& file, const std::string& fingerprint, int i, int n) {
  const std::string fp = MetaValue(db, "shard", "fingerprint");
  const std::string shard = MetaValue(db, "shard", "shard");
  if (!fingerprint.empty() && fp != fingerprint)
    return absl::FailedPreconditionError(absl::StrCat(file, " is another job's (fingerprint ", fp.empty() ? "none" : fp,
                                                      ", this job's ", fingerprint, ")"));
  if (shard != absl::StrCat(i, "/", n))
    return absl::FailedPreconditionError(
        absl::StrCat(file, " holds shard ", shard.empty() ? "none" : shard, "'s rows, not shard ", i, "/", n, "'s"));
  return absl::OkStatus();
}

}  // namespace

absl::Status JoinShardTables(const std::string& out_dir, int shard_count, const JobFacts& merged,
                             std::string* member, std::vector<std::string>* notices,
                             std::vector<LastArrival>* marks) {
  std::vector<std::string> files;
  for (int i = 0; i < shard_count; ++i) files.push_back(out_dir + "/" + TablesFileName(i, shard_count));
  int present = 0;
  for (const auto& f : files) present += ::access(f.c_str(), R_OK) == 0;
  if (present == 0) return absl::OkStatus();
  if (present != shard_count) return absl::NotFoundError("some shards wrote no tables.shard-*.sqlite (run every shard with --tables)");
  formats::SqliteWriter::Options o;
  o.final_path = out_dir + "/" + TablesFileName(0, 1);
  o.tables = TableSpecs();
  o.views = ViewSqls();
  TM_ASSIGN_OR_RETURN(auto w, formats::SqliteWriter::Create(std::move(o)));
  TM_RETURN_IF_ERROR(w->Drain());
  TM_RETURN_IF_ERROR(w->Exec("COMMIT"));
  for (int i = 0; i < shard_count; ++i) {
    TM_RETURN_IF_ERROR(w->AttachDatabase(files[static_cast<size_t>(i)], "shard"));
    TM_RETURN_IF_ERROR(CheckShardMeta(w->db(), files[static_cast<size_t>(i)], merged.fingerprint, i, shard_count));
    TM_RETURN_IF_ERROR(w->Exec("BEGIN"));
    TM_RETURN_IF_ERROR(CopyInputRows(w.get(), "shard", {}));
    if (i == 0)
      TM_RETURN_IF_ERROR(w->Exec("INSERT INTO main.tables_meta SELECT * FROM shard.tables_meta WHERE key <> 'shard'"));
    TM_RETURN_IF_ERROR(w->Exec("COMMIT"));
    TM_RETURN_IF_ERROR(w->Exec("DETACH shard"));
  }
  TM_RETURN_IF_ERROR(w->Exec("BEGIN"));
  TM_RETURN_IF_ERROR(WriteJobKernelTypes(w.get()));
  TM_RETURN_IF_ERROR(MatchCollectives(w->db(), notices));
  if (marks) *marks = LastArrivals(w->db());
  JobFacts records;
  records.inputs = merged.inputs;
  records.outputs = merged.outputs;
  for (size_t k = 0; k < records.inputs.size(); ++k) records.inputs[k].index = static_cast<int64_t>(k);
  // Inputs and outputs: the merged manifest's.
  TablesCollector c;
  c.writer_ = std::move(w);
  TM_RETURN_IF_ERROR(c.WriteRecords(records));
  formats::RowBatch m(TableIndex(Table::kMeta));
  m.Text("shard");
  m.Text(absl::StrCat("merged from ", shard_count, " shards"));
  TM_RETURN_IF_ERROR(c.writer_->Insert(m));
  // The mode the shards ran with (shard 0's meta row), as one process says it.
  const std::string mode = MetaValue(c.writer_->db(), "main", "mode");
  *member = absl::StrCat(",\n\"tables\":{\"path\":\"tables.sqlite\"",
                         mode.empty() ? "" : absl::StrCat(",\"mode\":\"", mode == "full" ? "full" : "summary", "\""),
                         ",\"temporal_breakdown\":", TemporalBreakdownJson(c.writer_->db()),
                         ReportTablesJson(c.writer_->db()), "}");
  return c.writer_->Commit();
}

namespace {

// MissingSchema: the first table or column of TableSpecs() that `db` lacks
// ("no table idle_gaps", "no column hta_dur_dtype in op_summary"), "" if none.
std::string MissingSchema(sqlite3* db) {
  for (const formats::TableSpec& t : TableSpecs()) {
    std::set<std::string> have;
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?)", -1, &st, nullptr) == SQLITE_OK) {
      sqlite3_bind_text(st, 1, t.name, -1, SQLITE_STATIC);
      while (sqlite3_step(st) == SQLITE_ROW) have.insert(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    }
    sqlite3_finalize(st);
    if (have.empty()) return absl::StrCat("no table ", t.name);
    for (const auto& c : t.columns)
      if (!have.count(c.name)) return absl::StrCat("no column ", c.name, " in ", t.name);
  }
  return "";
}

}  // namespace

std::vector<int64_t> InputsWithRows(const std::string& path, const std::string& fingerprint, std::string* why) {
  std::vector<int64_t> out;
  sqlite3* db = nullptr;
  // Read-write first: a partial file's rollback journal is replayed by
  // the first read, which a read-only connection may not do.
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    db = nullptr;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      sqlite3_close(db);
      return out;
    }
  }
  const std::string partial = MetaValue(db, "main", kPartialFingerprint);
  bool same_job = fingerprint == (partial.empty() ? MetaValue(db, "main", "fingerprint") : partial);
  if (same_job) {
    if (std::string missing = MissingSchema(db); !missing.empty()) {
      same_job = false;
      if (why) *why = missing;
    }
  }
  sqlite3_stmt* st = nullptr;
  const char* sql = partial.empty()
                        ? "SELECT \"input\" FROM inputs WHERE output IS NOT NULL AND error IS NULL"
                        : "SELECT CAST(value AS INTEGER) FROM tables_meta WHERE key = 'partial_input'";
  if (same_job && sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK) {
    while (sqlite3_step(st) == SQLITE_ROW) out.push_back(sqlite3_column_int64(st, 0));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

}  // namespace tracemill::analysis
