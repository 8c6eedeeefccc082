// The supervisor (parent side): prepares everything the child needs without allocating, clones
// into new user, mount, pid, ipc, uts, cgroup (and net) namespaces, writes the id maps, serves the
// proxy, forwards signals, enforces --timeout and turns the child's report into an exit status or
// an Error. Proved by tests/integration/*.sh.
#include "common/exit_status.h"
#include "linux/execute.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "common/secret.h"
#include "linux/child.h"
#include "linux/connect_notify.h"
#include "linux/net.h"
#include "linux/offline_resolver.h"
#include "linux/terminal_state.h"
#include "policy/rlimits.h"

namespace cage::lx {

namespace {

constexpr int kGraceMs = 5000;  // --timeout: SIGTERM, then SIGKILL this much later

struct Resource {
  const char* name;
  int id;
};
#define CAGE_RLIMIT_ENTRY(n, N) {#n, RLIMIT_##N},
const Resource kResources[] = {CAGE_RLIMITS_POSIX(CAGE_RLIMIT_ENTRY) CAGE_RLIMITS_LINUX_ONLY(CAGE_RLIMIT_ENTRY)};
#undef CAGE_RLIMIT_ENTRY

int64_t now_ms() {
  struct timespec ts {};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct Prepared {
  ChildContext ctx;
  std::vector<std::string> secrets;  // "NAME=value" of --secret, wiped once the child has its copy
  ~Prepared() { wipe(secrets); }
};

Status prepare(const Plan& plan, Prepared& p) {
  auto& c = p.ctx;
  c.plan = &plan;
  c.source_fds.assign(plan.mounts.size(), -1);
  c.tmpfs_fds.assign(plan.mounts.size(), -1);
  for (const auto& a : plan.argv) c.argv.push_back(const_cast<char*>(a.c_str()));
  c.argv.push_back(nullptr);
  if (!plan.secrets.empty()) {
    auto values = read_secrets(plan.secrets);
    if (!values) return values.error();
    p.secrets = std::move(*values);
  }
  auto secret_named = [&](const std::string& e) {  // a --secret wins over any other source of its name
    return std::any_of(plan.secrets.begin(), plan.secrets.end(), [&](const policy::Secret& s) {
      return e.size() > s.name.size() && e.compare(0, s.name.size(), s.name) == 0 && e[s.name.size()] == '=';
    });
  };
  for (const auto& e : plan.env)
    if (!secret_named(e)) c.envp.push_back(const_cast<char*>(e.c_str()));
  for (auto& s : p.secrets) {
    c.envp.push_back(s.data());
    c.secret_envp.push_back(s.data());
  }
  c.envp.push_back(nullptr);
  std::vector<policy::Rlimit> all = plan.limits.rlimits;
  all.insert(all.end(), plan.cgroup.scope.fallback_rlimits.begin(), plan.cgroup.scope.fallback_rlimits.end());
  for (size_t k = 0; k < all.size(); ++k) {
    for (const auto& res : kResources)
      if (all[k].name == res.name) {
        struct rlimit rl {};
        rl.rlim_cur = all[k].soft == UINT64_MAX ? RLIM_INFINITY : all[k].soft;
        rl.rlim_max = all[k].hard == UINT64_MAX ? RLIM_INFINITY : all[k].hard;
        c.rlimits.push_back(rl);
        c.rlimit_resources.push_back(res.id);
      }
    if (k + 1 == plan.limits.rlimits.size()) c.plan_rlimits = c.rlimits.size();
  }
  auto prog = seccomp::build_program(plan.seccomp);
  if (!prog) return prog.error();
  c.seccomp = std::move(*prog);
  if (plan.seccomp.no_memfd) {
    auto no_memfd = seccomp::build_no_memfd_supplement();
    if (!no_memfd) return no_memfd.error();
    c.seccomp_exec = std::move(*no_memfd);
  }
  if (plan.mechanism == Mechanism::landlock_only) {
    auto extra = seccomp::build_landlock_only_supplement(plan.net.mode == NetPlan::Mode::host, plan.allow_metadata);
    if (!extra) return extra.error();
    c.seccomp_extra = std::move(*extra);
    if (plan.loopback_proxy || !plan.allow_metadata)
      c.notify = connect_notify::filter(plan.loopback_proxy, !plan.allow_metadata);
  }
  return Ok{};
}

Error failure_to_error(const ChildFailure& f, const Plan& plan) {
  const char* remedy_ns = "run cage --check to see which mechanism this host lacks";
  std::string where;
  bool mount_indexed = f.step == ChildStep::mount_step || f.step == ChildStep::mount_attr;
  if (f.index >= 0 && mount_indexed && static_cast<size_t>(f.index) < plan.mounts.size())
    where = plan.mounts[f.index].why + " (" + plan.mounts[f.index].target + ")";
  if (f.index >= 0 && f.step == ChildStep::landlock_rule && static_cast<size_t>(f.index) < plan.landlock.rules.size())
    where = "landlock rule " + plan.landlock.rules[f.index].path;
  switch (f.step) {
    case ChildStep::exec:
      if (f.err == ENOENT || f.err == ENOTDIR)
        return Error{ErrorClass::not_found, "command not found inside the sandbox", "grant its directory with --ro",
                     "COMMAND " + plan.argv[0], f.err};
      if (f.err == EACCES && plan.landlock.exec_listed_only)  // the command is allowed: its interpreter was not
        return Error{ErrorClass::exec_failed, "cannot execute the command: its interpreter (#! line) is not allowed",
                     "allow the interpreter with --exec too (it then runs any script it is given)",
                     "COMMAND " + plan.argv[0], f.err};
      return Error{ErrorClass::exec_failed, "cannot execute the command", "check that it is an executable for this machine",
                   "COMMAND " + plan.argv[0], f.err};
    case ChildStep::mount_step:
      return unavailable(where.empty() ? "mount" : where, "a mount of the sandbox's view failed", remedy_ns, f.err);
    case ChildStep::mount_propagation:
      return unavailable("mount propagation", "the sandbox's mounts could not be made private (MS_PRIVATE on /)",
                         remedy_ns, f.err);
    case ChildStep::root_tmpfs:
      return unavailable("root tmpfs", "the sandbox's new root (a tmpfs) could not be mounted", remedy_ns, f.err);
    case ChildStep::mount_attr:
      return unavailable(where.empty() ? "read-only root" : where,
                         "the sandbox's root or /etc could not be made read-only (mount_setattr)", remedy_ns, f.err);
    case ChildStep::pivot_root:
      return unavailable("pivot_root", "the sandbox could not switch to its new root (pivot_root)", remedy_ns, f.err);
    case ChildStep::landlock_create:
    case ChildStep::landlock_rule:
    case ChildStep::landlock_restrict:
      return unavailable(where.empty() ? "landlock" : where, "Landlock could not be applied", remedy_ns, f.err);
    case ChildStep::seccomp:
      return unavailable("seccomp", "the seccomp filter could not be loaded", remedy_ns, f.err);
    case ChildStep::rlimit:
      return Error{ErrorClass::invalid_policy, "the resource limit could not be set", "lower it below the hard limit you have",
                   f.index < 0 ? "--rlimit"
                   : static_cast<size_t>(f.index) < plan.limits.rlimits.size()
                       ? plan.limits.rlimits[f.index].origin
                       : plan.cgroup.scope.fallback_rlimits[f.index - plan.limits.rlimits.size()].origin,
                   f.err};
    case ChildStep::chdir:
      return Error{ErrorClass::invalid_policy, "cannot enter the start directory inside the sandbox", "grant it",
                   "--chdir " + plan.cwd, f.err};
    case ChildStep::shim:
      return unavailable("--net", "the network shim could not start", remedy_ns, f.err);
    case ChildStep::nested_userns:
      return unavailable("user namespaces", "cannot forbid nested user namespaces inside the sandbox (a root caller's "
                         "nested namespace could write file capabilities valid on the host)",
                         "run cage as an unprivileged user", f.err);
    case ChildStep::keyring:
      return unavailable("keyring", "the workload's own session keyring could not be made (it would see the caller's keys)",
                         "raise kernel.keys.maxkeys / maxbytes, or end processes holding keys", f.err);
    case ChildStep::none:
    case ChildStep::sync:
    case ChildStep::hostname:
    case ChildStep::loopback:
    case ChildStep::fork_workload:
    case ChildStep::no_new_privs:
    case ChildStep::securebits:
    case ChildStep::caps:
    case ChildStep::signals: break;
  }
  return unavailable("namespaces", "setting up the sandbox failed", remedy_ns, f.err);
}

struct Supervise {
  int pid;
  int sigfd, error_read, status_read;
  const Plan& plan;
  const RunHooks& hooks;
  SavedTerminal& terminal;
  OfflineResolver* offline;  // without --net: answered here, between the other events
  ChildFailure failure{};
  std::vector<TmpfsUsage> tmpfs{};
  // SIGKILL of a pid namespace's init takes every process of the sandbox with it. Without one, init is
  // asked to end its whole tree first (descendants.cc): a setsid'd daemon must not outlive --timeout.
  int kill_signal = plan.mechanism == Mechanism::landlock_only ? kEndRunSignal : SIGKILL;
  bool failed = false, timed_out = false, exited = false, aborted = false;
  int init_status = 0, workload_status = -1;

  void on_signal() {
    struct signalfd_siginfo si {};
    while (::read(sigfd, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
      if (si.ssi_signo == SIGCHLD) {
        int st = 0;
        if (::waitpid(pid, &st, WNOHANG) == pid) {
          exited = true;
          init_status = st;
        }
        continue;
      }
      if (si.ssi_signo == SIGCONT) {  // the caller's job control: `fg` or `bg` after a stop
        note_continued(terminal);
        continue;
      }
      // A terminal's signals reached the sandbox's process group already; forward what was sent to
      // cage itself (kill, a supervisor such as timeout(1) or CI).
      if (static_cast<int>(si.ssi_code) <= 0) {
        int sig = static_cast<int>(si.ssi_signo);
        if (hooks.killed && (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT))
          hooks.killed("signal", sig);
        ::kill(pid, sig);
      }
    }
  }
  void on_error_pipe() {
    ChildFailure f{};
    ssize_t n = ::read(error_read, &f, sizeof f);
    if (n == static_cast<ssize_t>(sizeof f) && !failed) {
      failure = f;
      failed = true;
    } else if (n <= 0) {
      error_read = -1;
    }
  }
  void run() {
    int64_t deadline = plan.limits.timeout_ms ? now_ms() + static_cast<int64_t>(*plan.limits.timeout_ms) : -1;
    int64_t kill_at = -1;
    while (!exited) {
      struct pollfd fds[4] = {{sigfd, POLLIN, 0}, {aborted ? -1 : hooks.abort_fd, POLLIN, 0}, {error_read, POLLIN, 0},
                              {offline ? offline->fd() : -1, POLLIN, 0}};
      int wait = -1;
      int64_t next = kill_at >= 0 ? kill_at : deadline;
      if (next >= 0) wait = static_cast<int>(std::max<int64_t>(0, next - now_ms()));
      int rc = ::poll(fds, 4, wait);  // a negative fd is skipped
      if (rc < 0 && errno != EINTR) break;
      if (rc > 0 && (fds[0].revents & POLLIN)) on_signal();
      if (rc > 0 && error_read >= 0 && (fds[2].revents & (POLLIN | POLLHUP))) on_error_pipe();
      if (rc > 0 && fds[3].fd >= 0 && fds[3].revents) offline->on_readable();
      if (rc > 0 && !aborted && (fds[1].revents & POLLIN)) {
        aborted = true;
        if (hooks.killed) hooks.killed("audit_failed", SIGKILL);
        ::kill(pid, kill_signal);
      }
      int64_t t = now_ms();
      if (deadline >= 0 && !timed_out && t >= deadline) {
        timed_out = true;
        if (hooks.killed) hooks.killed("timeout", SIGTERM);
        ::kill(pid, SIGTERM);
        kill_at = t + kGraceMs;
      } else if (kill_at >= 0 && t >= kill_at) {
        if (hooks.killed) hooks.killed("timeout", SIGKILL);
        ::kill(pid, kill_signal);
        kill_at = -1;
      }
    }
    while (error_read >= 0) on_error_pipe();
    int st = 0;
    if (::read(status_read, &st, sizeof st) == static_cast<ssize_t>(sizeof st)) workload_status = st;
    if (workload_status >= 0) tmpfs = read_tmpfs_usage(plan, status_read);
  }
};

struct Pipe {
  UniqueFd r, w;
  static Result<Pipe> make() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return Error{ErrorClass::internal_error, "pipe failed", "", "pipe", errno};
    return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
  }
};

Error clone_error(int err) {
  if (err == EPERM || err == EACCES)
    return unavailable("user namespaces", "this host does not let cage create user namespaces",
                       "allow them: sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces>0, "
                       "or on Ubuntu 23.10+ install cage's AppArmor profile; in a container, run it with a "
                       "seccomp profile that permits unshare/clone",
                       err);
  if (err == ENOSPC || err == EUSERS)
    return unavailable("user namespaces", "the user namespace limit is reached",
                       "raise user.max_user_namespaces", err);
  if (err == EINVAL)
    return unavailable("namespaces", "the kernel lacks a namespace cage needs", "enable CONFIG_*_NS", err);
  return unavailable("namespaces", "clone into new namespaces failed", "run cage --check", err);
}

}  // namespace

Result<RunOutcome> execute_plan(const Plan& plan, const RunHooks& hooks) {
  Prepared prep;
  if (auto s = prepare(plan, prep); !s) return s.error();
  // The run's cgroups exist before the child does; the destructor removes them on every return below.
  std::unique_ptr<cgroup::Run> cg;
  if (plan.cgroup.version != 0) {
    auto r = cgroup::Run::create(plan.cgroup, static_cast<int>(::getpid()));
    if (!r) return r.error();
    cg = std::move(*r);
  }
  auto sync = Pipe::make(), errp = Pipe::make(), status = Pipe::make();
  if (!sync) return sync.error();
  if (!errp) return errp.error();
  if (!status) return status.error();
  auto chan = net::prepare(plan.net);  // landlock_only: carries the notification listener (connect_notify.h)
  if (!chan) return chan.error();
  if (!prep.ctx.notify.empty() && !chan->sandbox_end.valid()) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
      return Error{ErrorClass::internal_error, "cannot create the notification channel", {}, "seccomp", errno};
    chan->supervisor_end.reset(sv[0]);
    chan->sandbox_end.reset(sv[1]);
  }
  std::unique_ptr<output_cap::Pump> pump;  // made before clone: init takes its pipes as fds 1 and 2
  if (plan.limits.max_stdout || plan.limits.max_stderr) {
    auto p = output_cap::Pump::prepare(plan.limits, hooks.hash_output);
    if (!p) return p.error();
    pump = std::move(*p);
  }
  ChildContext& c = prep.ctx;
  for (int fd = 1; pump && fd < 3; ++fd) c.output_fds[fd] = pump->child_fd(fd);
  // init learns from this whether the supervisor died before init asked for a parent-death signal.
  UniqueFd self_pidfd(static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0)));
  if (!self_pidfd.valid()) return unavailable("pidfd", "cannot open a pidfd of cage itself", "use Linux 5.3 or later", errno);
  c.supervisor_pidfd = self_pidfd.get();
  c.sync_read = sync->r.get();
  c.error_write = errp->w.get();
  c.status_write = status->w.get();
  c.net_fd = chan->sandbox_end.get();
  if (!hooks.private_dir.empty()) c.private_dir = hooks.private_dir.c_str();

  sigset_t mask, old;
  sigemptyset(&mask);
  // SIGCONT still continues cage while blocked; it is read only to learn of the caller's job control.
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGALRM, SIGPIPE, SIGCONT})
    sigaddset(&mask, s);
  sigprocmask(SIG_BLOCK, &mask, &old);
  UniqueFd sigfd(::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!sigfd.valid()) {
    sigprocmask(SIG_SETMASK, &old, nullptr);
    return Error{ErrorClass::internal_error, "signalfd failed", "", "signals", errno};
  }
  unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
  if (plan.net.mode != NetPlan::Mode::host) flags |= CLONE_NEWNET;
  if (plan.mechanism == Mechanism::landlock_only) flags = 0;  // a plain fork: see fallback.cc
  long pid = ::syscall(SYS_clone, flags | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
  if (pid == 0) {
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, nullptr);
    ::close(sync->w.get());
    ::close(errp->r.get());
    ::close(status->r.get());
    ::close(sigfd.get());
    if (chan->supervisor_end.valid()) ::close(chan->supervisor_end.get());
    if (pump) pump->close_in_child();
    run_init(c);
  }
  if (pid < 0) {
    int e = errno;
    sigprocmask(SIG_SETMASK, &old, nullptr);
    return clone_error(e);
  }
  wipe(prep.secrets);  // the child has its own copy now (no CLONE_VM)
  sync->r.reset();
  errp->w.reset();
  status->w.reset();
  chan->sandbox_end.reset();
  auto reap = [&](int sig) {
    ::kill(static_cast<pid_t>(pid), sig);
    int st;
    while (::waitpid(static_cast<pid_t>(pid), &st, 0) < 0 && errno == EINTR) {
    }
    sigprocmask(SIG_SETMASK, &old, nullptr);
  };
  // init joins the cgroups before it is released, so the workload and everything it forks start there.
  // A user manager that refuses the scope leaves the rlimit approximation, said so, unless
  // --strict-limits asked for cgroups or nothing.
  char go = kRelease;
  if (cg)
    if (auto s = cg->attach(static_cast<int>(pid)); !s) {
      if (plan.cgroup.via != CgroupVia::user_scope || plan.cgroup.strict) {
        reap(SIGKILL);
        return s.error();
      }
      go = kReleaseFallback;
      cg.reset();
      if (hooks.limits_fallback) hooks.limits_fallback(plan.cgroup.scope.fallback, s.error().reason);
    }
  if (int e = plan.mechanism == Mechanism::landlock_only ? 0 : write_id_maps(plan.ids, static_cast<int>(pid))) {
    reap(SIGKILL);
    return unavailable("user namespaces", "writing the uid/gid maps failed", "run cage --check", e);
  }
  std::unique_ptr<net::Supervisor> proxy;
  std::unique_ptr<connect_notify::Mediator> mediator;
  if (!c.notify.empty()) {
    std::vector<std::string> writable;  // where Landlock lets the workload write: its chmod/utimes go there only
    for (const auto& r : plan.landlock.rules)
      if (r.access == Access::write) writable.push_back(r.path);
    auto m = connect_notify::start(std::move(chan->supervisor_end), hooks.proxy_port, std::move(writable));
    if (!m) {
      reap(SIGKILL);
      return m.error();
    }
    mediator = std::move(*m);
  }
  std::unique_ptr<OfflineResolver> offline;
  if (plan.net.offline_resolver != 0 && plan.mechanism == Mechanism::namespaces)
    offline = std::make_unique<OfflineResolver>(std::move(chan->supervisor_end));
  if (plan.net.mode == NetPlan::Mode::proxy && !plan.loopback_proxy) {
    auto s = hooks.net ? net::start(plan.net, std::move(chan->supervisor_end), hooks.net)
                       : net::start(plan.net, std::move(chan->supervisor_end));
    if (!s) {
      reap(SIGKILL);
      return s.error();
    }
    proxy = std::move(*s);
  }
  // Saved before the workload can touch the terminal, put back however the run ends (terminal_state.h).
  SavedTerminal terminal = save_terminal();
  if (::write(sync->w.get(), &go, 1) != 1) {
    reap(SIGKILL);
    return Error{ErrorClass::internal_error, "cannot start the sandbox", "", "sync", errno};
  }
  sync->w.reset();
  if (pump) pump->start();
  Supervise sup{static_cast<int>(pid), sigfd.get(), errp->r.get(), status->r.get(), plan, hooks, terminal, offline.get()};
  sup.run();
  // A SIGCONT not read yet (`bg` just before the run ended) still counts.
  sigset_t cont;
  sigemptyset(&cont);
  sigaddset(&cont, SIGCONT);
  struct timespec now {0, 0};
  if (::sigtimedwait(&cont, nullptr, &now) == SIGCONT) note_continued(terminal);
  restore_terminal(terminal);
  RunOutcome out;
  if (pump) out.output = pump->finish();  // init is gone, and with it every writer of the pipes
  proxy.reset();
  mediator.reset();
  sigprocmask(SIG_SETMASK, &old, nullptr);
  if (offline) out.offline_lookups = offline->finish();
  if (cg) {
    out.cgroup = cg->stats();
    cg->remove();
  }
  if (sup.failed) return failure_to_error(sup.failure, plan);
  out.tmpfs = std::move(sup.tmpfs);
  out.timed_out = sup.timed_out;
  out.aborted = sup.aborted;
  if (sup.workload_status >= 0) {
    out.wait_status = sup.workload_status;
    out.have_wait_status = true;
    out.exit_status = exit_status::of_wait(sup.workload_status);
  } else {
    out.wait_status = sup.init_status;
    out.exit_status = WIFSIGNALED(sup.init_status) ? exit_status::of_wait(sup.init_status) : exit_status::kCageError;
  }
  if (out.timed_out) out.exit_status = exit_status::kTimedOut;
  if (out.aborted) out.exit_status = exit_status::kCageError;
  return out;
}

}  // namespace cage::lx
