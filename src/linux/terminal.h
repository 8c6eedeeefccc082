// The caller's terminal, as both mechanisms name it for the workload (mount.cc binds it at
// /dev/console; landlock_only.cc grants it to Landlock): the /dev/pts device that is stdin, stdout or
// stderr, and the very one on that fd (same device number, inode and file system), so nothing new
// becomes reachable. No allocation: cage's init calls it too.
#pragma once
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace cage::lx {

// Its path into `out` (NUL-terminated), or false when no standard fd is such a terminal.
inline bool caller_pty(char* out, size_t size) {
  for (int fd = 0; fd < 3; ++fd) {
    char link[32];
    struct stat fs, ts;
    if (!::isatty(fd) || ::fstat(fd, &fs) != 0) continue;
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = ::readlink(link, out, size - 1);
    if (n <= 0) continue;
    out[n] = '\0';
    if (std::strncmp(out, "/dev/pts/", 9) != 0 || ::stat(out, &ts) != 0 || !S_ISCHR(ts.st_mode) ||
        ts.st_rdev != fs.st_rdev || ts.st_ino != fs.st_ino || ts.st_dev != fs.st_dev)
      continue;
    return true;
  }
  return false;
}

}  // namespace cage::lx
