#pragma once
// `tracemill csp`: the Paddle CrossStackProfiler drop-in's options and run
// (flags -> pipeline::CspOptions -> pipeline::RunCsp).
#include <CLI/CLI.hpp>
#include <string>

#include "pipeline/csp/csp.h"

namespace tracemill::tools::cli {

// CspCommand adds the `csp` subcommand to an app and runs it.
class CspCommand {
 public:
  // Adds `csp` and its options to `app` (CspReporter.py's flags; its
  // camelCase spellings are accepted too). `app` must outlive this object.
  explicit CspCommand(CLI::App* app);
  CspCommand(const CspCommand&) = delete;  // CLI11 holds pointers into it
  CspCommand& operator=(const CspCommand&) = delete;

  // True if the command line named `csp`.
  bool parsed() const { return command_->parsed(); }

  // Runs the job, recording `command_line` in the manifest; prints the
  // summary line unless --quiet. Returns RunCsp's exit status.
  int Run(const std::string& command_line);

 private:
  CLI::App* command_ = nullptr;
  pipeline::CspOptions opts_;
  std::string time_unit_ = "ns";  // "ns" | "us"
  std::string stop_after_;        // hidden: "decode" or empty
};

}  // namespace tracemill::tools::cli
