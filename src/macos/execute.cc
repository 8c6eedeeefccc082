// The macOS executor: a private TMPDIR and HOME, cage's proxy on 127.0.0.1 (an ephemeral port the profile
// allows and nothing else), then fork + execve of /usr/bin/sandbox-exec -p PROFILE -- COMMAND with
// the plan's environment, rlimits set in the child, and every descriptor but 0-2 closed. The parent
// forwards SIGINT/TERM/HUP/QUIT that were sent to cage itself (a terminal's signals reach the
// workload's process group directly), enforces --timeout (SIGTERM, SIGKILL 5 s later, exit 124) and
// returns the workload's status. Runs only on a Mac: `cage --self-test` is its check (selftest/checks.cc).
#include "common/exit_status.h"
#include "macos/execute.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#if defined(__APPLE__)
#include <libproc.h>
#include <sys/proc_info.h>
#endif

#include "common/deadline.h"
#include "macos/compile.h"
#include "policy/rlimits.h"
#include "proxy/loopback.h"

namespace cage::macos {

namespace {

const int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

struct Resource {
  const char* name;
  int id;
};
#define CAGE_RLIMIT_ENTRY(n, N) {#n, RLIMIT_##N},
const Resource kResources[] = {CAGE_RLIMITS_POSIX(CAGE_RLIMIT_ENTRY)};
#undef CAGE_RLIMIT_ENTRY

int g_signal_pipe = -1;  // write end, for the handler

void on_signal(int sig, siginfo_t* info, void*) {
  // Only what was sent with kill() or sigqueue(); a terminal's ^C already reached the workload.
  int saved = errno;
  if (info && (info->si_code == SI_USER || info->si_code == SI_QUEUE)) {
    unsigned char b = static_cast<unsigned char>(sig);
    if (write(g_signal_pipe, &b, 1) < 0) { /* pipe full: a signal is already pending */ }
  }
  errno = saved;
}

int64_t now_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// What the child needs after fork: everything allocated before, so the child only makes system calls.
struct Spawn {
  std::string exe;  // sandbox-exec
  std::vector<std::string> args;
  std::vector<char*> argv, envp;
  std::vector<std::pair<int, rlimit>> limits;
  std::string cwd;
};

struct ChildError {
  int step;  // 0 chdir, 1 rlimit, 2 exec
  int err;
};

[[noreturn]] void child(const Spawn& s, int err_fd) {
  for (int sig : kForwarded) signal(sig, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  ChildError e{0, 0};
  if (chdir(s.cwd.c_str()) != 0) {
    e = {0, errno};
  } else {
    for (const auto& [id, rl] : s.limits)
      if (setrlimit(id, &rl) != 0) {
        e = {1, errno};
        break;
      }
  }
  if (e.err == 0) {
    // Nothing of cage's reaches the workload: the proxy's sockets, the signal pipe, the listener.
    int max = static_cast<int>(sysconf(_SC_OPEN_MAX));
    for (int fd = 3; fd < std::min(max, 65536); ++fd)
      if (fd != err_fd) close(fd);
    execve(s.exe.c_str(), s.argv.data(), s.envp.data());
    e = {2, errno};
  }
  if (write(err_fd, &e, sizeof e) < 0) { /* the parent sees EOF and a 125 */ }
  _exit(125);
}

// The run's private directory, removed after it: tmp/ is its TMPDIR, home/ its HOME when the plan
// gives it a private one (both 0700, beneath the caller's TMPDIR).
Result<std::string> private_dir(const std::vector<std::pair<std::string, std::string>>& env) {
  std::string base = "/tmp";
  for (const auto& [k, v] : env)
    if (k == "TMPDIR" && !v.empty() && v[0] == '/') base = v;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  std::string tmpl = base + "/cage-private.XXXXXX";
  if (!mkdtemp(tmpl.data()))
    return unavailable("TMPDIR", "cannot create the run's private TMPDIR in " + base, "check that it is writable",
                       errno);
  for (const char* sub : {"/tmp", "/home"})
    if (mkdir((tmpl + sub).c_str(), 0700) != 0)
      return unavailable("TMPDIR", "cannot create the run's private directory " + tmpl + sub,
                         "check that it is writable", errno);
  return tmpl;
}

// The plan's links in the private HOME (its parents made as directories), before the command runs.
// Nothing but cage has written there yet, and no link is made beneath another (compile's rule).
Status make_home_links(const std::string& home, const std::vector<HomeLink>& links) {
  for (const auto& l : links) {
    for (size_t slash = l.name.find('/'); slash != std::string::npos; slash = l.name.find('/', slash + 1)) {
      std::string dir = home + "/" + l.name.substr(0, slash);
      struct stat st {};
      if (mkdir(dir.c_str(), 0700) != 0 &&
          (errno != EEXIST || lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)))
        return unavailable("HOME", "cannot create " + dir + " in the private HOME",
                           "check the caller's TMPDIR", errno);
    }
    if (symlink(l.target.c_str(), (home + "/" + l.name).c_str()) != 0)
      return unavailable("HOME", "cannot link ~/" + l.name + " in the private HOME",
                         "check the caller's TMPDIR", errno);
  }
  return Ok{};
}

// The command as the Mac sees it, for macos::resolve_command: stat(2) follows links, as exec does.
CommandFile lookup_command(const std::string& path) {
  CommandFile f;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return f;
  char buf[PATH_MAX];
  f.exists = true;
  f.dir = S_ISDIR(st.st_mode);
  f.mode = static_cast<uint32_t>(st.st_mode);
  f.real = realpath(path.c_str(), buf) ? buf : path;
  return f;
}

// The name of a process that has ended and is not reaped yet (a zombie), which exec(2) set to the
// basename of the image it loaded: p_comm on macOS (XNU's proc_pidinfo looks among zombies for
// PROC_PIDTBSDINFO when its arg is non-zero), /proc/PID/comm on Linux (the unit tests' stand-in for
// sandbox-exec). "" when it cannot be read.
std::string name_at_exit(pid_t pid) {
#if defined(__APPLE__)
  struct proc_bsdinfo info {};
  if (proc_pidinfo(pid, PROC_PIDTBSDINFO, 1, &info, sizeof info) != static_cast<int>(sizeof info)) return {};
  return std::string(info.pbi_comm, strnlen(info.pbi_comm, sizeof info.pbi_comm));
#elif defined(__linux__)
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
#else
  (void)pid;
  return {};
#endif
}

struct Supervise {
  pid_t pid;
  int signals;  // read end of the signal pipe
  Deadline timeout;
  const RunHooks& hooks;
  bool aborted = false;
  std::string name;  // the process's name when it ended (name_at_exit)

