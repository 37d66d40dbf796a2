#include "formats/smdebug/smdebug_layout.h"

#include <charconv>

namespace tracemill::formats {
namespace {

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

std::optional<int64_t> Digits(std::string_view s) {
  int64_t v = 0;
  if (!AllDigits(s)) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

SmdebugPath ClassifySmdebugPath(std::string_view path) {
  SmdebugPath out;
  size_t slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  std::string_view dir = slash == std::string_view::npos ? std::string_view() : path.substr(0, slash + 1);
  bool in_progress = false;
  if (EndsWith(name, ".tmp")) {
    name.remove_suffix(4);
    in_progress = true;
  }
  // <end_us>_<node>_<suffix>.json; node ids may hold `_` (`4487_0000`).
  for (std::string_view suffix :
       {"pythontimeline", "model_timeline", "horovod_timeline", "smdataparallel_timeline"}) {
    std::string tail = "_";
    tail.append(suffix);
    tail.append(".json");
    if (!EndsWith(name, tail)) continue;
    std::string_view head = name.substr(0, name.size() - tail.size());
    size_t us = head.find('_');
    if (us == std::string_view::npos || us + 1 >= head.size()) break;
    auto t = Digits(head.substr(0, us));
    if (!t) break;
    out.kind = in_progress ? SmdebugFileKind::kInProgress : SmdebugFileKind::kFramework;
    out.node = std::string(head.substr(us + 1));
    out.suffix = std::string(suffix);
    out.time_us = *t;
    return out;
  }
  if (in_progress) {
    if (dir.find("/framework/") != std::string_view::npos || dir.rfind("framework/", 0) == 0)
      out.kind = SmdebugFileKind::kInProgress;
    return out;
  }
  // <node>_<start_us>_<end_us>.metadata
  if (EndsWith(name, ".metadata")) {
    std::string_view stem = name.substr(0, name.size() - 9);
    size_t b = stem.rfind('_');
    if (b == std::string_view::npos) return out;
    size_t a = stem.rfind('_', b - 1);
    if (a == std::string_view::npos || a == 0 || b == 0) return out;
    auto start = Digits(stem.substr(a + 1, b - a - 1));
    auto end = Digits(stem.substr(b + 1));
    if (!start || !end) return out;
    out.kind = SmdebugFileKind::kMetadataMarker;
    out.node = std::string(stem.substr(0, a));
    out.time_us = *start;
    out.end_us = *end;
    return out;
  }
  if (EndsWith(name, ".trace.json.gz") && dir.find("/plugins/profile/") != std::string_view::npos) {
    out.kind = SmdebugFileKind::kTfProfilerTrace;
    out.node = std::string(name.substr(0, name.size() - 14));
    return out;
  }
  // system/.../<epoch_s>.<node>.json
  if (EndsWith(name, ".json") && (dir.find("/system/") != std::string_view::npos ||
                                  dir.rfind("system/", 0) == 0)) {
    std::string_view stem = name.substr(0, name.size() - 5);
    size_t dot = stem.find('.');
    if (dot == std::string_view::npos || dot + 1 >= stem.size()) return out;
    auto t = Digits(stem.substr(0, dot));
    if (!t) return out;
    out.kind = SmdebugFileKind::kSystemMetrics;
    out.node = std::string(stem.substr(dot + 1));
    out.time_us = *t * 1000000;
  }
  return out;
}

std::optional<int64_t> SmdebugNodeRank(std::string_view node) {
  if (auto v = Digits(node)) return v;
  size_t us = node.find('_');
  if (us != std::string_view::npos && Digits(node.substr(0, us))) return Digits(node.substr(us + 1));
  return std::nullopt;
}

std::optional<int64_t> SageMakerHost(std::string_view node, std::string* name) {
  const size_t at = node.rfind("algo-");
  if (at == std::string_view::npos || (at > 0 && node[at - 1] != '-')) return std::nullopt;
  const std::optional<int64_t> n = Digits(node.substr(at + 5));
  if (!n || *n < 1) return std::nullopt;
  if (name) *name = std::string(node.substr(at));
  return n;
}

int SmdebugPhaseOrder(std::string_view phase) {
  if (phase.rfind("Step:", 0) == 0) return 0;
  static constexpr std::string_view kOrder[] = {"Forward", "Backward", "DataIterator", "Dataset"};
  for (int i = 0; i < 4; ++i)
    if (phase.rfind(kOrder[i], 0) == 0) return 1 + i;
  if (phase.rfind("/device", 0) == 0) return 5;
  if (phase.rfind("/host", 0) == 0) return 6;
  if (phase.rfind("gpu_functions", 0) == 0) return 7;
  if (phase.rfind("cpu_functions", 0) == 0) return 8;
  if (phase.find("Horovod") != std::string_view::npos || phase.find("horovod") != std::string_view::npos)
    return 9;
  return 10;
}

}  // namespace tracemill::formats
