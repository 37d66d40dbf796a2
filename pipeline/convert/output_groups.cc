#include "pipeline/convert/output_groups.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "formats/common/status_macros.h"
#include "pipeline/clocks/clocks.h"
#include "pipeline/console.h"

namespace tracemill::pipeline {

OutputGroups::OutputGroups(ConvertContext& cx, DecodedRuns& runs, const std::set<std::string>& carried_outputs)
    : cx_(cx), runs_(runs), carried_outputs_(carried_outputs), placed_(cx.records.size(), kNotPlaced) {}

void OutputGroups::ExpectInputs(const std::vector<size_t>& order) {
  for (size_t i : order) {
    if (cx_.clocks && cx_.clocks->IsCandidate(i)) ++clock_wait_;
    if (cx_.plan.planned_key[i]) ++groups_[*cx_.plan.planned_key[i]].pending;
    else ++gate_;
  }
}

std::vector<OutputGroup*> OutputGroups::InputDecoded(size_t i) {
  std::vector<OutputGroup*> ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (runs_.get(i)) Place(i);
    if (cx_.plan.planned_key[i]) {
      GroupState& gs = groups_[*cx_.plan.planned_key[i]];
      if (--gs.pending == 0) candidates_.push_back(&gs);
    } else if (--gate_ == 0) {
      for (auto& [key, gs] : groups_) candidates_.push_back(&gs);
    }
    if (cx_.clocks && cx_.clocks->IsCandidate(i) && --clock_wait_ == 0) {
      // Every probe is decoded: solve the offsets before the first write.
      cx_.clocks->Solve();
      for (auto& [key, gs] : groups_) candidates_.push_back(&gs);
    }
    ready = TakeReady();
  }
  // Each input is in one group only: finished outside the lock.
  for (OutputGroup* og : ready) Finish(*og);
  return ready;
}

void OutputGroups::PlaceAll() {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < cx_.records.size(); ++i)
    if (cx_.read[i] && runs_.get(i)) Place(i);
}

std::vector<OutputGroup*> OutputGroups::AllForWriting() {
  std::vector<std::pair<uint64_t, OutputGroup*>> list;  // (events, group)
  for (auto& [key, gs] : groups_) {
    gs.started = true;
    Finish(gs.og);
    uint64_t events = 0;
    for (size_t i : gs.og.inputs) events += runs_.get(i)->size();
    list.emplace_back(events, &gs.og);
  }
  std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<OutputGroup*> out;
  for (auto& [events, og] : list) out.push_back(og);
  return out;
}

void OutputGroups::Place(size_t i) {
  InputRecord& r = cx_.records[i];
  if (cx_.clock_only[i]) {  // decoded for its collectives only: its output is not written here
    if (int owner = cx_.plan.OwnerOfInput(i); owner != cx_.me()) r.owner_shard = std::max(owner, 0);
    runs_.Free(i);
    return;
  }
  const OutputKey key = KeyFor(r.rank, cx_.plan.group_by, cx_.plan.gpus_per_node);
  const std::string name = OutputFileName(key, cx_.opts.compress);
  const int owner = cx_.plan.OwnerOfRange(key, cx_.plan.ReporterRange(i));  // reports the input
  const bool writes = cx_.plan.WritesAnyRange(key, cx_.me());
  const bool undetermined = cx_.plan.OwnerOfInput(i) < 0;
  if (!writes && undetermined) {
    r.owner_shard = owner;  // decoded for nothing: another shard writes its output
    runs_.Free(i);
    return;
  }
  if (cx_.opts.ranks && r.rank && !cx_.opts.ranks->Contains(*r.rank)) return Deselect(i);
  auto it = groups_.find(key);
  const bool late = it != groups_.end() && it->second.started;
  if (!writes || carried_outputs_.count(name) || late) return Refuse(i, name, owner, late);
  if (owner != cx_.me()) r.owner_shard = owner;  // decoded for another time range only
  if (!r.status.ok() && undetermined) cx_.job.console().Line(ErrorLine(r));
  GroupState& gs = groups_[key];
  gs.og.name = name;
  gs.og.kind = key.kind;
  gs.og.number = key.number;
  gs.og.inputs.push_back(i);
  placed_[i] = kPlaced;
  if (gs.pending == 0) candidates_.push_back(&gs);
}

