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

// One line of the log, trimmed; `offset` is where it starts in the input.
struct LogLine {
  std::string_view text;
  uint64_t offset = 0;
  bool last = false;  // no newline after it
};

// Cuts the line at `*pos` (advancing `*pos` past it), without surrounding
// whitespace.
LogLine NextLine(std::string_view text, size_t* pos) {
  const size_t n = text.size();
  size_t nl = text.find('\n', *pos);
  LogLine line;
  line.last = nl == std::string_view::npos;
  size_t end = line.last ? n : nl;
  line.text = text.substr(*pos, end - *pos);
  line.offset = *pos;
  *pos = line.last ? n : nl + 1;
  line.text = line.text.substr(SkipWhitespace(line.text, 0));
  while (!line.text.empty() &&
         (line.text.back() == ' ' || line.text.back() == '\t' || line.text.back() == '\r'))
    line.text.remove_suffix(1);
  return line;
}

// LineFields: the members of one line's object the decoder reads, as raw
// JSON values (views into the sanitized line); empty when absent.
struct LineFields {
  std::string_view time, kind, rank, data, dur, error;
  std::vector<std::pair<std::string_view, std::string_view>> extra;  // other top-level members
  bool data_is_object = false;
  // Known members of `data`.
  std::string_view size, exit, tail, round, survivors, total;
  bool data_has_error = false, data_has_dur = false;  // `data` has its own
};

// Top-level members, then the known members of `data` (a top-level
// `duration_s` or `error` wins over `data`'s).
LineFields ReadLineFields(std::string_view obj) {
  LineFields f;
  ForEachCompactMember(obj, [&](std::string_view key, std::string_view value) {
    if (key == "time") f.time = value;
    else if (key == "kind") f.kind = value;
    else if (key == "rank") f.rank = value;
    else if (key == "data") f.data = value;
    else if (key == "duration_s") f.dur = value;
    else if (key == "error") f.error = value;
    else f.extra.emplace_back(key, value);
  });
  f.data_is_object = !f.data.empty() && f.data[0] == '{';
  if (!f.data_is_object) return f;
  ForEachCompactMember(f.data, [&](std::string_view key, std::string_view value) {
    if (key == "duration_s") {
      if (f.dur.empty()) f.dur = value;
      f.data_has_dur = true;
    } else if (key == "error") {
      if (f.error.empty()) f.error = value;
      f.data_has_error = true;
    } else if (key == "size_bytes") {
      f.size = value;
    } else if (key == "exit_code") {
      f.exit = value;
    } else if (key == "output_tail") {
      f.tail = value;
    } else if (key == "round_num") {
      f.round = value;
    } else if (key == "survivors") {
      f.survivors = value;
    } else if (key == "total_nodes") {
      f.total = value;
    }
  });
  return f;
}

std::optional<int64_t> OptionalInt(std::string_view raw) {
  return raw.empty() ? std::nullopt : ParseInt64(NumberText(raw));
}

// Action: a line's kind and times, checked.
struct Action {
  std::string_view kind;         // the JSON string body
  int64_t time_ns = 0;           // when it ended
  std::optional<int64_t> dur_ns;  // how long it lasted, if the line says
};

// Why an action failed ("push failed: ...", "exec exit_code 1: <tail>"), or
// "" if it did not: an error value, or an exec that exited non-zero.
std::string FailureOf(std::string_view kind, const LineFields& f) {
  std::string failure;
  if (IsFailure(f.error)) {
    failure = absl::StrCat(AbslView(kind), " failed: ", PlainText(f.error));
  } else if (kind == "exec" && !f.exit.empty() && f.exit != "null") {
    auto code = ParseInt64(NumberText(f.exit));
    if (!code || *code != 0) {
      failure = absl::StrCat("exec exit_code ", PlainText(f.exit));
      if (!f.tail.empty() && f.tail != "null") {
        std::string tail = LastLine(PlainText(f.tail));
        if (!tail.empty()) absl::StrAppend(&failure, ": ", tail);
      }
    }
  }
  return failure;
}

// Writes the event's args into `*args`: `data`'s members, then the other
// top-level keys, then `"failed": true` for a failed action.
void BuildArgs(const LineFields& f, bool failed, std::string* args) {
  // clear() + push_back, not assign("{"): GCC 12 warns -Wrestrict on the
  // inlined assign of a literal here (a false positive, GCC bug 105329).
  args->clear();
  args->push_back('{');
  if (f.data_is_object) {
    args->append(f.data.substr(1, f.data.size() - 2));
  } else if (!f.data.empty()) {
    args->append("\"data\":");
    args->append(f.data);
  }
  auto add_arg = [args](std::string_view key, std::string_view value) {
    if (args->size() > 1) args->push_back(',');
    args->push_back('"');
    args->append(key);
    args->append("\":");
    args->append(value);
  };
  if (!f.error.empty() && !f.data_has_error) add_arg("error", f.error);
  if (!f.dur.empty() && !f.data_has_dur) add_arg("duration_s", f.dur);
  for (const auto& [key, value] : f.extra) add_arg(key, value);
  if (failed) add_arg("failed", "true");
  args->push_back('}');
}

