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
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "common/deadline.h"
#include "common/secret.h"
#include "common/send_fd.h"
#include "linux/child.h"
#include "linux/compile.h"
#include "linux/connect_notify.h"
#include "linux/host_view.h"
#include "linux/net.h"
#include "linux/offline_resolver.h"
#include "linux/seccomp_observe.h"
#include "linux/terminal_state.h"
#include "proxy/loopback.h"
#include "proxy/server.h"
#include "policy/rlimits.h"

namespace cage::lx {

namespace {

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

// The workload's argv and environment as C strings; a --secret's value is read here.
Status prepare_argv_env(const Plan& plan, Prepared& p) {
  auto& c = p.ctx;
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
  return Ok{};
}

// The plan's rlimits, then the cgroup scope's fallback ones (set only if the user manager refuses
// the scope: exec_workload stops at plan_rlimits otherwise).
void prepare_rlimits(const Plan& plan, ChildContext& c) {
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
}

// The seccomp programs, compiled here: the child only loads them.
Status prepare_filters(const Plan& plan, ChildContext& c) {
  auto prog = seccomp::build_program(plan.seccomp);
  if (!prog) return prog.error();
  c.seccomp = std::move(*prog);
  if (plan.seccomp.no_memfd) {
    auto no_memfd = seccomp::build_no_memfd_supplement();
    if (!no_memfd) return no_memfd.error();
    c.seccomp_exec = std::move(*no_memfd);
  }
  const bool ll = plan.seccomp.landlock_only_supplement;
  if (ll) {
    auto extra = seccomp::build_landlock_only_supplement(plan.net.mode == NetPlan::Mode::host, plan.allow_metadata);
    if (!extra) return extra.error();
    c.seccomp_extra = std::move(*extra);
  }
  const bool connect = ll && plan.loopback_proxy, metadata = ll && !plan.allow_metadata;
  const bool handoff = !ll && plan.net.transparent.handoff;
  if (handoff) c.performer_seccomp = c.seccomp;  // before --explain rewrites it (child.h)
  if (!connect && !metadata && !plan.explain && !handoff) return Ok{};
  std::vector<sock_filter> tail;
  if (plan.explain) {
    // The profile's errno refusals, observed (seccomp_observe.h); a profile that cannot be rewritten
    // keeps its filter and goes unobserved.
    auto pair = seccomp::observe_refusals(c.seccomp.filter,
                                          connect_notify::notified_calls(connect, metadata, true, handoff),
                                          seccomp::kNativeArch, seccomp::kForeignNrBit);
    if (pair) {
      c.refusals = std::exchange(c.seccomp.filter, std::move(pair->main));
      tail = std::move(pair->tail);
    }
  }
  c.notify = connect_notify::filter(connect, metadata, plan.explain, handoff, tail);
  c.notify_netns = handoff;
  if (handoff) {
    c.performer_landlock = plan.landlock;
    c.performer_landlock.scope_abstract_unix = false;
  }
  return Ok{};
}

// The executor's own checks of what compile decides together (plan_init): a root built without a
// mount namespace of its own would be mounted over the host's, a pid 1 without a pid namespace
// does not exist, and a loopback without a network namespace would change the host's `lo`.
Status check_init(const InitPlan& init) {
  auto has = [&](const char* ns) {
    return std::find(init.namespaces.begin(), init.namespaces.end(), ns) != init.namespaces.end();
  };
  if ((init.build_root && !has("mount")) || (init.pid1 && !has("pid")) || (init.loopback && !has("net")))
    return Error{ErrorClass::internal_error, "the plan's init steps do not match its namespaces",
                 "report this as a bug in cage (cage --dry-run shows the plan)", "plan"};
  return Ok{};
}

Status prepare(const Plan& plan, Prepared& p) {
  if (auto s = check_init(plan.init); !s) return s;
  auto& c = p.ctx;
  c.plan = &plan;
  c.source_fds.assign(plan.mounts.size(), -1);
  c.tmpfs_fds.assign(plan.mounts.size(), -1);
  c.fill_index = plan_fill(plan, c.fill_roles);
  if (auto s = prepare_argv_env(plan, p); !s) return s;
  prepare_rlimits(plan, c);
  return prepare_filters(plan, c);
}

constexpr const char* kRemedyCheck = "run cage --check to see which mechanism this host lacks";

// The child's steps whose failure means this host cannot build the sandbox: what the error names
// (unless it names the mount or Landlock rule at fault), says, and advises.
struct UnavailableStep {
  ChildStep step;
  const char* input;
  const char* reason;
  const char* remedy = kRemedyCheck;
};
const UnavailableStep kUnavailableSteps[] = {
    {ChildStep::mount_step, "mount", "a mount of the sandbox's view failed"},
    {ChildStep::mount_propagation, "mount propagation",
     "the sandbox's mounts could not be made private (MS_PRIVATE on /)"},
    {ChildStep::root_tmpfs, "root tmpfs", "the sandbox's new root (a tmpfs) could not be mounted"},
    {ChildStep::mount_attr, "read-only root",
     "the sandbox's root or /etc could not be made read-only (mount_setattr)"},
    {ChildStep::pivot_root, "pivot_root", "the sandbox could not switch to its new root (pivot_root)"},
    {ChildStep::landlock_create, "landlock", "Landlock could not be applied"},
    {ChildStep::landlock_rule, "landlock", "Landlock could not be applied"},
    {ChildStep::landlock_restrict, "landlock", "Landlock could not be applied"},
    {ChildStep::seccomp, "seccomp", "the seccomp filter could not be loaded"},
    {ChildStep::shim, "--net", "the network shim could not start"},
    {ChildStep::performer, "--net",
     "the process that runs the workload's connect, bind and listen could not start"},
    {ChildStep::nested_userns, "user namespaces",
     "cannot forbid nested user namespaces inside the sandbox (a root caller's nested namespace could write "
     "file capabilities valid on the host)",
     "run cage as an unprivileged user"},
    {ChildStep::net_namespace, "namespaces", "the sandbox's network namespace could not be created",
     "run cage --check; a full namespace limit (user.max_net_namespaces) is raised with sysctl"},
    {ChildStep::keyring, "keyring",
     "the workload's own session keyring could not be made (it would see the caller's keys)",
     "raise kernel.keys.maxkeys / maxbytes, or end processes holding keys"},
};

// The mount step or Landlock rule a failure's index points at, or "" when it names none.
std::string failed_item(const ChildFailure& f, const Plan& plan) {
  if (f.index < 0) return "";
  auto i = static_cast<size_t>(f.index);
  bool mount_indexed = f.step == ChildStep::mount_step || f.step == ChildStep::mount_attr;
  if (mount_indexed && i < plan.mounts.size()) return plan.mounts[i].why + " (" + plan.mounts[i].target + ")";
  if (f.step == ChildStep::landlock_rule && i < plan.landlock.rules.size())
    return "landlock rule " + plan.landlock.rules[i].path;
  return "";
}

Error exec_error(const ChildFailure& f, const Plan& plan) {
  std::string input = "COMMAND " + plan.argv[0];
  // A script's #! interpreter is looked at only now that the exec has failed (compile.cc).
  if (f.err == ENOENT || f.err == ENOTDIR || f.err == EACCES)
    if (auto why = interpreter_problem(plan, *make_real_host_view())) return *why;
  if (f.err == ENOENT || f.err == ENOTDIR)
    return Error{ErrorClass::not_found,
                 "the command, or the interpreter or dynamic loader it needs, was not found inside the sandbox",
                 "grant its directory with --ro (and the directory of what its #! line or ELF header names)", input,
                 f.err};
  if (f.err == EACCES && plan.landlock.exec_listed_only)  // the command is allowed: its interpreter was not
    return Error{ErrorClass::exec_failed,
                 "cannot execute the command: its interpreter (#! line) is not allowed",
                 "allow the interpreter with --exec too (it then runs any script it is given)", input, f.err};
  return Error{ErrorClass::exec_failed, "cannot execute the command",
               "check that it is an executable for this machine", input, f.err};
}

// The flag or profile key of the rlimit that could not be set: the plan's own, then the cgroup
// scope's fallback rlimits (prepare() lists them in that order).
std::string rlimit_origin(const ChildFailure& f, const Plan& plan) {
  if (f.index < 0) return "--rlimit";
  auto i = static_cast<size_t>(f.index);
  if (i < plan.limits.rlimits.size()) return plan.limits.rlimits[i].origin;
  return plan.cgroup.scope.fallback_rlimits[i - plan.limits.rlimits.size()].origin;
}

Error failure_to_error(const ChildFailure& f, const Plan& plan) {
  if (f.step == ChildStep::exec) return exec_error(f, plan);
  if (f.step == ChildStep::rlimit)
    return Error{ErrorClass::invalid_policy, "the resource limit could not be set",
                 "lower it below the hard limit you have", rlimit_origin(f, plan), f.err};
  if (f.step == ChildStep::chdir)
    return Error{ErrorClass::invalid_policy, "cannot enter the start directory inside the sandbox",
                 "grant it", "--chdir " + plan.cwd, f.err};
  for (const auto& u : kUnavailableSteps)
    if (u.step == f.step) {
      std::string where = failed_item(f, plan);
      return unavailable(where.empty() ? u.input : where, u.reason, u.remedy, f.err);
    }
  return unavailable("namespaces", "setting up the sandbox failed", kRemedyCheck, f.err);
}

struct Supervise {
  int pid;
  int sigfd, error_read, status_read;
  int end_write;  // the sync pipe's write end: kEndRun, init's request to end the run (end_run)
  const Plan& plan;
  const RunHooks& hooks;
  SavedTerminal& terminal;
  OfflineResolver* offline;  // without --net: answered here, between the other events
  int64_t released_ms;  // --timeout counts from init's release
  int fill_fd = -1;     // readable once init hands over the tmpfs the supervisor fills (Launch::fill_view)
  std::function<void()> fill{};
  ChildFailure failure{};
  std::vector<TmpfsUsage> tmpfs{};
  // SIGKILL of a pid namespace's init would take every process of the sandbox with it, but one by one
  // (zap_pid_ns_processes), so one killed early could be seen dead by one not yet reached. init is
  // asked instead (kEndRun, kEndRunSignal to wake it) to stop them all before it kills any
  // (end_pid_namespace); SIGKILL follows at kill_at in case init is not yet reading signals (still
  // building the view), or a flood of the sandbox's own SIGPWR keeps it busy. Without a
  // pid namespace init ends its whole tree the same way (descendants.cc) and is never SIGKILLed: its
  // death would orphan the rest, and a setsid'd daemon must not outlive --timeout.
  static constexpr int64_t kEndRunGraceMs = 1000;
  int64_t kill_at = -1;
  // Whether the run may end on init's report that the sandbox is empty, before init's own exit (its
  // teardown of the mounts and namespaces, ~0.5 ms): not while a cgroup waits for init to leave it.
  bool end_on_report = false;
  bool failed = false, timed_out = false, exited = false, aborted = false, reported = false;
  int init_status = 0, workload_status = -1;
  int end_for = 0, ended_for = 0;  // the SIGTERM or SIGHUP cage got; set in ended_for once it ends the run
  int64_t end_for_at = -1;         // when that signal's grace is over (on_termination)

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
      int sig = static_cast<int>(si.ssi_signo);
      // A terminal's signals reached the sandbox's process group already; forward what was sent to
      // cage itself (kill, a supervisor such as timeout(1) or CI).
      if (static_cast<int>(si.ssi_code) <= 0) {
        if (hooks.killed && (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT))
          hooks.killed("signal", sig);
        ::kill(pid, sig);
      }
      if (sig == SIGTERM || sig == SIGHUP) on_termination(sig);
    }
  }
  // SIGTERM or SIGHUP asks the run to end, as docker stop and systemd do: a workload still running
  // Deadline::kGraceMs later (it ignores or defers the signal) is ended with the whole sandbox, and
  // cage ends by that signal (outcome_of, exit_status::finish). A second one during the grace ends
  // it at once. SIGINT never escalates: an interactive shell inside ignores it and keeps its session.
  void on_termination(int sig) {
    if (ended_for != 0) return;
    if (end_for_at >= 0) {
      end_for_at = now_ms();
      return;
    }
    end_for = sig;
    end_for_at = now_ms() + Deadline::kGraceMs;
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
  void on_abort() {
    aborted = true;
    if (hooks.killed) hooks.killed("audit_failed", SIGKILL);
    end_run();
  }
  void end_run() {
    const char end = kEndRun;  // the request, then the wake-up: init reads the byte on the signal
    ssize_t n;
    do n = ::write(end_write, &end, 1);
    while (n < 0 && errno == EINTR);
    ::kill(pid, kEndRunSignal);
    if (plan.init.pid1 && kill_at < 0) kill_at = now_ms() + kEndRunGraceMs;
  }
  // poll's wait: the deadline's, shortened to the SIGKILL still due after end_run.
  int poll_ms(const Deadline& timeout) const {
    int ms = timeout.poll_ms(now_ms());
    for (int64_t at : {kill_at, end_for_at}) {
      if (at < 0) continue;
      int64_t left = std::max<int64_t>(0, at - now_ms());
      ms = ms < 0 ? static_cast<int>(left) : static_cast<int>(std::min<int64_t>(ms, left));
    }
    return ms;
  }
  void on_deadline(Deadline::Step step) {
    if (step == Deadline::Step::terminate) {
      timed_out = true;
      if (hooks.killed) hooks.killed("timeout", SIGTERM);
      ::kill(pid, SIGTERM);
    } else if (step == Deadline::Step::kill) {
      if (hooks.killed) hooks.killed("timeout", SIGKILL);
      end_run();
    }
    if (end_for_at >= 0 && now_ms() >= end_for_at) {
      end_for_at = -1;
      ended_for = end_for;
      if (hooks.killed) hooks.killed("signal", SIGKILL);
      end_run();
    }
    if (kill_at >= 0 && now_ms() >= kill_at) {
      ::kill(pid, SIGKILL);
      kill_at = -1;
    }
  }
  void on_events(const struct pollfd (&fds)[6]) {
    if (fds[0].revents & POLLIN) on_signal();
    if (fds[5].fd >= 0 && fds[5].revents) {
      fill();
      fill_fd = -1;
    }
    if (error_read >= 0 && (fds[2].revents & (POLLIN | POLLHUP))) on_error_pipe();
    if (fds[4].fd >= 0 && fds[4].revents) read_status();
    if (fds[3].fd >= 0 && fds[3].revents) offline->on_readable();
    if (!aborted && (fds[1].revents & POLLIN)) on_abort();
  }
  // init's report: the workload's status, tmpfs usage, and whether the sandbox is empty now. init
  // writes it in one write (send_exit_report); reading it whole waits at most for init's exit.
  void read_status() {
    reported = true;
    int st = 0;
    if (::read(status_read, &st, sizeof st) == static_cast<ssize_t>(sizeof st)) workload_status = st;
    bool empty = false;
    if (workload_status >= 0) tmpfs = read_tmpfs_usage(plan, status_read, &empty);
    if (empty && end_on_report) exited = true;
  }
  // After the run: the rest of init's report (a failure; the status, if not read yet).
  void read_reports() {
    while (error_read >= 0) on_error_pipe();
    if (!reported) read_status();
  }
  void run() {
    Deadline timeout(released_ms, plan.limits.timeout_ms);
    while (!exited) {
      struct pollfd fds[6] = {{sigfd, POLLIN, 0}, {aborted ? -1 : hooks.abort_fd, POLLIN, 0}, {error_read, POLLIN, 0},
                              {offline ? offline->fd() : -1, POLLIN, 0},
                              {end_on_report && !reported ? status_read : -1, POLLIN, 0}, {fill_fd, POLLIN, 0}};
      int rc = ::poll(fds, 6, poll_ms(timeout));  // a negative fd is skipped
      if (rc < 0 && errno != EINTR) break;
      if (rc > 0) on_events(fds);
      if (!exited) on_deadline(timeout.due(now_ms()));  // init reaped in this pass: its pid is no longer ours
    }
    read_reports();
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

// The workload's own status when init reported one; else init's death by a signal, or cage's error.
RunOutcome outcome_of(Supervise& sup, RunOutcome out) {
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
  if (WIFSIGNALED(out.wait_status)) out.died_of = WTERMSIG(out.wait_status);
  // Ended for the SIGTERM or SIGHUP cage got (on_termination), unless it exited by itself meanwhile.
  if (sup.ended_for != 0 && !(out.have_wait_status && WIFEXITED(out.wait_status))) {
    // init SIGKILLs every process of the sandbox and exits without a report (end_pid_namespace,
    // end_descendants): the result records the workload's death by SIGKILL, not init's exit.
    if (!out.have_wait_status) out.wait_status = SIGKILL;
    out.died_of = sup.ended_for;
    out.exit_status = exit_status::kSignalBase + sup.ended_for;
  }
  if (out.timed_out || out.aborted) out.died_of = 0;
  if (out.timed_out) out.exit_status = exit_status::kTimedOut;
  if (out.aborted) out.exit_status = exit_status::kCageError;
  return out;
}

// Block the signals the supervisor reads from a signalfd while the sandbox runs, and give cage its
// own mask back after it, or on any failure before.
class BlockedSignals {
 public:
  ~BlockedSignals() { restore(); }
  Status block() {
    sigset_t mask;
    sigemptyset(&mask);
    // SIGCONT still continues cage while blocked; it is read only to learn of the caller's job control.
    for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGALRM, SIGPIPE,
                  SIGCONT})
      sigaddset(&mask, s);
    sigprocmask(SIG_BLOCK, &mask, &old_);
    blocked_ = true;
    fd_.reset(::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!fd_.valid()) return Error{ErrorClass::internal_error, "signalfd failed", "", "signals", errno};
    return Ok{};
  }
  void restore() {
    if (blocked_) sigprocmask(SIG_SETMASK, &old_, nullptr);
    blocked_ = false;
  }
  int fd() const { return fd_.get(); }

 private:
  sigset_t old_{};
  bool blocked_ = false;
  UniqueFd fd_;
};

// Between clone and the release, init waits on the sync pipe and nothing of the workload has run:
// any failure in that window kills and reaps it, then gives cage its signal mask back.
class UnreleasedChild {
 public:
  UnreleasedChild(pid_t pid, BlockedSignals& signals) : pid_(pid), signals_(&signals) {}
  UnreleasedChild(const UnreleasedChild&) = delete;
  UnreleasedChild& operator=(const UnreleasedChild&) = delete;
  ~UnreleasedChild() {
    if (!armed_) return;
    ::kill(pid_, SIGKILL);
    int st;
    while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
    signals_->restore();
  }
  pid_t pid() const { return pid_; }
  void released() { armed_ = false; }  // from here the supervisor's loop ends the run

