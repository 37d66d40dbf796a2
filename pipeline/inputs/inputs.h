#pragma once
// The inputs of a convert job: the paths on the command line expanded into
// one record per input (InputRecord), in path order, before anything is
// read. Directories are recursed (each once, so symlink loops end), the
// output directory is never read, paths that cannot be read become rejected
// records, and an smdebug profiler folder's files become one record per node
// (pipeline/inputs/smdebug_inputs.h).
#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "pipeline/inputs/input_record.h"
#include "pipeline/job.h"

namespace tracemill::pipeline {

// ExpandInputs expands files and directories (recursed, sorted) into input
// records; paths that cannot be read become rejected records (errno as it
// is now). A directory is walked once (symlink loops end), and the output
// directory `out_dir` (device, inode) is never walked: a re-run of
// `convert job -o job/out` does not read its own outputs. Returns false if
// an argument is the output directory itself (a usage error: the outputs
// would replace inputs).
bool ExpandInputs(const std::vector<std::string>& args, std::pair<dev_t, ino_t> out_dir,
                  std::vector<InputRecord>* records);

// NothingToConvert: the usage error when no input can be read: "no input
// files in A, B: ..." when the paths `args` name no file at all (empty
// folders), else the count of `unreadable` paths (each already has its line:
// a missing file is not a folder with no files in it).
std::string NothingToConvert(const std::vector<std::string>& args, size_t unreadable);

// ListInputs is the convert job's input stage: ExpandInputs, then the
// usage errors (-o among the inputs; no readable input at all: each path's
// line, then NothingToConvert's), then the smdebug grouping
// (`no_system_metrics` skips their system metrics) and each record's
// `index`. Returns false after setting the job's exit status (2).
bool ListInputs(const std::vector<std::string>& args, const std::string& out_dir_path,
                std::pair<dev_t, ino_t> out_dir, bool no_system_metrics, Job& job,
                std::vector<InputRecord>* records);

}  // namespace tracemill::pipeline