// Rounds: the scheduler's rounds as steps, from round_start / round_end.
class Rounds {
 public:
  // A round_start at `time_ns`. A round left open by a missing round_end
  // ends where the next starts.
  void Start(std::optional<int64_t> round_num, int64_t time_ns) {
    if (open_ && current_) spans_.push_back(StepSpan{*current_, start_ns_, time_ns});
    current_ = round_num ? *round_num : (current_ ? *current_ + 1 : 1);
    start_ns_ = time_ns;
    open_ = true;
  }

  // A round_end at `time_ns`: survivors and total from the line, else
  // counted from `workers` (alive: not failed by `time_ns`).
  void End(std::optional<int64_t> round_num, int64_t time_ns, std::optional<int64_t> survivors,
           std::optional<int64_t> total, const std::map<int64_t, Actor>& workers) {
    int64_t r = round_num ? *round_num : current_.value_or(0);
    StepSpan span{r, open_ && current_ == r ? start_ns_ : time_ns, time_ns};
    int64_t alive = 0;
    for (const auto& [k, w] : workers) alive += !w.failed_at_ns || *w.failed_at_ns > time_ns;
    span.survivors = static_cast<int32_t>(survivors ? *survivors : alive);
    span.total = static_cast<int32_t>(total ? *total : static_cast<int64_t>(workers.size()));
    spans_.push_back(span);
    open_ = false;
    current_ = r;
  }

  // At the end of the log: a round still open is drawn up to `last_time_ns`,
  // with a warning in `report`.
  void CloseOpen(int64_t last_time_ns, const std::map<int64_t, Actor>& workers, DecodeReport* report) {
    if (!open_ || !current_) return;
    StepSpan span{*current_, start_ns_, last_time_ns};
    int64_t alive = 0;
    for (const auto& [k, w] : workers) alive += !w.failed_at_ns;
    span.survivors = static_cast<int32_t>(alive);
    span.total = static_cast<int32_t>(workers.size());
    spans_.push_back(span);
    report->warnings.push_back(
        absl::StrCat("round ", *current_, " has no round_end; drawn up to the last event"));
  }

  // The round actions belong to now, if any.
  const std::optional<int64_t>& current() const { return current_; }
  std::vector<StepSpan>& spans() { return spans_; }

 private:
  std::vector<StepSpan> spans_;
  std::optional<int64_t> current_;
  int64_t start_ns_ = 0;
  bool open_ = false;
};

// LogDecoding: one Decode call's state, fed line by line.
class LogDecoding {
 public:
  // `obj`, `args`, `rest`: the decoder's scratch buffers.
  LogDecoding(TraceBuilder* b, std::string* obj, std::string* args, std::string* rest)
      : b_(b), obj_(*obj), args_(*args), rest_(*rest) {
    cat_ = Intern("run_event_log");
    tid_ = b->InternToken("0");
    ph_x_ = Intern("X");
    ph_b_ = Intern("B");
    ph_e_ = Intern("E");
    ph_i_ = Intern("i");
    scheduler_.pid = b->InternPid("\"scheduler\"");  // first: listed first
  }

  // Decodes one non-empty line into an event, or counts why not.
  void DecodeLine(const LogLine& line) {
    ++report_.events_read;
    if (!SanitizeLine(line)) return;
    const LineFields f = ReadLineFields(obj_);
    std::optional<Action> action = CheckAction(f);
    if (!action) return;
    Actor* actor = ActorOf(f.rank, line.offset);
    const std::string failure = FailureOf(action->kind, f);
    const bool failed = !failure.empty();
    if (failed && !actor->failed_at_ns) {
      actor->failed_at_ns = action->time_ns;
      actor->failure = Clip(failure, 300);
    }
    BuildArgs(f, failed, &args_);
    AddActionEvent(*action, f, failed, actor);
  }

