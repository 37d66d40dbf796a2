#include "formats/common/byte_kernel.h"

#include <cstdlib>
#include <mutex>
#include <string>

namespace tracemill::formats {
namespace internal {
std::atomic<int> active_byte_kernel{-1};
}  // namespace internal

namespace {

constexpr const char* kNames[kByteKernelCount] = {"scalar", "sse2", "avx2", "avx512bw"};

// As json_text.cc's TM_X86_KERNELS: the build has the x86 kernels.
#if defined(__x86_64__) && defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
constexpr bool kX86Kernels = true;
#else
constexpr bool kX86Kernels = false;
#endif

std::mutex& NoteMutex() {
  static std::mutex m;
  return m;
}
std::string& Note() {
  static std::string note;
  return note;
}

}  // namespace

const char* ByteKernelName(ByteKernel k) { return kNames[static_cast<int>(k)]; }

std::optional<ByteKernel> ParseByteKernel(std::string_view name) {
  for (int k = 0; k < kByteKernelCount; ++k)
    if (name == kNames[k]) return static_cast<ByteKernel>(k);
  return std::nullopt;
}

bool RunsByteKernel(ByteKernel k) {
  if (k == ByteKernel::kScalar) return true;
  if (!kX86Kernels) return false;
#if defined(__x86_64__)
  // The compiler's CPUID reader, which also checks that the OS saves the
  // wider registers (XGETBV), as simdjson's does.
  switch (k) {
    case ByteKernel::kSse2:
      return true;  // the build's baseline: the CPU runs it, or not this binary at all
    case ByteKernel::kAvx2:
      return __builtin_cpu_supports("avx2");
    case ByteKernel::kAvx512bw:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw");
    case ByteKernel::kScalar:
      return true;
  }
#endif
  return false;
}

ByteKernel DefaultByteKernel() {
  // Not the widest: on json_text's work (the one-pass copy of Kineto args,
  // short and long strings) AVX2 and AVX-512BW measured no faster than SSE2,
  // within 3 % (bench/RESULTS.md, session 20, interleaved): the copy's time
  // is its per-byte state machine on numbers and punctuation, not the string
  // scans; and wide vectors may lower a core's clock on some CPUs.
  return RunsByteKernel(ByteKernel::kSse2) ? ByteKernel::kSse2 : ByteKernel::kScalar;
}

std::vector<ByteKernel> RunnableByteKernels() {
  std::vector<ByteKernel> out;
  for (int k = 0; k < kByteKernelCount; ++k)
    if (RunsByteKernel(static_cast<ByteKernel>(k))) out.push_back(static_cast<ByteKernel>(k));
  return out;
}

namespace internal {

ByteKernel ChooseByteKernel() {
  std::lock_guard<std::mutex> lock(NoteMutex());
  const int chosen = active_byte_kernel.load(std::memory_order_relaxed);
  if (chosen >= 0) return static_cast<ByteKernel>(chosen);
  ByteKernel k = DefaultByteKernel();
  std::string note = ByteKernelName(k);
  if (const char* env = std::getenv("TRACEMILL_BYTE_KERNEL"); env && *env) {
    const std::optional<ByteKernel> wanted = ParseByteKernel(env);
    if (wanted && RunsByteKernel(*wanted)) {
      k = *wanted;
      note = std::string(ByteKernelName(k)) + " (TRACEMILL_BYTE_KERNEL)";
    } else {
      note += std::string(" (TRACEMILL_BYTE_KERNEL=") + env + " ignored: not a kernel this CPU runs)";
    }
  }
  Note() = note;
  active_byte_kernel.store(static_cast<int>(k), std::memory_order_relaxed);
  return k;
}

}  // namespace internal

std::string ByteKernelNote() {
  ActiveByteKernel();
  std::lock_guard<std::mutex> lock(NoteMutex());
  return Note();
}

bool SetByteKernel(ByteKernel k) {
  if (!RunsByteKernel(k)) return false;
  ActiveByteKernel();  // the environment's choice is made (and noted) first
  std::lock_guard<std::mutex> lock(NoteMutex());
  Note() = ByteKernelName(k);
  internal::active_byte_kernel.store(static_cast<int>(k), std::memory_order_relaxed);
  return true;
}

}  // namespace tracemill::formats
