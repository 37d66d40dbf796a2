#include "pipeline/convert/resume.h"

#include <unistd.h>


#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "formats/common/read_file.h"
#include "formats/common/stats.h"
#include "pipeline/output/overview.h"

namespace tracemill::pipeline {

// OnDisk: the output's file, or each of its parts, has the recorded size
// and CRC-32.
bool OnDisk(const std::string& dir, const OutputRecord& out) {
  auto matches = [&](const std::string& name, uint64_t bytes, uint32_t crc) {
    auto disk = FileSizeAndCrc32(dir + "/" + name);
    return disk.ok() && disk->first == bytes && disk->second == crc;
  };
  if (out.parts.empty()) return matches(out.path, out.bytes, out.crc32);
  for (const OutputPart& p : out.parts)
    if (!matches(p.path, p.bytes, p.crc32)) return false;
  return true;
}

std::vector<std::string> InputPathsOf(const CompletedOutput& c) {
  if (ParseRangeName(c.output.path)) return c.output.inputs;  // a time range's: it reports some or none
  std::vector<std::string> paths;
  for (const auto& r : c.inputs) paths.push_back(r.path);
  return paths;
}

namespace {
// Carry keeps completed output `c`: its inputs are not read; those it
// reports are carried into this run's records (reused), with their
// overview blocks.
void Carry(CompletedOutput c, const std::map<std::string, size_t>& index_of,
           const std::map<int64_t, std::string>& manifest_blocks, ResumeState* st) {
  for (const auto& path : InputPathsOf(c)) st->input_of_path[path] = index_of.at(path);
  for (auto& r : c.inputs) {
    r.index = static_cast<int64_t>(index_of.at(r.path));
    r.owner_shard = -1;
    r.reused = true;
    st->input_of_path[r.path] = static_cast<size_t>(r.index);
  }
  c.output.reused = true;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    const int64_t pid = c.inputs[k].index + 1;
    if (k < c.overview_blocks.size()) st->overview_blocks[pid] = c.overview_blocks[k];
    else if (auto it = manifest_blocks.find(pid); it != manifest_blocks.end()) st->overview_blocks[pid] = it->second;
  }
  st->outputs.push_back(std::move(c));
}
}  // namespace

ResumeState LoadResume(const ConvertOptions& opts, const JobPlan& plan,
                       const std::vector<InputRecord>& records) {
  ResumeState st;
  std::map<std::string, CompletedOutput> found;  // by output name
  std::map<int64_t, std::string> manifest_blocks;  // overview blocks of a finished run, by pid
  bool other_job = false;
  const std::string manifest_path = opts.out_dir + "/" + ManifestFileName(opts.shard);
  if (const std::optional<std::string> text = formats::ReadTextFile(manifest_path)) {
    if (auto m = ParseManifest(*text); m.ok() && m->fingerprint == plan.fingerprint) {
      st.clocks_json = m->clocks_json;
      // A finished run's overview holds the blocks of every input it wrote.
      manifest_blocks = OverviewCollector::BlocksOf(
          opts.out_dir + "/" + OverviewCollector::FileName(opts.shard.index, opts.shard.count));
      for (auto& out : m->outputs) {
        if (!out.error.empty()) continue;
        CompletedOutput c;
        c.output = out;
        for (const auto& r : m->inputs)
          if (r.owner_shard < 0 && r.output == out.path) c.inputs.push_back(r);
        found[out.path] = std::move(c);
      }
    } else {
      other_job = true;
    }
  }
  if (auto j = LoadJournal(opts.out_dir + "/" + JournalFileName(opts.shard)); j.ok()) {
    if (j->fingerprint == plan.fingerprint) {
      for (auto& c : j->outputs) found[c.output.path] = std::move(c);
    } else {
      other_job = true;
    }
  }
  std::map<std::string, size_t> index_of;
  for (size_t i = 0; i < records.size(); ++i) index_of[records[i].path] = i;
  // The inputs this run plans to each output: an output an earlier run
  // completed without one of them (e.g. rejected then under a smaller
  // --memory-limit) is redone, not kept.
  std::map<std::string, std::set<std::string>> planned_inputs;
  for (size_t i = 0; i < records.size(); ++i)
    if (plan.planned_key[i]) planned_inputs[OutputFileName(*plan.planned_key[i], opts.compress)].insert(records[i].path);
  size_t stale = 0;
  // With --time-ranges an output is carried as a unit: every range file of
  // it that this shard writes, or none (its inputs are read for any).
  std::map<std::string, std::vector<CompletedOutput>> units;  // by output name
  for (auto& [name, c] : found) {
    auto key = ParseOutputName(name);
    const auto range = ParseRangeName(name);
    const int r = range ? range->first : 0;
    const bool layout = range ? range->second == plan.time_ranges : plan.time_ranges == 1;
    // A whole output's line lists the inputs it reports; a time range's,
    // those it reports (maybe none) and in its record the paths of all.
    bool keep = key && layout && plan.OwnerOfRange(*key, r) == opts.shard.index && (range || !c.inputs.empty());
    const std::vector<std::string> paths = InputPathsOf(c);
    for (const auto& path : paths) keep = keep && index_of.count(path);
    const std::string output = key ? OutputFileName(*key, opts.compress) : name;
    if (auto it = planned_inputs.find(output); keep && it != planned_inputs.end()) {
      std::set<std::string> held(paths.begin(), paths.end());
      for (const std::string& path : it->second) keep = keep && held.count(path);
    }
    if (keep) keep = OnDisk(opts.out_dir, c.output);
    if (!keep) {
      ++stale;
      continue;
    }
    units[output].push_back(std::move(c));
  }
  for (auto& [output, list] : units) {
    int owned = 0;
    const OutputKey key = *ParseOutputName(output);
    for (int r = 0; r < plan.time_ranges; ++r) owned += plan.OwnerOfRange(key, r) == opts.shard.index;
    bool keep = list.size() == static_cast<size_t>(owned);
    for (const auto& c : list)
      for (const auto& r : c.inputs) keep = keep && !st.input_of_path.count(r.path);  // no input in two outputs
    if (!keep) {
      stale += list.size();
      continue;
    }
    for (auto& c : list) Carry(std::move(c), index_of, manifest_blocks, &st);
  }
  if (other_job && st.outputs.empty())
    st.note = absl::StrCat("resume: the manifest/journal in ", opts.out_dir,
                           " is from another job (inputs or options changed): converting everything");
  else
    st.note = absl::StrCat("resume: ", formats::Counted(st.outputs.size(), "output"), " already complete (",
                           formats::Counted(st.input_of_path.size(), "input"), " not read)",
                           stale ? absl::StrCat(", ", stale, " to redo") : "");
  return st;
}

