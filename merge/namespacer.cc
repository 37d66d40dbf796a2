#include "merge/namespacer.h"

#include <algorithm>
#include <numeric>

namespace tracemill::merge {

InputNamespace Namespacer::Add(const formats::TraceData& data) {
  InputNamespace ns;
  const auto& procs = data.processes;
  ns.pid_order.resize(procs.size());
  std::iota(ns.pid_order.begin(), ns.pid_order.end(), 0u);
  // Processes with no event but metadata are listed nowhere (DropEmptyProcesses).
  std::erase_if(ns.pid_order, [&](uint32_t p) { return procs[p].empty; });
  std::stable_sort(ns.pid_order.begin(), ns.pid_order.end(), [&](uint32_t a, uint32_t b) {
    int64_t sa = procs[a].has_sort_index ? procs[a].sort_index : INT64_MAX;
    int64_t sb = procs[b].has_sort_index ? procs[b].sort_index : INT64_MAX;
    return sa < sb;
  });
  ns.out_pid.resize(procs.size());
  for (uint32_t local : ns.pid_order) ns.out_pid[local] = next_pid_++;
  ns.id_base = next_id_base_;
  next_id_base_ += data.id_count;
  return ns;
}

}  // namespace tracemill::merge