  // The report, and the input's Timeline in the builder: the scheduler's
  // rounds, then each worker in rank order.
  DecodeReport Finish() {
    if (recognized_ == 0) {
      b_->Reset();
      DecodeReport report;
      report.status =
          absl::InvalidArgumentError("not a run event log: JSON Lines, but no line has both `time` and `kind`");
      return report;
    }
    rounds_.CloseOpen(last_time_ns_, workers_, &report_);
    Timeline& tl = b_->timeline();
    if (scheduler_seen_ || !rounds_.spans().empty()) {
      TrackTimeline t;
      t.name = "scheduler";
      t.steps = std::move(rounds_.spans());
      t.failed_at_ns = scheduler_.failed_at_ns;
      t.failure = scheduler_.failure;
      tl.tracks.push_back(std::move(t));
    }
    for (auto& [rank, w] : workers_) {
      TrackTimeline t;
      t.name = absl::StrCat("worker ", rank);
      t.rank = rank;
      for (auto& [r, s] : w.rounds) t.steps.push_back(s);
      t.failed_at_ns = w.failed_at_ns;
      t.failure = std::move(w.failure);
      tl.tracks.push_back(std::move(t));
    }
    return std::move(report_);
  }

 private:
  // Interned strings must outlive this call (the builder keeps views as map
  // keys until Finish), so each distinct one is copied into the arena once.
  uint32_t Intern(std::string_view body) {
    auto it = names_.find(std::string(body));
    if (it != names_.end()) return it->second;
    uint32_t id = b_->InternString(b_->arena().Copy(body));
    names_.emplace(std::string(body), id);
    return id;
  }

  void Error(absl::Status s, uint64_t offset) {
    if (report_.status.ok()) {
      report_.status = std::move(s);
      report_.error_offset = offset;
    }
  }

  // The line as compact JSON in `obj_`; false (counted) if it is not a
  // non-empty object.
  bool SanitizeLine(const LogLine& line) {
    obj_.clear();
    if (AppendSanitizedJson(line.text, &obj_) == SanitizeResult::kMalformed) {
      bool cut = line.last && SkipJsonValue(line.text, 0) == std::string_view::npos;
      report_.dropped.Add(cut ? DropReason::kTruncated : DropReason::kMalformed);
      Error(absl::DataLossError(cut ? "run event log: last line is cut off (truncated)"
                                    : "run event log: line is not valid JSON"),
            line.offset);
      return false;
    }
    if (obj_.empty() || obj_[0] != '{') {
      report_.dropped.Add(DropReason::kNotAnObject);
      Error(absl::DataLossError("run event log: line is not a JSON object"), line.offset);
      return false;
    }
    if (obj_ == "{}") {
      report_.dropped.Add(DropReason::kEmptyObject);
      return false;
    }
    return true;
  }

  // The line's kind and times; nullopt (counted) if one is missing or bad.
  std::optional<Action> CheckAction(const LineFields& f) {
    auto kind_body = JsonStringBody(f.kind);
    if (!kind_body || kind_body->empty()) {
      report_.dropped.Add(DropReason::kMissingKind);
      return std::nullopt;
    }
    if (f.time.empty()) {
      report_.dropped.Add(DropReason::kMissingTs);
      return std::nullopt;
    }
    ++recognized_;
    auto time_ns = ParseSecondsToNanos(NumberText(f.time));
    // Times live in +-kMaxAbsTimeNs, as every other format's (ts_text.h):
    // INT64_MAX wrapped under --relative-time.
    if (!time_ns || !InTimeRange(*time_ns)) {
      report_.dropped.Add(DropReason::kBadTs);
      return std::nullopt;
    }
    std::optional<int64_t> dur_ns;
    if (!f.dur.empty() && f.dur != "null") {
      dur_ns = ParseSecondsToNanos(NumberText(f.dur));
      if (!dur_ns || *dur_ns < 0 || !InTimeRange(*dur_ns) || !InTimeRange(*time_ns - *dur_ns)) {
        report_.dropped.Add(DropReason::kBadDur);
        return std::nullopt;
      }
    }
    last_time_ns_ = std::max(last_time_ns_, *time_ns);
    return Action{*kind_body, *time_ns, dur_ns};
  }

  // The worker of `rank_raw`, else the scheduler (a bad rank is warned about).
  Actor* ActorOf(std::string_view rank_raw, uint64_t offset) {
    std::optional<int64_t> rank;
    if (!rank_raw.empty() && rank_raw != "null") {
      rank = ParseInt64(NumberText(rank_raw));
      if (!rank || *rank < 0) {
        if (report_.warnings.size() < 20)
          report_.warnings.push_back(absl::StrCat("line at byte ", offset, ": rank ",
                                                  AbslView(rank_raw.substr(0, 40)),
                                                  " is not a non-negative integer; put on the scheduler"));
        rank.reset();
      }
    }
    if (!rank) {
      scheduler_seen_ = true;
      return &scheduler_;
    }
    auto [it, inserted] = workers_.try_emplace(*rank);
    if (inserted) {
      std::string token = absl::StrCat("\"worker ", *rank, "\"");
      it->second.pid = b_->InternPid(b_->arena().Copy(token));
    }
    return &it->second;
  }

