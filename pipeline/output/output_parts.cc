#include "pipeline/output/output_parts.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tracemill::pipeline {
namespace {

constexpr std::string_view kPartSuffix = ".trace.json";
constexpr size_t kClosingBytes = 4;  // "\n]}\n"

// The flow key of event `e` of run `run`: v1 flow events by `id`, v2 by
// `bind_id` (a separate space); 0 if it is no flow event.
uint64_t FlowKey(int run, const formats::Event& e) {
  const uint64_t r = static_cast<uint64_t>(run) << 33;
  if ((e.flags & formats::kHasId) && (e.phase == 's' || e.phase == 't' || e.phase == 'f')) return r | e.id;
  if (e.flags & formats::kHasBindId) return r | (uint64_t{1} << 32) | e.bind_id;
  return 0;
}

}  // namespace

std::string PartName(const std::string& name, int k) {
  const size_t at = name.rfind(kPartSuffix);
  const std::string stem = at == std::string::npos ? name : name.substr(0, at);
  const std::string tail = at == std::string::npos ? "" : name.substr(at);
  return absl::StrFormat("%s.part-%03d%s", stem, k, tail);
}

OutputParts::OutputParts(Options opts, std::vector<formats::WriterInput>& winputs)
    : opts_(std::move(opts)), winputs_(winputs) {}

OutputParts::~OutputParts() = default;  // OutputFile aborts what was not committed

absl::Status OutputParts::OpenFile(const std::string& name) {
  auto file = formats::OutputFile::Create(opts_.dir + "/" + name, opts_.compress);
  if (!file.ok()) return file.status();
  if (!opts_.direct_io || !(*file)->EnableDirectIo()) (*file)->EnableDropBehind(opts_.job_output_bytes);
  writers_.push_back(std::make_unique<formats::ChromeWriter>(file->get(), opts_.ts_offset_ns));
  files_.push_back(std::move(*file));
  return absl::OkStatus();
}

absl::Status OutputParts::Begin() {
  if (absl::Status st = OpenFile(opts_.name); !st.ok()) return st;
  first_writer_ = writers_.front().get();
  absl::Status st = writers_.back()->Begin(opts_.time_unit, opts_.other_data(0));
  for (size_t j = 0; st.ok() && j < winputs_.size(); ++j) st = writers_.back()->WriteProcessMetadata(winputs_[j]);
  return st;
}

absl::Status OutputParts::WriteEvent(int run, formats::WriterInput& in, const formats::Event& e) {
  if (!tracks() && writers_.size() == 1) {
    // One file, never cut: formatted straight into its writer's buffer
    // (the metadata kept for later parts is never needed).
    if (e.phase != 'M') timed_seen_ = true;
    return writers_.back()->WriteEvent(in, e);
  }
  const bool first = CountEvent(in);
  scratch_.Clear();
  formats::ChromeWriter::FormatEvent(in, e, opts_.ts_offset_ns, first, &scratch_);
  return Add(run, e, scratch_.view());
}

absl::Status OutputParts::AppendFormatted(std::string_view bytes, const std::vector<uint32_t>& ends,
                                          const std::vector<std::pair<int, formats::Event>>& events,
                                          std::optional<uint32_t> crc,
                                          formats::DirectRing::Reservation* reserved, const Tracked* tracked) {
  // Far from the bound (or never split): the whole batch at once.
  const bool far = opts_.max_bytes == 0 ||
                   writers_.back()->bytes_produced() + bytes.size() + kClosingBytes <= opts_.max_bytes;
  if (far && timed_seen_ && !writers_.back()->array_empty()) {
    if (opts_.max_bytes && tracked) Apply(*tracked);
    else if (opts_.max_bytes) for (const auto& [run, e] : events) Track(run, e);
    return writers_.back()->AppendFormatted(bytes, ends, crc, reserved);
  }
  size_t start = 0;
  for (size_t k = 0; k < events.size(); ++k) {
    absl::Status st = Add(events[k].first, events[k].second, bytes.substr(start, ends[k] - start));
    if (!st.ok()) return st;
    start = ends[k];
  }
  return absl::OkStatus();
}

bool OutputParts::CutDue(const formats::Event& e, size_t bytes) const {
  if (opts_.max_bytes == 0 || e.phase == 'M' || !current_.has_span) return false;
  const uint64_t after = writers_.back()->bytes_produced() + bytes + kClosingBytes;
  if (after <= opts_.max_bytes) return false;
  return open_spans_ <= 0 || after > opts_.max_bytes + opts_.max_bytes / 8;
}

absl::Status OutputParts::Add(int run, const formats::Event& e, std::string_view bytes) {
  if (e.phase == 'M' && !timed_seen_) metadata_replay_.append(bytes);
  if (e.phase != 'M') timed_seen_ = true;
  if (CutDue(e, bytes.size())) {
    if (absl::Status st = Cut(); !st.ok()) return st;
  }
  if (tracks()) Track(run, e);
  return AppendEntry(bytes);
}

bool OutputParts::KeepWholeIfFits(uint64_t entry_bytes) {
  if (opts_.max_bytes == 0 || !parts_.empty()) return opts_.max_bytes == 0;
  if (writers_.back()->bytes_produced() + entry_bytes + kClosingBytes > opts_.max_bytes) return false;
  opts_.max_bytes = 0;
  return true;
}

