#pragma once
// Merge and write: the body of the convert graph's write node. One output
// group -> one Chrome trace in OUTDIR (OutputGroup -> OutputRecord):
//
//   namespace the inputs (merge/namespacer.h: pids and flow/async ids per
//   input) -> open the runs (a read buffer per spilled run, from the output's
//   share of the merge budget) -> header, process metadata -> k-way merge of
//   the runs, events outside the window counted and skipped, formatted on
//   the free threads (merge_write.h) -> temporary file renamed into place ->
//   journal line (--resume) -> the inputs' runs freed.
//
// An output that cannot be written (disk full, EFBIG) is removed, with any
// earlier file of that name, and its inputs' events count as dropped
// `output_failed`. Outputs are written in parallel, one call per output.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "analysis/tables.h"
#include "formats/chrome/chrome_writer.h"
#include "formats/common/cleanup.h"
#include "formats/common/time_window.h"
#include "pipeline/convert/convert_context.h"
#include "merge/time_split.h"
#include "pipeline/convert/decoded_runs.h"
#include "pipeline/convert/merge_write.h"
#include "pipeline/convert/output_groups.h"
#include "pipeline/journal.h"
#include "pipeline/output/overview.h"
#include "pipeline/progress.h"
#include "pipeline/table_facts.h"

namespace tracemill::pipeline {

// OutputTimes: what every output is cut to and measured from: the window
// of --start/--end (narrowed by --start-step/--end-step once the steps are
// decoded) and the base of --relative-time (`offset_ns`, the job's first
// event, set once every input is decoded; 0 otherwise). Absolute ns.
struct OutputTimes {
  formats::TimeWindow window;
  int64_t offset_ns = 0;
};

class OutputWriter {
 public:
  // `times` may change until the first Write (two stages); `merge_budget`
  // is the merge share of the memory plan (split between the threads);
  // `journal` may be null (it could not be created).
  OutputWriter(ConvertContext& cx, DecodedRuns& runs, const OutputTimes& times, uint64_t merge_budget,
               Journal* journal, ConvertProgress& progress, OverviewCollector* overview = nullptr,
               analysis::TablesCollector* tables = nullptr);

  // Write merges and writes `og` (see the file comment): its file, or with
  // --time-ranges the files of its ranges that this shard writes, one after
  // another; adds their records to the job's summary and frees its inputs'
  // runs. Never throws.
  void Write(const OutputGroup& og);

