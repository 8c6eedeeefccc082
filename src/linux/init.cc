// cage's init (child side): pid 1 of the sandbox's pid namespace. It builds the root, starts the
// shim and the workload, reaps every zombie, forwards the supervisor's signals to the workload, and
// reports the workload's wait status. It dies with the supervisor (PDEATHSIG), and with it every
// process of the sandbox; without a pid namespace it is a child subreaper and ends the workload's whole
// tree itself (descendants.cc) before it exits, and removes the run's private directory should the
// supervisor die. Proved by tests/integration/fault_kill9.sh, fault_signals.sh, tests/escape/outlive.sh.
#include <linux/close_range.h>
#include <poll.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>

#include "common/exit_status.h"
#include "linux/child.h"
#include "linux/late_netns.h"
#include "linux/tmpfs_usage.h"
#include "linux/connect_notify.h"
#include "linux/net.h"
#include "linux/netns.h"
#include "linux/performer.h"
#include "common/send_fd.h"

extern char** environ;

namespace cage::lx {

namespace {

bool forwarded(int sig) {
  switch (sig) {
    case SIGINT: case SIGTERM: case SIGHUP: case SIGQUIT: case SIGUSR1: case SIGUSR2: case SIGWINCH:
    case SIGALRM: case SIGCONT:
      return true;
    default:
      return false;
  }
}

// The workload's last steps: clean fds and signals, limits, privileges, Landlock, seccomp, exec.
[[noreturn]] void exec_workload(const ChildContext& c) {
  const Plan& plan = *c.plan;
  sigset_t none;
  sigemptyset(&none);
  if (sigprocmask(SIG_SETMASK, &none, nullptr) != 0) child_fail(c, ChildStep::signals, errno);
  // Only stdin, stdout and stderr cross into the workload; an inherited fd to a host directory
  // would be a way out of the mount view.
  if (::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0) child_fail(c, ChildStep::signals, errno);
  if (::chdir(plan.cwd.c_str()) != 0) child_fail(c, ChildStep::chdir, errno);
  for (size_t i = 0; i < (c.scope_refused ? c.rlimits.size() : c.plan_rlimits); ++i)
    if (::setrlimit(static_cast<__rlimit_resource>(c.rlimit_resources[i]), &c.rlimits[i]) != 0)
      child_fail(c, ChildStep::rlimit, errno, static_cast<int>(i));
  // The caller's session keyring (Kerberos caches, fscrypt and ecryptfs keys, tokens) is inherited
  // across fork and exec: the workload starts in a new, empty one (tests/escape/keyring.sh). A
  // kernel without keys support, or an outer seccomp filter that refuses keyctl (Docker's default
  // profile), leaves the workload no keyring to read: then the failed join is no loss. Any other
  // failure (the user's key quota) fails closed.
  if (::syscall(SYS_keyctl, 1 /* KEYCTL_JOIN_SESSION_KEYRING */, nullptr) < 0) {
    const int e = errno;
    if (::syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* KEY_SPEC_SESSION_KEYRING */, 0) >= 0)
      child_fail(c, ChildStep::keyring, e);
  }
  ChildStep step = ChildStep::none;
  if (int e = drop_privileges(&step)) child_fail(c, step, e);
  int idx = -1;
  if (int e = landlock_restrict(plan.landlock, &step, &idx)) child_fail(c, step, e, idx);
  // No pid namespace: the workload must not outlive cage's init.
  if (!plan.init.pid1 && ::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) child_fail(c, ChildStep::signals, errno);
  // connect(), chmod and utimes of the workload go through the supervisor's check, and --explain's
  // calls past its observer, from here on: neither init, the --net shim nor the steps above (the
  // keyring join, which --explain's errno observer would refuse: seccomp_observe.h) are the
  // workload. The listener goes to the supervisor over notify_fd, closed at exec (close_range above).
  if (!c.notify.empty())
    if (int e = connect_notify::install(c.notify_fd, c.notify, c.notify_netns)) child_fail(c, ChildStep::seccomp, e);
  if (int e = seccomp::load_program(c.seccomp_extra)) child_fail(c, ChildStep::seccomp, e);
  if (int e = seccomp::load_program(c.seccomp_exec)) child_fail(c, ChildStep::seccomp, e);
  if (int e = seccomp::load_program(c.seccomp)) child_fail(c, ChildStep::seccomp, e);
  // Nothing of the workload's own runs before the --net shim and the performer (the workload's
  // connect, bind and listen: performer.h) have confined themselves; they do it while the steps
  // above run (net.h).
  if (int e = net::await_shim(c.shim_ready)) child_fail(c, ChildStep::shim, e);
  if (int e = performer::await_ready(c.performer_ready)) child_fail(c, ChildStep::performer, e);
  ::execve(plan.exec_path.c_str(), c.argv.data(), c.envp.data());
  child_fail(c, ChildStep::exec, errno);
}

// The workload's process shares init's memory until its execve (CLONE_VM | CLONE_VFORK, as
// posix_spawn does), on a stack of its own: no copy of init's page tables and no copy-on-write
// faults on either side, on the run's critical path. Init sleeps until the exec (or the process's
// failure): nothing runs on init's memory meanwhile. Everything exec_workload changes is the
// process's own (fd table, cwd, signal mask, rlimits, credentials, keyring, Landlock domain,
// seccomp filter: none of CLONE_FILES, CLONE_FS, CLONE_THREAD); what it writes to memory
// (errno) init never reads again; it uses no library state init relies on (caps.cc drops the
// capabilities with raw system calls: libcap-ng caches a pid). Sanitizers keep fork: their runtime tracks
// one stack per thread.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
pid_t spawn_workload(const ChildContext& c) {
  pid_t pid = ::fork();
  if (pid == 0) exec_workload(c);
  return pid;
}
#else
int workload_main(void* c) { exec_workload(*static_cast<const ChildContext*>(c)); }

pid_t spawn_workload(const ChildContext& c) {
  constexpr size_t kStack = 1 << 20, kGuard = 1 << 16;  // touched only as deep as exec_workload goes
  // The lowest 64 KiB stay unmapped-like (PROT_NONE): an overflow faults instead of writing into
  // init's memory beneath.
  void* map = ::mmap(nullptr, kGuard + kStack, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (map == MAP_FAILED) return -1;
  char* stack = static_cast<char*>(map) + kGuard;
  if (::mprotect(stack, kStack, PROT_READ | PROT_WRITE) != 0) {
    int e = errno;
    ::munmap(map, kGuard + kStack);
    errno = e;
    return -1;
  }
  pid_t pid = ::clone(workload_main, stack + kStack, CLONE_VM | CLONE_VFORK | SIGCHLD, const_cast<ChildContext*>(&c));
  int e = errno;
  ::munmap(map, kGuard + kStack);  // the process has exec'd or exited: it no longer runs on it
  errno = e;
  return pid;
}
#endif

void wipe_environment() {
  // /proc/1/environ shows the memory the host environment was passed in; clear it so no secret of
  // the caller's environment is readable there (init is also non-dumpable).
  for (char** e = environ; e && *e; ++e) std::memset(*e, 0, std::strlen(*e));
}

// A capped stream: from here on neither init nor anything it starts holds the real one (dup2
// closes it), so no descriptor past the cap reaches it. dup2's copy is not close-on-exec.
void take_capped_output(const ChildContext& c) {
  for (int fd = 1; fd < 3; ++fd)
    if (c.output_fds[fd] >= 0 && (::dup2(c.output_fds[fd], fd) < 0 || ::close(c.output_fds[fd]) != 0))
      child_fail(c, ChildStep::sync, errno);
}

// The supervisor is gone, or gave up before its services were up: nothing to report to.
[[noreturn]] void abandoned(const ChildContext& c) {
  if (!c.plan->init.pid1 && c.private_dir) remove_private_dir(c.private_dir);
  _exit(exit_status::kCageError);
}

// Waits for the supervisor's release byte; exits if the supervisor is gone first.
void await_release(const ChildContext& c) {
  const bool pid1 = c.plan->init.pid1;
  // With a pid namespace the kernel ends every process of the sandbox when init dies. Without one,
  // init must outlive a supervisor killed with SIGKILL long enough to end the workload's whole tree
  // and remove the run's private directory: it is told by a signal it waits for, not killed.
  if (::prctl(PR_SET_PDEATHSIG, pid1 ? SIGKILL : kEndRunSignal) != 0) child_fail(c, ChildStep::sync, errno);
  // A supervisor that died before the prctl sends no signal, and may have released us already.
  struct pollfd gone = {c.supervisor_pidfd, POLLIN, 0};
  const bool early = ::poll(&gone, 1, 0) != 0;
  ::close(c.supervisor_pidfd);
  char go = 0;
  ssize_t n = 0;
  while (!early && (n = ::read(c.sync_read, &go, 1)) < 0 && errno == EINTR) {
  }
  if (n != 1) abandoned(c);
  c.scope_refused = go == kReleaseFallback;
}

// The second byte: the supervisor's services are up. Nothing that reaches them (the shim, the
// performer, the resolver) and no workload starts before it; the view is built meanwhile.
void await_services(const ChildContext& c) {
  char up = 0;
  ssize_t n;
  while ((n = ::read(c.sync_read, &up, 1)) < 0 && errno == EINTR) {
  }
  if (n != 1 || up != kServicesUp) abandoned(c);
  // Kept, non-blocking: the supervisor's kEndRun comes on it (end_requested).
  if (::fcntl(c.sync_read, F_SETFL, O_NONBLOCK) != 0) child_fail(c, ChildStep::sync, errno);
}

// Whether the supervisor has asked init to end the run: its kEndRun byte is on the sync pipe. Only
// the supervisor holds the pipe's write end; no process of the sandbox can write it.
bool end_requested(const ChildContext& c) {
  char b = 0;
  ssize_t n;
  do n = ::read(c.sync_read, &b, 1);
  while (n < 0 && errno == EINTR);
  return n == 1 && b == kEndRun;
}

// The limit is the sandbox user namespace's own (kernel/ucount.c: the user.* sysctls show the
// reader's namespace, writable with CAP_SYS_RESOURCE in it, which init has), checked for every
// namespace created beneath it whatever the filter; written through the host's /proc while it is
// still mounted here (the sandbox's /proc/sys is read-only).
void forbid_nested_userns(const ChildContext& c) {
  int fd = ::open("/proc/sys/user/max_user_namespaces", O_WRONLY | O_CLOEXEC);
  if (fd < 0 || ::write(fd, "0", 1) != 1) child_fail(c, ChildStep::nested_userns, errno);
  ::close(fd);
}

// The sandbox's own root and hostname (Plan::init.build_root); the fds opened for the mounts end here.
void build_view(const ChildContext& c) {
  const bool own_root = c.plan->init.build_root;
  int idx = -1;
  ChildStep mount_phase = ChildStep::none;
  // The view's entries are the plan's modes, never narrowed by the caller's umask (the supervisor's
  // fill_tmpfs does the same); the workload gets the caller's umask back.
  const mode_t mask = ::umask(022);
  if (own_root)
    if (int e = build_root(c, &mount_phase, &idx)) child_fail(c, mount_phase, e, idx);
  ::umask(mask);
  if (c.fill_fd >= 0) ::close(c.fill_fd);
  if (own_root) open_sized_tmpfs(*c.plan, c.tmpfs_fds.data());
  for (int fd : c.source_fds)
    if (fd >= 0) ::close(fd);
  if (c.dev_null >= 0) ::close(c.dev_null);
  const Plan& plan = *c.plan;
  if (own_root && ::sethostname(plan.hostname.data(), plan.hostname.size()) != 0)
    child_fail(c, ChildStep::hostname, errno);
}

// What the workload's network goes through: --net's transparent routes and shim, the offline
// resolver, the connect() notification filter. net_fd, their channel to the supervisor, ends here.
void connect_network(const ChildContext& c) {
  const Plan& plan = *c.plan;
  if (plan.net.mode == NetPlan::Mode::proxy && (plan.net.transparent.enabled || plan.net.lo_address != 0))
    if (int e = net::setup_transparent(plan.net, c.net_fd)) child_fail(c, ChildStep::shim, e);
  if (plan.net.offline_resolver != 0)
    if (int e = net::setup_offline_resolver(plan.net, c.net_fd)) child_fail(c, ChildStep::loopback, e);
  if (plan.net.mode == NetPlan::Mode::proxy && !plan.loopback_proxy)
    if (int e = net::spawn_shim(plan.net, c.net_fd, c.secret_envp, &c.shim_ready)) child_fail(c, ChildStep::shim, e);
  if (c.net_fd >= 0) ::close(c.net_fd);
  // Egress hand-off: the workload's connect, bind and listen are run by the performer (performer.h);
  // its channel reaches the supervisor before the workload's listener does.
  if (c.notify_netns) {
    int end = -1;
    if (int e = performer::spawn(c, &end, &c.performer_ready)) child_fail(c, ChildStep::performer, e);
    const int e = send_fd(c.notify_fd, end, 'p');
    ::close(end);
    if (e != 0) child_fail(c, ChildStep::performer, e);
  }
}

pid_t start_workload(const ChildContext& c) {
  pid_t child = spawn_workload(c);
  if (child < 0) child_fail(c, ChildStep::fork_workload, errno);
  if (c.shim_ready >= 0) ::close(c.shim_ready);
  if (c.performer_ready >= 0) ::close(c.performer_ready);
  if (c.notify_fd >= 0) ::close(c.notify_fd);  // the workload has sent the listener, or failed
  for (char* s : c.secret_envp) explicit_bzero(s, std::strlen(s));  // the workload has its own copy
  return child;
}

// init keeps no privilege it does not need: reaping and kill() of its own children need none. A
// drop that fails ends the run (the supervisor hears it on the error pipe, still open here).
void drop_init_privileges(const ChildContext& c, pid_t child) {
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (int e = clear_capabilities()) {
    ::kill(child, SIGKILL);
    child_fail(c, ChildStep::caps, e);
  }
}

// As the pid namespace's init, end every other process of the sandbox and reap it: what the kernel
// does when init exits, done first so that init's report can say the sandbox is empty. The kernel's
// way (and kill(-1, SIGKILL)) signals one process after the other, so one that dies early (and closes
// its pipes and sockets) can be seen dead by one not yet reached, which then runs on for a moment: a
// watcher below a deep chain did write into --rw (tests/escape/deep_chain.sh, seen in CI's Docker
// stage). So every process is stopped first; a stopped process neither runs nor exits until the
// SIGKILL that follows, and a fork racing kill(-1) is undone by the kernel (copy_process). Processes
// that deliberately SIGCONT each other can still run until the SIGKILL reaches them (as in
// descendants.cc; only a cgroup freezer would hold them), and still die before cage returns. Every
// process here has init's uid (the user namespace maps one id; nosuid and no_new_privs keep it so), so
// the signals reach all of them; false if they did not.
bool end_pid_namespace() {
  if (::kill(-1, SIGSTOP) != 0 && errno != ESRCH) return false;
  if (::kill(-1, SIGKILL) != 0 && errno != ESRCH) return false;
  for (;;) {
    if (::waitpid(-1, nullptr, __WALL) > 0 || errno == EINTR) continue;
    return errno == ECHILD;
  }
}

// The workload has exited: its wait status (and, with a root of its own, the tmpfs usage) goes to the
// supervisor; without a pid namespace init ends what is left of the tree itself. As pid 1 it ends the
// rest first and says so: the supervisor then need not wait for init's own exit, which tears down
// the mounts and namespaces (bubblewrap's monitor likewise returns on the exit code its pid 1 sends
// through an eventfd, not on pid 1's death: bubblewrap.c, monitor_child).
[[noreturn]] void report_workload_exit(const ChildContext& c, int status) {
  const bool empty = c.plan->init.pid1 && end_pid_namespace();
  send_exit_report(*c.plan, c.plan->init.build_root ? c.tmpfs_fds.data() : nullptr, status, empty, c.status_write);
  if (!c.plan->init.pid1) end_descendants();
  _exit(0);
}

void reap_children(const ChildContext& c, pid_t child) {
  int status = 0;
  pid_t pid;
  while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0)
    if (pid == child) report_workload_exit(c, status);
}

// init's life after the start: reap every zombie, forward the supervisor's signals to the workload,
// and end with the workload (or with the supervisor, when there is no pid namespace to do it).
[[noreturn]] void supervise_workload(const ChildContext& c, pid_t child, pid_t supervisor) {
  const bool pid1 = c.plan->init.pid1;
  sigset_t all;
  sigfillset(&all);
  for (;;) {
    siginfo_t si;
    int sig = sigwaitinfo(&all, &si);
    if (sig < 0) continue;
    if (!pid1 && ::getppid() != supervisor) {  // reparented: the supervisor died (SIGKILL)
      end_descendants();
      if (c.private_dir) remove_private_dir(c.private_dir);
      _exit(exit_status::kCageError);
    }
    // The supervisor ends the run (--timeout's grace is over, the audit failed): init stops every
    // process of the run before it kills any, then dies. The request is the supervisor's byte on the
    // sync pipe; any kEndRunSignal (the supervisor's wake-up, or one from inside) makes init look. pid
    // 1 cannot SIGKILL itself, and its exit status is not read. (A supervisor that dies is another
    // matter: its death SIGKILLs pid 1, PR_SET_PDEATHSIG; without a pid namespace the reparenting
    // above ends the tree.)
    if (sig == kEndRunSignal && end_requested(c)) {
      if (pid1) {
        end_pid_namespace();
        _exit(exit_status::kCageError);
      }
      end_descendants();
      ::kill(::getpid(), SIGKILL);
    }
    if (sig == SIGCHLD) {
      reap_children(c, child);
      continue;
    }
    // Forward only what the supervisor sent (si_pid 0: a sender outside this pid namespace, by
    // kill()); a terminal's signals already reached the workload's process group directly.
    if (forwarded(sig) && si.si_code <= 0 && (si.si_pid == 0 || (!pid1 && si.si_pid == ::getppid())))
      ::kill(child, sig);
  }
}

}  // namespace

