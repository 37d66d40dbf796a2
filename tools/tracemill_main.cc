// tracemill: batch converter for distributed-training profiler traces.
// CLI11 parses the command line (Debian's libcli11-dev): subcommands, --help
// and typed options. Each subcommand defines its options and runs in
// tools/cli/ (convert, csp, manifest merge); `report`, a few lines, stays
// here. This file prints (the report's lines), which the self-test
// HotPath.CheckFindsAPrintingObject relies on.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "pipeline/options.h"
#include "report/html_report.h"
#include "tools/cli/convert_command.h"
#include "tools/cli/csp_command.h"
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
  ReportCommand report(&app);

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
  return kExitUsage;
}
