#pragma once
// `dcgmi dmon` logs (formats/dcgm/dcgm_reader.h) in the format registry
// (formats/registry.h), decoded for `tracemill convert` by DecodeDcgmToTrace:
// a Paddle job folder's `dcgm/<name>.<trainer>` files are drawn beside the
// trainer's profiles, as `tracemill csp` draws them.
#include <string_view>

#include "formats/common/decode_report.h"
#include "formats/common/trace_data.h"
#include "formats/registry.h"

namespace tracemill::formats {

// DcgmFormat: "dcgm_dmon", a text file whose head LooksLikeDcgmDmon
// (registered first: its text may look like a protobuf wire start to
// Sniff). Planned undetermined, as a network log: its output follows from
// the trainer in its file name and the job's GPUs per node.
const InputFormat& DcgmFormat();

// DecodeDcgmToTrace decodes one dmon log into `out`: every kept `GPU <n>`
// row one counter (`C`) event named `GPU <n>` at TIMESTAMP (exact ns), on
// the string pid `"DCGM"`, its args the 14 columns CrossStackProfiler
// plots as written (GPUTL in percent; shortest decimal of the parsed
// double). Rows with N/A are dropped (`na_sample`), rows with the wrong
// number of columns or before a header too (`bad_row`), rows whose
// TIMESTAMP is more than 2^62 ns from the epoch (`bad_ts`, as in every
// format), each counted and said in a warning. The file's `.N` suffix is a trainer
// (`InputMetadata::name_number_is_trainer`). A log without the columns
// CrossStackProfiler needs is skipped with a note saying which are missing
// (nothing drawn). `name` names the file in warnings.
DecodeReport DecodeDcgmToTrace(std::string_view name, std::string_view text, TraceBuilder* out);

}  // namespace tracemill::formats
