#include "pipeline/graph.h"

#include <dirent.h>
#include <fcntl.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <mutex>
#include <optional>
#include <thread>

#include <malloc.h>
#include <tbb/concurrent_queue.h>
#include <tbb/flow_graph.h>
#include <tbb/global_control.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_format.h"
#include "formats/chrome/chrome_writer.h"
#include "formats/chrome/output_file.h"
#include "formats/chrome/tef_decoder.h"
#include "formats/common/byte_buffer.h"
#include "formats/common/cleanup.h"
#include "formats/common/large_alloc.h"
#include "formats/common/mapped_input.h"
#include "formats/common/json_text.h"
#include "formats/common/status_macros.h"
#include "formats/common/time_window.h"
#include "formats/smdebug/system_metrics_decoder.h"
#include "formats/detect.h"
#include "formats/gzip/gzip_reader.h"
#include "formats/orchestrator/run_event_log_decoder.h"
#include "formats/paddle/paddle_decoder.h"
#include "merge/kway_merger.h"
#include "merge/namespacer.h"
#include "merge/sorted_run.h"
#include "merge/spill_file.h"
#include "pipeline/budget.h"
#include "pipeline/console.h"
#include "pipeline/cpus.h"
#include "pipeline/decode_input.h"
#include "pipeline/journal.h"
#include "pipeline/merge_write.h"
#include "pipeline/out_dir_lock.h"
#include "pipeline/plan.h"
#include "pipeline/rank_name.h"
#include "pipeline/smdebug_inputs.h"
#include "report/html_report.h"
#include "tracemill/version.h"

namespace tracemill::pipeline {
namespace {

using Clock = std::chrono::steady_clock;


// Expands files and directories (recursed, sorted) into input paths; paths
// that cannot be read become rejected records. A directory is walked once
// (symlink loops end), and the output directory `out_dir` (device, inode)
// is never walked: a re-run of `convert job -o job/out` does not read its
// own outputs. Returns false if an argument is the output directory itself
// (a usage error: the outputs would replace inputs).
bool ExpandInputs(const std::vector<std::string>& args, std::pair<dev_t, ino_t> out_dir,
                  std::vector<InputRecord>* records) {
  std::vector<std::pair<std::string, bool>> found;  // (path, found in a directory)
  std::vector<InputRecord> bad;
  std::set<std::pair<dev_t, ino_t>> walked_dirs;
  bool names_out_dir = false;
  // A path that cannot be read: a rejected record (errno as it is now).
  auto reject = [&](const std::string& p, const char* what) {
    int e = errno;
    InputRecord r;
    r.path = p;
    r.status = absl::ErrnoToStatus(e, what);
    r.rejected = true;
    bad.push_back(std::move(r));
  };
  std::function<void(const std::string&, bool)> walk = [&](const std::string& p, bool top) {
    struct stat st;
    if (::stat(p.c_str(), &st) != 0) return reject(p, "cannot read input");
    if (S_ISDIR(st.st_mode)) {
      if (std::pair(st.st_dev, st.st_ino) == out_dir) {
        names_out_dir |= top;
        return;
      }
      if (!walked_dirs.insert({st.st_dev, st.st_ino}).second) return;  // a loop, or named twice
      DIR* d = ::opendir(p.c_str());
      if (!d) return reject(p, "cannot list directory");
      std::vector<std::string> names;
      while (dirent* de = ::readdir(d)) {
        std::string n = de->d_name;
        if (n == "." || n == "..") continue;
        if (formats::IsTemporaryName(n)) continue;  // our own temporaries
        names.push_back(n);
      }
      ::closedir(d);
      std::sort(names.begin(), names.end());
      std::string prefix = p.back() == '/' ? p : p + "/";
      for (const auto& n : names) walk(prefix + n, false);
    } else if (S_ISREG(st.st_mode)) {
      // A file named on the command line that this user cannot open is
      // known now: if every input is such a path, the job is a usage error.
      if (top) {
        const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return reject(p, "cannot read input");
        ::close(fd);
      }
      found.emplace_back(p, !top);
    } else if (top) {
      found.emplace_back(p, false);  // a FIFO or device named explicitly: try it
    }
  };
  for (const auto& a : args) walk(a, true);
  // Sorted by path; a file named twice (directly and through its folder) is read once.
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end(),
                          [](const auto& a, const auto& b) { return a.first == b.first; }),
              found.end());
  for (auto& [p, walked] : found) {
    InputRecord r;
    r.path = std::move(p);
    r.from_directory = walked;
    records->push_back(std::move(r));
  }
  for (auto& r : bad) records->push_back(std::move(r));
  return !names_out_dir;
}

// Reads a whole file into `out`, leaving SIMDJSON_PADDING spare capacity.
absl::Status ReadFile(const std::string& path, formats::ByteBuffer* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return absl::ErrnoToStatus(e, "cannot open");
  }
  struct stat st;
  size_t size = 0;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) size = static_cast<size_t>(st.st_size);
  out->Clear();
  // One read for a regular file (+1 byte to see EOF without growing); pipes grow.
  out->Reserve(std::max<size_t>(size + 1, 1 << 16) + simdjson::SIMDJSON_PADDING);
  while (true) {
    size_t old = out->size();
    if (out->capacity() - simdjson::SIMDJSON_PADDING == old)
      out->Reserve(old * 2 + simdjson::SIMDJSON_PADDING);
    ssize_t n = ::read(fd, out->data() + old, out->capacity() - simdjson::SIMDJSON_PADDING - old);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      out->Clear();
      return absl::ErrnoToStatus(e, "cannot read");
    }
    if (n == 0) break;
    out->Resize(old + static_cast<size_t>(n));
  }
  ::close(fd);
  return absl::OkStatus();
}

// Per-worker state reused across inputs: the decode state (simdjson parsers,
// read and inflate buffers) and the worker's spill file.
struct Worker : DecodeWorker {
  std::unique_ptr<merge::SpillFile> spill;  // created on the first spill
};

// DecodedSize estimates an input's decoded size from its head and tail
// without reading it: a gzip file's ISIZE trailer (the last member's size
// mod 2^32; at least 4x the compressed size), else the file size.
// `*uncertain`: a gzip ISIZE below 4x or above 1032x the file: a
// multi-member file (tracemill's own --compress outputs: the last member is
// one chunk) or a truncated one, whose real size only inflating tells.
uint64_t DecodedSize(const std::string& path, uint64_t file_bytes, bool* is_gzip, bool* uncertain) {
  *is_gzip = false;
  *uncertain = false;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return file_bytes;
  unsigned char head[2] = {0, 0};
  uint64_t est = file_bytes;
  if (::pread(fd, head, 2, 0) == 2 && head[0] == 0x1f && head[1] == 0x8b && file_bytes >= 18) {
    *is_gzip = true;
    unsigned char tail[4];
    uint64_t isize = 0;
    if (::pread(fd, tail, 4, static_cast<off_t>(file_bytes - 4)) == 4)
      isize = tail[0] | (tail[1] << 8) | (tail[2] << 16) | (static_cast<uint64_t>(tail[3]) << 24);
    // A truncated file's last bytes are not an ISIZE: deflate cannot expand
    // more than 1032:1, and we assume at least 4:1.
    est = std::clamp<uint64_t>(isize, file_bytes * 4, file_bytes * 1032);
    *uncertain = est != isize;
  }
  ::close(fd);
  return est;
}

