#pragma once
// Run event logs of training orchestrators (JSON Lines: `time`, `kind`,
// `rank`, `data`) in the format registry (formats/registry.h).
#include "formats/registry.h"

namespace tracemill::formats {

// RunEventLogFormat: "run_event_log": any JSON Lines input that no earlier
// entry claims (the decoder rejects one in which no line has both `time`
// and `kind`). Planned undetermined: a log is the whole job (unranked).
const InputFormat& RunEventLogFormat();

}  // namespace tracemill::formats
