#include "formats/chrome/tef_decoder.h"

#include <simdjson.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <bit>
#include <cstring>
#include <deque>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "formats/common/json_text.h"
#include "formats/common/status_macros.h"
#include "formats/common/ts_text.h"

namespace tracemill::formats {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;
using simdjson::SUCCESS;

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// KeyIs: `key == lit`, compared in place (GCC unrolls this loop of a known
// length; string_view's == called memcmp at some of DecodeEvent's keys).
template <size_t N>
inline bool KeyIs(std::string_view key, const char (&lit)[N]) {
  if (key.size() != N - 1) return false;
  for (size_t i = 0; i + 1 < N; ++i)
    if (key[i] != lit[i]) return false;
  return true;
}

// SameText: a == b, in place for up to 16 bytes (two overlapping loads of
// 8, 4 or 1 bytes each side, never past either view): the names,
// categories, pids and tids compared against the last ones an event had
// called memcmp through string_view's == (318k calls, ~30 instructions
// each, on Kineto's ResNet-50 rank).
[[gnu::always_inline]] inline bool SameText(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  if (n > 16) return std::memcmp(a.data(), b.data(), n) == 0;
  auto load = [](const char* p, auto word) {
    std::memcpy(&word, p, sizeof(word));
    return word;
  };
  if (n >= 8)
    return load(a.data(), uint64_t{}) == load(b.data(), uint64_t{}) &&
           load(a.data() + n - 8, uint64_t{}) == load(b.data() + n - 8, uint64_t{});
  if (n >= 4)
    return load(a.data(), uint32_t{}) == load(b.data(), uint32_t{}) &&
           load(a.data() + n - 4, uint32_t{}) == load(b.data() + n - 4, uint32_t{});
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

// True if `raw` is one string token (`"..."`, closed by its last byte) or
// one literal or number.
bool ValidScalarToken(std::string_view raw, bool is_string) {
  if (!is_string) return IsJsonLiteralOrNumber(raw);
  return raw.size() >= 2 && JsonStringEnd(raw, 1) == raw.size() - 1;
}

// Raw JSON text of any value (objects and arrays consume the value).
//
// Always inlined: called out of line, it takes `v` by address, so GCC 12
// builds each field's value iterator in memory with scalar stores and copies
// it with one 16-byte load, a failed store-to-load forwarding (~15 cycles)
// twice per member: 44% of DecodeEvent's samples (perf annotate; -10% CPU
// on the 64-rank job at 2 threads, bench/RESULTS.md).
[[gnu::always_inline]] inline error_code RawValue(od::value& v, std::string_view* raw) {
  od::json_type t;
  if (auto e = v.type().get(t)) return e;
  if (t == od::json_type::object) {
    od::object o;
    if (auto e = v.get_object().get(o)) return e;
    return o.raw_json().get(*raw);
  }
  if (t == od::json_type::array) {
    od::array a;
    if (auto e = v.get_array().get(a)) return e;
    return a.raw_json().get(*raw);
  }
  *raw = TrimRight(v.raw_json_token());
  // On-Demand hands out a scalar's text up to the next structural character
  // without validating it, so a quote glued to a token (`1x"y"`, `"a"b`) is
  // one "value" to it, and a bare word (`"ph":tid`, `"ts":NaN`) passes. Such a
  // token is not JSON: fail, and the decoder starts over on the tolerant
  // path, which repairs bare words into strings the same way everywhere
  // (tef_decoder_array_fuzzer, tests/fuzz/regress/).
  if (!ValidScalarToken(*raw, t == od::json_type::string)) return simdjson::TAPE_ERROR;
  // A string must be consumed, not left for the iterator to skip: On-Demand's
  // skip takes a string followed by `:` for a key and skips to the end of the
  // enclosing container, so `[1, "r":1, {...}]` or `{"ph":"X":"Y", ...}`
  // would lose what follows silently instead of failing over to the tolerant
  // path (tef_decoder_array_fuzzer, tests/fuzz/regress/).
  if (t == od::json_type::string) {
    od::raw_json_string s;
    return v.get_raw_json_string().get(s);
  }
  return SUCCESS;
}

enum class Outcome { kEvent, kDropped, kSimdjsonError };

// KeySig: length, first and last byte of a key; distinct for the usual
// keys (ph, ts, dur, cat, pid, tid, name, args, id, bind_id), so the
// duplicate scan compares bytes only when a key may really repeat.
constexpr uint32_t KeySig(std::string_view key) {
  if (key.empty()) return 0;
  return static_cast<uint32_t>(key.size()) << 16 ^ static_cast<uint32_t>(static_cast<unsigned char>(key.front())) << 8 ^
         static_cast<unsigned char>(key.back());
}

// SigBit: a signature's bit in an event's 64-bit filter of the keys seen.
// The multiplier is one under which the keys of Kineto's, Chrome's and
// Perfetto's events take 20 distinct bits (checked below): with
// 0x9E3779B1, ph/pid and name/ts shared one, so every Kineto event compared
// its members' keys twice (~230 instructions an event, callgrind).
constexpr uint64_t SigBit(uint32_t sig) { return uint64_t{1} << ((sig * 0xC2CE6F45u) >> 26); }

constexpr bool UsualKeysTakeDistinctBits() {
  constexpr std::string_view kKeys[] = {"ph",  "cat", "name",  "pid",      "tid",      "ts",    "dur",
                                        "args", "id", "bind_id", "s",      "bp",       "id2",   "flow_in",
                                        "flow_out", "cname", "tts", "use_async_tts", "sf", "esf"};
  uint64_t seen = 0;
  for (std::string_view k : kKeys) {
    if (seen & SigBit(KeySig(k))) return false;
    seen |= SigBit(KeySig(k));
  }
  return true;
}
static_assert(UsualKeysTakeDistinctBits(), "pick a SigBit multiplier that keeps the usual keys apart");

// KeyKind: the keys the decoder reads (each once, when its member is
// added), so that interpreting a member is one switch, not a chain of
// compares; kOther: copied into the rest.
enum class KeyKind : uint8_t { kOther, kPh, kTs, kDur, kName, kCat, kPid, kTid, kId, kBindId, kId2, kArgs };
constexpr KeyKind KindOf(std::string_view k) {
  switch (k.size()) {
    case 2:
      if (k == "ph") return KeyKind::kPh;
      if (k == "ts") return KeyKind::kTs;
      if (k == "id") return KeyKind::kId;
      break;
    case 3:
      if (k == "dur") return KeyKind::kDur;
      if (k == "cat") return KeyKind::kCat;
      if (k == "pid") return KeyKind::kPid;
      if (k == "tid") return KeyKind::kTid;
      if (k == "id2") return KeyKind::kId2;
      break;
    case 4:
      if (k == "name") return KeyKind::kName;
      if (k == "args") return KeyKind::kArgs;
      break;
    case 7:
      if (k == "bind_id") return KeyKind::kBindId;
      break;
    default:
      break;
  }
  return KeyKind::kOther;
}
// IsCoreKind: a key Interpret reads (ph, ts, dur, name, cat, pid, tid, id,
// bind_id, id2), not only copies into the rest.
constexpr bool IsCoreKind(KeyKind k) { return k != KeyKind::kOther && k != KeyKind::kArgs; }

}  // namespace

struct TefDecoder::Impl {
  od::parser parser;       // the document, or one object on the tolerant path
  od::parser meta_parser;  // small side documents: M args, top-level values
  std::string rest;        // scratch: an event's `rest` members
  std::string side;        // scratch: a padded copy for meta_parser
  std::string check;       // scratch: CheckSkipped
  struct Member {
    std::string_view key;  // raw key body (escaped, no quotes)
    std::string_view raw;  // raw value text
    uint32_t sig;          // KeySig(key): equal keys have equal signatures
    KeyKind kind;          // KindOf(key)
  };
  std::vector<Member> members;  // scratch: the current event's members

  // The current event's rest, written in place at the rest arena's end
  // (Arena::Reserve) while its members need no repair: `rest_direct`, the
  // first `rest_len` bytes of it. After a member that needs repair the rest
  // is built in the `rest` string instead (`rest_on_scratch`) and copied.
  char* rest_direct = nullptr;
  size_t rest_len = 0;
  bool rest_on_scratch = false;

  // RestBound: room for the rest members from members[i] on, as written by
  // AppendCleanMember (a comma, the key with its quotes, a colon, the value:
  // never longer than in the input).
  size_t RestBound(size_t i) const {
    size_t n = 0;
    for (; i < members.size(); ++i) n += members[i].key.size() + members[i].raw.size() + 4;
    return n;
  }

  // AppendCleanMember writes `,"key":value` (no comma first) at the end of
  // the direct rest if the key and the value need no repair; false (and
  // nothing kept) otherwise. `key` is the raw key body inside the input,
  // its quotes around it.
  bool AppendCleanMember(std::string_view key, std::string_view raw, size_t* args_begin, size_t* args_end) {
    char* o = rest_direct + rest_len;
    if (rest_len) *o++ = ',';
    o = CopyCleanJsonString(std::string_view(key.data() - 1, key.size() + 2), o);
    if (!o) return false;
    *o++ = ':';
    const size_t value_begin = static_cast<size_t>(o - rest_direct);
    o = CopyCleanJsonValue(raw, o);
    if (!o) return false;
    rest_len = static_cast<size_t>(o - rest_direct);
    if (KeyIs(key, "args")) {
      *args_begin = value_begin;
      *args_end = rest_len;
    }
    return true;
  }
  absl::flat_hash_set<std::string_view> key_set;        // scratch: duplicate scan
  absl::flat_hash_map<std::string_view, size_t> last_index;  // scratch: last of each key
  bool warned_duplicate = false, warned_id2 = false;  // once per input
  std::deque<std::string> repaired;  // tolerant path: repaired objects (interned keys point here)

  // LastString: the last body interned for one key and its id. Consecutive
  // events often repeat their `ph`, `cat`, `pid` and `tid` (and a kernel's
  // name): equal bytes skip the hash lookup and give the id the interning
  // call would.
  // Cleared whenever the builder is (the ids would be stale).
  struct LastString {
    std::string_view body;
    uint32_t id = 0;
    bool valid = false;
    template <uint32_t (TraceBuilder::*kIntern)(std::string_view) = &TraceBuilder::InternString>
    uint32_t Intern(TraceBuilder* builder, std::string_view raw_body) {
      if (!valid || !SameText(body, raw_body)) {
        id = (builder->*kIntern)(raw_body);
        body = raw_body;
        valid = true;
      }
      return id;
    }
  };
  LastString last_ph, last_name, last_cat, last_pid, last_tid;  // pid, tid: raw tokens
  // recent_names: per slot (RecentSlot), the last string interned there, so
  // that a name that recurs among others (Kineto's operator names) is found
  // without the builder's hash map. Views into the input, as the builder's
  // own keys (TraceBuilder::InternString), forgotten with last_name.
  static constexpr size_t kRecentNames = 256;
  LastString recent_names[kRecentNames];
  // RecentSlot: from the body's first and last 8 bytes (4 or all below 8)
  // and its length. The length, last and middle byte it was made of before
  // (session 28) sent Kineto's operator and kernel names to the same slots:
  // 44,857 of the ResNet-50 rank's 132,645 lookups missed, now 1,515.
  static_assert(kRecentNames == 256);
  [[gnu::always_inline]] static size_t RecentSlot(std::string_view body) {
    const size_t n = body.size();
    const char* d = body.data();
    uint64_t first = 0, last = 0;
    if (n >= 8) {
      std::memcpy(&first, d, 8);
      std::memcpy(&last, d + n - 8, 8);
    } else if (n >= 4) {
      uint32_t a, z;
      std::memcpy(&a, d, 4);
      std::memcpy(&z, d + n - 4, 4);
      first = a;
      last = z;
    } else {
      for (size_t i = 0; i < n; ++i) first = first << 8 | static_cast<unsigned char>(d[i]);
    }
    const uint64_t h = (first ^ (last * 0x9E3779B97F4A7C15u) ^ n) * 0xC2B2AE3D27D4EB4Fu;
    return static_cast<size_t>(h >> 56);
  }
  // recent_pids, recent_tids: the same for the raw pid and tid tokens (their
  // own interning calls), 64 slots each: Kineto's events alternate between a
  // few threads and streams, and 29,133 tids and 18,204 pids of the
  // ResNet-50 rank's 75,718 events differed from the event before's.
  static constexpr size_t kRecentTokens = 64;
  LastString recent_pids[kRecentTokens], recent_tids[kRecentTokens];
  // InternRecent: `kIntern` (TraceBuilder::InternString for an event's ph,
  // name or cat; InternPid, InternToken for its pid, tid) through `last`
  // (that member's last string) and the `kSlots` of `recent`.
  template <uint32_t (TraceBuilder::*kIntern)(std::string_view), size_t kSlots>
  [[gnu::always_inline]] uint32_t InternRecent(LastString& last, std::string_view body, LastString (&recent)[kSlots]) {
    static_assert(kSlots <= kRecentNames && kRecentNames % kSlots == 0);
    if (last.valid && SameText(last.body, body)) return last.id;
    LastString& slot = recent[RecentSlot(body) / (kRecentNames / kSlots)];
    last.id = slot.Intern<kIntern>(b, body);
    last.body = body;
    last.valid = true;
    return last.id;
  }
  [[gnu::always_inline]] uint32_t InternRecent(LastString& last, std::string_view body) {
    return InternRecent<&TraceBuilder::InternString>(last, body, recent_names);
  }
  void ForgetLastStrings() {
    last_ph = last_name = last_cat = last_pid = last_tid = LastString{};
    std::fill(std::begin(recent_names), std::end(recent_names), LastString{});
    std::fill(std::begin(recent_pids), std::end(recent_pids), LastString{});
    std::fill(std::begin(recent_tids), std::end(recent_tids), LastString{});
    newest_string = 0;
    // Runs hold ids; a position's runs fill its ways from the first again.
    std::fill(std::begin(run_count), std::end(run_count), uint8_t{0});
    std::fill(std::begin(run_victim), std::end(run_victim), uint8_t{0});
  }
  // Ids are handed out in order, so an id above every one seen is a string
  // interned just now: NulsKept looks at each name and category once.
  uint32_t newest_string = 0;
  void NulsKeptIfNew(uint32_t id, std::string_view raw) {
    if (id <= newest_string) return;
    newest_string = id;
    NulsKept(raw);
  }