// One input through read, then `DecodeInput` (inflate, detect, decode, sort);
// an smdebug node's files one after another, then `SortDecoded`.
// `max_decoded_bytes`: see `DecodeInput`.
std::unique_ptr<merge::SortedRun> DecodeAndSort(InputRecord& r, Worker& w,
                                                const RankMatcher& ranks,
                                                uint64_t max_decoded_bytes, const ConvertOptions& opts) {
  const DecodeOptions dopts = DecodeOptionsOf(opts);
  if (!r.files.empty()) {  // an smdebug node: its files, one after another
    auto read = [&](const std::string& path) -> absl::StatusOr<std::pair<std::string_view, size_t>> {
      TM_RETURN_IF_ERROR(ReadFile(path, &w.file));
      if (formats::Sniff(w.file.view()) != formats::FormatId::kGzip)
        return std::make_pair(w.file.view(), w.file.capacity());
      formats::GunzipResult g =
          formats::Gunzip(w.file.view(), &w.inflated, simdjson::SIMDJSON_PADDING, max_decoded_bytes);
      if (!g.status.ok() && w.inflated.size() == 0) return g.status;
      return std::make_pair(w.inflated.view(), w.inflated.capacity());
    };
    return SortDecoded(r, DecodeSmdebugGroup(r, read, &w.decoder, opts.low_gpu_threshold), ranks, dopts);
  }
  // A large local file is mapped, not copied (formats/common/mapped_input.h).
  if (int fd = ::open(r.path.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
    struct stat st;
    formats::MappedInput mapped;
    const bool map = ::fstat(fd, &st) == 0 && formats::ShouldMapInput(fd, st) &&
                     mapped.Map(fd, static_cast<size_t>(st.st_size), simdjson::SIMDJSON_PADDING);
    if (map) {
      r.bytes = mapped.view().size();
      auto run = DecodeInput(mapped.view(), mapped.capacity(), w, ranks, r, max_decoded_bytes, dopts);
      struct stat after;
      if (std::optional<size_t> at = mapped.shrunk_at()) {
        r.status = absl::DataLossError(absl::StrCat(
            "the file shrank while it was read (another process truncated or rewrote it); of its ",
            r.bytes, " bytes, those before about byte ", *at, " were decoded"));
        r.error_offset = *at;
      } else if (::fstat(fd, &after) == 0 &&
                 (after.st_size != st.st_size || after.st_mtim.tv_sec != st.st_mtim.tv_sec ||
                  after.st_mtim.tv_nsec != st.st_mtim.tv_nsec)) {
        // Rewritten in place: what was decoded may mix old and new bytes.
        r.status = absl::DataLossError(
            "the file was modified while it was read (another process wrote to it); its events "
            "may mix the old and the new content");
      }
      ::close(fd);
      return run;
    }
    ::close(fd);
  }
  if (absl::Status s = ReadFile(r.path, &w.file); !s.ok()) {
    r.status = s;
    r.rejected = true;
    return nullptr;
  }
  r.bytes = w.file.size();
  return DecodeInput(w.file.view(), w.file.capacity(), w, ranks, r, max_decoded_bytes, dopts);
}

struct OutputGroup {
  std::string name;  // file name inside OUTDIR
  int kind = 0;      // sort order of outputs: 0 numbered, 1 unranked
  int64_t number = 0;
  std::vector<size_t> inputs;  // indices into records, in output order
};

std::string GroupByName(GroupBy g) {
  switch (g) {
    case GroupBy::kLocalGpu: return "local-gpu";
    case GroupBy::kRank: return "rank";
    case GroupBy::kNode: return "node";
    case GroupBy::kAll: return "all";
  }
  return "";
}

// The `otherData` object of one output.
std::string OtherData(const OutputGroup& g, const std::vector<InputRecord>& records,
                      const std::vector<std::unique_ptr<merge::SortedRun>>& runs,
                      const std::vector<formats::WriterInput>& winputs, bool relative,
                      int64_t offset_ns) {
  using formats::AppendJsonString;
  std::string o = "{\"tracemill_version\":";
  AppendJsonString(kVersion, &o);
  o.append(",\"time_base\":{\"unit\":\"us\",\"relative\":");
  o.append(relative ? "true" : "false");
  absl::StrAppend(&o, ",\"offset_ns\":", offset_ns,
                  ",\"note\":\"ts = (absolute ns since the Unix epoch - offset_ns) / 1000\"}");
  o.append(",\"inputs\":[");
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    const InputRecord& r = records[g.inputs[k]];
    const auto& data = runs[g.inputs[k]]->data();
    if (k) o.push_back(',');
    o.append("{\"path\":");
    AppendJsonString(r.path, &o);
    o.append(",\"rank\":");
    if (r.rank) absl::StrAppend(&o, *r.rank); else o.append("null");
    o.append(",\"label\":");
    AppendJsonString(winputs[k].label, &o);
    int64_t lo = 0, hi = 0;
    if (!winputs[k].out_pid.empty()) {
      lo = *std::min_element(winputs[k].out_pid.begin(), winputs[k].out_pid.end());
      hi = *std::max_element(winputs[k].out_pid.begin(), winputs[k].out_pid.end());
    }
    absl::StrAppend(&o, ",\"pids\":[", lo, ",", hi, "],\"metadata\":{");
    bool first = true;
    for (const auto& [key, value] : data.meta.top_level) {
      if (!first) o.push_back(',');
      first = false;
      o.push_back('"');
      o.append(key);
      o.append("\":");
      o.append(value);
    }
    o.append("}}");
  }
  o.append("]}");
  return o;
}


// The base name of an output temporary `.<base>.tmp.<pid>`, or "".
std::string TemporaryBase(std::string_view name) {
  size_t k = name.find(".tmp.");
  if (!formats::IsTemporaryName(name) || k == std::string_view::npos) return "";
  return std::string(name.substr(1, k - 1));
}

// ResumeState: outputs of an earlier run of this job that are complete.
struct ResumeState {
  std::vector<CompletedOutput> outputs;
  std::map<std::string, size_t> input_of_path;  // carried input path -> index in records
  std::string note;                             // one line for stderr
};

