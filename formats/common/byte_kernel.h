#pragma once
// ByteKernel: the instruction set of tracemill's own byte loops (the JSON
// string scans and copies of json_text.cc), chosen once per process from
// what the CPU runs, as simdjson chooses its own kernel: the binary is built
// for baseline x86-64, and the AVX2 and AVX-512BW kernels run where the CPU
// has them. The default is DefaultByteKernel (SSE2: the wider ones measured
// no faster on this work); the others are there to be measured and chosen.
//
// Every kernel gives the same bytes (tests/formats/json_text_test.cc runs
// each against the scalar one; the golden tests run once per kernel the CI
// machine has). `$TRACEMILL_BYTE_KERNEL` (scalar, sse2, avx2, avx512bw) forces one, for
// tests and benchmarks; `convert --verbose` names the kernel in use.
#include <atomic>
#include <optional>
#include <string_view>
#include <vector>

namespace tracemill::formats {

// The kernels, narrowest first.
enum class ByteKernel : int {
  kScalar = 0,  // a byte at a time: any CPU
  kSse2 = 1,    // 16 bytes a step: every x86-64 CPU
  kAvx2 = 2,    // 32 bytes a step, then 16
  kAvx512bw = 3,  // 64 bytes a step (AVX-512 F and BW), then 32, then 16
};
inline constexpr int kByteKernelCount = 4;

// ByteKernelName: "scalar", "sse2", "avx2", "avx512bw".
const char* ByteKernelName(ByteKernel k);
// ParseByteKernel: the kernel of that name, nullopt if none.
std::optional<ByteKernel> ParseByteKernel(std::string_view name);
// RunsByteKernel: this build has kernel `k` and this CPU runs it.
bool RunsByteKernel(ByteKernel k);
// RunnableByteKernels: every kernel RunsByteKernel, narrowest first.
std::vector<ByteKernel> RunnableByteKernels();

namespace internal {
extern std::atomic<int> active_byte_kernel;  // -1 until chosen
ByteKernel ChooseByteKernel();
}  // namespace internal

// DefaultByteKernel: the kernel used unless one is forced: SSE2 on x86-64
// (measured: the wider ones are no faster here, bench/RESULTS.md), else
// scalar.
ByteKernel DefaultByteKernel();

// ActiveByteKernel: the kernel in use, chosen on first use: the one
// `$TRACEMILL_BYTE_KERNEL` names if this CPU runs it, else the default.
inline ByteKernel ActiveByteKernel() {
  const int k = internal::active_byte_kernel.load(std::memory_order_relaxed);
  return k >= 0 ? static_cast<ByteKernel>(k) : internal::ChooseByteKernel();
}
// ByteKernelNote: how the kernel in use was chosen, for --verbose: "sse2",
// "scalar (TRACEMILL_BYTE_KERNEL)", "sse2 (TRACEMILL_BYTE_KERNEL=avx9
// ignored: not a kernel this CPU runs)".
std::string ByteKernelNote();
// SetByteKernel makes `k` the kernel in use (tests); false, and nothing
// changed, if RunsByteKernel(k) is false.
bool SetByteKernel(ByteKernel k);

}  // namespace tracemill::formats
