// See late_netns.h.
#include "linux/late_netns.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <ctime>

namespace cage::lx::late_netns {
namespace {

constexpr int kStarting = 0, kMade = 1, kFailed = 2, kJoined = 3;
constexpr size_t kStack = 64 << 10, kGuard = 16 << 10;

// The maker runs beside init on init's memory and thread pointer: glibc's wrappers would write errno
// into init's while init runs. Its calls are made raw: results come back as -errno, nothing else is
// written but the Maker.
#if defined(__SANITIZE_ADDRESS__)
#define CAGE_LATE_NETNS 0  // its instrumented code would run on init's thread state
#elif defined(__x86_64__)
#define CAGE_LATE_NETNS 1
long raw(long n, long a, long b = 0, long c = 0, long d = 0) {
  long r;
  register long r10 asm("r10") = d;
  asm volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
  return r;
}
#elif defined(__aarch64__)
#define CAGE_LATE_NETNS 1
long raw(long n, long a, long b = 0, long c = 0, long d = 0) {
  register long x8 asm("x8") = n;
  register long x0 asm("x0") = a;
  register long x1 asm("x1") = b;
  register long x2 asm("x2") = c;
  register long x3 asm("x3") = d;
  asm volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
  return x0;
}
#else
#define CAGE_LATE_NETNS 0
#endif

#if CAGE_LATE_NETNS
long futex(std::atomic<int>* word, int op, int val) {
  return raw(SYS_futex, reinterpret_cast<long>(word), op, val, 0);
}

int maker_main(void* arg) {
  auto& m = *static_cast<Maker*>(arg);
  long r = raw(SYS_unshare, CLONE_NEWNET);
  if (r < 0) m.err = static_cast<int>(-r);
  m.state.store(r < 0 ? kFailed : kMade, std::memory_order_release);
  futex(&m.state, FUTEX_WAKE, 1);
  if (r < 0) return 1;
  // This process holds the namespace until init is in it.
  while (m.state.load(std::memory_order_acquire) == kMade) futex(&m.state, FUTEX_WAIT, kMade);
  return 0;
}
#endif

}  // namespace

void start(Maker& m) {
#if CAGE_LATE_NETNS
  void* map = ::mmap(nullptr, kGuard + kStack, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (map == MAP_FAILED) return;
  char* stack = static_cast<char*>(map) + kGuard;  // an overflow faults in the guard, not in init's memory
  if (::mprotect(stack, kStack, PROT_READ | PROT_WRITE) != 0) {
    ::munmap(map, kGuard + kStack);
    return;
  }
  int pidfd = -1;
  // No exit signal: init reaps it by pid in join. CLONE_FILES: no copy of init's descriptors.
  pid_t pid = ::clone(maker_main, stack + kStack, CLONE_VM | CLONE_FILES | CLONE_PIDFD, &m, &pidfd);
  if (pid < 0) {
    ::munmap(map, kGuard + kStack);
    return;
  }
  m.pid = pid;
  m.pidfd = pidfd;
  m.map = map;
#else
  (void)m;
#endif
}

int join(Maker& m) {
  if (m.pid < 0) return ::unshare(CLONE_NEWNET) == 0 ? 0 : errno;  // no maker: make it here
  int s;
  // A maker that dies before it says (SIGKILL from the caller's uid, say) wakes no one: the wait is
  // in slices, and a maker found gone ends it (ESRCH; waitid WNOWAIT leaves it to be reaped below).
  // Without this init waited for good, with every signal blocked, and so did the run.
  while ((s = m.state.load(std::memory_order_acquire)) == kStarting) {
    const struct timespec slice = {0, 10 * 1000 * 1000};
    ::syscall(SYS_futex, &m.state, FUTEX_WAIT, kStarting, &slice);
    siginfo_t si{};
    if (::waitid(P_PID, static_cast<id_t>(m.pid), &si, WEXITED | WNOHANG | WNOWAIT | __WALL) == 0 && si.si_pid != 0 &&
        m.state.load(std::memory_order_acquire) == kStarting) {  // its word is written before it exits
      s = kFailed;
      m.err = ESRCH;
      break;
    }
  }
  int err = m.err;
  if (s == kMade) {
    err = ::setns(m.pidfd, CLONE_NEWNET) == 0 ? 0 : errno;
    // Before Linux 5.8 setns takes no pidfd (EINVAL); before 5.2 clone ignores CLONE_PIDFD and there is
    // none (EBADF): init makes the namespace itself, as the clone would have.
    if (err == EINVAL || err == EBADF) err = ::unshare(CLONE_NEWNET) == 0 ? 0 : errno;
    m.state.store(kJoined, std::memory_order_release);
    ::syscall(SYS_futex, &m.state, FUTEX_WAKE, 1);
  }
  while (::waitpid(m.pid, nullptr, __WALL) < 0 && errno == EINTR) {
  }
  if (m.pidfd >= 0) ::close(m.pidfd);
  ::munmap(m.map, kGuard + kStack);
  m.pid = -1;
  return err;
}

}  // namespace cage::lx::late_netns