 private:
  pid_t pid_;
  BlockedSignals* signals_;
  bool armed_ = true;
};

// Plan::init's namespaces as clone flags; none is a plain fork (see landlock_only.cc).
constexpr std::pair<const char*, unsigned long> kNamespaceFlags[] = {
    {"user", CLONE_NEWUSER}, {"mount", CLONE_NEWNS}, {"pid", CLONE_NEWPID}, {"ipc", CLONE_NEWIPC},
    {"uts", CLONE_NEWUTS},   {"cgroup", CLONE_NEWCGROUP}, {"net", CLONE_NEWNET}};

unsigned long namespace_flag(const std::string& name) {
  for (const auto& [n, flag] : kNamespaceFlags)
    if (name == n) return flag;
  return 0;
}

unsigned long clone_flags(const Plan& plan) {
  unsigned long flags = 0;
  for (const auto& n : plan.init.namespaces) flags |= namespace_flag(n);
  return flags;
}

// The supervisor's side of one run, in the order execute_plan takes its steps. Members go in reverse
// order: `child_` (last) kills and reaps an unreleased init before anything it uses is closed, and
// the cgroups (near the first) are removed after everything else.
class Launch {
 public:
  Launch(const Plan& plan, const RunHooks& hooks) : plan_(plan), hooks_(hooks) {}
  Status prepare_child();
  Status start_child();
  Status confine_child();
  Status release_child();
  void fill_view();
  Status start_services();
  Status services_up();
  Result<RunOutcome> supervise();

