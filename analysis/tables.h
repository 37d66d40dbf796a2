#pragma once
// `tracemill convert --tables`: OUTDIR/tables.sqlite, analysis tables made
// as a by-product of the merge (analysis/schema.h lists them).
//
// Built like overview.trace.json (pipeline/output/overview.h): a TablesTap per
// input is fed with every event the output writes, in the input's time
// order: in the merge's serial stage, or beside the merge on a thread of its
// own (pipeline/convert/write_output.h TapBeside: taps of different inputs
// run at once). Per-event rows (framework, system
// and data-loader metrics) leave the tap in ~1 MiB batches for the SQLite
// writer thread (formats/sqlite/sqlite_writer.h: a bounded queue, so memory
// stays fixed); per-input aggregates (steps, phases per step, HTA's breakdowns)
// follow them when the input's output is complete (Done: then a commit, so
// that `convert --resume` after an interrupt keeps that output and its rows;
// TablesStart::resumable); the account stage adds the rest and the
// manifest's inputs and outputs, then the file is renamed into place. A
// failure removes the file and fails the job (exit 1).
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "analysis/collectives.h"
#include "analysis/facts.h"
#include "analysis/hta_breakdowns.h"
#include "analysis/schema.h"
#include "formats/common/event.h"
#include "formats/common/time_window.h"
#include "formats/common/trace_data.h"
#include "formats/sqlite/sqlite_writer.h"

namespace tracemill::analysis {

// InputTables: what one input puts in the summary tables.
// OpSummaryRow: HTA's TraceDiff summary of one input (hta/trace_diff.py
// get_ops_summary over extract_ops): the `X` rows HTA reads, per iteration
// (trace.py add_iteration), device (`stream` -1: cpu, else gpu), category
// and name: how many and their total duration.
struct OpSummaryRow {
  int64_t iteration = -1;
  bool gpu = false;
  std::string cat, name;
  uint64_t counts = 0;
  int64_t total_us = 0;  // HTA's µs (its rounding for a float-ts trace)
  int64_t total_ns = 0;  // exact
};

struct InputTables {
  bool tapped = false;  // its events went through a tap (written here)
  HtaResult hta;
  std::vector<OpSummaryRow> ops;  // by iteration, device, category, name
  // The dtype of HTA's `dur` column for this input (trace_parser.py): float64
  // when an event lacks `dur` (NaN before its dropna), int64 after its
  // rounding of a float-ts trace, else the smallest integer type that holds
  // the longest (pandas' downcast: int8, int16, int32, int64).
  std::string hta_dur_dtype;
  // phase_by_step: (step, phase) -> (time ns, events)
  std::map<std::pair<int64_t, std::string>, std::pair<int64_t, uint64_t>> phases;
};

class TablesCollector;
struct SpanArgs;  // a span's args, and its E's (tables.cc)

// PandasFrameNodeId: smdebug's node id as PandasFrame reports it in
// framework and dataloader rows. SageMaker names framework files
// `<ts>_<pid>-algo-<n>_...`, and smdebug swaps that node id to
// `algo-<n>-<pid>` (trace_event_file_parser.py `_read_event`,
// `re.match("(.*)-(algo.*)")`: at the last "-algo"); other ids unchanged.
std::string PandasFrameNodeId(std::string_view node);

// TablesTap: one input's events (aligned time order) -> rows and aggregates.
// Single-threaded (its output's merge loop).
class TablesTap {
 public:
  TablesTap(TablesCollector* collector, InputFacts r, const formats::TraceData* data);
  TablesTap(TablesTap&&) = default;
  // Event: one event the output writes; `shift_ns` its clock offset.
  void Event(const formats::Event& e, int64_t shift_ns);
  // Finish flushes the last batches and returns the aggregates.
  InputTables Finish();

