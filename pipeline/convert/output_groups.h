#pragma once
// Group and place: which output each decoded input goes to.
//
// The decoded rank decides an input's output (KeyFor: by local GPU, rank,
// node, or one output); the output's shard decides who writes it. An input
// whose output another shard writes was decoded for nothing (an
// undetermined input) and is dropped; one that the plan put elsewhere, or
// whose output was written already or kept by --resume, fails loudly
// (never regrouped silently).
//
// With the overlap (decode_stage.h), an output is ready to write as soon as
// every input planned to it is decoded and no input planned to no output is
// left to decode (it might join any output); then no input may join it any
// more. In two stages, every decoded input is placed once decoding is done.
// A group is finished before it is written: inputs in output order (rank,
// then path), duplicate-rank warnings and process labels.
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "pipeline/convert/convert_context.h"
#include "pipeline/convert/decoded_runs.h"

namespace tracemill::pipeline {

// OutputGroup: one output and the inputs it holds.
struct OutputGroup {
  std::string name;  // file name inside OUTDIR
  int kind = 0;      // sort order of outputs: 0 numbered, 1 unranked
  int64_t number = 0;
  std::vector<size_t> inputs;  // indices into the records, in output order once finished
};

class OutputGroups {
 public:
  // `carried_outputs`: outputs an earlier run completed (--resume).
  OutputGroups(ConvertContext& cx, DecodedRuns& runs, const std::set<std::string>& carried_outputs);

  // ExpectInputs (overlap): `order` will be decoded; counts each output's
  // planned inputs and the inputs planned to no output.
  void ExpectInputs(const std::vector<size_t>& order);

  // InputDecoded (overlap): input `i` has been decoded (its run, if any, is
  // in `runs`): places it and returns the groups now ready to write,
  // finished. Thread-safe.
  std::vector<OutputGroup*> InputDecoded(size_t i);

  // PlaceAll (two stages): places every input this process read that has a
  // run.
  void PlaceAll();

  // AllForWriting (two stages): every group, finished, largest (events)
  // first. No input may join them afterwards.
  std::vector<OutputGroup*> AllForWriting();

  // Placed: input `i`'s run went into a group.
  bool placed(size_t i) const { return placed_[i] == kPlaced; }
  // Reported: input `i` was refused a group and its error line said.
  bool refused(size_t i) const { return placed_[i] == kRefused; }
  // Deselected: input `i` was read and left out of the traces (--ranks).
  bool deselected(size_t i) const { return placed_[i] == kDeselected; }
  // Some input was refused because the plan was wrong about it.
  bool plan_broken() const { return plan_broken_; }

 private:
  struct GroupState {
    OutputGroup og;
    size_t pending = 0;    // planned inputs not decoded yet (overlap)
    bool started = false;  // handed to the writer: no input may join any more
  };
  enum : char { kNotPlaced = 0, kPlaced = 1, kRefused = 2, kDeselected = 3 };

  // Place puts decoded input `i` in its output's group, or drops or refuses
  // it (see the file comment). Caller holds mu_.
  void Place(size_t i);
  // Deselect leaves input `i` out of the traces (--ranks): its events are
  // counted as not selected.
  void Deselect(size_t i);
  // Refuse fails input `i`: its decoded output `name` cannot take it.
  void Refuse(size_t i, const std::string& name, int owner, bool late);
  // TakeReady: groups whose inputs are all decoded, marked started.
  std::vector<OutputGroup*> TakeReady();
  // Finish orders a group's inputs and labels them.
  void Finish(OutputGroup& og);

  ConvertContext& cx_;
  DecodedRuns& runs_;
  const std::set<std::string>& carried_outputs_;
  std::mutex mu_;
  std::map<OutputKey, GroupState> groups_;
  std::vector<GroupState*> candidates_;  // groups that may have become ready
  size_t gate_ = 0;                      // inputs planned to no output, not decoded yet (overlap)
  size_t clock_wait_ = 0;                // clock probes not decoded yet (overlap)
  std::vector<char> placed_;
  bool plan_broken_ = false;
};

}  // namespace tracemill::pipeline