 private:
  Status create_cgroups();
  Status create_channels();
  Status create_output_pump();
  Status fill_child_context();
  [[noreturn]] void become_init();
  Status attach_cgroups();
  Status start_mediator();
  Status start_proxy();
  RunOutcome wind_down();

  const Plan& plan_;
  const RunHooks& hooks_;
  Prepared prep_;
  std::unique_ptr<cgroup::Run> cg_;
  Pipe sync_, errp_, status_;
  net::Channel chan_;
  UniqueFd notify_supervisor_, notify_sandbox_;  // the notification listener's channel
  UniqueFd fill_supervisor_, fill_sandbox_;      // the tmpfs the supervisor fills (plan_fill)
  std::unique_ptr<output_cap::Pump> pump_;
  UniqueFd self_pidfd_;
  BlockedSignals signals_;
  std::unique_ptr<connect_notify::Mediator> mediator_;  // before proxy_: the proxy answers it (hand-off)
  std::unique_ptr<net::Supervisor> proxy_;
  std::unique_ptr<OfflineResolver> offline_;
  char go_ = kRelease;
  int64_t released_ms_ = 0;  // when init was released: the start of --timeout
  SavedTerminal terminal_;
  std::optional<UnreleasedChild> child_;
};

// Everything the child needs, made before it exists: it does not allocate after clone.
Status Launch::prepare_child() {
  if (auto s = prepare(plan_, prep_); !s) return s;
  if (auto s = create_cgroups(); !s) return s;
  if (auto s = create_channels(); !s) return s;
  if (auto s = create_output_pump(); !s) return s;
  return fill_child_context();
}

// The run's cgroups exist before the child does; the destructor removes them however the run ends.
Status Launch::create_cgroups() {
  if (plan_.cgroup.version == 0) return Ok{};
  auto r = cgroup::Run::create(plan_.cgroup, static_cast<int>(::getpid()));
  if (!r) return r.error();
  cg_ = std::move(*r);
  return Ok{};
}

Status Launch::create_channels() {
  for (Pipe* p : {&sync_, &errp_, &status_}) {
    auto made = Pipe::make();
    if (!made) return made.error();
    *p = std::move(*made);
  }
  auto chan = net::prepare(plan_.net);
  if (!chan) return chan.error();
  chan_ = std::move(*chan);
  // The notification listener has a channel of its own: under namespaces with --net and --explain
  // the network channel is the shim's and the proxy's.
  auto pair = [](UniqueFd& supervisor, UniqueFd& sandbox, const char* what, const char* input) -> Status {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
      return Error{ErrorClass::internal_error, std::string("cannot create ") + what, {}, input, errno};
    supervisor.reset(sv[0]);
    sandbox.reset(sv[1]);
    return Ok{};
  };
  if (!prep_.ctx.notify.empty())
    if (auto s = pair(notify_supervisor_, notify_sandbox_, "the notification channel", "seccomp"); !s) return s;
  if (prep_.ctx.fill_index >= 0)
    if (auto s = pair(fill_supervisor_, fill_sandbox_, "the channel for the sandbox's /etc", "mount"); !s) return s;
  return Ok{};
}

// Made before clone: init takes its pipes as fds 1 and 2.
Status Launch::create_output_pump() {
  if (!plan_.limits.max_stdout && !plan_.limits.max_stderr) return Ok{};
  auto p = output_cap::Pump::prepare(plan_.limits, hooks_.hash_output);
  if (!p) return p.error();
  pump_ = std::move(*p);
  return Ok{};
}

Status Launch::fill_child_context() {
  ChildContext& c = prep_.ctx;
  for (int fd = 1; pump_ && fd < 3; ++fd) c.output_fds[fd] = pump_->child_fd(fd);
  // init learns from this whether the supervisor died before init asked for a parent-death signal.
  self_pidfd_.reset(static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0)));
  if (!self_pidfd_.valid())
    return unavailable("pidfd", "cannot open a pidfd of cage itself", "use Linux 5.3 or later", errno);
  c.supervisor_pidfd = self_pidfd_.get();
  c.sync_read = sync_.r.get();
  c.error_write = errp_.w.get();
  c.status_write = status_.w.get();
  c.net_fd = chan_.sandbox_end.get();
  c.notify_fd = notify_sandbox_.get();
  c.fill_fd = fill_sandbox_.get();
  if (!hooks_.private_dir.empty()) c.private_dir = hooks_.private_dir.c_str();
  // Only as a pid namespace's init: the maker it starts can then never outlive it.
  c.late_netns = plan_.init.pid1 && (clone_flags(plan_) & CLONE_NEWNET) != 0;
  return Ok{};
}

