// tracemill: batch converter for distributed-training profiler traces.
// CLI11 parses the command line (Debian's libcli11-dev): subcommands, --help
// and typed options. Each subcommand defines its options and runs in
// tools/cli/ (convert, csp, manifest merge); `report`, a few lines, stays
// here. This file prints (the report's lines), which the self-test
// HotPath.CheckFindsAPrintingObject relies on.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "pipeline/options.h"
#include "report/html_report.h"
#include "tools/cli/convert_command.h"
#include "tools/cli/csp_command.h"
#include "tools/cli/diff_command.h"
#include "tools/cli/manifest_merge_command.h"
#include "tools/cli/run_summary_lines.h"
#include "tracemill/version.h"

namespace {

using tracemill::pipeline::kExitInternal;
using tracemill::pipeline::kExitOk;
using tracemill::pipeline::kExitUsage;

// `tracemill report OUTDIR`: rebuilds OUTDIR/report.html from its manifest.
class ReportCommand {
 public:
  explicit ReportCommand(CLI::App* app)
      : command_(app->add_subcommand(
            "report",
            "Rebuild OUTDIR/report.html (the HTML run report: summary, step timeline, stragglers, dead "
            "ranks, warnings) from OUTDIR/manifest.json of a finished convert.")) {
    command_->add_option("outdir", out_dir_, "Output directory of a convert run")->required();
    command_->footer(
        "Exit status:\n"
        "  0  OUTDIR/report.html written\n"
        "  1  it could not be written\n"
        "  2  usage error (bad command line, OUTDIR holds no manifest.json of tracemill)\n");
  }
  ReportCommand(const ReportCommand&) = delete;  // CLI11 holds pointers into it
  ReportCommand& operator=(const ReportCommand&) = delete;

  bool parsed() const { return command_->parsed(); }

  int Run() {
    absl::Status st = tracemill::report::WriteReport(out_dir_);
    if (!st.ok()) {
      std::fprintf(stderr, "tracemill: report: %s\n", std::string(st.message()).c_str());
      // No manifest there, or not one of ours: the OUTDIR given is wrong (usage).
      return absl::IsNotFound(st) || absl::IsInvalidArgument(st) ? kExitUsage : kExitInternal;
    }
    std::fprintf(stderr, "tracemill: wrote %s/report.html\n", out_dir_.c_str());
    return kExitOk;
  }

 private:
  CLI::App* command_ = nullptr;
  std::string out_dir_;
};

// EditDistance: Levenshtein distance between `a` and `b` (short words).
size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// UnknownCommand: for `tracemill conver x`, the one line that names the
// word and the nearest command (CLI11 says only "A subcommand is
// required"); "" if `argv[1]` is a command or an option.
std::string UnknownCommand(int argc, char** argv) {
  static constexpr absl::string_view kCommands[] = {"convert", "clocks", "csp", "diff", "manifest", "report"};
  if (argc < 2 || argv[1][0] == '-' || argv[1][0] == '\0') return "";
  const absl::string_view word = argv[1];
  absl::string_view nearest;
  size_t best = 3;  // suggest within 2 edits, or a command the word begins
  for (absl::string_view c : kCommands) {
    if (word == c) return "";
    const size_t d = word.size() >= 3 && c.substr(0, word.size()) == word ? 1 : EditDistance(word, c);
    if (d < best) best = d, nearest = c;
  }
  return absl::StrCat("tracemill: unknown command '", word, "'",
                      nearest.empty() ? "" : absl::StrCat(" (did you mean '", nearest, "'?)"),
                      "; the commands are convert, clocks, csp, diff, manifest merge and report (tracemill --help)\n");
}

std::string JoinArgs(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) absl::StrAppend(&s, i ? " " : "", argv[i]);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  // Every subcommand: a file past `ulimit -f` fails its write with EFBIG (a
  // clear error, temporaries removed) instead of SIGXFSZ killing the process.
  ::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"tracemill: merge per-rank profiler traces (PyTorch profiler/Kineto, Chrome Trace "
               "Event Format, Paddle profiler protobuf, SageMaker Debugger folders, Horovod timelines, "
               "run event logs) into per-GPU Chrome traces, fast and in "
               "parallel."};
  app.footer(tracemill::tools::cli::kExitCodesHelp);
  app.set_version_flag("--version", std::string("tracemill ") + tracemill::kVersion);
  app.require_subcommand(1);
  tracemill::tools::cli::ConvertCommand convert(&app);
  tracemill::tools::cli::ConvertCommand clocks(&app, tracemill::tools::cli::ConvertCommand::Mode::kClocks);
  tracemill::tools::cli::CspCommand csp(&app);
  tracemill::tools::cli::ManifestMergeCommand merge(&app);
  tracemill::tools::cli::DiffCommand diff(&app);
  ReportCommand report(&app);

  if (const std::string unknown = UnknownCommand(argc, argv); !unknown.empty()) {
    std::fputs(unknown.c_str(), stderr);
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }

  if (merge.parsed()) return merge.Run(JoinArgs(argc, argv));
  if (convert.parsed()) return convert.Run(JoinArgs(argc, argv));
  if (clocks.parsed()) return clocks.Run(JoinArgs(argc, argv));
  if (csp.parsed()) return csp.Run(JoinArgs(argc, argv));
  if (report.parsed()) return report.Run();
  if (diff.parsed()) return diff.Run();
  return kExitUsage;
}