  TraceBuilder* b = nullptr;
  DecodeReport* report = nullptr;
  const char* base = nullptr;  // start of the input, for offsets
  bool fast = false;           // on the fast path (On-Demand over the whole input)
  bool warned_repair = false;  // one warning per input for repaired values
  size_t logger_warnings = 0;  // warnings that are Kineto's logger entries, not ours

  // NulsKept: on the fast path, if `text` (in the input) holds a run of
  // kHoleNuls NULs, reports it once per input: a hole whose text resumed with
  // its quotes in step closes as valid JSON, and the event, text from two
  // events around NULs, is kept; said, not silent (exit 3). Called where a
  // value needed repair and on each distinct name and category, so clean
  // input pays next to nothing.
  void NulsKept(std::string_view text) {
    if (!fast || nuls_kept || text.size() < kHoleNuls) return;
    const size_t at = FindHole(text, 0);
    if (at == text.size()) return;
    nuls_kept = true;
    ReportNulsKept(static_cast<uint64_t>(text.data() + at - base), NulRun(text, at));
  }
  void ReportNulsKept(uint64_t offset, size_t run) {
    Error(absl::DataLossError(absl::StrCat(run, " NUL bytes inside an event (a hole in the file?); the event "
                                           "is kept with them as text")),
          offset);
  }
  bool nuls_kept = false;  // NulsKept reported (once per input)

  void Warn(std::string msg) {
    if (report->warnings.size() < 20) report->warnings.push_back(std::move(msg));
  }
  void Error(absl::Status s, uint64_t offset) {
    if (report->status.ok()) {
      report->status = std::move(s);
      report->error_offset = offset;
    }
  }

  // Parses `json` (copied with padding) with meta_parser.
  simdjson::simdjson_result<od::document> ParseSide(std::string_view json) {
    side.assign(json);
    side.reserve(side.size() + simdjson::SIMDJSON_PADDING);
    return meta_parser.iterate(side.data(), side.size(), side.capacity());
  }

  // Process metadata (`process_name`, ...): read args into the process table.
  void ReadProcessMeta(std::string_view name, std::string_view args_json, uint32_t pid) {
    if (args_json.empty()) return;
    od::document doc;
    if (ParseSide(args_json).get(doc)) return;
    od::object o;
    if (doc.get_object().get(o)) return;
    ProcessInfo& p = b->process(pid);
    for (auto field : o) {
      od::raw_json_string key;
      od::value v;
      if (field.key().get(key) || field.value().get(v)) return;
      std::string_view raw;
      if (RawValue(v, &raw)) return;
      if (name == "process_name" && key == "name") {
        if (auto body = JsonStringBody(raw)) {
          p.name = b->arena().Copy(*body);
          p.has_name = true;
        }
      } else if (name == "process_sort_index" && key == "sort_index") {
        if (auto v64 = ParseInt64(NumberText(raw))) {
          p.sort_index = *v64;
          p.has_sort_index = true;
        }
      } else if (name == "process_labels" && key == "labels") {
        if (auto body = JsonStringBody(raw)) p.labels = b->arena().Copy(*body);
      }
    }
  }

  // Decodes one event object. `offset` is its position in the input.
  //
  // Members are collected first, then interpreted: a key given twice in one
  // event keeps its last value, as JSON.parse and Python's json do, so the
  // output never repeats a key (tests/malformed/duplicate_keys.json).
  Outcome DecodeEvent(od::object obj, uint64_t offset, error_code* err) {
    members.clear();
    bool duplicates = false;
    uint64_t sig_bits = 0;  // duplicate scan: KeySig filter of the members so far
    for (auto field : obj) {
      od::raw_json_string key;
      od::value v;
      if ((*err = field.key().get(key))) return Outcome::kSimdjsonError;
      if ((*err = field.value().get(v))) return Outcome::kSimdjsonError;
      std::string_view raw;
      if ((*err = RawValue(v, &raw))) return Outcome::kSimdjsonError;
      const char* k = key.raw();  // raw() points after the opening quote
      size_t key_len = 0;
      while (k[key_len] != '"') key_len += k[key_len] == '\\' ? 2 : 1;
      std::string_view key_body(k, key_len);
      // `ph`, `ts` and `dur` are read, never copied through the sanitizer, so
      // a container there must be checked like any skipped one
      // (`"ts":{{...}}`, tef_decoder_array_fuzzer, tests/fuzz/regress/).
      if (fast && !raw.empty() && (raw[0] == '{' || raw[0] == '[') && IsReadKey(key_body)) {
        if ((*err = CheckSkipped(raw))) return Outcome::kSimdjsonError;
      }
      AddMember(key_body, KindOf(key_body), raw, &sig_bits, &duplicates);
    }
    return Interpret(offset, duplicates, err);
  }

  // IsReadKey: `ph`, `ts` or `dur`, whose values are read, not copied.
  static bool IsReadKey(std::string_view key) { return KeyIs(key, "ph") || KeyIs(key, "ts") || KeyIs(key, "dur"); }

  // AddMember appends one member of the current event (`kind`: KindOf(key)) to `members` and
  // sets `*duplicates` if its key is there already. Linear over the few
  // members of a usual event, a hash set past 16 (an object with 10^6 keys
  // must not take 10^12 steps).
  [[gnu::always_inline]] void AddMember(std::string_view key_body, KeyKind kind, std::string_view raw,
                                         uint64_t* sig_bits, bool* duplicates) {
    AddMember(key_body, kind, KeySig(key_body), raw, sig_bits, duplicates);
  }
  // ... with the key's signature (KeySig) known.
  [[gnu::always_inline]] void AddMember(std::string_view key_body, KeyKind kind, uint32_t sig, std::string_view raw,
                                         uint64_t* sig_bits, bool* duplicates) {
    // One bit per signature (64-bit filter): the scan runs only when the
    // bit was set already, i.e. when the key may repeat.
    const uint64_t sig_bit = SigBit(sig);
    if (members.size() < 16) {
      if (*sig_bits & sig_bit) {
        for (const Member& m : members) *duplicates |= m.sig == sig && m.key == key_body;
      }
      *sig_bits |= sig_bit;
    } else {
      if (members.size() == 16) {
        key_set.clear();
        for (const Member& m : members) key_set.insert(m.key);
      }
      *duplicates |= !key_set.insert(key_body).second;
    }
    members.push_back({key_body, raw, sig, kind});
  }

  // Id2Global: an `id2` value holding "global" ({"global": x}) read into
  // `e` (*handled then true); kSimdjsonError on the fast path when the value
  // is malformed.
  Outcome Id2Global(std::string_view raw, uint64_t offset, Event* ep, bool* handled, error_code* err) {
    Event& e = *ep;
    // {"global": x}: process-independent, so made unique per input. The
    // spec gives id2 either `local` or `global`; with both, global is
    // kept (the wider scope) and the input warned about.
    // The side parser reads only `global`: check the whole value first,
    // as the fast path's skip did not (`{"global": ""10x}`,
    // tef_decoder_array_fuzzer in CI, tests/fuzz/regress/).
    od::document doc;
    od::object o;
    std::string_view g;
    *handled = false;
    check.clear();
    if (AppendSanitizedJson(raw, &check) == SanitizeResult::kMalformed) {
      if (fast) {
        *err = simdjson::TAPE_ERROR;
        return Outcome::kSimdjsonError;
      }
    } else if (!ParseSide(check).get(doc) && !doc.get_object().get(o)) {
      od::value gv;
      if (!o.find_field_unordered("global").get(gv) && !RawValue(gv, &g) && !g.empty() &&
          g[0] != '{' && g[0] != '[') {
        // `g` points into the side buffer, which the next side document
        // overwrites: intern a copy (the `e` of an async pair got a new
        // id after any process_name in between).
        e.id2 = b->InternIdCopy(g);
        e.flags |= kHasId2Global;
        *handled = true;
        if (raw.find("\"local\"") != std::string_view::npos && !warned_id2) {
          warned_id2 = true;
          Warn(absl::StrCat("id2 with both local and global in the event at byte ", offset,
                            " (and maybe others): global kept, local dropped"));
        }
      }
    }
    return Outcome::kEvent;
  }

  // ScannedTime: a ts or dur value the scan path parsed as it found it
  // (ScanMicrosToNanos), for the token at `at`; Interpret takes it instead of
  // parsing the text again (Micros).
  struct ScannedTime {
    const char* at = nullptr;
    int64_t ns = 0;
  };
  ScannedTime scanned_ts, scanned_dur;

  // Micros: a ts or dur member's value in ns (ParseMicrosToNanos), the
  // scan path's parse where it made one for this very token.
  static std::optional<int64_t> Micros(std::string_view raw, const ScannedTime& scanned) {
    if (raw.data() == scanned.at) return scanned.ns;
    return ParseMicrosToNanos(NumberText(raw));
  }

  // CoreSeen: what an event's core members gave besides the Event's own
  // fields (TakeCore), for Finish: a usable ph, the ts and dur text.
  struct CoreSeen {
    bool have_ph = false;
    std::string_view ts_text, dur_text;
  };
  // Take: what TakeCore did with a member.
  enum class Take : uint8_t { kTaken, kRest, kError };

  // TakeCore reads member `raw` of a key of `kind` into `*ep` and `*seen`
  // (ph, name and cat interned, pid, tid, id, bind_id and a global id2
  // interned, ts and dur text kept for Finish): kTaken. kRest when the key
  // is not a core one or its value not of the kind read (the member then
  // belongs in the event's rest); kError (`*err` set) when the fast path
  // must start over on the tolerant one (a malformed id2).
  [[gnu::always_inline]] Take TakeCore(KeyKind kind, std::string_view raw, uint64_t offset, Event* ep,
                                        CoreSeen* seen, error_code* err) {
    Event& e = *ep;
    bool handled = true;
    // Whether the value is a scalar token: looked at by the pid, tid, id
    // and bind_id cases only (not worked out for every member).
    auto scalar = [raw] { return !raw.empty() && raw[0] != '{' && raw[0] != '['; };
    switch (kind) {
      case KeyKind::kPh:
        if (auto body = JsonStringBody(raw); body && !body->empty()) {
          e.ph = InternRecent(last_ph, *body);
          e.phase = (*body)[0];
          seen->have_ph = true;
        }
        break;
      case KeyKind::kTs:
        seen->ts_text = raw;
        break;
      case KeyKind::kDur:
        seen->dur_text = raw;
        break;
      case KeyKind::kName:
        if (auto body = JsonStringBody(raw)) {
          e.name = InternRecent(last_name, *body);
          NulsKeptIfNew(e.name, raw);
        } else {
          handled = false;
        }
        break;
      case KeyKind::kCat:
        if (auto body = JsonStringBody(raw)) {
          e.cat = InternRecent(last_cat, *body);
          NulsKeptIfNew(e.cat, raw);
        } else {
          handled = false;
        }
        break;
      // pid, tid, id, bind_id: a scalar token (a container goes to the rest).
      case KeyKind::kPid:
        handled = scalar();
        if (handled) {
          e.pid = InternRecent<&TraceBuilder::InternPid>(last_pid, raw, recent_pids);
          e.flags |= kHasPid;
        }
        break;
      case KeyKind::kTid:
        handled = scalar();
        if (handled) {
          e.tid = InternRecent<&TraceBuilder::InternToken>(last_tid, raw, recent_tids);
          e.flags |= kHasTid;
        }
        break;
      case KeyKind::kId:
        handled = scalar();
        if (handled) { e.id = b->InternId(raw); e.flags |= kHasId; }
        break;
      case KeyKind::kBindId:
        handled = scalar();
        if (handled) { e.bind_id = b->InternId(raw); e.flags |= kHasBindId; }
        break;
      case KeyKind::kId2:
        if (raw.find("\"global\"") == std::string_view::npos) {
          handled = false;
          break;
        }
        if (Id2Global(raw, offset, &e, &handled, err) == Outcome::kSimdjsonError) return Take::kError;
        break;
      default:
        handled = false;
        break;
    }
    return handled ? Take::kTaken : Take::kRest;
  }

