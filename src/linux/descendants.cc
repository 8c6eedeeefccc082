// Ending a run without a pid namespace (child side, Mechanism::landlock_only): cage's init is a
// child subreaper, so every process the workload starts (setsid'd daemons, double forks) stays its
// descendant; when the run ends, whatever way, init stops the whole tree, then kills it and waits
// until it has no child left, and only then exits, so cage returns with nothing of the run running.
//
// Stop the world, then kill. A pass walks the tree breadth first from init, with no depth bound (a
// list, not recursion): each process found is sent SIGSTOP before its children are read, so what it
// could still fork shows up in the next pass; passes repeat until one finds no process it did not
// hold already. Only then is every process held killed, the deepest first, so none of them ever runs
// again: none sees a parent die (PR_SET_PDEATHSIG, getppid) and reacts. A walk bounded in depth left
// a chain's bottom running while the levels above it died (found by review: a chain deeper than the
// bound whose leaf kept forking was never caught). This is what freezing a cgroup and then killing
// its members does (runc's signalAllProcesses() for a container without its own pid namespace, which
// writes cgroup.kill, atomic against fork, where there is one); the walk needs no cgroup (most hosts
// of this mechanism give the user none), and where the run has one its removal writes cgroup.kill
// once more after init is gone (cgroup.cc).
// Proved by tests/escape/outlive.sh and tests/escape/deep_chain.sh (Landlock-only runs).
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
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

// Every pid the kernel can hand out (PID_MAX_LIMIT on 64-bit), one bit each: which are held. In
// the binary's zero-filled data: a page costs memory only once a pid in it is held.
constexpr size_t kPidLimit = size_t{1} << 22;
uint64_t g_seen[kPidLimit / 64];
// Passes per round at most: more are needed only while held processes fork behind our back (a fork
// already under way, one continued by SIGCONT from another); what such a fork adds after the last
// pass becomes init's child once the round's kill ends its parent, and the next round ends it.
constexpr int kMaxPasses = 32;

struct Held {
  int pidfd;
  int pid;
};

// The processes held (stopped, a pidfd each) in the order found, parents before their children.
// Memory comes from mmap, not malloc: init is a fork of the supervisor.
struct World {
  Held* list = nullptr;
  size_t count = 0, cap = 0;
  uint64_t* seen = g_seen;
  bool full = false;  // out of fds or memory: kill what is held, then walk again
  bool holds(long pid) const { return pid > 0 && static_cast<size_t>(pid) < kPidLimit && (seen[pid / 64] >> (pid % 64)) & 1; }
  bool push(int fd, long pid) {
    if (count == cap) {
      size_t bytes = (cap ? cap * 2 : 4096) * sizeof(Held);
      void* m = list ? ::mremap(list, cap * sizeof(Held), bytes, MREMAP_MAYMOVE)
                     : ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m == MAP_FAILED) return false;
      list = static_cast<Held*>(m);
      cap = bytes / sizeof(Held);
    }
    list[count++] = {fd, static_cast<int>(pid)};
    seen[pid / 64] |= uint64_t{1} << (pid % 64);
    return true;
  }
  // SIGKILL to every process held, the last found (the deepest) first; the held set is emptied.
  void kill_all() {
    while (count > 0) {
      Held& h = list[--count];
      ::syscall(SYS_pidfd_send_signal, h.pidfd, SIGKILL, nullptr, 0);
      ::close(h.pidfd);
      seen[h.pid / 64] &= ~(uint64_t{1} << (h.pid % 64));
    }
    full = false;
  }
};

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

// One child `c` of `parent` as listed in its children file; held (stopped) unless held already.
// Without a pidfd of the parent (parent_pidfd < 0) the parent is init itself: its children's pids
// stay theirs until init reaps them. Deeper, a listed child may have been reaped since (by its
// parent, or at once when that ignores SIGCHLD) and its pid reused by a host process: the signal goes
// through a pidfd opened first, and only once the process it names is seen to be, still alive, the
// child of a parent still alive (a live process's pid is its own).
bool visit(World& w, long c, long parent, int parent_pidfd) {
  if (w.full || w.holds(c) || c <= 0 || static_cast<size_t>(c) >= kPidLimit) return false;
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(c), 0));
  if (fd < 0) {
    if (errno == EMFILE || errno == ENFILE || errno == ENOMEM) w.full = true;
    return false;
  }
  if ((parent_pidfd < 0 || (parent_of(c) == parent && !exited(fd) && !exited(parent_pidfd))) &&
      ::syscall(SYS_pidfd_send_signal, fd, SIGSTOP, nullptr, 0) == 0) {
    if (w.push(fd, c)) return true;
    // No room to hold it: killed at once instead, and the round ends here (its children are
    // reparented to init and found by the next round).
    ::syscall(SYS_pidfd_send_signal, fd, SIGKILL, nullptr, 0);
    w.full = true;
  }
  ::close(fd);
  return false;
}

// Holds every child of every thread of `pid` not held yet; returns how many it newly held.
long hold_children(World& w, long pid, int pidfd) {
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
            n += visit(w, c, pid, pidfd);
            c = 0;
          }
        }
      }
      if (c > 0) n += visit(w, c, pid, pidfd);
      ::close(ch);
    }
  }
  ::close(task);
  return n;
}

// One pass over the whole tree: init's children, then the children of every process held, including
// those this pass adds (breadth first). A process sent SIGSTOP forks no more once the signal is
// pending (copy_process refuses), but a fork already past that check still adds a child after its
// children file was read, and an orphan may be reparented to a process already read: hence passes
// until one finds nothing new.
long pass(World& w, long self) {
  long n = hold_children(w, self, -1);
  for (size_t i = 0; i < w.count && !w.full; ++i) n += hold_children(w, w.list[i].pid, w.list[i].pidfd);
  return n;
}

}  // namespace

void end_descendants() {
  // A pidfd per process held.
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &rl);
  }
  World w;
  const long self = ::getpid();
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  for (;;) {
    for (int i = 0; i < kMaxPasses && pass(w, self) > 0 && !w.full; ++i) {
    }
    w.kill_all();
    for (;;) {
      pid_t r = ::waitpid(-1, nullptr, WNOHANG);
      if (r > 0) continue;
      if (r < 0 && errno == ECHILD) return;  // no child, no zombie: nothing of the run is left
      break;
    }
    // Children remain that have not died yet, or arrived (reparented) after the kill pass: wait for
    // a death, and look again after a while in case none comes.
    struct timespec ts {0, 20 * 1000 * 1000};
    ::sigtimedwait(&chld, nullptr, &ts);
  }
}

}  // namespace cage::lx