// Clones init, which waits on the sync pipe until release_child.
Status Launch::start_child() {
  if (auto s = signals_.block(); !s) return s;
  unsigned long flags = clone_flags(plan_);
  if (prep_.ctx.late_netns) flags &= ~static_cast<unsigned long>(CLONE_NEWNET);  // init makes it (late_netns.h)
  long pid = ::syscall(SYS_clone, flags | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
  if (pid == 0) become_init();
  if (pid < 0) {
    int e = errno;
    signals_.restore();
    return clone_error(e);
  }
  child_.emplace(static_cast<pid_t>(pid), signals_);
  wipe(prep_.secrets);  // the child has its own copy now (no CLONE_VM)
  sync_.r.reset();
  errp_.w.reset();
  status_.w.reset();
  chan_.sandbox_end.reset();
  notify_sandbox_.reset();
  fill_sandbox_.reset();
  return Ok{};
}

// In the child: no signal reaches init until it unblocks them itself, and no supervisor end stays open.
void Launch::become_init() {
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);
  ::close(sync_.w.get());
  ::close(errp_.r.get());
  ::close(status_.r.get());
  ::close(signals_.fd());
  if (chan_.supervisor_end.valid()) ::close(chan_.supervisor_end.get());
  if (notify_supervisor_.valid()) ::close(notify_supervisor_.get());
  if (fill_supervisor_.valid()) ::close(fill_supervisor_.get());
  if (pump_) pump_->close_in_child();
  run_init(prep_.ctx);
}

