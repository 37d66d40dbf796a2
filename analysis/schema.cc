#include "analysis/schema.h"

#include "absl/strings/str_cat.h"

namespace tracemill::analysis {

const std::vector<formats::TableSpec>& TableSpecs() {
  static const std::vector<formats::TableSpec> kSpecs = {
      {"tables_meta", {{"key", "TEXT"}, {"value", "TEXT"}}},
      {"system_metrics",
       {{"timestamp", "TEXT"}, {"timestamp_us", "INTEGER"}, {"value", "REAL"}, {"system_metric", "TEXT"},
        {"dimension", "TEXT"}, {"nodeID", "TEXT"}, {"type", "TEXT"}, {"rank", "INTEGER"}, {"input", "INTEGER"},
        {"timestamp_ns", "INTEGER"}}},
      {"framework_metrics",
       {{"start_time", "TEXT"}, {"end_time", "TEXT"}, {"start_time_us", "INTEGER"}, {"end_time_us", "INTEGER"},
        {"tid", ""}, {"pid", ""}, {"framework_metric", "TEXT"}, {"step", "INTEGER"}, {"bytes", "INTEGER"},
        {"process", "TEXT"}, {"nodeID", "TEXT"}, {"rank", "INTEGER"}, {"dur_ns", "INTEGER"}, {"category", "TEXT"},
        {"start_ns", "INTEGER"}, {"input", "INTEGER"}, {"worker_id", "INTEGER"}, {"num_workers", "INTEGER"},
        {"pin_memory", "TEXT"}}},
      {"dataloader_metrics",
       {{"start_time", "TEXT"}, {"end_time", "TEXT"}, {"start_time_us", "INTEGER"}, {"end_time_us", "INTEGER"},
        {"duration_us", "INTEGER"}, {"pid", ""}, {"framework_metric", "TEXT"}, {"step", "INTEGER"},
        {"worker_id", "INTEGER"}, {"num_workers", "INTEGER"}, {"pin_memory", "TEXT"}, {"process", "TEXT"},
        {"node_id", "TEXT"}, {"rank", "INTEGER"}, {"start_ns", "INTEGER"}, {"dur_ns", "INTEGER"},
        {"input", "INTEGER"}}},
      {"low_gpu_utilization",
       {{"start_time", "TEXT"}, {"end_time", "TEXT"}, {"start_time_us", "INTEGER"}, {"end_time_us", "INTEGER"},
        {"device", "TEXT"}, {"threshold_percent", "REAL"}, {"low_samples", "INTEGER"}, {"nodeID", "TEXT"},
        {"rank", "INTEGER"}, {"start_ns", "INTEGER"}, {"dur_ns", "INTEGER"}, {"input", "INTEGER"}}},
      {"steps",
       {{"input", "INTEGER"}, {"rank", "INTEGER"}, {"step", "INTEGER"}, {"start_ns", "INTEGER"},
        {"end_ns", "INTEGER"}, {"duration_ns", "INTEGER"}, {"start_time_us", "INTEGER"},
        {"end_time_us", "INTEGER"}, {"start_time", "TEXT"}}},
      {"phase_by_step",
       {{"input", "INTEGER"}, {"rank", "INTEGER"}, {"step", "INTEGER"}, {"phase", "TEXT"}, {"time_ns", "INTEGER"},
        {"events", "INTEGER"}}},
      {"temporal_breakdown",
       {{"input", "INTEGER"}, {"rank", "INTEGER"}, {"idle_time(us)", "REAL"}, {"compute_time(us)", "REAL"},
        {"non_compute_time(us)", "REAL"}, {"kernel_time(us)", "REAL"}, {"idle_time_pctg", "REAL"},
        {"compute_time_pctg", "REAL"}, {"non_compute_time_pctg", "REAL"}, {"idle_time_ns", "INTEGER"},
        {"compute_time_ns", "INTEGER"}, {"non_compute_time_ns", "INTEGER"}, {"kernel_time_ns", "INTEGER"},
        {"device_rows", "INTEGER"}, {"hta_iteration_filter", "INTEGER"}, {"hta_us_rounding", "INTEGER"}}},
      {"kernel_breakdown",
       {{"input", "INTEGER"}, {"rank", "INTEGER"}, {"kernel_type", "TEXT"}, {"name", "TEXT"}, {"sum (us)", "REAL"},
        {"max (us)", "REAL"}, {"min (us)", "REAL"}, {"stddev", "REAL"}, {"mean (us)", "REAL"},
        {"kernels", "INTEGER"}, {"sum_ns", "INTEGER"}, {"mean_ns", "INTEGER"}}},
      {"kernel_type_breakdown",
       {{"input", "INTEGER"}, {"rank", "INTEGER"}, {"kernel_type", "TEXT"}, {"sum", "REAL"},
        {"percentage", "REAL"}, {"sum_ns", "INTEGER"}}},
      {"comm_comp_overlap",
       {{"input", "INTEGER"}, {"rank", "INTEGER"}, {"comp_comm_overlap_pctg", "REAL"}, {"comm_time_ns", "INTEGER"},
        {"comp_time_ns", "INTEGER"}, {"overlap_ns", "INTEGER"}}},
      {"idle_time",
       {{"input", "INTEGER"}, {"rank", "INTEGER"}, {"stream", "INTEGER"}, {"span_ns", "INTEGER"},
        {"busy_ns", "INTEGER"}, {"idle_ns", "INTEGER"}, {"kernels", "INTEGER"}}},
      {"idle_gaps",
       {{"input", "INTEGER"}, {"rank", "INTEGER"}, {"stream", "INTEGER"}, {"stream_order", "INTEGER"},
        {"host_wait", "INTEGER"}, {"gap_us", "INTEGER"}, {"gaps", "INTEGER"}, {"hta_stream_dtype", "TEXT"}}},
      {"op_summary",
       {{"input", "INTEGER"}, {"rank", "INTEGER"}, {"iteration", "INTEGER"}, {"device", "TEXT"}, {"cat", "TEXT"},
        {"name", "TEXT"}, {"counts", "INTEGER"}, {"total_duration", "INTEGER"}, {"total_duration_ns", "INTEGER"},
        {"hta_dur_dtype", "TEXT"}}},
      {"collectives",
       {{"instance", "INTEGER"}, {"process_group", "TEXT"}, {"seq", "INTEGER"}, {"collective", "TEXT"},
        {"rank", "INTEGER"}, {"arrival_ns", "INTEGER"}, {"end_ns", "INTEGER"}, {"wait_ns", "INTEGER"},
        {"bytes", "INTEGER"}, {"aligned", "INTEGER"}, {"input", "INTEGER"}, {"group_size", "INTEGER"},
        {"step", "INTEGER"}}},
      {"collective_instances",
       {{"instance", "INTEGER"}, {"process_group", "TEXT"}, {"seq", "INTEGER"}, {"collective", "TEXT"},
        {"ranks", "INTEGER"}, {"first_arrival_ns", "INTEGER"}, {"last_arrival_ns", "INTEGER"},
        {"last_rank", "INTEGER"}, {"skew_ns", "INTEGER"}, {"latency_ns", "INTEGER"}, {"bytes", "INTEGER"},
        {"algbw_gbps", "REAL"}, {"busbw_gbps", "REAL"}, {"aligned", "INTEGER"}, {"step", "INTEGER"}}},
      {"rank_waits",
       {{"rank", "INTEGER"}, {"instances", "INTEGER"}, {"times_last", "INTEGER"}, {"caused_ns", "INTEGER"},
        {"waited_ns", "INTEGER"}}},
      {"inputs",
       {{"input", "INTEGER"}, {"path", "TEXT"}, {"format", "TEXT"}, {"rank", "INTEGER"}, {"label", "TEXT"},
        {"node", "TEXT"}, {"output", "TEXT"}, {"events_read", "INTEGER"}, {"events_written", "INTEGER"},
        {"events_dropped", "INTEGER"}, {"first_ts_ns", "INTEGER"}, {"last_ts_ns", "INTEGER"},
        {"clock_offset_ns", "INTEGER"}, {"clock_applied", "INTEGER"}, {"error", "TEXT"}, {"reused", "INTEGER"}}},
      {"outputs",
       {{"path", "TEXT"}, {"ranks", "TEXT"}, {"inputs", "INTEGER"}, {"events", "INTEGER"}, {"bytes", "INTEGER"},
        {"crc32", "INTEGER"}, {"parts", "INTEGER"}, {"error", "TEXT"}, {"reused", "INTEGER"}}},
  };
  return kSpecs;
}

const std::vector<std::string>& ViewSqls() {
  // PandasFrame.get_all_dataloader_metrics: every framework event with the
  // data loader's columns (smdebug's profiler_data_to_pandas.py filters no
  // name), duration_us its end_time - start_time as there.
  static const std::vector<std::string> kViews = {
      "CREATE VIEW IF NOT EXISTS \"all_dataloader_metrics\" AS SELECT start_time, end_time, start_time_us, "
      "end_time_us, end_time_us - start_time_us AS duration_us, pid, framework_metric, step, worker_id, num_workers, "
      "pin_memory, process, nodeID AS node_id, rank, start_ns, dur_ns, \"input\" FROM framework_metrics"};
  return kViews;
}

std::vector<Table> PerInputTables() {
  return {Table::kSystemMetrics, Table::kFrameworkMetrics, Table::kDataloaderMetrics, Table::kLowGpuUtilization,
          Table::kSteps,
          Table::kPhaseByStep,   Table::kTemporalBreakdown, Table::kKernelBreakdown,  Table::kKernelTypeBreakdown,
          Table::kCommCompOverlap, Table::kIdleTime, Table::kIdleGaps, Table::kOpSummary, Table::kCollectives};
}

std::string TablesFileName(int shard_index, int shard_count) {
  if (shard_count <= 1) return "tables.sqlite";
  return absl::StrCat("tables.shard-", shard_index, "-of-", shard_count, ".sqlite");
}

}  // namespace tracemill::analysis
