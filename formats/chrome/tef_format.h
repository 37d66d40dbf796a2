#pragma once
// Trace Event Format JSON (Kineto, Horovod, any Chrome trace) in the format
// registry (formats/registry.h): the JSON Array Format (`[...]`) and the JSON
// Object Format (`{"traceEvents":[...], ...}`), one decoder (`TefDecoder`)
// shared by both.
#include "formats/chrome/tef_decoder.h"
#include "formats/registry.h"

namespace tracemill::formats {

// The two registry entries: "trace_event_json_array" (shape `[`) and
// "trace_event_json_object" (shape `{`, not JSON Lines).
const InputFormat& TefArrayFormat();
const InputFormat& TefObjectFormat();

// TefDecoderOf: the worker's TefDecoder in `set` (smdebug's framework files
// are Trace Event Format documents decoded through it).
TefDecoder& TefDecoderOf(DecoderSet& set);

}  // namespace tracemill::formats
