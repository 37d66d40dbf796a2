#pragma once
// ChromeWriter: a streaming Trace Event Format writer (JSON Object Format).
//
// Output shape, one event per line:
//   {"displayTimeUnit":"ms","otherData":{...},"traceEvents":[
//   {"ph":"M",...},
//   {"ph":"X","name":"...","pid":3,"tid":7,"ts":1682725897226747.123,"dur":68},
//   ...
//   ]}
// Timestamps are exact decimal microseconds from int64 ns (no printf, no
// double). Strings were sanitized when decoded, so bytes are copied as is.
// Process metadata is rewritten so names carry the rank ("rank 3 · GPU 3")
// and `process_sort_index` orders processes rank-major.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "formats/chrome/output_file.h"
#include "formats/common/byte_buffer.h"
#include "formats/common/trace_data.h"
#include "formats/common/ts_text.h"

namespace tracemill::formats {

// WriterInput: one input of an output, with its output ids.
struct WriterInput {
  const TraceData* data = nullptr;
  std::vector<int64_t> out_pid;    // local pid index -> output pid
  // PidText: an output pid's decimal text (len 0: longer than 16
  // characters, formatted each time), stored whole by FormatEvent.
  struct PidText {
    char text[16] = {};
    uint8_t len = 0;
  };
  std::vector<PidText> pid_text;   // local pid index -> its output pid's text; may be empty
  // SetOutPids sets out_pid and pid_text (every event's pid is written from
  // its text: std::to_chars was ~40 instructions a pid).
  void SetOutPids(std::vector<int64_t> pids);
  std::vector<uint32_t> pid_order; // local pids in the order they are listed
  uint64_t id_base = 0;            // output id = id_base + local id
  std::string label;               // "rank 3" or the file name; plain UTF-8
  uint64_t events_written = 0;     // counted by the writer
  int64_t clock_shift_ns = 0;      // added to every ts (clock alignment, pipeline/clocks/clocks.h)
};

// ChromeWriter: (WriterInput, Event)... -> one Trace Event Format file.
class ChromeWriter {
 public:
  // `ts_offset_ns` is subtracted from every ts (0, or the job's first event
  // with --relative-time). `out` is borrowed.
  ChromeWriter(OutputFile* out, int64_t ts_offset_ns) : out_(out), ts_offset_ns_(ts_offset_ns) {}

  // Begin writes the header; `other_data_json` is a complete JSON object.
  absl::Status Begin(std::string_view display_time_unit, std::string_view other_data_json);
  // WriteProcessMetadata writes `process_name` / `process_sort_index` for the
  // processes of `in` that the input does not name or order itself.
  absl::Status WriteProcessMetadata(WriterInput& in);
  // WriteEvent writes one event of `in` (CountEvent + FormatEvent + flush).
  absl::Status WriteEvent(WriterInput& in, const Event& e);

  // Formatting on other threads (pipeline/parallel_write.h): the caller
  // counts each event in output order (CountEvent), formats batches with
  // FormatEvent on any thread, and appends the batches' bytes in order
  // (AppendFormatted). The bytes are those WriteEvent would have written.
  //
  // CountEvent counts one event of `in` and returns true if it is the first
  // entry of the traceEvents array (its separator is "\n", else ",\n").
  bool CountEvent(WriterInput& in) {
    ++events_;
    ++in.events_written;
    const bool first = first_;
    first_ = false;
    return first;
  }
  // FormatEvent appends event `e` of `in`, preceded by its separator, to
  // `out`. `ts_offset_ns` as the constructor's. Reads `in` only: safe on
  // several threads at once. The bytes are written in place: `out` grows
  // once by a bound (FormatBound) and is cut back to what was written.
  // `ts_text`, if given, formats the ts (the caller's, for a run of events
  // in time order: MicrosText); same bytes.
  static void FormatEvent(const WriterInput& in, const Event& e, int64_t ts_offset_ns, bool first,
                          ByteBuffer* out, MicrosText* ts_text = nullptr);
  // FormatBound: the most bytes FormatEvent writes for `e` of `in` (not a
  // process_name or process_sort_index event, which it writes by appends):
  // separator, keys, punctuation and numbers at their longest, and the
  // lengths of its ph, name, cat, tid and rest.
  static size_t FormatBound(const WriterInput& in, const Event& e) { return FormatBound(*in.data, e); }
  // The same from the event's trace alone (what the writer's input adds to
  // FormatEvent's bytes is bounded by the numbers' longest).
  static size_t FormatBound(const TraceData& data, const Event& e);
  // IsProcessMeta: `e` is a process_name or process_sort_index record of
  // `data`, which FormatEvent writes by appends (AppendProcessMeta, with the
  // writer input's label and pid): FormatBound does not hold for it.
  static bool IsProcessMeta(const TraceData& data, const Event& e);
  // SumBounds: FormatBound summed over `data`'s events but the process
  // metadata records (IsProcessMeta), whose positions go to `*meta`; bytes.
  static uint64_t SumBounds(const TraceData& data, std::vector<uint32_t>* meta);
  // EntryBound: the most bytes FormatEvent writes for any event `e` of `in`
  // (FormatBound, or a process_name or process_sort_index event's size).
  static size_t EntryBound(const WriterInput& in, const Event& e);
  // AppendFormatted writes bytes from FormatEvent; `ends` holds the end
  // offset of each event in them. A gzip output gets the members WriteEvent
  // would have given it (a member ends after the event that fills the 1 MiB
  // buffer), so its bytes do not depend on the batching; a plain one is
  // appended as is. Reports the file's write errors.
  // `crc`, if given, is the CRC-32 of `bytes` (computed where they were
  // formatted: OutputFile::AppendWithCrc). With `crc` and `reserved`, a
  // plain file written with direct I/O leaves the copy of `bytes` into its
  // ring to the caller (*reserved, OutputFile::ReserveWithCrc); otherwise
  // *reserved stays none.
  absl::Status AppendFormatted(std::string_view bytes, const std::vector<uint32_t>& ends,
                               std::optional<uint32_t> crc = std::nullopt,
                               DirectRing::Reservation* reserved = nullptr);
  // Whether the file is gzip (its CRC is of the members, not of the bytes).
  bool gzip() const { return out_->gzip(); }
  int64_t ts_offset_ns() const { return ts_offset_ns_; }
  // Nanoseconds its appends have waited for the disk (OutputFile's).
  int64_t disk_wait_ns() const { return out_->disk_wait_ns(); }
  // Finish closes the array and the object and flushes (does not Commit).
  absl::Status Finish();

