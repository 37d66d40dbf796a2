// The step timeline of the run report (page_sections.h): one inline SVG,
// one row per analysis row.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "report/html_text.h"
#include "report/page_sections.h"

namespace tracemill::report {
namespace {

// Timeline geometry (px).
constexpr int kWidth = 1200;
constexpr int kLabelWidth = 250;
constexpr int kNodeWidth = 58;  // node label column inside the label area
constexpr int kRightPad = 16;
constexpr int kPlotWidth = kWidth - kLabelWidth - kRightPad;
constexpr int kAxisHeight = 30;
constexpr int kRowHeight = 18;
constexpr int kBarHeight = 12;
constexpr size_t kMaxLabelBytes = 30;

std::string Px(double v) { return absl::StrFormat("%.1f", v); }

// The job's span is more than this many times its longest input's: the
// inputs are far apart on one axis (different runs, or time bases).
constexpr int64_t kFarApartRatio = 100;

// When the inputs are far apart on the axis, a sentence saying so.
void FarApartNote(const PageInput& in, std::string* o) {
  int64_t longest = 0;
  int spans = 0;
  for (const InputModel& input : in.model.inputs) {
    if (input.skipped || !input.span_ns) continue;
    longest = std::max(longest, input.span_ns->second - input.span_ns->first);
    ++spans;
  }
  const int64_t span = in.t1_ns - in.t0_ns;
  if (spans < 2 || span / kFarApartRatio <= std::max<int64_t>(longest, 1)) return;
  absl::StrAppend(o, "The inputs are far apart in time: the axis spans ", FormatShortDuration(span),
                  ", the longest input ", FormatShortDuration(longest),
                  ", so their steps are slivers (hover for exact numbers); the notices at the top say why. ");
}

// StrideNote: an input with more than 4,096 steps has every Nth listed in
// the manifest (formats::ListedStride), spread over the whole run.
void StrideNote(const PageInput& in, std::string* o) {
  int64_t stride = 1;
  for (const InputModel& r : in.model.inputs) {
    stride = std::max(stride, r.timeline.steps_stride);
    for (const formats::TrackTimeline& t : r.timeline.tracks) stride = std::max(stride, t.steps_stride);
  }
  if (stride > 1)
    absl::StrAppend(o, "Inputs with more than ", GroupedCount(formats::kMaxStepsPerTrack),
                    " steps show those whose number is a multiple of ", stride,
                    " (up to ", GroupedCount(formats::kMaxStepsPerTrack),
                    " per input, spread over the run; tables.sqlite has every step). ");
}

// The explanation above the timeline: its rows, bars and time origin.
void AppendTimelineNote(const PageInput& in, std::string* o) {
  const Analysis& a = in.analysis;
  o->append("<p class=\"note\">");
  if (a.collapsed) {
    absl::StrAppend(o, GroupedCount(a.rank_inputs),
                    " ranks are too many to read one per row: one row per node (each step from the "
                    "node's earliest start to its latest end), plus a row of its own for every dead "
                    "rank and the slowest ranks. ");
  } else {
    absl::StrAppend(o, "One row per rank, banded by node (", a.gpus_per_node, " ranks per node). ");
  }
  o->append(
      "Each bar is a step (Kineto <code>ProfilerStep#N</code>, Paddle <code>ProfileStep#N</code>, "
      "smdebug <code>Step:N</code>) or an orchestrator round; hover for exact numbers. ");
  if (a.binned) o->append("Rows with many steps draw bins of consecutive steps. ");
  StrideNote(in, o);
  if (a.time_ns) FarApartNote(in, o);
  if (a.time_ns && IsEpochTime(in.t0_ns))
    o->append(absl::FormatTime("Time is relative to %Y-%m-%d %H:%M:%E6S UTC.", absl::FromUnixNanos(in.t0_ns),
                               absl::UTCTimeZone()));
  else if (a.time_ns)
    absl::StrAppend(o, "Time is relative to ", FormatDuration(in.t0_ns), " after the run start.");
  o->append("</p>\n");
}

// The legend under the note: one swatch per kind of mark.
void AppendLegend(std::string* o) {
  absl::StrAppend(
      o, "<div class=\"legend\"><span><span class=\"sw s0\"></span>step</span>",
      "<span><span class=\"sw s1\"></span>next step</span>",
      "<span><span class=\"sw slow\"></span>straggler: slowest of its step, ", StragglerRule(), "</span>",
      "<span><span class=\"sw rd\"></span>round (scheduler), survivors/total</span>",
      "<span><span class=\"sw act\"></span>first to last event of the input</span>",
      "<span><span class=\"sw dead\"></span>dead from the point of failure</span>",
      "<span><span class=\"sw miss\"></span>missing while some input failed (may be dead)</span>",
      "<span><span class=\"sw absent\"></span>not in the inputs (not given)</span></div>\n");
}

// TimelineSvg: the analysis rows -> the `<svg>` element, appended to `o_`.
class TimelineSvg {
 public:
  TimelineSvg(const PageInput& in, std::string* o) : in_(in), a_(in.analysis), t0_(in.t0_ns), o_(*o) {}

