#include "formats/orchestrator/run_event_log_decoder.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "formats/common/json_text.h"
#include "formats/common/status_macros.h"
#include "formats/common/ts_text.h"

namespace tracemill::formats {
namespace {

// Calls `fn(key_body, raw_value)` for each member of `obj`, a JSON object as
// `AppendSanitizedJson` writes it (valid, no whitespace), in order.
template <typename Fn>
void ForEachMember(std::string_view obj, Fn fn) {
  size_t pos = 1;
  while (pos < obj.size() && obj[pos] == '"') {
    size_t key_end = SkipJsonValue(obj, pos);
    if (key_end == std::string_view::npos || key_end >= obj.size()) return;
    std::string_view key = obj.substr(pos + 1, key_end - pos - 2);
    pos = key_end + 1;  // past ':'
    size_t value_end = SkipJsonValue(obj, pos);
    if (value_end == std::string_view::npos) return;
    fn(key, obj.substr(pos, value_end - pos));
    pos = value_end;
    if (pos < obj.size() && obj[pos] == ',') ++pos;
  }
}

std::string_view NumberText(std::string_view raw) {
  if (auto body = JsonStringBody(raw)) return *body;
  return raw;
}

// An `error` value that says something failed: anything but absent, null,
// false or "".
bool IsFailure(std::string_view raw) {
  return !raw.empty() && raw != "null" && raw != "false" && raw != "\"\"";
}

std::string PlainText(std::string_view raw) {
  if (auto body = JsonStringBody(raw)) return UnescapeJsonStringBody(*body);
  return std::string(raw);
}

// Cuts `s` to at most `max` bytes on a UTF-8 boundary, marking the cut.
std::string Clip(std::string s, size_t max) {
  if (s.size() <= max) return s;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  s.resize(n);
  s.append("...");
  return s;
}

// The last non-empty line of a process's output tail.
std::string LastLine(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
    text.pop_back();
  size_t nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

// One worker (or the scheduler) while decoding.
struct Actor {
  uint32_t pid = 0;
  std::map<int64_t, StepSpan> rounds;  // round -> span of its actions in it
  std::optional<int64_t> failed_at_ns;
  std::string failure;
};

}  // namespace

DecodeReport RunEventLogDecoder::Decode(std::string_view text, TraceBuilder* b) {
  DecodeReport report;
  auto error = [&](absl::Status s, uint64_t offset) {
    if (report.status.ok()) {
      report.status = std::move(s);
      report.error_offset = offset;
    }
  };
  // Interned strings must outlive this call (the builder keeps views as map
  // keys until Finish), so each distinct one is copied into the arena once.
  absl::flat_hash_map<std::string, uint32_t> names;
  auto intern = [&](std::string_view body) {
    auto it = names.find(std::string(body));
    if (it != names.end()) return it->second;
    uint32_t id = b->InternString(b->arena().Copy(body));
    names.emplace(std::string(body), id);
    return id;
  };
  const uint32_t cat = intern("run_event_log");
  const uint32_t tid = b->InternToken("0");
  const uint32_t ph_x = intern("X"), ph_b = intern("B"), ph_e = intern("E"), ph_i = intern("i");

  Actor scheduler;
  scheduler.pid = b->InternPid("\"scheduler\"");  // first: listed first
  bool scheduler_seen = false;
  std::map<int64_t, Actor> workers;
  std::vector<int64_t> worker_order;  // first appearance
  std::vector<StepSpan> rounds;
  std::optional<int64_t> current_round;
  int64_t round_start_ns = 0;
  bool round_open = false;
  int64_t last_time_ns = 0;
  uint64_t recognized = 0;  // lines with both `time` and `kind`

  const size_t n = text.size();
  size_t pos = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  while (pos < n) {
    size_t nl = text.find('\n', pos);
    const bool last = nl == std::string_view::npos;
    size_t end = last ? n : nl;
    std::string_view line = text.substr(pos, end - pos);
    const uint64_t offset = pos;
    pos = last ? n : nl + 1;
    size_t a = SkipWhitespace(line, 0);
    line = line.substr(a);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
      line.remove_suffix(1);
    if (line.empty()) continue;
    // NUL padding at the end of a preallocated log is not a line.
    if (last && line.find_first_not_of('\0') == std::string_view::npos) break;
    ++report.events_read;

    obj_.clear();
    if (AppendSanitizedJson(line, &obj_) == SanitizeResult::kMalformed) {
      bool cut = last && SkipJsonValue(line, 0) == std::string_view::npos;
      report.dropped.Add(cut ? DropReason::kTruncated : DropReason::kMalformed);
      error(absl::DataLossError(cut ? "run event log: last line is cut off (truncated)"
                                    : "run event log: line is not valid JSON"),
            offset);
      continue;
    }
    if (obj_.empty() || obj_[0] != '{') {
      report.dropped.Add(DropReason::kNotAnObject);
      error(absl::DataLossError("run event log: line is not a JSON object"), offset);
      continue;
    }
    if (obj_ == "{}") {
      report.dropped.Add(DropReason::kEmptyObject);
      continue;
    }

    // Top-level members, then the known members of `data`.
    std::string_view time_raw, kind_raw, rank_raw, data_raw, dur_raw, error_raw;
    std::vector<std::pair<std::string_view, std::string_view>> extra;
    ForEachMember(obj_, [&](std::string_view key, std::string_view value) {
      if (key == "time") time_raw = value;
      else if (key == "kind") kind_raw = value;
      else if (key == "rank") rank_raw = value;
      else if (key == "data") data_raw = value;
      else if (key == "duration_s") dur_raw = value;
      else if (key == "error") error_raw = value;
      else extra.emplace_back(key, value);
    });
    const bool data_is_object = !data_raw.empty() && data_raw[0] == '{';
    std::string_view size_raw, exit_raw, tail_raw, round_raw, survivors_raw, total_raw;
    bool data_has_error = false, data_has_dur = false;
    if (data_is_object) {
      ForEachMember(data_raw, [&](std::string_view key, std::string_view value) {
        if (key == "duration_s") {
          if (dur_raw.empty()) dur_raw = value;
          data_has_dur = true;
        } else if (key == "error") {
          if (error_raw.empty()) error_raw = value;
          data_has_error = true;
        } else if (key == "size_bytes") {
          size_raw = value;
        } else if (key == "exit_code") {
          exit_raw = value;
        } else if (key == "output_tail") {
          tail_raw = value;
        } else if (key == "round_num") {
          round_raw = value;
        } else if (key == "survivors") {
          survivors_raw = value;
        } else if (key == "total_nodes") {
          total_raw = value;
        }
      });
    }

    auto kind_body = JsonStringBody(kind_raw);
    if (!kind_body || kind_body->empty()) {
      report.dropped.Add(DropReason::kMissingKind);
      continue;
    }
    if (time_raw.empty()) {
      report.dropped.Add(DropReason::kMissingTs);
      continue;
    }
    ++recognized;
    auto time_ns = ParseSecondsToNanos(NumberText(time_raw));
    if (!time_ns) {
      report.dropped.Add(DropReason::kBadTs);
      continue;
    }
    std::optional<int64_t> dur_ns;
    if (!dur_raw.empty() && dur_raw != "null") {
      dur_ns = ParseSecondsToNanos(NumberText(dur_raw));
      if (!dur_ns || *dur_ns < 0 || (*time_ns < 0 && *dur_ns > *time_ns - INT64_MIN)) {
        report.dropped.Add(DropReason::kBadDur);
        continue;
      }
    }
    last_time_ns = std::max(last_time_ns, *time_ns);
    const std::string_view kind = *kind_body;

    // The actor.
    Actor* actor = &scheduler;
    std::optional<int64_t> rank;
    if (!rank_raw.empty() && rank_raw != "null") {
      rank = ParseInt64(NumberText(rank_raw));
      if (!rank || *rank < 0) {
        if (report.warnings.size() < 20)
          report.warnings.push_back(absl::StrCat("line at byte ", offset, ": rank ",
                                                 AbslView(rank_raw.substr(0, 40)),
                                                 " is not a non-negative integer; put on the scheduler"));
        rank.reset();
      }
    }
    if (rank) {
      auto [it, inserted] = workers.try_emplace(*rank);
      if (inserted) {
        std::string token = absl::StrCat("\"worker ", *rank, "\"");
        it->second.pid = b->InternPid(b->arena().Copy(token));
        worker_order.push_back(*rank);
      }
      actor = &it->second;
    } else {
      scheduler_seen = true;
    }

    // Failure: an error value, or an exec that exited non-zero.
    std::string failure;
    if (IsFailure(error_raw)) {
      failure = absl::StrCat(AbslView(kind), " failed: ", PlainText(error_raw));
    } else if (kind == "exec" && !exit_raw.empty() && exit_raw != "null") {
      auto code = ParseInt64(NumberText(exit_raw));
      if (!code || *code != 0) {
        failure = absl::StrCat("exec exit_code ", PlainText(exit_raw));
        if (!tail_raw.empty() && tail_raw != "null") {
          std::string tail = LastLine(PlainText(tail_raw));
          if (!tail.empty()) absl::StrAppend(&failure, ": ", tail);
        }
      }
    }
    const bool failed = !failure.empty();
    if (failed && !actor->failed_at_ns) {
      actor->failed_at_ns = *time_ns;
      actor->failure = Clip(failure, 300);
    }

    // Args: `data`'s members, then the other top-level keys.
    args_.assign("{");
    if (data_is_object) {
      args_.append(data_raw.substr(1, data_raw.size() - 2));
    } else if (!data_raw.empty()) {
      args_.append("\"data\":");
      args_.append(data_raw);
    }
    auto add_arg = [&](std::string_view key, std::string_view value) {
      if (args_.size() > 1) args_.push_back(',');
      args_.push_back('"');
      args_.append(key);
      args_.append("\":");
      args_.append(value);
    };
    if (!error_raw.empty() && !data_has_error) add_arg("error", error_raw);
    if (!dur_raw.empty() && !data_has_dur) add_arg("duration_s", dur_raw);
    for (const auto& [key, value] : extra) add_arg(key, value);
    if (failed) add_arg("failed", "true");
    args_.push_back('}');

    Event e{};
    e.cat = cat;
    e.pid = actor->pid;
    e.tid = tid;
    e.flags = kHasPid | kHasTid | kHasTs;
    e.ts_ns = *time_ns;
    rest_.assign("\"args\":");
    rest_.append(args_);
    std::optional<int64_t> round_num;
    if (!round_raw.empty()) round_num = ParseInt64(NumberText(round_raw));

    if (kind == "round_start" || kind == "round_end") {
      std::string name = round_num ? absl::StrCat("round ", *round_num) : std::string("round");
      e.name = intern(name);
      e.ph = kind == "round_start" ? ph_b : ph_e;
      e.phase = kind == "round_start" ? 'B' : 'E';
      if (kind == "round_start") {
        // A round left open by a missing round_end ends where the next starts.
        if (round_open && current_round)
          rounds.push_back(StepSpan{*current_round, round_start_ns, *time_ns});
        current_round = round_num ? *round_num : (current_round ? *current_round + 1 : 1);
        round_start_ns = *time_ns;
        round_open = true;
      } else {
        int64_t r = round_num ? *round_num : current_round.value_or(0);
        StepSpan span{r, round_open && current_round == r ? round_start_ns : *time_ns, *time_ns};
        auto survivors = survivors_raw.empty() ? std::nullopt : ParseInt64(NumberText(survivors_raw));
        auto total = total_raw.empty() ? std::nullopt : ParseInt64(NumberText(total_raw));
        int64_t alive = 0;
        for (const auto& [k, w] : workers) alive += !w.failed_at_ns || *w.failed_at_ns > *time_ns;
        span.survivors = static_cast<int32_t>(survivors ? *survivors : alive);
        span.total = static_cast<int32_t>(total ? *total : static_cast<int64_t>(workers.size()));
        rounds.push_back(span);
        round_open = false;
        current_round = r;
      }
    } else if (dur_ns) {
      e.name = intern(kind);
      e.ph = ph_x;
      e.phase = 'X';
      e.ts_ns = *time_ns - *dur_ns;
      e.dur_ns = *dur_ns;
      e.flags |= kHasDur;
      if (failed) rest_.append(",\"cname\":\"terrible\"");
    } else {
      e.name = intern(kind);
      e.ph = ph_i;
      e.phase = 'i';
      rest_.append(",\"s\":\"t\"");
      if (failed) rest_.append(",\"cname\":\"terrible\"");
    }
    if (e.phase != 'B' && e.phase != 'E' && actor != &scheduler && current_round) {
      auto [it, inserted] = actor->rounds.try_emplace(*current_round);
      StepSpan& s = it->second;
      if (inserted) {
        s = StepSpan{*current_round, e.ts_ns, *time_ns};
      } else {
        s.start_ns = std::min(s.start_ns, e.ts_ns);
        s.end_ns = std::max(s.end_ns, *time_ns);
      }
    }
    if (!size_raw.empty() && (kind == "push" || kind == "pull")) {
      if (auto bytes = ParseInt64(NumberText(size_raw)); bytes && *bytes > 0)
        (kind == "push" ? b->timeline().bytes_pushed : b->timeline().bytes_pulled) +=
            static_cast<uint64_t>(*bytes);
    }
    std::string_view stored = b->rest_arena().Copy(rest_);
    e.rest = stored.data();
    e.rest_len = static_cast<uint32_t>(stored.size());
    b->AddEvent(e);
  }

  if (recognized == 0) {
    b->Reset();
    report = DecodeReport{};
    report.status = absl::InvalidArgumentError(
        "not a run event log: JSON Lines, but no line has both `time` and `kind`");
    return report;
  }
  if (round_open && current_round) {
    StepSpan span{*current_round, round_start_ns, last_time_ns};
    int64_t alive = 0;
    for (const auto& [k, w] : workers) alive += !w.failed_at_ns;
    span.survivors = static_cast<int32_t>(alive);
    span.total = static_cast<int32_t>(workers.size());
    rounds.push_back(span);
    report.warnings.push_back(absl::StrCat("round ", *current_round,
                                           " has no round_end; drawn up to the last event"));
  }

  // The timeline: the scheduler's rounds, then each worker in rank order.
  Timeline& tl = b->timeline();
  if (scheduler_seen || !rounds.empty()) {
    TrackTimeline t;
    t.name = "scheduler";
    t.steps = std::move(rounds);
    t.failed_at_ns = scheduler.failed_at_ns;
    t.failure = scheduler.failure;
    tl.tracks.push_back(std::move(t));
  }
  for (auto& [rank, w] : workers) {
    TrackTimeline t;
    t.name = absl::StrCat("worker ", rank);
    t.rank = rank;
    for (auto& [r, s] : w.rounds) t.steps.push_back(s);
    t.failed_at_ns = w.failed_at_ns;
    t.failure = std::move(w.failure);
    tl.tracks.push_back(std::move(t));
  }
  return report;
}

}  // namespace tracemill::formats
