#include "pipeline/convert/write_output.h"

#include <unistd.h>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "formats/chrome/output_file.h"
#include "formats/common/cleanup.h"
#include "formats/common/json_text.h"
#include "formats/common/status_macros.h"
#include "merge/namespacer.h"
#include "merge/time_split.h"
#include "pipeline/budget.h"
#include "pipeline/clocks/clocks.h"
#include "pipeline/convert/merge_write.h"
#include "pipeline/job_notes.h"
#include "tracemill/version.h"

namespace tracemill::pipeline {

OutputWriter::OutputWriter(ConvertContext& cx, DecodedRuns& runs, const OutputTimes& times, uint64_t merge_budget,
                           Journal* journal, ConvertProgress& progress, OverviewCollector* overview,
                           analysis::TablesCollector* tables)
    : cx_(cx),
      runs_(runs),
      times_(times),
      merge_budget_(merge_budget),
      journal_(journal),
      progress_(progress),
      overview_(overview),
      tables_(tables) {}

void OutputWriter::Write(const OutputGroup& og) {
  // Its time ranges (--time-ranges) one after another, those this shard
  // writes; each input is reported (its events counted and tapped) by the
  // writer of one range (JobPlan::ReporterRange).
  const int n = cx_.plan.time_ranges;
  const OutputKey key = ParseOutputName(og.name).value_or(OutputKey{og.kind, og.number, og.name});
  std::vector<int> ranges;
  for (int range = 0; range < n; ++range)
    if (n == 1 || cx_.plan.OwnerOfRange(key, range) == cx_.me()) ranges.push_back(range);
  for (int range : ranges) WriteRange(og, range, range == ranges.back());
}

void OutputWriter::WriteRange(const OutputGroup& og, int range, bool last) {
  // After the last file: each input belongs to one output, so its run is
  // freed at once (and its bytes in the spill file punched out: those still
  // in the page cache never reach the disk).
  auto free_runs = [&] {
    if (last)
      for (size_t i : og.inputs) runs_.Free(i);
  };
  OutputRecord out;
  out.path = RangeFileName(og.name, range, cx_.plan.time_ranges);
  const auto t0 = std::chrono::steady_clock::now();
  if (cx_.opts.verbose)
    cx_.job.Say(absl::StrCat("writing ", out.path, " (", og.inputs.size(),
                             og.inputs.size() == 1 ? " input)" : " inputs)"));
  try {
    std::vector<formats::WriterInput> winputs;
    // The rename and its journal line go together: an interrupt waits for
    // both (emplaced by WriteFile just before the rename).
    std::optional<formats::DeferInterrupts> defer;
    MergeStats stats;
    std::vector<uint64_t> kept(og.inputs.size());
    absl::Status st = WriteFile(og, range, winputs, out, &defer, &stats, &kept);
    free_runs();
    if (st.ok()) {
      Succeeded(og, range, winputs, kept, out,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), stats);
      defer.reset();  // the rename and the journal line are done: an interrupt may come
      if (tables_) {  // the inputs' tables rows are complete too: --resume keeps them
        std::vector<analysis::InputFacts> done;
        for (size_t i : og.inputs)
          if (cx_.plan.ReporterRange(i) == range) done.push_back(InputFactsOf(cx_.records[i]));
        tables_->Done(done, times_.window);
      }
    } else
      Failed(og, out, StdView(st.message()));
  } catch (const std::exception& e) {
    free_runs();
    out.error = absl::StrCat("internal error: ", e.what());
    Failed(og, out, "");
  }
  {
    std::lock_guard<std::mutex> lock(summary_mu_);
    cx_.job.summary().outputs.push_back(std::move(out));
  }
  progress_.OutputWritten();
}