void child_fail(const ChildContext& c, ChildStep step, int err, int index) {
  ChildFailure f{step, err, index};
  ssize_t n;
  do n = ::write(c.error_write, &f, sizeof f);
  while (n < 0 && errno == EINTR);
  int code = exit_status::kCageError;
  if (step == ChildStep::exec) code = (err == ENOENT || err == ENOTDIR) ? exit_status::kNotFound : exit_status::kCannotExecute;
  _exit(code);
}

// The sequence of the sandbox's pid 1, each step failing closed through child_fail.
void run_init(const ChildContext& c) {
  const InitPlan& init = c.plan->init;
  take_capped_output(c);
  wipe_environment();
  const pid_t supervisor = ::getppid();
  await_release(c);
  late_netns::Maker netns;  // on this frame, which never returns: the maker writes into it
  if (c.late_netns) late_netns::start(netns);
  if (c.plan->no_nested_userns) forbid_nested_userns(c);
  build_view(c);
  if (c.late_netns)
    if (int e = late_netns::join(netns)) child_fail(c, ChildStep::net_namespace, e);
  // Without a pid namespace init is not pid 1: as a subreaper it still inherits every orphan.
  if (!init.pid1 && ::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) child_fail(c, ChildStep::signals, errno);
  if (init.loopback)
    if (int e = bring_up_loopback()) child_fail(c, ChildStep::loopback, e);
  if (::prctl(PR_SET_DUMPABLE, 0) != 0) child_fail(c, ChildStep::signals, errno);
  await_services(c);
  connect_network(c);
  pid_t child = start_workload(c);
  drop_init_privileges(c, child);
  ::close(c.error_write);
  supervise_workload(c, child, supervisor);
}

}  // namespace cage::lx
