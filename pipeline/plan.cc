#include "pipeline/plan.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "formats/common/read_file.h"
#include "formats/common/status_macros.h"
#include "formats/detect.h"
#include "formats/gzip/gzip_reader.h"
#include "formats/registry.h"
#include "pipeline/shard.h"
#include "tracemill/version.h"

namespace tracemill::pipeline {
namespace {

constexpr std::string_view kTraceSuffix = ".trace.json";

// Per-thread scratch of the pre-scan.
struct HeadScratch {
  formats::DecoderSet decoders;
  std::string raw;
  std::string inflated;
};

// Reads up to `limit` bytes from the start of `fd` into `out`.
bool ReadHead(int fd, size_t limit, std::string* out) {
  out->resize(limit);
  size_t got = 0;
  while (got < limit) {
    ssize_t n = ::pread(fd, out->data() + got, limit - got, static_cast<off_t>(got));
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  out->resize(got);
  return true;
}

// TailHasBase: the last 4 KiB of a plain file of `size` bytes name
// `baseTimeNanoseconds` (newer Kineto writes it after the events), or
// cannot be read.
bool TailHasBase(int fd, uint64_t size) {
  constexpr size_t kTail = 4096;
  std::string tail(kTail, '\0');
  const uint64_t at = size > kTail ? size - kTail : 0;
  const ssize_t n = ::pread(fd, tail.data(), kTail, static_cast<off_t>(at));
  if (n < 0) return true;
  tail.resize(static_cast<size_t>(n));
  return tail.find("\"baseTimeNanoseconds\"") != std::string::npos;
}

InputPlan ScanOne(const InputRecord& r, const RankMatcher& ranks, HeadScratch& s) {
  InputPlan p;
  if (r.rejected) return p;  // could not even stat it
  if (!r.files.empty()) {
    // An smdebug node: its output follows from the node id (set when grouped).
    p.kind = PlanKind::kOutput;
    p.rank = r.rank;
    for (const std::string& f : r.files) {
      struct stat fst;
      if (::stat(f.c_str(), &fst) != 0) continue;
      p.bytes += static_cast<uint64_t>(fst.st_size);
      p.mtime_ns = std::max<int64_t>(
          p.mtime_ns, static_cast<int64_t>(fst.st_mtim.tv_sec) * 1000000000 + fst.st_mtim.tv_nsec);
    }
    return p;
  }
  int fd = formats::OpenInputFile(r.path);
  if (fd < 0) return p;
  struct stat st;
  bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (regular) {
    p.bytes = static_cast<uint64_t>(st.st_size);
    p.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  }
  if (!regular) {
    // A FIFO or device named on the command line: it can be read once only,
    // so it is not pre-read; every shard decodes it.
    ::close(fd);
    p.kind = PlanKind::kUndetermined;
    return p;
  }
  // A first, small head; the larger one only if a top-level value before
  // `traceEvents` runs past it.
  for (size_t limit : {kHeadFirstBytes, kHeadMaxBytes}) {
    if (!ReadHead(fd, limit, &s.raw)) break;
    const bool raw_whole = s.raw.size() >= p.bytes;
    std::string_view data = s.raw;
    bool whole = raw_whole;
    if (formats::Sniff(data) == formats::FormatId::kGzip) {
      formats::HeadResult g = formats::GunzipHead(s.raw, raw_whole, limit, &s.inflated);
      data = s.inflated;
      whole = g.whole;
      if (data.empty() && !raw_whole) {
        p.kind = PlanKind::kUndetermined;  // a gzip header larger than the head
        break;
      }
    }
    // The format plans its own head (formats/registry.h): not a trace at
    // all (READMEs, empty files) goes to no output.
    const formats::FormatId shape = formats::Sniff(data);
    const formats::InputFormat* format = formats::RecognizeFormat(shape, data);
    if (!format) {
      p.kind = PlanKind::kNoOutput;
      break;
    }
    const formats::HeadPlan h = s.decoders.For(*format).PlanHead(data, whole);
    p.device_count = h.device_count;
    p.bytes_per_event = h.bytes_per_event;
    p.relative_clock = h.times_before_2000 && (whole || (data.data() == s.raw.data() && !TailHasBase(fd, p.bytes)));
    if (h.kind == formats::HeadPlan::Kind::kOutput) {
      p.kind = PlanKind::kOutput;
      p.rank = h.rank ? h.rank : ranks.Match(r.path);
      p.rank_from_head = h.rank.has_value();
      break;
    }
    p.kind = PlanKind::kUndetermined;
    if (h.kind == formats::HeadPlan::Kind::kUndetermined) break;
  }
  ::close(fd);
  return p;
}

}  // namespace

std::string GroupByName(GroupBy g) {
  switch (g) {
    case GroupBy::kLocalGpu: return "local-gpu";
    case GroupBy::kRank: return "rank";
    case GroupBy::kNode: return "node";
    case GroupBy::kAll: return "all";
  }
  return "";
}

OutputKey KeyFor(std::optional<int64_t> rank, GroupBy group_by, int gpn) {
  OutputKey k;
  if (group_by == GroupBy::kAll) {
    k.stem = "all";
  } else if (!rank) {
    k.kind = 1;
    k.stem = "unranked";
  } else if (group_by == GroupBy::kLocalGpu) {
    k.number = *rank % gpn;
    k.stem = absl::StrCat("gpu", k.number);
  } else if (group_by == GroupBy::kRank) {
    k.number = *rank;
    k.stem = absl::StrCat("rank", k.number);
  } else {
    k.number = *rank / gpn;
    k.stem = absl::StrCat("node", k.number);
  }
  return k;
}

std::string OutputFileName(const OutputKey& key, bool compress) {
  return absl::StrCat(key.stem, AbslView(kTraceSuffix), compress ? ".gz" : "");
}

std::string RangeFileName(const std::string& name, int range, int ranges) {
  if (ranges <= 1) return name;
  const size_t at = name.rfind(kTraceSuffix);
  const std::string tag = absl::StrCat(".time-", range + 1, "-of-", ranges);
  if (at == std::string::npos) return name + tag;
  return absl::StrCat(name.substr(0, at), tag, name.substr(at));
}

std::optional<std::pair<int, int>> ParseRangeName(std::string_view name) {
  const size_t at = name.rfind(".time-");
  if (at == std::string_view::npos) return std::nullopt;
  int r = 0, n = 0;
  const char* p = name.data() + at + 6;
  const char* end = name.data() + name.size();
  auto [q, ec] = std::from_chars(p, end, r);
  if (ec != std::errc() || end - q < 4 || std::string_view(q, 4) != "-of-") return std::nullopt;
  auto [q2, ec2] = std::from_chars(q + 4, end, n);
  if (ec2 != std::errc() || q2 == end || *q2 != '.' || r < 1 || r > n) return std::nullopt;
  return std::pair{r - 1, n};
}

std::string OutputNameOf(const std::string& name) {
  if (!ParseRangeName(name)) return name;
  const size_t at = name.rfind(".time-");
  const size_t end = name.find('.', at + 6);
  return name.substr(0, at) + name.substr(end);
}

std::optional<OutputKey> ParseOutputName(std::string_view name) {
  // A time range of an output (--time-ranges), or a part of one: its output's name.
  std::string output;
  if (ParseRangeName(name)) {
    output = OutputNameOf(std::string(name));
    name = output;
  }
  if (name.size() > 3 && name.substr(name.size() - 3) == ".gz") name.remove_suffix(3);
  if (name.size() <= kTraceSuffix.size() || name.substr(name.size() - kTraceSuffix.size()) != kTraceSuffix)
    return std::nullopt;
  std::string_view stem = name.substr(0, name.size() - kTraceSuffix.size());
  // A time part of an output (output_parts.h): "gpu3.part-001".
  if (size_t dot = stem.rfind(".part-"); dot != std::string_view::npos) {
    std::string_view n = stem.substr(dot + 6);
    if (n.size() >= 3 && n.find_first_not_of("0123456789") == std::string_view::npos) stem = stem.substr(0, dot);
  }
  OutputKey k;
  k.stem = std::string(stem);
  if (stem == "all") return k;
  if (stem == "unranked") {
    k.kind = 1;
    return k;
  }
  for (std::string_view prefix : {"gpu", "rank", "node"}) {
    if (stem.substr(0, prefix.size()) != prefix) continue;
    std::string_view digits = stem.substr(prefix.size());
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), k.number);
    if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size()) return std::nullopt;
    return k;
  }
  return std::nullopt;
}

