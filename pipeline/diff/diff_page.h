#pragma once
// OUTDIR/diff.html: `tracemill diff`'s page (issue 36), self-contained (inline
// style, no script, nothing fetched): the largest regressions and
// improvements, names in one run only, step times, kernel-type and per-rank
// GPU time of both runs, read back from OUTDIR/diff.sqlite.
#include <string>

#include "absl/status/status.h"
#include "pipeline/diff/diff.h"

namespace tracemill::pipeline {

// WriteDiffPage writes OUTDIR/diff.html (under a temporary name, renamed)
// from OUTDIR/diff.sqlite. Every name from a trace is HTML-escaped.
// Errors: kInternal when diff.sqlite cannot be read or the page written.
absl::Status WriteDiffPage(const DiffOptions& opts);

}  // namespace tracemill::pipeline
