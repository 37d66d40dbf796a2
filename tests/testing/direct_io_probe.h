#pragma once
// DirTakesDirectIo: whether the file system of `dir` takes O_DIRECT (a
// temporary there is opened, set O_DIRECT and removed). Tests of the
// direct-I/O paths expect direct writes only where it does (tmpfs before
// Linux 6.6 and some FUSE file systems refuse it).
#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "formats/common/direct_io.h"

namespace tracemill::testing {

inline bool DirTakesDirectIo(const std::string& dir) {
  std::string path = dir + "/direct-io-probe-XXXXXX";
  int fd = ::mkstemp(path.data());
  if (fd < 0) return false;
  ::unlink(path.c_str());
  const bool ok = formats::SetDirect(fd);
  ::close(fd);
  return ok;
}

}  // namespace tracemill::testing