  // The event of `a` (args already in `args_`): round_start / round_end ->
  // B / E on the scheduler, else X (with a duration) or an instant.
  void AddActionEvent(const Action& a, const LineFields& f, bool failed, Actor* actor) {
    Event e{};
    e.cat = cat_;
    e.pid = actor->pid;
    e.tid = tid_;
    e.flags = kHasPid | kHasTid | kHasTs;
    e.ts_ns = a.time_ns;
    rest_.assign("\"args\":");
    rest_.append(args_);
    const std::optional<int64_t> round_num = OptionalInt(f.round);
    if (a.kind == "round_start" || a.kind == "round_end") {
      const bool start = a.kind == "round_start";
      e.name = Intern(round_num ? absl::StrCat("round ", *round_num) : std::string("round"));
      e.ph = start ? ph_b_ : ph_e_;
      e.phase = start ? 'B' : 'E';
      if (start) rounds_.Start(round_num, a.time_ns);
      else rounds_.End(round_num, a.time_ns, OptionalInt(f.survivors), OptionalInt(f.total), workers_);
    } else if (a.dur_ns) {
      e.name = Intern(a.kind);
      e.ph = ph_x_;
      e.phase = 'X';
      e.ts_ns = a.time_ns - *a.dur_ns;
      e.dur_ns = *a.dur_ns;
      e.flags |= kHasDur;
      if (failed) rest_.append(",\"cname\":\"terrible\"");
    } else {
      e.name = Intern(a.kind);
      e.ph = ph_i_;
      e.phase = 'i';
      rest_.append(",\"s\":\"t\"");
      if (failed) rest_.append(",\"cname\":\"terrible\"");
    }
    if (e.phase != 'B' && e.phase != 'E' && actor != &scheduler_) NoteWorkerRound(actor, e.ts_ns, a.time_ns);
    CountBytesMoved(a.kind, f.size);
    std::string_view stored = b_->rest_arena().Copy(rest_);
    e.rest = stored.data();
    e.rest_len = static_cast<uint32_t>(stored.size());
    b_->AddEvent(e);
  }

  // Widens the worker's span of the current round to [start_ns, end_ns].
  void NoteWorkerRound(Actor* actor, int64_t start_ns, int64_t end_ns) {
    if (!rounds_.current()) return;
    const int64_t round = *rounds_.current();
    auto [it, inserted] = actor->rounds.try_emplace(round);
    StepSpan& s = it->second;
    if (inserted) {
      s = StepSpan{round, start_ns, end_ns};
    } else {
      s.start_ns = std::min(s.start_ns, start_ns);
      s.end_ns = std::max(s.end_ns, end_ns);
    }
  }

  // Sums a push's or pull's size_bytes into the input's Timeline.
  void CountBytesMoved(std::string_view kind, std::string_view size_raw) {
    if (size_raw.empty() || (kind != "push" && kind != "pull")) return;
    if (auto bytes = ParseInt64(NumberText(size_raw)); bytes && *bytes > 0)
      (kind == "push" ? b_->timeline().bytes_pushed : b_->timeline().bytes_pulled) += static_cast<uint64_t>(*bytes);
  }

  TraceBuilder* b_;
  std::string& obj_;
  std::string& args_;
  std::string& rest_;
  DecodeReport report_;
  absl::flat_hash_map<std::string, uint32_t> names_;
  uint32_t cat_ = 0, tid_ = 0, ph_x_ = 0, ph_b_ = 0, ph_e_ = 0, ph_i_ = 0;
  Actor scheduler_;
  bool scheduler_seen_ = false;
  std::map<int64_t, Actor> workers_;  // by rank
  Rounds rounds_;
  int64_t last_time_ns_ = 0;
  uint64_t recognized_ = 0;  // lines with both `time` and `kind`
};

}  // namespace

DecodeReport RunEventLogDecoder::Decode(std::string_view text, TraceBuilder* b) {
  LogDecoding decoding(b, &obj_, &args_, &rest_);
  size_t pos = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  while (pos < text.size()) {
    const LogLine line = NextLine(text, &pos);
    if (line.text.empty()) continue;
    // NUL padding at the end of a preallocated log is not a line.
    if (line.last && line.text.find_first_not_of('\0') == std::string_view::npos) break;
    decoding.DecodeLine(line);
  }
  return decoding.Finish();
}

}  // namespace tracemill::formats
