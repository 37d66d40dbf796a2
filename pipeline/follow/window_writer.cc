#include "pipeline/follow/window_writer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "formats/common/cleanup.h"
#include "formats/common/read_file.h"
#include "pipeline/convert/convert.h"

namespace tracemill::pipeline::follow {

std::string WindowsFolder(const std::string& out_dir) { return out_dir + "/windows"; }

void RemoveWindowFolder(const std::string& dir) {
  if (auto names = formats::ListFolder(dir))
    for (const std::string& n : *names) ::unlink((dir + "/" + n).c_str());
  ::rmdir(dir.c_str());
}

void RemoveStaleWindowTemporaries(const std::string& out_dir) {
  for (const std::string& dir : {WindowsFolder(out_dir), out_dir}) {
    std::vector<std::string> stale;
    for (const std::string& n : formats::ListFolder(dir).value_or(std::vector<std::string>{}))
      if (n.size() > 1 && n[0] == '.' && n.find(".tmp.") != std::string::npos &&
          (dir != out_dir || n.rfind(".latest.tmp.", 0) == 0 || n.rfind(".follow-journal.jsonl.tmp.", 0) == 0))
        stale.push_back(dir + "/" + n);
    for (const std::string& p : stale) {
      struct stat st;
      if (::lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) RemoveWindowFolder(p);
      else ::unlink(p.c_str());
    }
  }
}

void PointLatest(const std::string& out_dir, const std::string& name) {
  const std::string tmp = absl::StrCat(out_dir, "/.latest.tmp.", ::getpid());
  ::unlink(tmp.c_str());
  if (::symlink(absl::StrCat("windows/", name).c_str(), tmp.c_str()) != 0) return;
  if (::rename(tmp.c_str(), (out_dir + "/latest").c_str()) != 0) ::unlink(tmp.c_str());
}

WindowWrite WriteWindow(const ConvertOptions& opts, const PlannedWindow& w,
                        const std::function<void(const WindowWrite&)>& renamed) {
  const auto t0 = std::chrono::steady_clock::now();
  WindowWrite out;
  const std::string folder = WindowsFolder(opts.out_dir);
  const std::string final_dir = absl::StrCat(folder, "/", w.window.name);
  const std::string tmp = absl::StrCat(folder, "/.", w.window.name, ".tmp.", ::getpid());
  RemoveWindowFolder(tmp);
  const int slot = formats::RegisterTemporaryDirectory(tmp);

  ConvertOptions c = opts;
  c.follow.reset();
  c.follow_window = w.window;
  c.inputs = w.files;
  c.follow_context_files = w.context_files;
  c.out_dir = tmp;
  c.quiet = true;  // the follow job says one line per window; error lines are still said
  c.progress = false;
  c.resume = false;
  c.shard = ShardSpec{};
  c.align_clocks = AlignClocks::kOff;
  c.command_line = absl::StrCat(opts.command_line, " (window ", w.window.name, ")");
  out.summary = RunConvert(c);
  for (const InputRecord& r : out.summary.inputs) out.events += r.events_written - r.metadata_written;

  if (out.summary.exit_code == kExitOk && out.events == 0) {
    out.empty = true;
  } else if (out.summary.exit_code == kExitOk || out.summary.exit_code == kExitSomeRejected) {
    formats::DeferInterrupts defer;  // the folder and its journal line go together
    struct stat st;
    if (::lstat(final_dir.c_str(), &st) == 0) {
      // An earlier run's folder of this window that no journal line kept.
      const std::string old = absl::StrCat(folder, "/.", w.window.name, ".old.tmp.", ::getpid());
      if (::rename(final_dir.c_str(), old.c_str()) == 0) RemoveWindowFolder(old);
    }
    if (::rename(tmp.c_str(), final_dir.c_str()) != 0) {
      out.error = absl::StrCat("cannot rename ", tmp, " to ", final_dir, ": ", std::strerror(errno));
    } else {
      formats::UnregisterTemporaryDirectory(slot);
      if (renamed) renamed(out);
    }
  } else {
    out.error = absl::StrCat("its convert ended with exit status ", out.summary.exit_code);
  }
  if (!out.error.empty() || out.empty) {
    RemoveWindowFolder(tmp);
    formats::UnregisterTemporaryDirectory(slot);
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace tracemill::pipeline::follow