  // Finish completes event `e` once its members are read (Interpret's or
  // the scan path's): dropped (and counted) without members (`any_field`
  // false), without a ph, or with a bad or missing ts or bad dur; else its
  // rest kept (the direct one, `rest_len` bytes, or the scratch `rest`),
  // process metadata read from its args ([args_begin, args_end) of the
  // rest) and the event added to the builder.
  [[gnu::always_inline]] Outcome Finish(Event& e, const CoreSeen& seen, bool any_field, size_t args_begin,
                                         size_t args_end) {
    bool ts_bad = false, dur_bad = false;
    if (!any_field) {
      report->dropped.Add(DropReason::kEmptyObject);
      return Outcome::kDropped;
    }
    if (!seen.have_ph) {
      report->dropped.Add(DropReason::kMissingPh);
      return Outcome::kDropped;
    }
    if (!seen.ts_text.empty()) {
      if (auto ns = Micros(seen.ts_text, scanned_ts); ns && InTimeRange(*ns)) {
        e.ts_ns = *ns;
        e.flags |= kHasTs;
      } else {
        ts_bad = true;
      }
    }
    if (!seen.dur_text.empty()) {
      auto ns = Micros(seen.dur_text, scanned_dur);
      if (ns && *ns >= 0 && InTimeRange(*ns)) {
        e.dur_ns = *ns;
        e.flags |= kHasDur;
      } else {
        dur_bad = true;
      }
    }
    if (e.phase != 'M') {
      if (ts_bad) {
        report->dropped.Add(DropReason::kBadTs);
        return Outcome::kDropped;
      }
      if (!(e.flags & kHasTs)) {
        report->dropped.Add(DropReason::kMissingTs);
        return Outcome::kDropped;
      }
      if (dur_bad) {
        report->dropped.Add(DropReason::kBadDur);
        return Outcome::kDropped;
      }
    }
    std::string_view stored;
    if (rest_on_scratch) stored = b->rest_arena().Copy(rest);
    else if (rest_len) stored = b->rest_arena().Keep(rest_len);
    if (!stored.empty()) {
      e.rest = stored.data();
      e.rest_len = static_cast<uint32_t>(stored.size());
    }
    if (e.phase == 'M' && (e.flags & kHasPid) && args_end > args_begin) {
      std::string_view name = b->InternedString(e.name);
      if (name == "process_name" || name == "process_sort_index" || name == "process_labels") {
        ReadProcessMeta(name, stored.substr(args_begin, args_end - args_begin), e.pid);
      }
    }
    b->AddEvent(e);
    return Outcome::kEvent;
  }

  // Interpret makes the event of `members` (DecodeEvent's or the scan
  // path's) and adds it to the builder. kSimdjsonError (in `*err`) when the
  // fast path must start over on the tolerant one, or the scan path over on
  // the fast one.
  Outcome Interpret(uint64_t offset, bool duplicates, error_code* err) {
    Event e{};
    rest.clear();
    rest_direct = prebuilt.area;
    rest_len = prebuilt.len;
    rest_on_scratch = false;
    size_t args_begin = prebuilt.args_begin, args_end = prebuilt.args_end;
    CoreSeen seen;
    if (duplicates) {  // the last occurrence of each key
      last_index.clear();
      for (size_t i = 0; i < members.size(); ++i) last_index[members[i].key] = i;
    }
    const bool any_field = !members.empty();
    for (size_t i = 0; i < members.size(); ++i) {
      const std::string_view key = members[i].key;
      const std::string_view raw = members[i].raw;
      if (duplicates) {
        if (last_index[key] != i) {
          // Skipped, so never sanitized: check it like any skipped container
          // (`{"args":{5,"args":1}]`, tef_decoder_array_fuzzer round 5).
          if (fast) {
            if ((*err = CheckSkipped(raw))) return Outcome::kSimdjsonError;
          }
          if (!warned_duplicate) {
            warned_duplicate = true;
            Warn(absl::StrCat("duplicate key \"", AbslView(key.substr(0, 40)), "\" in the event at byte ",
                              offset, " (and maybe others): the last value is kept, as JSON.parse does"));
          }
          continue;
        }
      }
      switch (TakeCore(members[i].kind, raw, offset, &e, &seen, err)) {
        case Take::kTaken:
          continue;
        case Take::kError:
          return Outcome::kSimdjsonError;
        case Take::kRest:
          break;
      }
      if (prebuilt.area) {  // the scan path wrote every member of a non-core key
        if (!IsCoreKind(members[i].kind)) continue;
        *err = simdjson::TAPE_ERROR;  // a core key's value kept in the rest: the fast path's
        return Outcome::kSimdjsonError;
      }
      // A `rest` member: `"key":value`. Written straight into the rest arena
      // while every member is clean, else repaired in the scratch string.
      if (!rest_on_scratch) {
        if (!rest_direct) rest_direct = b->rest_arena().Reserve(RestBound(i));
        if (AppendCleanMember(key, raw, &args_begin, &args_end)) continue;
        if (scanning) {  // the fast path repairs it (and warns) as before
          *err = simdjson::TAPE_ERROR;
          return Outcome::kSimdjsonError;
        }
        rest.assign(rest_direct, rest_len);
        rest_on_scratch = true;
      }
      NulsKept(key);
      NulsKept(raw);
      if (!rest.empty()) rest.push_back(',');
      rest.push_back('"');
      AppendSanitizedStringBody(key, &rest);
      rest.append("\":");
      bool is_args = KeyIs(key, "args");
      if (is_args) args_begin = rest.size();
      SanitizeResult sr = AppendSanitizedJson(raw, &rest);
      if (sr == SanitizeResult::kRepaired && !warned_repair) {
        warned_repair = true;
        Warn(absl::StrCat("repaired a value strict JSON parsers reject (bare word such as NaN, invalid "
                          "escape or UTF-8, control character or trailing comma) in the event at byte ",
                          offset, "; later repairs are not listed"));
      }
      if (sr == SanitizeResult::kMalformed) {
        // On the fast path a malformed value means On-Demand skipped over
        // broken structure and may be lost in it: start over on the tolerant
        // path. (The tolerant path repaired the whole object already.)
        if (fast) {
          *err = simdjson::TAPE_ERROR;
          return Outcome::kSimdjsonError;
        }
        report->dropped.Add(DropReason::kMalformed);
        Error(absl::DataLossError(absl::StrCat("malformed value of \"", AbslView(key), "\"")), offset);
        return Outcome::kDropped;
      }
      if (is_args) args_end = rest.size();
    }
    return Finish(e, seen, any_field, args_begin, args_end);
  }

  // A top-level member other than traceEvents: kept for the output's
  // metadata; Kineto's known keys are read. Returns false if the value is
  // malformed (then it is ignored with a warning).
  bool TopLevel(std::string_view key_body, std::string_view raw_value) {
    std::string key, value;
    AppendSanitizedStringBody(key_body, &key);
    if (AppendSanitizedJson(raw_value, &value) == SanitizeResult::kMalformed) {
      Warn(absl::StrCat("top-level key \"", key, "\" holds malformed JSON; ignored"));
      return false;
    }
    InputMetadata& m = b->meta();
    od::document doc;
    if (key == "distributedInfo") {
      od::object o;
      if (!ParseSide(value).get(doc) && !doc.get_object().get(o)) {
        for (auto field : o) {
          od::raw_json_string k;
          od::value v;
          std::string_view raw;
          if (field.key().get(k) || field.value().get(v) || RawValue(v, &raw)) break;
          if (k == "rank") {
            // The first rank wins, as in the pre-scan of the head (which
            // stops at traceEvents): a second distributedInfo after the
            // events cannot move an input to another output than planned.
            auto r = ParseInt64(NumberText(raw));
            if (!r || *r < 0) continue;
            if (!m.rank) m.rank = *r;
            else if (*m.rank != *r)
              Warn(absl::StrCat("distributedInfo.rank is given again (", *r, "); the first (", *m.rank,
                                ") is kept"));
          } else if (k == "world_size") {
            if (auto r = ParseInt64(NumberText(raw)); r && *r > 0) m.world_size = *r;
          } else if (k == "backend") {
            if (auto body = JsonStringBody(raw)) m.backend = UnescapeJsonStringBody(*body);
          }
        }
      }
    } else if (key == "deviceProperties") {
      od::array a;
      size_t n = 0;
      if (!ParseSide(value).get(doc) && !doc.get_array().get(a) && !a.count_elements().get(n))
        m.device_count = static_cast<int>(n);
    } else if (key == "baseTimeNanoseconds") {
      if (auto v = ParseInt64(NumberText(value)); v && InTimeRange(*v)) {
        m.base_time_ns = *v;
        m.has_base_time = true;
      } else {
        Warn("baseTimeNanoseconds is not an integer within +-2^62 ns; ignored");
      }
    } else if (key == "displayTimeUnit") {
      if (auto body = JsonStringBody(value)) m.display_time_unit = UnescapeJsonStringBody(*body);
    } else if (key == "ERROR" || key == "WARNING") {
      LoggerEntries(key, value);
    }
    m.top_level.emplace_back(std::move(key), std::move(value));
    return true;
  }

  // Kineto's logger buckets (`"ERROR": ["...", ...]`, `"WARNING": [...]`,
  // after traceEvents; ChromeTraceLogger::finalizeTrace wrote the non-empty
  // ones in builds without glog until pytorch/kineto 9612d061, July 2026:
  // tests/data/kineto-2026/PROVENANCE.md): each entry becomes a warning of
  // the input, the first kMaxLoggerWarnings of each bucket and a count of
  // the rest (every entry stays in otherData). `value` is sanitized JSON.
  void LoggerEntries(std::string_view key, std::string_view value) {
    if (value.empty() || value[0] != '[') return;
    constexpr int kMaxLoggerWarnings = 5;
    int n = 0;
    size_t pos = 1;
    while (pos < value.size() && value[pos] != ']') {
      const size_t end = SkipJsonValue(value, pos);
      if (end == std::string_view::npos) return;
      std::string_view item = value.substr(pos, end - pos);
      pos = end + (end < value.size() && value[end] == ',');
      ++n;
      if (n > kMaxLoggerWarnings) continue;
      std::string text = JsonStringBody(item) ? UnescapeJsonStringBody(*JsonStringBody(item)) : std::string(item);
      if (text.size() > 200) {
        size_t cut = 200;
        while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
        text.resize(cut);
        text.append("...");
      }
      Warn(absl::StrCat("Kineto logged ", AbslView(key), ": ", text));
      ++logger_warnings;
    }
    if (n > kMaxLoggerWarnings) {
      Warn(absl::StrCat("Kineto logged ", n - kMaxLoggerWarnings, " more ", AbslView(key),
                        " entries (all kept in the output's otherData)"));
      ++logger_warnings;
    }
  }

  // Fast path: a container value On-Demand skipped without looking inside
  // must be well formed, or the iterator may have lost its place (brackets
  // are only counted, `[1}` closes). Returns TAPE_ERROR to start over on the
  // tolerant path (tef_decoder_object_fuzzer, tests/fuzz/regress/).
  error_code CheckSkipped(std::string_view raw) {
    if (raw.empty() || (raw[0] != '[' && raw[0] != '{')) return SUCCESS;
    check.clear();
    return AppendSanitizedJson(raw, &check) == SanitizeResult::kMalformed ? simdjson::TAPE_ERROR
                                                                          : SUCCESS;
  }

  // ---------------- scan path ----------------
  //
  // The common case without simdjson: a document of strictly valid JSON
  // (either form) whose events are objects with distinct keys and values
  // that need no repair (Kineto's files, Chrome's and Horovod's arrays).
  // Scan finds each member's key and value text with byte loops (the string
  // scans a block at a time) and hands them to Interpret, the same members
  // On-Demand gives DecodeEvent, so the events and the report are the fast
  // path's. It saves simdjson's structural pass over the whole input and
  // On-Demand's walk over each member; a container value is copied and
  // checked as it is found (args are walked once). At anything else
  // (duplicate keys, a value to repair, an element that is not an object,
  // trailing text) it declines: false, and the caller discards what it
  // built and runs Fast. Being strict, it never accepts a document Fast
  // would refuse.
  bool scanning = false;      // on the scan path: Interpret declines instead of repairing
  bool scan_enabled = true;   // TefDecoder::set_scan_path
  bool scanned = false;       // the last input was decoded by Scan

  // PlainEnd: the first byte at or after `i` that a JSON string cannot hold
  // as is (JsonStringSpecial), inline for the short strings of an event's
  // keys and values: 16 bytes a step, reading into the input's padding
  // (the scan path runs on padded inputs only); past the end: json.size().
  static size_t PlainEnd(std::string_view json, size_t i) {
#if defined(__SSE2__)
    for (; i < json.size(); i += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(json.data() + i));
      const __m128i special = _mm_or_si128(
          _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
          _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
      if (const unsigned m = static_cast<unsigned>(_mm_movemask_epi8(special)))
        return std::min(json.size(), i + static_cast<size_t>(__builtin_ctz(m)));
    }
    return json.size();
#else
    return JsonStringSpecial(json, i);
#endif
  }

  // Space: SkipWhitespace, inline.
  static size_t Space(std::string_view json, size_t i) {
    while (i < json.size() && IsJsonWhitespace(static_cast<unsigned char>(json[i]))) ++i;
    return i;
  }

