// Fuzzes the whole per-input path of `tracemill convert`: bytes -> gzip ->
// detect -> decode -> sort (`pipeline::DecodeInput`, the graph's decode node)
// -> namespace -> merge -> ChromeWriter into memory. The output must be
// strict JSON with timed events in non-decreasing ts (tests/fuzz/fuzz_util.h).
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tracemill::fuzz::ConvertAndCheck({reinterpret_cast<const char*>(data), size});
  return 0;
}