absl::Status OutputWriter::WriteFile(const OutputGroup& og, int range, std::vector<formats::WriterInput>& winputs,
                                     OutputRecord& out, std::optional<formats::DeferInterrupts>* defer,
                                     MergeStats* stats, std::vector<uint64_t>* kept) {
  std::string time_unit;
  winputs = Inputs(og, out, &time_unit);
  std::vector<merge::SortedRun*> runs;
  for (size_t i : og.inputs) runs.push_back(runs_.get(i));
  absl::Status st = OpenRuns(runs);
  if (!st.ok()) return st;
  std::vector<int64_t> shifts;
  for (const auto& in : winputs) shifts.push_back(in.clock_shift_ns);
  // The same split in every range's writer, in every shard (time_split.h).
  const merge::TimeSplit split =
      merge::SplitRuns(runs, shifts, cx_.plan.time_ranges, times_.window.start_ns, times_.window.end_ns);
  OutputParts w(OutputParts::Options{cx_.opts.out_dir, out.path, cx_.opts.compress, cx_.opts.direct_io,
                                     cx_.opts.max_output_bytes, times_.offset_ns, time_unit, &job_output_bytes_,
                                     [&](int part) { return OtherData(og, winputs, part, split, range); }},
                winputs);
  st = w.Begin();
  if (st.ok()) KeepWholeIfItFits(og, runs, winputs, split.ranges, w);
  // The inputs this range's writer reports: it taps and counts every event
  // of theirs (JobPlan::ReporterRange: all of them without time ranges).
  std::vector<char> reports(og.inputs.size());
  bool any_reported = false;
  for (size_t j = 0; j < og.inputs.size(); ++j)
    any_reported |= reports[j] = cx_.plan.ReporterRange(og.inputs[j]) == range;
  uint64_t since_pause = 0;
  std::vector<OverviewTap> taps;  // what overview.trace.json keeps of each input
  if (overview_ && any_reported)
    for (size_t j = 0; j < og.inputs.size(); ++j) taps.push_back(overview_->Tap(og.inputs[j], winputs[j].data));
  std::vector<analysis::TablesTap> table_taps;  // what tables.sqlite holds of each input
  if (tables_ && any_reported)
    for (size_t j = 0; j < og.inputs.size(); ++j) table_taps.push_back(tables_->Tap(InputFactsOf(cx_.records[og.inputs[j]]), winputs[j].data));
  // Several ranges: runs in memory are cut to the range by position (a later
  // range's file first gets the inputs' metadata records, which the merge
  // puts first); with a spilled run, every event is filtered. The taps of
  // the inputs it reports then go over each run on its own (TapRuns).
  const bool ranged = split.ranges > 1;
  const bool by_position =
      ranged && std::none_of(runs.begin(), runs.end(), [](const merge::SortedRun* r) { return r->spilled(); });
  if (by_position && st.ok()) st = CutToRange(runs, winputs, split, range, w);
  auto in_range = [&](int run, const formats::Event& e) {
    return !ranged || by_position || e.phase == 'M' || split.RangeOf(e, run, winputs[run].clock_shift_ns) == range;
  };
  // Every run in memory, several threads: the taps go beside the merge
  // (TapBeside), not in its serial stage (one range) nor after it (TapRuns,
  // several). Not with the tests' write delay, which Seen sleeps in merge
  // order.
  const bool beside = cx_.threads > 1 && cx_.opts.debug_write_delay_ms <= 0 && any_reported &&
                      std::none_of(runs.begin(), runs.end(), [](const merge::SortedRun* r) { return r->spilled(); });
  MergeHooks hooks;
  // Without a window, and with one range or runs cut to it by position,
  // every event is written: no call per event (a std::function in the
  // merge's serial stage, ~2 % of the 2-thread real16 job's samples).
  if (times_.window.bounded() || (ranged && !by_position))
    hooks.keeps = [&](int run, const formats::Event& e) {
      return in_range(run, e) && Keeps(e, winputs[run].clock_shift_ns);
    };
  if (!beside && !ranged)
    hooks.seen = [&](int run, const formats::Event& e, bool kept) {
      Seen(og, run, e, kept, winputs[run].clock_shift_ns, &since_pause, &taps, &table_taps);
    };
  tbb::task_group tapping;
  if (beside && st.ok())
    tapping.run([&] { TapBeside(og, runs, winputs, reports, &taps, &table_taps, ranged ? kept : nullptr); });
  if (st.ok()) st = WriteMerged(runs, shifts, winputs, w, cx_.threads, hooks, stats);
  tapping.wait();
  if (st.ok() && ranged && any_reported && !beside) st = TapRuns(og, runs, winputs, reports, &taps, &table_taps, kept);
  if (!ranged)
    for (size_t j = 0; j < og.inputs.size(); ++j) (*kept)[j] = winputs[j].events_written;
  if (overview_ && any_reported)
    for (size_t j = 0; j < og.inputs.size(); ++j)
      if (reports[j]) overview_->AddBlock(cx_.records[og.inputs[j]], &taps[j]);
  for (size_t j = 0; j < table_taps.size(); ++j)
    if (reports[j]) tables_->Keep(cx_.records[og.inputs[j]].index, table_taps[j].Finish());
  for (auto* r : runs)
    if (st.ok() && !r->read_status().ok()) st = r->read_status();
  if (st.ok()) st = w.Finish();
  if (st.ok()) defer->emplace();
  if (st.ok()) st = w.Commit();
  for (auto* r : runs) r->Close();  // a later range opens them again
  out.events = w.events_written();
  out.metadata_added = w.metadata_added();
  out.bytes = w.bytes_written();
  out.crc32 = w.parts().empty() ? w.crc32() : 0;
  if (st.ok()) out.parts = w.parts();  // a failed output's parts were removed: none is listed
  if (st.ok()) RemoveOtherLayouts(out.path, out.parts.size());
  return st;
}

