#pragma once
// IoPool: a few threads that run blocking reads ahead of the merge.
//
// A spilled run is streamed back during its output's merge (sorted_run.h).
// Read on the merge's own thread, every refill waited for the disk: on the
// 512-rank job (issue 34) the merge threads spent 11 s of a 53 s job in
// direct reads. Each spilled run therefore keeps one read of its next chunk
// in flight on this pool while its current chunk is merged; kIoThreads
// threads keep that many reads queued at the disk.
#include <cstddef>
#include <functional>
#include <future>

#include "absl/status/statusor.h"

namespace tracemill::merge {

inline constexpr int kIoThreads = 4;

// RunRead runs `read` on an I/O thread (started at the first call) and
// returns its result's future. Without threads (the process cannot start
// one: ulimit -u) it runs `read` here, and the future is ready. Thread-safe.
std::future<absl::StatusOr<size_t>> RunRead(std::function<absl::StatusOr<size_t>()> read);

}  // namespace tracemill::merge