 private:
  // `end_rest`: the closing E's members of a B/E pair (its args win), else "".
  void Span(const formats::Event& e, int64_t ts, int64_t dur, std::string_view end_rest);
  void OpenSpan(const formats::Event& e, int64_t ts);
  void CloseSpan(const formats::Event& e, int64_t ts);
  void Counter(const formats::Event& e, int64_t ts);
  void LowGpuRow(const formats::Event& e, int64_t ts, int64_t dur);
  void FrameworkRow(const formats::Event& e, int64_t ts, int64_t dur, int64_t step, const SpanArgs& args);
  void DataloaderRow(const formats::Event& e, int64_t ts, int64_t dur, int64_t step, const SpanArgs& args);
  void Phases(const formats::Event& e, int64_t ts, int64_t dur);
  const std::string& Plain(uint32_t string_id);  // unescaped, cached
  const std::string& ProcessName(uint32_t pid);
  int64_t StepAt(int64_t ts) const;
  // OpSummary: HTA's TraceDiff counts of one row HTA reads (Span's HTA branch).
  void OpSummary(const formats::Event& e, int64_t ts, int64_t dur, int64_t stream, int64_t correlation, bool gpu_row);
  // HtaIterationAt: the ProfilerStep holding `ts` as HTA's add_iteration
  // finds it (start <= ts < end), -1 if none.
  int64_t HtaIterationAt(int64_t ts) const;
  void Flush(formats::RowBatch* b, bool force);

