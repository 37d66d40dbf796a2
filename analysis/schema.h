#pragma once
// The analysis tables of `tracemill convert --tables` (OUTDIR/tables.sqlite):
// names and columns, one definition shared by the writer (analysis/tables.h),
// `manifest merge` (shards joined) and `--resume` (rows carried over).
// README.md ("Analysis tables") documents every column.
//
// Every row that comes from an input carries `input` (the input's index in
// the job, = `inputs.input`), so a query can join events to files; times are
// exact int64 ns in `*_ns` columns, µs columns are integers (PandasFrame's)
// or HTA's float µs where the column is named as HTA names it.
#include <string>
#include <vector>

#include "formats/sqlite/sqlite_writer.h"

namespace tracemill::analysis {

// Table: index into TableSpecs().
enum class Table : int {
  kMeta,               // key/value: version, mode, fingerprint, window
  kSystemMetrics,      // PandasFrame.get_all_system_metrics
  kFrameworkMetrics,   // PandasFrame.get_all_framework_metrics (not with --tables summary)
  kDataloaderMetrics,  // PandasFrame.get_all_dataloader_metrics (data-loading events)
  kLowGpuUtilization,  // tracemill's own: the derived low GPU utilization spans of smdebug system metrics
  kSteps,              // per rank and step
  kPhaseByStep,        // PandasFrame.get_framework_metrics_by_begin_and_end_timesteps per step
  kTemporalBreakdown,  // HTA get_temporal_breakdown
  kKernelBreakdown,    // HTA get_gpu_kernel_breakdown, per kernel (second frame)
  kKernelTypeBreakdown,  // HTA get_gpu_kernel_breakdown, per type (first frame), per rank and job
  kCommCompOverlap,    // HTA get_comm_comp_overlap
  kIdleTime,           // per rank and stream: span, busy, idle
  kIdleGaps,           // HTA get_idle_time_breakdown's input: per rank, stream and gap between kernels
  kOpSummary,          // HTA's TraceDiff summary: per rank, iteration, device, category and name
  kCollectives,        // per rank and collective instance (analysis/collectives.h)
  kCollectiveInstances,  // per collective instance, across its ranks
  kRankWaits,          // per rank: how often last, the waiting it caused and did
  kInputs,             // the manifest's input records
  kOutputs,            // the manifest's output records
  kCount,
};

// TableSpecs: every table, indexed by Table.
const std::vector<formats::TableSpec>& TableSpecs();
inline int TableIndex(Table t) { return static_cast<int>(t); }
inline const char* TableName(Table t) { return TableSpecs()[static_cast<size_t>(t)].name; }

// ViewSqls: the `CREATE VIEW` statements of the views over those tables
// (`all_dataloader_metrics`: PandasFrame's get_all_dataloader_metrics, every
// framework_metrics row), made with them in every tables file.
const std::vector<std::string>& ViewSqls();

// PerInputTables: the tables whose rows belong to one input (column
// `input`): carried by --resume, copied by `manifest merge`.
std::vector<Table> PerInputTables();

// TablesFileName: "tables.sqlite", or a shard's "tables.shard-<i>-of-<n>.sqlite".
std::string TablesFileName(int shard_index, int shard_count);

}  // namespace tracemill::analysis
