// Ending a run without a pid namespace (child side, Mechanism::landlock_only): cage's init is a
// child subreaper, so every process the workload starts (setsid'd daemons, double forks) stays its
// descendant; when the run ends, whatever way, init stops and then kills the whole tree and waits
// until it has no child left, and only then exits, so cage returns with nothing of the run running.
// Proved by tests/escape/outlive.sh (fallback runs).
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "linux/child.h"
#include "linux/dirent64.h"

namespace cage::lx {

namespace {

// Deeper than this a pass does not look (each level holds three fds and a small frame); the levels
// below are reached once the killed levels above them are gone and they are reparented to init.
constexpr int kMaxDepth = 128;


bool exited(int pidfd) {
  struct pollfd p = {pidfd, POLLIN, 0};
  return ::poll(&p, 1, 0) != 0;  // readable once the process has exited (a zombie included)
}

// The parent pid in /proc/PID/stat (after the command name, which may hold spaces and parentheses).
long parent_of(long pid) {
  char path[64], buf[512];
  std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  const char* p = std::strrchr(buf, ')');
  if (!p || p[1] != ' ' || !p[2] || p[3] != ' ') return -1;
  return std::strtol(p + 4, nullptr, 10);
}

long signal_subtree(long pid, int pidfd, int sig, int depth);

// One child `c` of `parent` as listed in its children file. Without a pidfd of the parent
// (parent_pidfd < 0) the parent is init itself: its children's pids stay theirs until init reaps
// them. Deeper, a listed child may have been reaped since (by its parent, or at once when that
// ignores SIGCHLD) and its pid reused by a host process: the signal goes through a pidfd opened
// first, and only once the process it names is seen to be, still alive, the child of a parent
// still alive (a live process's pid is its own).
long visit(long c, long parent, int parent_pidfd, int sig, int depth) {
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(c), 0));
  if (fd < 0) return 0;
  long n = 0;
  if (parent_pidfd < 0 || (parent_of(c) == parent && !exited(fd) && !exited(parent_pidfd))) {
    // A process with a stop or kill pending forks no more (copy_process refuses while a signal is
    // pending), so its children file, read after this, lists every child it will ever have.
    if (::syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0) == 0) n = 1;
    if (depth < kMaxDepth) n += signal_subtree(c, fd, sig, depth + 1);
  }
  ::close(fd);
  return n;
}

// Signals every child of every thread of `pid`, then their descendants, depth first.
long signal_subtree(long pid, int pidfd, int sig, int depth) {
  char path[96];
  std::snprintf(path, sizeof path, "/proc/%ld/task", pid);
  int task = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (task < 0) return 0;
  long n = 0;
  alignas(8) char dents[512];
  long got;
  while ((got = ::syscall(SYS_getdents64, task, dents, sizeof dents)) > 0) {
    for (long at = 0; at < got;) {
      auto* e = reinterpret_cast<Dirent64*>(dents + at);
      at += e->reclen;
      if (e->name[0] < '0' || e->name[0] > '9') continue;
      std::snprintf(path, sizeof path, "/proc/%ld/task/%s/children", pid, e->name);
      int ch = ::openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
      if (ch < 0) continue;
      char buf[256];
      long c = 0;
      ssize_t r;
      while ((r = ::read(ch, buf, sizeof buf)) > 0) {  // "pid pid pid " (a number may span two reads)
        for (ssize_t i = 0; i < r; ++i) {
          if (buf[i] >= '0' && buf[i] <= '9') {
            c = c * 10 + (buf[i] - '0');
          } else if (c > 0) {
            n += visit(c, pid, pidfd, sig, depth);
            c = 0;
          }
        }
      }
      if (c > 0) n += visit(c, pid, pidfd, sig, depth);
      ::close(ch);
    }
  }
  ::close(task);
  return n;
}

}  // namespace

void end_descendants() {
  // A pass holds three fds per level it descends.
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &rl);
  }
  const long self = ::getpid();
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  for (;;) {
    // Stop first: a stopped process neither forks nor exits, so a fork storm holds still while the
    // passes walk it, and each pass finds the tree as the last left it. Until a pass sees no more.
    long prev = -1;
    for (int i = 0; i < 16; ++i) {
      long seen = signal_subtree(self, -1, SIGSTOP, 0);
      if (seen == prev) break;
      prev = seen;
    }
    signal_subtree(self, -1, SIGKILL, 0);
    for (;;) {
      pid_t r = ::waitpid(-1, nullptr, WNOHANG);
      if (r > 0) continue;
      if (r < 0 && errno == ECHILD) return;  // no child, no zombie: nothing of the run is left
      break;
    }
    // Children remain that have not died yet, or arrived (reparented, stopped) after the kill pass:
    // wait for a death, and look again after a while in case none comes.
    struct timespec ts {0, 20 * 1000 * 1000};
    ::sigtimedwait(&chld, nullptr, &ts);
  }
}

}  // namespace cage::lx