  TablesCollector* collector_;
  InputFacts r_;
  const formats::TraceData* d_;
  bool smdebug_, system_;
  std::string frame_node_;  // PandasFrameNodeId(r_.node): nodeID of framework and dataloader rows
  int64_t file_base_ns_;    // the input's baseTimeNanoseconds (added to the file's ts when decoded)
  int64_t shift_ns_ = 0;    // the clock shift of the event being tapped
  // B events waiting for their E, per (pid, tid), innermost last: the
  // event, its aligned ts, a copy of its members.
  struct Open {
    formats::Event b;
    int64_t ts;
    std::string rest;
  };
  std::map<std::pair<uint32_t, uint32_t>, std::vector<Open>> open_;
  std::vector<formats::StepSpan> steps_;  // by start
  std::vector<std::string> plain_;        // string id -> unescaped ("" unset)
  std::vector<uint8_t> plain_set_;
  std::vector<std::string> process_;      // pid -> name
  std::vector<int8_t> kernel_type_;       // name id -> KernelType + 1 (0 unknown)
  std::vector<int8_t> step_name_;         // name id -> contains "Step" (+1), 0 unknown
  std::vector<int8_t> dataloader_name_;   // name id -> a data-loading name (+1), 0 unknown
  std::vector<uint8_t> idle_cat_;         // string id -> a category of HTA's idle breakdown
  // phase_by_step while tapping: (step, phase key) -> (ns, events); keys named at Finish.
  absl::flat_hash_map<std::pair<int64_t, uint64_t>, std::pair<int64_t, uint64_t>> phases_;
  // The last entry of phases_ used: consecutive events mostly share their
  // step and phase. Refreshed after every lookup (an insert may move others).
  std::pair<int64_t, uint64_t> last_phase_key_{INT64_MIN, 0};
  std::pair<int64_t, uint64_t>* last_phase_ = nullptr;
  formats::RowBatch framework_, system_rows_, dataloader_, low_gpu_, collectives_;
  CollectiveRows collective_rows_;
  HtaTap hta_;
  bool hta_filter_ = false;  // HTA's iteration filter applies: correlations are read
  // op_summary while tapping: (iteration, gpu, cat id, name id) -> (counts, HTA µs, ns);
  // a CPU row's correlation -> its iteration, for the GPU rows it launched.
  struct OpTotals {
    uint64_t counts = 0;
    int64_t us = 0, ns = 0;
  };
  absl::flat_hash_map<std::tuple<int64_t, bool, uint32_t, uint32_t>, OpTotals> ops_;
  RecentLaunches<int64_t> launch_iteration_;
  uint32_t cpu_op_cat_ = UINT32_MAX;  // string id of category "cpu_op"
  bool ops_sub_us_ = false;           // an event's file ts has sub-µs digits: HTA rounds
  bool ops_dur_missing_ = false;      // an event without `dur` (HTA's dur column is float64)
  int64_t ops_max_dur_us_ = 0;        // the longest `dur` (µs), for HTA's downcast
  InputTables out_;
  uint32_t trace_cat_ = UINT32_MAX;  // string id of category "Trace"
};

// TablesStart: how a TablesCollector opens its file.
struct TablesStart {
  std::string out_dir;    // OUTDIR
  std::string file_name;  // tables.sqlite (TablesFileName)
  std::string tmp_dir;    // SQLite's temporary files
  TablesMode mode = TablesMode::kSummary;
  // HTA's tables keep each rank's last ProfilerStep (--hta-last-step: HTA's
  // include_last_profiler_step=True), else HTA's default filter applies.
  bool hta_last_step = false;
  uint64_t cache_bytes = 8 << 20;  // SQLite's page cache (TablesBudget)
  uint64_t queue_bytes = 8 << 20;  // row batches waiting for the writer thread
  // Resumable (a convert job): written at OUTDIR/PartialTablesName(file_name)
  // with a commit point per completed output (Done), so that --resume after
  // an interrupt keeps those outputs; `fingerprint` marks the job. Empty:
  // a temporary that an interrupt removes.
  bool resumable = false;
  std::string fingerprint;
  // --resume: every per-input row of the `carried` inputs is copied from
  // `previous` (an earlier file of this job) at the start.
  std::string previous;
  std::vector<int64_t> carried;
};

// PartialTablesName: ".<file>.partial", where a resumable tables file is
// written until the job ends (then renamed to <file>).
std::string PartialTablesName(const std::string& file_name);

class TablesCollector {
 public:
  // Start opens the file (see TablesStart; sqlite_writer.h).
  // Errors: of the open, or of the copy from `previous`.
  static absl::StatusOr<std::unique_ptr<TablesCollector>> Start(const TablesStart& how);
  TablesMode mode() const { return mode_; }
  bool hta_last_step() const { return hta_last_step_; }
  // Tap: a fresh tap for input `r` (one output at a time holds it).
  TablesTap Tap(InputFacts r, const formats::TraceData* data) { return TablesTap(this, std::move(r), data); }
  // Keep stores input `index`'s aggregates. Thread-safe.
  void Keep(int64_t index, InputTables t);
  // Push: a full batch from a tap (thread-safe, may block).
  void Push(formats::RowBatch* b) { writer_->Push(b); }
  // Done: the inputs `rs` (kept already) are complete, their output on
  // disk: their steps and aggregates follow their rows to the writer, then
  // a commit point (a resumable file keeps them through an interrupt).
  // Steps outside `window` are left out (by start for a follow window).
  // Thread-safe, may block.
  void Done(const std::vector<InputFacts>& rs, const formats::TimeWindow& window);

  // Finish (account stage): the steps and aggregates of every input in
  // `summary` not Done, the job's kernel-type rows, the inputs and outputs
  // tables and the meta rows; the per-input aggregate tables in input
  // order; then the rename.
  // Errors: of the writes or the rename (the file is removed).
  // Steps outside `window` (aligned ns, as the traces') are left out.
  absl::Status Finish(const JobFacts& summary, const std::vector<std::pair<std::string, std::string>>& meta,
                      const formats::TimeWindow& window);
  // Abort removes the temporary.
  void Abort() { writer_->Abort(); }
  // BreakdownJson: after Finish, the `temporal_breakdown` array for the
  // manifest's `tables` member (every rank's, carried ones too), then its
  // `system`, `phases` and `dataloader` members (ReportTablesJson).
  const std::string& breakdown_json() const { return breakdown_json_; }
  // After Finish: the collectives' notices and the overview's marks
  // (analysis/collectives.h).
  const std::vector<std::string>& notices() const { return notices_; }
  const std::vector<LastArrival>& last_arrivals() const { return last_arrivals_; }

