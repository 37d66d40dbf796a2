#include "pipeline/inputs/smdebug_inputs.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "formats/common/status_macros.h"
#include "formats/common/ts_text.h"
#include "formats/smdebug/framework_decoder.h"
#include "formats/smdebug/smdebug_layout.h"
#include "formats/smdebug/system_metrics_decoder.h"
#include "pipeline/console.h"

namespace tracemill::pipeline {
namespace {

using formats::SmdebugFileKind;

}  // namespace

std::string SmdebugJobRoot(std::string_view path, std::string_view folder) {
  size_t at = path.rfind(absl::StrCat("/", AbslView(folder), "/"));
  if (at != std::string_view::npos) return std::string(path.substr(0, at));
  if (path.rfind(absl::StrCat(AbslView(folder), "/"), 0) == 0) return ".";
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? "." : std::string(path.substr(0, slash));
}

namespace {

// The `.metadata` marker of a TF profiler trace's step folder
// (<step>/plugins/profile/<date>/<host>.trace.json.gz).
std::optional<formats::SmdebugPath> FindMarker(const std::string& trace_path) {
  std::string dir = trace_path;
  for (int up = 0; up < 4; ++up) {
    size_t slash = dir.rfind('/');
    if (slash == std::string::npos) return std::nullopt;
    dir.resize(slash);
  }
  DIR* d = ::opendir(dir.c_str());
  if (!d) return std::nullopt;
  std::vector<std::string> names;
  while (dirent* de = ::readdir(d)) names.emplace_back(de->d_name);
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    formats::SmdebugPath m = formats::ClassifySmdebugPath(n);
    if (m.kind == SmdebugFileKind::kMetadataMarker) return m;
  }
  return std::nullopt;
}

}  // namespace

void GroupSmdebugInputs(std::vector<InputRecord>* records, bool no_system_metrics) {
  struct Member {
    int64_t time_us;
    std::string path;
  };
  // (root, kind, node) -> group index in `out`.
  std::map<std::tuple<std::string, int, std::string>, size_t> group_of;
  std::vector<std::vector<Member>> members;
  std::vector<InputRecord> out;
  std::vector<int> group_at;  // out index -> members index, or -1
  for (InputRecord& r : *records) {
    if (r.rejected) {
      out.push_back(std::move(r));
      group_at.push_back(-1);
      continue;
    }
    formats::SmdebugPath p = formats::ClassifySmdebugPath(r.path);
    switch (p.kind) {
      case SmdebugFileKind::kNone:
        break;
      case SmdebugFileKind::kMetadataMarker:
        continue;  // read by name, with its trace
      case SmdebugFileKind::kInProgress:
        r.skipped = true;
        r.warnings.push_back("skipped: smdebug is still writing it (*.tmp); rerun once it is renamed");
        break;
      case SmdebugFileKind::kTfProfilerTrace: {
        r.files = {r.path};
        r.smdebug_kind = static_cast<int>(p.kind);
        if (auto m = FindMarker(r.path); m && m->time_us >= -formats::kMaxAbsTimeNs / 1000 &&
                                          m->time_us <= formats::kMaxAbsTimeNs / 1000) {
          r.node = m->node;
          r.base_ns = m->time_us * 1000;
        } else {
          r.node = p.node;
          r.warnings.push_back(
              "no <node>_<start_us>_<end_us>.metadata marker in its step folder: times kept relative");
        }
        r.rank = formats::SmdebugNodeRank(r.node);
        if (r.rank) r.rank_source = "smdebug node id";
        break;
      }
      case SmdebugFileKind::kSystemMetrics:
        if (no_system_metrics) {
          r.skipped = true;
          r.warnings.push_back("skipped: system metrics (--no-system-metrics)");
          break;
        }
        [[fallthrough]];
      case SmdebugFileKind::kFramework: {
        const bool sys = p.kind == SmdebugFileKind::kSystemMetrics;
        auto key = std::make_tuple(SmdebugJobRoot(r.path, sys ? "system" : "framework"), static_cast<int>(p.kind), p.node);
        auto [it, fresh] = group_of.try_emplace(key, members.size());
        if (fresh) {
          members.emplace_back();
          InputRecord g;
          g.path = absl::StrCat(std::get<0>(key), sys ? "/system" : "/framework", " [node ", p.node, "]");
          g.node = p.node;
          g.smdebug_kind = static_cast<int>(p.kind);
          g.from_directory = true;
          g.rank = formats::SmdebugNodeRank(p.node);
          if (g.rank) g.rank_source = "smdebug node id";
          else g.sagemaker_host = formats::SageMakerHost(p.node).value_or(0);
          out.push_back(std::move(g));
          group_at.push_back(static_cast<int>(it->second));
        }
        members[it->second].push_back(Member{p.time_us, r.path});
        continue;
      }
    }
    out.push_back(std::move(r));
    group_at.push_back(-1);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (group_at[i] < 0) continue;
    auto& m = members[static_cast<size_t>(group_at[i])];
    std::stable_sort(m.begin(), m.end(), [](const Member& a, const Member& b) {
      return a.time_us != b.time_us ? a.time_us < b.time_us : a.path < b.path;
    });
    for (auto& x : m) out[i].files.push_back(std::move(x.path));
  }
  *records = std::move(out);
}

