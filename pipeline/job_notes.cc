#include "pipeline/job_notes.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "formats/common/stats.h"
#include "formats/common/status_macros.h"

namespace tracemill::pipeline {
namespace {

using formats::DropKind;
using formats::DropReason;
using formats::GroupedCount;

constexpr size_t kNamed = 3;                                      // files named per list
constexpr uint64_t kMostlyLostMin = 100;                          // fewer lost events never fail an input

// "a, b, c and 4 more".
std::string Files(const std::vector<std::string>& paths) {
  std::string s;
  for (size_t k = 0; k < paths.size() && k < kNamed; ++k) absl::StrAppend(&s, k ? ", " : "", paths[k]);
  if (paths.size() > kNamed) absl::StrAppend(&s, " and ", paths.size() - kNamed, " more");
  return s;
}

// The inputs this process reports.
std::vector<const InputRecord*> Reported(const std::vector<InputRecord>& inputs) {
  std::vector<const InputRecord*> v;
  for (const InputRecord& r : inputs)
    if (r.owner_shard < 0) v.push_back(&r);
  return v;
}

uint64_t Lost(const InputRecord& r) { return r.dropped.Of(DropKind::kLoss); }

// Why a rejected input was rejected, in a word or two.
std::string RejectionKind(const InputRecord& r) {
  switch (r.status.code()) {
    case absl::StatusCode::kInvalidArgument:
      return absl::StartsWith(r.status.message(), "empty input") ? "empty" : "not a trace";
    case absl::StatusCode::kDataLoss:
      return "damaged";
    case absl::StatusCode::kResourceExhausted:
      return "over the memory budget";
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kPermissionDenied:
      return "unreadable";
    case absl::StatusCode::kFailedPrecondition:
      return "placed in another output";
    case absl::StatusCode::kAlreadyExists:
      return "duplicate";
    default:  // ELOOP (a symlink loop) and other errno without a code of their own
      return "unreadable";
  }
}

// A skipped file's note, without its details: "not a trace", "empty file".
std::string SkipKind(const InputRecord& r) {
  for (const std::string& w : r.warnings) {
    if (w.rfind("skipped: ", 0) != 0) continue;
    std::string k = w.substr(9);
    if (k.rfind("not a", 0) == 0) return "not a trace";
    for (std::string_view cut : {" (", ":", ";"}) k = k.substr(0, k.find(cut));
    return k;
  }
  return "skipped";
}

// "<n> <label> (<files>); <n> <label> (<files>)" for groups of files, largest first.
std::string Groups(const std::map<std::string, std::vector<std::string>>& groups) {
  std::vector<std::pair<std::string, const std::vector<std::string>*>> v;
  for (const auto& [k, files] : groups) v.emplace_back(k, &files);
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.second->size() > b.second->size(); });
  std::string s;
  for (const auto& [k, files] : v)
    absl::StrAppend(&s, s.empty() ? "" : "; ", files->size(), " ", k, " (", Files(*files), ")");
  return s;
}

// ByReason: the sum of (count, reason) pairs, and "key count, key count" in
// their order.
std::pair<uint64_t, std::string> ByReason(const std::vector<std::pair<uint64_t, int>>& drops) {
  uint64_t sum = 0;
  std::string by;
  for (auto [n, k] : drops) {
    sum += n;
    absl::StrAppend(&by, by.empty() ? "" : ", ", AbslView(DropReasonKey(static_cast<DropReason>(k))), " ",
                    GroupedCount(n));
  }
  return {sum, by};
}

