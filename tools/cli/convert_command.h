#pragma once
// `tracemill convert`: its options, their checks, and the run
// (flags -> pipeline::ConvertOptions -> pipeline::RunConvert).
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "pipeline/options.h"

namespace tracemill::tools::cli {

// ConvertFlags: the flags of `convert` that are checked or converted before
// they become `pipeline::ConvertOptions` (the rest bind to it directly).
struct ConvertFlags {
  std::string group_by = "local-gpu";
  bool no_direct_io = false;
  std::string memory_limit;  // "512M", "4G"; empty: the default
  std::string shard;         // "INDEX/COUNT"; empty: from the environment
  int shard_count = 0;       // --shard-count; 0: not given
  std::string start, end;    // --start / --end as given
  std::string time_offset;   // decimal microseconds as given
  int64_t start_step = -1, end_step = -1;  // -1: not given
  std::string ranks;         // --ranks as given; empty: every rank
  std::string max_output_bytes;  // --max-output-bytes as given; empty: the default
  std::string align_clocks;      // --align-clocks as given; empty: not given
  // --follow and its durations as given (empty: not given).
  bool follow = false;
  bool poll = false;
  std::string window, idle_timeout, grace, poll_interval;
};

// ConvertCommand adds the `convert` subcommand to an app and runs it; or,
// as kClocks, `tracemill clocks` (pipeline/clocks/clocks_job.h), which takes the
// same inputs and options as the convert job it prepares.
class ConvertCommand {
 public:
  enum class Mode { kConvert, kClocks };

  // Adds `convert` (or `clocks`) and its options (help text, names and
  // defaults as the README documents them) to `app`, which must outlive
  // this object.
  explicit ConvertCommand(CLI::App* app, Mode mode = Mode::kConvert);
  ConvertCommand(const ConvertCommand&) = delete;  // CLI11 holds pointers into it
  ConvertCommand& operator=(const ConvertCommand&) = delete;

  // True if the command line named `convert`.
  bool parsed() const { return command_->parsed(); }

  // Checks the flags and runs the conversion, recording `command_line` in
  // the manifest. Returns the exit status (pipeline::ExitCode): kExitUsage,
  // with one "tracemill: ..." line on stderr, for a flag that does not
  // check out; else RunConvert's, after the summary line (unless --quiet).
  int Run(const std::string& command_line);

 private:
  const Mode mode_;
  CLI::App* command_ = nullptr;
  pipeline::ConvertOptions opts_;
  ConvertFlags flags_;
};

}  // namespace tracemill::tools::cli
