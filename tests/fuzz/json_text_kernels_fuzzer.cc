// Fuzzes json_text's byte loops on every byte kernel this CPU runs
// (formats/common/byte_kernel.h, issue 38): AppendSanitizedJson (its
// one-pass copy and, when that refuses, its repairing path),
// AppendSanitizedStringBody, JsonStringEnd at every offset and
// CopyCleanJsonString on the input's first string token.
// Oracles: no crash; every kernel gives the scalar kernel's results and
// bytes; the one-pass copy agrees with the general path (result and bytes).
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/byte_kernel.h"
#include "formats/common/json_text.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace tracemill::formats;

// Everything one kernel makes of `in`, as text.
std::string Results(std::string_view in) {
  std::string r, out;
  const SanitizeResult fast = AppendSanitizedJson(in, &out);
  r += std::to_string(static_cast<int>(fast)) + "|" + out + "|";
  std::string general;
  const SanitizeResult slow = internal::AppendSanitizedJsonGeneral(in, &general);
  TM_FUZZ_CHECK(fast == slow && out == general);
  out.clear();
  r += std::to_string(AppendSanitizedStringBody(in, &out)) + "|" + out + "|";
  // Every offset near the start, then sparser (each call may scan to the end).
  for (size_t at = 0; at < in.size(); at += 1 + at / 64) r += std::to_string(JsonStringEnd(in, at)) + ",";
  const size_t q = in.find('"', 1);
  const std::string_view token = in.substr(0, q == std::string_view::npos ? in.size() : q + 1);
  std::string copy(token.size() + 1, '\0');
  char* end = CopyCleanJsonString(token, copy.data());
  r += end ? std::string(copy.data(), end) : std::string("null");
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<ByteKernel> kernels = RunnableByteKernels();
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  SetByteKernel(ByteKernel::kScalar);
  const std::string scalar = Results(in);
  for (ByteKernel k : kernels) {
    SetByteKernel(k);
    TM_FUZZ_CHECK(Results(in) == scalar);
  }
  return 0;
}