void DropLines(const std::vector<const InputRecord*>& inputs, std::vector<std::string>* lines) {
  formats::DropCounts total;
  for (const InputRecord* r : inputs)
    for (int k = 0; k < formats::kNumDropReasons; ++k) total.n[k] += r->dropped.n[k];
  std::vector<std::pair<uint64_t, int>> lost, design;
  for (int k = 0; k < formats::kNumDropReasons; ++k) {
    if (!total.n[k]) continue;
    (formats::DropReasonKind(static_cast<DropReason>(k)) == DropKind::kLoss ? lost : design)
        .emplace_back(total.n[k], k);
  }
  std::sort(lost.rbegin(), lost.rend());
  std::sort(design.rbegin(), design.rend());
  if (!lost.empty()) {
    const auto [sum, by] = ByReason(lost);
    const auto top = static_cast<DropReason>(lost.front().second);
    const InputRecord* most = nullptr;
    for (const InputRecord* r : inputs)
      if (!most || r->dropped[top] > most->dropped[top]) most = r;
    // The input that lost most is named unless its error line named it.
    lines->push_back(absl::StrCat("dropped ", GroupedCount(sum), sum == 1 ? " event: " : " events: ", by, "; ",
                                  AbslView(DropReasonKey(top)), ": ", AbslView(DropReasonDescription(top)),
                                  most->status.ok()
                                      ? absl::StrCat(" (", GroupedCount(most->dropped[top]), " in ", most->path, ")")
                                      : std::string()));
  }
  if (!design.empty()) {
    const auto [sum, by] = ByReason(design);
    lines->push_back(absl::StrCat("left out on purpose, not lost: ", GroupedCount(sum),
                                  sum == 1 ? " event (" : " events (", by, ")"));
  }
}

void WorldSizeNotice(const std::vector<const InputRecord*>& inputs, std::vector<std::string>* notices) {
  std::map<int64_t, std::vector<std::string>> by_size;
  for (const InputRecord* r : inputs)
    if (r->world_size) by_size[*r->world_size].push_back(r->path);
  if (by_size.size() < 2) return;
  std::string s;
  size_t listed = 0;
  for (const auto& [size, files] : by_size)
    if (listed++ < kNamed) absl::StrAppend(&s, s.empty() ? "" : "; ", size, " (", Files(files), ")");
  if (by_size.size() > kNamed) absl::StrAppend(&s, "; and ", by_size.size() - kNamed, " more sizes");
  notices->push_back(absl::StrCat("the inputs disagree on world_size, so they may come from different jobs: ", s));
}

// Relative times (before 2000) beside epoch times; then, among the epoch
// ones, groups whose time spans do not overlap.
void TimeNotices(const std::vector<const InputRecord*>& inputs, std::vector<std::string>* notices) {
  std::vector<std::string> relative;
  std::vector<const InputRecord*> absolute;
  for (const InputRecord* r : inputs) {
    if (!r->has_span) continue;
    if (r->last_ts_ns < kYear2000Ns)
      relative.push_back(r->path);
    else
      absolute.push_back(r);
  }
  // Ranks on their own clocks: aligned from their collectives (each its own
  // clock domain, `rank N`, shift applied) or drawn as if started together.
  std::set<int64_t> relative_ranks, unaligned_ranks;
  std::vector<std::string> unaligned;
  for (const InputRecord* r : inputs) {
    if (!r->has_span || r->last_ts_ns >= kYear2000Ns || !r->rank) continue;
    relative_ranks.insert(*r->rank);
    if (r->clock_applied && absl::StartsWith(r->clock_domain, "rank ")) continue;
    unaligned_ranks.insert(*r->rank);
    unaligned.push_back(r->path);
  }
  if (absolute.empty() && relative_ranks.size() >= 2 && !unaligned_ranks.empty()) {
    const std::string what =
        "every input's times are relative to its own start (no epoch base, e.g. PyTorch 1.x traces without "
        "baseTimeNanoseconds): ";
    if (unaligned_ranks.size() == relative_ranks.size())
      notices->push_back(absl::StrCat(what, "the ", relative_ranks.size(), " ranks are drawn on one time axis as if "
                                      "they had started together, and their clocks are not aligned (",
                                      Files(relative), ")"));
    else
      notices->push_back(absl::StrCat(what, relative_ranks.size() - unaligned_ranks.size(), " of the ",
                                      relative_ranks.size(), " ranks were aligned from their collectives; ",
                                      unaligned_ranks.size(), " are drawn as if they had started with them (",
                                      Files(unaligned), "; see manifest.json `clocks`)"));
  }
  if (!relative.empty() && !absolute.empty()) {
    std::vector<std::string> abs_paths;
    for (const InputRecord* r : absolute) abs_paths.push_back(r->path);
    notices->push_back(absl::StrCat("mixed time bases: ", relative.size(),
                                    relative.size() == 1 ? " input has" : " inputs have",
                                    " times relative to their start (", Files(relative), "), ",
                                    absolute.size(), " since the epoch (", Files(abs_paths),
                                    "): they are not on one time axis (see --time-offset)"));
  }
  std::sort(absolute.begin(), absolute.end(),
            [](const InputRecord* a, const InputRecord* b) { return a->first_ts_ns < b->first_ts_ns; });
  std::vector<std::pair<std::vector<std::string>, std::pair<int64_t, int64_t>>> runs;  // files, span
  for (const InputRecord* r : absolute) {
    if (runs.empty() || r->first_ts_ns > runs.back().second.second)
      runs.push_back({{}, {r->first_ts_ns, r->last_ts_ns}});
    runs.back().first.push_back(r->path);
    runs.back().second.second = std::max(runs.back().second.second, r->last_ts_ns);
  }
  if (runs.size() < 2) return;
  std::string s;
  for (size_t k = 0; k < runs.size() && k < kNamed; ++k) {
    const auto& [files, span] = runs[k];
    absl::StrAppend(&s, k ? "; " : "",
                    absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::FromUnixNanos(span.first), absl::UTCTimeZone()),
                    " (", Files(files), ")");
  }
  if (runs.size() > kNamed) absl::StrAppend(&s, "; and ", runs.size() - kNamed, " more");
  notices->push_back(
      absl::StrCat("the inputs look like ", runs.size(), " different runs: their time spans do not overlap: ", s));
}