  void Append() {
    const int height = kAxisHeight + static_cast<int>(a_.rows.size()) * kRowHeight + 8;
    absl::StrAppend(&o_, "<div class=\"tl\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"", kWidth,
                    "\" height=\"", height, "\" viewBox=\"0 0 ", kWidth, " ", height,
                    "\" role=\"img\" aria-label=\"timeline of steps per rank\">\n");
    o_.append(
        "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
        "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fbe9e9\"/>"
        "<rect width=\"2\" height=\"6\" fill=\"#d62728\" fill-opacity=\".55\"/></pattern>"
        "<pattern id=\"hatch-grey\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
        "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#f3f4f7\"/>"
        "<rect width=\"2\" height=\"6\" fill=\"#9aa3b2\" fill-opacity=\".6\"/></pattern></defs>\n");
    NodeBands();
    Axis(height);
    for (size_t r = 0; r < a_.rows.size(); ++r) RowSvg(a_.rows[r], kAxisHeight + static_cast<int>(r) * kRowHeight);
    o_.append("</svg></div>");
  }

 private:
  double X(int64_t ns) const {
    double f = static_cast<double>(ns - t0_) / static_cast<double>(in_.t1_ns - t0_);
    return kLabelWidth + std::clamp(f, 0.0, 1.0) * kPlotWidth;
  }

  // A shaded band behind the rows of every other node.
  void NodeBands() {
    for (size_t r = 0; r < a_.rows.size(); ++r) {
      const Row& row = a_.rows[r];
      if (row.node >= 0 && row.node % 2 == 1)
        absl::StrAppend(&o_, "<rect class=\"band\" x=\"0\" y=\"", kAxisHeight + r * kRowHeight, "\" width=\"",
                        kWidth, "\" height=\"", kRowHeight, "\"/>\n");
    }
  }

  // Grid lines and labels every tick (html_text.h's AxisTicks), from t0.
  void Axis(int height) {
    for (const AxisTick& t : AxisTicks(in_.t1_ns - t0_)) {
      const double x = X(t0_ + t.at_ns);
      absl::StrAppend(&o_, "<line class=\"grid\" x1=\"", Px(x), "\" y1=\"", kAxisHeight - 6, "\" x2=\"", Px(x),
                      "\" y2=\"", height - 4, "\"/><text class=\"ax\" x=\"", Px(x), "\" y=\"", kAxisHeight - 10,
                      "\" text-anchor=\"", t.at_ns == 0 ? "start" : "middle", "\">", t.label, "</text>\n");
    }
    absl::StrAppend(&o_, "<text class=\"ax\" x=\"6\" y=\"", kAxisHeight - 10, "\">",
                    a_.collapsed ? "node / rank" : "rank", "</text>\n");
  }

