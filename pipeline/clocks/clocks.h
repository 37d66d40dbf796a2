#pragma once
// --align-clocks: one timeline across hosts (merge/clock_offsets.h measures).
//
// Domains: the ranks of one node share a clock (`node N` = rank /
// --gpus-per-node; an smdebug node folder is its own domain; unranked inputs
// are in none). A rank whose times count from its own start (no epoch base,
// PyTorch 1.x: InputPlan::relative_clock, from its head and tail) is a
// domain of its own (`rank N`), so it is a probe and is aligned from its
// own collectives. Each domain's offset is measured on its probe, its lowest
// rank, against the reference domain's probe (the lowest rank of the job).
//
// In the job (pipeline/convert/convert.h):
// - Plan: the probe candidates are, per planned domain, the input with the
//   lowest planned rank, plus every input whose rank only its decode tells.
//   Alignment is considered when the mode is not `off` and the plan shows
//   more than one domain (or undetermined inputs). Every process decodes
//   every candidate, its own or not (a shard, or --resume, decodes the ones
//   it does not write for their collectives only), so every shard and a
//   single process solve the same offsets from the same digests and write
//   the same bytes.
// - Decode: candidates first; every input keeps a digest of its collectives
//   (formats/common/collectives.h; probes a larger one).
// - Solve: once every candidate is decoded, before any output is written
//   (with the overlap, outputs wait for it; in two stages, it runs between
//   the stages). Each domain's probe is its lowest decoded rank among the
//   candidates.
// - Assign: each input gets its domain's shift when it is applied: `on`
//   wherever an offset was found, `auto` when more than one domain was
//   decoded and the domain's estimate is confident. A shift is a constant
//   per input added at merge time (a sorted run stays sorted), and to the
//   input's steps and span, so the manifest and the report use aligned
//   times. Inputs without collectives of their own take their domain's
//   shift; the manifest says which.
// - Check: a rank whose own collectives disagree with its node's probe
//   beyond the tolerance is reported (a warning and `clock.disagrees_ns`
//   on the input); it keeps the node's shift.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "merge/clock_offsets.h"
#include "pipeline/convert/convert_context.h"

namespace tracemill::pipeline {

// ClocksFingerprint: what the clock solution depends on (the version, the
// inputs' paths, sizes and mtimes, --gpus-per-node, --rank-pattern,
// --time-offset, --align-clocks): 8 hex digits. Not the shard count, so one
// `tracemill clocks` serves every shard.
std::string ClocksFingerprint(const ConvertContext& cx);

class ClockAlignment {
 public:
  // Plans from `cx.plan` and sets `clock_probe` on the candidates' records.
  explicit ClockAlignment(ConvertContext& cx);

  // Considered: digests are collected and candidates decoded first.
  bool considered() const { return considered_; }
  // IsCandidate: input `i` must be decoded before the offsets are solved.
  bool IsCandidate(size_t i) const { return considered_ && candidate_[i]; }

  // Solve picks the probes among the decoded candidates and solves their
  // domains (once; later calls do nothing). Thread-safe.
  void Solve();

  // Assign decides decoded input `r`'s shift (its clock_* fields) and, when
  // applied, shifts its steps and span. Once per input (later calls do
  // nothing); after Solve. Then checks its digest against its node's probe
  // and frees it.
  void Assign(InputRecord& r);

  // The shift to add to input `r`'s event times when writing (ns).
  static int64_t ShiftOf(const InputRecord& r) { return r.clock_applied ? r.clock_offset_ns : 0; }

  // ManifestJson: the manifest's `"clocks":{...}` member (with a leading
  // `,\n`), or "" when alignment was not considered or one domain was found.
  std::string ManifestJson() const;

  // SayOutcome prints what was applied and each warning ("tracemill:
  // clocks: ..."), at most 5 warnings; nothing with a single domain.
  void SayOutcome() const;

  // Applied: some input's times were shifted.
  bool applied() const { return applied_.load(); }
  // ShiftsAny: the solution moves some domain (applied, non-zero shift),
  // whether or not an input was assigned yet (`tracemill clocks`).
  bool ShiftsAny() const;

  // GuessNotice: with --align-clocks on, the job-wide warning when a shift
  // that is not confident was applied (the manifest's `notices`, hence the
  // report's badge and the summary's warnings); "" otherwise.
  std::string GuessNotice() const;

  // SaveSolution writes the solved offsets and the probes' digests to
  // `path` (temporary name, then rename): `tracemill clocks` writes
  // OUTDIR/clocks.json once for the shards of a job. Errors: of the write.
  absl::Status SaveSolution(const std::string& path, const std::string& fingerprint) const;
  // LoadSolution reads `path` if it exists and was written for
  // `fingerprint` (ClocksFingerprint): the solution then stands, and no
  // probe needs decoding (IsCandidate is false from now on). Returns whether
  // it was loaded; a file for another job or a damaged one is ignored, with
  // `*note` saying why.
  bool LoadSolution(const std::string& path, const std::string& fingerprint, std::string* note);

  // DomainOf: the clock domain of a decoded input ("" for none): its
  // smdebug node, itself (`rank N`) when its times count from its own start
  // (`relative_clock`, InputPlan::relative_clock), else `node <rank / gpus
  // per node>`.
  static std::string DomainOf(const InputRecord& r, int gpus_per_node, bool relative_clock);

 private:
  struct Domain {
    std::string name;
    int64_t probe_rank = INT64_MAX;
    size_t probe = SIZE_MAX;  // record index
    std::string probe_path;
    merge::DomainOffset offset;
    bool applied = false;
    // The probe's digest and steps: its record's, or (loaded from
    // clocks.json) these copies.
    const formats::CollectiveDigest* digest = nullptr;
    const std::vector<formats::StepSpan>* steps = nullptr;
    formats::CollectiveDigest loaded_digest;
    std::vector<formats::StepSpan> loaded_steps;
  };
  // LoadedDomainInRange: a domain read from a clocks file (with its `ops`
  // rows) has times and a shift in +-kMaxAbsTimeNs and keys in range.
  static bool LoadedDomainInRange(const Domain& d, const std::vector<std::vector<int64_t>>& ops);
  // Note: one line saying how input `r` got its shift, or why none.
  std::string Note(const Domain& d, size_t index_of_r) const;
  void Check(InputRecord& r, const Domain& d);
  // NoteBadProbes adds a warning per domain whose probe is damaged, has no
  // offset, or counts other collectives than the reference's.
  void NoteBadProbes();
  // RelativeClock: the plan found input `r`'s times counting from its own start.
  bool RelativeClock(const InputRecord& r) const;
  // DomainsWord: "nodes", or "clock domains" when some are single ranks.
  const char* DomainsWord() const;

  ConvertContext& cx_;
  bool considered_ = false;
  std::vector<bool> candidate_;
  std::once_flag solved_;
  bool solved_flag_ = false;
  std::map<std::string, size_t> domain_of_name_;  // name -> index into domains_
  std::vector<Domain> domains_;
  int reference_ = -1;
  std::vector<std::string> warnings_;
  std::atomic<bool> applied_{false};
};

}  // namespace tracemill::pipeline