 private:
  friend absl::Status JoinShardTables(const std::string&, int, const JobFacts&, std::string*,
                                      std::vector<std::string>*, std::vector<LastArrival>*);
  TablesCollector() = default;
  absl::Status Seed(formats::SqliteWriter& w, const TablesStart& how);
  absl::Status WriteRecords(const JobFacts& summary);

  TablesMode mode_ = TablesMode::kOff;
  bool hta_last_step_ = false;
  std::unique_ptr<formats::SqliteWriter> writer_;
  std::mutex mu_;
  std::map<int64_t, InputTables> inputs_;
  std::set<int64_t> done_;  // inputs whose rows Done pushed
  std::string breakdown_json_;
  std::vector<std::string> notices_;
  std::vector<LastArrival> last_arrivals_;
};

// TemporalBreakdownJson: `[{"input":i,"rank":r,"kernel_ns":..,"compute_ns":..,
// "non_compute_ns":..,"idle_ns":..},...]` from the temporal_breakdown rows of
// `db`, by input (the report draws it, report/breakdown_section.cc).
std::string TemporalBreakdownJson(sqlite3* db);

// ReportTablesJson: `,"system":[{"node","dimension","samples","mean","max"}],
// "phases":[{"node","phase","time_ns","steps"}],"dataloader":[{"node",
// "spans","time_ns","longest_ns"}]` from `db`'s system_metrics,
// phase_by_step (with inputs' nodes; the 8 longest phases a node) and
// dataloader_metrics, at most 4,096 rows each (the report's "System and
// phases" section, report/system_section.cc); then, when the job has
// collectives, `,"collectives":{"totals","ranks","worst","skew","bandwidth"}`
// (report/collectives_section.cc).
std::string ReportTablesJson(sqlite3* db);

// CopyInputRows copies every per-input table's rows of `inputs` (all if
// empty) from the database attached as `alias` into `writer`'s.
absl::Status CopyInputRows(formats::SqliteWriter* writer, const std::string& alias, const std::vector<int64_t>& inputs);
// WriteJobKernelTypes adds the job's kernel_type_breakdown rows (input and
// rank NULL: HTA's first frame, summed over the ranks, percentage rounded
// to 0.1 as HTA) from the per-rank rows already in `writer`'s database.
absl::Status WriteJobKernelTypes(formats::SqliteWriter* writer);
// InputsWithRows: the `input` indexes an earlier tables.sqlite at `path`
// holds rows for (--resume keeps only outputs whose inputs it has), with
// its `fingerprint` meta value; empty if it cannot be read. A partial
// file (an interrupted run's, PartialTablesName) names the inputs its
// commit points committed; opening it rolls back what they did not. Also
// empty when the file lacks a table or column of today's (TableSpecs: a file
// of an earlier version, whose rows cannot be copied); `why` then says
// which ("no table idle_gaps").
std::vector<int64_t> InputsWithRows(const std::string& path, const std::string& fingerprint,
                                    std::string* why = nullptr);

// JoinShardTables (`manifest merge`): when shard 0 of `shard_count` wrote
// tables, OUTDIR/tables.sqlite from every shard's tables.shard-<i>-of-<n>.sqlite
// (each input's rows once, as one process writes them), the job's
// kernel-type rows, the merged manifest's inputs and outputs. Returns OK
// without writing when no shard wrote tables.
// Errors: a shard's file missing or unreadable, or the write (nothing is left).
// `*member` gets the manifest's `tables` member for the merged manifest;
// `*notices` the collectives' notices, `*marks` the overview's marks.
absl::Status JoinShardTables(const std::string& out_dir, int shard_count, const JobFacts& merged,
                             std::string* member, std::vector<std::string>* notices = nullptr,
                             std::vector<LastArrival>* marks = nullptr);

}  // namespace tracemill::analysis