void OutputGroups::Deselect(size_t i) {
  // Read and counted, not written: its events are dropped as not selected.
  cx_.records[i].DropUnaccounted(formats::DropReason::kNotSelected);
  placed_[i] = kDeselected;
  runs_.Free(i);
}

void OutputGroups::Refuse(size_t i, const std::string& name, int owner, bool late) {
  // The head said one output, the decode another, written elsewhere or
  // already. Never silently.
  InputRecord& r = cx_.records[i];
  plan_broken_ = true;
  r.status = absl::FailedPreconditionError(absl::StrCat(
      owner != cx_.me() ? absl::StrCat("its decoded rank puts it in ", name, ", which shard ", owner,
                                       " writes without it (its head planned it elsewhere)")
      : late            ? absl::StrCat("its decoded rank puts it in ", name,
                                       ", which was written before it was decoded (its head planned it elsewhere)")
                        : absl::StrCat("its decoded rank puts it in ", name,
                                       ", which an earlier run completed without it (--resume)"),
      ": rerun the job without --shard/--resume"));
  r.rejected = true;
  // Its events read count as dropped, so that read = written + dropped holds.
  r.DropUnaccounted(formats::DropReason::kInputRejected);
  cx_.job.console().Line(ErrorLine(r));
  placed_[i] = kRefused;
  runs_.Free(i);
}

std::vector<OutputGroup*> OutputGroups::TakeReady() {
  std::vector<OutputGroup*> ready;
  if (gate_ > 0 || clock_wait_ > 0) return ready;
  for (GroupState* gs : candidates_) {
    if (gs->started || gs->pending > 0) continue;
    gs->started = true;
    if (!gs->og.inputs.empty()) ready.push_back(&gs->og);
  }
  candidates_.clear();
  return ready;
}

void OutputGroups::Finish(OutputGroup& og) {
  std::vector<InputRecord>& records = cx_.records;
  // Input order (rank, then path) first: placement order depends on which
  // decode finished first, the warnings below must not.
  std::stable_sort(og.inputs.begin(), og.inputs.end(), [&](size_t a, size_t b) {
    int64_t ra = records[a].rank.value_or(INT64_MAX), rb = records[b].rank.value_or(INT64_MAX);
    if (ra != rb) return ra < rb;
    return records[a].path < records[b].path;
  });
  std::map<int64_t, std::vector<size_t>> by_rank;  // a rank's inputs are all in its output
  for (size_t i : og.inputs)
    if (records[i].rank && records[i].node.empty() && !records[i].trainer) by_rank[*records[i].rank].push_back(i);
  for (auto& [rank, idx] : by_rank) {
    if (idx.size() < 2) continue;
    for (size_t i : idx) {
      // At most three named: 3,000 inputs claiming one rank made each
      // warning name the 2,999 others (a 416 MB manifest).
      constexpr size_t kNamedClaimants = 3;
      std::string others;
      size_t named = 0;
      for (size_t j : idx)
        if (j != i && named++ < kNamedClaimants) absl::StrAppend(&others, others.empty() ? "" : ", ", records[j].path);
      if (idx.size() - 1 > kNamedClaimants) absl::StrAppend(&others, " and ", idx.size() - 1 - kNamedClaimants, " more");
      records[i].warnings.push_back(
          absl::StrCat("rank ", rank, " is also claimed by ", others, "; each kept as a separate process"));
    }
  }
  for (size_t i : og.inputs) {
    InputRecord& r = records[i];
    if (!r.node.empty()) {
      // smdebug: "<node> · DataIterator", "rank 1 (0001) · DataIterator"
      r.label = r.rank ? absl::StrCat("rank ", *r.rank, " (", r.node, ")") : r.node;
    } else if (!r.rank) {
      r.label = std::string(BaseName(r.path));
    } else if (r.trainer) {  // a trainer's network log, on its first GPU's rank
      r.label = absl::StrCat("rank ", *r.rank, " (trainer ", *r.trainer, ")");
    } else if (by_rank[*r.rank].size() > 1) {
      r.label = absl::StrCat("rank ", *r.rank, " (", AbslView(BaseName(r.path)), ")");
    } else {
      r.label = absl::StrCat("rank ", *r.rank);
    }
  }
}

}  // namespace tracemill::pipeline
