#pragma once
// The outputs of a `tracemill csp` job: one task per (group, local GPU),
// `traceFile_<group>_<gpu>.json`, written straight from the decoded Paddle
// events (formats/paddle/csp_trace.h) by the body of csp's flow-graph node
// (output index -> file + OutputRecord):
//
//   read the group's ranks on this GPU (ranks not displayed first, scanned
//   for pipeline markers only; displayed ones planned: lanes and markers)
//   -> pair the pipeline markers -> the displayed trainers' DCGM rows for
//   this GPU and their network samples (each log parsed once per group,
//   freed after the group's last output) -> write (temporary, then rename)
//   -> the records.
//
// Memory: a worker (one per thread) holds display_size rank files and
// nothing per event, so peak memory is bounded by the threads, not the job.
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <tbb/enumerable_thread_specific.h>

#include "formats/common/byte_buffer.h"
#include "formats/dcgm/dcgm_reader.h"
#include "formats/paddle/csp_trace.h"
#include "formats/paddle/net_log.h"
#include "formats/paddle/paddle_profile.h"
#include "pipeline/csp/csp.h"
#include "pipeline/csp/csp_inputs.h"
#include "pipeline/job.h"

namespace tracemill::pipeline {

// CspRankInfo: per-rank facts for the manifest's `csp` section.
struct CspRankInfo {
  int64_t rank = 0;
  size_t input = 0;  // index into summary.inputs
  bool displayed = false;
  formats::MarkerPairing pairing;
  uint64_t lanes = 0;
  uint64_t gpu_lanes_other_device = 0;
  int64_t max_gpu_device = -1;  // the highest device of its GPU kernels (displayed ranks), -1: none
};

// CspDcgmLines: the lines of a DCGM log that are not GPU rows.
struct CspDcgmLines {
  uint64_t headers = 0;  // `# Entity` lines (the first one is used)
  uint64_t noise = 0;    // host-engine / dmon messages, skipped as CrossStackProfiler skips them
};

// CspOutputTask: one output and what writing it found.
struct CspOutputTask {
  int64_t group = 0;
  int64_t gpu = 0;
  std::string name;
  uint64_t fb_ratio_null = 0;
  uint64_t spans = 0;
  uint64_t dcgm_rows = 0;
  uint64_t net_rows = 0;
};

class CspOutputs {
 public:
  // Lists the tasks (group-major) and the ranks of the shape; the records
  // are `job.summary().inputs`, whose outputs list gets one entry per task.
  CspOutputs(const CspOptions& opts, const CspShape& shape, const CspInputs& in, Job& job);

  size_t size() const { return tasks_.size(); }
  const std::vector<CspOutputTask>& tasks() const { return tasks_; }
  const std::vector<CspRankInfo>& ranks() const { return rank_info_; }

  // Write writes output `k` (see the file comment). At most one call per
  // `k`, several at once. Never throws.
  void Write(size_t k);

  // After every Write: the DCGM rows written or lost per input (by record
  // index). The records hold the spans of the displayed ranks (events and
  // memory events) and of the DCGM logs read, and every rank's steps.
  uint64_t dcgm_written(size_t input) const { return dcgm_written_[input]; }
  uint64_t dcgm_failed(size_t input) const { return dcgm_failed_[input]; }
  // A network log's samples go to every output of its group: written when
  // at least one of them was written (else lost with them: output_failed).
  uint64_t net_outputs_written(size_t input) const { return net_outputs_written_[input]; }
  uint64_t net_samples(size_t input) const { return net_samples_[input]; }
  // A DCGM log's lines that are not GPU rows (all 0 if it was not read).
  const CspDcgmLines& dcgm_lines(size_t input) const { return dcgm_lines_[input]; }

 private:
  // The DCGM and network logs of one group's displayed trainers, each parsed
  // once, by the first output that needs it, and freed after the group's
  // last output.
  struct GroupDcgm {
    explicit GroupDcgm(size_t slots) : once(slots), files(slots), net_once(slots), net_files(slots) {}
    std::vector<std::once_flag> once;                       // per displayed slot
    std::vector<std::unique_ptr<formats::DcgmFile>> files;  // per displayed slot; null if none
    std::vector<std::once_flag> net_once;                   // per displayed slot
    std::vector<std::unique_ptr<formats::NetLogFile>> net_files;  // per displayed slot; null if none
    std::atomic<int> outputs_left{0};
  };
  // Per-worker buffers, reused across outputs.
  struct Worker {
    std::vector<formats::ByteBuffer> rank_files;  // one per displayed slot; [0] also scans
    std::vector<formats::CspRankPlan> plans;      // one per displayed slot
    std::vector<formats::PipelineMarker> markers;
    std::vector<formats::PipelineSpan> spans;
    formats::CspScratch scratch;
  };
  // What one output reads: the writer's input, and per displayed rank its
  // rank_info_ index.
  struct Reading {
    formats::CspTraceInput in;
    std::vector<size_t> displayed_info;
  };

  void WriteTask(size_t k);
  // ReadRanks reads the task's ranks into `rd` (buffers in `w`).
  void ReadRanks(const CspOutputTask& task, Worker& w, Reading& rd);
  // ReadRank reads the rank in slot `s` of the task's group.
  void ReadRank(const CspOutputTask& task, int64_t s, Worker& w, Reading& rd);
  // AddDcgm adds the displayed trainers' rows for the task's GPU.
  void AddDcgm(const CspOutputTask& task, Reading& rd);
  // LoadDcgm parses the DCGM log of group `g`'s displayed slot `s` (once).
  void LoadDcgm(int64_t g, int64_t s);
  // ReadTrainerLog reads trainer `t`'s log of `by_trainer` (DCGM or network)
  // into `buf`; returns its record index, or SIZE_MAX if it has none or it
  // cannot be read (then the record is rejected).
  size_t ReadTrainerLog(const std::map<int64_t, size_t>& by_trainer, int64_t t, formats::ByteBuffer* buf);
  // AddNet adds the group's displayed trainers' network samples.
  void AddNet(const CspOutputTask& task, Reading& rd);
  // LoadNet parses the network log of group `g`'s displayed slot `s` (once).
  void LoadNet(int64_t g, int64_t s);
  std::string OtherData(const CspOutputTask& task) const;
  // Record fills the records from what writing (status `st`) found.
  void Record(CspOutputTask& task, OutputRecord& out, const absl::Status& st, const Reading& rd,
              const formats::CspTraceStats& stats);
  // GroupDone frees a group's DCGM rows after its last output.
  void GroupDone(int64_t g);

  const CspOptions& opts_;
  const CspShape& shape_;
  const CspInputs& in_;
  Job& job_;
  std::vector<InputRecord>& inputs_;
  std::vector<CspOutputTask> tasks_;
  std::vector<std::unique_ptr<GroupDcgm>> group_dcgm_;
  std::vector<CspRankInfo> rank_info_;
  std::map<int64_t, size_t> rank_info_index_;
  std::vector<std::atomic<uint64_t>> dcgm_written_;
  std::vector<std::atomic<uint64_t>> dcgm_failed_;  // rows of outputs not written
  std::vector<std::atomic<uint64_t>> net_outputs_written_;
  std::vector<uint64_t> net_samples_;  // per network log: samples kept (set once, by LoadNet)
  std::vector<CspDcgmLines> dcgm_lines_;  // per DCGM log (set once, by LoadDcgm)
  tbb::enumerable_thread_specific<Worker> workers_;
  std::atomic<size_t> done_{0};
};

}  // namespace tracemill::pipeline
