#include "pipeline/convert/decoded_runs.h"

#include <utility>

namespace tracemill::pipeline {

DecodedRuns::DecodedRuns(size_t inputs, uint64_t budget_bytes, std::string spill_dir, uint64_t page_cache_bytes,
                         bool direct_io)
    : runs_(inputs),
      accounted_(inputs, 0),
      budget_(budget_bytes),
      spill_dir_(std::move(spill_dir)),
      page_cache_bytes_(page_cache_bytes),
      direct_io_(direct_io) {}

absl::Status DecodedRuns::Keep(size_t i, std::unique_ptr<merge::SortedRun> run,
                               std::unique_ptr<merge::SpillFile>* spill) {
  runs_[i] = std::move(run);
  const uint64_t rb = runs_[i]->ResidentBytes();
  const uint64_t before = resident_.fetch_add(rb);
  accounted_[i] = rb;
  if (before + rb <= budget_) return absl::OkStatus();
  resident_ -= rb;
  accounted_[i] = 0;
  absl::Status st;
  if (!*spill) {
    auto f = merge::SpillFile::Create(spill_dir_, direct_io_);
    if (f.ok()) *spill = std::move(*f);
    else st = f.status();
  }
  if (st.ok()) {
    // Its resident bytes stand for its spilled ones (about as many).
    (*spill)->UseDirect(direct_io_ && cached_spill_.load() + rb > page_cache_bytes_);
    st = runs_[i]->Spill(spill->get());
  }
  if (!st.ok()) {
    runs_[i].reset();
    return st;
  }
  accounted_[i] = runs_[i]->ResidentBytes();
  resident_ += accounted_[i];
  ++spilled_runs_;
  spilled_events_ += runs_[i]->size();
  if (runs_[i]->spill_direct()) ++direct_runs_;
  else cached_spill_ += runs_[i]->spill_bytes();
  return absl::OkStatus();
}

void DecodedRuns::Free(size_t i) {
  resident_ -= accounted_[i];
  accounted_[i] = 0;
  if (runs_[i] && runs_[i]->spilled() && !runs_[i]->spill_direct()) cached_spill_ -= runs_[i]->spill_bytes();
  if (runs_[i]) runs_[i]->DiscardSpill();
  runs_[i].reset();
}

}  // namespace tracemill::pipeline