// DropRefused redoes the outputs `keep` refuses: their inputs are read again.
void DropRefused(ResumeState* st, const std::function<bool(const CompletedOutput&)>& keep) {
  // An output's time ranges go together (LoadResume).
  std::set<std::string> refused;
  for (const auto& c : st->outputs)
    if (!keep(c)) refused.insert(OutputNameOf(c.output.path));
  std::vector<CompletedOutput> kept;
  for (auto& c : st->outputs) {
    if (!refused.count(OutputNameOf(c.output.path))) {
      kept.push_back(std::move(c));
      continue;
    }
    for (const auto& path : InputPathsOf(c)) st->input_of_path.erase(path);
    for (const auto& r : c.inputs) st->overview_blocks.erase(r.index + 1);
  }
  if (kept.size() != st->outputs.size())
    st->note = absl::StrCat(st->note, "; ", st->outputs.size() - kept.size(),
                            " redone for tables.sqlite (their rows are not in the earlier one)");
  st->outputs = std::move(kept);
}

ResumeState ResumeOrStartOver(const ConvertOptions& opts, const JobPlan& plan,
                              const std::vector<InputRecord>& records, Job& job,
                              const std::function<bool(const CompletedOutput&)>& keep) {
  ResumeState resume;
  if (opts.resume) {
    resume = LoadResume(opts, plan, records);
    if (keep) DropRefused(&resume, keep);
    if (!opts.quiet) job.Say(resume.note);
  }
  for (const auto& c : resume.outputs) {
    resume.carried_outputs.insert(c.output.path);
    resume.carried_outputs.insert(OutputNameOf(c.output.path));  // its time ranges' output: no input joins it
  }
  if (auto j = Journal::Create(opts.out_dir + "/" + JournalFileName(opts.shard), plan.fingerprint, opts.shard,
                               resume.outputs);
      j.ok()) {
    resume.journal = std::move(*j);
  } else {
    job.Say(absl::StrCat("cannot write the journal (--resume will redo everything): ", j.status().message()));
  }
  ::unlink((opts.out_dir + "/" + ManifestFileName(opts.shard)).c_str());
  if (opts.shard.sharded()) ::unlink((opts.out_dir + "/manifest.json").c_str());
  return resume;
}

}  // namespace tracemill::pipeline
