#include "tools/cli/diff_command.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tracemill::tools::cli {
namespace {

constexpr char kDiffExitCodesHelp[] =
    "Exit status:\n"
    "  0  OUTDIR/diff.sqlite and OUTDIR/diff.html written\n"
    "  1  a conversion failed or diff.sqlite or diff.html could not be written\n"
    "  2  usage error (bad command line, a side without traces, a rank or iteration it does not have, "
    "nothing to compare)\n";

// The `n` rows with the largest change of duration in direction `sign`.
std::vector<const pipeline::DiffRow*> Top(const std::vector<pipeline::DiffRow>& rows, int sign, size_t n) {
  std::vector<const pipeline::DiffRow*> out;
  for (const auto& r : rows)
    if ((r.test_us - r.control_us) * sign > 0) out.push_back(&r);
  std::stable_sort(out.begin(), out.end(), [&](const auto* a, const auto* b) {
    return (a->test_us - a->control_us) * sign > (b->test_us - b->control_us) * sign;
  });
  if (out.size() > n) out.resize(n);
  return out;
}

std::string Shown(const std::string& name) { return name.size() > 90 ? name.substr(0, 87) + "..." : name; }

}  // namespace

DiffCommand::DiffCommand(CLI::App* app) {
  command_ = app->add_subcommand(
      "diff",
      "Compare two runs as HTA's TraceDiff.compare_traces does: per operator and kernel name, counts and total "
      "duration (us) in CONTROL and TEST and their differences, for the chosen ranks and iterations "
      "(default: the first rank and the first ProfilerStep#N iteration of each), into OUTDIR/diff.sqlite "
      "(table compare_traces; step times and breakdowns of both beside it) and OUTDIR/diff.html. CONTROL and TEST are trace files or folders (converted with --tables=summary "
      "into OUTDIR/control and OUTDIR/test) or output folders of an earlier `convert --tables` (read as they are).");
  command_->add_option("control", opts_.control, "The control run: traces, or a convert --tables output folder")
      ->required();
  command_->add_option("test", opts_.test, "The test run, as CONTROL")->required();
  command_->add_option("-o,--output", opts_.out_dir, "Output directory (created if missing)")->required();
  command_->add_option("--control-rank", opts_.control_ranks, "Ranks of CONTROL to sum, e.g. 0,1 (default: the first)")
      ->delimiter(',');
  command_->add_option("--test-rank", opts_.test_ranks, "Ranks of TEST to sum (default: the first)")->delimiter(',');
  command_->add_option("--control-iteration", opts_.control_iterations,
                       "Iterations (ProfilerStep#N numbers) of CONTROL to sum (default: the first)")
      ->delimiter(',');
  command_->add_option("--test-iteration", opts_.test_iterations, "Iterations of TEST to sum (default: the first)")
      ->delimiter(',');
  command_->add_option("--device", opts_.device, "cpu (CPU operators: stream -1), gpu (the rest), or all")
      ->check(CLI::IsMember({"all", "cpu", "gpu"}))
      ->capture_default_str();
  command_->add_flag("--short-names", opts_.short_names,
                     "Compare HTA's short names (shorten_name: template arguments, arguments and return types "
                     "dropped; memory kernels unchanged): column short_name");
  command_->add_option("--threads", opts_.threads, "Worker threads of the conversions (default: every CPU)")
      ->check(CLI::PositiveNumber);
  command_->add_flag("-q,--quiet", opts_.quiet, "Only errors on the terminal");
  command_->footer(kDiffExitCodesHelp);
}

int DiffCommand::Run() {
  const pipeline::DiffResult r = pipeline::RunDiff(opts_);
  if (r.exit_code != 0) {
    std::fprintf(stderr, "tracemill: diff: %s\n", r.error.c_str());
    return r.exit_code;
  }
  if (r.common == 0)  // a warning: kept with --quiet, as convert keeps its warnings
    std::fprintf(stderr, "tracemill: diff: warning: the two runs have no operator or kernel name in common "
                         "(different models, or not the iterations meant?)\n");
  if (opts_.quiet) return 0;
  size_t added = 0, vanished = 0;
  for (const auto& row : r.rows) added += row.control_counts == 0, vanished += row.test_counts == 0;
  std::fprintf(stderr, "tracemill: diff: %zu names (%zu only in TEST, %zu only in CONTROL)\n", r.rows.size(), added,
               vanished);
  for (const auto& [sign, what] : {std::pair{1, "slower"}, std::pair{-1, "faster"}}) {
    const auto top = Top(r.rows, sign, 5);
    if (top.empty()) continue;
    std::fprintf(stderr, "  %s in TEST:\n", what);
    for (const auto* row : top)
      std::fprintf(stderr, "    %+lld us (%lld -> %lld us, %lld -> %lld calls)  %s\n",
                   static_cast<long long>(row->test_us - row->control_us), static_cast<long long>(row->control_us),
                   static_cast<long long>(row->test_us), static_cast<long long>(row->control_counts),
                   static_cast<long long>(row->test_counts), Shown(row->name).c_str());
  }
  std::fprintf(stderr, "tracemill: diff: wrote %s/diff.sqlite and %s/diff.html\n", opts_.out_dir.c_str(),
               opts_.out_dir.c_str());
  return 0;
}

}  // namespace tracemill::tools::cli
