// See workload_access.h. Supervisor side only; each call is checked by the mediator afterwards with
// SECCOMP_IOCTL_NOTIF_ID_VALID, so a thread that left its call (and a reused tid) is never acted on.
#include "linux/workload_access.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "common/unique_fd.h"

namespace cage::lx {

namespace {

// Refused by a filter rather than by the kernel's access check: worth the /proc route.
bool filtered(int e) { return e == EPERM || e == ENOSYS; }

}  // namespace

ssize_t read_workload_memory(pid_t tid, uint64_t addr, void* out, size_t size) {
  iovec local{out, size}, remote{reinterpret_cast<void*>(addr), size};
  ssize_t n = ::process_vm_readv(tid, &local, 1, &remote, 1, 0);
  if (n >= 0 || !filtered(errno)) return n;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/mem", static_cast<int>(tid));
  UniqueFd mem(::open(path, O_RDONLY | O_CLOEXEC));
  if (!mem.valid()) return -1;
  return ::pread(mem.get(), out, size, static_cast<off_t>(addr));
}

int workload_fd(int pidfd, pid_t tid, int fd) {
  int got = static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd, fd, 0));
  if (got >= 0 || !filtered(errno)) return got;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/fd/%d", static_cast<int>(tid), fd);
  got = ::open(path, O_PATH | O_CLOEXEC);
  if (got < 0 && errno == ENOENT) errno = EBADF;
  return got;
}

}  // namespace cage::lx
