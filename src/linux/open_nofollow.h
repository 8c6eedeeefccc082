// Opening a path without following any symlink in it (openat2's RESOLVE_NO_SYMLINKS), also where
// openat2 answers ENOSYS: Linux < 5.6, and cage nested in a cage, whose seccomp floor refuses openat2
// (its mode is behind a pointer: seccomp/floor.txt). There the path is walked one component at a
// time with O_NOFOLLOW, and a symlink anywhere fails with ELOOP, as RESOLVE_NO_SYMLINKS does.
// No allocation: cage's init calls it.
#pragma once
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cage::lx {

namespace detail {
// One step of the walk: O_NOFOLLOW opens a symlink itself (with O_PATH) or fails with ELOOP.
inline int step_nofollow(int dirfd, const char* name, int flags) {
  int fd = ::openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC);
  struct stat st {};
  if (fd >= 0 && (::fstat(fd, &st) != 0 || S_ISLNK(st.st_mode))) {
    ::close(fd);
    errno = ELOOP;
    return -1;
  }
  return fd;
}
}  // namespace detail

// An absolute PATH; FLAGS as for open(2) (O_CLOEXEC is added).
inline int open_no_symlinks(const char* path, int flags) {
  struct open_how how {};
  how.flags = static_cast<unsigned long long>(flags) | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS;
  int fd = static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how));
  if (fd >= 0 || errno != ENOSYS) return fd;
  char buf[4096];
  if (path[0] != '/' || std::strlen(path) >= sizeof buf) {
    errno = path[0] != '/' ? EINVAL : ENAMETOOLONG;
    return -1;
  }
  std::strcpy(buf, path);
  int cur = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  char* p = buf;
  while (cur >= 0) {
    while (*p == '/') ++p;
    if (!*p) return cur;  // "/" itself, or a trailing slash after the last component
    char* end = std::strchr(p, '/');
    bool last = !end || !end[std::strspn(end, "/")];
    if (end) *end = '\0';
    int next = detail::step_nofollow(cur, p, last ? flags : O_PATH | O_DIRECTORY);
    int e = errno;
    ::close(cur);
    errno = e;
    if (last) return next;
    cur = next;
    p = end + 1;
  }
  return -1;
}

}  // namespace cage::lx
