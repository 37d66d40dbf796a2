#pragma once
// The sections of the run report page (html_report.h), each appended by one
// function to the page text. Internal to report/: html_report.cc calls them
// in page order. Every string from an input is escaped (html_text.h).
#include <cstdint>
#include <string>

#include "report/analysis.h"
#include "report/run_model.h"

namespace tracemill::report {

// PageInput: what every section reads. The timeline's x axis runs from
// `t0_ns` to `t1_ns` (absolute ns, t1_ns > t0_ns); relative times on the
// page are from `t0_ns`.
struct PageInput {
  const RunModel& model;
  const Analysis& analysis;
  int64_t t0_ns = 0;
  int64_t t1_ns = 1;
};

// IsEpochTime: `ns` is a time since the epoch (2000-01-01 or later), not
// one relative to a run's start (as pipeline/job_notes.cc tells them apart).
bool IsEpochTime(int64_t ns);

// StragglerRule: the straggler threshold of analysis.h in words: "more
// than 5 % and more than 1 ms behind the step's median".
std::string StragglerRule();

// RelativeTime: `ns` from `t0_ns`, exact: "+1.459857 s", "+0 s", "-296 µs".
std::string RelativeTime(int64_t ns, int64_t t0_ns);

// run_status.cc: `<section id="notices">` above the cards when something
// changes the meaning of the run (run_status.h: inputs with errors, outputs
// not written, events lost, the manifest's notices); nothing when all is well.
void AppendBanner(const PageInput& in, std::string* out);

// summary_cards.cc: `<section id="summary">`, one card per figure (ranks,
// nodes, GPUs, dead, inputs, bytes, events, outputs, time, throughput, steps,
// rounds and bytes of run event logs, version).
void AppendSummaryCards(const PageInput& in, std::string* out);

// timeline_svg.cc: `<section id="timeline">`, the legend and one inline SVG
// of the analysis rows (bands per node, axis, bars, dead and missing marks).
void AppendTimeline(const PageInput& in, std::string* out);

// report_tables.cc: the table sections, each `<section id="...">`:
// rounds (only if a run event log has rounds), stragglers, dead ranks,
// inputs, outputs, and the log of warnings and errors per file.
void AppendRoundsTable(const PageInput& in, std::string* out);
void AppendStragglersTable(const PageInput& in, std::string* out);
void AppendDeadTable(const PageInput& in, std::string* out);
void AppendInputsTable(const PageInput& in, std::string* out);
void AppendOutputsTable(const PageInput& in, std::string* out);
void AppendWarningLog(const PageInput& in, std::string* out);

// clocks_section.cc: `<section id="clocks">` when the manifest has a clocks
// section: per node its offset against the reference, how sure, whether it
// was applied; the ranks whose clock disagrees with their node's; warnings.
void AppendClocksSection(const PageInput& in, std::string* out);

// step_durations.cc: `<section id="step-durations">` when some ranked input
// has steps: per node (per trainer for csp) its ranks' step durations
// (shortest, median, p90, longest) over the steps the manifest lists.
void AppendStepDurations(const PageInput& in, std::string* out);

// system_section.cc: `<section id="system">` when the manifest's `tables`
// member has summaries (convert --tables): smdebug's system metrics per
// node, the longest phases per node, the data loader per node.
void AppendSystemSection(const PageInput& in, std::string* out);
// system_section.cc: `<section id="dcgm">` when some input is a DCGM log
// (its gpu_utilization): per log and GPU, samples, GPU utilization mean and
// max, SM active / occupancy, DRAM and tensor active means.
void AppendDcgmSection(const PageInput& in, std::string* out);

// collectives_section.cc: `<section id="collectives">` when the manifest's
// `tables.collectives` member has instances (convert --tables): the ranks
// that kept the others waiting (times last, waiting caused), the worst
// instances by skew, skew over time, latency and bandwidth per kind and size.
void AppendCollectivesSection(const PageInput& in, std::string* out);

// breakdown_section.cc: `<section id="breakdown">` when the manifest has
// `tables.temporal_breakdown` (convert --tables): per rank (per node past 64
// ranks) a stacked bar of HTA's compute / non-compute / idle shares of the
// kernel time, exact ns in the tooltips.
void AppendTemporalBreakdown(const PageInput& in, std::string* out);

}  // namespace tracemill::report
