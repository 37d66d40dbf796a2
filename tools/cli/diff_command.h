#pragma once
// `tracemill diff CONTROL TEST -o OUTDIR`: HTA's compare_traces between two
// runs (pipeline/diff/diff.h), with the biggest changes on stderr.
#include <CLI/CLI.hpp>
#include <string>

#include "pipeline/diff/diff.h"

namespace tracemill::tools::cli {

// DiffCommand adds `diff` to an app and runs it.
class DiffCommand {
 public:
  // Adds `diff CONTROL TEST -o OUTDIR [options]` to `app`, which must outlive this object.
  explicit DiffCommand(CLI::App* app);
  DiffCommand(const DiffCommand&) = delete;  // CLI11 holds pointers into it
  DiffCommand& operator=(const DiffCommand&) = delete;

  bool parsed() const { return command_->parsed(); }
  // Runs the diff; prints "tracemill: diff: ..." lines (the error, or the
  // counts, the five largest regressions and improvements and the file
  // written). Returns DiffResult::exit_code.
  int Run();

 private:
  CLI::App* command_ = nullptr;
  pipeline::DiffOptions opts_;
};

}  // namespace tracemill::tools::cli
