#include "pipeline/convert/graph.h"

#include <tuple>

#include <tbb/flow_graph.h>

namespace tracemill::pipeline {

bool DecodeAndWrite(const DecodeSchedule& schedule, DecodeStage& decode, OutputGroups& groups,
                    OutputWriter& writer, const std::function<bool()>& before_writing_all) {
  using namespace tbb::flow;
  using DecodePorts = multifunction_node<size_t, std::tuple<continue_msg, OutputGroup*>>::output_ports_type;
  graph g;
  size_t next = 0;
  input_node<size_t> source(g, [&](tbb::flow_control& fc) -> size_t {
    if (next < schedule.order.size()) return schedule.order[next++];
    fc.stop();
    return 0;
  });
  limiter_node<size_t> limiter(g, schedule.slots);
  multifunction_node<size_t, std::tuple<continue_msg, OutputGroup*>> decoder(
      g, unlimited, [&](size_t i, DecodePorts& ports) {
        const bool last = decode.Decode(i);
        // Ready outputs are written by tasks of their own, beside the next
        // decodes (with one decode slot, as under a small --memory-limit,
        // that is what keeps a second core busy).
        if (schedule.overlap) {
          for (OutputGroup* og : groups.InputDecoded(i)) std::get<1>(ports).try_put(og);
          if (last) decode.AfterLastDecode();  // beside the last output's write
        }
        std::get<0>(ports).try_put(continue_msg());
      });
  function_node<OutputGroup*> write(g, unlimited, [&](OutputGroup* og) {
    writer.Write(*og);
    return continue_msg();
  });
  make_edge(source, limiter);
  make_edge(limiter, decoder);
  make_edge(output_port<0>(decoder), limiter.decrementer());
  make_edge(output_port<1>(decoder), write);
  source.activate();
  g.wait_for_all();
  if (schedule.overlap) return true;
  // Two stages: every input decoded, now every output written, in parallel.
  if (!before_writing_all()) return false;
  for (OutputGroup* og : groups.AllForWriting()) write.try_put(og);
  g.wait_for_all();
  return true;
}

}  // namespace tracemill::pipeline
