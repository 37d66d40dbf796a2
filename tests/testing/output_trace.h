#pragma once
// OutputTrace: a Chrome trace written by tracemill, read back for the tests.
//
// Read with simdjson On-Demand (not the product's decoder) so that numbers
// keep their exact text: `ts`, `dur`, `id` and `args` are stored as the raw
// JSON written, and strings are unescaped by a small decoder of our own.
// `.gz` outputs are inflated with zlib's gzread, which reads every member.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tracemill::testing {

// OutEvent: one element of traceEvents.
struct OutEvent {
  std::string ph, name, cat;   // decoded strings ("" if absent)
  std::optional<int64_t> pid;  // output pids are integers
  // Raw JSON text of these members ("" if absent).
  std::string tid, ts, dur, id, bind_id, id2, args;
  // Every member as (decoded key, raw JSON value), in output order.
  std::vector<std::pair<std::string, std::string>> members;

  // Raw JSON of member `key`, or nullopt.
  std::optional<std::string> Member(std::string_view key) const;
  // args.name decoded, for process_name / thread_name metadata; "" if absent.
  std::string ArgsName() const;
};

// OutInput: one element of otherData.inputs.
struct OutInput {
  std::string path;
  std::optional<int64_t> rank;
  std::string label;
  int64_t pid_lo = 0, pid_hi = 0;  // otherData.inputs[].pids
  std::string metadata;            // raw JSON of otherData.inputs[].metadata
};

class OutputTrace {
 public:
  // Load reads and parses `path`; on failure returns null and sets `*error`.
  static std::unique_ptr<OutputTrace> Load(const std::string& path, std::string* error);

  std::vector<std::string> top_level_keys;  // in output order
  std::string display_time_unit;
  std::string other_data;  // raw JSON
  std::vector<OutInput> inputs;
  std::vector<OutEvent> events;

  // process_name of each pid (decoded args.name).
  std::map<int64_t, std::string> ProcessNames() const;
  // Index in `inputs` whose pid range holds `pid`, or -1.
  int InputOfPid(int64_t pid) const;
  // Events with this phase / name.
  size_t CountPh(std::string_view ph) const;
  std::vector<const OutEvent*> Named(std::string_view name) const;
};

// UnescapeJsonString decodes the raw JSON string token `raw` (with quotes);
// nullopt if it is not a well-formed string.
std::optional<std::string> UnescapeJsonString(std::string_view raw);

// ReadMaybeGzip returns the bytes of `path`, inflated if it starts with the
// gzip magic (all members); nullopt on error.
std::optional<std::string> ReadMaybeGzip(const std::string& path);

}  // namespace tracemill::testing