void OutputWriter::KeepWholeIfItFits(const OutputGroup& og, const std::vector<merge::SortedRun*>& runs,
                                     const std::vector<formats::WriterInput>& winputs, int ranges, OutputParts& w) {
  // Every event's bound, from the runs in memory (a spilled run's events
  // are not; a time range's file also gets the metadata records again):
  // each input's sum from its decode, and its process metadata records',
  // which carry this output's labels.
  if (!w.tracks() || ranges > 1) return;
  const std::optional<uint64_t> room = w.EntryRoom();
  if (!room) return;
  uint64_t bound = 0;
  for (size_t j = 0; j < runs.size(); ++j) {
    if (runs[j]->spilled()) return;
    const InputRecord& r = cx_.records[og.inputs[j]];
    const auto& events = runs[j]->data().events;
    if (r.entry_bound_events != events.size()) return;  // not summed at its decode: tracked
    bound += r.entry_bound_bytes;
    for (uint32_t k : r.process_meta_events) bound += formats::ChromeWriter::EntryBound(winputs[j], events[k]);
    if (bound > *room) return;
  }
  w.KeepWholeIfFits(bound);
}

std::vector<formats::WriterInput> OutputWriter::Inputs(const OutputGroup& og, OutputRecord& out,
                                                       std::string* time_unit) {
  std::vector<formats::WriterInput> winputs(og.inputs.size());
  merge::Namespacer ns;
  if (cx_.clocks) cx_.clocks->Solve();  // a no-op: solved before the first write
  bool units_agree = true;
  for (size_t j = 0; j < og.inputs.size(); ++j) {
    const size_t i = og.inputs[j];
    InputRecord& r = cx_.records[i];
    if (cx_.clocks) cx_.clocks->Assign(r);  // its clock offset (once)
    const auto& data = runs_.get(i)->data();
    merge::InputNamespace ids = ns.Add(data);
    winputs[j].clock_shift_ns = ClockAlignment::ShiftOf(r);
    winputs[j].data = &data;
    winputs[j].SetOutPids(std::move(ids.out_pid));
    winputs[j].pid_order = std::move(ids.pid_order);
    winputs[j].id_base = ids.id_base;
    winputs[j].label = r.label;
    out.inputs.push_back(r.path);
    if (r.rank) out.ranks.push_back(*r.rank);
    const std::string& u = data.meta.display_time_unit;
    if (!u.empty()) {
      if (time_unit->empty()) *time_unit = u;
      else if (*time_unit != u) units_agree = false;
    }
  }
  std::sort(out.ranks.begin(), out.ranks.end());
  out.ranks.erase(std::unique(out.ranks.begin(), out.ranks.end()), out.ranks.end());
  if (time_unit->empty() || !units_agree) *time_unit = "ms";
  return winputs;
}

absl::Status OutputWriter::OpenRuns(const std::vector<merge::SortedRun*>& runs) {
  // This output's share of the merge budget pays one read buffer per
  // spilled run.
  size_t n_spilled = 0;
  for (auto* r : runs) n_spilled += r->spilled();
  const uint64_t share = merge_budget_ / static_cast<uint64_t>(std::max(1, cx_.threads));
  uint64_t per_run = n_spilled ? (share > kWriterBytes ? share - kWriterBytes : 0) / n_spilled : 0;
  per_run = std::clamp<uint64_t>(per_run, kMinReadBuffer, kMaxReadBuffer);
  absl::Status st;
  for (auto* r : runs)
    if (st.ok()) st = r->Open(per_run);
  return st;
}

namespace {
// AlignedEvent: `e` with its ts on the aligned clock (the window holds
// aligned times).
formats::Event AlignedEvent(const formats::Event& e, int64_t shift_ns) {
  formats::Event aligned = e;
  aligned.ts_ns += shift_ns;
  return aligned;
}
}  // namespace