  // ScanString: the end (after the closing quote) of the clean JSON string
  // at json[pos] (its opening quote); npos if it is not one.
  static size_t ScanString(std::string_view json, size_t pos) {
    size_t end = PlainEnd(json, pos + 1);
    if (end < json.size() && json[end] == '"') return end + 1;  // plain
    end = JsonStringEnd(json, pos + 1);
    if (end >= json.size() || !IsCleanJsonString(json.substr(pos, end + 1 - pos))) return std::string_view::npos;
    return end + 1;
  }

  // ScanContainerEnd: the end of the object or array at json[pos], found
  // by its brackets and strings; npos if the input ends first. Its content
  // is checked by whoever copies it.
  static size_t ScanContainerEnd(std::string_view json, size_t pos) {
    const size_t n = json.size();
    size_t depth = 0;
    for (size_t i = pos; i < n; ++i) {
      const char c = json[i];
      if (c == '"') {
        i = JsonStringEnd(json, i + 1);
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      }
    }
    return std::string_view::npos;
  }

  // ScanValue: the end of the value at json[pos]: a clean string, a
  // container (unchecked: see ScanContainerEnd) or a literal or number;
  // npos if it is none of these.
  static size_t ScanValue(std::string_view json, size_t pos) {
    const size_t n = json.size();
    if (pos >= n) return std::string_view::npos;
    const char c = json[pos];
    if (c == '"') return ScanString(json, pos);
    if (c == '{' || c == '[') return ScanContainerEnd(json, pos);
    return ScanScalar(json, pos);
  }

  // ScanScalar: the end of the literal or number (RFC 8259's grammar) at
  // json[pos]; npos if there is none. The digits are found 8 bytes a step
  // (JsonDigitsEnd: the scan path's inputs are padded). What follows is the caller's to
  // check (`1x` is `1`, then `x` where `,` or `}` must be: declined).
  static size_t ScanScalar(std::string_view json, size_t pos) {
    constexpr size_t npos = std::string_view::npos;
    const size_t n = json.size();
    auto word = [&](std::string_view w) { return json.substr(pos, w.size()) == w ? pos + w.size() : npos; };
    auto digit = [&](size_t i) { return i < n && json[i] >= '0' && json[i] <= '9'; };
    switch (json[pos]) {
      case 't': return word("true");
      case 'f': return word("false");
      case 'n': return word("null");
      default: break;
    }
    size_t i = pos + (json[pos] == '-');
    if (!digit(i)) return npos;
    i = json[i] == '0' ? i + 1 : JsonDigitsEnd(json, i);
    if (i < n && json[i] == '.') {
      if (!digit(++i)) return npos;
      i = JsonDigitsEnd(json, i);
    }
    if (i < n && (json[i] == 'e' || json[i] == 'E')) {
      ++i;
      if (i < n && (json[i] == '+' || json[i] == '-')) ++i;
      if (!digit(i)) return npos;
      i = JsonDigitsEnd(json, i);
    }
    return i;
  }

  // ScanKey: at json[*pos] a clean key string, `:` and the start of its
  // value; `*key` its body, `*pos` the value's first byte. False if not.
  static bool ScanKey(std::string_view json, size_t* pos, std::string_view* key) {
    if (*pos >= json.size() || json[*pos] != '"') return false;
    const size_t end = ScanString(json, *pos);
    if (end == std::string_view::npos) return false;
    *key = json.substr(*pos + 1, end - *pos - 2);
    size_t p = Space(json, end);
    if (p >= json.size() || json[p] != ':') return false;
    *pos = Space(json, p + 1);
    return true;
  }

  // kRestWindow: the room the scan path takes at the rest arena's end for
  // one event's rest (an event whose rest needs more is scanned on and its
  // rest made by Interpret; 16 KiB leave at most 1 % of a chunk unused).
  static constexpr size_t kRestWindow = size_t{16} << 10;

  // Prebuilt: the current event's rest as the scan path wrote it at the
  // rest arena's end (`len` bytes at `area`, the args value at [args_begin,
  // args_end)); area == nullptr: none, Interpret makes the rest.
  struct Prebuilt {
    char* area = nullptr;
    size_t len = 0, args_begin = 0, args_end = 0;
  };
  Prebuilt prebuilt;


  // IsCleanValue: `raw` is one JSON value that needs no repair.
  bool IsCleanValue(std::string_view raw) {
    check.resize(raw.size());
    return CopyCleanJsonValue(raw, check.data()) != nullptr;
  }

  // ScanMemberValue: the end of the value at json[p] of member `key`; npos
  // to decline. While `*pb` has an area, a member of a non-core key is
  // written there as Interpret would (`,"key":value`, the value checked and
  // without whitespace: a container is copied as it is found, so args are
  // walked once); if the area runs out, `*pb` is dropped (ScanEvent then
  // scans the event again, and Interpret makes the rest from its members).
  [[gnu::always_inline]] size_t ScanMemberValue(std::string_view json, size_t p, std::string_view key, KeyKind kind,
                                                 Prebuilt* pb) {
    const size_t n = json.size();
    const bool container = json[p] == '{' || json[p] == '[';
    if (!pb->area || IsCoreKind(kind)) {
      if (!container) {
        if (kind == KeyKind::kTs || kind == KeyKind::kDur) {
          size_t end = 0;
          if (const std::optional<int64_t> ns = ScanMicrosToNanos(json, p, &end)) {
            (kind == KeyKind::kTs ? scanned_ts : scanned_dur) = {json.data() + p, *ns};
            return end;
          }
        }
        return ScanValue(json, p);
      }
      const size_t end = ScanContainerEnd(json, p);
      // Where a value is read (ph, ts, dur, id2's side parse), a container
      // must be clean: Interpret checks only what it copies.
      if (end != std::string_view::npos &&
          (kind == KeyKind::kPh || kind == KeyKind::kTs || kind == KeyKind::kDur || kind == KeyKind::kId2) &&
          !IsCleanValue(json.substr(p, end - p)))
        return std::string_view::npos;
      return end;
    }
    // `,"key":` then the value; the key was checked clean by ScanKey.
    const size_t head = (pb->len ? 1 : 0) + key.size() + 3;
    const size_t room = kRestWindow - pb->len;
    if (room > head) {
      char* o = pb->area + pb->len;
      if (pb->len) *o++ = ',';
      *o++ = '"';
      std::memcpy(o, key.data(), key.size());
      o += key.size();
      *o++ = '"';
      *o++ = ':';
      size_t end = std::string_view::npos;
      char* value_end = nullptr;
      if (container) {
        // The copy is never longer than the input it reads: it reads at
        // most what the area has left.
        const size_t window = std::min(n - p, room - head);
        size_t consumed = 0;
        if (kind == KeyKind::kArgs && json[p] == '{') {
          value_end = CopyArgs(json.substr(0, p + window), p, o, pb->area + kRestWindow, &end);
        } else if ((value_end = CopyCleanJsonPrefix(json.substr(p, window), o, &consumed))) {
          end = p + consumed;
        }
        if (!value_end && window == n - p) return std::string_view::npos;  // not clean
      } else {
        // A string or scalar the scan path's loops accept is copied as it is
        // (what CopyCleanJson writes for a clean one, as CopyArgs does).
        end = ScanValue(json, p);
        if (end == std::string_view::npos) return end;
        if (end - p <= room - head) {
          const char c = json[p];
          if (end - p > kMaxNumberChars && (c == '-' || (c >= '0' && c <= '9')))
            return std::string_view::npos;  // a number past 1,000 digits: repaired by the fast path
          CopyShort(json.data() + p, end - p, o, pb->area + kRestWindow);
          value_end = o + (end - p);
        }
      }
      if (value_end) {
        if (kind == KeyKind::kArgs) {
          pb->args_begin = static_cast<size_t>(o - pb->area);
          pb->args_end = static_cast<size_t>(value_end - pb->area);
        }
        pb->len = static_cast<size_t>(value_end - pb->area);
        return end;
      }
    }
    // The area is full: Interpret makes this event's rest.
    *pb = Prebuilt{};
    return container ? ScanContainerEnd(json, p) : ScanValue(json, p);
  }

  // MemberLead: the bytes from the end of an event's previous value (or
  // from its `{`) to the start of member i's value as an earlier event
  // with a member i wrote them (`, "cat": `), with that member's key.
  // Kineto writes every event of a kind with the same whitespace and key
  // order, so most members' leads repeat byte for byte; a lead that does is
  // the same key and punctuation and needs no scan (ScanEvent). 32 bytes
  // at most; kLeadWays per member position, as Kineto's usual events differ
  // from the second member on (ph then cat, s or id: four kinds of event).
  struct Lead {
    alignas(16) char text[32] = {};
    // The bits of the first `len` bytes (FindLead); kNoLead, which no
    // compare gives, while there is none.
    uint64_t want = kNoLead;
    uint8_t len = 0;    // 0: none yet
    bool end = false;   // the bytes end with the object's closing `}`
    // The way of the next member position's lead found after this one last
    // time: FindLead tries it first (a kind of event keeps its layout).
    mutable uint8_t next = 0;
    // Whether the next member position's runs (RunLead) are tried after
    // this lead: cleared when none matched, set when one is learned.
    mutable uint8_t run_after = 1;
  };
  static constexpr uint64_t kNoLead = uint64_t{1} << 32;
  struct MemberLead : Lead {
    uint32_t sig = 0;  // the key's KeySig
    uint64_t sig_bit = 0;  // SigBit(sig)
    uint8_t key_begin = 0, key_len = 0;
    KeyKind kind = KeyKind::kOther;
  };
  static constexpr size_t kLeads = 16, kLeadWays = 4;
  MemberLead leads[kLeads][kLeadWays];
  uint8_t lead_victim[kLeads] = {};  // the way a new lead replaces next
  // The way FindLead tries first at an event's first member, an args
  // object's first member (Lead::next for the others).
  // spare_way: the prediction after a member found without a lead.
  uint8_t first_way = 0, args_first_way = 0, spare_way = 0;

  // FindLead: the lead of `ways` (one member position's) that json[q...]
  // begins with, or nullptr; the way `*predict` first, and `*predict` set
  // to the way found. The input's 32 bytes at q are loaded once and
  // compared with each way's (the input is padded: they may run past
  // json.size(); a lead matched there is not taken): a lead is looked for
  // at every member, and tried in way order Kineto's ResNet-50 ranks needed
  // ~1.8 compares an event member, ~2.3 an args member, each with its own
  // loads and checks (~18 instructions).
  template <typename L>
  static const L* FindLead(std::string_view json, size_t q, const L* ways, uint8_t* predict) {
#if defined(__SSE2__)
    const char* in = json.data() + q;
    const __m128i a0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
    const __m128i a1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16));
    const size_t left = json.size() - q;
    const bool room = left >= sizeof(Lead::text);  // every lead ends before json.size()
    auto matches = [&](const L& lead) {
      const __m128i b0 = _mm_load_si128(reinterpret_cast<const __m128i*>(lead.text));
      const __m128i b1 = _mm_load_si128(reinterpret_cast<const __m128i*>(lead.text + 16));
      const uint64_t same = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(a0, b0))) |
                            static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(a1, b1))))
                                << 16;
      return (same & lead.want) == lead.want && (room || lead.len <= left);
    };
#else
    auto matches = [&](const L& lead) {
      return lead.len != 0 && lead.len <= json.size() - q && std::memcmp(json.data() + q, lead.text, lead.len) == 0;
    };