  // One row: separator, hover area, labels, then the missing mark or the
  // activity line, bars and dead overlay.
  void RowSvg(const Row& row, int y) {
    const int mid = y + kRowHeight / 2;
    const int bar_y = y + (kRowHeight - kBarHeight) / 2;
    o_.append("<g>");
    if (row.first_of_node && y > kAxisHeight && (row.kind == RowKind::kScheduler || row.node >= 0))
      absl::StrAppend(&o_, "<line class=\"sep\" x1=\"0\" y1=\"", y, "\" x2=\"", kWidth, "\" y2=\"", y, "\"/>");
    RowHoverArea(row, y);
    if (row.first_of_node && row.node >= 0 && (row.kind == RowKind::kRank || row.kind == RowKind::kMissing))
      absl::StrAppend(&o_, "<text class=\"nl\" x=\"6\" y=\"", mid + 4, "\">node ", row.node, "</text>");
    if (row.kind == RowKind::kMore) {
      absl::StrAppend(&o_, "<text class=\"ax\" x=\"", kNodeWidth, "\" y=\"", mid + 4, "\">");
      AppendHtmlEscaped(row.label, &o_);
      o_.append("</text></g>\n");
      return;
    }
    RowLabel(row, mid);
    if (row.kind == RowKind::kMissing) {
      MissingMark(row, bar_y);
      return;
    }
    if (row.span_ns) ActivityLine(row, mid);
    for (const Bar& b : row.bars) BarSvg(row, b, bar_y);
    if (row.dead) DeadOverlay(row, y);
    o_.append("</g>\n");
  }

  // The whole row answers a hover with its label and detail.
  void RowHoverArea(const Row& row, int y) {
    absl::StrAppend(&o_, "<rect class=\"hit\" x=\"0\" y=\"", y, "\" width=\"", kWidth, "\" height=\"", kRowHeight,
                    "\"><title>");
    AppendHtmlEscaped(row.label, &o_);
    if (!row.detail.empty()) {
      o_.append("\n");
      AppendHtmlEscaped(row.detail, &o_);
    }
    o_.append("</title></rect>");
  }

  void RowLabel(const Row& row, int mid) {
    const int label_x = row.kind == RowKind::kNode ? 6 : kNodeWidth;
    absl::StrAppend(&o_, "<text x=\"", label_x, "\" y=\"", mid + 4, "\"",
                    row.dead ? " class=\"dl\"" : row.kind == RowKind::kNode ? " class=\"nl\"" : "", ">");
    AppendHtmlEscaped(TruncateUtf8(row.label, kMaxLabelBytes), &o_);
    if (row.kind == RowKind::kNode) {
      o_.append(" <tspan class=\"ax\">");
      AppendHtmlEscaped(row.detail, &o_);
      o_.append("</tspan>");
    }
    o_.append("</text>");
  }

  // A hatched bar over the whole plot for ranks without an input, red if
  // they count as dead, else grey (not given); ends the row.
  void MissingMark(const Row& row, int bar_y) {
    absl::StrAppend(&o_, "<rect class=\"", row.dead ? "miss" : "absent", "\" x=\"", kLabelWidth, "\" y=\"", bar_y,
                    "\" width=\"", kPlotWidth, "\" height=\"", kBarHeight, "\"><title>");
    AppendHtmlEscaped(row.label, &o_);
    o_.append(": ");
    AppendHtmlEscaped(row.dead_reason, &o_);
    o_.append("</title></rect></g>\n");
  }

  // The input's first to last event.
  void ActivityLine(const Row& row, int mid) {
    absl::StrAppend(&o_, "<line class=\"act\" x1=\"", Px(X(row.span_ns->first)), "\" y1=\"", mid, "\" x2=\"",
                    Px(std::max(X(row.span_ns->second), X(row.span_ns->first) + 1)), "\" y2=\"", mid,
                    "\"><title>");
    AppendHtmlEscaped(row.label, &o_);
    absl::StrAppend(&o_, ": events from ", RelativeTime(row.span_ns->first, t0_), " to ",
                    RelativeTime(row.span_ns->second, t0_), " (",
                    FormatDuration(row.span_ns->second - row.span_ns->first), ")</title></line>");
  }

  // Red from the point of failure (or the start) to the right edge.
  void DeadOverlay(const Row& row, int y) {
    const int64_t from = row.dead_from_ns.value_or(t0_);
    const double x = X(from);
    absl::StrAppend(&o_, "<rect class=\"dead\" x=\"", Px(x), "\" y=\"", y + 1, "\" width=\"",
                    Px(std::max(kLabelWidth + kPlotWidth - x, 2.0)), "\" height=\"", kRowHeight - 2, "\"><title>");
    AppendHtmlEscaped(row.label, &o_);
    if (row.dead_from_ns) absl::StrAppend(&o_, ": dead from ", RelativeTime(from, t0_), "\n");
    else o_.append(": dead for the whole run\n");
    AppendHtmlEscaped(row.dead_reason, &o_);
    o_.append("</title></rect>");
  }

