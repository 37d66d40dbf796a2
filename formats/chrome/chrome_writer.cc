#include "formats/chrome/chrome_writer.h"

#include <charconv>

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

void AppendMicros(int64_t ns, std::string* out) {
  char tmp[32];
  char* end = FormatNanosAsMicros(ns, tmp);
  out->append(tmp, end - tmp);
}

}  // namespace

absl::Status ChromeWriter::Emit(std::string_view bytes, std::optional<uint32_t> crc) {
  appended_ += bytes.size();
  return crc ? out_->AppendWithCrc(bytes, *crc) : out_->Append(bytes);
}

absl::Status ChromeWriter::Begin(std::string_view display_time_unit,
                                 std::string_view other_data_json) {
  buf_.reserve(64 << 10);  // grows to kFlushBytes by doubling; small outputs stay small
  buf_.append("{\"displayTimeUnit\":");
  AppendJsonString(display_time_unit, &buf_);
  buf_.append(",\"otherData\":");
  buf_.append(other_data_json);
  buf_.append(",\"traceEvents\":[");
  return absl::OkStatus();
}

void ChromeWriter::BeginEvent() {
  buf_.append(first_ ? "\n" : ",\n");
  first_ = false;
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
  for (uint32_t pid : in.pid_order) {
    const ProcessInfo& p = in.data->processes[pid];
    if (!p.has_name) {
      BeginEvent();
      buf_.append("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
      AppendInt(in.out_pid[pid], &buf_);
      buf_.append(",\"args\":{\"name\":");
      AppendProcessName(in, pid, &buf_);
      buf_.append("}}");
      ++metadata_added_;
    }
    if (!p.has_sort_index) {
      BeginEvent();
      buf_.append("{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":");
      AppendInt(in.out_pid[pid], &buf_);
      buf_.append(",\"args\":{\"sort_index\":");
      AppendInt(in.out_pid[pid], &buf_);
      buf_.append("}}");
      ++metadata_added_;
    }
  }
  return MaybeFlush();
}

absl::Status ChromeWriter::WriteEvent(WriterInput& in, const Event& e) {
  FormatEvent(in, e, ts_offset_ns_, CountEvent(in), &buf_);
  return MaybeFlush();
}

absl::Status ChromeWriter::AppendFormatted(std::string_view bytes, const std::vector<uint32_t>& ends,
                                           std::optional<uint32_t> crc, DirectRing::Reservation* reserved) {
  if (!out_->gzip()) {
    if (!buf_.empty()) {
      absl::Status s = Emit(buf_);
      buf_.clear();
      if (!s.ok()) return s;
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
    if (buf_.empty()) {
      s = Emit(bytes.substr(start, end - start));
    } else {
      buf_.append(bytes.data() + start, end - start);
      s = Emit(buf_);
      buf_.clear();
    }
    if (!s.ok()) return s;
    start = end;
  }
  buf_.append(bytes.data() + start, bytes.size() - start);
  return absl::OkStatus();
}

void ChromeWriter::FormatEvent(const WriterInput& in, const Event& e, int64_t ts_offset_ns, bool first,
                               std::string* out) {
  const auto& s = in.data->strings;
  out->append(first ? "\n" : ",\n");
  if (e.phase == 'M' && (e.flags & kHasPid)) {
    std::string_view name = s[e.name];
    if (name == "process_name" || name == "process_sort_index") {
      out->append("{\"ph\":\"M\",\"name\":\"");
      out->append(name);
      out->append("\",\"pid\":");
      AppendInt(in.out_pid[e.pid], out);
      if (name == "process_name") {
        out->append(",\"args\":{\"name\":");
        AppendProcessName(in, e.pid, out);
        out->append("}}");
      } else {
        out->append(",\"args\":{\"sort_index\":");
        AppendInt(in.out_pid[e.pid], out);
        out->append("}}");
      }
      return;
    }
  }
  out->append("{\"ph\":\"");
  out->append(s[e.ph]);
  out->push_back('"');
  if (e.name) {
    out->append(",\"name\":\"");
    out->append(s[e.name]);
    out->push_back('"');
  }
  if (e.cat) {
    out->append(",\"cat\":\"");
    out->append(s[e.cat]);
    out->push_back('"');
  }
  if (e.flags & kHasPid) {
    out->append(",\"pid\":");
    AppendInt(in.out_pid[e.pid], out);
  }
  if (e.flags & kHasTid) {
    out->append(",\"tid\":");
    out->append(s[e.tid]);
  }
  if ((e.flags & kHasTs) && e.phase != 'M') {
    out->append(",\"ts\":");
    AppendMicros(e.ts_ns + in.clock_shift_ns - ts_offset_ns, out);
  }
  if (e.flags & kHasDur) {
    out->append(",\"dur\":");
    AppendMicros(e.dur_ns, out);
  }
  if (e.flags & kHasId) {
    out->append(",\"id\":");
    AppendInt(static_cast<int64_t>(in.id_base + e.id), out);
  }
  if (e.flags & kHasBindId) {
    out->append(",\"bind_id\":");
    AppendInt(static_cast<int64_t>(in.id_base + e.bind_id), out);
  }
  if (e.flags & kHasId2Global) {
    out->append(",\"id2\":{\"global\":");
    AppendInt(static_cast<int64_t>(in.id_base + e.id2), out);
    out->push_back('}');
  }
  if (e.rest_len) {
    out->push_back(',');
    out->append(e.rest, e.rest_len);
  }
  out->push_back('}');
}

absl::Status ChromeWriter::MaybeFlush() {
  if (buf_.size() < kFlushBytes) return absl::OkStatus();
  absl::Status s = Emit(buf_);
  buf_.clear();
  return s;
}

absl::Status ChromeWriter::Finish() {
  buf_.append("\n]}\n");
  absl::Status s = Emit(buf_);
  buf_.clear();
  return s;
}

}  // namespace tracemill::formats
