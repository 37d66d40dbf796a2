#include "formats/common/byte_kernel.h"

#include <cstdlib>
#include <mutex>
#include <string>

namespace tracemill::formats {
namespace internal {
std::atomic<int> active_byte_kernel{-1};
}  // namespace internal

namespace {

constexpr const char* kNames[kByteKernelCount] = {"scalar", "sse2"};

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
  switch (k) {
    case ByteKernel::kScalar:
      return true;
    case ByteKernel::kSse2:
#if defined(__SSE2__)
      return true;  // the build's baseline: the CPU runs it, or not this binary at all
#else
      return false;
#endif
  }
  return false;
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
  ByteKernel k = RunnableByteKernels().back();
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
