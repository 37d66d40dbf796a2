#pragma once
// The convert job's oneTBB flow graph: decode and sort, then merge and write.
//
//   input_node<size_t>        the inputs to decode, in DecodeSchedule order
//     -> limiter_node         at most `slots` inputs in flight (the decode budget)
//     -> multifunction_node   DecodeStage::Decode (read, inflate, decode, sort,
//          |                  keep or spill), unlimited concurrency
//          | port 0 -> the limiter's decrementer (a slot is free again)
//          | port 1 -> function_node OutputWriter::Write (unlimited: outputs
//                       in parallel), fed with the groups OutputGroups says
//                       are ready (overlap), or, in two stages, with every
//                       group once all inputs are decoded and `before_writing_all`
//                       has run.
//
// Nothing throws across a node: the bodies catch at their edge.
#include <functional>

#include "pipeline/convert/decode_stage.h"
#include "pipeline/convert/output_groups.h"
#include "pipeline/convert/write_output.h"

namespace tracemill::pipeline {

// DecodeAndWrite runs the graph over `schedule`. In two stages (no
// overlap), `before_writing_all` runs between decoding and writing; when it
// returns false nothing is written and DecodeAndWrite returns false.
// Returns true once every output is written.
bool DecodeAndWrite(const DecodeSchedule& schedule, DecodeStage& decode, OutputGroups& groups,
                    OutputWriter& writer, const std::function<bool()>& before_writing_all);

}  // namespace tracemill::pipeline
