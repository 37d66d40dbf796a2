#pragma once
// OutputParts: one output written as one Chrome trace or, once it would grow
// past `max_bytes`, as consecutive time parts a viewer can open
// (`gpu3.part-001.trace.json`, `gpu3.part-002.trace.json`, ...).
//
// Why: Chrome's trace viewer reads a file into one JavaScript string (V8's
// limit: 2^29 - 24 characters, about 512 MiB) and Perfetto UI parses JSON in
// a WebAssembly heap of about 2 GB, several times the file; a per-GPU output
// of a 1,024-rank job is 5-6 GB. Hence --max-output-bytes (default 256M).
//
// Rules, byte-identical whatever the thread count or shard:
// - Events come in merge (time) order; each goes into the part where it
//   starts. A part is closed before the event that would take it past the
//   bound (the JSON text, before gzip), never before its first timed event.
// - A span is never cut: while a `B`/`E` pair is open the cut waits, up to
//   1/8 of the bound past it; if a pair is still open then, the cut happens
//   and the part records how many (`spans_cut`).
// - Each part is a complete trace: header, the synthesized process
//   metadata, and a replay of the inputs' own metadata records (`M`, which
//   sort first), then its events. Replayed records are not counted again as
//   events written. Parts 2 and later say which part they are in
//   otherData.part; part 1 does not: its header is written (and may be
//   flushed) before the first cut shows the output needs parts, and an
//   output that never splits must stay the bytes of an unsplit one. The
//   manifest's `parts` list is the source of truth.
// - Each part records its first start, its latest end (a long span may run
//   past later parts' starts) and its last start: the ranges of starts of
//   consecutive parts follow one another (manifest `starts_ns`).
// - A flow whose events fall in two parts keeps both; each part counts its
//   flows that reach into an earlier part (`flows_across_parts`).
// - Parts stay temporaries until the output is complete; Commit renames them
//   all (an interrupted output leaves none).
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "formats/chrome/chrome_writer.h"
#include "formats/chrome/output_file.h"
#include "formats/common/byte_buffer.h"
#include "pipeline/output/manifest.h"

namespace tracemill::pipeline {

// PartName: "<stem>.part-NNN.trace.json[.gz]" of output `name`
// ("gpu3.trace.json") for part `k` (1-based, at least 3 digits).
std::string PartName(const std::string& name, int k);

class OutputParts {
 public:
  struct Options {
    std::string dir;            // OUTDIR
    std::string name;           // the output's file name ("gpu3.trace.json")
    bool compress = false;
    bool direct_io = true;
    uint64_t max_bytes = 0;     // 0: never split
    int64_t ts_offset_ns = 0;   // ChromeWriter's
    std::string time_unit;      // displayTimeUnit
    std::atomic<uint64_t>* job_output_bytes = nullptr;  // drop-behind (output_file.h)
    // The otherData object of part `k` (1-based; 0: the output is one file so far).
    std::function<std::string(int k)> other_data;
  };

  // `winputs` are the output's inputs (borrowed; they count events written).
  OutputParts(Options opts, std::vector<formats::WriterInput>& winputs);
  ~OutputParts();

  // Begin opens the first file: header and process metadata.
  absl::Status Begin();

