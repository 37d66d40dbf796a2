// Fuzzes the Trace Event Format decoder on the JSON Array Format: every input
// is an array (`[` is put in front unless the input starts with it), decoded
// on the fast and the tolerant path. Oracles: tests/fuzz/fuzz_util.h.
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tracemill::fuzz::DecodeAndCheck("[", {reinterpret_cast<const char*>(data), size});
  return 0;
}
