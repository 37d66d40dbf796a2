#pragma once
// GeneratedInput: the synthetic Kineto-like job every end_to_end benchmark
// reads, written once per process by tools/gen_kineto into a temporary
// directory (never into the repository) and removed at exit.
#include <cstdint>
#include <string>
#include <vector>

namespace tracemill::bench {

struct InputSpec {
  int ranks = 8;
  int64_t events = 50000;  // per rank file
  uint64_t seed = 1;
  std::string tmp_root;    // where the temporary directory goes ($TMPDIR, else /tmp)
  std::string gen_kineto;  // path of the generator binary
  bool keep = false;       // keep the directory (its path is printed)
  // Real traces instead of gen_kineto's (issue 22): these Kineto files,
  // replicated to `ranks` ranks (bench/end_to_end/real_input.h).
  std::vector<std::string> real;
  bool dense = false;  // gen_kineto --dense: ~210 bytes per event (issue 22)
  uint64_t memory_limit = 0;  // convert's --memory-limit, bytes (0: its default)
};

struct GeneratedInput {
  std::string root;      // the temporary directory
  std::string json_dir;  // rank<r>.pt.trace.json
  std::string gzip_dir;  // rank<r>.pt.trace.json.gz, the same JSON gzipped
  int ranks = 0;
  int64_t events_per_rank = 0;
  uint64_t events = 0;      // what the generator says it wrote (all files)
  uint64_t json_bytes = 0;  // uncompressed input bytes (all files)
  uint64_t gzip_bytes = 0;  // on-disk bytes of the gzip copy
  int gpus_per_node = 8;
  bool real = false;        // real traces replicated (real_input.h), not gen_kineto's
  uint64_t memory_limit = 0;  // InputSpec::memory_limit
  std::string label;        // "8x50k_events", "16x300k_events_dense", "real16_resnet50"
};

// Generate writes both copies of the input (or fails with a message on
// stderr and returns false). Call once; `Cleanup` removes the directory.
bool Generate(const InputSpec& spec, GeneratedInput* out);
void Cleanup(const InputSpec& spec, const GeneratedInput& in);

// The generated input of this process (set by the driver before any
// benchmark runs).
const GeneratedInput& Input();
void SetInput(const GeneratedInput& in);

}  // namespace tracemill::bench