#endif
    if (matches(ways[*predict])) return &ways[*predict];
    for (size_t w = 0; w < kLeadWays; ++w) {
      if (matches(ways[w])) {
        *predict = static_cast<uint8_t>(w);
        return &ways[w];
      }
    }
    return nullptr;
  }

  // LearnLead: json[q, v) (at most 32 bytes) as the lead of the way
  // `*victim` of `ways`, which the next new lead then replaces. The caller
  // fills in the rest of the lead.
  template <typename L>
  static L* LearnLead(std::string_view json, size_t q, size_t v, L* ways, uint8_t* victim) {
    L& lead = ways[*victim];
    *victim = static_cast<uint8_t>((*victim + 1) % kLeadWays);
    std::memcpy(lead.text, json.data() + q, v - q);
    lead.len = static_cast<uint8_t>(v - q);
    lead.want = (uint64_t{1} << lead.len) - 1;
    lead.end = false;
    lead.run_after = 1;
    if constexpr (requires { lead.value_want; }) lead.value_want = lead.value_misses = lead.value_rest = 0;
    return &lead;
  }

  // LearnEnd: where member position `i` found no member but the object's
  // end (json[e] is `}`, after the whitespace from q), json[q, e] becomes
  // one of the position's leads, marked `end`: an object of the same layout
  // then ends without four failed compares and a scan (each event and each
  // args object ended so).
  template <typename L>
  void LearnEnd(std::string_view json, size_t q, size_t e, size_t i, L (*ways)[kLeadWays]) {
    if (i >= kLeads || e >= json.size() || json[e] != '}' || e + 1 - q > sizeof(Lead::text)) return;
    uint8_t* victim = std::is_same_v<L, MemberLead> ? &lead_victim[i] : &args_victim[i];
    LearnLead(json, q, e + 1, ways[i], victim)->end = true;
  }

  // ArgsLead: a MemberLead for the members of an event's args object (Kineto
  // writes those in a fixed order and layout too), with the lead as the copy
  // writes it (`,"key":`, no whitespace).
  //
  // With it, the string or scalar value that followed the lead last time
  // and the byte after that value (`value`, its first value_len + 1 bytes:
  // so that `5` does not match `50`): input that holds those bytes after the
  // lead holds the same value, copied as it is without a scan. Half of
  // Kineto's args values repeat at their lead (`"Device": 25738`, `"Trace
  // name": "PyTorch Profiler"`, a kernel's `"queued": 0`, `"stream": 7`).
  struct ArgsLead : Lead {
    alignas(16) char out[32] = {};
    uint8_t out_len = 0;
    // Set as the value is copied (KeepValue): `mutable`, as `next`.
    alignas(16) mutable char value[32] = {};
    mutable uint32_t value_want = 0;  // the bits of value_len + 1 bytes; 0: none
    mutable uint8_t value_len = 0;
    // A value that changes (an `External id`, a `correlation`) is not kept
    // for kValueRest uses of the lead after kValueMisses misses in a row:
    // the compare and the keeping cost more than they save.
    mutable uint8_t value_misses = 0, value_rest = 0;
  };
  static constexpr uint8_t kValueMisses = 2, kValueRest = 64;
  ArgsLead args_leads[kLeads][kLeadWays];
  uint8_t args_victim[kLeads] = {};

  // CopyKeptValue: if json[v...] begins with `lead`'s kept value and the
  // byte after it (all before json.size()), writes the value at `o` and
  // returns its length; else 0. One 32-byte load, compare and store where
  // 32 bytes are left before `o_end` (the input is padded).
  static size_t CopyKeptValue(const ArgsLead& lead, std::string_view json, size_t v, char* o, char* o_end) {
    if (!lead.value_want || json.size() - v <= lead.value_len) return 0;  // v <= json.size()
#if defined(__SSE2__)
    const char* in = json.data() + v;
    const __m128i a0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
    const __m128i a1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16));
    const __m128i b0 = _mm_load_si128(reinterpret_cast<const __m128i*>(lead.value));
    const __m128i b1 = _mm_load_si128(reinterpret_cast<const __m128i*>(lead.value + 16));
    const uint32_t same = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(a0, b0))) |
                          static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(a1, b1))) << 16;
    if ((same & lead.value_want) != lead.value_want) return 0;
    lead.value_misses = 0;
    if (o_end - o >= 32) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o), a0);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 16), a1);
      return lead.value_len;
    }
#else
    if (std::memcmp(json.data() + v, lead.value, lead.value_len + size_t{1}) != 0) return 0;
    lead.value_misses = 0;
#endif
    std::memcpy(o, json.data() + v, lead.value_len);
    return lead.value_len;
  }
  // KeepValue: json[v, end), a string or scalar copied after `lead` (not
  // its kept value), and the byte after it become the lead's kept value
  // where they fit (32 bytes, all before json.size()); otherwise, or while
  // the lead rests after kValueMisses, the lead keeps none.
  static void KeepValue(const ArgsLead* lead, std::string_view json, size_t v, size_t end) {
    if (!lead) return;
    if (lead->value_rest) {
      --lead->value_rest;
      return;
    }
    if (lead->value_want && ++lead->value_misses >= kValueMisses) {
      lead->value_misses = 0;
      lead->value_rest = kValueRest;
      lead->value_want = 0;
      return;
    }
    if (end - v >= sizeof(ArgsLead::value) || end >= json.size()) {
      lead->value_want = 0;
      return;
    }
    std::memcpy(lead->value, json.data() + v, sizeof(ArgsLead::value));  // the input is padded
    lead->value_len = static_cast<uint8_t>(end - v);
    lead->value_want = static_cast<uint32_t>((uint64_t{1} << (end - v + 1)) - 1);
  }

  // CopyLeadOut writes `lead`'s minified form at `o`: two 16-byte stores
  // where 32 bytes are left before `o_end` (a memcpy of this short a length
  // became `rep movsq`, whose start-up cost was most of CopyArgs' time).
  static void CopyLeadOut(const ArgsLead& lead, char* o, char* o_end) {
#if defined(__SSE2__)
    if (o_end - o >= 32) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm_load_si128(reinterpret_cast<const __m128i*>(lead.out)));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 16),
                       _mm_load_si128(reinterpret_cast<const __m128i*>(lead.out + 16)));
      return;
    }
#endif
    for (size_t k = 0; k < lead.out_len; ++k) o[k] = lead.out[k];
  }

  // ValueMemo: a container value of an args member (Kineto's `Input Dims`,
  // `Input type`, `grid`, `block`) as an earlier event had it, byte for
  // byte (`raw`, at most kMemoBytes), with its copy (`out`, what
  // CopyCleanJsonPrefix wrote for it). A JSON value's bytes fix where it ends
  // and what its copy is, so input that begins with `raw` holds the same
  // value and needs no walk: CopyCleanJsonPrefix was ~520 instructions a
  // container, 11 % of the scan path. The memos are a table of kMemoSlots
  // of kMemoWays, a value's slot chosen by its member position and the 32
  // input bytes from its start (MemoSlot), the way not found last replaced.
  // Kineto's ResNet-50 rank has 584 distinct values in 64,788 containers;
  // one way a slot of 64-byte memos found 78 % of them; two ways 88 % (values
  // longer than 32 bytes that begin alike share a slot: `["GenericList",
  // "Int", "Int", ...`); two ways of 128 bytes 94 % (4 real16 ranks: 56,540
  // containers copied -> 15,308; -2.0 % of the job's instructions, user time
  // -1.5 %). Four ways of 128 bytes in 128 slots copied fewer but were slower
  // (more compares); 8 ways per member position found 60 %. 139 KB.
  static constexpr size_t kMemoBytes = 128, kMemoSlots = 256;
  struct ValueMemo {
    alignas(16) char raw[kMemoBytes] = {};
    alignas(16) char out[kMemoBytes] = {};
    uint8_t raw_len = 0;  // 0: none yet
    uint8_t out_len = 0;
  };
  static constexpr size_t kMemoWays = 2;
  std::vector<ValueMemo> memos = std::vector<ValueMemo>(kMemoSlots * kMemoWays);
  std::vector<uint8_t> memo_last = std::vector<uint8_t>(kMemoSlots);  // per slot: the way found last

  // MemoSlot: the slot of the value at json[v] of args member `i`, from the
  // 32 bytes at v (the input is padded: they may run past json.size()).
  static size_t MemoSlot(std::string_view json, size_t v, size_t i) {
    uint64_t w[4];
    std::memcpy(w, json.data() + v, sizeof(w));
    const uint64_t x = w[0] ^ std::rotl(w[1], 17) ^ std::rotl(w[2], 31) ^ std::rotl(w[3], 47) ^ i;
    return static_cast<size_t>((x * 0x9E3779B97F4A7C15u) >> 56) % kMemoSlots;
  }
  // SameBytes: in[0, len) == raw[0, len) (`raw` 16-byte aligned, len at most
  // kMemoBytes), 16 bytes a step: may read up to 15 bytes past in + len.
  static bool SameBytes(const char* in, const char* raw, size_t len) {
#if defined(__SSE2__)
    size_t k = 0;
    for (; k + 16 <= len; k += 16) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + k));
      const __m128i b = _mm_load_si128(reinterpret_cast<const __m128i*>(raw + k));
      if (_mm_movemask_epi8(_mm_cmpeq_epi8(a, b)) != 0xFFFF) return false;
    }
    if (k == len) return true;
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + k));
    const __m128i b = _mm_load_si128(reinterpret_cast<const __m128i*>(raw + k));
    const unsigned want = (1u << (len - k)) - 1;
    return (static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(a, b))) & want) == want;
#else
    return std::memcmp(in, raw, len) == 0;
#endif
  }
  // MemoMatches: json[v...] begins with `memo`'s raw bytes, all of them
  // before json.size().
  static bool MemoMatches(std::string_view json, size_t v, const ValueMemo& memo) {
    return memo.raw_len != 0 && memo.raw_len <= json.size() - v && SameBytes(json.data() + v, memo.raw, memo.raw_len);
  }
  // Remember makes `memo` json[v, v + raw_len) and its copy `out` (out_len
  // bytes), both at most kMemoBytes.
  static void Remember(std::string_view json, size_t v, size_t raw_len, const char* out, size_t out_len,
                       ValueMemo* memo) {
    std::memcpy(memo->raw, json.data() + v, raw_len);
    std::memcpy(memo->out, out, out_len);
    memo->raw_len = static_cast<uint8_t>(raw_len);
    memo->out_len = static_cast<uint8_t>(out_len);
  }
  // CopyMemoOut writes `memo`'s copy at `o`: 16-byte stores where kMemoBytes
  // are left before `o_end`.
  static void CopyMemoOut(const ValueMemo& memo, char* o, char* o_end) {
#if defined(__SSE2__)
    if (o_end - o >= static_cast<ptrdiff_t>(kMemoBytes)) {
      for (size_t k = 0; k < memo.out_len; k += 16)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o + k),
                         _mm_load_si128(reinterpret_cast<const __m128i*>(memo.out + k)));
      return;
    }
#endif
    std::memcpy(o, memo.out, memo.out_len);
  }

  // CopyShort copies `len` input bytes at `in` to `o`: two 16-byte loads and
  // stores where len <= 32 and 32 bytes are left before `o_end` (the input
  // is padded), else memcpy. An args member's scalar value is mostly a few
  // bytes, and the call to memcpy cost more than its copy (307,849 calls,
  // ~25 instructions each, on Kineto's ResNet-50 rank).
  static void CopyShort(const char* in, size_t len, char* o, char* o_end) {
#if defined(__SSE2__)
    if (len <= 32 && o_end - o >= 32) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o), a);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 16), b);
      return;
    }
#endif
    std::memcpy(o, in, len);
  }

  // CopyUnsigned: the unsigned integer at json[v] (its first digit, not
  // `0`), found and copied to `o` in one 16-byte load and store (where 16
  // bytes are left before `o_end`; the input is padded): its length, or 0
  // where it is not that simple (16 digits or more, digits up to
  // json.size(), a `.`, `e` or `E` after them): the caller scans it as any
  // scalar. Kineto's args are mostly such integers (ids, counts, `cbid`), a
  // million of them in 4 real16 ranks; ScanScalar and CopyShort took ~40
  // instructions each.
  static size_t CopyUnsigned(std::string_view json, size_t v, char* o, char* o_end) {
#if defined(__SSE2__)
    const unsigned other = NonDigitBits16(json.data() + v);
    if (!other) return 0;
    const size_t len = static_cast<size_t>(__builtin_ctz(other));
    if (v + len >= json.size()) return 0;
    const char next = json[v + len];
    if (next == '.' || next == 'e' || next == 'E') return 0;
    if (o_end - o >= 16) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm_loadu_si128(reinterpret_cast<const __m128i*>(json.data() + v)));
    } else {
      std::memcpy(o, json.data() + v, len);
    }
    return len;
#else
    (void)json, (void)v, (void)o, (void)o_end;
    return 0;