absl::Status OutputWriter::CutToRange(const std::vector<merge::SortedRun*>& runs,
                                      std::vector<formats::WriterInput>& winputs, const merge::TimeSplit& split,
                                      int range, OutputParts& w) {
  for (size_t j = 0; j < runs.size(); ++j) {
    merge::SortedRun& run = *runs[j];
    const int64_t shift = winputs[j].clock_shift_ns;
    const int index = static_cast<int>(j);
    if (range > 0) {
      // The merge puts every metadata record first, run by run: so do we.
      const size_t lo = merge::FirstAtOrAbove(run, index, shift, split.bounds[static_cast<size_t>(range - 1)]);
      for (size_t p = 0; p < lo && run.keys()[p].ts_ns == INT64_MIN; ++p) {
        const formats::Event& e = run.events()[run.keys()[p].index];
        if (!Keeps(e, shift)) continue;
        if (absl::Status st = w.WriteEvent(index, winputs[j], e); !st.ok()) return st;
      }
      run.SkipTo(lo);
    }
    if (range < split.ranges - 1)
      run.SetEnd(merge::FirstAtOrAbove(run, index, shift, split.bounds[static_cast<size_t>(range)]));
  }
  return absl::OkStatus();
}

absl::Status OutputWriter::TapRuns(const OutputGroup& og, const std::vector<merge::SortedRun*>& runs,
                                   const std::vector<formats::WriterInput>& winputs, const std::vector<char>& reports,
                                   std::vector<OverviewTap>* taps, std::vector<analysis::TablesTap>* table_taps,
                                   std::vector<uint64_t>* kept) {
  // Each input's taps and counts see its own events only, in its run's
  // order, which is their order in the merge: the runs are tapped side by
  // side, each on one thread.
  for (auto* r : runs) r->Close();
  absl::Status st = OpenRuns(runs);
  if (!st.ok()) return st;
  tbb::this_task_arena::isolate([&] {
    tbb::parallel_for(size_t{0}, runs.size(), [&](size_t j) {
      if (!reports[j]) return;
      const int run = static_cast<int>(j);
      const int64_t shift = winputs[j].clock_shift_ns;
      uint64_t since_pause = 0;
      while (const formats::Event* e = runs[j]->Next()) TapOne(og, run, *e, shift, &since_pause, taps, table_taps, kept);
    });
  });
  return absl::OkStatus();
}

void OutputWriter::TapBeside(const OutputGroup& og, const std::vector<merge::SortedRun*>& runs,
                             const std::vector<formats::WriterInput>& winputs, const std::vector<char>& reports,
                             std::vector<OverviewTap>* taps, std::vector<analysis::TablesTap>* table_taps,
                             std::vector<uint64_t>* kept) {
  tbb::parallel_for(size_t{0}, runs.size(), [&](size_t j) {
    if (!reports[j]) return;
    const merge::SortedRun& run = *runs[j];
    const merge::SortKey* keys = run.keys();
    const formats::Event* events = run.events();
    const int64_t shift = winputs[j].clock_shift_ns;
    uint64_t since_pause = 0;
    for (size_t k = 0; k < run.size(); ++k)
      TapOne(og, static_cast<int>(j), events[keys[k].index], shift, &since_pause, taps, table_taps, kept);
  });
}

void OutputWriter::TapOne(const OutputGroup& og, int run, const formats::Event& e, int64_t shift_ns,
                          uint64_t* since_pause, std::vector<OverviewTap>* taps,
                          std::vector<analysis::TablesTap>* table_taps, std::vector<uint64_t>* kept) {
  const bool keep = Keeps(e, shift_ns);
  if (kept) (*kept)[static_cast<size_t>(run)] += keep;  // written in one range's file (its metadata counted once)
  Seen(og, run, e, keep, shift_ns, since_pause, taps, table_taps);
}

bool OutputWriter::Keeps(const formats::Event& e, int64_t shift_ns) const {
  return !times_.window.bounded() || times_.window.Keeps(shift_ns ? AlignedEvent(e, shift_ns) : e);
}