 private:
  // WriteRange writes range `range` of `og` (0 without time ranges) and adds
  // its record to the summary; the `last` range this process writes frees
  // the inputs' runs.
  void WriteRange(const OutputGroup& og, int range, bool last);
  // WriteFile: the merge into the output file, renamed into place; fills
  // `winputs` and `out` (events, size, CRC), and for each input it reports
  // its events written (in whichever range's file), `kept`. `*defer` is
  // emplaced just before the rename, so that an interrupt waits for the
  // journal line too.
  absl::Status WriteFile(const OutputGroup& og, int range, std::vector<formats::WriterInput>& winputs,
                         OutputRecord& out, std::optional<formats::DeferInterrupts>* defer, MergeStats* stats,
                         std::vector<uint64_t>* kept);
  // KeepWholeIfItFits: `w` (just begun) is one file, its events not
  // tracked for parts, if the bound of every event of `runs` (all in
  // memory; og's inputs) fits under --max-output-bytes with what it holds;
  // not for a time range's file (`ranges` > 1).
  void KeepWholeIfItFits(const OutputGroup& og, const std::vector<merge::SortedRun*>& runs,
                                const std::vector<formats::WriterInput>& winputs, int ranges, OutputParts& w);
  // Inputs: the writer's view of each input (namespaced ids, label), and
  // the output's ranks, inputs and display time unit.
  std::vector<formats::WriterInput> Inputs(const OutputGroup& og, OutputRecord& out, std::string* time_unit);
  // CutToRange (several time ranges, every run in memory): each run read
  // from range `range`'s first event to its last, by position; a later
  // range's file first gets the runs' metadata records, as the merge would.
  absl::Status CutToRange(const std::vector<merge::SortedRun*>& runs, std::vector<formats::WriterInput>& winputs,
                          const merge::TimeSplit& split, int range, OutputParts& w);
  // TapRuns (several time ranges): every event of the runs this range's
  // writer reports (`reports`), each run on its own thread in its order:
  // counted (`kept` by the window, or dropped) and tapped.
  absl::Status TapRuns(const OutputGroup& og, const std::vector<merge::SortedRun*>& runs,
                       const std::vector<formats::WriterInput>& winputs, const std::vector<char>& reports,
                       std::vector<OverviewTap>* taps, std::vector<analysis::TablesTap>* table_taps,
                       std::vector<uint64_t>* kept);
  // TapBeside (every run in memory, several threads): what Seen does in
  // merge order (or TapRuns after the merge, several time ranges), each run
  // this writer reports (`reports`) read whole by position on its own
  // thread while the merge writes: a run's events reach the merge in its
  // own order, and each input's counts and taps see only its own. So the
  // merge's serial stage only counts what it writes. `kept` (several
  // ranges; else null): each run's events the window keeps, added.
  void TapBeside(const OutputGroup& og, const std::vector<merge::SortedRun*>& runs,
                 const std::vector<formats::WriterInput>& winputs, const std::vector<char>& reports,
                 std::vector<OverviewTap>* taps, std::vector<analysis::TablesTap>* table_taps,
                 std::vector<uint64_t>* kept);
  // TapOne: one event of run `run` as TapRuns and TapBeside see it: kept
  // by the window or not (counted in `kept` if given), then Seen.
  void TapOne(const OutputGroup& og, int run, const formats::Event& e, int64_t shift_ns, uint64_t* since_pause,
              std::vector<OverviewTap>* taps, std::vector<analysis::TablesTap>* table_taps,
              std::vector<uint64_t>* kept);
  // OpenRuns gives each of the group's spilled runs a read buffer.
  absl::Status OpenRuns(const std::vector<merge::SortedRun*>& runs);
  // Keeps: the merge's filter (the window; reads only, any thread). Seen:
  // each event in merge order: a dropped one counted, a kept one tapped
  // (`taps`/`table_taps`: the overview's and the tables' per input; may be
  // empty), and the tests' write delay.
  bool Keeps(const formats::Event& e, int64_t shift_ns) const;
  void Seen(const OutputGroup& og, int run, const formats::Event& e, bool kept, int64_t shift_ns,
            uint64_t* since_pause, std::vector<OverviewTap>* taps, std::vector<analysis::TablesTap>* table_taps);
  // Succeeded: the inputs range `range` reports get their events written
  // (`kept`) and output (the first range's file); the journal line.
  void Succeeded(const OutputGroup& og, int range, const std::vector<formats::WriterInput>& winputs,
                 const std::vector<uint64_t>& kept, OutputRecord& out, double seconds, const MergeStats& stats);
  void Failed(const OutputGroup& og, OutputRecord& out, std::string_view why);
  // OtherData: the output's `otherData` object (version, time base, inputs).
  // `part`: 0 for the first file, else the part's index (1-based); with
  // time ranges, which range of `split` it is.
  std::string OtherData(const OutputGroup& og, const std::vector<formats::WriterInput>& winputs, int part,
                        const merge::TimeSplit& split, int range) const;
  // RemoveOtherLayouts removes an earlier run's files of output `name` in
  // another layout than this run's `parts` (0: one file).
  void RemoveOtherLayouts(const std::string& name, size_t parts) const;

  ConvertContext& cx_;
  DecodedRuns& runs_;
  const OutputTimes& times_;
  const uint64_t merge_budget_;
  Journal* const journal_;
  ConvertProgress& progress_;
  OverviewCollector* const overview_;  // may be null
  analysis::TablesCollector* const tables_;      // --tables; may be null
  std::mutex summary_mu_;
  // Output bytes of this job, all outputs together (their drop-behind, output_file.h).
  std::atomic<uint64_t> job_output_bytes_{0};
};

}  // namespace tracemill::pipeline
