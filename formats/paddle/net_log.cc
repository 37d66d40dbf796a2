#include "formats/paddle/net_log.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "formats/common/json_text.h"
#include "formats/common/status_macros.h"
#include "formats/common/ts_text.h"

namespace tracemill::formats {
namespace {

constexpr size_t kMaxWarnings = 20;

// The members of one line that matter, as raw compact JSON values.
struct NetLine {
  std::string_view name, ph, ts, args;
  std::string_view other_key;  // the first other key, for the warning
  bool has_ts = false, has_args = false;
};

NetLine ReadMembers(std::string_view obj) {
  NetLine l;
  ForEachCompactMember(obj, [&](std::string_view key, std::string_view value) {
    // The last value of a repeated key wins, as json.loads does.
    if (key == "name") {
      l.name = value;
    } else if (key == "ph") {
      l.ph = value;
    } else if (key == "ts") {
      l.ts = value;
      l.has_ts = true;
    } else if (key == "args") {
      l.args = value;
      l.has_args = true;
    } else if (l.other_key.empty()) {
      l.other_key = key;
    }
  });
  return l;
}

std::optional<NetDirection> DirectionOf(std::string_view name_raw) {
  if (name_raw == "\"tx\"") return NetDirection::kTx;
  if (name_raw == "\"rx\"") return NetDirection::kRx;
  return std::nullopt;
}

}  // namespace

bool LooksLikeNetLog(std::string_view head) {
  // A sample is a short line: past 64 KiB without a newline this is some
  // other document (a one-line Trace Event Format file), not read further.
  constexpr size_t kMaxLine = 64 << 10;
  const size_t nl = head.substr(0, kMaxLine + 1).find('\n');
  if (nl == std::string_view::npos && head.size() > kMaxLine) return false;
  std::string obj;
  if (AppendSanitizedJson(head.substr(0, nl), &obj) == SanitizeResult::kMalformed || obj.empty() ||
      obj[0] != '{')
    return false;
  NetLine l = ReadMembers(obj);
  return l.has_ts && DirectionOf(l.name).has_value();
}

NetLogFile ParseNetLog(std::string_view file_name, std::string_view text) {
  NetLogFile f;
  DecodeReport& rep = f.report;
  std::string obj;
  bool warned_other_key = false;
  auto bad = [&](DropReason why, uint64_t line, size_t offset, std::string_view what) {
    rep.dropped.Add(why);
    if (rep.status.ok()) {
      rep.status = absl::DataLossError(absl::StrCat("net: ", AbslView(file_name), ":", line, ": ", AbslView(what)));
      rep.error_offset = offset;
    }
  };
  size_t pos = 0;
  uint64_t line_no = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    const bool has_nl = nl != std::string_view::npos;
    std::string_view line = text.substr(pos, (has_nl ? nl : text.size()) - pos);
    const size_t offset = pos;
    pos = has_nl ? nl + 1 : text.size();
    ++line_no;
    if (SkipWhitespace(line, 0) == line.size()) continue;
    ++rep.events_read;
    obj.clear();
    if (AppendSanitizedJson(line, &obj) == SanitizeResult::kMalformed) {
      // The cut last line of a killed writer: nothing after it, and the
      // object never closed.
      if (SkipWhitespace(text, pos) == text.size() && SkipJsonValue(line, 0) == std::string_view::npos) {
        rep.dropped.Add(DropReason::kTruncated);
        if (rep.warnings.size() < kMaxWarnings)
          rep.warnings.push_back(absl::StrCat(AbslView(file_name), ":", line_no,
                                              ": last line cut off (the writer was stopped); ignored"));
      } else {
        bad(DropReason::kMalformed, line_no, offset, "not valid JSON");
      }
      continue;
    }
    if (obj.empty() || obj[0] != '{') {
      bad(DropReason::kNotAnObject, line_no, offset, "not a JSON object");
      continue;
    }
    const NetLine l = ReadMembers(obj);
    const std::optional<NetDirection> dir = DirectionOf(l.name);
    if (!dir) {
      bad(DropReason::kBadNetSample, line_no, offset, "`name` is not \"tx\" or \"rx\"");
      continue;
    }
    if (!l.ph.empty() && l.ph != "\"C\"") {
      bad(DropReason::kBadNetSample, line_no, offset, "`ph` is not \"C\" (a network sample is a counter)");
      continue;
    }
    if (l.has_args && (l.args.empty() || l.args[0] != '{')) {
      bad(DropReason::kBadNetSample, line_no, offset, "`args` is not an object");
      continue;
    }
    if (!l.has_ts) {
      bad(DropReason::kMissingTs, line_no, offset, "no `ts`");
      continue;
    }
    const std::optional<int64_t> ts = ParseMillisToNanos(NumberText(l.ts));
    if (!ts || !InTimeRange(*ts)) {
      bad(DropReason::kBadTs, line_no, offset,
          ts ? "`ts` is more than 2^62 ns from the epoch" : "`ts` is not a decimal number of milliseconds");
      continue;
    }
    if (!l.other_key.empty() && !warned_other_key) {
      warned_other_key = true;
      rep.warnings.push_back(absl::StrCat(AbslView(file_name), ":", line_no, ": keys other than name, ph, ts and args are ignored (\"",
                                          AbslView(l.other_key.substr(0, 40)), "\", and maybe others)"));
    }
    NetSample s;
    s.ts_ns = *ts;
    s.dir = *dir;
    s.line = line_no;
    if (l.has_args) {
      s.args_begin = f.args_text.size();
      s.args_len = l.args.size();
      f.args_text.append(l.args);
    }
    f.samples.push_back(s);
  }
  return f;
}

}  // namespace tracemill::formats
