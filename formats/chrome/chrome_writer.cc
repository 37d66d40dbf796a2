#include "formats/chrome/chrome_writer.h"

#include <charconv>
#include <cstring>

#include "formats/common/json_text.h"
#include "formats/common/ts_text.h"

namespace tracemill::formats {
namespace {

constexpr size_t kFlushBytes = 1 << 20;

void AppendInt(int64_t v, std::string* out) {
  char tmp[24];
  char* end = std::to_chars(tmp, tmp + sizeof(tmp), v).ptr;
  out->append(tmp, end - tmp);
}

// In-place writers for FormatEvent: each returns the pointer past what it
// wrote. A literal's length is known, so its copy is a few stores.
template <size_t N>
inline char* Put(char* o, const char (&lit)[N]) {
  std::memcpy(o, lit, N - 1);
  return o + N - 1;
}
// PutEnds copies [p, p + n) to o (sizeof(W) <= n <= 2 sizeof(W)) as its
// first and its last word, which overlap.
template <typename W>
inline void PutEnds(char* o, const char* p, size_t n) {
  W a, b;
  std::memcpy(&a, p, sizeof(W));
  std::memcpy(&b, p + n - sizeof(W), sizeof(W));
  std::memcpy(o, &a, sizeof(W));
  std::memcpy(o + n - sizeof(W), &b, sizeof(W));
}
// Put copies a view: up to 16 bytes as two overlapping loads and stores of
// 8 or 4 (nothing read or written outside the view and [o, o + size)), a
// longer one with memcpy. An event's ph, name, cat and tid are mostly
// short, and the call to memcpy cost more than their copy.
inline char* Put(char* o, std::string_view s) {
  const size_t n = s.size();
  const char* p = s.data();  // an empty view's data() may be null: not read
  if (n > 16) {
    std::memcpy(o, p, n);
  } else if (n >= 8) {
    PutEnds<uint64_t>(o, p, n);
  } else if (n >= 4) {
    PutEnds<uint32_t>(o, p, n);
  } else if (n > 0) {
    o[0] = p[0];
    o[n / 2] = p[n / 2];
    o[n - 1] = p[n - 1];
  }
  return o + n;
}
constexpr size_t kMaxIntChars = 20;  // "-9223372036854775808"
inline char* PutInt(char* o, int64_t v) { return std::to_chars(o, o + kMaxIntChars, v).ptr; }

// The most bytes FormatEvent writes for an event besides its ph, name, cat,
// tid and rest: separator, keys and punctuation, pid, ts, dur, the ids.
constexpr size_t kMaxMicrosChars = 24;  // FormatNanosAsMicros
constexpr size_t kFixedBytes =
    2 + 7 + 1 + 9 + 1 + 8 + 1 + 7 + kMaxIntChars + 7 + 6 + kMaxMicrosChars + 7 + kMaxMicrosChars + 6 +
    kMaxIntChars + 11 + kMaxIntChars + 17 + kMaxIntChars + 1 + 1 + 1;

}  // namespace

void WriterInput::SetOutPids(std::vector<int64_t> pids) {
  out_pid = std::move(pids);
  pid_text.assign(out_pid.size(), PidText{});
  for (size_t i = 0; i < out_pid.size(); ++i) {
    char buf[kMaxIntChars];
    const char* end = std::to_chars(buf, buf + sizeof buf, out_pid[i]).ptr;
    const size_t n = static_cast<size_t>(end - buf);
    if (n > sizeof(PidText::text)) continue;
    std::memcpy(pid_text[i].text, buf, n);
    pid_text[i].len = static_cast<uint8_t>(n);
  }
}

absl::Status ChromeWriter::Emit(std::string_view bytes, std::optional<uint32_t> crc) {
  CommitSpan();
  appended_ += bytes.size();
  return crc ? out_->AppendWithCrc(bytes, *crc) : out_->Append(bytes);
}

absl::Status ChromeWriter::EmitBuffer() {
  absl::Status s = Emit(buf_.view());
  buf_.Clear();
  return s;
}

absl::Status ChromeWriter::Begin(std::string_view display_time_unit,
                                 std::string_view other_data_json) {
  buf_.Reserve(64 << 10);  // grows to kFlushBytes by half again; small outputs stay small
  std::string head = "{\"displayTimeUnit\":";
  AppendJsonString(display_time_unit, &head);
  head.append(",\"otherData\":");
  head.append(other_data_json);
  head.append(",\"traceEvents\":[");
  buf_.Append(head);
  return absl::OkStatus();
}

void ChromeWriter::AppendProcessName(const WriterInput& in, uint32_t pid, std::string* out) {
  // "rank 3 · GPU 3" (process_labels), "rank 3 · python3 (pid 26)",
  // "rank 3 · Spans" (string pid), "rank 3 · pid 26" (no name at all),
  // "rank 3 · pid \"\"" (the empty string pid).
  const ProcessInfo& p = in.data->processes[pid];
  const bool string_pid = !p.pid_token.empty() && p.pid_token[0] == '"';
  std::string pid_text = string_pid
                             ? UnescapeJsonStringBody(p.pid_token.substr(1, p.pid_token.size() - 2))
                             : std::string(p.pid_token);
  std::string name = in.label;
  name.append(" \xC2\xB7 ");  // " · "
  if (!p.labels.empty()) {
    name.append(UnescapeJsonStringBody(p.labels));
  } else if (p.has_name) {
    std::string orig = UnescapeJsonStringBody(p.name);
    name.append(orig);
    if (orig != pid_text) {
      name.append(string_pid ? " (" : " (pid ");
      name.append(pid_text);
      name.push_back(')');
    }
  } else if (string_pid && !pid_text.empty()) {
    name.append(pid_text);
  } else if (string_pid) {
    // Kineto writes its `Record Window End` instant on pid "" (output_json.cpp,
    // finalizeTrace): say so rather than end the name in " · ".
    name.append("pid \"\"");
  } else {
    name.append("pid ");
    name.append(pid_text);
  }
  AppendJsonString(name, out);
}

absl::Status ChromeWriter::WriteProcessMetadata(WriterInput& in) {
  std::string meta;
  for (uint32_t pid : in.pid_order) {
    const ProcessInfo& p = in.data->processes[pid];
    if (!p.has_name) {
      AppendProcessMeta(in, pid, "process_name", first_, &meta);
      first_ = false;
      ++metadata_added_;
    }
    if (!p.has_sort_index) {
      AppendProcessMeta(in, pid, "process_sort_index", first_, &meta);
      first_ = false;
      ++metadata_added_;
    }
  }
  buf_.Append(meta);
  return MaybeFlush();
}

// Inlined into FormatEvent (the parallel writers' batches) and WriteInSpan:
// out of line it cost ~15 % of the formatting's instructions.
[[gnu::always_inline]] inline char* ChromeWriter::FormatInto(const WriterInput& in, const Event& e,
                                                               int64_t ts_offset_ns, bool first, char* o,
                                                               MicrosText* ts_text) {
  const auto& s = in.data->strings;
  const std::string_view ph = s[e.ph], name = s[e.name], cat = s[e.cat];
  const std::string_view tid = (e.flags & kHasTid) ? s[e.tid] : std::string_view();
  o = first ? Put(o, "\n") : Put(o, ",\n");
  o = Put(o, "{\"ph\":\"");
  o = Put(o, ph);
  *o++ = '"';
  if (e.name) {
    o = Put(o, ",\"name\":\"");
    o = Put(o, name);
    *o++ = '"';
  }
  if (e.cat) {
    o = Put(o, ",\"cat\":\"");
    o = Put(o, cat);
    *o++ = '"';
  }
  if (e.flags & kHasPid) {
    o = Put(o, ",\"pid\":");
    if (e.pid < in.pid_text.size() && in.pid_text[e.pid].len) {
      std::memcpy(o, in.pid_text[e.pid].text, 16);  // within the bound's kMaxIntChars
      o += in.pid_text[e.pid].len;
    } else {
      o = PutInt(o, in.out_pid[e.pid]);
    }
  }
  if (e.flags & kHasTid) o = Put(Put(o, ",\"tid\":"), tid);
  if ((e.flags & kHasTs) && e.phase != 'M') {
    const int64_t ts = e.ts_ns + in.clock_shift_ns - ts_offset_ns;
    o = Put(o, ",\"ts\":");
    o = ts_text ? ts_text->Format(ts, o) : FormatNanosAsMicros(ts, o);
  }
  if (e.flags & kHasDur) o = FormatNanosAsMicros(e.dur_ns, Put(o, ",\"dur\":"));
  if (e.flags & kHasId) o = PutInt(Put(o, ",\"id\":"), static_cast<int64_t>(in.id_base + e.id));
  if (e.flags & kHasBindId) o = PutInt(Put(o, ",\"bind_id\":"), static_cast<int64_t>(in.id_base + e.bind_id));
  if (e.flags & kHasId2Global) {
    o = PutInt(Put(o, ",\"id2\":{\"global\":"), static_cast<int64_t>(in.id_base + e.id2));
    *o++ = '}';
  }
  if (e.rest_len) {
    *o++ = ',';
    o = Put(o, std::string_view(e.rest, e.rest_len));
  }
  *o++ = '}';
  return o;
}

absl::Status ChromeWriter::WriteEvent(WriterInput& in, const Event& e) {
  const bool first = CountEvent(in);
  if (!no_span_) no_span_ = !out_->spans();
  // (IsProcessMeta out of line only for metadata events: a call per event
  // was ~1 % of the writer's instructions.)
  if (!no_span_ && (e.phase != 'M' || !IsProcessMeta(*in.data, e))) {
    if (WriteInSpan(in, e, first)) return absl::OkStatus();
    // No room (the ring's buffer ends, or the disk is behind): through the
    // buffer, handed on at once so that the ring moves to its next buffer.
    FormatEvent(in, e, ts_offset_ns_, first, &buf_, &ts_text_);
    return EmitBuffer();
  }
  FormatEvent(in, e, ts_offset_ns_, first, &buf_, &ts_text_);
  return MaybeFlush();
}

bool ChromeWriter::WriteInSpan(const WriterInput& in, const Event& e, bool first) {
  const size_t bound = FormatBound(in, e);
  // Bytes in the buffer (the header, a process metadata record) go first.
  if (buf_.size() || static_cast<size_t>(span_end_ - span_pos_) < bound) {
    if (buf_.size()) {
      if (!EmitBuffer().ok()) return false;  // the error shows again at the next append
    } else {
      CommitSpan();
    }
    size_t room = 0;
    char* p = out_->OpenSpan(&room);
    if (!p) return false;
    span_begin_ = span_pos_ = p;
    span_end_ = p + room;
    if (room < bound) return false;
  }
  span_pos_ = FormatInto(in, e, ts_offset_ns_, first, span_pos_, &ts_text_);
  return true;
}

void ChromeWriter::CommitSpan() {
  if (!span_begin_) return;
  const size_t n = static_cast<size_t>(span_pos_ - span_begin_);
  out_->CommitSpan(span_begin_, n);
  appended_ += n;
  span_begin_ = span_pos_ = span_end_ = nullptr;
}

absl::Status ChromeWriter::AppendFormatted(std::string_view bytes, const std::vector<uint32_t>& ends,
                                           std::optional<uint32_t> crc, DirectRing::Reservation* reserved) {
  if (!out_->gzip()) {
    if (buf_.size()) {
      if (absl::Status s = EmitBuffer(); !s.ok()) return s;
    }
    if (!reserved || !crc) return Emit(bytes, crc);
    absl::StatusOr<DirectRing::Reservation> r = out_->ReserveWithCrc(bytes, *crc);
    if (!r.ok()) return r.status();
    appended_ += bytes.size();
    *reserved = *r;
    return absl::OkStatus();
  }
  // Where WriteEvent's MaybeFlush would have flushed: after the first event
  // that brings the buffer to kFlushBytes.
  size_t start = 0;
  for (uint32_t end : ends) {
    if (buf_.size() + (end - start) < kFlushBytes) continue;
    absl::Status s;
    if (buf_.size() == 0) {
      s = Emit(bytes.substr(start, end - start));
    } else {
      buf_.Append(bytes.substr(start, end - start));
      s = EmitBuffer();
    }
    if (!s.ok()) return s;
    start = end;
  }
  buf_.Append(bytes.substr(start));
  return absl::OkStatus();
}

void ChromeWriter::AppendProcessMeta(const WriterInput& in, uint32_t pid, std::string_view name, bool first,
                                    std::string* out) {
  out->append(first ? "\n" : ",\n");
  out->append("{\"ph\":\"M\",\"name\":\"");
  out->append(name);
  out->append("\",\"pid\":");
  AppendInt(in.out_pid[pid], out);
  if (name == "process_name") {
    out->append(",\"args\":{\"name\":");
    AppendProcessName(in, pid, out);
    out->append("}}");
  } else {
    out->append(",\"args\":{\"sort_index\":");
    AppendInt(in.out_pid[pid], out);
    out->append("}}");
  }
}

size_t ChromeWriter::FormatBound(const TraceData& data, const Event& e) {
  const auto& s = data.strings;
  return kFixedBytes + s[e.ph].size() + s[e.name].size() + s[e.cat].size() +
         ((e.flags & kHasTid) ? s[e.tid].size() : 0) + e.rest_len;
}

bool ChromeWriter::IsProcessMeta(const TraceData& data, const Event& e) {
  if (e.phase != 'M' || !(e.flags & kHasPid)) return false;
  const std::string_view name = data.strings[e.name];
  return name == "process_name" || name == "process_sort_index";
}

uint64_t ChromeWriter::SumBounds(const TraceData& data, std::vector<uint32_t>* meta) {
  uint64_t bytes = 0;
  for (size_t i = 0; i < data.events.size(); ++i) {
    const Event& e = data.events[i];
    if (IsProcessMeta(data, e)) meta->push_back(static_cast<uint32_t>(i));
    else bytes += FormatBound(data, e);
  }
  return bytes;
}

size_t ChromeWriter::EntryBound(const WriterInput& in, const Event& e) {
  if (IsProcessMeta(*in.data, e)) {
    std::string meta;
    AppendProcessMeta(in, e.pid, in.data->strings[e.name], /*first=*/false, &meta);
    return meta.size();
  }
  return FormatBound(in, e);
}

void ChromeWriter::FormatEvent(const WriterInput& in, const Event& e, int64_t ts_offset_ns, bool first,
                               ByteBuffer* out, MicrosText* ts_text) {
  if (e.phase == 'M' && IsProcessMeta(*in.data, e)) {
    std::string meta;
    AppendProcessMeta(in, e.pid, in.data->strings[e.name], first, &meta);
    out->Append(meta);
    return;
  }
  const size_t at = out->size();
  char* const begin = out->Extend(FormatBound(in, e));
  char* const end = FormatInto(in, e, ts_offset_ns, first, begin, ts_text);
  out->Truncate(at + static_cast<size_t>(end - begin));
}

absl::Status ChromeWriter::MaybeFlush() {
  if (buf_.size() < kFlushBytes) return absl::OkStatus();
  return EmitBuffer();
}

absl::Status ChromeWriter::Finish() {
  buf_.Append("\n]}\n");
  return EmitBuffer();
}

}  // namespace tracemill::formats
