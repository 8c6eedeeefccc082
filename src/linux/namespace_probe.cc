// The namespace probe shared by --check and --mechanism auto (namespace_probe.h). Runs in a forked
// child only; tests/docker/run.sh proves it in containers that allow user namespaces but not proc.
#include "linux/namespace_probe.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace cage::lx {

namespace {

int exit_code_of(pid_t pid) {
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

int build_namespaces() {
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS |
                CLONE_NEWCGROUP) != 0)
    return errno;
  if (::mount(nullptr, "/", nullptr, MS_SLAVE | MS_REC, nullptr) != 0) return errno;
  if (::mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0) return errno;
  struct mount_attr attr {};
  attr.attr_set = MOUNT_ATTR_RDONLY;
  if (::syscall(SYS_mount_setattr, AT_FDCWD, "/tmp", 0, &attr, sizeof attr) != 0) return errno;
  pid_t pid = ::fork();  // the first child of a new pid namespace is its pid 1
  if (pid < 0) return errno;
  if (pid == 0) _exit(::mount("proc", "/tmp", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0 ? 0 : errno);
  return exit_code_of(pid);
}

}  // namespace

int probe_namespaces() {
  pid_t pid = ::fork();
  if (pid < 0) return errno;
  if (pid == 0) _exit(build_namespaces());
  return exit_code_of(pid);
}

bool proc_has_overmounts() {
  FILE* f = std::fopen("/proc/self/mountinfo", "re");
  if (!f) return false;
  char line[4096];
  bool found = false;
  while (!found && std::fgets(line, sizeof line, f)) {
    // Fields: id parent major:minor root mountpoint ...; binfmt_misc on its empty directory is harmless.
    char point[4096];
    if (std::sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1) continue;
    found = std::strncmp(point, "/proc/", 6) == 0 && std::strcmp(point, "/proc/sys/fs/binfmt_misc") != 0;
  }
  std::fclose(f);
  return found;
}

}  // namespace cage::lx
