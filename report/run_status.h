#pragma once
// What the first screen of the report says about the run as a whole (issue
// 21): the header's badge and the banner above the summary cards, both from
// the manifest's `exit_code`, `totals` and `notices` only.
//
// Badge (one line, after "exit N: "):
//   exit 0: "every input converted" only with no event lost and no notice;
//           else "converted" with ", K events lost" and/or ", with
//           warnings"; "no event in the inputs" when none was read.
//   exit 3: "N of M inputs with errors" (M: inputs not skipped), then
//           ", K events lost", ", with warnings", or ", nothing converted"
//           (red) when no event was written.
//   exit 1: "K of N outputs could not be written" (else "internal error");
//   exit 2: "usage error"; 130 / 143: "interrupted (SIGINT / SIGTERM)".
// Green only for "every input converted"; exits 1, 2, 130, 143 and a run
// that wrote nothing are red; the rest orange.
//
// Banner: inputs with errors (how many rejected, how many converted in
// part), outputs that could not be written, events lost (by reason, the
// largest with its cause), then each notice once, in the manifest's order.
// Nothing when all is well.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "formats/common/stats.h"
#include "report/run_model.h"

namespace tracemill::report {

// RunBadge: the badge's CSS class ("b-ok", "b-warn", "b-err") and its text
// ("exit 0: every input converted").
struct RunBadge {
  std::string css;
  std::string text;
};

// BadgeOf: the badge of `m` (rules in the file comment).
RunBadge BadgeOf(const RunModel& m);

// BannerLine: one line of the banner, HTML (input strings escaped); `error`:
// drawn red (inputs, outputs and events lost), else a warning.
struct BannerLine {
  bool error = false;
  std::string html;
};

// BannerLines: the banner of `m`, errors first, then the notices (each
// once); empty when all is well.
std::vector<BannerLine> BannerLines(const RunModel& m);

// DropsOfKind: `t.dropped_by_reason` entries of `kind` (DropKindOfKey),
// largest first, ties in manifest order.
std::vector<std::pair<std::string, uint64_t>> DropsOfKind(const Totals& t, formats::DropKind kind);

// ReasonList: "bad_ts 41,920, truncated 1" (keys escaped), "" if none.
std::string ReasonList(const std::vector<std::pair<std::string, uint64_t>>& drops);

}  // namespace tracemill::report