// LoadResume reads OUTDIR's manifest (a completed earlier run) and journal (a
// killed one) of this shard and keeps the outputs this shard owns whose file
// has the recorded size and CRC-32.
ResumeState LoadResume(const ConvertOptions& opts, const JobPlan& plan,
                       const std::vector<InputRecord>& records) {
  ResumeState st;
  std::map<std::string, CompletedOutput> found;  // by output name
  bool other_job = false;
  const std::string manifest_path = opts.out_dir + "/" + ManifestFileName(opts.shard);
  if (std::FILE* f = std::fopen(manifest_path.c_str(), "rb")) {
    std::string text;
    char buf[1 << 16];
    size_t got;
    while ((got = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, got);
    std::fclose(f);
    if (auto m = ParseManifest(text); m.ok() && m->fingerprint == plan.fingerprint) {
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
  for (auto& [name, c] : found) {
    auto key = ParseOutputName(name);
    bool keep = key && plan.OwnerOf(*key) == opts.shard.index && !c.inputs.empty();
    for (const auto& r : c.inputs) keep = keep && index_of.count(r.path) && !st.input_of_path.count(r.path);
    if (auto it = planned_inputs.find(name); keep && it != planned_inputs.end()) {
      std::set<std::string> held;
      for (const auto& r : c.inputs) held.insert(r.path);
      for (const std::string& path : it->second) keep = keep && held.count(path);
    }
    if (keep) {
      auto disk = FileSizeAndCrc32(opts.out_dir + "/" + name);
      keep = disk.ok() && disk->first == c.output.bytes && disk->second == c.output.crc32;
    }
    if (!keep) {
      ++stale;
      continue;
    }
    for (auto& r : c.inputs) {
      r.index = static_cast<int64_t>(index_of[r.path]);
      r.owner_shard = -1;
      r.reused = true;
      st.input_of_path[r.path] = static_cast<size_t>(r.index);
    }
    c.output.reused = true;
    st.outputs.push_back(std::move(c));
  }
  if (other_job && st.outputs.empty())
    st.note = absl::StrCat("resume: the manifest/journal in ", opts.out_dir,
                           " is from another job (inputs or options changed): converting everything");
  else
    st.note = absl::StrCat("resume: ", st.outputs.size(), " outputs already complete (",
                           st.input_of_path.size(), " inputs not read)",
                           stale ? absl::StrCat(", ", stale, " to redo") : "");
  return st;
}

// ResolveStepWindow: the time window from the start of step `first` to the
// end of step `last` (inclusive), over the steps of every decoded input
// (Kineto `ProfilerStep#N`, Paddle `ProfileStep#N`, smdebug
// `Step:ModeKeys.TRAIN` step_num, ...). kInvalidArgument names a step no
// input has, with the range that exists.
absl::StatusOr<formats::TimeWindow> ResolveStepWindow(
    const std::vector<InputRecord>& records, const std::vector<std::unique_ptr<merge::SortedRun>>& runs,
    std::optional<int64_t> first, std::optional<int64_t> last) {
  formats::TimeWindow w;
  bool found_first = !first, found_last = !last;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  size_t decoded = 0, rejected = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    rejected += !runs[i] && records[i].rejected;
    if (!runs[i]) continue;
    ++decoded;
    for (const formats::StepSpan& st : records[i].timeline.steps) {
      lo = std::min(lo, st.step);
      hi = std::max(hi, st.step);
      if (first && st.step == *first) {
        w.start_ns = found_first ? std::min(w.start_ns, st.start_ns) : st.start_ns;
        found_first = true;
      }
      if (last && st.step == *last) {
        w.end_ns = found_last ? std::max(w.end_ns, st.end_ns) : st.end_ns;
        found_last = true;
      }
    }
  }
  if (!found_first || !found_last) {
    int64_t missing = !found_first ? *first : *last;
    std::string why = " (no step markers found)";
    if (lo <= hi) {
      why = absl::StrCat(" (steps found: ", lo, "..", hi, ")");
    } else if (decoded == 0 && rejected > 0) {  // not the inputs' steps: the inputs
      why = absl::StrCat(" (no input could be decoded: ", rejected, rejected == 1 ? " was" : " were", " rejected)");
    }
    return absl::InvalidArgumentError(absl::StrCat(!found_first ? "--start-step " : "--end-step ", missing,
                                                   ": no input has step ", missing, why));
  }
  if (first && last && *last < *first)
    return absl::InvalidArgumentError(absl::StrCat("--end-step ", *last, " is before --start-step ", *first));
  return w;
}

}  // namespace

RunSummary RunConvert(const ConvertOptions& opts) {
  const auto t0 = Clock::now();
  RunSummary summary;
  summary.command_line = opts.command_line;
  summary.group_by = GroupByName(opts.group_by);
  Console console(opts.progress && !opts.quiet);
  formats::InstallInterruptCleanup();
  // Freed memory goes back to the OS: fixed mmap threshold (glibc raises it
  // dynamically after large frees, which keeps big buffers on the heap) and
  // few arenas, so RSS follows the budget.
  mallopt(M_MMAP_THRESHOLD, 256 << 10);
  mallopt(M_ARENA_MAX, 4);

  auto matcher = RankMatcher::Create(opts.rank_pattern);
  if (!matcher.ok()) {
    console.Line(absl::StrCat("tracemill: ", matcher.status().message()));
    summary.exit_code = kExitUsage;
    return summary;
  }
  // Created with its parents, as `-o` promises ("created if missing").
  // A path that exists as something else (a file), or one the user may not
  // create (read-only mount, no permission), is the user's to fix (exit 2),
  // as an existing -o that is not writable (below).
  bool created_out_dir = false;
  std::string mkdir_error;
  const int mkdir_exit = CreateOutputDirectory(opts.out_dir, &created_out_dir, &mkdir_error);
  // A usage error found after this point (an unknown --start-step, ...)
  // leaves no empty OUTDIR behind it (rmdir(2) removes only an empty one).
  struct RemoveEmptyOutDir {
    const bool& created;
    const RunSummary& s;
    const std::string& dir;
    ~RemoveEmptyOutDir() {
      if (created && s.exit_code == kExitUsage) ::rmdir(dir.c_str());
    }
  } remove_empty_out_dir{created_out_dir, summary, opts.out_dir};
  if (mkdir_exit != 0) {
    console.Line(absl::StrCat("tracemill: cannot create output directory ", opts.out_dir, ": ", mkdir_error));
    summary.exit_code = mkdir_exit;
    return summary;
  }
  // -o and --tmp-dir must be writable directories: checked before any input
  // is read, so a typo is a usage error, not N rejected inputs.
  for (const auto& [flag, dir] : {std::pair<const char*, std::string>{"-o", opts.out_dir},
                                  std::pair<const char*, std::string>{"--tmp-dir", opts.tmp_dir}}) {
    if (dir.empty()) continue;
    struct stat sb;
    const char* why = ::stat(dir.c_str(), &sb) != 0 ? "does not exist"
                      : !S_ISDIR(sb.st_mode)          ? "is not a directory"
                      : ::access(dir.c_str(), W_OK | X_OK) != 0 ? "is not writable"
                                                                : nullptr;
    if (why) {
      console.Line(absl::StrCat("tracemill: ", flag, " ", dir, " ", why));
      summary.exit_code = kExitUsage;
      return summary;
    }
  }
  // One job at a time in OUTDIR (pipeline/out_dir_lock.h): it removes stale
  // temporaries below.
  OutDirLock out_lock;
  if (!out_lock.Acquire(opts.out_dir, opts.shard)) {
    console.Line(absl::StrCat("tracemill: -o ", OutDirLock::InUseMessage(opts.out_dir)));
    summary.exit_code = kExitUsage;
    return summary;
  }
  std::vector<InputRecord> records;
  struct stat out_st;
  std::pair<dev_t, ino_t> out_id{0, 0};
  if (::stat(opts.out_dir.c_str(), &out_st) == 0) out_id = {out_st.st_dev, out_st.st_ino};
  if (!ExpandInputs(opts.inputs, out_id, &records)) {
    console.Line(absl::StrCat("tracemill: -o ", opts.out_dir,
                              " is also an input: its outputs would replace inputs; write them to another directory"));
    summary.exit_code = kExitUsage;
    return summary;
  }
  // Inputs that name no file at all (an empty directory, a wrong path in a
  // batch script) are a usage error, not a successful job of 0 inputs. Only
  // the paths that cannot be read are rejected here: when that is all of
  // them, each gets its line and nothing is written. (A missing path beside
  // readable ones is a rejected input, and the job goes on: exit 3.)
  if (std::all_of(records.begin(), records.end(), [](const InputRecord& r) { return r.rejected; })) {
    for (const InputRecord& r : records)
      console.Line(absl::StrCat("tracemill: ", r.path, ": ", r.status.message()));
    console.Line(absl::StrCat("tracemill: no input files in ", absl::StrJoin(opts.inputs, ", "),
                              ": nothing to convert"));
    summary.exit_code = kExitUsage;
    return summary;
  }
  GroupSmdebugInputs(&records, opts.no_system_metrics);
  const size_t n = records.size();
  for (size_t i = 0; i < n; ++i) records[i].index = static_cast<int64_t>(i);
  std::string threads_note;
  const int threads = ThreadsToUse(opts.threads, &threads_note);
  if (!threads_note.empty() && !opts.quiet) console.Line("tracemill: " + threads_note);
  summary.threads = threads;
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, threads);
  if (opts.verbose) {
    console.Line(absl::StrCat("tracemill: ", n, " inputs, ", threads, " threads, simdjson kernel ",
                              simdjson::get_active_implementation()->name(), " (",
                              simdjson::get_active_implementation()->description(), ")"));
  }

  // ---- Pre-scan and plan: every input's planned output from its head; the
  // shard of every output (pipeline/plan.h). Identical in every shard.
  const int me = opts.shard.index;
  const JobPlan jp = MakePlan(records, PreScan(records, *matcher), opts, opts.shard.count);
  summary.gpus_per_node = jp.gpus_per_node;
  summary.fingerprint = jp.fingerprint;
  summary.shard = opts.shard;
  summary.inputs_in_job = n;
  // The shard an input's record belongs to, as planned: -1 if undetermined.
  auto planned_owner = [&](size_t i) -> int {
    switch (jp.inputs[i].kind) {
      case PlanKind::kOutput: return jp.OwnerOf(*jp.planned_key[i]);
      case PlanKind::kNoOutput: return 0;
      case PlanKind::kUndetermined: break;
    }
    return -1;
  };

  // Temporaries a killed run left behind are never outputs: remove them
  // (in a shard, only those of its own outputs, manifest and journal: the
  // other shards may be writing theirs into the same directory right now).
  // A whole job also removes an earlier sharded job's manifests and
  // journals: a later `manifest merge` would describe that job's outputs,
  // some of them overwritten by this one.
  if (DIR* d = ::opendir(opts.out_dir.c_str())) {
    while (dirent* de = ::readdir(d)) {
      const std::string_view name = de->d_name;
      if (!opts.shard.sharded() && ((name.starts_with("manifest.shard-") && name.ends_with(".json")) ||
                                    (name.starts_with("journal.shard-") && name.ends_with(".jsonl")))) {
        ::unlink((opts.out_dir + "/" + de->d_name).c_str());
        continue;
      }
      std::string base = TemporaryBase(de->d_name);
      if (base.empty()) continue;
      bool mine = !opts.shard.sharded() || base == ManifestFileName(opts.shard) ||
                  base == JournalFileName(opts.shard);
      if (auto key = ParseOutputName(base); key && jp.OwnerOf(*key) == me) mine = true;
      if (mine) ::unlink((opts.out_dir + "/" + de->d_name).c_str());
    }
    ::closedir(d);
  }

  // ---- Resume: outputs an earlier run completed are kept, their inputs not read.
  ResumeState resume;
  if (opts.resume) {
    resume = LoadResume(opts, jp, records);
    if (!opts.quiet) console.Line(absl::StrCat("tracemill: ", resume.note));
  }
  std::set<std::string> carried_outputs;
  for (const auto& c : resume.outputs) carried_outputs.insert(c.output.path);
  // The journal starts over with what was carried; the manifest of an earlier
  // run goes (a manifest present means a finished run), and so does a merged
  // job manifest when a shard runs again.
  std::unique_ptr<Journal> journal;
  if (auto j = Journal::Create(opts.out_dir + "/" + JournalFileName(opts.shard), jp.fingerprint,
                               opts.shard, resume.outputs);
      j.ok()) {
    journal = std::move(*j);
  } else {
    console.Line(absl::StrCat("tracemill: cannot write the journal (--resume will redo everything): ",
                              j.status().message()));
  }
  ::unlink((opts.out_dir + "/" + ManifestFileName(opts.shard)).c_str());
  if (opts.shard.sharded()) ::unlink((opts.out_dir + "/manifest.json").c_str());

  // Which inputs this process reads: those planned to its outputs, every
  // undetermined one, and (shard 0) those that are no trace at all; not
  // those of outputs carried over by --resume.
  std::vector<bool> read(n, false);
  size_t n_undetermined = 0, n_read = 0;
  uint64_t read_bytes = 0;
  for (size_t i = 0; i < n; ++i) {
    n_undetermined += jp.inputs[i].kind == PlanKind::kUndetermined;
    if (resume.input_of_path.count(records[i].path)) continue;
    int owner = planned_owner(i);
    read[i] = owner < 0 || owner == me;
    n_read += read[i];
    if (read[i]) read_bytes += jp.inputs[i].bytes;
  }
  if (opts.verbose || (opts.shard.sharded() && !opts.quiet)) {
    console.Line(absl::StrCat("tracemill: plan ", jp.fingerprint, ": ", n, " inputs, ",
                              jp.planned_bytes.size(), " outputs planned, ", n_undetermined,
                              " inputs undetermined until decoded; gpus per node ", jp.gpus_per_node,
                              "; this process reads ", n_read, " inputs (", read_bytes >> 20, " MiB)"));
  }

  // ---- Stage 1: read, inflate, decode and sort every input in parallel.
  const MemoryPlan plan = PlanMemory(opts.memory_limit ? opts.memory_limit : DefaultMemoryLimit());
  // Freed 2 MiB arena chunks (spilled runs, written outputs) are reused by
  // the next decodes instead of being faulted in again (large_alloc.h). The
  // pool only holds memory the runs held a moment before, so it stays in
  // the runs budget; it is emptied when the job ends.
  formats::SetChunkPoolLimit(plan.runs / 2);
  struct PoolRelease {
    ~PoolRelease() { formats::SetChunkPoolLimit(0); }
  } pool_release;
  // The same for the top of malloc's heaps: glibc gives back any free top
  // over 128 KiB, so each input faulted in its arenas' smaller chunks and
  // hash tables again (62,400 page faults for the 64-rank gzip job; 44,900
  // with 8 MiB kept, peak RSS unchanged). Keep limit/64, 128 KiB to 8 MiB,
  // per heap (at most 4, M_ARENA_MAX above).
  mallopt(M_TRIM_THRESHOLD,
          static_cast<int>(std::clamp<uint64_t>(plan.limit / 64, uint64_t{128} << 10, uint64_t{8} << 20)));
  const std::string tmp_dir = !opts.tmp_dir.empty()            ? opts.tmp_dir
                              : std::getenv("TMPDIR") != nullptr ? std::getenv("TMPDIR")
                                                                 : "/tmp";
  std::vector<std::unique_ptr<merge::SortedRun>> runs(n);
  std::vector<size_t> order;
  std::vector<uint64_t> sizes(n, 0);
  uint64_t largest_cost = 0;
  // An input's error line is printed by the shard that reports it: at once
  // if planned here, after grouping if undetermined.
  auto report_now = [&](size_t i) { return !opts.quiet && planned_owner(i) == me; };
  for (size_t i = 0; i < n; ++i) {
    if (!read[i]) continue;
    if (records[i].skipped) continue;  // smdebug *.tmp, --no-system-metrics
    if (records[i].rejected) {  // could not even stat it
      if (report_now(i)) console.Line(ErrorLine(records[i]));
      continue;
    }
    struct stat st;
    if (::stat(records[i].path.c_str(), &st) == 0) sizes[i] = static_cast<uint64_t>(st.st_size);
    bool gz = false;
    bool uncertain = false;
    uint64_t cost = DecodeCost(DecodedSize(records[i].path, sizes[i], &gz, &uncertain),
                               jp.inputs[i].bytes_per_event);
    // A gzip input's size is only an estimate: try it within the budget
    // (Gunzip stops at the limit and says so). One whose trailer does not
    // tell its size may inflate to that limit: it counts as the whole
    // budget, so it decodes alone.
    if (gz) cost = uncertain ? plan.decode : std::min(cost, plan.decode);
    if (cost > plan.decode) {
      // Decoding it alone would exceed the budget: say what would fit.
      records[i].bytes = sizes[i];
      records[i].rejected = true;
      records[i].status = absl::ResourceExhaustedError(absl::StrCat(
          "decoding needs about ", cost >> 20, " MiB, more than the ", plan.decode >> 20,
          " MiB decode budget of --memory-limit ", plan.limit >> 20, "M; rerun with --memory-limit ",
          (cost * 10 / 6 >> 20) + 1, "M or more"));
      if (report_now(i)) console.Line(ErrorLine(records[i]));
      continue;
    }
    largest_cost = std::max(largest_cost, cost);
    order.push_back(i);
  }
  // ---- Overlap: when the pre-scan knows every input's output (none
  // undetermined) and nothing needs every input decoded before the first
  // write (no --start-step/--end-step, no --relative-time), inputs are
  // decoded output by output and each output is merged and written as soon
  // as its last input is decoded, while later inputs decode. Its runs are
  // freed at once, their memory reused by the next decodes (the chunk pool)
  // instead of faulted in again, and fewer runs spill. Otherwise every
  // input is decoded first (stage 1), then every output written (stage 2).
  // Both write the same bytes; the budget of each is in budget.h.
  const MemoryPlan overlap_plan = plan.ForOverlap(largest_cost, threads);
  bool overlap = !opts.no_overlap && !opts.relative_time && !opts.start_step && !opts.end_step && largest_cost <= overlap_plan.decode;
  for (size_t i : order) overlap = overlap && jp.inputs[i].kind != PlanKind::kUndetermined;
  const MemoryPlan& mplan = overlap ? overlap_plan : plan;
  // Inputs in flight: as many of the largest as fit the decode budget, at
  // least one, at most one per thread.
  const size_t slots = static_cast<size_t>(std::clamp<uint64_t>(
      largest_cost ? mplan.decode / largest_cost : threads, 1, static_cast<uint64_t>(threads)));
  if (opts.verbose) {
    console.Line(absl::StrCat("tracemill: ", mplan.Describe()));
    console.Line(absl::StrCat("tracemill: ", slots, " inputs decoded at once (largest needs about ",
                              largest_cost >> 20, " MiB); spill files in ", tmp_dir,
                              overlap ? "; outputs written as their inputs are decoded"
                                      : "; outputs written once every input is decoded"));
  }
  // Largest first: the long decodes start early, small ones fill the gaps.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sizes[a] > sizes[b]; });
  if (overlap) {
    // Output by output, largest output first. Inputs planned to no output
    // (READMEs, Paddle profiles, smdebug metrics: kNoOutput) come first:
    // until they are decoded, any output may still gain one of them.
    std::map<OutputKey, uint64_t> out_bytes;
    for (size_t i : order)
      if (jp.planned_key[i]) out_bytes[*jp.planned_key[i]] += sizes[i];
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const auto &ka = jp.planned_key[a], &kb = jp.planned_key[b];
      if (!ka || !kb) return !ka && kb;
      if (*ka == *kb) return false;
      uint64_t sa = out_bytes.at(*ka), sb = out_bytes.at(*kb);
      return sa != sb ? sa > sb : *ka < *kb;
    });
  }
  // A pool of `slots` workers: at most `slots` sets of buffers ever exist.
  std::vector<std::unique_ptr<Worker>> worker_store;
  tbb::concurrent_queue<Worker*> pool;
  for (size_t k = 0; k < slots; ++k) {
    worker_store.push_back(std::make_unique<Worker>());
    pool.push(worker_store.back().get());
  }
  std::atomic<size_t> done{0};
  std::atomic<uint64_t> bytes_done{0};
  std::atomic<uint64_t> resident{0};
  std::vector<uint64_t> accounted(n, 0);  // bytes of runs[i] counted in `resident`
  std::atomic<uint64_t> spilled_runs{0}, spilled_events{0};
  // Output bytes of this job, all outputs together (their drop-behind, output_file.h).
  std::atomic<uint64_t> job_output_bytes{0};

  // The time window: --start/--end now; --start-step/--end-step narrow it
  // after stage 1 (no overlap then).
  formats::TimeWindow window;
  if (opts.window_start_ns) window.start_ns = *opts.window_start_ns;
  if (opts.window_end_ns) window.end_ns = *opts.window_end_ns;
  int64_t offset_ns = 0;  // --relative-time: set before stage 2 (no overlap then)
  const int gpn = jp.gpus_per_node;

  // Outputs: grouped as inputs are placed (under group_mu).
  struct GroupState {
    OutputGroup og;
    size_t pending = 0;    // planned inputs not decoded yet (overlap)
    bool started = false;  // handed to the writer: no input may join any more
  };
  std::map<OutputKey, GroupState> groups;
  std::mutex group_mu;
  std::vector<GroupState*> candidates;  // groups that may have become ready
  size_t gate = 0;                      // unplanned inputs not decoded yet (overlap)
  std::vector<char> placed(n, 0);       // 1: input i's run is in a group; 2: refused, reported
  bool plan_broken = false;
  if (overlap) {
    for (size_t i : order) {
      if (jp.planned_key[i]) ++groups[*jp.planned_key[i]].pending;
      else ++gate;
    }
  }
  // A decoded input rejected before writing: its events read count as
  // dropped, so that read = written + dropped still holds.
  auto drop_decoded = [&](InputRecord& r) { r.DropUnaccounted(formats::DropReason::kInputRejected); };
  // An output that could not be written (disk full, EFBIG) is removed: its
  // inputs' events not dropped already count as output_failed.
  auto fail_inputs = [&](const OutputGroup& og) {
    for (size_t i : og.inputs) {
      InputRecord& r = records[i];
      r.events_written = 0;
      r.output.clear();
      r.DropUnaccounted(formats::DropReason::kOutputFailed);
    }
  };
  // Place puts decoded input i in the output of its decoded rank, unless
  // another shard writes that output, an earlier run completed it
  // (--resume) or it has been handed to the writer already; then the input
  // fails loudly, never regrouped silently. Caller holds group_mu.
  auto place = [&](size_t i) {
    InputRecord& r = records[i];
    OutputKey key = KeyFor(r.rank, opts.group_by, gpn);
    const std::string name = OutputFileName(key, opts.compress);
    int owner = jp.OwnerOf(key);
    if (owner != me && planned_owner(i) < 0) {
      r.owner_shard = owner;  // decoded for nothing: another shard writes its output
      resident -= accounted[i];
      runs[i]->DiscardSpill();
      runs[i].reset();
      return;
    }
    auto it = groups.find(key);
    const bool late = it != groups.end() && it->second.started;
    if (owner != me || carried_outputs.count(name) || late) {
      // The head said one output, the decode another, written elsewhere
      // or already. Never silently.
      plan_broken = true;
      r.status = absl::FailedPreconditionError(absl::StrCat(
          owner != me ? absl::StrCat("its decoded rank puts it in ", name, ", which shard ", owner,
                                     " writes without it (its head planned it elsewhere)")
          : late      ? absl::StrCat("its decoded rank puts it in ", name,
                                     ", which was written before it was decoded (its head planned it elsewhere)")
                      : absl::StrCat("its decoded rank puts it in ", name,
                                     ", which an earlier run completed without it (--resume)"),
          ": rerun the job without --shard/--resume"));
      r.rejected = true;
      drop_decoded(r);
      console.Line(ErrorLine(r));
      placed[i] = 2;  // reported
      resident -= accounted[i];
      runs[i]->DiscardSpill();
      runs[i].reset();
      return;
    }
    if (!r.status.ok() && planned_owner(i) < 0 && !opts.quiet) console.Line(ErrorLine(r));
    GroupState& gs = groups[key];
    gs.og.name = name;
    gs.og.kind = key.kind;
    gs.og.number = key.number;
    gs.og.inputs.push_back(i);
    placed[i] = 1;
    if (gs.pending == 0) candidates.push_back(&gs);
  };
  // Finish a group's inputs: duplicate-rank warnings, process labels, input
  // order (rank, then path).
  auto finish_group = [&](OutputGroup& og) {
    // Input order (rank, then path) first: placement order depends on which
    // decode finished first, the warnings below must not.
    std::stable_sort(og.inputs.begin(), og.inputs.end(), [&](size_t a, size_t b) {
      int64_t ra = records[a].rank.value_or(INT64_MAX), rb = records[b].rank.value_or(INT64_MAX);
      if (ra != rb) return ra < rb;
      return records[a].path < records[b].path;
    });
    std::map<int64_t, std::vector<size_t>> by_rank;  // a rank's inputs are all in its output
    for (size_t i : og.inputs)
      if (records[i].rank && records[i].node.empty()) by_rank[*records[i].rank].push_back(i);
    for (auto& [rank, idx] : by_rank) {
      if (idx.size() < 2) continue;
      for (size_t i : idx) {
        std::string others;
        for (size_t j : idx)
          if (j != i) absl::StrAppend(&others, others.empty() ? "" : ", ", records[j].path);
        records[i].warnings.push_back(absl::StrCat("rank ", rank, " is also claimed by ", others,
                                                   "; each kept as a separate process"));
      }
    }
    for (size_t i : og.inputs) {
      InputRecord& r = records[i];
      if (!r.node.empty()) {
        // smdebug: "<node> · DataIterator", "rank 1 (0001) · DataIterator"
        r.label = r.rank ? absl::StrCat("rank ", *r.rank, " (", r.node, ")") : r.node;
      } else if (!r.rank) {
        r.label = std::string(BaseName(r.path));
      } else if (by_rank[*r.rank].size() > 1) {
        r.label = absl::StrCat("rank ", *r.rank, " (", AbslView(BaseName(r.path)), ")");
      } else {
        r.label = absl::StrCat("rank ", *r.rank);
      }
    }
  };
  // Ready groups: every planned input decoded and no unplanned one left.
  // Caller holds group_mu.
  auto take_ready = [&]() {
    std::vector<GroupState*> ready;
    if (gate > 0) return ready;
    for (GroupState* gs : candidates) {
      if (gs->started || gs->pending > 0) continue;
      gs->started = true;
      if (!gs->og.inputs.empty()) ready.push_back(gs);
    }
    candidates.clear();
    return ready;
  };

  std::mutex out_mu;
  std::atomic<size_t> written_outputs{0};
  auto progress = [&](bool force) {
    double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    size_t d = done.load(), w = written_outputs.load();
    std::string line = absl::StrFormat("tracemill: decoded %zu/%zu inputs, %.1f MB/s", d, order.size(),
                                       secs > 0 ? bytes_done.load() / 1e6 / secs : 0.0);
    if (overlap || d == order.size()) absl::StrAppend(&line, ", wrote ", w, " outputs");
    console.Progress(line, force);
  };
  // Merge one output's runs and write it (temporary, then rename), then free
  // its runs. Its record joins summary.outputs.
  auto write_group = [&](OutputGroup& og) {
    OutputRecord out;
    out.path = og.name;
    const auto write_t0 = Clock::now();
    if (opts.verbose)
      console.Line(absl::StrCat("tracemill: writing ", og.name, " (", og.inputs.size(),
                                og.inputs.size() == 1 ? " input)" : " inputs)"));
    try {
      std::vector<formats::WriterInput> winputs(og.inputs.size());
      std::vector<merge::SortedRun*> group_runs;
      merge::Namespacer ns;
      std::string dtu;
      bool dtu_agree = true;
      for (size_t j = 0; j < og.inputs.size(); ++j) {
        size_t i = og.inputs[j];
        const auto& data = runs[i]->data();
        merge::InputNamespace ids = ns.Add(data);
        winputs[j].data = &data;
        winputs[j].out_pid = std::move(ids.out_pid);
        winputs[j].pid_order = std::move(ids.pid_order);
        winputs[j].id_base = ids.id_base;
        winputs[j].label = records[i].label;
        group_runs.push_back(runs[i].get());
        out.inputs.push_back(records[i].path);
        if (records[i].rank) out.ranks.push_back(*records[i].rank);
        const std::string& u = data.meta.display_time_unit;
        if (!u.empty()) {
          if (dtu.empty()) dtu = u;
          else if (dtu != u) dtu_agree = false;
        }
      }
      std::sort(out.ranks.begin(), out.ranks.end());
      out.ranks.erase(std::unique(out.ranks.begin(), out.ranks.end()), out.ranks.end());
      if (dtu.empty() || !dtu_agree) dtu = "ms";
      // This output's share of the merge budget pays one read buffer per
      // spilled run.
      size_t n_spilled = 0;
      for (auto* r : group_runs) n_spilled += r->spilled();
      uint64_t share = mplan.merge / static_cast<uint64_t>(std::max(1, threads));
      uint64_t per_run = n_spilled ? (share > kWriterBytes ? share - kWriterBytes : 0) / n_spilled : 0;
      per_run = std::clamp<uint64_t>(per_run, kMinReadBuffer, kMaxReadBuffer);
      absl::Status st;
      for (auto* r : group_runs)
        if (st.ok()) st = r->Open(per_run);
      // The rename and its journal line go together: an interrupt waits
      // for both (DeferInterrupts, emplaced just before Commit).
      std::optional<formats::DeferInterrupts> defer;
      auto file = formats::OutputFile::Create(opts.out_dir + "/" + og.name, opts.compress);
      if (st.ok()) st = file.status();
      if (st.ok()) {
        if (!opts.direct_io || !(*file)->EnableDirectIo()) (*file)->EnableDropBehind(&job_output_bytes);
        formats::ChromeWriter w(file->get(), offset_ns);
        st = w.Begin(dtu, OtherData(og, records, runs, winputs, opts.relative_time, offset_ns));
        for (size_t j = 0; st.ok() && j < winputs.size(); ++j) st = w.WriteProcessMetadata(winputs[j]);
        merge::KWayMerger merger(group_runs);
        uint64_t since_pause = 0;
        if (st.ok()) {
          st = WriteMerged(merger, group_runs, winputs, w, threads, [&](int run, const formats::Event& e) {
            if (!window.Keeps(e)) {
              records[og.inputs[run]].dropped.Add(formats::DropReason::kWindow);
              return false;
            }
            if (opts.debug_write_delay_ms > 0 && ++since_pause == 1000) {
              since_pause = 0;
              std::this_thread::sleep_for(std::chrono::milliseconds(opts.debug_write_delay_ms));
            }
            return true;
          });
        }
        for (auto* r : group_runs)
          if (st.ok() && !r->read_status().ok()) st = r->read_status();
        if (st.ok()) st = w.Finish();
        if (st.ok()) defer.emplace();
        if (st.ok()) st = (*file)->Commit();
        out.events = w.events_written();
        out.metadata_added = w.metadata_added();
        out.bytes = (*file)->bytes_written();
        out.crc32 = (*file)->crc32();
      }
      // Each input belongs to one output: free its run now (and its bytes
      // in the spill file, so they never reach the disk).
      for (size_t i : og.inputs) {
        resident -= accounted[i];
        if (runs[i]) runs[i]->DiscardSpill();
        runs[i].reset();
      }
      if (!st.ok()) {
        out.error = std::string(st.message());
        out.events = 0;
        out.bytes = 0;  // removed
        out.crc32 = 0;
        fail_inputs(og);
        // An earlier run's file of that name would pass for this run's.
        ::unlink((opts.out_dir + "/" + og.name).c_str());
        console.Line(absl::StrCat("tracemill: cannot write ", opts.out_dir, "/", og.name, ": ",
                                  st.message()));
      } else {
        std::vector<const InputRecord*> done_inputs;
        for (size_t j = 0; j < og.inputs.size(); ++j) {
          records[og.inputs[j]].events_written = winputs[j].events_written;
          records[og.inputs[j]].output = og.name;
          done_inputs.push_back(&records[og.inputs[j]]);
        }
        // The output is in place: record it for --resume.
        if (journal) {
          if (absl::Status js = journal->Append(out, done_inputs); !js.ok())
            console.Line(absl::StrCat("tracemill: journal: ", js.message()));
        }
        if (opts.verbose)
          console.Line(absl::StrFormat("tracemill: wrote %s (%d events, %d bytes, %.2f s)", og.name, out.events,
                                       out.bytes, std::chrono::duration<double>(Clock::now() - write_t0).count()));
      }
    } catch (const std::exception& e) {
      out.error = absl::StrCat("internal error: ", e.what());
      out.events = 0;
      fail_inputs(og);
      console.Line(absl::StrCat("tracemill: ", og.name, ": ", out.error));
    }
    {
      std::lock_guard<std::mutex> lock(out_mu);
      summary.outputs.push_back(std::move(out));
    }
    ++written_outputs;
    progress(false);
  };

  {
    using namespace tbb::flow;
    graph g;
    function_node<GroupState*, continue_msg> write(g, unlimited, [&](GroupState* gs) {
      write_group(gs->og);
      return continue_msg();
    });
    size_t next = 0;
    input_node<size_t> source(g, [&](tbb::flow_control& fc) -> size_t {
      if (next >= order.size()) {
        fc.stop();
        return 0;
      }
      return order[next++];
    });
    // Backpressure: at most `slots` inputs in flight (the decode budget).
    limiter_node<size_t> limiter(g, slots);
    function_node<size_t, continue_msg> decode(g, unlimited, [&](size_t i) {
      Worker* w = nullptr;
      while (!pool.try_pop(w)) std::this_thread::yield();  // never waits: slots == pool size
      try {
        // A gzip input's inflated size is only estimated up front (the last
        // member's ISIZE); its cap is the same with or without the overlap,
        // so that both modes accept the same inputs.
        runs[i] = DecodeAndSort(records[i], *w, *matcher,
                                static_cast<uint64_t>(plan.decode / kDecodeFactor), opts);
        if (runs[i]) {
          // Keep the run in memory if it fits the run budget, else spill it.
          uint64_t rb = runs[i]->ResidentBytes();
          uint64_t before = resident.fetch_add(rb);
          accounted[i] = rb;
          if (before + rb > mplan.runs) {
            resident -= rb;
            accounted[i] = 0;
            absl::Status st;
            if (!w->spill) {
              auto f = merge::SpillFile::Create(tmp_dir);
              if (f.ok()) w->spill = std::move(*f);
              else st = f.status();
            }
            if (st.ok()) st = runs[i]->Spill(w->spill.get());
            if (!st.ok()) {
              records[i].status = st;
              records[i].rejected = true;
              drop_decoded(records[i]);
              runs[i].reset();
            } else {
              accounted[i] = runs[i]->ResidentBytes();
              resident += accounted[i];
              ++spilled_runs;
              spilled_events += runs[i]->size();
            }
          }
        }
      } catch (const std::exception& e) {  // nothing throws across a node
        records[i].status = absl::InternalError(absl::StrCat("internal error: ", e.what()));
        records[i].rejected = true;
        drop_decoded(records[i]);
        resident -= accounted[i];
        accounted[i] = 0;
        runs[i].reset();
      }
      pool.push(w);
      if (!records[i].status.ok() && report_now(i)) console.Line(ErrorLine(records[i]));
      ++done;
      bytes_done += records[i].bytes;
      progress(done.load() == order.size() && !overlap);
      if (overlap) {
        std::vector<GroupState*> ready;
        {
          std::lock_guard<std::mutex> lock(group_mu);
          if (runs[i]) place(i);
          if (jp.planned_key[i]) {
            GroupState& gs = groups[*jp.planned_key[i]];
            if (--gs.pending == 0) candidates.push_back(&gs);
          } else if (--gate == 0) {
            for (auto& [key, gs] : groups) candidates.push_back(&gs);
          }
          ready = take_ready();
        }
        // Written by a task of its own, beside the next decodes (with one
        // decode slot, as under a small --memory-limit, that is what keeps
        // a second core busy). Runs waiting for their output count in
        // `resident`, so decodes that run ahead spill instead of growing
        // memory.
        for (GroupState* gs : ready) {
          finish_group(gs->og);
          write.try_put(gs);
        }
      }
      return continue_msg();
    });
    make_edge(source, limiter);
    make_edge(limiter, decode);
    make_edge(decode, limiter.decrementer());
    source.activate();
    g.wait_for_all();

    if (!overlap) {
      // Stage 1's buffers go; the spill files stay for the merge.
      std::vector<std::unique_ptr<merge::SpillFile>> spill_files;
      for (auto& w : worker_store)
        if (w->spill) spill_files.push_back(std::move(w->spill));
      worker_store.clear();
      pool.clear();
      malloc_trim(0);
      if (opts.verbose)
        console.Line(absl::StrCat("tracemill: decoded; ", resident.load() >> 20, " MiB of runs in memory, ",
                                  spilled_runs.load(), " runs (", spilled_events.load(), " events) spilled"));

      // ---- The window, narrowed by --start-step/--end-step, whose times
      // come from the step markers just decoded.
      if (opts.start_step || opts.end_step) {
        auto resolved = ResolveStepWindow(records, runs, opts.start_step, opts.end_step);
        if (!resolved.ok()) {
          console.Line(absl::StrCat("tracemill: ", resolved.status().message()));
          if (journal) journal->Remove();
          summary.exit_code = kExitUsage;
          return summary;
        }
        window.start_ns = std::max(window.start_ns, resolved->start_ns);
        window.end_ns = std::min(window.end_ns, resolved->end_ns);
        if (opts.verbose)
          console.Line(absl::StrCat("tracemill: steps resolve to [", window.start_ns, ", ", window.end_ns, "] ns"));
      }
      // ---- Grouping: every decoded input's rank is known now; the decoded
      // rank decides its output, and the output's shard decides who reports it.
      for (size_t i = 0; i < n; ++i)
        if (read[i] && runs[i]) place(i);
      // The job's time span: the base of --relative-time.
      int64_t first = INT64_MAX;
      for (size_t i = 0; i < n; ++i)
        if (placed[i] == 1 && records[i].has_span) first = std::min(first, records[i].first_ts_ns);
      for (auto& c : resume.outputs)
        for (auto& r : c.inputs)
          if (r.has_span) first = std::min(first, r.first_ts_ns);
      if (opts.relative_time && first != INT64_MAX) offset_ns = first;
      // ---- Stage 2: k-way merge and write every output, in parallel,
      // largest first.
      std::vector<GroupState*> list;
      for (auto& [key, gs] : groups) {
        gs.started = true;
        finish_group(gs.og);
        list.push_back(&gs);
      }
      std::vector<uint64_t> events_of(list.size(), 0);
      for (size_t k = 0; k < list.size(); ++k)
        for (size_t i : list[k]->og.inputs) events_of[k] += runs[i]->size();
      std::vector<size_t> korder(list.size());
      for (size_t k = 0; k < korder.size(); ++k) korder[k] = k;
      std::stable_sort(korder.begin(), korder.end(), [&](size_t a, size_t b) { return events_of[a] > events_of[b]; });
      for (size_t k : korder) write.try_put(list[k]);
      g.wait_for_all();
    } else {
      worker_store.clear();
      pool.clear();
      if (opts.verbose)
        console.Line(absl::StrCat("tracemill: decoded and written, ", spilled_runs.load(), " runs (",
                                  spilled_events.load(), " events) spilled"));
    }
  }
  progress(true);
  console.EndProgress();
  // Inputs read without a run: the shard they belong to reports them; an
  // undetermined one's error line is printed now.
  for (size_t i = 0; i < n; ++i) {
    if (!read[i] || placed[i] || records[i].owner_shard >= 0) continue;
    int owner = std::max(planned_owner(i), 0);
    if (owner != me) records[i].owner_shard = owner;
    else if (planned_owner(i) < 0 && !records[i].status.ok() && !opts.quiet) console.Line(ErrorLine(records[i]));
  }
  // A rejected input still names its rank by its file name: the report then
  // draws that rank as dead rather than as an anonymous file.
  for (InputRecord& r : records) {
    if (r.rank || r.skipped || r.status.ok() || !r.timeline.tracks.empty()) continue;
    if (auto named = matcher->Match(r.path)) {
      r.rank = named;
      r.rank_source = "file name";
    }
  }
  // Records carried over by --resume take their place in the list.
  for (auto& c : resume.outputs)
    for (auto& r : c.inputs) records[static_cast<size_t>(r.index)] = r;
  // The job's time span.
  for (size_t i = 0; i < n; ++i) {
    const InputRecord& r = records[i];
    if (!(placed[i] == 1 || r.reused) || r.owner_shard >= 0 || !r.has_span) continue;
    if (!summary.has_span) {
      summary.first_ts_ns = r.first_ts_ns;
      summary.last_ts_ns = r.last_ts_ns;
      summary.has_span = true;
    } else {
      summary.first_ts_ns = std::min(summary.first_ts_ns, r.first_ts_ns);
      summary.last_ts_ns = std::max(summary.last_ts_ns, r.last_ts_ns);
    }
  }

  // The outputs carried over by --resume join the list; outputs are listed
  // in output order, whatever order they were written in.
  for (auto& c : resume.outputs) summary.outputs.push_back(c.output);
  std::stable_sort(summary.outputs.begin(), summary.outputs.end(), [](const auto& a, const auto& b) {
    auto ka = ParseOutputName(a.path), kb = ParseOutputName(b.path);
    return ka && kb ? *ka < *kb : a.path < b.path;
  });
  summary.resumed = opts.resume;
  summary.outputs_reused = resume.outputs.size();
  summary.inputs_not_read = resume.input_of_path.size();
  // The records this process reports (or decoded for another shard).
  for (size_t i = 0; i < n; ++i)
    if (read[i] || records[i].reused) summary.inputs.push_back(std::move(records[i]));

  // Inputs whose output failed: their events were read but not written.
  bool output_failed = plan_broken;
  for (const auto& out : summary.outputs) output_failed |= !out.error.empty();
  bool any_input_error = false;
  for (const auto& r : summary.inputs) any_input_error |= r.owner_shard < 0 && !r.status.ok();
  summary.exit_code = output_failed ? kExitInternal : any_input_error ? kExitSomeRejected : kExitOk;
  summary.wall_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (absl::Status st = WriteManifest(opts.out_dir, summary); !st.ok()) {
    console.Line(absl::StrCat("tracemill: cannot write manifest: ", st.message()));
    summary.exit_code = kExitInternal;
  } else if (journal) {
    journal->Remove();  // the manifest holds everything the journal did
  }
  // On exit 1 no report is written: an earlier run's would describe another job.
  if (summary.exit_code == kExitInternal && !opts.shard.sharded())
    ::unlink((opts.out_dir + "/report.html").c_str());
  if (summary.exit_code != kExitInternal && opts.write_report && !opts.shard.sharded()) {
    // Built from the manifest just written, as `tracemill report` does.
    if (absl::Status rs = report::WriteReport(opts.out_dir); !rs.ok()) {
      console.Line(absl::StrCat("tracemill: cannot write report: ", rs.message()));
      summary.exit_code = kExitInternal;
      // The manifest says how the job ended: exit 1 now, as the process.
      if (absl::Status st = WriteManifest(opts.out_dir, summary); !st.ok())
        console.Line(absl::StrCat("tracemill: cannot write manifest: ", st.message()));
    }
  }
  return summary;
}

}  // namespace tracemill::pipeline
