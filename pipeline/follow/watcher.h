#pragma once
// Watcher: wakes the follow loop when its input folders change (the
// follow job's eyes, pipeline/follow/follow_job.h).
//
// inotify where it works: one watch per folder (added as the scan finds
// them), events name the files that changed, so a wake-up costs what
// changed, not the whole tree. Polling otherwise: on network and cluster
// file systems (NFS, Lustre, GPFS, CIFS, FUSE, ...: inotify sees only this
// machine's writes there), when an input folder does not exist yet, when
// inotify cannot be had (no instance or watch left), or with --poll; then
// every wake-up is a full listing, every --poll-interval.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace tracemill::pipeline::follow {

class Watcher {
 public:
  // Change: what to look at after a wake-up.
  struct Change {
    bool full_scan = false;           // list every folder again (polling, or inotify lost events)
    std::vector<std::string> files;   // paths that were created, written, renamed or removed
    std::vector<std::string> folders; // new folders: watch and list them
  };

  Watcher() = default;
  ~Watcher();
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;

  // Start chooses inotify or polling for `roots` (files or folders);
  // `force_poll`: --poll. Returns one line saying which, and why polling.
  std::string Start(const std::vector<std::string>& roots, bool force_poll);
  bool polling() const { return fd_ < 0; }

  // AddFolder watches `dir` from now on (inotify; a no-op when polling or
  // already watched). A folder that cannot be watched (no watch left)
  // switches to polling, said by the next Wait's full scan.
  void AddFolder(const std::string& dir);

  // Wait blocks until something changed, `timeout_ns` passed or a signal
  // arrived. Polling: returns a full scan after the timeout (the caller
  // passes at most the poll interval).
  Change Wait(int64_t timeout_ns);

 private:
  void StopInotify();

  int fd_ = -1;                                 // inotify instance, -1: polling
  std::unordered_map<int, std::string> folder_of_;  // watch descriptor -> folder
  std::unordered_map<std::string, int> watch_of_;   // folder -> watch descriptor
  bool lost_ = false;  // a watch could not be added: switch to polling
};

}  // namespace tracemill::pipeline::follow