void OutputWriter::Seen(const OutputGroup& og, int run, const formats::Event& e, bool kept, int64_t shift_ns,
                        uint64_t* since_pause, std::vector<OverviewTap>* taps,
                        std::vector<analysis::TablesTap>* table_taps) {
  if (!kept) {
    InputRecord& r = cx_.records[og.inputs[run]];
    r.dropped.Add(formats::DropReason::kWindow);
    if (times_.window.by_start) {
      const int64_t start = formats::TimeWindow::StartOf(shift_ns ? AlignedEvent(e, shift_ns) : e);
      if (start >= times_.window.end_ns) r.window_next_start_ns = std::min(r.window_next_start_ns, start);
    }
    return;
  }
  // A follow window repeats its inputs' metadata: counted apart, so that
  // the windows' events add up to the job's (account.cc).
  if (times_.window.by_start && e.phase == 'M') ++cx_.records[og.inputs[run]].metadata_written;
  if (!taps->empty()) (*taps)[run].Event(e, shift_ns);
  if (!table_taps->empty()) (*table_taps)[run].Event(e, shift_ns);
  if (cx_.opts.debug_write_delay_ms > 0 && ++*since_pause == 1000) {
    *since_pause = 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(cx_.opts.debug_write_delay_ms));
  }
}

void OutputWriter::Succeeded(const OutputGroup& og, int range, const std::vector<formats::WriterInput>& winputs,
                             const std::vector<uint64_t>& kept, OutputRecord& out, double seconds,
                             const MergeStats& stats) {
  std::vector<const InputRecord*> done;
  std::vector<std::string> blocks;
  for (size_t j = 0; j < og.inputs.size(); ++j) {
    if (cx_.plan.ReporterRange(og.inputs[j]) != range) continue;
    InputRecord& r = cx_.records[og.inputs[j]];
    r.events_written = kept[j];
    r.output = RangeFileName(og.name, 0, cx_.plan.time_ranges);  // its output's first file
    done.push_back(&r);
    if (overview_) blocks.push_back(overview_->Block(og.inputs[j]));
  }
  // The output is in place: record it for --resume (with the inputs it
  // reports; its record lists the paths of all).
  if (journal_) {
    if (absl::Status js = journal_->Append(out, done, blocks); !js.ok())
      cx_.job.Say(absl::StrCat("journal: ", js.message()));
  }
  if (cx_.opts.verbose)
    cx_.job.Say(absl::StrFormat("wrote %s (%d events, %d bytes, %.2f s%s)", out.path, out.events, out.bytes, seconds,
                                stats.ranges ? absl::StrFormat("; %d %s, serial stages: %s %.3f s, count %.3f s, append %.3f s; "
                                                               "appends and copies waited %.2f s for the disk",
                                                               stats.ranges,
                                                               stats.merged_serially ? "batches merged in order"
                                                                                     : "ranges",
                                                               stats.merged_serially ? "merge" : "cut",
                                                               stats.cut_ns / 1e9, stats.count_ns / 1e9,
                                                               stats.append_ns / 1e9, stats.disk_wait_ns / 1e9)
                                             : ""));
}

void OutputWriter::Failed(const OutputGroup& og, OutputRecord& out, std::string_view why) {
  // An output that could not be written is removed: its inputs' events not
  // dropped already count as output_failed.
  for (size_t i : og.inputs) {
    InputRecord& r = cx_.records[i];
    r.events_written = 0;
    r.metadata_written = 0;
    r.output.clear();
    r.DropUnaccounted(formats::DropReason::kOutputFailed);
  }
  out.events = 0;
  if (!out.error.empty()) {  // an exception: the file is left to the temporary's cleanup
    cx_.job.Say(absl::StrCat(out.path, ": ", out.error));
    return;
  }
  out.error = std::string(why);
  out.bytes = 0;  // removed
  out.crc32 = 0;
  // An earlier run's files of that output would pass for this run's.
  ::unlink((cx_.opts.out_dir + "/" + out.path).c_str());
  RemoveOtherLayouts(out.path, 0);
  cx_.job.Say(absl::StrCat("cannot write ", cx_.opts.out_dir, "/", out.path, ": ", AbslView(why)));
}

void OutputWriter::RemoveOtherLayouts(const std::string& name, size_t parts) const {
  // An earlier run's files of this output in another layout (one file, or
  // more parts) would pass for this run's.
  const std::string dir = cx_.opts.out_dir + "/";
  if (parts) ::unlink((dir + name).c_str());
  for (size_t k = std::max<size_t>(parts + 1, 1);; ++k)
    if (::unlink((dir + PartName(name, static_cast<int>(k))).c_str()) != 0) break;
}

