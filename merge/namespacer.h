#pragma once
// Namespacing: (input, original pid / id) -> output pid / id, per output.
//
// GPU pids repeat on every rank (the device ordinal) and CPU pids repeat
// across containers, so no original pid can be kept in a merged output.
// Each input's processes get dense output pids, rank-major: inputs in output
// order (rank, then path), and inside one input its processes by their
// original `process_sort_index` (then first appearance). The output pid is
// also the process's new `process_sort_index`. Flow, async and counter ids
// (`id`, `bind_id`, `id2.global`) are made unique the same way: input k's
// ids are offset past inputs 0..k-1's. `tid`s are kept: they are scoped by
// pid in every viewer.
#include <cstdint>
#include <vector>

#include "formats/common/trace_data.h"

namespace tracemill::merge {

// InputNamespace: output ids of one input inside one output.
struct InputNamespace {
  std::vector<int64_t> out_pid;  // local pid index -> output pid
  std::vector<uint32_t> pid_order;  // local pid indices in sort_index order; empty processes left out
  uint64_t id_base = 0;          // output id = id_base + local id
};

// Namespacer: assigns ids for the inputs of one output, in order.
class Namespacer {
 public:
  // Add returns the namespace of the next input of this output.
  InputNamespace Add(const formats::TraceData& data);

 private:
  int64_t next_pid_ = 1;
  uint64_t next_id_base_ = 0;
};

}  // namespace tracemill::merge