std::vector<InputPlan> PreScan(const std::vector<InputRecord>& records, const RankMatcher& ranks) {
  std::vector<InputPlan> plans(records.size());
  tbb::enumerable_thread_specific<HeadScratch> scratch;
  tbb::parallel_for(size_t{0}, records.size(), [&](size_t i) {
    try {
      plans[i] = ScanOne(records[i], ranks, scratch.local());
    } catch (const std::exception&) {  // nothing throws across a task: decode decides
      plans[i] = InputPlan{};
      plans[i].kind = PlanKind::kUndetermined;
    }
  });
  return plans;
}

int JobPlan::OwnerOf(const OutputKey& key) const {
  auto it = planned_owner.find(key);
  if (it != planned_owner.end()) return it->second;
  if (key.kind != 0 || shard_count <= 1) return 0;
  const int64_t unit = key.number * time_ranges;  // its first range's
  return static_cast<int>(((unit % shard_count) + shard_count) % shard_count);
}

int JobPlan::OwnerOfRange(const OutputKey& key, int range) const {
  if (time_ranges <= 1 || range <= 0) return OwnerOf(key);
  auto it = planned_range_owner.find(key);
  if (it != planned_range_owner.end()) return it->second[static_cast<size_t>(range)];
  if (key.kind != 0 || shard_count <= 1) return 0;
  const int64_t unit = key.number * time_ranges + range;
  return static_cast<int>(((unit % shard_count) + shard_count) % shard_count);
}