std::string OutputWriter::OtherData(const OutputGroup& og, const std::vector<formats::WriterInput>& winputs,
                                    int part, const merge::TimeSplit& split, int range) const {
  using formats::AppendJsonString;
  std::string o = "{\"tracemill_version\":";
  AppendJsonString(kVersion, &o);
  if (split.ranges > 1) {
    // The range's events start at or after its first bound and before its
    // last (aligned ns; null: open).
    auto bound = [&](int b) {
      return b < 0 || b >= static_cast<int>(split.bounds.size()) ? std::string("null")
                                                                 : absl::StrCat(split.bounds[b].ts_ns);
    };
    absl::StrAppend(&o, ",\"time_range\":{\"index\":", range + 1, ",\"of\":", split.ranges, ",\"of_output\":\"",
                    og.name, "\",\"starts_from_ns\":", bound(range - 1), ",\"starts_before_ns\":", bound(range),
                    ",\"note\":\"one of the output's consecutive time ranges (--time-ranges), about the same number of "
                    "events each; metadata records in every range\"}");
  }
  if (part > 0)
    absl::StrAppend(&o, ",\"part\":{\"index\":", part, ",\"of_output\":\"", RangeFileName(og.name, range, split.ranges),
                    "\",\"note\":\"a time part: the events that start after the previous part's last; "
                    "metadata records repeated\"}");
  o.append(",\"time_base\":{\"unit\":\"us\",\"relative\":");
  o.append(cx_.opts.relative_time ? "true" : "false");
  // What the inputs' own times are: since the epoch, or (a trace with no
  // epoch base, times before 2000) since each input's own start.
  size_t own_start = 0, epoch = 0, aligned = 0;  // aligned: own-start inputs shifted onto one clock
  for (size_t i : og.inputs) {
    const InputRecord& r = cx_.records[i];
    if (r.has_span) ++(r.last_ts_ns < kYear2000Ns ? own_start : epoch);
    aligned += r.has_span && r.last_ts_ns < kYear2000Ns && r.clock_applied && absl::StartsWith(r.clock_domain, "rank ");
  }
  const char* clock = own_start == 0 ? "epoch" : epoch == 0 ? "input_start" : "mixed";
  absl::StrAppend(&o, ",\"offset_ns\":", times_.offset_ns, ",\"inputs_clock\":\"", clock, "\",\"note\":\"",
                  own_start == 0 ? "ts = (absolute ns since the Unix epoch - offset_ns) / 1000"
                  : epoch == 0 && own_start == 1
                      ? "ts = (ns since the input's own start, as its file gives them: it has no epoch base - "
                        "offset_ns) / 1000"
                  : epoch == 0 && aligned == own_start
                      ? "ts = (ns since the reference rank's own start: each input's own clock aligned onto it "
                        "from their collective operations, manifest.json clocks - offset_ns) / 1000"
                  : epoch == 0 ? "ts = (ns since each input's own start, as its file gives them - offset_ns) / "
                                 "1000: the inputs are not on one clock"
                                 : "ts = (ns as each input gives them - offset_ns) / 1000: some inputs count from "
                                   "the Unix epoch, some from their own start",
                  "\"}");
  o.append(",\"inputs\":[");
  for (size_t k = 0; k < og.inputs.size(); ++k) {
    const InputRecord& r = cx_.records[og.inputs[k]];
    const auto& data = runs_.get(og.inputs[k])->data();
    if (k) o.push_back(',');
    o.append("{\"path\":");
    AppendJsonString(r.path, &o);
    o.append(",\"rank\":");
    if (r.rank) absl::StrAppend(&o, *r.rank); else o.append("null");
    o.append(",\"label\":");
    AppendJsonString(winputs[k].label, &o);
    int64_t lo = 0, hi = 0;
    if (const auto& listed = winputs[k].pid_order; !listed.empty()) {  // numbered in this order
      lo = winputs[k].out_pid[listed.front()];
      hi = winputs[k].out_pid[listed.back()];
    }
    absl::StrAppend(&o, ",\"pids\":[", lo, ",", hi, "]");
    if (r.clock_decided)
      absl::StrAppend(&o, ",\"clock_offset_ns\":", r.clock_offset_ns, ",\"clock_applied\":",
                      r.clock_applied ? "true" : "false");
    o.append(",\"metadata\":{");
    bool first = true;
    for (const auto& [key, value] : data.meta.top_level) {
      if (!first) o.push_back(',');
      first = false;
      o.push_back('"');
      o.append(key);
      o.append("\":");
      o.append(value);
    }
    o.append("}}");
  }
  o.append("]}");
  return o;
}

}  // namespace tracemill::pipeline
