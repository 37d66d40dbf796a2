#pragma once
// Network logs of a Paddle job, as Paddle's CrossStackProfiler reads them
// (`<root>/net/<anything>.<trainer>`, one file per trainer), and the
// counters tracemill draws from them.
//
// CrossStackProfiler has a reader for these logs (tools/CrossStackProfiler/
// NetFileReader.py, `netFileReader._parseSingleFile`) that its reporter never
// calls (CspReporter.py leaves `netInfo` empty). What that reader expects is
// all the format there is, and it is what tracemill reads:
//   {"name": "tx", "ph": "C", "ts": 1700000000123.25, "args": {"bytes": 1048576}}
//   {"name": "rx", "ph": "C", "ts": 1700000000123.25, "args": {"bytes": 524288}}
// - one JSON object per line (`json.loads(line.strip())`); a line that is not
//   one is skipped with a warning by the reference, dropped and counted here;
// - `name`: `tx` (sent) or `rx` (received); the reference files every name
//   but `tx` under rx, tracemill drops any other name (`bad_net_sample`);
// - `ts`: milliseconds since the epoch (the reference: `ts * 1e6` ns, through
//   a float); parsed here from its decimal text to exact int64 ns
//   (`ParseMillisToNanos`), never through a double;
// - every other key is passed through by the reference. tracemill keeps
//   `args` (the counter's series, sanitized JSON) and accepts `ph` only as
//   `"C"` (a counter; anything else is `bad_net_sample`); other keys are
//   ignored with one warning per file.
// Blank lines are skipped (not counted). The first bad line makes the file
// damaged (kDataLoss, `net: <file>:<line>: <what>`, its byte offset); every
// good line is kept. A torn last line (no newline, cut mid-object, as a
// killed writer leaves it) is only a warning (`truncated`).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/decode_report.h"

namespace tracemill::formats {

enum class NetDirection : uint8_t { kTx, kRx };

// NetSample: one kept line.
struct NetSample {
  int64_t ts_ns = 0;        // `ts` (decimal ms) -> ns exactly; within +-kMaxAbsTimeNs
  NetDirection dir = NetDirection::kTx;
  size_t args_begin = 0;  // `args` as sanitized compact JSON: NetLogFile::args_text
  size_t args_len = 0;    // 0: the line had no `args`
  uint64_t line = 0;        // 1-based line number
};

// NetLogFile: the parsed content of one network log.
struct NetLogFile {
  std::vector<NetSample> samples;  // in file order
  std::string args_text;           // every kept `args` object, back to back
  // events_read: non-blank lines; dropped: `malformed`, `not_an_object`,
  // `missing_ts`, `bad_ts`, `bad_net_sample`, `truncated`; status OK or
  // kDataLoss (see the file comment); warnings (at most 20).
  DecodeReport report;

  std::string_view args(const NetSample& s) const { return std::string_view(args_text).substr(s.args_begin, s.args_len); }
};

// ParseNetLog parses the text of one network log (see the file comment).
// `file_name` names it in messages (`net: <file_name>:<line>: ...`). Never
// fails as a whole: bad lines are counted and dropped.
NetLogFile ParseNetLog(std::string_view file_name, std::string_view text);

// LooksLikeNetLog: the first line of `head` is a JSON object whose `name` is
// `"tx"` or `"rx"` and which has a `ts` (how `tracemill convert` tells a
// network log from other JSON Lines; formats/registry.h).
bool LooksLikeNetLog(std::string_view head);

// NetDirectionName: "tx" or "rx".
inline std::string_view NetDirectionName(NetDirection d) { return d == NetDirection::kTx ? "tx" : "rx"; }

}  // namespace tracemill::formats