  uint64_t events_written() const { return events_; }
  uint64_t metadata_added() const { return metadata_added_; }
  // Bytes produced so far (before gzip): those handed to the file and those
  // still buffered.
  uint64_t bytes_produced() const { return appended_ + buf_.size() + static_cast<uint64_t>(span_pos_ - span_begin_); }
  // Whether the traceEvents array has no entry yet (the next one's
  // separator is "\n"); NoteEntry records one appended through
  // AppendFormatted whose separator the caller chose.
  bool array_empty() const { return first_; }
  // AppendEntry buffers the bytes of one formatted entry (its separator
  // chosen by the caller) and flushes as WriteEvent does.
  absl::Status AppendEntry(std::string_view bytes) {
    buf_.Append(bytes);
    return MaybeFlush();
  }
  void NoteEntry() { first_ = false; }

 private:
  absl::Status MaybeFlush();
  // FormatInto writes what FormatEvent appends for `e` (not a process
  // metadata record) at `o`, at most FormatBound bytes; returns the end.
  static char* FormatInto(const WriterInput& in, const Event& e, int64_t ts_offset_ns, bool first, char* o,
                          MicrosText* ts_text);
  // WriteInSpan: WriteEvent's event formatted in place in the file's ring
  // (OutputFile::OpenSpan), if it gives room for FormatBound; false if not.
  bool WriteInSpan(const WriterInput& in, const Event& e, bool first);
  // CommitSpan hands what was formatted in the span to the file (Emit does
  // first, so that the file gets the bytes in order).
  void CommitSpan();
  absl::Status Emit(std::string_view bytes, std::optional<uint32_t> crc = std::nullopt);  // out_->Append, counted
  absl::Status EmitBuffer();  // Emit(buf_) and clear it
  static void AppendProcessName(const WriterInput& in, uint32_t pid, std::string* out);
  // AppendProcessMeta: the `name` event (process_name or
  // process_sort_index) of local process `pid`, with its output pid and
  // name, preceded by its separator.
  static void AppendProcessMeta(const WriterInput& in, uint32_t pid, std::string_view name, bool first,
                                std::string* out);

  OutputFile* out_;
  int64_t ts_offset_ns_;
  MicrosText ts_text_;  // WriteEvent's events' ts
  ByteBuffer buf_;  // bytes not yet handed to out_
  bool first_ = true;
  uint64_t events_ = 0;
  uint64_t metadata_added_ = 0;
  uint64_t appended_ = 0;  // bytes handed to out_
  // The span WriteEvent formats into (a plain file written with direct
  // I/O): [span_begin_, span_pos_) written, up to span_end_.
  char* span_begin_ = nullptr;
  char* span_pos_ = nullptr;
  char* span_end_ = nullptr;
  bool no_span_ = false;  // the file gives none (gzip, buffered, in memory)
};

}  // namespace tracemill::formats
