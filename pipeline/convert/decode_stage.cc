#include "pipeline/convert/decode_stage.h"

#include <fcntl.h>
#include <malloc.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "formats/chrome/tef_format.h"
#include "formats/common/large_alloc.h"
#include "formats/common/mapped_input.h"
#include "formats/common/read_file.h"
#include "formats/common/status_macros.h"
#include "formats/detect.h"
#include "formats/gzip/gzip_reader.h"
#include "pipeline/clocks/clocks.h"
#include "pipeline/inputs/smdebug_inputs.h"

namespace tracemill::pipeline {
namespace {

// DecodedSize estimates an input's decoded size from its head and tail
// without reading it: a gzip file's ISIZE trailer (the last member's size
// mod 2^32; at least 4x the compressed size), else the file size.
// `*uncertain`: a gzip ISIZE below 4x or above 1032x the file: a
// multi-member file (tracemill's own --compress outputs: the last member is
// one chunk) or a truncated one, whose real size only inflating tells.
uint64_t DecodedSize(const std::string& path, uint64_t file_bytes, bool* is_gzip, bool* uncertain) {
  *is_gzip = false;
  *uncertain = false;
  int fd = formats::OpenInputFile(path);
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

// DecodeSmdebugNode: an smdebug node's files, one after another (each read
// and, if gzip, inflated within `max_inflated_bytes`), then `SortDecoded`.
std::unique_ptr<merge::SortedRun> DecodeSmdebugNode(InputRecord& r, DecodeWorker& w, const RankMatcher& ranks,
                                                    uint64_t max_inflated_bytes, const DecodeOptions& o) {
  auto read = [&](const std::string& path) -> absl::StatusOr<std::pair<std::string_view, size_t>> {
    TM_RETURN_IF_ERROR(formats::ReadWholeFile(path, simdjson::SIMDJSON_PADDING, &w.file));
    if (formats::Sniff(w.file.view()) != formats::FormatId::kGzip)
      return std::make_pair(w.file.view(), w.file.capacity());
    formats::GunzipResult g =
        formats::Gunzip(w.file.view(), &w.inflated, simdjson::SIMDJSON_PADDING, max_inflated_bytes);
    if (!g.status.ok() && w.inflated.size() == 0) return g.status;
    return std::make_pair(w.inflated.view(), w.inflated.capacity());
  };
  return SortDecoded(r, DecodeSmdebugGroup(r, read, &formats::TefDecoderOf(w.decoders), o.settings),
                     ranks, o);
}

// DecodeMapped: a large local file, mapped rather than copied
// (formats/common/mapped_input.h). Returns false (nothing done) when the
// file is not one to map; else decodes it into `*run`, and reports a file
// that shrank or changed while it was read.
bool DecodeMapped(InputRecord& r, DecodeWorker& w, const RankMatcher& ranks, uint64_t max_inflated_bytes,
                  const DecodeOptions& o, std::unique_ptr<merge::SortedRun>* run) {
  const int fd = formats::OpenInputFile(r.path);
  if (fd < 0) return false;
  struct stat st;
  formats::MappedInput mapped;
  const bool map = ::fstat(fd, &st) == 0 && formats::ShouldMapInput(fd, st) &&
                   mapped.Map(fd, static_cast<size_t>(st.st_size), simdjson::SIMDJSON_PADDING);
  if (map) {
    r.bytes = mapped.view().size();
    *run = DecodeInput(mapped.view(), mapped.capacity(), w, ranks, r, max_inflated_bytes, o);
    struct stat after;
    if (std::optional<size_t> at = mapped.shrunk_at()) {
      r.status = absl::DataLossError(absl::StrCat(
          "the file shrank while it was read (another process truncated or rewrote it); of its ", r.bytes,
          " bytes, those before about byte ", *at, " were decoded"));
      r.error_offset = *at;
    } else if (::fstat(fd, &after) == 0 &&
               (after.st_size != st.st_size || after.st_mtim.tv_sec != st.st_mtim.tv_sec ||
                after.st_mtim.tv_nsec != st.st_mtim.tv_nsec)) {
      // Rewritten in place: what was decoded may mix old and new bytes.
      r.status = absl::DataLossError(
          "the file was modified while it was read (another process wrote to it); its events "
          "may mix the old and the new content");
    }
  }
  ::close(fd);
  return map;
}

}  // namespace

std::unique_ptr<merge::SortedRun> ReadAndDecode(InputRecord& r, DecodeWorker& w, const RankMatcher& ranks,
                                                uint64_t max_inflated_bytes, const DecodeOptions& o) {
  if (!r.files.empty()) return DecodeSmdebugNode(r, w, ranks, max_inflated_bytes, o);
  std::unique_ptr<merge::SortedRun> run;
  if (DecodeMapped(r, w, ranks, max_inflated_bytes, o, &run)) return run;
  if (absl::Status s = formats::ReadWholeFile(r.path, simdjson::SIMDJSON_PADDING, &w.file, max_inflated_bytes);
      !s.ok()) {
    r.status = s;
    r.rejected = true;
    return nullptr;
  }
  r.bytes = w.file.size();
  return DecodeInput(w.file.view(), w.file.capacity(), w, ranks, r, max_inflated_bytes, o);
}

namespace {

// DecodeCostOf: the memory decoding input `i` holds (budget.h), with its
// size on disk in `*size`; or nullopt after rejecting it, when decoding it
// alone would exceed the decode budget (its line said if reported here).
std::optional<uint64_t> DecodeCostOf(size_t i, ConvertContext& cx, const MemoryPlan& memory, uint64_t* size) {
  InputRecord& r = cx.records[i];
  struct stat st;
  if (::stat(r.path.c_str(), &st) == 0) *size = static_cast<uint64_t>(st.st_size);
  bool gz = false;
  bool uncertain = false;
  uint64_t cost = DecodeCost(DecodedSize(r.path, *size, &gz, &uncertain), cx.plan.inputs[i].bytes_per_event);
  // A gzip input's size is only an estimate: try it within the budget
  // (Gunzip stops at the limit and says so). One whose trailer does not
  // tell its size may inflate to that limit: it counts as the whole
  // budget, so it decodes alone.
  if (gz) cost = uncertain ? memory.decode : std::min(cost, memory.decode);
  if (cost <= memory.decode) return cost;
  // Decoding it alone would exceed the budget: say what would fit.
  r.bytes = *size;
  r.rejected = true;
  r.status = absl::ResourceExhaustedError(absl::StrCat(
      "decoding needs about ", cost >> 20, " MiB, more than the ", memory.decode >> 20,
      " MiB decode budget of --memory-limit ", memory.limit >> 20, "M; rerun with --memory-limit ",
      (cost * 10 / 6 >> 20) + 1, "M or more"));
  if (cx.ReportsNow(i)) cx.job.console().Line(ErrorLine(r));
  return std::nullopt;
}

// OrderByOutput: with the overlap, inputs are decoded output by output,
// largest output first. Inputs planned to no output (READMEs, Paddle
// profiles, smdebug metrics: kNoOutput) come first: until they are decoded,
// any output may still gain one of them.
void OrderByOutput(const JobPlan& plan, const std::vector<uint64_t>& sizes, std::vector<size_t>* order) {
  std::map<OutputKey, uint64_t> out_bytes;
  for (size_t i : *order)
    if (plan.planned_key[i]) out_bytes[*plan.planned_key[i]] += sizes[i];
  std::stable_sort(order->begin(), order->end(), [&](size_t a, size_t b) {
    const auto &ka = plan.planned_key[a], &kb = plan.planned_key[b];
    if (!ka || !kb) return !ka && kb;
    if (*ka == *kb) return false;
    uint64_t sa = out_bytes.at(*ka), sb = out_bytes.at(*kb);
    return sa != sb ? sa > sb : *ka < *kb;
  });
}

std::string SpillDir(const ConvertOptions& opts) {
  return !opts.tmp_dir.empty() ? opts.tmp_dir : std::getenv("TMPDIR") != nullptr ? std::getenv("TMPDIR") : "/tmp";
}

}  // namespace

DecodeSchedule ScheduleDecodes(ConvertContext& cx, const MemoryPlan& memory) {
  const ConvertOptions& opts = cx.opts;
  DecodeSchedule s;
  s.spill_dir = SpillDir(opts);
  // A gzip input's inflated size is only estimated up front (the last
  // member's ISIZE); its cap is the same with or without the overlap, so
  // that both modes accept the same inputs.
  s.max_inflated_bytes = static_cast<uint64_t>(memory.decode / kDecodeFactor);
  std::vector<uint64_t> sizes(cx.records.size(), 0);
  uint64_t largest_cost = 0;
  for (size_t i = 0; i < cx.records.size(); ++i) {
    if (!cx.read[i]) continue;
    if (cx.records[i].skipped) continue;  // smdebug *.tmp, --no-system-metrics
    if (cx.records[i].rejected) {         // could not even stat it
      if (cx.ReportsNow(i)) cx.job.console().Line(ErrorLine(cx.records[i]));
      continue;
    }
    std::optional<uint64_t> cost = DecodeCostOf(i, cx, memory, &sizes[i]);
    if (!cost) continue;
    largest_cost = std::max(largest_cost, *cost);
    s.order.push_back(i);
  }
  // The overlap needs every input's output known from the heads (none
  // undetermined) and nothing that needs every input decoded before the
  // first write (--start-step/--end-step, --relative-time). Both modes
  // write the same bytes; the budget of each is in budget.h.
  const MemoryPlan overlap_memory = memory.ForOverlap(largest_cost, cx.threads);
  s.overlap = !opts.no_overlap && !opts.relative_time && !opts.start_step && !opts.end_step &&
              largest_cost <= overlap_memory.decode;
  for (size_t i : s.order) s.overlap = s.overlap && cx.plan.inputs[i].kind != PlanKind::kUndetermined;
  s.memory = s.overlap ? overlap_memory : memory;
  s.spill_page_cache = SpillPageCacheBytes(s.memory.limit);
  // Inputs in flight: as many of the largest as fit the decode budget, at
  // least one, at most one per thread.
  s.slots = static_cast<size_t>(std::clamp<uint64_t>(largest_cost ? s.memory.decode / largest_cost : cx.threads, 1,
                                                     static_cast<uint64_t>(cx.threads)));
  if (opts.verbose) {
    cx.job.Say(s.memory.Describe());
    cx.job.Say(absl::StrCat(s.slots, " inputs decoded at once (largest needs about ", largest_cost >> 20,
                            " MiB); spill files in ", s.spill_dir, " (through the page cache up to ",
                            s.spill_page_cache >> 20, opts.direct_io ? " MiB, then direct)" : " MiB)",
                            s.overlap ? "; outputs written as their inputs are decoded"
                                      : "; outputs written once every input is decoded"));
  }
  // Largest first: the long decodes start early, small ones fill the gaps.
  std::stable_sort(s.order.begin(), s.order.end(), [&](size_t a, size_t b) { return sizes[a] > sizes[b]; });
  if (s.overlap) OrderByOutput(cx.plan, sizes, &s.order);
  // Clock probes first: no output is written before the offsets are solved.
  if (cx.clocks)
    std::stable_partition(s.order.begin(), s.order.end(), [&](size_t i) { return cx.clocks->IsCandidate(i); });
  return s;
}

ChunkPoolScope::ChunkPoolScope(const MemoryPlan& memory) {
  // Freed blocks (spilled runs, written outputs) are reused by the next
  // decodes instead of being faulted in again (large_alloc.h). The pool
  // only holds memory in use a moment before (a fresh mapping first gives
  // back as many pooled bytes), so it stays within what the job held; it is
  // emptied when the job ends. At half the runs budget, the 512-rank job
  // unmapped 5.4 GB (a written output's runs) and mapped it again.
  formats::SetChunkPoolLimit(memory.limit);
  // The same for the top of malloc's heaps: glibc gives back any free top
  // over 128 KiB, so each input faulted in its arenas' smaller chunks and
  // hash tables again (62,400 page faults for the 64-rank gzip job; 44,900
  // with 8 MiB kept, peak RSS unchanged). Keep limit/64, 128 KiB to 8 MiB,
  // per heap (at most 4, M_ARENA_MAX).
  mallopt(M_TRIM_THRESHOLD,
          static_cast<int>(std::clamp<uint64_t>(memory.limit / 64, uint64_t{128} << 10, uint64_t{8} << 20)));
}

ChunkPoolScope::~ChunkPoolScope() {
  formats::SetChunkPoolLimit(0);
  // glibc's default again: a follow job runs one convert per window, and
  // each heap kept up to 8 MiB free between them (bench/RESULTS.md, issue 26).
  mallopt(M_TRIM_THRESHOLD, 128 << 10);
}

DecodeStage::DecodeStage(ConvertContext& cx, const DecodeSchedule& schedule, DecodedRuns& runs,
                         ConvertProgress& progress)
    : cx_(cx), schedule_(schedule), runs_(runs), progress_(progress), options_([&cx] {
        DecodeOptions o = DecodeOptionsOf(cx.opts);
        o.collect_collectives = cx.clocks && cx.clocks->considered();
        o.gpus_per_node = cx.plan.gpus_per_node;
        return o;
      }()),
      fresh_at_start_(formats::FreshMappedBytes()) {
  for (size_t k = 0; k < schedule.slots; ++k) {
    workers_.push_back(std::make_unique<DecodeWorkerSlot>());
    idle_.push(workers_.back().get());
  }
}

bool DecodeStage::Decode(size_t i) {
  DecodeWorkerSlot* w = nullptr;
  while (!idle_.try_pop(w)) std::this_thread::yield();  // never waits: slots == workers
  try {
    DecodeAndKeep(i, *w);
  } catch (const std::exception& e) {  // nothing throws across a node
    Reject(i, absl::InternalError(absl::StrCat("internal error: ", e.what())));
  }
  idle_.push(w);
  InputRecord& r = cx_.records[i];
  if (!r.status.ok() && cx_.ReportsNow(i)) cx_.job.console().Line(ErrorLine(r));
  progress_.InputDecoded(r.bytes);
  return decoded_.fetch_add(1, std::memory_order_acq_rel) + 1 == schedule_.order.size();
}

void DecodeStage::AfterLastDecode() {
  // The workers stay: the outputs still to write may read runs spilled into
  // their spill files (DoneDecoding frees them).
  const uint64_t before = formats::ChunkPoolBytes();
  formats::SetChunkPoolLimit(std::min<uint64_t>(schedule_.memory.limit, kWriterBytes * static_cast<uint64_t>(cx_.threads)));
  released_after_last_ = before - std::min(before, formats::ChunkPoolBytes());
}

void DecodeStage::DecodeAndKeep(size_t i, DecodeWorkerSlot& w) {
  auto run = ReadAndDecode(cx_.records[i], w, cx_.ranks, schedule_.max_inflated_bytes, options_);
  if (!run) return;
  // Kept in memory if it fits the runs budget, else spilled.
  if (absl::Status st = runs_.Keep(i, std::move(run), &w.spill); !st.ok()) Reject(i, st);
}

void DecodeStage::Reject(size_t i, absl::Status st) {
  InputRecord& r = cx_.records[i];
  r.status = std::move(st);
  r.rejected = true;
  // Its events read count as dropped, so that read = written + dropped holds.
  r.DropUnaccounted(formats::DropReason::kInputRejected);
  runs_.Free(i);
}

void DecodeStage::DoneDecoding(bool keep_spills) {
  for (auto& w : workers_)
    if (keep_spills && w->spill) spill_files_.push_back(std::move(w->spill));
  workers_.clear();
  idle_.clear();
  if (keep_spills) malloc_trim(0);
  if (!cx_.opts.verbose) return;
  const std::string memory = absl::StrCat("; ", (formats::FreshMappedBytes() - fresh_at_start_) >> 20,
                                          " MiB of large blocks mapped afresh, the rest reused",
                                          released_after_last_ ? absl::StrCat(" (", released_after_last_ >> 20,
                                                                              " MiB given back after the last decode)")
                                                               : "");
  if (keep_spills)
    cx_.job.Say(absl::StrCat("decoded; ", runs_.resident_bytes() >> 20, " MiB of runs in memory, ",
                             runs_.spilled_runs(), " runs (", runs_.spilled_events(), " events) spilled, ",
                             runs_.direct_runs(), " of them direct", memory));
  else
    cx_.job.Say(absl::StrCat("decoded and written, ", runs_.spilled_runs(), " runs (", runs_.spilled_events(),
                             " events) spilled, ", runs_.direct_runs(), " of them direct", memory));
}

}  // namespace tracemill::pipeline
