#pragma once
// Paddle network logs (`net/<name>.<trainer>`, JSON Lines: formats/paddle/
// net_log.h) in the format registry (formats/registry.h), decoded for
// `tracemill convert` by `DecodeNetLogToTrace`.
#include <string_view>

#include "formats/common/decode_report.h"
#include "formats/common/trace_data.h"
#include "formats/registry.h"

namespace tracemill::formats {

// NetLogFormat: "paddle_net_log", a file whose first line is a network
// sample (`LooksLikeNetLog`): JSON Lines, or what Sniff calls a JSON object
// when the second line is damaged or missing (registered before the JSON
// Object Format, which a network log's first line never is: it has no
// `traceEvents`). Planned undetermined, as every JSON Lines
// input: its output follows from the trainer in its file name and the
// job's GPUs per node, known once the pre-scan is done.
const InputFormat& NetLogFormat();

// DecodeNetLogToTrace decodes one network log into `out`: every kept sample
// a counter (`C`) event named `tx` or `rx` (args: the line's `args`), on a
// process of its own, string pid `"network"`; the file's `.N` suffix is a
// trainer, not a rank (`InputMetadata::name_number_is_trainer`: the
// pipeline puts the log on the trainer's first GPU, rank N x GPUs per
// node). `name` names the file in messages. Status: OK, or kDataLoss for a
// bad line (its events kept, the line counted as dropped).
DecodeReport DecodeNetLogToTrace(std::string_view name, std::string_view text, TraceBuilder* out);

}  // namespace tracemill::formats
