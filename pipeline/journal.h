#pragma once
// The journal: an append-only record of the outputs a run has completed, so
// that a run killed by SIGTERM or SIGKILL (a Slurm time limit, a preempted
// or evicted pod, an OOM kill) can be resumed with `--resume`.
//
// OUTDIR/journal.jsonl (a shard: journal.shard-<i>-of-<n>.jsonl) holds one
// JSON object per line: first a header with the job fingerprint
// (pipeline/plan.h), then one line per output, appended by a single write(2)
// right after the output was renamed into place:
//   {"journal":"tracemill","fingerprint":"1a2b3c4d","shard":0,"count":4}
//   {"output":{...as in the manifest, with bytes and crc32...},"inputs":[{...}]}
// A line torn by a crash does not parse and is ignored. The journal is
// removed once the manifest is written; the manifest then carries the same
// facts. `--resume` keeps an output whose file still has the recorded size
// and CRC-32, and carries its inputs' records over without reading them.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pipeline/output/manifest.h"
#include "pipeline/shard.h"

namespace tracemill::pipeline {

// JournalFileName: "journal.jsonl", or "journal.shard-<i>-of-<n>.jsonl".
std::string JournalFileName(const ShardSpec& shard);

// CompletedOutput: one output and the records of its inputs.
struct CompletedOutput {
  OutputRecord output;
  std::vector<InputRecord> inputs;
  // The inputs' blocks of overview.trace.json (pipeline/output/overview.h), by
  // input order; empty if not recorded.
  std::vector<std::string> overview_blocks;
};

// JournalContents: what a journal file holds.
struct JournalContents {
  std::string fingerprint;
  std::vector<CompletedOutput> outputs;
};

// LoadJournal reads `path`. Lines that do not parse are skipped.
// Errors: kNotFound if there is no journal; kDataLoss if it has no header.
absl::StatusOr<JournalContents> LoadJournal(const std::string& path);

// FileSizeAndCrc32 reads a whole file: (size in bytes, CRC-32).
// Errors: kNotFound and the other errno codes of open/read.
absl::StatusOr<std::pair<uint64_t, uint32_t>> FileSizeAndCrc32(const std::string& path);

// Journal: the open journal of a run. Append is thread-safe.
class Journal {
 public:
  // Create writes the header and the `carried` outputs (kept by --resume) to
  // a temporary and renames it over `path`, then opens it for appending.
  // Errors: from open/write/rename.
  static absl::StatusOr<std::unique_ptr<Journal>> Create(const std::string& path,
                                                         const std::string& fingerprint,
                                                         const ShardSpec& shard,
                                                         const std::vector<CompletedOutput>& carried);
  ~Journal();
  // Append records a completed output, its inputs' records and their
  // overview blocks (one line, one write(2)).
  absl::Status Append(const OutputRecord& output, const std::vector<const InputRecord*>& inputs,
                      const std::vector<std::string>& overview_blocks = {});
  // Remove closes and deletes the journal (after the manifest is written).
  void Remove();

 private:
  Journal() = default;
  std::string path_;
  int fd_ = -1;
  std::mutex mu_;
};

}  // namespace tracemill::pipeline