  void BarSvg(const Row& row, const Bar& b, int bar_y) {
    const double x0 = X(b.start_ns), x1 = X(b.end_ns);
    const double w = std::max(x1 - x0, 1.0);
    const char* cls = row.kind == RowKind::kScheduler ? "rd"
                      : b.slowest                     ? "slow"
                      : (b.first_step & 1)            ? "s1"
                                                      : "s0";
    absl::StrAppend(&o_, "<rect class=\"", cls, "\" x=\"", Px(x0), "\" y=\"", bar_y, "\" width=\"", Px(w),
                    "\" height=\"", kBarHeight, "\"><title>");
    BarTooltip(row, b);
    o_.append("</title></rect>");
    if (!a_.collapsed && b.survivors < 0 && b.first_step == b.last_step && w >= 44)
      absl::StrAppend(&o_, "<text class=\"", b.slowest || (b.first_step & 1) ? "bt" : "rt", "\" x=\"",
                      Px(x0 + w / 2), "\" y=\"", bar_y + kBarHeight - 2, "\" text-anchor=\"middle\">#",
                      b.first_step, "</text>");
    if (b.survivors >= 0 && w >= 28)
      absl::StrAppend(&o_, "<text class=\"rt\" x=\"", Px(x0 + w / 2), "\" y=\"", bar_y + kBarHeight - 2,
                      "\" text-anchor=\"middle\">", FormatFraction(b.survivors, b.total), "</text>");
  }

  // The bar's exact numbers: step(s), duration, times, and its comparison.
  void BarTooltip(const Row& row, const Bar& b) {
    AppendHtmlEscaped(row.label, &o_);
    const int64_t dur = b.end_ns - b.start_ns;
    const char* what = row.kind == RowKind::kScheduler ? "round" : "step";
    if (b.first_step == b.last_step) {
      absl::StrAppend(&o_, " \xC2\xB7 ", what, " ", b.first_step, ": ", FormatDuration(dur));
    } else {
      absl::StrAppend(&o_, " \xC2\xB7 ", what, "s ", b.first_step, "\xE2\x80\x93", b.last_step, ": ",
                      FormatDuration(dur), " in all");
    }
    absl::StrAppend(&o_, "\nfrom ", RelativeTime(b.start_ns, t0_), " to ", RelativeTime(b.end_ns, t0_));
    if (b.survivors >= 0) absl::StrAppend(&o_, "\nsurvivors ", FormatFraction(b.survivors, b.total));
    if (row.kind == RowKind::kNode) {
      absl::StrAppend(&o_, "\n", GroupedCount(b.ranks), b.ranks == 1 ? " rank" : " ranks");
      if (b.median_ns >= 0) absl::StrAppend(&o_, ", node median ", FormatDuration(b.median_ns));
      if (!b.slowest_label.empty()) {
        o_.append("\nslowest: ");
        AppendHtmlEscaped(b.slowest_label, &o_);
        absl::StrAppend(&o_, " (", FormatDuration(b.slowest_ns), ")");
      }
      if (b.lag_ns > 0) absl::StrAppend(&o_, ", ", FormatDuration(b.lag_ns), " behind the job median");
    } else if (b.median_ns >= 0) {
      absl::StrAppend(&o_, "\nmedian ", FormatDuration(b.median_ns), ": ", b.lag_ns >= 0 ? "+" : "",
                      FormatDuration(b.lag_ns), " (", FormatPercent(b.lag_ns, b.median_ns), ")");
    }
    if (b.slowest) absl::StrAppend(&o_, "\nstraggler: slowest of its step, ", StragglerRule());
  }

  const PageInput& in_;
  const Analysis& a_;
  const int64_t t0_;
  std::string& o_;
};

}  // namespace

void AppendTimeline(const PageInput& in, std::string* out) {
  out->append("<section id=\"timeline\"><h2>Timeline of steps</h2>\n");
  AppendTimelineNote(in, out);
  AppendLegend(out);
  if (!in.analysis.time_ns || in.analysis.rows.empty()) {
    out->append("<p class=\"note\">No timed events and no rows to draw.</p></section>\n");
    return;
  }
  TimelineSvg(in, out).Append();
  out->append("</section>\n");
}

}  // namespace tracemill::report
