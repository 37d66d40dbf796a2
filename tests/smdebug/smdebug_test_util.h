#pragma once
// Fixture shared by the smdebug and window tests: convert with
// `--group-by all` and load the one output, with the harness's checks.
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/convert_harness.h"

namespace tracemill::testing {

class SmdebugConvertTest : public ConvertTest {
 protected:
  // ConvertAll converts `args` plus `--group-by all`, expects `want_exit`,
  // checks the manifest balances, and loads all.trace.json (null if absent).
  std::unique_ptr<OutputTrace> ConvertAll(std::vector<std::string> args, int want_exit = 0) {
    args.push_back("--group-by");
    args.push_back("all");
    last_ = Convert(args);
    EXPECT_EQ(last_.exit_code, want_exit) << last_.err;
    if (last_.manifest) {
      EXPECT_TRUE(ManifestBalances(*last_.manifest));
    }
    auto t = LoadTrace(last_.Output("all.trace.json"));
    if (t) {
      EXPECT_TRUE(TsNonDecreasing(*t));
      EXPECT_TRUE(RanksNamespaced(*t));
    }
    return t;
  }
  // Events of `t` that are not metadata.
  static size_t NonMeta(const OutputTrace& t) { return t.events.size() - t.CountPh("M"); }
  Run last_;  // the last ConvertAll
};

}  // namespace tracemill::testing