// Notices already in the inputs' warnings: duplicate ranks, no rank.
void RankNotices(const std::vector<const InputRecord*>& inputs, std::vector<std::string>* notices) {
  std::map<int64_t, std::vector<std::string>> claimed;
  std::vector<std::string> unranked;
  for (const InputRecord* r : inputs) {
    for (const std::string& w : r->warnings) {
      if (r->rank && w.find(" is also claimed by ") != std::string::npos) claimed[*r->rank].push_back(r->path);
      if (w.rfind("no rank in distributedInfo or in the file name", 0) == 0) unranked.push_back(r->path);
    }
  }
  for (const auto& [rank, files] : claimed)
    notices->push_back(absl::StrCat("rank ", rank, " is claimed by ", files.size(), " inputs (", Files(files),
                                    "): each kept as a separate process of the same output"));
  // Unranked inputs change the meaning only beside ranked ones (a lone
  // Horovod timeline or a folder of unranked files is simply what it is).
  if (!unranked.empty() && unranked.size() < inputs.size())
    notices->push_back(absl::StrCat(unranked.size(), " input", unranked.size() == 1 ? " has" : "s have", " no rank (",
                                    Files(unranked),
                                    "): kept as unranked processes labelled by file name (see --rank-pattern)"));
}


// A --ranks list that selects none of the ranks read: every ranked input was
// left out as not selected (a typo, or ranks counted from 1), said once
// instead of leaving only a count of drops. Not in a shard's manifest (a
// shard may hold none of the ranks asked for): the merged manifest, over
// every shard's inputs, says it.
void RankSelectionNotice(const std::vector<const InputRecord*>& inputs, std::vector<std::string>* notices) {
  std::vector<int64_t> ranks;
  size_t ranked = 0;
  for (const InputRecord* r : inputs) {
    if (!r->rank || r->events_read == 0) continue;
    if (r->dropped[DropReason::kNotSelected] == 0) return;  // selected
    ranks.push_back(*r->rank);
    ++ranked;
  }
  if (ranked == 0) return;
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  notices->push_back(absl::StrCat("--ranks selects none of the ranks read (", GroupedCount(ranked),
                                  ranked == 1 ? " input, " : " inputs, ", ranks.size() == 1 ? "rank " : "ranks ",
                                  RankRanges(ranks), "): no rank's events were written"));
}

}  // namespace

std::string RankRanges(const std::vector<int64_t>& ranks) {
  std::vector<std::string> ranges;
  size_t more = 0;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (ranges.size() < 8) ranges.push_back(j > i ? absl::StrCat(ranks[i], "-", ranks[j]) : absl::StrCat(ranks[i]));
    else ++more;
    i = j + 1;
  }
  std::string out = absl::StrJoin(ranges, ", ");
  if (more) absl::StrAppend(&out, " and ", more, " more range", more == 1 ? "" : "s");
  return out;
}

