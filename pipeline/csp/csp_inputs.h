#pragma once
// The inputs and the shape of a `tracemill csp` job (pipeline/csp/csp.h):
// `<profile_path>/profile/<anything>.<rank>` (one Paddle profile per rank),
// `<profile_path>/dcgm/<anything>.<trainer>` (dcgmi dmon logs) and
// `<profile_path>/net/<anything>.<trainer>` (network logs,
// formats/paddle/net_log.h), ranks and trainers from the `.N` suffix as
// CrossStackProfiler reads them
// (`int(fileName.split(".")[-1])`); then the job's shape: trainers, groups,
// which trainers are displayed, and which ranks have no file.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pipeline/csp/csp.h"
#include "pipeline/inputs/input_record.h"
#include "pipeline/job.h"

namespace tracemill::pipeline {

// CspInputs: the job's files, as records in the job's summary.
struct CspInputs {
  std::string root;                         // --profile-path
  std::string profile_dir;                  // <root>/profile
  bool have_dcgm_dir = false;               // <root>/dcgm exists
  std::map<int64_t, size_t> rank_input;     // rank -> index in summary.inputs
  std::map<int64_t, size_t> trainer_input;  // trainer -> index in summary.inputs (DCGM logs)
  bool have_net_dir = false;                // <root>/net exists
  std::map<int64_t, size_t> net_input;      // trainer -> index in summary.inputs (network logs)
};

// ListCspInputs lists profile/, dcgm/ and net/ into `job.summary().inputs`
// (sorted by name; a file without a numeric suffix is skipped with a note,
// a second file of one rank or trainer is rejected). False (exit 2, said):
// profile/ cannot be read or holds no rank file.
bool ListCspInputs(const CspOptions& opts, Job& job, CspInputs* in);

// CspShape: the job's shape, from the options and the files found.
struct CspShape {
  int64_t gpus_per_trainer = 8;
  int64_t trainer_num = 0;    // --trainer-num, else from the highest rank file
  int64_t group_size = 0;     // --group-size, else trainer_num
  int64_t display = 2;        // --display-size
  int64_t groups = 0;         // trainer_num / group_size
  int64_t shown = 0;          // displayed slots per group: min(display, group_size)
  std::vector<int64_t> missing_ranks;  // ranks of the job with no profile file
  std::vector<int64_t> missing_dcgm;   // displayed trainers with no DCGM log (if dcgm/ has any)
  std::vector<int64_t> missing_net;    // displayed trainers with no network log (if net/ has any)

  // The rank in slot `s` of group `g` on local GPU `gpu`.
  int64_t RankAt(int64_t g, int64_t s, int64_t gpu) const { return (g * group_size + s) * gpus_per_trainer + gpu; }
};

// ShapeCspJob works out the shape, warns about files outside it (in their
// records) and says each missing rank (unless quiet). False (exit 2, said):
// --trainer-num is not a multiple of --group-size.
bool ShapeCspJob(const CspOptions& opts, const CspInputs& in, Job& job, CspShape* shape);

}  // namespace tracemill::pipeline
