#pragma once
// Paddle profiler protobuf (`paddle.platform.proto.Profile`, one per rank:
// `profile/profile.<rank>`) in the format registry (formats/registry.h),
// decoded for `tracemill convert` by `DecodePaddleToTrace`.
#include "formats/registry.h"

namespace tracemill::formats {

// PaddleProfileFormat: "paddle_profile", recognized by its wire shape
// (LooksLikePaddleProfile, checked by Sniff before JSON). A profile holds
// no rank: the pre-scan plans it by its file name's `.N` suffix.
const InputFormat& PaddleProfileFormat();

}  // namespace tracemill::formats