// What is set on the child from outside before it runs anything: its cgroups and its id maps.
Status Launch::confine_child() {
  if (auto s = attach_cgroups(); !s) return s;
  if (int e = (clone_flags(plan_) & CLONE_NEWUSER) ? write_id_maps(plan_.ids, child_->pid()) : 0)
    return unavailable("user namespaces", "writing the uid/gid maps failed", "run cage --check", e);
  return Ok{};
}

// init joins the cgroups before it is released, so the workload and everything it forks start there.
// A user manager that refuses the scope leaves the rlimit approximation, said so, unless
// --strict-limits asked for cgroups or nothing.
Status Launch::attach_cgroups() {
  if (!cg_) return Ok{};
  auto s = cg_->attach(child_->pid());
  if (s) return Ok{};
  if (plan_.cgroup.via != CgroupVia::user_scope || plan_.cgroup.strict) return s.error();
  go_ = kReleaseFallback;
  cg_.reset();
  if (hooks_.limits_fallback) hooks_.limits_fallback(plan_.cgroup.scope.fallback, s.error().reason);
  return Ok{};
}

// What serves the sandbox from outside while it runs: the connect() mediator (landlock_only), the
// offline resolver (namespaces without --net) and the proxy behind the shim.
Status Launch::start_services() {
  if (auto s = start_mediator(); !s) return s;
  if (plan_.net.offline_resolver != 0)
    offline_ = std::make_unique<OfflineResolver>(std::move(chan_.supervisor_end));
  return start_proxy();
}

