#pragma once
// OutDirLock: one tracemill job at a time writes into an output directory.
//
// Two jobs writing into one OUTDIR would remove each other's temporaries
// (each job removes stale ones when it starts), replace each other's
// outputs and interleave journals. A job holds flock(2) on OUTDIR until it
// ends: exclusive, or shared in a shard of `convert` (the shards of one job
// write disjoint files side by side). Two runs of the same shard are kept
// apart by a name in the abstract UNIX socket namespace built from OUTDIR's
// device and inode and the shard: no file in OUTDIR, released when the
// process ends (node-local; best effort). A directory the user cannot read
// (write and search only) gets such a name instead of the flock, exclusive.
// A file system without flock (some NFS setups refuse it on a directory)
// runs unlocked.
//
// A lock found held is tried again for a while (kLockWaitMs) before the job
// gives up: a job killed with SIGKILL (Slurm after KillWait, the OOM killer)
// releases its lock a moment after its parent sees it die, so a retry loop
// that restarts it at once would otherwise be told "in use" by nobody.
#include <cstdint>
#include <string>

#include "pipeline/shard.h"

namespace tracemill::pipeline {

// CreateOutputDirectory creates `dir` with its parents if missing (`-o`,
// csp's --timeline-path). Returns 0 if it is a directory now (`*created`:
// whether this call made it); else the exit code, with the reason in
// `*error`: kExitUsage for what the user must fix (a path that exists as
// something else, a read-only file system, no permission, a missing or
// uncreatable parent such as one in /proc), kExitInternal otherwise.
int CreateOutputDirectory(const std::string& dir, bool* created, std::string* error);

class OutDirLock {
 public:
  OutDirLock() = default;
  OutDirLock(const OutDirLock&) = delete;
  OutDirLock& operator=(const OutDirLock&) = delete;
  ~OutDirLock();

  // How long Acquire tries again a lock it found held: 2 s, tried every
  // 10 ms at first, then every 100 ms.
  static constexpr int64_t kLockWaitMs = 2000;

  // Acquire locks the existing directory `dir`: shared if `shard` is a
  // shard of a sharded job, else exclusive, trying again for up to
  // `wait_ms` while another process holds it. Returns false if another
  // tracemill job still holds it then (the caller exits 2 with
  // InUseMessage); true if this process holds it now, or if it cannot be
  // locked at all (no such directory, no flock on the file system).
  bool Acquire(const std::string& dir, const ShardSpec& shard = ShardSpec{}, int64_t wait_ms = kLockWaitMs);

  // InUseMessage: the one line to print when Acquire returned false; it
  // names the process holding the lock when /proc/locks tells it.
  std::string InUseMessage(const std::string& dir) const;

 private:
  // TryOnce: one attempt; true if held now or not lockable, false if busy.
  bool TryOnce(const std::string& dir, const ShardSpec& shard);
  // BindName holds `name` in the abstract UNIX socket namespace: false if
  // another process holds it.
  bool BindName(const std::string& name);
  void Release();

  int fd_ = -1;
  int name_socket_ = -1;
  bool flock_busy_ = false;  // the last attempt found the flock held (not a shard's name)
  std::string holder_;       // after a busy Acquire: "process 123 (tracemill)", or ""
};

// FlockHolder: the process that /proc/locks says holds a flock(2) lock on
// the file with device `dev` and inode `ino`, other than this process, as
// "process <pid> (<its command name>)", or "process <pid>" if its name
// cannot be read; "" if none is listed or /proc/locks cannot be read.
std::string FlockHolder(uint64_t dev, uint64_t ino);

}  // namespace tracemill::pipeline
