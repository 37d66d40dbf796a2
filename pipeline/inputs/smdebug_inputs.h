#pragma once
// smdebug profiler folders in a convert job: grouping files into per-node
// records, and decoding one such record (InputRecord -> TraceData).
//
// A SageMaker Debugger job leaves thousands of small files (formats/smdebug/
// smdebug_layout.h). One run per file would cost one TraceData (two arenas,
// intern tables) and one merge input each, and a node's phases would be
// split across as many processes as it has files; so the files of one node
// and kind (framework timelines, or system metrics) form one input record,
// decoded file after file by one worker into one TraceBuilder. Peak memory
// then grows with the events kept (bounded by the budget and spilling), not
// with the number of files.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "formats/chrome/tef_decoder.h"
#include "formats/common/trace_data.h"
#include "formats/registry.h"
#include "formats/smdebug/system_metrics_format.h"
#include "pipeline/inputs/input_record.h"

namespace tracemill::pipeline {

// SmdebugJobRoot: the job folder of a layout path, what precedes
// `<folder>/` (`folder`: "framework" or "system"); else the file's folder.
std::string SmdebugJobRoot(std::string_view path, std::string_view folder);

// GroupSmdebugInputs replaces, in `records` (files in path order, as
// ExpandInputs lists them), the smdebug framework timelines and the
// system-metrics files under `system/` by one record per (job folder, node,
// kind), members in time order, placed where the first member was; the rank
// comes from the node id (`SmdebugNodeRank`). A TF profiler trace becomes a
// one-member record with the start time of the `.metadata` marker of its
// step folder (or a warning that times stay relative). Marker files are
// dropped from the list (their name is their content); framework files still
// being written (`*.tmp`) stay as skipped records with a note; with
// `no_system_metrics` the system-metrics files are skipped records too.
void GroupSmdebugInputs(std::vector<InputRecord>* records, bool no_system_metrics);

// AttachContextFiles gives each grouped system-metrics record (a node) the
// `paths` of its own job folder and node (a follow window's context files,
// ConvertOptions::follow_context_files); paths of no record's node are ignored.
void AttachContextFiles(const std::vector<std::string>& paths, std::vector<InputRecord>* records);

// ReadMember reads (and inflates) one member file: the bytes, and the
// capacity of their allocation (>= size + SIMDJSON_PADDING). The view stays
// valid until the next call.
using ReadMember = std::function<absl::StatusOr<std::pair<std::string_view, size_t>>(const std::string& path)>;

// DecodeSmdebugGroup decodes every member of `r` (a grouped record) with
// `read` and returns the node's data; per-file counts, warnings and the
// first error (with `error_file` and its byte offset) go into `r`. A member
// that cannot be read or is no trace is an error of the record; the others
// are still decoded. `settings`: the low-GPU threshold (percent) and cuts.
// A system-metrics record's context files are read for their GPU samples
// only (SystemMetricsDecoder::AddFile); one that cannot be read is ignored.
std::unique_ptr<formats::TraceData> DecodeSmdebugGroup(InputRecord& r, const ReadMember& read,
                                                       formats::TefDecoder* tef,
                                                       const formats::DecodeSettings& settings);

// A system-metrics file given on its own is a format of the registry
// (formats/smdebug/system_metrics_format.h).
using formats::DecodeSystemMetricsFile;

}  // namespace tracemill::pipeline
