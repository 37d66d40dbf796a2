// The machine's limit on the same input, single thread, from memory:
// - BM_Limit/.../ondemand: simdjson On-Demand walks every file's traceEvents
//   and touches ph, ts and name of each event (nothing is kept or written).
//   On-Demand's stage 2 is compiled for simdjson's builtin kernel (the CPU
//   level of this build: `fallback` on baseline x86-64, `haswell` needs
//   -march=x86-64-v3 -mpclmul); its stage 1 is dispatched at run time. See
//   the context lines simdjson_ondemand_builtin and simdjson_active_stage1.
// - BM_Limit/.../inflate: libdeflate inflates the gzip copy.
// - BM_Limit/.../write: writes as many bytes as the convert job's outputs
//   hold (learnt from one untimed convert), into as many files, 1 MiB per
//   call, through the writer's own OutputFile with direct I/O (O_DIRECT,
//   a writer thread per file, temporary name then rename), as convert does.
// - BM_Limit/.../write_buffered: the same bytes with write(2) through the
//   page cache, dropping it behind as `--no-direct-io` does.
// All report the uncompressed JSON bytes, like BM_Convert. The machine's
// ceiling W for one core doing a job's whole I/O and parsing is the serial
// sum of these: W = 1 / (1/ondemand + 1/write) for JSON input (plus 1/inflate
// for gzip); summarize.py prints it, and W with write_buffered.
#include <benchmark/benchmark.h>
#include <libdeflate.h>
#include <simdjson.h>

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "bench/end_to_end/input.h"
#include "bench/end_to_end/measure.h"
#include "formats/chrome/output_file.h"
#include "pipeline/convert/convert.h"
#include "pipeline/options.h"

