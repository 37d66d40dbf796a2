#pragma once
// The run report: OUTDIR/manifest.json -> OUTDIR/report.html.
//
// One self-contained page: inline CSS and SVG, a few lines of inline script
// (table sorting only; everything is readable without it), no external
// script, style, font, image or request. A Content-Security-Policy meta tag
// (`default-src 'none'`) makes the browser refuse any request the page might
// still try, and the browser test (tests/report/browser_test.js) checks that
// none is made. Every string from an input is HTML-escaped (html_text.h).
//
// Sections: summary cards, the step timeline (SVG, rows per rank banded by
// node, see analysis.h for the row-collapsing rule), rounds of run event
// logs, stragglers, dead ranks, inputs, outputs, and the log of every
// warning and error per file. Deterministic: the same manifest gives the same
// bytes (no clock, no locale), so `tracemill report` reproduces a run's page.
//
// Size: about 200 bytes per drawn bar and 250 per input row; with the limits
// of `AnalysisLimits` a 4,096-rank run stays under 4 MB (tests/report).
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "report/analysis.h"
#include "report/run_model.h"

namespace tracemill::report {

// RenderReport returns the page for `m` and its analysis `a`.
std::string RenderReport(const RunModel& m, const Analysis& a);

// BuildReportHtml: manifest text -> page. Errors as ParseManifest.
absl::StatusOr<std::string> BuildReportHtml(std::string_view manifest_json);

// WriteReport reads `<out_dir>/manifest.json` and writes
// `<out_dir>/report.html` (temporary name, then rename).
// Errors: as ReadManifest; kPermissionDenied / kInternal from writing.
absl::Status WriteReport(const std::string& out_dir);

}  // namespace tracemill::report