Status Launch::start_mediator() {
  if (prep_.ctx.notify.empty()) return Ok{};
  // Where Landlock lets the workload write: its chmod/utimes go there only.
  std::vector<std::string> writable;
  for (const auto& r : plan_.landlock.rules)
    if (r.access == Access::write) writable.push_back(r.path);
  auto m = connect_notify::start(std::move(notify_supervisor_), hooks_.proxy_port, std::move(writable),
                                 plan_.explain, {prep_.ctx.refusals, plan_.seccomp.profile},
                                 plan_.net.transparent.handoff ? &plan_.net : nullptr);
  if (!m) return m.error();
  mediator_ = std::move(*m);
  return Ok{};
}

Status Launch::start_proxy() {
  if (plan_.net.mode != NetPlan::Mode::proxy || plan_.loopback_proxy) return Ok{};
  proxy::Server::HandoffDone done;
  proxy::Server::HandoffWaiting waiting;
  if (mediator_ && plan_.net.transparent.handoff) {
    done = [m = mediator_.get()](uint64_t ticket, int fd, int err) { return m->dialled(ticket, fd, err); };
    waiting = [m = mediator_.get()](uint64_t ticket) { return m->waiting(ticket); };
  }
  auto s = net::start(plan_.net, std::move(chan_.supervisor_end),
                      hooks_.net ? hooks_.net : proxy::print_denials, std::move(done), std::move(waiting));
  if (!s) return s.error();
  proxy_ = std::move(*s);
  if (mediator_ && plan_.net.transparent.handoff && proxy_) mediator_->set_dialer(proxy_->dialer(), proxy_->direct());
  return Ok{};
}