  // The writer interface of WriteMerged (merge_write.h), as ChromeWriter's:
  // CountEvent counts an event of `in` in output order and says whether it
  // is the first entry of the first part's array; WriteEvent formats and
  // adds one event; AppendFormatted adds a formatted batch (`events` are the
  // batch's events, `ends` their end offsets in `bytes`).
  // Called by the merge stage while the append stage may be adding parts:
  // through the first writer's own pointer, never through `writers_`
  // (a push_back moves its array under the reader: a use after free, UBSan).
  bool CountEvent(formats::WriterInput& in) { return first_writer_->CountEvent(in); }
  absl::Status WriteEvent(int run, formats::WriterInput& in, const formats::Event& e);
  // Tracked: what a part records of consecutive events (their count, times,
  // B/E balance and flow events in order), made on any thread (Add) and
  // added to the current part in order: the same as tracking each event.
  struct Tracked {
    uint64_t events = 0;
    bool has_span = false;  // the times below are set
    int64_t first_ts_ns = 0, last_ts_ns = 0, last_start_ns = 0;
    int64_t open_spans = 0;                          // B minus E
    std::vector<std::pair<uint64_t, bool>> flows;   // flow key, and whether the event ends its flow
    void Clear() {  // keeps the flows' capacity
      events = 0;
      has_span = false;
      first_ts_ns = last_ts_ns = last_start_ns = open_spans = 0;
      flows.clear();
    }
    // Add: event `e` of run `run`, whose clock is shifted by `shift_ns`.
    void Add(int run, const formats::Event& e, int64_t shift_ns);
  };
  // tracks: whether AppendFormatted wants a batch's Tracked (the output
  // may be cut into parts).
  bool tracks() const { return opts_.max_bytes != 0; }
  // KeepWholeIfFits (after Begin): `entry_bytes` is the most the entries
  // still to come can take (ChromeWriter::EntryBound over them); if they fit
  // under max_bytes with what is written, no cut can come, and the output
  // is one file whose events are not tracked for parts (tracks() false;
  // the same bytes: a part is cut only past the bound). True if so.
  bool KeepWholeIfFits(uint64_t entry_bytes);
  // EntryRoom (after Begin): the entry bytes KeepWholeIfFits would still
  // accept (0 if none), or nullopt if there is nothing to decide (no bound,
  // or a part already cut). Lets a caller stop summing bounds past it.
  std::optional<uint64_t> EntryRoom() const;
  // `reserved`: as ChromeWriter::AppendFormatted's, when the batch goes
  // into the current part whole; `tracked` (if tracks()): the batch's
  // events tracked where they were formatted.
  absl::Status AppendFormatted(std::string_view bytes, const std::vector<uint32_t>& ends,
                               const std::vector<std::pair<int, formats::Event>>& events,
                               std::optional<uint32_t> crc = std::nullopt,
                               formats::DirectRing::Reservation* reserved = nullptr,
                               const Tracked* tracked = nullptr);
  bool gzip() const { return opts_.compress; }
  int64_t ts_offset_ns() const { return opts_.ts_offset_ns; }
  // Nanoseconds the parts' appends and copies have waited for the disk
  // (OutputFile's). Called by the append stage, or after it.
  int64_t disk_wait_ns() const {
    int64_t ns = 0;
    for (const auto& f : files_) ns += f->disk_wait_ns();
    return ns;
  }

  // Finish closes the last part's array and seals every file.
  absl::Status Finish();
  // Commit renames the file, or every part, into place.
  absl::Status Commit();

  // After Finish: events written (first part's count: every event once),
  // synthesized metadata records (all parts), bytes on disk (all parts),
  // the CRC-32 of the single file, and the parts (empty if one file).
  uint64_t events_written() const { return writers_.front()->events_written(); }
  uint64_t metadata_added() const;
  uint64_t bytes_written() const;
  uint32_t crc32() const { return files_.front()->crc32(); }
  const std::vector<OutputPart>& parts() const { return parts_; }
  // The files this output occupies when committed (its name, or its parts').
  std::vector<std::string> FinalNames() const;

 private:
  // Add appends one formatted event (its separator first), cutting first if
  // it would take the part past the bound.
  absl::Status Add(int run, const formats::Event& e, std::string_view bytes);
  // Cut closes the current part and opens the next.
  absl::Status Cut();
  absl::Status OpenFile(const std::string& name);
  // Appends an entry to the current part, fixing its separator when it is
  // the first of the part's array.
  absl::Status AppendEntry(std::string_view bytes);
  bool CutDue(const formats::Event& e, size_t bytes) const;
  // Track: one event into the current part (Apply of its Tracked).
  void Track(int run, const formats::Event& e);
  void Apply(const Tracked& t);

  Options opts_;
  std::vector<formats::WriterInput>& winputs_;
  std::vector<std::unique_ptr<formats::OutputFile>> files_;
  std::vector<std::unique_ptr<formats::ChromeWriter>> writers_;
  formats::ChromeWriter* first_writer_ = nullptr;  // writers_.front(), stable while parts are added
  std::vector<OutputPart> parts_;  // one per part, the current one last (only once split)
  OutputPart current_;             // the part being written
  std::string metadata_replay_;    // the inputs' own `M` records, formatted
  bool timed_seen_ = false;        // a timed event was added (the replay is complete)
  int64_t open_spans_ = 0;         // B/E pairs open in the stream
  // Flow ids (run, id) -> part where they were first seen, while open.
  absl::flat_hash_map<uint64_t, int> open_flows_;
  formats::ByteBuffer scratch_;
  Tracked one_;  // Track's
};

}  // namespace tracemill::pipeline