#endif
  }

  // CopyArgs: CopyCleanJsonPrefix of the object at json[p] (its `{`; the
  // same bytes, accepted and refused alike), member by member: a member
  // whose lead matches one of an earlier event's is not scanned up to its
  // value; strings and scalars are found by the scan path's loops and copied
  // as they are (what CopyCleanJson writes for a clean one). Reads no further
  // than json.size() (the caller's window); writes at `o` (room for what it
  // reads), never at or past `o_end`. Returns the output's end and sets
  // `*end` after the `}`, or nullptr.
  char* CopyArgs(std::string_view json, size_t p, char* o, char* o_end, size_t* end) {
    constexpr size_t npos = std::string_view::npos;
    *o++ = '{';
    size_t q = p + 1;  // after the `{` or the previous value
    size_t k;
    uint8_t* predict = &args_first_way;
    for (size_t i = 0;; ++i) {
      const ArgsLead* hit = i < kLeads ? FindLead(json, q, args_leads[i], predict) : nullptr;
      const ArgsLead* lead = nullptr;  // the member's lead, to keep its value
      size_t v;  // the value's first byte
      if (hit) {
        predict = &hit->next;
        if (hit->end) {
          k = q + hit->len - 1;
          break;
        }
        CopyLeadOut(*hit, o, o_end);
        o += hit->out_len;
        v = Space(json, q + hit->len);
        if (const size_t len = CopyKeptValue(*hit, json, v, o, o_end)) {
          o += len;
          q = v + len;
          continue;
        }
        lead = hit;
      } else {
        predict = &spare_way;
        k = Space(json, q);
        if (k >= json.size()) return nullptr;
        if (i > 0 ? json[k] != ',' : json[k] == '}') {
          LearnEnd(json, q, k, i, args_leads);
          break;
        }
        if (i > 0) k = Space(json, k + 1);
        std::string_view key;
        v = k;
        if (!ScanKey(json, &v, &key)) return nullptr;
        char* const lead_out = o;
        if (i > 0) *o++ = ',';
        std::memcpy(o, key.data() - 1, key.size() + 2);  // with its quotes
        o += key.size() + 2;
        *o++ = ':';
        if (i < kLeads && v - q <= sizeof(Lead::text)) {
          ArgsLead* learned = LearnLead(json, q, v, args_leads[i], &args_victim[i]);
          learned->out_len = static_cast<uint8_t>(o - lead_out);
          std::memcpy(learned->out, lead_out, learned->out_len);
          lead = learned;
        }
      }
      if (v >= json.size()) return nullptr;
      const char c = json[v];
      size_t value_end;
      if (c == '{' || c == '[') {
        const size_t slot = MemoSlot(json, v, i);
        ValueMemo* const ways = &memos[slot * kMemoWays];
        size_t w = 0;
        while (w < kMemoWays && !MemoMatches(json, v, ways[w])) ++w;
        if (w < kMemoWays) {
          const ValueMemo& memo = ways[w];
          memo_last[slot] = static_cast<uint8_t>(w);
          CopyMemoOut(memo, o, o_end);
          o += memo.out_len;
          q = v + memo.raw_len;
          continue;
        }
        size_t consumed = 0;
        char* const value_out = o;
        o = CopyCleanJsonPrefix(json.substr(v), o, &consumed, /*depth=*/1);
        if (!o) return nullptr;
        if (consumed <= kMemoBytes) {
          const size_t victim = (memo_last[slot] + 1) % kMemoWays;
          memo_last[slot] = static_cast<uint8_t>(victim);
          Remember(json, v, consumed, value_out, static_cast<size_t>(o - value_out), &ways[victim]);
        }
        q = v + consumed;
        continue;
      }
      if (c == '"') {
        value_end = ScanString(json, v);
      } else if (const size_t len = c >= '1' && c <= '9' ? CopyUnsigned(json, v, o, o_end) : 0) {
        KeepValue(lead, json, v, v + len);
        o += len;
        q = v + len;
        continue;
      } else {
        value_end = ScanScalar(json, v);
        if (value_end != npos && value_end - v > kMaxNumberChars && (c == '-' || (c >= '0' && c <= '9')))
          return nullptr;
      }
      if (value_end == npos) return nullptr;
      KeepValue(lead, json, v, value_end);
      CopyShort(json.data() + v, value_end - v, o, o_end);
      o += value_end - v;
      q = value_end;
    }
    if (json[k] != '}') return nullptr;
    *o++ = '}';
    *end = k + 1;
    return o;
  }

  // ScanEvent decodes the event object at json[*pos] (its `{`) and moves
  // `*pos` past it; false to decline. Its members are read as they are
  // found (TakeCore) while there are at most kDirectMembers, their keys take
  // distinct bits of the signature filter (SigBit) and its rest fits the
  // window; otherwise the event is scanned again with its members collected
  // for Interpret (which finds keys given twice).
  bool ScanEvent(std::string_view json, size_t* pos) {
    const EventScan r = ScanEventAs<false>(json, pos);
    if (r != EventScan::kCollect) return r == EventScan::kDone;
    return ScanEventAs<true>(json, pos) == EventScan::kDone;
  }

  // EventScan: how ScanEventAs ended: the event made or dropped, the input
  // declined, or (reading members as found) to be scanned again collecting.
  enum class EventScan : uint8_t { kDone, kDecline, kCollect };
  // kDirectMembers: the members an event read as found may have.
  static constexpr size_t kDirectMembers = 16;

  // ScanEventAs: ScanEvent with the members collected (`kCollect`: into
  // `members`, then Interpret) or read as found (TakeCore, then Finish; a
  // 17th member, a key whose filter bit is taken or a rest past the window
  // gives kCollect, and the caller
  // scans again: what was interned meanwhile is interned again alike).
  // What it calls for every member (ScanMemberValue, TakeCore, InternRecent,
  // SameText, RecentSlot) is always inlined: called from two places, GCC 12
  // kept them out of line (+4 % instructions, session 29).
  template <bool kCollect>
  EventScan ScanEventAs(std::string_view json, size_t* pos) {
    constexpr EventScan kDecline = EventScan::kDecline;
    const size_t n = json.size();
    const size_t start = *pos;
    const uint64_t offset = static_cast<uint64_t>(json.data() + start - base);
    if constexpr (kCollect) members.clear();
    bool duplicates = false;
    uint64_t sig_bits = 0;
    Prebuilt pb;
    pb.area = b->rest_arena().Reserve(kRestWindow);
    Event e{};
    CoreSeen seen;
    error_code err = SUCCESS;
    size_t q = start + 1;  // after the `{` or the previous value
    size_t p;
    size_t i = 0;
    uint8_t* predict = &first_way;
    [[maybe_unused]] PendingRun pending;
    // The run_after of the lead or run before member i (first_run_after
    // before the first; spare_run_after after a member found without a lead).
    [[maybe_unused]] uint8_t* run_hint = &first_run_after;
    for (;; ++i) {
      [[maybe_unused]] uint8_t* const hint_before = run_hint;
      std::string_view key;
      KeyKind kind;
      uint32_t sig;
      uint64_t sig_bit;
      bool keyed = false;  // the member's key known from a run's lead
      if constexpr (!kCollect) {
        if (i < kRuns && run_count[i] && *run_hint) {
          const RunLead* r = FindRun(json, q, runs[i], run_count[i], &run_way[i]);
          // Tried again once a run is learned after that lead; always at
          // the first member (events of other kinds come between).
          if (!r && i > 0) *run_hint = 0;
          if (r) {
            if (pending.got.members) KeepRun(json, &pending);
            const RunFields& got = r->got;
            // As the members it holds would be read one by one: a 17th
            // member or a key whose filter bit is taken goes to the
            // collecting scan.
            if (i + got.members > kDirectMembers || !pb.area || (sig_bits & got.sig_bits)) return EventScan::kCollect;
            sig_bits |= got.sig_bits;
            // Each key is read once (else kCollect above): the fields a
            // run does not hold are still zero, or set by others.
            e.ph |= got.ph;
            e.phase |= got.phase;
            e.cat |= got.cat;
            e.pid |= got.pid;
            e.tid |= got.tid;
            e.flags |= got.flags;
            seen.have_ph |= got.have_ph;
            predict = &r->next;
            run_hint = &r->run_after;
            if (!r->then.key_len) {
              q += r->len - 1;  // before the byte after the last value
              i += got.members - 1;
              continue;
            }
            // The run ends with the next member's lead: that member is read
            // here, as if its lead had been found.
            i += got.members;
            key = std::string_view(json.data() + q + r->then.key_begin, r->then.key_len);
            kind = r->then.kind;
            sig = r->then.sig;
            sig_bit = r->then.sig_bit;
            p = Space(json, q + r->len);
            keyed = true;
          }
        }
      }
      const MemberLead* hit = keyed || i >= kLeads ? nullptr : FindLead(json, q, leads[i], predict);
      if (hit) {
        predict = &hit->next;
        run_hint = &hit->run_after;
        if (hit->end) {
          p = q + hit->len - 1;
          break;
        }
        key = std::string_view(json.data() + q + hit->key_begin, hit->key_len);
        kind = hit->kind;
        sig = hit->sig;
        sig_bit = hit->sig_bit;
        p = Space(json, q + hit->len);
      } else if (!keyed) {
        predict = &spare_way;
        run_hint = &spare_run_after;
        p = Space(json, q);
        if (i > 0 ? p >= n || json[p] != ',' : p < n && json[p] == '}') {
          LearnEnd(json, q, p, i, leads);
          break;
        }
        if (i > 0) p = Space(json, p + 1);
        const size_t key_at = p;
        if (!ScanKey(json, &p, &key) || p >= n) return kDecline;
        kind = KindOf(key);
        sig = KeySig(key);
        sig_bit = SigBit(sig);
        if (i < kLeads && p - q <= sizeof(Lead::text)) {
          MemberLead* lead = LearnLead(json, q, p, leads[i], &lead_victim[i]);
          lead->sig = sig;
          lead->sig_bit = sig_bit;
          lead->key_begin = static_cast<uint8_t>(key_at + 1 - q);
          lead->key_len = static_cast<uint8_t>(key.size());
          lead->kind = kind;
          run_hint = &lead->run_after;
        }
      }
      if (p >= n) return kDecline;
      const size_t end = ScanMemberValue(json, p, key, kind, &pb);
      if (end == std::string_view::npos) return kDecline;
      // Views made directly (end <= n, as the lead's key is inside its
      // matched bytes): substr's bounds checks, which never fail here, cost
      // 3 % of the scan path's instructions (session 29).
      const std::string_view raw(json.data() + p, end - p);
      if constexpr (kCollect) {
        AddMember(key, kind, sig, raw, &sig_bits, &duplicates);
        if (duplicates) return kDecline;
      } else {
        // A key whose bit in the filter of the keys so far is taken (a key
        // given twice, or two keys that share a bit: never the usual ones)
        // is checked by the collecting scan (AddMember).
        if (i == kDirectMembers || !pb.area || (sig_bits & sig_bit)) return EventScan::kCollect;
        sig_bits |= sig_bit;
        const Take t = TakeCore(kind, raw, offset, &e, &seen, &err);
        // A core key's value kept in the rest: the fast path's.
        if (t == Take::kError || (t == Take::kRest && IsCoreKind(kind))) return kDecline;
        // (A member read after a run's lead starts none: q is the run's.)
        if (t == Take::kTaken && Runnable(kind) && !keyed && end + 1 - q <= kRunBytes) {
          AddToRun(json, q, end, i, kind, sig_bit, e, seen, hint_before, &pending);
        } else if (pending.got.members) {
          // The run ends before this member: with its lead if that fits.
          if (p - pending.q0 <= kRunBytes) {
            pending.then = {static_cast<uint8_t>(key.data() - (json.data() + pending.q0)),
                            static_cast<uint8_t>(key.size()), kind, sig, sig_bit};
            pending.then_value = p;
          }
          KeepRun(json, &pending);
        }
      }
      q = end;
    }
    if constexpr (!kCollect) {
      if (pending.got.members) KeepRun(json, &pending);
    }
    if (p >= n || json[p] != '}') return kDecline;
    *pos = p + 1;
    Outcome o;
    if constexpr (kCollect) {
      prebuilt = pb;
      o = Interpret(offset, false, &err);
      prebuilt = Prebuilt{};
    } else {
      rest_direct = pb.area;
      rest_len = pb.len;
      rest_on_scratch = false;
      o = Finish(e, seen, i > 0, pb.args_begin, pb.args_end);
    }
    scanned_ts = scanned_dur = ScannedTime{};
    return o != Outcome::kSimdjsonError ? EventScan::kDone : kDecline;
  }

  // RunLead: members i..i+m-1 (one or more) of an event as an earlier event
  // had them, byte for byte, from the end of the value before (or the `{`)
  // through the last one's value and the byte after it (so that `"pid": 7`
  // does not match `"pid": 71`), at most kRunBytes: what those members gave
  // is known without a lead lookup, a value scan or an interning call each.
  // Only consecutive members of kinds ph, cat, pid and tid whose values were
  // taken (TakeCore) make runs: Kineto repeats them event after event
  // (`"ph": "X", "cat": "Kernel"`, `"pid": 0, "tid": "stream 7"`) while
  // names, ids, ts and dur change (runs with names were slower: they rarely
  // repeat and evict the others). A run that ends where a member of another
  // kind begins takes that member's lead too (to its value, if it fits): the
  // member is then read without a lead lookup. kRunWays per position, tried
  // where a run followed the lead before last time (Lead::run_after). 4
  // real16 ranks, 1 thread: 1,267.1 M instructions -> 1,144.8 M (2 ways:
  // 1,214 M; 8: 1,156 M; two members or more only: 1,183 M); with the next
  // member's lead 1,130.4 M. The interned ids are the builder's: runs are
  // forgotten with the recent strings (ForgetLastStrings).
  static constexpr size_t kRunBytes = 64, kRuns = 8, kRunWays = 4;
  // RunFields: what a run's members give an event (ids 0 where not a
  // member; flags: kHasPid, kHasTid), and their SigBits.
  struct RunFields {
    uint64_t sig_bits = 0;
    uint32_t ph = 0, cat = 0, pid = 0, tid = 0;
    uint8_t members = 0, flags = 0;
    char phase = 0;
    bool have_ph = false;
  };
  // RunKey: the member whose lead a run ends with (its text then runs to
  // that member's value): its key, key_begin bytes into the text (key_len 0
  // if the run ends with no lead), kind and signature.
  struct RunKey {
    uint8_t key_begin = 0, key_len = 0;
    KeyKind kind = KeyKind::kOther;
    uint32_t sig = 0;
    uint64_t sig_bit = 0;
  };
  struct RunLead {
    alignas(16) char text[kRunBytes] = {};
    uint64_t want = 0;  // the bits of the first `len` bytes
    uint8_t len = 0;
    RunFields got;
    RunKey then;
    // The way of the next member position's lead found after this run.
    mutable uint8_t next = 0;
    // Whether a run was found after this one last time (Lead::run_after).
    mutable uint8_t run_after = 1;
  };
  RunLead runs[kRuns][kRunWays];
  uint8_t run_count[kRuns] = {}, run_victim[kRuns] = {}, run_way[kRuns] = {};
  // run_after before an event's first member and after a member found
  // without a lead (the lead's own once it is learned).
  uint8_t first_run_after = 1, spare_run_after = 1;

  // FindRun: the run of `count` ways at `ways` that json[q...] begins with,
  // or nullptr; the way `*predict` first (and set to the way found). The
  // input is padded by 64 bytes: its 64 bytes at q are loaded once.
  static const RunLead* FindRun(std::string_view json, size_t q, const RunLead* ways, size_t count,
                                uint8_t* predict) {
    const size_t left = json.size() - q;
#if defined(__SSE2__)
    const char* in = json.data() + q;
    __m128i a[4];
    for (int k = 0; k < 4; ++k) a[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16 * k));
    auto matches = [&](const RunLead& r) {
      uint64_t same = 0;
      for (int k = 0; k < 4; ++k) {
        const __m128i b = _mm_load_si128(reinterpret_cast<const __m128i*>(r.text + 16 * k));
        same |= static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(a[k], b)))) << (16 * k);
      }
      return (same & r.want) == r.want && r.len <= left;
    };
