// Issue 38: tracemill's own byte loops run on the kernel the CPU allows
// (formats/common/byte_kernel.h); every kernel must write the same bytes.
// The same jobs converted under each kernel this machine runs
// (TRACEMILL_BYTE_KERNEL, which `--verbose` confirms) give byte-identical
// outputs: real Kineto, HTA, smdebug and Perfetto traces (the one-pass copy
// of clean args) and the malformed corpus (the repairing path).
#include <cstdlib>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/convert_harness.h"

namespace tracemill::testing {
namespace {

// Every kernel name formats/common/byte_kernel.h knows, narrowest first.
const char* const kKernels[] = {"scalar", "sse2", "avx2", "avx512bw"};

class ByteKernelTest : public ConvertTest {
 protected:
  // Converts `inputs` with TRACEMILL_BYTE_KERNEL=`kernel`; an empty run (and
  // no failure) if the binary says this CPU does not run it.
  Run ConvertWith(const char* kernel, std::vector<std::string> inputs, int expected_exit) {
    ::setenv("TRACEMILL_BYTE_KERNEL", kernel, 1);
    inputs.push_back("-v");
    Run r = Convert(inputs);
    ::unsetenv("TRACEMILL_BYTE_KERNEL");
    if (r.err.find("ignored: not a kernel this CPU runs") != std::string::npos) return Run{};
    EXPECT_EQ(r.exit_code, expected_exit) << kernel << ": " << r.err;
    EXPECT_NE(r.err.find(std::string("byte kernel ") + kernel + " (TRACEMILL_BYTE_KERNEL)"), std::string::npos)
        << r.err;
    return r;
  }

  // Every output of `inputs` under each kernel equals the scalar kernel's.
  void ExpectSameBytes(const std::vector<std::string>& inputs, int expected_exit) {
    const Run scalar = ConvertWith("scalar", inputs, expected_exit);
    ASSERT_FALSE(scalar.out_dir.empty());
    const std::vector<std::string> names = ListDir(scalar.out_dir);
    int kernels = 0;
    for (const char* kernel : kKernels) {
      const Run r = ConvertWith(kernel, inputs, expected_exit);
      if (r.out_dir.empty()) continue;
      ++kernels;
      ASSERT_EQ(ListDir(r.out_dir), names) << kernel;
      for (const std::string& name : names) {
        if (name == "manifest.json") continue;  // times of the run
        EXPECT_EQ(ReadFileBytes(r.Output(name)), ReadFileBytes(scalar.Output(name))) << kernel << ": " << name;
      }
    }
    EXPECT_GE(kernels, 2);  // scalar and sse2 at least, on any x86-64 machine
  }
};

TEST_F(ByteKernelTest, RealTracesAreTheSameBytesOnEveryKernel) {
  ExpectSameBytes({DataPath("kineto-tb-plugin/resnet50_num_workers_0"), DataPath("hta/trace_filter"),
                   DataPath("kineto-2026/newest_layout.json"), DataPath("kineto-2026/memory_instants.json"),
                   DataPath("smdebug/horovod_timeline_small.json"), DataPath("perfetto/flow_events_json_v2.json"),
                   "--group-by", "rank"},
                  0);
}

TEST_F(ByteKernelTest, RepairedInputsAreTheSameBytesOnEveryKernel) {
  // The malformed corpus's small cases (README there): damaged strings,
  // escapes, UTF-8, control characters, cut inputs.
  ExpectSameBytes({TRACEMILL_MALFORMED_DIR, "--group-by", "all"}, 3);
}

}  // namespace
}  // namespace tracemill::testing
