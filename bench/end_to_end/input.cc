#include "bench/end_to_end/input.h"

#include "bench/end_to_end/real_input.h"

#include <simdjson.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace tracemill::bench {
namespace {

GeneratedInput g_input;

std::string SizeLabel(int ranks, int64_t events) {
  std::string e = events % 1000000 == 0 ? std::to_string(events / 1000000) + "M"
                  : events % 1000 == 0  ? std::to_string(events / 1000) + "k"
                                        : std::to_string(events);
  return std::to_string(ranks) + "x" + e + "_events";
}

// Runs the generator and reads its one-line JSON summary.
bool RunGenerator(const InputSpec& s, const std::string& dir, bool gzip, uint64_t* events,
                  uint64_t* json_bytes, uint64_t* file_bytes) {
  std::string cmd = "'" + s.gen_kineto + "' --ranks " + std::to_string(s.ranks) + " --events " +
                    std::to_string(s.events) + " --seed " + std::to_string(s.seed) + " --out '" +
                    dir + "'" + (gzip ? " --gzip" : "") + (s.dense ? " --dense" : "");
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) {
    std::fprintf(stderr, "bench: cannot run %s\n", cmd.c_str());
    return false;
  }
  std::string line;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) line += buf;
  int rc = ::pclose(p);
  if (rc != 0) {
    std::fprintf(stderr, "bench: `%s` failed (status %d)\n", cmd.c_str(), rc);
    return false;
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(line).get(doc) || doc["events"].get(*events) ||
      doc["json_bytes"].get(*json_bytes) || doc["file_bytes"].get(*file_bytes)) {
    std::fprintf(stderr, "bench: cannot read the generator's summary: %s\n", line.c_str());
    return false;
  }
  return true;
}

// The real-trace job: the templates replicated into both directories.
bool GenerateReal(const InputSpec& spec, GeneratedInput* out) {
  const RealSpec real{spec.real, spec.ranks};
  RealOutput json, gz;
  if (!ReplicateKineto(real, out->json_dir, false, &json) || !ReplicateKineto(real, out->gzip_dir, true, &gz))
    return false;
  out->label = "real" + std::to_string(spec.ranks) + "_resnet50";
  out->real = true;
  out->events = json.events;
  out->json_bytes = json.json_bytes;
  out->gzip_bytes = gz.file_bytes;
  return json.events == gz.events && json.json_bytes == gz.json_bytes;
}

}  // namespace

bool Generate(const InputSpec& spec, GeneratedInput* out) {
  std::string root = spec.tmp_root.empty() ? "/tmp" : spec.tmp_root;
  std::string tmpl = root + "/tracemill-bench-XXXXXX";
  if (!::mkdtemp(tmpl.data())) {
    std::fprintf(stderr, "bench: cannot create a temporary directory in %s\n", root.c_str());
    return false;
  }
  out->root = tmpl;
  out->json_dir = out->root + "/json";
  out->gzip_dir = out->root + "/gzip";
  out->ranks = spec.ranks;
  out->memory_limit = spec.memory_limit;
  if (!spec.real.empty()) return GenerateReal(spec, out);
  out->events_per_rank = spec.events;
  out->label = SizeLabel(spec.ranks, spec.events) + (spec.dense ? "_dense" : "");
  uint64_t ev_json = 0, ev_gz = 0, bytes_json = 0, bytes_gz_json = 0, disk_json = 0, disk_gz = 0;
  if (!RunGenerator(spec, out->json_dir, false, &ev_json, &bytes_json, &disk_json) ||
      !RunGenerator(spec, out->gzip_dir, true, &ev_gz, &bytes_gz_json, &disk_gz))
    return false;
  // Same seed: the gzip copy holds the same JSON.
  if (ev_json != ev_gz || bytes_json != bytes_gz_json ||
      ev_json != static_cast<uint64_t>(spec.ranks) * static_cast<uint64_t>(spec.events)) {
    std::fprintf(stderr, "bench: the two generated copies differ\n");
    return false;
  }
  out->events = ev_json;
  out->json_bytes = bytes_json;
  out->gzip_bytes = disk_gz;
  return true;
}

void Cleanup(const InputSpec& spec, const GeneratedInput& in) {
  if (in.root.empty()) return;
  if (spec.keep) {
    std::fprintf(stderr, "bench: input kept in %s\n", in.root.c_str());
    return;
  }
  std::error_code ec;
  std::filesystem::remove_all(in.root, ec);
}

const GeneratedInput& Input() { return g_input; }
void SetInput(const GeneratedInput& in) { g_input = in; }

}  // namespace tracemill::bench
