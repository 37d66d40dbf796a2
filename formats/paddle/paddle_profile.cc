#include "formats/paddle/paddle_profile.h"

#include "absl/strings/str_cat.h"
#include "formats/common/status_macros.h"

namespace tracemill::formats {
namespace paddle_internal {
namespace {

using namespace wire;

const char* FieldName(std::string_view message, uint32_t field) {
  if (message == "Profile") {
    switch (field) {
      case 1: return "events";
      case 2: return "start_ns";
      case 3: return "end_ns";
      case 4: return "mem_events";
    }
  } else if (message == "Event") {
    switch (field) {
      case 1: return "name";
      case 2: return "start_ns";
      case 3: return "end_ns";
      case 5: return "device_id";
      case 6: return "sub_device_id";
      case 7: return "memcopy";
      case 8: return "type";
      case 9: return "detail_info";
    }
  } else if (message == "MemEvent") {
    switch (field) {
      case 1: return "start_ns";
      case 2: return "end_ns";
      case 3: return "bytes";
      case 4: return "place";
      case 5: return "thread_id";
      case 6: return "device_id";
      case 7: return "alloc_in";
      case 8: return "free_in";
    }
  } else if (message == "Event.memcopy") {
    if (field == 1) return "bytes";
  }
  return "unknown";
}

bool WrongType(const uint8_t* tag_at, uint32_t field, uint32_t wt, uint32_t expected,
               ParseProblem* pr) {
  pr->at = tag_at;
  pr->field = field;
  pr->wire_type = wt;
  pr->expected_wire_type = static_cast<int>(expected);
  pr->what = "wrong wire type";
  return false;
}

bool VarintFail(const uint8_t* p, const uint8_t* end, uint32_t field, ParseProblem* pr) {
  WireError w = DescribeVarintError(p, end);
  pr->at = w.at;
  pr->field = field;
  pr->what = w.what;
  return false;
}

bool LengthFail(const uint8_t* tag_at, const uint8_t* p, const uint8_t* end, uint32_t field,
                ParseProblem* pr) {
  WireError w = DescribeLengthError(p, end, &pr->length);
  pr->bytes_left = pr->length ? static_cast<uint64_t>(end - p) : 0;
  pr->at = tag_at;
  pr->field = field;
  pr->what = w.what;
  return false;
}

// Skips an unknown field (or rejects it when sniffing).
const uint8_t* SkipUnknown(const uint8_t* tag_at, const uint8_t* p, const uint8_t* end,
                           uint64_t tag, bool strict, ParseProblem* pr) {
  const uint32_t field = static_cast<uint32_t>(tag >> 3), wt = static_cast<uint32_t>(tag & 7);
  pr->field = field;
  pr->wire_type = wt;
  if (strict) {
    pr->at = tag_at;
    pr->what = "unknown field";
    return nullptr;
  }
  if (field == 0 || (tag >> 32)) {
    pr->at = tag_at;
    pr->what = "invalid field number 0 or above 2^29";
    return nullptr;
  }
  const uint8_t* q = SkipField(p, end, field, wt);
  if (!q) {
    WireError w = DescribeSkipError(p, end, field, wt);
    pr->at = (wt > kFixed32 || wt == kEndGroup) ? tag_at : w.at;
    pr->what = w.what;
  }
  return q;
}

}  // namespace

bool ParseEvent(const uint8_t* p, const uint8_t* end, const uint8_t* limit, bool strict,
                PaddleEvent* e, ParseProblem* pr) {
  pr->message = "Event";
  while (p < end) {
    const uint8_t* const tag_at = p;
    uint64_t tag;
    p = ReadVarint(p, end, &tag, limit);
    if (!p) return VarintFail(tag_at, end, 0, pr);
    const uint32_t field = static_cast<uint32_t>(tag >> 3);
    const uint32_t wt = static_cast<uint32_t>(tag & 7);
    switch (field) {
      case 1:
      case 9: {
        if (wt != kLengthDelimited) return WrongType(tag_at, field, wt, kLengthDelimited, pr);
        uint64_t len;
        const uint8_t* s = ReadLength(p, end, &len, limit);
        if (!s) return LengthFail(tag_at, p, end, field, pr);
        std::string_view v(reinterpret_cast<const char*>(s), len);
        (field == 1 ? e->name : e->detail_info) = v;
        p = s + len;
        break;
      }
      case 2:
      case 3:
      case 5:
      case 6:
      case 8: {
        if (wt != kVarint) return WrongType(tag_at, field, wt, kVarint, pr);
        uint64_t v;
        const uint8_t* q = ReadVarint(p, end, &v, limit);
        if (!q) return VarintFail(p, end, field, pr);
        switch (field) {
          case 2: e->start_ns = v; break;
          case 3: e->end_ns = v; break;
          case 5: e->device_id = static_cast<int64_t>(v); break;  // plain varint: -1 is 10 bytes
          case 6: e->sub_device_id = static_cast<int64_t>(v); break;
          default:
            // An unknown enum value leaves the field as it was (proto2).
            if (v <= 1) e->type = static_cast<PaddleEventType>(v);
            break;
        }
        p = q;
        break;
      }
      case 7: {
        // MemCopy { 1 uint64 bytes }. A repeated message field merges: a
        // later `bytes` wins, a later MemCopy without `bytes` keeps it.
        if (wt != kLengthDelimited) return WrongType(tag_at, field, wt, kLengthDelimited, pr);
        uint64_t len;
        const uint8_t* s = ReadLength(p, end, &len, limit);
        if (!s) return LengthFail(tag_at, p, end, field, pr);
        const uint8_t* m_end = s + len;
        pr->message = "Event.memcopy";
        while (s < m_end) {
          const uint8_t* const inner_at = s;
          uint64_t itag;
          s = ReadVarint(s, m_end, &itag, limit);
          if (!s) return VarintFail(inner_at, m_end, 0, pr);
          if ((itag >> 3) == 1) {
            if ((itag & 7) != kVarint)
              return WrongType(inner_at, 1, static_cast<uint32_t>(itag & 7), kVarint, pr);
            uint64_t v;
            const uint8_t* q = ReadVarint(s, m_end, &v, limit);
            if (!q) return VarintFail(s, m_end, 1, pr);
            e->memcopy_bytes = v;
            s = q;
          } else {
            s = SkipUnknown(inner_at, s, m_end, itag, strict, pr);
            if (!s) return false;
          }
        }
        pr->message = "Event";
        p = m_end;
        break;
      }
      default:
        p = SkipUnknown(tag_at, p, end, tag, strict, pr);
        if (!p) return false;
        break;
    }
  }
  return true;
}

bool ParseMemEvent(const uint8_t* p, const uint8_t* end, const uint8_t* limit, bool strict,
                   PaddleMemEvent* m, ParseProblem* pr) {
  pr->message = "MemEvent";
  while (p < end) {
    const uint8_t* const tag_at = p;
    uint64_t tag;
    p = ReadVarint(p, end, &tag, limit);
    if (!p) return VarintFail(tag_at, end, 0, pr);
    const uint32_t field = static_cast<uint32_t>(tag >> 3);
    const uint32_t wt = static_cast<uint32_t>(tag & 7);
    if (field >= 1 && field <= 6) {
      if (wt != kVarint) return WrongType(tag_at, field, wt, kVarint, pr);
      uint64_t v;
      const uint8_t* q = ReadVarint(p, end, &v, limit);
      if (!q) return VarintFail(p, end, field, pr);
      switch (field) {
        case 1: m->start_ns = v; break;
        case 2: m->end_ns = v; break;
        case 3: m->bytes = v; break;
        case 4:
          if (v <= 2) m->place = static_cast<PaddleMemPlace>(v);  // unknown: unchanged
          break;
        case 5: m->thread_id = v; break;
        default: m->device_id = static_cast<uint32_t>(v); break;  // uint32: low 32 bits
      }
      p = q;
    } else if (field == 7 || field == 8) {
      if (wt != kLengthDelimited) return WrongType(tag_at, field, wt, kLengthDelimited, pr);
      uint64_t len;
      const uint8_t* s = ReadLength(p, end, &len, limit);
      if (!s) return LengthFail(tag_at, p, end, field, pr);
      std::string_view v(reinterpret_cast<const char*>(s), len);
      (field == 7 ? m->alloc_in : m->free_in) = v;
      p = s + len;
    } else {
      p = SkipUnknown(tag_at, p, end, tag, strict, pr);
      if (!p) return false;
    }
  }
  return true;
}

void SetError(const uint8_t* base, uint64_t size, const ParseProblem& pr, uint64_t index,
              PaddleParseResult* r) {
  const uint64_t offset = static_cast<uint64_t>(pr.at - base);
  r->error_offset = offset;
  const std::string_view message = pr.message;
  std::string where;
  if (message == "Event" || message == "MemEvent") {
    where = absl::StrCat(AbslView(message), " #", index);
  } else if (message == "Event.memcopy") {
    where = absl::StrCat("Event #", index, " memcopy");
  } else {
    where = "Profile";
  }
  std::string detail =
      pr.field ? absl::StrCat("field ", pr.field, " (",
                              FieldName(pr.field_of ? pr.field_of : message, pr.field), ")")
               : "";
  if (pr.expected_wire_type >= 0) {
    absl::StrAppend(&detail, " has wire type ", pr.wire_type, " (", WireTypeName(pr.wire_type),
                    "), expected ", pr.expected_wire_type, " (",
                    WireTypeName(static_cast<uint32_t>(pr.expected_wire_type)), ")");
  } else {
    absl::StrAppend(&detail, detail.empty() ? "" : ": ", pr.what);
    if (pr.length > 0) absl::StrAppend(&detail, " (length ", pr.length, ", ", pr.bytes_left, " bytes left)");
  }
  const std::string_view what = pr.what;
  if (what.find("cut off") != std::string_view::npos || what.find("runs past") != std::string_view::npos)
    absl::StrAppend(&detail, "; the file is truncated or corrupt (", size, " bytes)");
  r->status = absl::DataLossError(
      absl::StrCat("paddle profile: ", where, ": ", detail));  // the offset is error_offset: said once, by the caller
}

}  // namespace paddle_internal

namespace {

struct VectorSink {
  PaddleProfile* out;
  void OnEvent(const PaddleEvent& e) { out->events.push_back(e); }
  void OnMemEvent(const PaddleMemEvent& m) { out->mem_events.push_back(m); }
};

}  // namespace

PaddleParseResult DecodePaddleProfile(std::string_view bytes, PaddleProfile* out) {
  out->Clear();
  // ~55 bytes per event on the wire (names, two 9-byte timestamps): reserve
  // once so a fresh vector does not reallocate its way up.
  if (out->events.capacity() < bytes.size() / 64) out->events.reserve(bytes.size() / 48);
  VectorSink sink{out};
  return ParsePaddleProfile(bytes, sink);
}

bool LooksLikePaddleProfile(std::string_view head, bool complete) {
  using namespace wire;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(head.data());
  const uint8_t* const end = p + head.size();
  int fields = 0;
  auto cut = [&](const uint8_t* at) {
    // The head ends inside this item: fine if the file goes on.
    return !complete && std::string_view(DescribeVarintError(at, end).what).find("cut off") !=
                            std::string_view::npos;
  };
  while (p < end) {
    uint64_t tag;
    const uint8_t* q = ReadVarint(p, end, &tag);
    if (!q) return cut(p) && fields > 0;
    const uint32_t field = static_cast<uint32_t>(tag >> 3), wt = static_cast<uint32_t>(tag & 7);
    p = q;
    if (field == 1 || field == 4) {
      if (wt != kLengthDelimited) return false;
      uint64_t len;
      q = ReadVarint(p, end, &len);
      if (!q) return cut(p) && fields > 0;
      p = q;
      const uint8_t* body_end = end;  // p + len only once it is known to fit
      bool clipped = false;
      if (len <= static_cast<uint64_t>(end - p)) {
        body_end = p + len;
      } else {
        // Past the end of the head: validate the part we have. Past the end
        // of a whole file on its very first field is JSON starting with a
        // newline ("\n[" reads as field 1, length 91), not a truncated profile.
        if (complete && fields == 0) return false;
        body_end = end;
        clipped = true;
      }
      paddle_internal::ParseProblem pr;
      bool ok;
      if (field == 1) {
        PaddleEvent e;
        ok = paddle_internal::ParseEvent(p, body_end, body_end, /*strict=*/true, &e, &pr);
      } else {
        PaddleMemEvent m;
        ok = paddle_internal::ParseMemEvent(p, body_end, body_end, /*strict=*/true, &m, &pr);
      }
      if (!ok) {
        const bool at_cut = clipped && (std::string_view(pr.what).find("cut off") !=
                                            std::string_view::npos ||
                                        std::string_view(pr.what).find("runs past") !=
                                            std::string_view::npos);
        if (!at_cut) return false;
      }
      ++fields;
      if (clipped) return true;
      p = body_end;
    } else if (field == 2 || field == 3) {
      if (wt != kVarint) return false;
      uint64_t v;
      q = ReadVarint(p, end, &v);
      if (!q) return cut(p) && fields > 0;
      p = q;
      ++fields;
    } else {
      return false;
    }
  }
  return fields > 0;
}

}  // namespace tracemill::formats
