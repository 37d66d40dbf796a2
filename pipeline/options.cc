#include "pipeline/options.h"

namespace tracemill::pipeline {

std::optional<GroupBy> ParseGroupBy(const std::string& s) {
  if (s == "local-gpu") return GroupBy::kLocalGpu;
  if (s == "rank") return GroupBy::kRank;
  if (s == "node") return GroupBy::kNode;
  if (s == "all") return GroupBy::kAll;
  return std::nullopt;
}

}  // namespace tracemill::pipeline