  int wait_status() {
    while (true) {
      // Seen ended but left unreaped (WNOWAIT), its name can still be read. waitid only peeks: the
      // reaping stays waitpid's, so a waitid that never reports (or, as Go's issue 19314 found on
      // Darwin, reports a stopped process) costs the name, never the run. No name: the status passes.
      siginfo_t si{};
      if (waitid(P_PID, static_cast<id_t>(pid), &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid &&
          (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED))
        name = name_at_exit(pid);
      int st = 0;
      pid_t r = waitpid(pid, &st, WNOHANG);
      if (r == pid) return st;
      if (r < 0 && errno != EINTR) return exit_status::kCageError << 8;
      // SIGCHLD is not caught: a short poll keeps the loop simple and the latency small.
      int next = timeout.poll_ms(now_ms());
      pollfd fds[2] = {{signals, POLLIN, 0}, {hooks.abort_fd, POLLIN, 0}};
      if (poll(fds, hooks.abort_fd >= 0 ? 2 : 1, next < 0 ? 50 : std::min(next, 50)) > 0) {
        if (fds[0].revents) forward_signals();
        if (hooks.abort_fd >= 0 && fds[1].revents && !aborted) abort_run();
      }
      Deadline::Step step = timeout.due(now_ms());
      if (step == Deadline::Step::terminate) signal_command("timeout", SIGTERM);
      if (step == Deadline::Step::kill) signal_command("timeout", SIGKILL);
    }
  }
  void signal_command(const char* reason, int sig) {
    kill(pid, sig);
    if (hooks.killed) hooks.killed(reason, sig);
  }
  void abort_run() {
    aborted = true;
    signal_command("audit_failed", SIGKILL);
  }
  void forward_signals() {
    unsigned char sigs[64];
    ssize_t n = read(signals, sigs, sizeof sigs);
    for (ssize_t i = 0; i < n; ++i) kill(pid, sigs[i]);
  }
};

// Removes the run's private TMPDIR however the run ends (the workload may leave anything in it;
// links are removed, not followed).
struct RemovedAtEnd {
  std::string dir;
  explicit RemovedAtEnd(std::string d) : dir(std::move(d)) {}
  RemovedAtEnd(const RemovedAtEnd&) = delete;
  RemovedAtEnd& operator=(const RemovedAtEnd&) = delete;
  ~RemovedAtEnd() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

Status check_sandbox_exec(const std::string& sandbox_exec) {
  if (access(sandbox_exec.c_str(), X_OK) == 0) return Ok{};
  return unavailable(sandbox_exec, "sandbox-exec is missing or not executable on this Mac",
                     "cage enforces policies on macOS with the system's sandbox-exec; restore it or run on a "
                     "macOS that ships it",
                     errno);
}

// --net: cage's proxy on an ephemeral loopback port, which the profile then allows and nothing else.
Result<std::unique_ptr<proxy::LoopbackProxy>> start_proxy(const policy::Policy& pol, MacHostFacts& facts,
                                                          const proxy::EventSink& sink) {
  if (pol.net.empty()) return std::unique_ptr<proxy::LoopbackProxy>{};
  proxy::ServerOptions opt;
  opt.max_connections = proxy::connection_limit(pol.limits.memory_bytes);
  auto p = proxy::LoopbackProxy::start(proxy::Allowlist(pol.net),
                                       sink ? sink : proxy::EventSink(proxy::print_denials), opt);
  if (!p) return p.error();
  facts.proxy_port = (*p)->port();
  facts.proxy_secret = (*p)->secret();
  return std::move(*p);
}

// The profile and the command line, with the command known to exist and what cannot be enforced said.
Result<MacPlan> compile_run(const policy::Policy& pol, const MacHostFacts& facts,
                            const std::vector<std::pair<std::string, std::string>>& caller_env) {
  auto plan = compile(pol, facts, caller_env);
  if (!plan) return plan.error();
  if (plan->argv.empty()) return usage("command", "no command to run", "cage [OPTIONS] -- COMMAND [ARG...]");
  // sandbox-exec runs its command with execvp(3), which on macOS stops at the first EPERM: the command
  // is found here, among what the profile lets the workload read, and given to it as an absolute path.
  std::string path;
  for (const auto& e : plan->env)
    if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
  auto exe = resolve_command(plan->argv[0], path, plan->cwd, lookup_command,
                             [&](const std::string& p) { return readable_in(*plan, p); });
  if (!exe) return exe.error();
  plan->argv[0] = *exe;
  for (const auto& u : plan->unenforced) std::fprintf(stderr, "cage: warning: not enforced: %s\n", u.c_str());
  return plan;
}

// Fills `s` in place: its argv and envp point into its own args and into the plan, which must outlive it.
void prepare_spawn(Spawn& s, MacPlan& plan, const std::string& sandbox_exec) {
  s.exe = sandbox_exec;
  s.args = {"sandbox-exec", "-p", plan.sbpl, "--"};
  s.args.insert(s.args.end(), plan.argv.begin(), plan.argv.end());
  for (auto& a : s.args) s.argv.push_back(a.data());
  s.argv.push_back(nullptr);
  for (auto& e : plan.env) s.envp.push_back(e.data());
  s.envp.push_back(nullptr);
  s.cwd = plan.cwd;
  for (const auto& r : plan.limits.rlimits)
    for (const auto& res : kResources)
      if (r.name == res.name) {
        rlimit rl{};
        rl.rlim_cur = r.soft == UINT64_MAX ? RLIM_INFINITY : static_cast<rlim_t>(r.soft);
        rl.rlim_max = r.hard == UINT64_MAX ? RLIM_INFINITY : static_cast<rlim_t>(r.hard);
        s.limits.emplace_back(res.id, rl);
      }
}

// The pipes of one run: signals sent to cage (from the handler to the supervising loop) and the
// child's ChildError (closed by its exec: EOF means sandbox-exec runs).
struct RunPipes {
  int sp[2] = {-1, -1}, ep[2] = {-1, -1};
  Status open() {
    if (pipe(sp) != 0 || pipe(ep) != 0)
      return unavailable("cage", "cannot create pipes", "check the fd limit", errno);
    for (int fd : {sp[0], sp[1], ep[0], ep[1]}) fcntl(fd, F_SETFD, FD_CLOEXEC);
    fcntl(sp[1], F_SETFL, O_NONBLOCK);
    fcntl(sp[0], F_SETFL, O_NONBLOCK);
    return Ok{};
  }
};

void forward_signals_to(int pipe_write) {
  g_signal_pipe = pipe_write;
  struct sigaction sa {};
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int sig : kForwarded) sigaction(sig, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

Error child_error(const ChildError& ce, const Spawn& s) {
  const char* what[] = {"cannot enter the working directory", "cannot set a resource limit",
                        "cannot execute /usr/bin/sandbox-exec"};
  return unavailable(ce.step == 0 ? s.cwd : ce.step == 1 ? "--rlimit" : s.exe, what[ce.step % 3],
                     "check the path and limits", ce.err);
}

// Forks the child, supervises it to its end, and turns that end into an outcome or an Error.
Result<MacOutcome> run_sandboxed(const Spawn& s, std::optional<uint64_t> timeout_ms,
                                 proxy::LoopbackProxy* net, const RunHooks& hooks) {
  RunPipes p;
  if (auto st = p.open(); !st) return st.error();
  forward_signals_to(p.sp[1]);
  pid_t pid = fork();
  if (pid < 0) return unavailable("cage", "fork failed", "check the process limit", errno);
  if (pid == 0) child(s, p.ep[1]);
  close(p.ep[1]);
  Supervise sup{pid, p.sp[0], Deadline(now_ms(), timeout_ms), hooks, false, {}};
  int st = sup.wait_status();
  ChildError ce{};
  ssize_t got = read(p.ep[0], &ce, sizeof ce);
  close(p.ep[0]);
  for (int sig : kForwarded) signal(sig, SIG_DFL);
  close(p.sp[0]);
  close(p.sp[1]);
  if (net) net->stop();
  if (got == static_cast<ssize_t>(sizeof ce)) return child_error(ce, s);
  MacOutcome out{st, sup.timeout.timed_out(), sup.aborted, exit_status::of_wait(st)};
  if (out.timed_out) out.exit_status = exit_status::kTimedOut;
  if (!out.timed_out && !out.aborted)  // args: sandbox-exec -p PROFILE -- COMMAND ...
    if (auto e = sandbox_exec_failure(st, sup.name, s.args.size() > 4 ? s.args[4] : std::string())) return *e;
  return out;
}

}  // namespace

Result<MacOutcome> run(const policy::Policy& pol,
                       const std::vector<std::pair<std::string, std::string>>& caller_env,
                       const RunHooks& hooks, const std::string& sandbox_exec) {
  if (auto s = check_sandbox_exec(sandbox_exec); !s) return s.error();
  auto dir = private_dir(caller_env);
  if (!dir) return dir.error();
  RemovedAtEnd dir_removed{*dir};
  MacHostFacts facts = make_real_mac_facts(true);
  auto net = start_proxy(pol, facts, hooks.net);
  if (!net) return net.error();
  facts.private_tmp = canonical_mac_path(*dir + "/tmp", facts);
  facts.private_home = canonical_mac_path(*dir + "/home", facts);
  auto plan = compile_run(pol, facts, caller_env);
  if (!plan) return plan.error();
  if (auto st = make_home_links(facts.private_home, plan->home_links); !st) return st.error();
  if (hooks.spawning)
    if (auto st = hooks.spawning(*plan); !st) return st.error();
  Spawn s;
  prepare_spawn(s, *plan, sandbox_exec);
  return run_sandboxed(s, pol.limits.timeout_ms, net->get(), hooks);
}

Result<int> execute(const policy::Policy& pol,
                    const std::vector<std::pair<std::string, std::string>>& caller_env,
                    const std::string& sandbox_exec) {
  auto out = run(pol, caller_env, RunHooks{}, sandbox_exec);
  if (!out) return out.error();
  return out->exit_status;
}

std::optional<Error> sandbox_exec_failure(int wait_status, const std::string& name_at_exit,
                                          const std::string& command) {
  if (!WIFEXITED(wait_status) || name_at_exit.empty()) return std::nullopt;
  // exec(2) names the process after the image's basename, cut to the kernel's length (15 on Linux,
  // 16 on macOS): a command named sandbox-exec cannot be told from sandbox-exec itself.
  const std::string base = command.substr(command.rfind('/') + 1);
  if (name_at_exit != "sandbox-exec" || base.compare(0, name_at_exit.size(), name_at_exit) == 0)
    return std::nullopt;
  const int code = WEXITSTATUS(wait_status);
  if (code == 71)
    return Error{ErrorClass::exec_failed,
                 "sandbox-exec could not start the command under cage's profile (its exit 71; its reason is "
                 "printed above)",
                 "grant what the command needs to start (--ro on its directory), or send `cage --check` and "
                 "`cage --dry-run --target macos -v` output with the flags used",
                 command, 0};
  return Error{ErrorClass::spawn_sandbox_unavailable,
               "sandbox-exec exited " + std::to_string(code) +
                   " before starting the command (65: it rejected cage's profile; 64: its usage)",
               "run cage --check with the same flags and report its output", "sandbox-exec", 0};
}

std::vector<Probe> check_probes(const std::string& cage_profile) {
  std::vector<Probe> probes = {
      {"allow-default profile runs " + std::string(kProbeCommand), "(version 1)(allow default)", true},
      {"deny-default profile denies its exec", "(version 1)(deny default)", false}};
  if (!cage_profile.empty())
    probes.push_back({"cage's profile runs " + std::string(kProbeCommand), cage_profile, true});
  return probes;
}

bool probe_passed(const Probe& p) {
  return p.must_run ? p.status == 0 : p.status > 0;
}

int run_probe(const std::string& sandbox_exec, const std::string& profile) {
  std::vector<std::string> args = {"sandbox-exec", "-p", profile, "--", kProbeCommand};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  char* envp[] = {nullptr};
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int null = open("/dev/null", O_RDWR);
    if (null >= 0)
      for (int fd = 0; fd <= 2; ++fd) dup2(null, fd);
    execve(sandbox_exec.c_str(), argv.data(), envp);
    _exit(exit_status::kCageError);  // cannot tell from sandbox-exec's own failure: reported as -1 below
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return -1;
  if (WIFEXITED(st) && WEXITSTATUS(st) == exit_status::kCageError) return -1;
  return exit_status::of_wait(st);
}

}  // namespace cage::macos