namespace tracemill::bench {
namespace {

namespace od = simdjson::ondemand;

std::vector<std::string> ListFiles(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') out.push_back(dir + "/" + e->d_name);
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Fixture: every JSON file in memory, padded for simdjson.
struct OnDemandFixture {
  std::vector<simdjson::padded_string> files;
  std::string error;

  static const OnDemandFixture& Get() {
    static const OnDemandFixture f = [] {
      OnDemandFixture f;
      for (const auto& p : ListFiles(Input().json_dir)) {
        simdjson::padded_string s;
        if (simdjson::padded_string::load(p).get(s)) {
          f.error = "cannot load " + p;
          break;
        }
        f.files.push_back(std::move(s));
      }
      return f;
    }();
    return f;
  }
};

struct Walked {
  uint64_t events = 0;
  uint64_t checksum = 0;  // keeps the touched values alive
};

// Walks one document: traceEvents, then ph (string), ts (number) and name
// (string) of each event. Other keys and values are skipped by On-Demand.
simdjson::error_code Walk(od::parser& parser, const simdjson::padded_string& json, Walked* w) {
  od::document doc;
  if (auto e = parser.iterate(json).get(doc)) return e;
  od::object top;
  if (auto e = doc.get_object().get(top)) return e;
  for (auto field : top) {
    od::raw_json_string key;
    if (auto e = field.key().get(key)) return e;
    if (key != "traceEvents") continue;
    od::array events;
    if (auto e = field.value().get_array().get(events)) return e;
    for (auto element : events) {
      od::object event;
      if (auto e = element.get_object().get(event)) return e;
      for (auto member : event) {
        od::raw_json_string k;
        if (auto e = member.key().get(k)) return e;
        if (k == "ph") {
          std::string_view v;
          if (auto e = member.value().get_string().get(v)) return e;
          w->checksum += v.empty() ? 0 : static_cast<unsigned char>(v[0]);
        } else if (k == "ts") {
          double v;
          if (auto e = member.value().get_double().get(v)) return e;
          w->checksum += static_cast<uint64_t>(v);
        } else if (k == "name") {
          std::string_view v;
          if (auto e = member.value().get_string().get(v)) return e;
          w->checksum += v.size();
        }
      }
      ++w->events;
    }
  }
  return simdjson::SUCCESS;
}

void BM_LimitOnDemand(benchmark::State& state) {
  const GeneratedInput& in = Input();
  const OnDemandFixture& f = OnDemandFixture::Get();
  if (!f.error.empty()) {
    state.SkipWithError(f.error.c_str());
    return;
  }
  od::parser parser;
  // Check before timing: every event the generator wrote is walked.
  Walked check;
  uint64_t bytes = 0;
  for (const auto& file : f.files) {
    bytes += file.size();
    if (auto e = Walk(parser, file, &check)) {
      state.SkipWithError(simdjson::error_message(e));
      return;
    }
  }
  if (check.events != in.events || bytes != in.json_bytes) {
    std::string err = absl::StrCat("walked ", check.events, " events in ", bytes,
                                   " bytes; generated ", in.events, " in ", in.json_bytes);
    state.SkipWithError(err.c_str());
    return;
  }
  IterationTimer timer;
  for (auto _ : state) {
    timer.Start();
    Walked w;
    for (const auto& file : f.files) (void)Walk(parser, file, &w);
    timer.Stop(state);
    benchmark::DoNotOptimize(w.checksum);
    if (w.checksum != check.checksum) {
      state.SkipWithError("checksum changed while timing");
      break;
    }
  }
  timer.Report(state, in.json_bytes, in.events);
}

// Fixture: every gzip file in memory, with its inflated size.
struct InflateFixture {
  std::vector<std::string> files;
  std::vector<size_t> sizes;  // ISIZE (single-member files under 4 GiB)
  std::string error;

  static const InflateFixture& Get() {
    static const InflateFixture f = [] {
      InflateFixture f;
      for (const auto& p : ListFiles(Input().gzip_dir)) {
        simdjson::padded_string s;
        if (simdjson::padded_string::load(p).get(s) || s.size() < 18) {
          f.error = "cannot load " + p;
          break;
        }
        const auto* t = reinterpret_cast<const unsigned char*>(s.data() + s.size() - 4);
        f.sizes.push_back(t[0] | t[1] << 8 | t[2] << 16 | static_cast<size_t>(t[3]) << 24);
        f.files.emplace_back(s.data(), s.size());
      }
      return f;
    }();
    return f;
  }
};

void BM_LimitInflate(benchmark::State& state) {
  const GeneratedInput& in = Input();
  const InflateFixture& f = InflateFixture::Get();
  if (!f.error.empty()) {
    state.SkipWithError(f.error.c_str());
    return;
  }
  libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  std::vector<char> out(*std::max_element(f.sizes.begin(), f.sizes.end()));
  auto inflate_all = [&](uint64_t* total) {
    for (size_t i = 0; i < f.files.size(); ++i) {
      size_t n = 0;
      if (libdeflate_gzip_decompress(d, f.files[i].data(), f.files[i].size(), out.data(),
                                     f.sizes[i], &n) != LIBDEFLATE_SUCCESS)
        return false;
      *total += n;
    }
    return true;
  };
  uint64_t total = 0;
  if (!inflate_all(&total) || total != in.json_bytes) {
    std::string err = absl::StrCat("inflated ", total, " bytes; generated ", in.json_bytes);
    state.SkipWithError(err.c_str());
    libdeflate_free_decompressor(d);
    return;
  }
  IterationTimer timer;
  for (auto _ : state) {
    timer.Start();
    uint64_t n = 0;
    bool ok = inflate_all(&n);
    timer.Stop(state);
    benchmark::DoNotOptimize(out.data());
    if (!ok) {
      state.SkipWithError("inflate failed while timing");
      break;
    }
  }
  timer.Report(state, in.json_bytes, in.events);
  libdeflate_free_decompressor(d);
}

// The convert job's output sizes (bytes per output file), from one run.
const std::vector<uint64_t>& OutputSizes() {
  static const std::vector<uint64_t> sizes = [] {
    const GeneratedInput& in = Input();
    pipeline::ConvertOptions opts;
    opts.inputs = {in.json_dir};
    opts.out_dir = absl::StrCat(in.root, "/out-limit-sizes");
    opts.group_by = pipeline::GroupBy::kLocalGpu;
    opts.quiet = true;
    std::vector<uint64_t> v;
    pipeline::RunSummary s = pipeline::RunConvert(opts);
    if (s.exit_code == pipeline::kExitOk)
      for (const auto& o : s.outputs) v.push_back(o.bytes);
    std::error_code ec;
    std::filesystem::remove_all(opts.out_dir, ec);  // only the sizes are needed
    return v;
  }();
  return sizes;
}

void BM_LimitWrite(benchmark::State& state, bool direct) {
  const GeneratedInput& in = Input();
  const std::vector<uint64_t>& sizes = OutputSizes();
  if (sizes.empty()) {
    state.SkipWithError("the sizing convert failed");
    return;
  }
  const std::string dir = absl::StrCat(in.root, "/out-limit-write");
  ::mkdir(dir.c_str(), 0755);
  std::string block(size_t{1} << 20, 'x');
  auto write_direct = [&] {
    for (size_t i = 0; i < sizes.size(); ++i) {
      auto f = formats::OutputFile::Create(absl::StrCat(dir, "/out", i), /*gzip=*/false);
      if (!f.ok() || !(*f)->EnableDirectIo()) return false;
      for (uint64_t left = sizes[i]; left > 0;) {
        size_t n = static_cast<size_t>(std::min<uint64_t>(left, block.size()));
        if (!(*f)->Append(std::string_view(block.data(), n)).ok()) return false;
        left -= n;
      }
      if (!(*f)->Commit().ok()) return false;
    }
    return true;
  };
  auto write_all = [&] {
    if (direct) return write_direct();
    uint64_t total = 0;  // bytes of this pass, all files
    for (size_t i = 0; i < sizes.size(); ++i) {
      std::string tmp = absl::StrCat(dir, "/.out", i, ".tmp"), final = absl::StrCat(dir, "/out", i);
      int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0) return false;
      uint64_t written = 0, windows = 0;
      for (uint64_t left = sizes[i]; left > 0;) {
        size_t n = static_cast<size_t>(std::min<uint64_t>(left, block.size()));
        ssize_t w = ::write(fd, block.data(), n);
        if (w <= 0) {
          ::close(fd);
          return false;
        }
        left -= static_cast<uint64_t>(w);
        written += static_cast<uint64_t>(w);
        // The writer's drop-behind (formats/chrome/output_file.h), so that
        // both pay the page cache alike.
        total += static_cast<uint64_t>(w);
        formats::DropBehindStep(fd, total, written, &windows);
      }
      if (::close(fd) != 0 || ::rename(tmp.c_str(), final.c_str()) != 0) return false;
    }
    return true;
  };
  if (!write_all()) {
    state.SkipWithError("cannot write the limit's files");
    return;
  }
  uint64_t total = 0;
  for (uint64_t s : sizes) total += s;
  state.counters["output_bytes"] = static_cast<double>(total);
  IterationTimer timer;
  for (auto _ : state) {
    // As BM_Convert, untimed: the last pass's files go, then `sync`.
    std::error_code rm_error;
    std::filesystem::remove_all(dir, rm_error);
    ::mkdir(dir.c_str(), 0755);
    ::sync();
    timer.Start();
    bool ok = write_all();
    timer.Stop(state);
    if (!ok) {
      state.SkipWithError("write failed while timing");
      break;
    }
  }
  timer.Report(state, in.json_bytes, in.events);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);  // give the page cache back
}

}  // namespace

void RegisterLimit(const GeneratedInput& in) {
  benchmark::RegisterBenchmark(absl::StrCat("BM_Limit/", in.label, "/ondemand").c_str(),
                               BM_LimitOnDemand)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(absl::StrCat("BM_Limit/", in.label, "/inflate").c_str(),
                               BM_LimitInflate)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(absl::StrCat("BM_Limit/", in.label, "/write").c_str(), BM_LimitWrite, true)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(absl::StrCat("BM_Limit/", in.label, "/write_buffered").c_str(), BM_LimitWrite,
                               false)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace tracemill::bench
