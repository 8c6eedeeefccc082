// Egress hand-off's performer: see performer.h. Init side (spawn, then the performer's own loop) and
// the supervisor's two calls on its channel. Proven by tests/escape/net_handoff_peer.sh,
// net_handoff_lowport.sh, net_handoff_unixbind.sh, net_handoff_performer_gone.sh, net_handoff_wedge.sh
// and net_handoff_explain.sh.
#include "linux/performer.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <new>
#include <cstring>

#include "common/exit_status.h"
#include "common/send_fd.h"
#include "linux/net.h"

namespace cage::lx::performer {
namespace {

constexpr int kChannel = 3, kReady = 4;  // the performer's only descriptors

// One request and its descriptors (-1 where none came); the count, -2 when the supervisor is gone,
// -1 for a message that is not a whole request (answered EACCES).
int receive_request(Request* r, int fds[3]) {
  fds[0] = fds[1] = fds[2] = -1;
  int count = 0, flags = 0;
  const ssize_t n = recv_fds(kChannel, r, sizeof *r, fds, 3, &count, &flags);
  if (n <= 0) return -2;
  const bool whole = n == static_cast<ssize_t>(sizeof *r) && !(flags & (MSG_TRUNC | MSG_CTRUNC));
  return whole ? count : -1;
}

void reply(uint64_t id, int err) {
  Reply a{id, err};
  ssize_t n;
  do n = ::send(kChannel, &a, sizeof a, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
}

// The call as the workload's thread would make it: a unix path from the thread's cwd, under its
// umask, and only while the thread's root is the sandbox's (the performer's own) root.
int perform(const Request& r, const int fds[3], int count) {
  if (count != (r.unix_path ? 3 : 1) || r.len > sizeof r.sa) return EACCES;
  const auto* sa = reinterpret_cast<const sockaddr*>(&r.sa);
  const auto len = static_cast<socklen_t>(r.len);
  if (r.unix_path) {
    struct stat theirs, ours;
    if (::fstat(fds[2], &theirs) != 0 || ::stat("/", &ours) != 0 || theirs.st_dev != ours.st_dev ||
        theirs.st_ino != ours.st_ino)
      return EACCES;
    if (::fchdir(fds[1]) != 0) return EACCES;
    ::umask(static_cast<mode_t>(r.umask) & 0777);
  }
  int rc;
  if (r.nr == SYS_listen) rc = ::listen(fds[0], r.backlog);
  else if (r.nr == SYS_bind) rc = ::bind(fds[0], sa, len);
  else if (r.nr == SYS_connect) rc = ::connect(fds[0], sa, len);
  else return EACCES;
  return rc == 0 ? 0 : errno;
}

// A blocking connect waits in a thread of its own, so the performer answers the sandbox's other calls
// meanwhile; a thread, not a child, so that a unix server's SO_PEERCRED names the performer, which
// lives as long as the sandbox, and not a pid that ends at once (and may be reused). The thread
// unshares its cwd and umask (CLONE_FS) before it changes them.
std::atomic<int> waiting{0};
struct Waiting {
  Request r;
  int fds[3];
  int count;
};

void* connect_thread(void* arg) {
  auto* w = static_cast<Waiting*>(arg);
  const int err = ::unshare(CLONE_FS) == 0 ? perform(w->r, w->fds, w->count) : EACCES;
  reply(w->r.id, err);
  for (int fd : w->fds)
    if (fd >= 0) ::close(fd);
  delete w;
  --waiting;
  return nullptr;
}

// -1 when the thread answers (it owns the descriptors then), else the errno to answer now.
int start_connect(const Request& r, int fds[3], int count) {
  if (waiting.load() >= kMaxWaiting) return EAGAIN;
  auto* w = new (std::nothrow) Waiting{r, {fds[0], fds[1], fds[2]}, count};
  if (!w) return EAGAIN;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t t;
  ++waiting;
  const int e = pthread_create(&t, &attr, connect_thread, w);
  pthread_attr_destroy(&attr);
  if (e != 0) {
    --waiting;
    delete w;
    return EAGAIN;
  }
  fds[0] = fds[1] = fds[2] = -1;
  return -1;
}

[[noreturn]] void serve() {
  for (;;) {
    Request r;
    int fds[3];
    const int count = receive_request(&r, fds);
    if (count == -2) _exit(0);  // the supervisor is gone: the run is over
    int err = count < 0 ? EACCES : -1;
    if (err < 0 && r.blocking && r.nr == SYS_connect) err = start_connect(r, fds, count);
    else if (err < 0) err = perform(r, fds, count);
    if (err >= 0) reply(r.id, err);
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
  }
}

// The performer's confinement: the workload's (privileges, Landlock, seccomp), except Landlock's
// abstract-socket scope (ChildContext::performer_landlock); the seccomp profile as written, not
// --explain's rewrite, whose refusals only the workload's listener filter makes
// (ChildContext::performer_seccomp; tests/escape/net_handoff_explain.sh). Not the workload's
// rlimits: its address space is a copy of init's, and --memory's RLIMIT_AS stand-in would leave it no
// room for a thread.
[[noreturn]] void confine_and_serve(const ChildContext& c) {
  ChildStep step = ChildStep::none;
  int idx = -1;
  if (drop_privileges(&step) != 0 || ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 ||
      landlock_restrict(c.performer_landlock, &step, &idx) != 0 ||
      seccomp::load_program(c.seccomp_exec) != 0 || seccomp::load_program(c.performer_seccomp) != 0)
    _exit(exit_status::kCageError);
  ::signal(SIGPIPE, SIG_IGN);
  static const char kOk = 'r';
  if (::write(kReady, &kOk, 1) != 1) _exit(exit_status::kCageError);
  ::close(kReady);
  serve();
}

}  // namespace

int await_ready(int ready_fd) { return net::await_shim(ready_fd); }

int spawn(const ChildContext& c, int* supervisor_end, int* ready_fd) {
  *supervisor_end = -1;
  *ready_fd = -1;
  int sv[2], ready[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return errno;
  if (::pipe2(ready, O_CLOEXEC) != 0) {
    int e = errno;
    ::close(sv[0]);
    ::close(sv[1]);
    return e;
  }
  const pid_t init = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    // A copy of init (no exec): it dies with init, wipes the --secret values, and keeps no
    // descriptor but its channel and the ready pipe (moved clear of 0..9 first, as the shim's).
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || ::getppid() != init)
      _exit(exit_status::kCageError);
    for (char* s : c.secret_envp) explicit_bzero(s, std::strlen(s));
    int ch = ::fcntl(sv[1], F_DUPFD_CLOEXEC, 10), r = ::fcntl(ready[1], F_DUPFD_CLOEXEC, 10);
    if (ch < 0 || r < 0 || ::syscall(SYS_close_range, 0U, 9U, 0U) != 0 ||
        ::dup3(ch, kChannel, O_CLOEXEC) < 0 || ::dup3(r, kReady, O_CLOEXEC) < 0 ||
        ::syscall(SYS_close_range, 5U, ~0U, 0U) != 0)
      _exit(exit_status::kCageError);
    confine_and_serve(c);
  }
  const int e = pid < 0 ? errno : 0;
  ::close(sv[1]);
  ::close(ready[1]);
  if (pid < 0) {
    ::close(ready[0]);
    ::close(sv[0]);
    return e;
  }
  *supervisor_end = sv[0];
  *ready_fd = ready[0];
  return 0;
}

}  // namespace cage::lx::performer