// The first byte: init builds the view while the services start. It is still unreleased for the
// guard: if a service fails to start, init is killed and reaped before any workload exists.
Status Launch::release_child() {
  // Saved before the workload can touch the terminal, put back however the run ends (terminal_state.h).
  terminal_ = save_terminal();
  if (::write(sync_.w.get(), &go_, 1) != 1)
    return Error{ErrorClass::internal_error, "cannot start the sandbox", "", "sync", errno};
  released_ms_ = now_ms();
  return Ok{};
}

// While init mounts the rest of the view, the supervisor creates the entries of the tmpfs it hands
// over (plan_fill), from its supervise loop once the descriptor is in: an init that never hands it
// over (stopped, or stuck opening a bind source on a hung FUSE or NFS mount) leaves the loop's
// signals and --timeout in force (attack review attack7: a blocking wait here held the run past
// its deadline and past ^C). Nothing to fill when init mounted the tmpfs itself ('n': no fsopen) or
// ended first (its report says why). The channel is closed after one message either way.
void Launch::fill_view() {
  char tag = 0;
  UniqueFd tmpfs(recv_fd(fill_supervisor_.get(), &tag));
  if (tmpfs.valid() && tag == 'm') {
    FillResult r;
    r.err = fill_tmpfs(plan_, prep_.ctx.fill_roles, static_cast<size_t>(prep_.ctx.fill_index), tmpfs.get(), &r.index);
    ssize_t n;
    do n = ::send(fill_supervisor_.get(), &r, sizeof r, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
  }
  fill_supervisor_.reset();
}

// The second byte: from here the supervisor's loop ends the run. A write that fails means init has
// already ended (a failed mount, say): the loop then reads its report.
Status Launch::services_up() {
  const char up = kServicesUp;
  ssize_t n;
  do n = ::write(sync_.w.get(), &up, 1);
  while (n < 0 && errno == EINTR);
  child_->released();  // sync_.w stays: the supervisor's kEndRun goes on it (Supervise::end_run)
  if (pump_) pump_->start();
  return Ok{};
}

Result<RunOutcome> Launch::supervise() {
  Supervise sup{child_->pid(), signals_.fd(), errp_.r.get(), status_.r.get(), sync_.w.get(),
                plan_, hooks_, terminal_, offline_.get(), released_ms_};
  if (fill_supervisor_.valid()) {
    sup.fill_fd = fill_supervisor_.get();
    sup.fill = [this] { fill_view(); };
  }
  sup.end_on_report = plan_.init.pid1 && !cg_;
  sup.run();
  RunOutcome out = wind_down();
  if (sup.failed) return failure_to_error(sup.failure, plan_);
  return outcome_of(sup, std::move(out));
}

// After the run: the terminal as the caller had it, the services stopped, cage's own signal mask
// back, and what the services and the cgroups counted.
RunOutcome Launch::wind_down() {
  // A SIGCONT not read yet (`bg` just before the run ended) still counts.
  sigset_t cont;
  sigemptyset(&cont);
  sigaddset(&cont, SIGCONT);
  struct timespec now {0, 0};
  if (::sigtimedwait(&cont, nullptr, &now) == SIGCONT) note_continued(terminal_);
  restore_terminal(terminal_);
  RunOutcome out;
  if (pump_) out.output = pump_->finish();  // init is gone, and with it every writer of the pipes
  // The mediator's thread ends first: it calls into the proxy (the hand-off's direct path), whose
  // loop then reports, as it stops, every event the mediator queued. The proxy still answers the
  // stopped mediator (dialled(): nothing waits any more, the answer finds no caller).
  if (mediator_) out.explained = mediator_->finish();
  proxy_.reset();
  mediator_.reset();
  signals_.restore();
  if (offline_) out.offline_lookups = offline_->finish();
  if (cg_) {
    out.cgroup = cg_->stats();
    cg_->remove();
  }
  return out;
}

}  // namespace

// The contain sequence: everything made ahead, clone, confine from outside, release, serve, supervise.
Result<RunOutcome> execute_plan(const Plan& plan, const RunHooks& hooks) {
  Launch run(plan, hooks);
  if (auto s = run.prepare_child(); !s) return s.error();
  if (auto s = run.start_child(); !s) return s.error();
  if (auto s = run.confine_child(); !s) return s.error();
  // Released in two steps, so that init builds the sandbox's view (most of its start-up) while the
  // proxy and the mediator start (their threads, listeners and allowlist).
  if (auto s = run.release_child(); !s) return s.error();
  if (auto s = run.start_services(); !s) return s.error();
  if (auto s = run.services_up(); !s) return s.error();
  return run.supervise();
}

}  // namespace cage::lx