void MarkMostlyLost(std::vector<InputRecord>* inputs) {
  for (InputRecord& r : *inputs) {
    const uint64_t lost = Lost(r);
    if (!r.status.ok() || lost < kMostlyLostMin || 2 * lost <= r.events_read) continue;
    DropReason top = DropReason::kTruncated;
    for (int k = 0; k < formats::kNumDropReasons; ++k)
      if (r.dropped.n[k] > r.dropped[top] && formats::DropReasonKind(static_cast<DropReason>(k)) == DropKind::kLoss)
        top = static_cast<DropReason>(k);
    r.status = absl::DataLossError(
        absl::StrCat("most of its events were lost: ", GroupedCount(lost), " of ", GroupedCount(r.events_read),
                     ", the most ", AbslView(DropReasonKey(top)), " (", AbslView(DropReasonDescription(top)), ")"));
  }
}

bool NoTraceAmong(const std::vector<const InputRecord*>& inputs, std::string* why) {
  std::map<std::string, std::vector<std::string>> skipped, rejected;
  for (const InputRecord* r : inputs) {
    if (r->owner_shard >= 0) continue;
    if (r->skipped)
      skipped[SkipKind(*r)].push_back(r->path);
    else if (r->rejected && absl::IsInvalidArgument(r->status))
      rejected[RejectionKind(*r)].push_back(r->path);
    else
      return false;
  }
  *why = absl::StrCat(skipped.empty() ? "" : absl::StrCat("skipped: ", Groups(skipped)),
                      !skipped.empty() && !rejected.empty() ? "; " : "",
                      rejected.empty() ? "" : absl::StrCat("rejected: ", Groups(rejected)));
  return true;
}

std::vector<std::string> Notices(const RunSummary& s) {
  const std::vector<const InputRecord*> inputs = Reported(s.inputs);
  std::vector<std::string> notices;
  WorldSizeNotice(inputs, &notices);
  TimeNotices(inputs, &notices);
  RankNotices(inputs, &notices);
  if (!s.shard.sharded()) RankSelectionNotice(inputs, &notices);  // merged: over every shard's inputs
  return notices;
}

std::vector<std::string> SummaryLines(const RunSummary& s) {
  const std::vector<const InputRecord*> inputs = Reported(s.inputs);
  std::vector<std::string> lines;
  DropLines(inputs, &lines);
  std::map<std::string, std::vector<std::string>> skipped, rejected;
  for (const InputRecord* r : inputs) {
    if (r->skipped)
      skipped[SkipKind(*r)].push_back(r->path);
    else if (r->rejected)
      rejected[RejectionKind(*r)].push_back(r->path);
  }
  size_t n_rejected = 0, n_skipped = 0;
  for (const auto& [k, v] : rejected) n_rejected += v.size();
  for (const auto& [k, v] : skipped) n_skipped += v.size();
  // Rejected inputs each had their error line: counted by kind, not named again.
  if (n_rejected) {
    std::string by;
    for (const auto& [k, v] : rejected) absl::StrAppend(&by, by.empty() ? "" : ", ", v.size(), " ", k);
    lines.push_back(absl::StrCat("rejected ", n_rejected, " input", n_rejected == 1 ? "" : "s", ": ", by));
  }
  if (n_skipped)
    lines.push_back(absl::StrCat("skipped ", n_skipped, " file", n_skipped == 1 ? "" : "s", ": ", Groups(skipped)));
  std::vector<std::string> mostly_lost;
  for (const InputRecord* r : inputs)
    if (!r->rejected && absl::StartsWith(r->status.message(), "most of its events were lost"))
      mostly_lost.push_back(r->path);
  if (!mostly_lost.empty())
    lines.push_back(
        absl::StrCat(mostly_lost.size(), mostly_lost.size() == 1 ? " input lost most of its" : " inputs lost most of their",
                     " events (counted as inputs with errors): ", Files(mostly_lost)));
  if (s.cpu_only)
    lines.push_back(absl::StrCat("a CPU-only job: no input lists a GPU (deviceProperties is empty in each)",
                                 s.group_by == "rank" ? "; one output per rank, not per GPU" : ""));
  for (const std::string& n : s.notices) lines.push_back(absl::StrCat("warning: ", n));
  return lines;
}

}  // namespace tracemill::pipeline
