#include "pipeline/clocks/clocks.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include <libdeflate.h>
#include <simdjson.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "formats/chrome/output_file.h"
#include "formats/common/json_text.h"
#include "formats/common/status_macros.h"
#include "formats/common/ts_text.h"
#include "formats/smdebug/smdebug_layout.h"
#include "tracemill/version.h"

namespace tracemill::pipeline {
namespace {

// An smdebug node's domain: its SageMaker host (a host's framework and
// system files share its clock), else its node id.
std::string SmdebugDomain(const std::string& node) {
  std::string host;
  return absl::StrCat("smdebug node ", formats::SageMakerHost(node, &host) ? host : node);
}

// The domain of a planned input: its node folder (smdebug), its planned
// rank alone (times from its own start), or its planned rank's node; "" if
// it has no rank.
std::string PlannedDomain(const InputRecord& r, const InputPlan& p, int gpn) {
  if (!r.node.empty()) return SmdebugDomain(r.node);
  if (p.rank && p.relative_clock) return absl::StrCat("rank ", *p.rank);
  if (p.rank) return absl::StrCat("node ", *p.rank / gpn);
  return {};
}

// Ranks of one node are checked against its probe within this search: they
// share a clock, so only jitter separates them.
merge::MatchOptions SameClockSearch() {
  merge::MatchOptions o;
  o.search_ns = 5'000'000;
  o.min_step_search_ns = 5'000'000;
  return o;
}

const char* ModeName(AlignClocks m) {
  switch (m) {
    case AlignClocks::kAuto: return "auto";
    case AlignClocks::kOn: return "on";
    case AlignClocks::kOff: return "off";
  }
  return "";
}

// Appends `v` as JSON strings separated by commas (no brackets).
void AppendJsonStrings(const std::vector<std::string>& v, std::string* out) {
  for (size_t k = 0; k < v.size(); ++k) {
    if (k) out->push_back(',');
    formats::AppendJsonString(v[k], out);
  }
}

// Shifts `r`'s steps and span by `shift` (ns), held to the time range.
void ShiftTimes(InputRecord& r, int64_t shift) {
  auto move = [shift](int64_t t) { return std::clamp(t + shift, -formats::kMaxAbsTimeNs, formats::kMaxAbsTimeNs); };
  for (formats::StepSpan& s : r.timeline.steps) {
    s.start_ns = move(s.start_ns);
    s.end_ns = move(s.end_ns);
  }
  if (r.has_span) {
    r.first_ts_ns = move(r.first_ts_ns);
    r.last_ts_ns = move(r.last_ts_ns);
  }
}

}  // namespace

std::string ClockAlignment::DomainOf(const InputRecord& r, int gpus_per_node, bool relative_clock) {
  if (!r.node.empty()) return SmdebugDomain(r.node);
  if (r.rank && relative_clock) return absl::StrCat("rank ", *r.rank);
  if (r.rank) return absl::StrCat("node ", *r.rank / gpus_per_node);
  return {};
}

bool ClockAlignment::RelativeClock(const InputRecord& r) const {
  return r.index >= 0 && static_cast<size_t>(r.index) < cx_.plan.inputs.size() &&
         cx_.plan.inputs[static_cast<size_t>(r.index)].relative_clock;
}

const char* ClockAlignment::DomainsWord() const {
  for (const Domain& d : domains_)
    if (absl::StartsWith(d.name, "rank ")) return "clock domains";
  return "nodes";
}

ClockAlignment::ClockAlignment(ConvertContext& cx) : cx_(cx), candidate_(cx.records.size(), false) {
  const JobPlan& plan = cx.plan;
  std::map<std::string, std::pair<int64_t, size_t>> lowest;  // domain -> (rank, input)
  bool undetermined = false;
  for (size_t i = 0; i < cx.records.size(); ++i) {
    const InputPlan& p = plan.inputs[i];
    if (p.kind == PlanKind::kUndetermined) {
      undetermined = candidate_[i] = true;
      continue;
    }
    if (p.kind != PlanKind::kOutput) continue;
    const std::string d = PlannedDomain(cx.records[i], p, plan.gpus_per_node);
    if (d.empty()) continue;
    const int64_t rank = p.rank.value_or(INT64_MAX);
    auto [it, fresh] = lowest.try_emplace(d, rank, i);
    if (!fresh && rank < it->second.first) it->second = {rank, i};
  }
  if (cx.opts.align_clocks == AlignClocks::kOff) {
    // Not aligned: the tables mark the rows of a job on several clocks.
    if (lowest.size() >= 2)
      for (InputRecord& r : cx.records) r.clock_unaligned = true;
    std::fill(candidate_.begin(), candidate_.end(), false);
    return;
  }
  considered_ = lowest.size() >= 2 || undetermined;
  if (!considered_) return;
  for (auto& [d, ri] : lowest) candidate_[ri.second] = true;
  for (size_t i = 0; i < cx.records.size(); ++i)
    if (candidate_[i]) cx.records[i].clock_probe = true;
}

void ClockAlignment::Solve() {
  if (!considered_) return;
  std::call_once(solved_, [this] {
    const int gpn = cx_.plan.gpus_per_node;
    for (size_t i = 0; i < cx_.records.size(); ++i) {
      const InputRecord& r = cx_.records[i];
      if (!candidate_[i] || r.rejected || r.skipped) continue;
      const std::string d = DomainOf(r, gpn, RelativeClock(r));
      if (d.empty()) continue;
      auto [it, fresh] = domain_of_name_.try_emplace(d, domains_.size());
      if (fresh) {
        Domain dom;
        dom.name = d;
        domains_.push_back(std::move(dom));
      }
      Domain& dom = domains_[it->second];
      const int64_t rank = r.rank.value_or(INT64_MAX);
      if (rank < dom.probe_rank || dom.probe == SIZE_MAX) {
        dom.probe_rank = rank;
        dom.probe = i;
      }
    }
    std::sort(domains_.begin(), domains_.end(), [](const Domain& a, const Domain& b) {
      return a.probe_rank != b.probe_rank ? a.probe_rank < b.probe_rank : a.name < b.name;
    });
    std::vector<merge::ClockDomain> input;
    for (size_t k = 0; k < domains_.size(); ++k) {
      Domain& d = domains_[k];
      domain_of_name_[d.name] = k;
      d.probe_path = cx_.records[d.probe].path;
      d.digest = &cx_.records[d.probe].collectives;
      d.steps = &cx_.records[d.probe].timeline.steps;
      input.push_back(merge::ClockDomain{d.name, d.probe_rank, d.digest, d.steps});
    }
    merge::ClockSolution sol = merge::SolveClockOffsets(input);
    reference_ = sol.reference;
    warnings_ = std::move(sol.warnings);
    const bool many = domains_.size() >= 2;
    for (size_t k = 0; k < domains_.size(); ++k) {
      Domain& d = domains_[k];
      d.offset = sol.domains[k];
      d.applied = many && (cx_.opts.align_clocks == AlignClocks::kOn ? d.offset.estimated : d.offset.confident);
    }
    if (many) NoteBadProbes();
    solved_flag_ = true;
  });
}

void ClockAlignment::NoteBadProbes() {
  const Domain* ref = reference_ >= 0 ? &domains_[reference_] : nullptr;
  if (!ref) {  // nothing to align with: one line, not one per node
    const bool nodes = std::string_view(DomainsWord()) == "nodes";
    warnings_.push_back(absl::StrCat("not aligned: no collective operations in any of the ", domains_.size(), " ",
                                     DomainsWord(), "' lowest ranks; each ", nodes ? "node" : "clock domain",
                                     " keeps its own clock"));
    return;
  }
  for (const Domain& d : domains_) {
    const InputRecord& probe = cx_.records[d.probe];
    if (!probe.status.ok())
      warnings_.push_back(absl::StrCat(d.name, ": its lowest rank's file is damaged (", probe.status.message(),
                                       "): its offset is measured on what was read before the damage"));
    if (!d.offset.estimated) {
      warnings_.push_back(absl::StrCat(d.name, ": no clock offset: ", d.offset.note));
      continue;
    }
    if (ref && &d != ref && d.digest->seen != ref->digest->seen)
      warnings_.push_back(absl::StrCat(d.name, ": its lowest rank has ", d.digest->seen, " collective operations, ",
                                       ref->name, "'s ", ref->digest->seen, " (", d.offset.matched,
                                       " matched): instances are missing on one side"));
    else if (ref && &d != ref && !d.applied)
      warnings_.push_back(absl::StrCat(d.name, ": clock offset not applied: ", d.offset.note, "; ", d.offset.matched,
                                       " of its ", d.digest->seen, " collective operations matched"));
    if (ref && &d != ref && d.applied && !d.offset.confident)
      warnings_.push_back(absl::StrCat(d.name, ": clock offset applied although not confident (--align-clocks on): ",
                                       d.offset.note, "; ", d.offset.matched, " of its ", d.digest->seen,
                                       " collective operations matched; it is a guess, not a measurement"));
  }
}

std::string ClockAlignment::Note(const Domain& d, size_t index_of_r) const {
  const merge::DomainOffset& o = d.offset;
  if (!o.estimated) return absl::StrCat("not aligned: ", o.note);
  const bool probe = index_of_r == d.probe;
  std::string how;
  if (static_cast<int>(&d - domains_.data()) == reference_) {
    how = probe ? "the reference clock (the job's lowest rank)" : absl::StrCat("on the reference clock (rank ", d.probe_rank, ")");
  } else if (probe) {
    how = absl::StrCat("measured on its collectives against ", domains_[o.via].name, ": ", o.matched,
                       o.matched == 1 ? " instance matched (no spread: one instance says nothing of it)"
                                      : absl::StrCat(" instances matched, spread ", o.spread_ns / 1000, " us"));
    if (!o.confident) absl::StrAppend(&how, "; not confident");
  } else {
    how = absl::StrCat("its node's offset, measured on rank ", d.probe_rank);
  }
  if (!d.applied) absl::StrAppend(&how, "; not applied: ", o.note.empty() ? "--align-clocks off" : o.note);
  return how;
}

void ClockAlignment::Assign(InputRecord& r) {
  if (!solved_flag_ || domains_.size() < 2 || r.clock_decided) return;
  r.clock_decided = true;
  r.clock_domain = DomainOf(r, cx_.plan.gpus_per_node, RelativeClock(r));
  auto it = domain_of_name_.find(r.clock_domain);
  if (it == domain_of_name_.end()) {
    r.clock_note = r.clock_domain.empty() ? "no rank, so no clock domain: never shifted"
                                          : "no probe of its node was decoded: not shifted";
    r.collectives.clear();
    return;
  }
  const Domain& d = domains_[it->second];
  r.clock_offset_ns = d.offset.estimated ? d.offset.shift_ns : 0;
  r.clock_applied = d.applied;
  r.clock_note = Note(d, static_cast<size_t>(r.index));
  if (r.clock_applied && r.clock_offset_ns != 0) {
    ShiftTimes(r, r.clock_offset_ns);
    applied_ = true;
  }
  Check(r, d);
  if (static_cast<size_t>(r.index) != d.probe) r.collectives.clear();  // probes' digests serve the checks
}

void ClockAlignment::Check(InputRecord& r, const Domain& d) {
  if (static_cast<size_t>(r.index) == d.probe || r.collectives.empty() || !d.digest) return;
  merge::PairEstimate e = merge::EstimatePairOffset(*d.digest, r.collectives, d.steps, &r.timeline.steps, SameClockSearch());
  if (!e.found || e.matched < merge::kMinConfidentMatches) return;
  const merge::MatchOptions tol;
  if (std::llabs(e.offset_ns) <= std::max(tol.tolerance_ns, 4 * e.spread_ns)) return;
  r.warnings.push_back(absl::StrCat("its clock is ", e.offset_ns / 1000, " us off rank ", d.probe_rank, " of its node (",
                                    e.matched, " collective instances matched): ranks of one node should share a "
                                    "clock; it keeps the node's offset"));
  r.clock_disagrees_ns = e.offset_ns;
}

void ClockAlignment::SayOutcome() const {
  if (!solved_flag_ || domains_.size() < 2) return;
  // "tracemill: clocks: ..." in a convert; `tracemill clocks` names itself
  // already ("tracemill clocks: ...", not "tracemill clocks: clocks: ...").
  const bool own_command = cx_.job.prefix() == "tracemill clocks";
  const char* topic = own_command ? "" : "clocks: ";
  // Where the details are: `tracemill clocks` writes only clocks.json.
  const char* details = own_command ? "clocks.json" : "manifest.json `clocks`";
  size_t shifted = 0, guessed = 0;
  int64_t lo = 0, hi = 0;
  for (const Domain& d : domains_) {
    if (!d.applied || d.offset.shift_ns == 0) continue;
    guessed += !d.offset.confident;
    lo = shifted ? std::min(lo, d.offset.shift_ns) : d.offset.shift_ns;
    hi = shifted ? std::max(hi, d.offset.shift_ns) : d.offset.shift_ns;
    ++shifted;
  }
  if (shifted)
    cx_.job.Say(absl::StrCat(topic, shifted, " of ", domains_.size(), " ", DomainsWord(), " shifted onto ",
                             domains_[reference_].name, "'s clock (by ", lo / 1000,
                             lo / 1000 == hi / 1000 ? "" : absl::StrCat(" to ", hi / 1000), " us",
                             guessed ? absl::StrCat("; ", guessed, " of them not confident, applied by "
                                                    "--align-clocks on") : "",
                             "; ", details, ")"));
  constexpr size_t kMaxLines = 5;
  for (size_t k = 0; k < warnings_.size() && k < kMaxLines; ++k) cx_.job.Say(absl::StrCat(topic, warnings_[k]));
  if (warnings_.size() > kMaxLines)
    cx_.job.Say(absl::StrCat(topic, warnings_.size() - kMaxLines, " more warnings in ", details));
}

bool ClockAlignment::ShiftsAny() const {
  if (!solved_flag_ || domains_.size() < 2) return false;
  for (const Domain& d : domains_)
    if (d.applied && d.offset.shift_ns != 0) return true;
  return false;
}

std::string ClockAlignment::GuessNotice() const {
  if (!solved_flag_ || domains_.size() < 2) return "";
  size_t guessed = 0;
  for (const Domain& d : domains_) guessed += d.applied && d.offset.shift_ns != 0 && !d.offset.confident;
  if (guessed == 0) return "";
  return absl::StrCat("clocks: ", guessed, " of ", domains_.size(), " ", DomainsWord(),
                      " shifted by offsets that are not confident (--align-clocks on applies them anyway): their "
                      "times across ", DomainsWord(), " are a guess; see manifest.json `clocks`");
}

std::string ClockAlignment::ManifestJson() const {
  if (!solved_flag_ || domains_.size() < 2) return {};
  using formats::AppendJsonString;
  bool applied = false;  // from the solution, not from this process's inputs: the same in every shard
  for (size_t k = 0; k < domains_.size(); ++k) applied |= domains_[k].applied && domains_[k].offset.shift_ns != 0;
  std::string j = absl::StrCat(",\n\"clocks\":{\"mode\":\"", ModeName(cx_.opts.align_clocks), "\",\"applied\":",
                               applied ? "true" : "false", ",\"reference\":");
  if (reference_ >= 0) AppendJsonString(domains_[reference_].name, &j);
  else j.append("null");
  j.append(",\"domains\":[");
  for (size_t k = 0; k < domains_.size(); ++k) {
    const Domain& d = domains_[k];
    const merge::DomainOffset& o = d.offset;
    j.append(k ? ",\n{\"domain\":" : "\n{\"domain\":");
    AppendJsonString(d.name, &j);
    absl::StrAppend(&j, ",\"probe_rank\":", d.probe_rank == INT64_MAX ? "null" : absl::StrCat(d.probe_rank),
                    ",\"probe\":");
    AppendJsonString(d.probe_path, &j);
    absl::StrAppend(&j, ",\"collectives\":", d.digest ? d.digest->seen : 0, ",\"estimated\":",
                    o.estimated ? "true" : "false", ",\"confident\":", o.confident ? "true" : "false",
                    ",\"applied\":", d.applied ? "true" : "false", ",\"offset_ns\":", o.estimated ? o.shift_ns : 0,
                    ",\"matched\":", o.matched, ",\"spread_ns\":", o.spread_ns, ",\"via\":");
    if (o.via >= 0) AppendJsonString(domains_[o.via].name, &j);
    else j.append("null");
    j.append(",\"note\":");
    AppendJsonString(o.note, &j);
    j.append("}");
  }
  j.append("],\"warnings\":[");
  AppendJsonStrings(warnings_, &j);
  j.append("]}");
  return j;
}

std::string ClocksFingerprint(const ConvertContext& cx) {
  const ConvertOptions& o = cx.opts;
  std::string f = absl::StrCat(kVersion, "|clocks|", cx.plan.gpus_per_node, "|", o.rank_pattern, "|", o.time_offset_ns,
                               "|", ModeName(o.align_clocks), "|", cx.records.size());
  for (size_t i = 0; i < cx.records.size(); ++i)
    absl::StrAppend(&f, "|", cx.records[i].path, ":", cx.plan.inputs[i].bytes, ":", cx.plan.inputs[i].mtime_ns);
  return absl::StrFormat("%08x", libdeflate_crc32(0, f.data(), f.size()));
}

absl::Status ClockAlignment::SaveSolution(const std::string& path, const std::string& fingerprint) const {
  using formats::AppendJsonString;
  std::string j = absl::StrCat("{\"tracemill_clocks\":1,\"fingerprint\":\"", fingerprint, "\",\"reference\":",
                               reference_, ",\"warnings\":[");
  AppendJsonStrings(warnings_, &j);
  j.append("],\"domains\":[");
  for (size_t k = 0; k < domains_.size(); ++k) {
    const Domain& d = domains_[k];
    const merge::DomainOffset& o = d.offset;
    j.append(k ? ",\n{\"domain\":" : "\n{\"domain\":");
    AppendJsonString(d.name, &j);
    absl::StrAppend(&j, ",\"probe_rank\":", d.probe_rank, ",\"probe_index\":", d.probe, ",\"probe\":");
    AppendJsonString(d.probe_path, &j);
    auto b = [](bool v) { return v ? "true" : "false"; };
    absl::StrAppend(&j, ",\"estimated\":", b(o.estimated), ",\"confident\":", b(o.confident), ",\"applied\":", b(d.applied),
                    ",\"shift_ns\":", o.shift_ns, ",\"matched\":", o.matched, ",\"spread_ns\":", o.spread_ns,
                    ",\"via\":", o.via, ",\"note\":");
    AppendJsonString(o.note, &j);
    const formats::CollectiveDigest empty;
    const formats::CollectiveDigest& g = d.digest ? *d.digest : empty;
    absl::StrAppend(&j, ",\"gpu\":", b(g.gpu), ",\"seen\":", g.seen, ",\"sample_shift\":", g.sample_shift, ",\"keys\":[");
    AppendJsonStrings(g.keys, &j);
    j.append("],\"ops\":[");
    for (size_t q = 0; q < g.ops.size(); ++q)
      absl::StrAppend(&j, q ? "," : "", "[", g.ops[q].start_ns, ",", g.ops[q].end_ns, ",", g.ops[q].key, ",",
                      g.ops[q].seq, "]");
    j.append("],\"steps\":[");
    if (d.steps)
      for (size_t q = 0; q < d.steps->size(); ++q)
        absl::StrAppend(&j, q ? "," : "", "[", (*d.steps)[q].step, ",", (*d.steps)[q].start_ns, ",",
                        (*d.steps)[q].end_ns, "]");
    j.append("]}");
  }
  j.append("]}\n");
  auto file = formats::OutputFile::Create(path, /*gzip=*/false);
  if (!file.ok()) return file.status();
  TM_RETURN_IF_ERROR((*file)->Append(j));
  return (*file)->Commit();
}

namespace {

namespace dom = simdjson::dom;

bool GetInt(dom::object o, const char* k, int64_t* v) { return !o[k].get_int64().get(*v); }
bool GetBool(dom::object o, const char* k, bool* v) { return !o[k].get_bool().get(*v); }
bool GetString(dom::object o, const char* k, std::string* v) {
  std::string_view s;
  if (o[k].get_string().get(s)) return false;
  v->assign(s);
  return true;
}

// Int64s of a JSON array of arrays of ints: each row's values, or false.
bool GetRows(dom::object o, const char* k, size_t width, std::vector<std::vector<int64_t>>* rows) {
  dom::array a;
  if (o[k].get_array().get(a)) return false;
  for (dom::element row : a) {
    dom::array r;
    if (row.get_array().get(r) || r.size() != width) return false;
    std::vector<int64_t> v;
    for (dom::element x : r) {
      int64_t n;
      if (x.get_int64().get(n)) return false;
      v.push_back(n);
    }
    rows->push_back(std::move(v));
  }
  return true;
}

}  // namespace

// LoadedDomainInRange: what a clocks file says of one domain can be used
// as is: its shift and times in +-kMaxAbsTimeNs (so that adding a shift to
// a time cannot overflow int64), its ops' keys in its key list. A damaged or
// edited file fails here and the probes are decoded instead.
bool ClockAlignment::LoadedDomainInRange(const Domain& d, const std::vector<std::vector<int64_t>>& ops) {
  if (!formats::InTimeRange(d.offset.shift_ns)) return false;
  for (const auto& r : ops)
    if (r[2] < 0 || static_cast<uint64_t>(r[2]) >= d.loaded_digest.keys.size() || !formats::InTimeRange(r[0]) ||
        !formats::InTimeRange(r[1]))
      return false;
  for (const formats::StepSpan& st : d.loaded_steps)
    if (!formats::InTimeRange(st.start_ns) || !formats::InTimeRange(st.end_ns)) return false;
  return true;
}

bool ClockAlignment::LoadSolution(const std::string& path, const std::string& fingerprint, std::string* note) {
  if (!considered_) return false;
  simdjson::padded_string text;
  if (simdjson::padded_string::load(path).get(text)) return false;  // none: the probes are decoded
  dom::parser parser;
  dom::object top;
  std::string fp;
  int64_t reference = -1;
  dom::array domains;
  if (parser.parse(text).get_object().get(top) || !GetString(top, "fingerprint", &fp) ||
      !GetInt(top, "reference", &reference) || top["domains"].get_array().get(domains)) {
    *note = absl::StrCat(path, " is not a tracemill clocks file: the probes are decoded here");
    return false;
  }
  if (fp != fingerprint) {
    *note = absl::StrCat(path, " was written for another job (inputs or options changed): the probes are decoded here");
    return false;
  }
  std::vector<Domain> loaded;
  for (dom::element de : domains) {
    dom::object o;
    Domain d;
    int64_t probe = 0, seen = 0, shift = 0, via = -1, matched = 0, spread = 0, sample_shift = 0;
    std::vector<std::vector<int64_t>> ops, steps;
    dom::array keys;
    if (de.get_object().get(o) || !GetString(o, "domain", &d.name) || !GetInt(o, "probe_rank", &d.probe_rank) ||
        !GetInt(o, "probe_index", &probe) || probe < 0 || static_cast<size_t>(probe) >= cx_.records.size() ||
        !GetString(o, "probe", &d.probe_path) || !GetBool(o, "estimated", &d.offset.estimated) ||
        !GetBool(o, "confident", &d.offset.confident) || !GetBool(o, "applied", &d.applied) ||
        !GetInt(o, "shift_ns", &shift) || !GetInt(o, "matched", &matched) || !GetInt(o, "spread_ns", &spread) ||
        !GetInt(o, "via", &via) || !GetString(o, "note", &d.offset.note) || !GetBool(o, "gpu", &d.loaded_digest.gpu) ||
        !GetInt(o, "seen", &seen) || !GetInt(o, "sample_shift", &sample_shift) || o["keys"].get_array().get(keys) ||
        !GetRows(o, "ops", 4, &ops) || !GetRows(o, "steps", 3, &steps)) {
      *note = absl::StrCat(path, " is damaged: the probes are decoded here");
      return false;
    }
    d.probe = static_cast<size_t>(probe);
    d.offset.shift_ns = shift;
    d.offset.via = static_cast<int>(via);
    d.offset.matched = static_cast<uint32_t>(matched);
    d.offset.spread_ns = spread;
    d.loaded_digest.seen = static_cast<uint64_t>(seen);
    d.loaded_digest.sample_shift = static_cast<int>(sample_shift);
    for (dom::element k : keys) {
      std::string_view s;
      if (k.get_string().get(s)) return false;
      d.loaded_digest.keys.emplace_back(s);
    }
    for (auto& r : ops) d.loaded_digest.ops.push_back(formats::CollectiveOp{r[0], r[1], static_cast<uint32_t>(r[2]), r[3]});
    for (auto& r : steps) d.loaded_steps.push_back(formats::StepSpan{r[0], r[1], r[2]});
    if (!LoadedDomainInRange(d, ops)) {
      *note = absl::StrCat(path, " is damaged: the probes are decoded here");
      return false;
    }
    loaded.push_back(std::move(d));
  }
  // Indices between domains, checked once all are read.
  bool indices_ok = reference >= -1 && reference < static_cast<int64_t>(loaded.size());
  for (const Domain& d : loaded)
    indices_ok = indices_ok && d.offset.via >= -1 && d.offset.via < static_cast<int>(loaded.size());
  if (!indices_ok) {
    *note = absl::StrCat(path, " is damaged: the probes are decoded here");
    return false;
  }
  warnings_.clear();
  dom::array warnings;
  if (!top["warnings"].get_array().get(warnings))
    for (dom::element w : warnings) {
      std::string_view s;
      if (!w.get_string().get(s)) warnings_.emplace_back(s);
    }
  std::call_once(solved_, [&] {
    domains_ = std::move(loaded);
    for (size_t k = 0; k < domains_.size(); ++k) {
      Domain& d = domains_[k];
      d.digest = &d.loaded_digest;
      d.steps = &d.loaded_steps;
      domain_of_name_[d.name] = k;
    }
    reference_ = static_cast<int>(reference);
    solved_flag_ = true;
  });
  std::fill(candidate_.begin(), candidate_.end(), false);
  for (InputRecord& r : cx_.records) r.clock_probe = false;
  return true;
}

}  // namespace tracemill::pipeline