std::optional<uint64_t> OutputParts::EntryRoom() const {
  if (opts_.max_bytes == 0 || !parts_.empty()) return std::nullopt;
  const uint64_t used = writers_.back()->bytes_produced() + kClosingBytes;
  return used >= opts_.max_bytes ? 0 : opts_.max_bytes - used;
}

void OutputParts::Tracked::Add(int run, const formats::Event& e, int64_t shift_ns) {
  ++events;
  if (e.phase == 'M' || !(e.flags & formats::kHasTs)) return;
  const int64_t ts = e.ts_ns + shift_ns;
  const int64_t end = e.phase == 'X' && (e.flags & formats::kHasDur) ? ts + e.dur_ns : ts;
  first_ts_ns = has_span ? std::min(first_ts_ns, ts) : ts;
  last_ts_ns = has_span ? std::max(last_ts_ns, end) : end;
  last_start_ns = has_span ? std::max(last_start_ns, ts) : ts;
  has_span = true;
  if (e.flags & formats::kHasSpan) open_spans += e.phase == 'B' ? 1 : e.phase == 'E' ? -1 : 0;
  if (const uint64_t key = FlowKey(run, e))
    flows.emplace_back(key, e.phase == 'f' || (e.flags & formats::kHasBindId));
}

void OutputParts::Track(int run, const formats::Event& e) {
  one_.Clear();
  one_.Add(run, e, winputs_[run].clock_shift_ns);
  Apply(one_);
}

void OutputParts::Apply(const Tracked& t) {
  current_.events += t.events;
  if (t.has_span) {
    current_.first_ts_ns = current_.has_span ? std::min(current_.first_ts_ns, t.first_ts_ns) : t.first_ts_ns;
    current_.last_ts_ns = current_.has_span ? std::max(current_.last_ts_ns, t.last_ts_ns) : t.last_ts_ns;
    current_.last_start_ns = current_.has_span ? std::max(current_.last_start_ns, t.last_start_ns) : t.last_start_ns;
    current_.has_span = true;
  }
  open_spans_ += t.open_spans;
  const int part = static_cast<int>(parts_.size());
  for (const auto& [key, ends] : t.flows) {
    auto [it, fresh] = open_flows_.try_emplace(key, part);
    if (!fresh) {
      if (it->second != part) ++current_.flows_across_parts;
      if (ends) open_flows_.erase(it);
    }
  }
}

absl::Status OutputParts::AppendEntry(std::string_view bytes) {
  formats::ChromeWriter& w = *writers_.back();
  if (w.array_empty() && !bytes.empty() && bytes.front() == ',') bytes.remove_prefix(1);
  w.NoteEntry();
  return w.AppendEntry(bytes);
}

absl::Status OutputParts::Cut() {
  current_.spans_cut = static_cast<uint64_t>(std::max<int64_t>(open_spans_, 0));
  if (absl::Status st = writers_.back()->Finish(); !st.ok()) return st;
  if (absl::Status st = files_.back()->Seal(); !st.ok()) return st;
  current_.path = PartName(opts_.name, static_cast<int>(parts_.size()) + 1);
  current_.bytes = files_.back()->bytes_written();
  current_.crc32 = files_.back()->crc32();
  parts_.push_back(current_);
  current_ = OutputPart{};
  const int k = static_cast<int>(parts_.size()) + 1;
  if (absl::Status st = OpenFile(PartName(opts_.name, k)); !st.ok()) return st;
  formats::ChromeWriter& w = *writers_.back();
  absl::Status st = w.Begin(opts_.time_unit, opts_.other_data(k));
  for (size_t j = 0; st.ok() && j < winputs_.size(); ++j) st = w.WriteProcessMetadata(winputs_[j]);
  if (st.ok() && !metadata_replay_.empty()) st = AppendEntry(metadata_replay_);
  return st;
}

absl::Status OutputParts::Finish() {
  if (absl::Status st = writers_.back()->Finish(); !st.ok()) return st;
  if (absl::Status st = files_.back()->Seal(); !st.ok()) return st;
  if (parts_.empty()) return absl::OkStatus();
  current_.path = PartName(opts_.name, static_cast<int>(parts_.size()) + 1);
  current_.bytes = files_.back()->bytes_written();
  current_.crc32 = files_.back()->crc32();
  current_.spans_cut = 0;
  parts_.push_back(current_);
  return absl::OkStatus();
}

absl::Status OutputParts::Commit() {
  for (size_t k = 0; k < files_.size(); ++k) {
    if (!parts_.empty()) files_[k]->SetFinalPath(opts_.dir + "/" + parts_[k].path);
    if (absl::Status st = files_[k]->Commit(); !st.ok()) return st;
  }
  return absl::OkStatus();
}

uint64_t OutputParts::metadata_added() const {
  uint64_t n = 0;
  for (const auto& w : writers_) n += w->metadata_added();
  return n;
}

uint64_t OutputParts::bytes_written() const {
  uint64_t n = 0;
  for (const auto& f : files_) n += f->bytes_written();
  return n;
}

std::vector<std::string> OutputParts::FinalNames() const {
  if (parts_.empty()) return {opts_.name};
  std::vector<std::string> names;
  for (const OutputPart& p : parts_) names.push_back(p.path);
  return names;
}

}  // namespace tracemill::pipeline