bool JobPlan::WritesAnyRange(const OutputKey& key, int shard) const {
  for (int r = 0; r < time_ranges; ++r)
    if (OwnerOfRange(key, r) == shard) return true;
  return false;
}

int JobPlan::OwnerOfInput(size_t i) const {
  switch (inputs[i].kind) {
    case PlanKind::kOutput: return OwnerOfRange(*planned_key[i], ReporterRange(i));
    case PlanKind::kNoOutput: return 0;
    case PlanKind::kUndetermined: break;
  }
  return -1;
}

namespace {
// ListsNoGpu: some input can have an output, and every such input's head
// lists zero GPUs (an absent deviceProperties says nothing: -1).
bool ListsNoGpu(const std::vector<InputPlan>& plans) {
  bool any = false;
  for (const InputPlan& p : plans) {
    if (p.kind == PlanKind::kNoOutput) continue;
    if (p.device_count != 0) return false;
    any = true;
  }
  return any;
}
}  // namespace

JobPlan MakePlan(const std::vector<InputRecord>& records, std::vector<InputPlan> plans,
                 const ConvertOptions& opts, int shard_count) {
  JobPlan jp;
  jp.shard_count = std::max(shard_count, 1);
  int gpn = opts.gpus_per_node;
  if (gpn <= 0) {
    for (const auto& p : plans) gpn = std::max(gpn, p.device_count);
    if (gpn <= 0) gpn = 8;
  }
  jp.gpus_per_node = gpn;
  // A SageMaker host's smdebug files: node n - 1, on its first GPU.
  for (size_t i = 0; i < plans.size(); ++i)
    if (records[i].sagemaker_host > 0 && !plans[i].rank && plans[i].kind == PlanKind::kOutput)
      plans[i].rank = (records[i].sagemaker_host - 1) * gpn;
  jp.cpu_only = ListsNoGpu(plans);
  jp.group_by = jp.cpu_only && opts.group_by == GroupBy::kLocalGpu ? GroupBy::kRank : opts.group_by;
  jp.planned_key.resize(plans.size());
  for (size_t i = 0; i < plans.size(); ++i) {
    if (plans[i].kind != PlanKind::kOutput) continue;
    OutputKey k = KeyFor(plans[i].rank, jp.group_by, gpn);
    jp.planned_bytes[k] += plans[i].bytes;
    jp.planned_key[i] = std::move(k);
  }
  // Each output's time ranges are assigned as outputs of their own (the
  // first range's shard reports the output's inputs).
  jp.time_ranges = std::max(opts.time_ranges, 1);
  std::vector<std::string> names;
  std::vector<uint64_t> bytes;
  for (const auto& [k, b] : jp.planned_bytes)
    for (int r = 0; r < jp.time_ranges; ++r) {
      names.push_back(RangeFileName(OutputFileName(k, opts.compress), r, jp.time_ranges));
      bytes.push_back(b / static_cast<uint64_t>(jp.time_ranges));
    }
  std::vector<int> owner = AssignOutputs(names, bytes, jp.shard_count);
  size_t j = 0;
  for (const auto& [k, b] : jp.planned_bytes) {
    std::vector<int>& ranges = jp.planned_range_owner[k];
    for (int r = 0; r < jp.time_ranges; ++r) ranges.push_back(owner[j++]);
    jp.planned_owner[k] = ranges.front();
  }

  std::string f = absl::StrCat(kVersion, "|", static_cast<int>(opts.group_by), "|", gpn, "|",
                               opts.compress, "|", opts.relative_time, "|", opts.rank_pattern, "|",
                               jp.shard_count, "|", records.size(), "|",
                               opts.window_start_ns.value_or(INT64_MIN), "|", opts.window_end_ns.value_or(INT64_MAX),
                               "|", opts.start_step.value_or(-1), "|", opts.end_step.value_or(-1), "|",
                               opts.time_offset_ns, "|", opts.low_gpu_threshold, "|", opts.no_system_metrics);
  // Added only when not the default, so that the default's fingerprints stay those of earlier versions.
  if (opts.align_clocks != AlignClocks::kAuto) absl::StrAppend(&f, "|align-clocks:", static_cast<int>(opts.align_clocks));
  if (opts.ranks) absl::StrAppend(&f, "|ranks:", opts.ranks->ToString());
  if (opts.max_output_bytes != (256ull << 20)) absl::StrAppend(&f, "|max-output-bytes:", opts.max_output_bytes);
  if (opts.hta_last_step) absl::StrAppend(&f, "|hta-last-step");
  if (jp.time_ranges > 1) absl::StrAppend(&f, "|time-ranges:", jp.time_ranges);
  for (size_t i = 0; i < records.size(); ++i)
    absl::StrAppend(&f, "|", records[i].path, ":", plans[i].bytes, ":", plans[i].mtime_ns);
  jp.fingerprint = absl::StrFormat("%08x", libdeflate_crc32(0, f.data(), f.size()));
  jp.inputs = std::move(plans);
  return jp;
}

}  // namespace tracemill::pipeline