#else
    auto matches = [&](const RunLead& r) { return r.len <= left && std::memcmp(json.data() + q, r.text, r.len) == 0; };
#endif
    if (*predict < count && matches(ways[*predict])) return &ways[*predict];
    for (size_t w = 0; w < count; ++w) {
      if (matches(ways[w])) {
        *predict = static_cast<uint8_t>(w);
        return &ways[w];
      }
    }
    return nullptr;
  }

  // PendingRun: the run the members just read make so far (ScanEventAs):
  // from q0 (member position i0, after the lead or run whose run_after
  // `hint` is) to the end of the last one's value, what they gave, and the
  // lead it ends with (`then`, to then_value) if any.
  struct PendingRun {
    size_t q0 = 0, i0 = 0, end = 0, then_value = 0;
    uint8_t* hint = nullptr;
    RunFields got;
    RunKey then;
  };
  // KeepRun: `pending` as a run of position i0 if it has members and its
  // bytes (to the value of the member whose lead it ends with, else the
  // byte after its last value) fit; then none pending.
  void KeepRun(std::string_view json, PendingRun* pending) {
    const PendingRun& pr = *pending;
    const size_t len = pr.then.key_len ? pr.then_value - pr.q0 : pr.end + 1 - pr.q0;
    if (pr.got.members >= 1 && pr.i0 < kRuns && pr.end < json.size() && len <= kRunBytes) {
      const size_t i = pr.i0;
      RunLead& r = runs[i][run_victim[i]];
      run_victim[i] = static_cast<uint8_t>((run_victim[i] + 1) % kRunWays);
      if (run_count[i] < kRunWays) ++run_count[i];
      std::memcpy(r.text, json.data() + pr.q0, len);
      std::memset(r.text + len, 0, kRunBytes - len);
      r.len = static_cast<uint8_t>(len);
      r.want = len == 64 ? ~uint64_t{0} : (uint64_t{1} << len) - 1;
      r.got = pr.got;
      r.then = pr.then;
      r.next = 0;
      r.run_after = 1;
      *pr.hint = 1;  // a run follows that lead again
    }
    *pending = PendingRun{};
  }
  // Runnable: a member TakeCore took that a run may hold.
  static bool Runnable(KeyKind kind) {
    return kind == KeyKind::kPh || kind == KeyKind::kCat || kind == KeyKind::kPid || kind == KeyKind::kTid;
  }
  // AddToRun: member [q, end) of position i, of kind `kind`, just taken into
  // `e`, joins the pending run (or starts one).
  void AddToRun(std::string_view json, size_t q, size_t end, size_t i, KeyKind kind, uint64_t sig_bit,
                const Event& e, const CoreSeen& seen, uint8_t* hint, PendingRun* pending) {
    if (pending->got.members > 0 && end + 1 - pending->q0 > kRunBytes) KeepRun(json, pending);
    RunFields& got = pending->got;
    if (got.members == 0) {
      pending->q0 = q;
      pending->i0 = i;
      pending->hint = hint;
    }
    switch (kind) {
      case KeyKind::kPh:
        got.ph = e.ph;
        got.phase = e.phase;
        got.have_ph = seen.have_ph;
        break;
      case KeyKind::kCat:
        got.cat = e.cat;
        break;
      case KeyKind::kPid:
        got.pid = e.pid;
        got.flags |= kHasPid;
        break;
      default:
        got.tid = e.tid;
        got.flags |= kHasTid;
        break;
    }
    got.sig_bits |= sig_bit;
    ++got.members;
    pending->end = end;
  }

  // event_seps: the bytes after an event's `}` up to the next one's `{`
  // (Kineto's `,\n  {`) as earlier events had them, leads of their own: one
  // matched needs no scan of the whitespace around the comma.
  Lead event_seps[kLeadWays];
  uint8_t event_sep_way = 0, event_sep_victim = 0;

  // ScanEvents: the traceEvents array at json[*pos] (its `[`); `*pos` past it.
  bool ScanEvents(std::string_view json, size_t* pos) {
    const size_t n = json.size();
    size_t p = Space(json, *pos + 1);
    if (p < n && json[p] == ']') {
      *pos = p + 1;
      return true;
    }
    while (true) {
      if (p >= n || json[p] != '{') return false;
      ++report->events_read;
      if (!ScanEvent(json, &p)) return false;
      const size_t e = p;  // after the event's `}`
      if (const Lead* sep = FindLead(json, e, event_seps, &event_sep_way)) {
        p = e + sep->len - 1;  // the next event's `{`
        continue;
      }
      p = Space(json, p);
      if (p < n && json[p] == ',') {
        p = Space(json, p + 1);
        if (p < n && json[p] == '{' && p + 1 - e <= sizeof(Lead::text)) LearnLead(json, e, p + 1, event_seps, &event_sep_victim);
        continue;
      }
      if (p >= n || json[p] != ']') return false;
      *pos = p + 1;
      return true;
    }
  }

  // Scan: the whole document (either form); false to decline.
  bool Scan(std::string_view json, bool* is_trace) {
    const size_t n = json.size();
    size_t p = Space(json, 0);
    // A document cut short (a crashed or running job, Horovod's unclosed
    // timelines) does not end with the bracket it opens with: declined at
    // once rather than after a scan of the whole input.
    size_t last = n;
    while (last > p && IsJsonWhitespace(static_cast<unsigned char>(json[last - 1]))) --last;
    if (p >= n || last <= p || json[last - 1] != (json[p] == '[' ? ']' : '}')) return false;
    if (p < n && json[p] == '[') {  // the array form: the events alone
      *is_trace = true;
      return ScanEvents(json, &p) && Space(json, p) == n;
    }
    if (p >= n || json[p] != '{') return false;
    p = Space(json, p + 1);
    if (p < n && json[p] == '}') return Space(json, p + 1) == n;
    while (true) {
      std::string_view key;
      if (!ScanKey(json, &p, &key)) return false;
      if (key == "traceEvents") {
        if (p >= n || json[p] != '[') return false;
        *is_trace = true;
        if (!ScanEvents(json, &p)) return false;
      } else {
        const size_t end = ScanValue(json, p);
        if (end == std::string_view::npos) return false;
        const std::string_view raw = json.substr(p, end - p);
        if ((raw[0] == '{' || raw[0] == '[') && !IsCleanValue(raw)) return false;
        if (!TopLevel(key, raw)) return false;
        p = end;
      }
      p = Space(json, p);
      if (p < n && json[p] == ',') {
        p = Space(json, p + 1);
        continue;
      }
      if (p >= n || json[p] != '}') return false;
      return Space(json, p + 1) == n;
    }
  }

  // ---------------- fast path ----------------

  // Returns SUCCESS, or the simdjson error that stopped it (then the caller
  // restarts on the tolerant path).
  error_code Fast(std::string_view json, size_t capacity, bool* is_trace) {
    od::document doc;
    // simdjson sizes the parser to each larger input exactly, and every
    // re-allocation faults its structural index in again (~0.6 x the input):
    // grow by an eighth more, so that a job's rank files of about the same
    // size re-allocate once or twice instead of at each new largest one.
    if (parser.capacity() < json.size()) {
      const size_t grown = json.size() + json.size() / 8;
      // On failure iterate() below tries the exact size itself.
      const error_code ignored = parser.allocate(std::min(grown, parser.max_capacity()));
      static_cast<void>(ignored);
    }
    if (auto e = parser.iterate(json.data(), json.size(), capacity).get(doc)) return e;
    od::json_type t;
    if (auto e = doc.type().get(t)) return e;
    if (t == od::json_type::array) {
      od::array events;
      if (auto e = doc.get_array().get(events)) return e;
      *is_trace = true;
      return FastEvents(events);
    }
    if (t != od::json_type::object) return simdjson::TAPE_ERROR;
    od::object top;
    if (auto e = doc.get_object().get(top)) return e;
    for (auto field : top) {
      od::raw_json_string key;
      od::value v;
      if (auto e = field.key().get(key)) return e;
      if (auto e = field.value().get(v)) return e;
      if (key == "traceEvents") {
        od::array events;
        if (v.get_array().get(events)) {
          std::string_view raw;
          if (auto e = RawValue(v, &raw)) return e;
          if (auto e = CheckSkipped(raw)) return e;
          Warn("traceEvents is not an array; ignored");
          continue;
        }
        *is_trace = true;
        if (auto e = FastEvents(events)) return e;
      } else {
        std::string_view raw;
        if (auto e = RawValue(v, &raw)) return e;
        const char* kb = key.raw();
        size_t kl = 0;
        while (kb[kl] != '"') kl += kb[kl] == '\\' ? 2 : 1;
        if (!TopLevel(std::string_view(kb, kl), raw)) return simdjson::TAPE_ERROR;
      }
    }
    return SUCCESS;
  }

  error_code FastEvents(od::array events) {
    for (auto element : events) {
      od::value v;
      if (auto e = element.get(v)) return e;
      const char* loc = nullptr;
      if (auto e = v.current_location().get(loc)) return e;
      ++report->events_read;
      od::json_type t;
      if (auto e = v.type().get(t)) return e;
      if (t != od::json_type::object) {
        std::string_view raw;
        if (auto e = RawValue(v, &raw)) return e;
        if (auto e = CheckSkipped(raw)) return e;
        report->dropped.Add(DropReason::kNotAnObject);
        continue;
      }
      od::object obj;
      if (auto e = v.get_object().get(obj)) return e;
      error_code err = SUCCESS;
      if (DecodeEvent(obj, static_cast<uint64_t>(loc - base), &err) == Outcome::kSimdjsonError)
        return err;
    }
    return SUCCESS;
  }

  // ---------------- tolerant path ----------------

  // Decodes the object text at [pos, end) after repairing it, counted as
  // read. If it is malformed: dropped as such, or, with `may_be_hole` (its
  // text runs across a run of NULs), false with nothing counted.
  bool TolerantObject(std::string_view json, size_t pos, size_t end, bool may_be_hole) {
    std::string& fixed = repaired.emplace_back();
    fixed.reserve(end - pos + simdjson::SIMDJSON_PADDING);
    od::document doc;
    od::object obj;
    error_code err = SUCCESS;
    if (AppendSanitizedJson(json.substr(pos, end - pos), &fixed) != SanitizeResult::kMalformed) {
      fixed.reserve(fixed.size() + simdjson::SIMDJSON_PADDING);
      if (!parser.iterate(fixed.data(), fixed.size(), fixed.capacity()).get(doc) && !doc.get_object().get(obj)) {
        ++report->events_read;
        if (DecodeEvent(obj, pos, &err) != Outcome::kSimdjsonError) return true;
        report->dropped.Add(DropReason::kMalformed);
        Error(absl::DataLossError("malformed event object (invalid JSON, or nested deeper than 512 levels)"), pos);
        return true;
      }
    }
    if (may_be_hole) return false;
    ++report->events_read;
    report->dropped.Add(DropReason::kMalformed);
    Error(absl::DataLossError("malformed event object (invalid JSON, or nested deeper than 512 levels)"), pos);
    return true;
  }

  // A run of at least kHoleNuls NULs inside an event is a hole (the event
  // was cut there; the text after it resumes mid-stream), not a NUL in a
  // string (nul_bytes.json: repaired as \u0000).
  static constexpr size_t kHoleNuls = 16;

  // FindHole: the offset of the first run of kHoleNuls NULs at or after
  // `pos`; json.size() if there is none.
  static size_t FindHole(std::string_view json, size_t pos) {
    return std::min(json.size(), json.find(std::string_view("\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", kHoleNuls), pos));
  }

  // NulRun: the number of NULs from `pos` on.
  static size_t NulRun(std::string_view json, size_t pos) {
    size_t end = pos;
    while (end < json.size() && json[end] == '\0') ++end;
    return end - pos;
  }

  // SkipHole: the value being scanned ran into the hole at `hole`. If text
  // follows the hole, counts the value as read and dropped (`truncated`),
  // reports the hole (its offset and length) and returns the offset after
  // it; npos if the NULs run to the end (a cut input, said as such).
  size_t SkipHole(std::string_view json, size_t hole) {
    const size_t after = hole + NulRun(json, hole);
    if (after == json.size()) return std::string_view::npos;
    ++report->events_read;
    report->dropped.Add(DropReason::kTruncated);
    Error(absl::DataLossError(absl::StrCat(after - hole, " NUL bytes inside an event (a hole in the file: the "
                                           "event and what was written there are lost)")),
          hole);
    return after;
  }

  // NextEventStart: after a hole, the first `{` at or after `pos` that
  // follows `,` or `[` or nothing but whitespace from `pos` on (the hole took
  // the comma): the next event's start in
  // Kineto's and Chrome's layouts. The text before it (the rest of an event
  // the hole began in) is skipped; json.size() if there is none. A `{` that
  // opens a nested object instead decodes as an event without `ph` and is
  // counted as dropped; the text after it up to the next `{` is skipped.
  static size_t NextEventStart(std::string_view json, size_t pos) {
    for (size_t i = pos; (i = json.find('{', i)) != std::string_view::npos; ++i) {
      size_t j = i;
      while (j > pos && IsJsonWhitespace(static_cast<unsigned char>(json[j - 1]))) --j;
      if (j == pos || json[j - 1] == ',' || json[j - 1] == '[') return i;
    }
    return json.size();
  }

  // LooksLikeArrayEnd: after a hole, whether the `]` before `pos` closes
  // traceEvents rather than an array inside an event the scan resumed in:
  // only the end of the input, `}` and the end (the object form's last key),
  // or `,` and one of the object form's top-level keys may follow it.
  static bool LooksLikeArrayEnd(std::string_view json, size_t pos) {
    const size_t n = json.size();
    auto skip = [&](size_t p) {
      while (p < n && (json[p] == '\0' || IsJsonWhitespace(static_cast<unsigned char>(json[p])))) ++p;
      return p;
    };
    pos = skip(pos);
    if (pos >= n) return true;
    if (json[pos] == '}') return skip(pos + 1) >= n;
    if (json[pos] != ',') return false;
    pos = SkipWhitespace(json, pos + 1);
    if (pos >= n || json[pos] != '"') return false;
    const size_t key_end = JsonStringEnd(json, pos + 1);
    if (key_end >= n) return false;
    const size_t colon = SkipWhitespace(json, key_end + 1);
    if (colon >= n || json[colon] != ':') return false;
    static constexpr std::string_view kTopLevelKeys[] = {
        "baseTimeNanoseconds", "deviceProperties", "displayTimeUnit", "distributedInfo", "metadata",
        "otherData",           "samples",          "schemaVersion",   "stackFrames",     "systemTraceEvents",
        "traceName"};
    const std::string_view key = json.substr(pos + 1, key_end - pos - 1);
    for (std::string_view k : kTopLevelKeys) {
      if (key == k) return true;
    }
    return false;
  }

  // Where the scan of an event array stands on holes.
  struct HoleScan {
    size_t next_hole;         // FindHole's answer from some earlier offset
    size_t budget;            // bytes a value may still be scanned past a run of NULs
    bool after_hole = false;  // a hole was met: the scan resumed at a guessed event start
  };

  // SkipNulsBetweenEvents: a run of NULs at `pos` between events, a hole a
  // crash left where the file system had allocated blocks the writer never
  // filled. What was there is lost (kDataLoss, reported); the text after it
  // may start mid-event, so the scan resumes at the next event start, which
  // is returned (json.size() if the NULs run to the end: padding).
  size_t SkipNulsBetweenEvents(std::string_view json, size_t pos, HoleScan* h) {
    const size_t hole = pos;
    pos += NulRun(json, pos);
    if (pos == json.size()) return pos;
    Error(absl::DataLossError(absl::StrCat(pos - hole, " NUL bytes between events (a hole in the file: what "
                                           "was written there is lost)")),
          hole);
    h->after_hole = true;
    return NextEventStart(json, pos);
  }

  // ScanAcrossNuls: the end of the value at `pos` (first byte `c`; npos if
  // the input ends inside it), and whether it was dealt with here (`done`:
  // the scan goes on at `end`). A value is scanned up to the next run of
  // NULs first. One that runs into it is scanned on past it (a string may
  // hold NULs, and the fast path reads such a value whole) within the
  // budget of 4x the input, which keeps a file of many holes linear. If it
  // closes as an event, it is decoded and the NULs reported; if it does not
  // close, or closes as malformed JSON (the quotes after a hole can pair up
  // again), the NULs are a hole: the text after it has its quotes out of
  // step and would swallow every later event uncounted
  // (tests/malformed/nul_run_inside_event.json and nul_hole_*.json).
  struct Scanned {
    size_t end;
    bool done;
  };
  Scanned ScanAcrossNuls(std::string_view json, size_t pos, char c, HoleScan* h) {
    const size_t n = json.size();
    if (h->next_hole < pos) h->next_hole = FindHole(json, pos);
    size_t end = SkipJsonValue(json.substr(0, h->next_hole), pos);
    if (end != std::string_view::npos || h->next_hole == n) return {end, false};
    if (h->budget >= n - pos) {
      end = SkipJsonValue(json, pos);
      h->budget -= (end == std::string_view::npos ? n : end) - pos;
    }
    if (end != std::string_view::npos && c != '{') return {end, false};
    if (end != std::string_view::npos && TolerantObject(json, pos, end, true)) {
      ReportNulsKept(h->next_hole, NulRun(json, h->next_hole));
      return {end, true};
    }
    const size_t after = SkipHole(json, h->next_hole);
    if (after == std::string_view::npos) return {std::string_view::npos, false};  // NULs to the end: cut
    h->after_hole = true;
    return {NextEventStart(json, after), true};
  }

  // Scans a traceEvents array body from `pos` (after `[`). Returns the offset
  // after `]`, or npos if the input ended first.
  size_t TolerantEvents(std::string_view json, size_t pos) {
    const size_t n = json.size();
    HoleScan h{FindHole(json, pos), 4 * n};
    while (true) {
      pos = SkipWhitespace(json, pos);
      if (pos >= n) {
        Warn("event array is not closed (no `]`); every complete event was kept");
        return std::string_view::npos;
      }
      char c = json[pos];
      if (c == ',') { ++pos; continue; }
      if (c == ']') {
        if (!h.after_hole || LooksLikeArrayEnd(json, pos + 1)) return pos + 1;
        pos = NextEventStart(json, pos + 1);  // an array of the event the scan resumed in
        continue;
      }
      if (c == '\0') {
        pos = SkipNulsBetweenEvents(json, pos, &h);
        continue;
      }
      // After a hole, text that is not an event (the rest of one the hole
      // cut, `}` or `:` of one the scan resumed in) is skipped, not counted.
      if (h.after_hole && c != '{') {
        pos = NextEventStart(json, pos + 1);
        continue;
      }
      const auto [end, done] = ScanAcrossNuls(json, pos, c, &h);
      if (done) {
        pos = end;
        continue;
      }
      if (end == std::string_view::npos) {
        ++report->events_read;
        report->dropped.Add(DropReason::kTruncated);
        Error(absl::DataLossError("input ends inside an event object (truncated)"), pos);
        return std::string_view::npos;
      }
      if (end == pos) {  // a stray `}` or `:`
        Error(absl::DataLossError(absl::StrCat("unexpected '", AbslView(std::string_view(&json[pos], 1)),
                                               "' in event array")),
              pos);
        ++pos;
        continue;
      }
      if (c == '{') {
        TolerantObject(json, pos, end, false);
      } else {
        ++report->events_read;
        report->dropped.Add(DropReason::kNotAnObject);
      }
      pos = end;
    }
  }

  void Tolerant(std::string_view json, bool* is_trace) {
    const size_t n = json.size();
    size_t pos = json.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
    pos = SkipWhitespace(json, pos);
    if (pos >= n) return;
    if (json[pos] == '[') {
      *is_trace = true;
      size_t end = TolerantEvents(json, pos + 1);
      if (end != std::string_view::npos) CheckTrailing(json, end);
      return;
    }
    if (json[pos] != '{') {
      Error(absl::InvalidArgumentError("not JSON: expected `[` or `{`"), pos);
      return;
    }
    ++pos;
    while (true) {
      pos = SkipWhitespace(json, pos);
      if (pos >= n) {
        Error(absl::DataLossError("input ends inside the top-level object (truncated)"), pos);
        return;
      }
      char c = json[pos];
      if (c == ',') { ++pos; continue; }
      if (c == '}') {
        CheckTrailing(json, pos + 1);
        return;
      }
      if (c != '"') {
        Error(absl::DataLossError("expected a key in the top-level object"), pos);
        return;
      }
      size_t key_end = SkipJsonValue(json, pos);
      if (key_end == std::string_view::npos) {
        Error(absl::DataLossError("input ends inside a top-level key (truncated)"), pos);
        return;
      }
      std::string_view key_body = json.substr(pos + 1, key_end - pos - 2);
      pos = SkipWhitespace(json, key_end);
      if (pos >= n || json[pos] != ':') {
        Error(absl::DataLossError("expected `:` after a top-level key"), pos);
        return;
      }
      pos = SkipWhitespace(json, pos + 1);
      if (key_body == "traceEvents" && pos < n && json[pos] == '[') {
        *is_trace = true;
        pos = TolerantEvents(json, pos + 1);
        if (pos == std::string_view::npos) {
          // A closed object format whose array was cut: an error unless the
          // array merely lacks `]` at the very end of the input.
          if (report->status.ok())
            Error(absl::DataLossError("input ends inside traceEvents (truncated)"), n);
          return;
        }
        continue;
      }
      size_t end = SkipJsonValue(json, pos);
      if (end == std::string_view::npos) {
        Error(absl::DataLossError(absl::StrCat("input ends inside top-level key \"", AbslView(key_body),
                                               "\" (truncated)")),
              pos);
        return;
      }
      TopLevel(key_body, json.substr(pos, end - pos));
      pos = end;
    }
  }

  void CheckTrailing(std::string_view json, size_t pos) {
    pos = SkipWhitespace(json, pos);
    // NUL padding after the document (preallocated files) is not an error.
    pos += NulRun(json, pos);
    pos = SkipWhitespace(json, pos);
    if (pos < json.size()) Warn(absl::StrCat("ignored ", json.size() - pos, " bytes after the JSON document"));
  }
};