void AttachContextFiles(const std::vector<std::string>& paths, std::vector<InputRecord>* records) {
  for (const std::string& path : paths) {
    formats::SmdebugPath p = formats::ClassifySmdebugPath(path);
    if (p.kind != SmdebugFileKind::kSystemMetrics) continue;
    const std::string group = absl::StrCat(SmdebugJobRoot(path, "system"), "/system [node ", p.node, "]");
    for (InputRecord& r : *records)
      if (r.smdebug_kind == static_cast<int>(SmdebugFileKind::kSystemMetrics) && r.path == group)
        r.context_files.push_back(path);
  }
}

std::unique_ptr<formats::TraceData> DecodeSmdebugGroup(InputRecord& r, const ReadMember& read,
                                                       formats::TefDecoder* tef,
                                                       const formats::DecodeSettings& settings) {
  formats::TraceBuilder builder;
  const bool sys = r.smdebug_kind == static_cast<int>(SmdebugFileKind::kSystemMetrics);
  std::optional<formats::SystemMetricsDecoder> metrics;
  std::optional<formats::FrameworkNodeDecoder> framework;
  if (sys) {
    metrics.emplace(&builder, settings.low_gpu_threshold);
    metrics->CutSlicesAt(settings.low_gpu_cuts_ns);
  }
  else framework.emplace(r.node, &builder);
  r.format = sys ? "smdebug_system_metrics" : r.smdebug_kind == static_cast<int>(SmdebugFileKind::kTfProfilerTrace)
                                                  ? "smdebug_tf_profiler"
                                                  : "smdebug_framework";
  formats::DecodeReport total;
  auto note_error = [&](const std::string& file, const absl::Status& st, uint64_t offset) {
    if (!r.status.ok()) return;
    r.status = st;
    r.error_offset = offset;
    r.error_file = file;
  };
  for (const std::string& file : r.files) {
    auto bytes = read(file);
    if (!bytes.ok()) {
      note_error(file, bytes.status(), 0);
      continue;
    }
    struct stat st;
    if (::stat(file.c_str(), &st) == 0) r.bytes += static_cast<uint64_t>(st.st_size);
    r.decoded_bytes += bytes->first.size();
    formats::DecodeReport rep =
        sys ? metrics->AddFile(BaseName(file), bytes->first, bytes->second)
            : framework->AddFile(bytes->first, bytes->second, r.base_ns, tef);
    total.events_read += rep.events_read;
    for (int k = 0; k < formats::kNumDropReasons; ++k) total.dropped.n[k] += rep.dropped.n[k];
    for (auto& w : rep.warnings) total.warnings.push_back(absl::StrCat(AbslView(BaseName(file)), ": ", w));
    if (!rep.status.ok()) note_error(file, rep.status, rep.error_offset);
  }
  if (sys)
    for (const std::string& file : r.context_files)
      if (auto bytes = read(file); bytes.ok()) metrics->AddFile(BaseName(file), bytes->first, bytes->second, true);
  if (sys) metrics->Finish(&total);
  r.events_read = total.events_read;
  r.dropped = total.dropped;
  for (auto& w : total.warnings) r.warnings.push_back(std::move(w));
  return builder.Finish();
}

}  // namespace tracemill::pipeline