TefDecoder::TefDecoder() : impl_(new Impl) {}
TefDecoder::~TefDecoder() { delete impl_; }

void TefDecoder::set_scan_path(bool on) { impl_->scan_enabled = on; }
bool TefDecoder::scanned() const { return impl_->scanned; }

DecodeReport TefDecoder::Decode(std::string_view json, size_t capacity, TraceBuilder* builder) {
  DecodeReport report;
  Impl& m = *impl_;
  m.b = builder;
  m.report = &report;
  m.base = json.data();
  m.repaired.clear();
  m.ForgetLastStrings();
  m.warned_duplicate = m.warned_id2 = m.warned_repair = m.nuls_kept = false;
  m.logger_warnings = 0;
  bool is_trace = false;
  // simdjson rejects a leading BOM; a view past it keeps the padding.
  size_t skip = json.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  m.fast = true;
  // Kineto spends 200-450 bytes per event (bench/RESULTS.md); a denser
  // input regrows the vector once or twice.
  builder->ReserveEvents(json.size() / 160);
  builder->DeriveMemoryCounters(true);
  // StartOver: nothing from a path that gave up is kept.
  auto start_over = [&] {
    builder->Reset();
    m.ForgetLastStrings();
    report = DecodeReport{};
    m.warned_duplicate = m.warned_id2 = m.warned_repair = m.nuls_kept = false;
    m.logger_warnings = 0;
    is_trace = false;
  };
  const bool padded = capacity >= json.size() + simdjson::SIMDJSON_PADDING;
  // The scan path where the fast path would run (and within its 4 GiB).
  m.scanned = false;
  if (m.scan_enabled && padded && json.size() < m.parser.max_capacity()) {
    m.scanning = true;
    m.scanned = m.Scan(json.substr(skip), &is_trace);
    m.scanning = false;
    m.scanned_ts = m.scanned_dur = Impl::ScannedTime{};  // a declined event's
    if (!m.scanned) start_over();
  }
  error_code err = m.scanned ? SUCCESS
                   : padded  ? m.Fast(json.substr(skip), capacity - skip, &is_trace)
                             : simdjson::INSUFFICIENT_PADDING;
  m.fast = false;
  if (err != SUCCESS) {
    // Start over on the tolerant path.
    start_over();
    report.tolerant = true;
    m.Tolerant(json, &is_trace);
    if (report.status.ok() && err != simdjson::TRAILING_CONTENT && report.warnings.size() == m.logger_warnings &&
        report.dropped.Total() == 0) {
      // simdjson refused something the tolerant path accepted silently
      // (e.g. a trailing comma, invalid UTF-8 repaired in place).
      report.warnings.push_back(absl::StrCat("repaired input that strict JSON parsing rejects (",
                                             simdjson::error_message(err), ")"));
    }
  }
  if (uint64_t n = builder->ApplyTimeBase(); n > 0) {
    report.dropped.Add(DropReason::kBadTs, n);
    m.Warn(absl::StrCat(n, " events dropped: ts plus baseTimeNanoseconds is outside +-2^62 ns"));
  }
  if (!is_trace && report.status.ok()) {
    report.status = absl::InvalidArgumentError(
        "not a Trace Event Format file: no traceEvents array (a JSON object without `traceEvents`)");
    builder->Reset();
    report.events_read = 0;
    report.dropped = DropCounts{};
  }
  if (const uint64_t derived = builder->derived_events()) {
    // Written (or dropped with their instant's ts), so counted as read.
    report.events_read += derived;
    m.Warn(absl::StrCat(derived, " memory counter samples derived from [memory] events (counted as events read)"));
  }
  // A caller that copies these events into another builder must not derive
  // them again there (smdebug's framework decoder; trace_data.h).
  builder->DeriveMemoryCounters(false);
  m.b = nullptr;
  m.report = nullptr;
  return report;
}

}  // namespace tracemill::formats
