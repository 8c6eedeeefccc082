// The macOS executor: a private TMPDIR, cage's proxy on 127.0.0.1 (an ephemeral port the profile
// allows and nothing else), then fork + execve of /usr/bin/sandbox-exec -p PROFILE -- COMMAND with
// the plan's environment, rlimits set in the child, and every descriptor but 0-2 closed. The parent
// forwards SIGINT/TERM/HUP/QUIT that were sent to cage itself (a terminal's signals reach the
// workload's process group directly), enforces --timeout (SIGTERM, SIGKILL 5 s later, exit 124) and
// returns the workload's status. Runs only on a Mac: `cage --self-test` is its check (self_test.cc).
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
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "macos/compile.h"
#include "policy/rlimits.h"
#include "proxy/loopback.h"

namespace cage::macos {

namespace {

constexpr int kGraceMs = 5000;  // --timeout: SIGTERM, then SIGKILL this much later
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

Result<std::string> private_tmp(const std::vector<std::pair<std::string, std::string>>& env) {
  std::string base = "/tmp";
  for (const auto& [k, v] : env)
    if (k == "TMPDIR" && !v.empty() && v[0] == '/') base = v;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  std::string tmpl = base + "/cage-private.XXXXXX";
  if (!mkdtemp(tmpl.data()))
    return unavailable("TMPDIR", "cannot create the run's private TMPDIR in " + base, "check that it is writable",
                       errno);
  return tmpl;
}

// Not found and not executable are told apart before the sandbox is built, as on Linux (127, 126).
Status check_command(const std::string& cmd, const std::vector<std::string>& env) {
  auto executable = [](const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
  };
  if (cmd.find('/') != std::string::npos) {
    if (executable(cmd)) return Ok{};
    return Error{access(cmd.c_str(), F_OK) == 0 ? ErrorClass::exec_failed : ErrorClass::not_found,
                 "cannot execute the command", "check the path", cmd, 0};
  }
  std::string path = "/usr/bin:/bin:/usr/sbin:/sbin";
  for (const auto& e : env)
    if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
  for (size_t b = 0; b <= path.size();) {
    size_t end = path.find(':', b);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(b, end - b);
    if (executable((dir.empty() ? "." : dir) + "/" + cmd)) return Ok{};
    b = end + 1;
  }
  return Error{ErrorClass::not_found, "command not found in the sandbox's PATH", "check the PATH or give a full path",
               cmd, 0};
}

struct Supervise {
  pid_t pid;
  int signals;  // read end of the signal pipe
  int64_t timeout_ms;
  bool timed_out = false;

  int wait_status() {
    int64_t deadline = timeout_ms > 0 ? now_ms() + timeout_ms : -1, kill_at = -1;
    while (true) {
      int st = 0;
      pid_t r = waitpid(pid, &st, WNOHANG);
      if (r == pid) return st;
      if (r < 0 && errno != EINTR) return exit_status::kCageError << 8;
      // SIGCHLD is not caught: a short poll keeps the loop simple and the latency small.
      pollfd fd{signals, POLLIN, 0};
      int wait = 50;
      int64_t next = kill_at >= 0 ? kill_at : deadline;
      if (next >= 0) wait = static_cast<int>(std::clamp<int64_t>(next - now_ms(), 0, 50));
      if (poll(&fd, 1, wait) > 0) {
        unsigned char sigs[64];
        ssize_t n = read(signals, sigs, sizeof sigs);
        for (ssize_t i = 0; i < n; ++i) kill(pid, sigs[i]);
      }
      int64_t t = now_ms();
      if (deadline >= 0 && !timed_out && t >= deadline) {
        timed_out = true;
        kill(pid, SIGTERM);
        kill_at = t + kGraceMs;
      } else if (kill_at >= 0 && t >= kill_at) {
        kill(pid, SIGKILL);
        kill_at = -1;
      }
    }
  }
};

}  // namespace

Result<int> execute(const policy::Policy& pol, const std::vector<std::pair<std::string, std::string>>& caller_env,
                    const std::string& sandbox_exec) {
  if (access(sandbox_exec.c_str(), X_OK) != 0)
    return unavailable(sandbox_exec, "sandbox-exec is missing or not executable on this Mac",
                       "cage enforces policies on macOS with the system's sandbox-exec; restore it or run on a "
                       "macOS that ships it",
                       errno);
  auto tmp = private_tmp(caller_env);
  if (!tmp) return tmp.error();
  // Removed however the run ends (the workload may leave anything in it; links are removed, not followed).
  std::unique_ptr<std::string, void (*)(std::string*)> cleanup(new std::string(*tmp), [](std::string* d) {
    std::error_code ec;
    std::filesystem::remove_all(*d, ec);
    delete d;
  });
  std::unique_ptr<proxy::LoopbackProxy> net;
  MacHostFacts facts = make_real_mac_facts(true);
  if (!pol.net.empty()) {
    proxy::ServerOptions opt;
    opt.max_connections = proxy::connection_limit(pol.limits.memory_bytes);
    auto p = proxy::LoopbackProxy::start(proxy::Allowlist(pol.net), proxy::print_denials, opt);
    if (!p) return p.error();
    net = std::move(*p);
    facts.proxy_port = net->port();
    facts.proxy_secret = net->secret();
  }
  facts.private_tmp = canonical_mac_path(*tmp, facts);
  auto plan = compile(pol, facts, caller_env);
  if (!plan) return plan.error();
  if (plan->argv.empty()) return usage("command", "no command to run", "cage [OPTIONS] -- COMMAND [ARG...]");
  if (auto s = check_command(plan->argv[0], plan->env); !s) return s.error();
  for (const auto& u : plan->unenforced) std::fprintf(stderr, "cage: warning: not enforced: %s\n", u.c_str());

  Spawn s;
  s.exe = sandbox_exec;
  s.args = {"sandbox-exec", "-p", plan->sbpl, "--"};
  s.args.insert(s.args.end(), plan->argv.begin(), plan->argv.end());
  for (auto& a : s.args) s.argv.push_back(a.data());
  s.argv.push_back(nullptr);
  for (auto& e : plan->env) s.envp.push_back(e.data());
  s.envp.push_back(nullptr);
  s.cwd = plan->cwd;
  for (const auto& r : plan->limits.rlimits)
    for (const auto& res : kResources)
      if (r.name == res.name) {
        rlimit rl{};
        rl.rlim_cur = r.soft == UINT64_MAX ? RLIM_INFINITY : static_cast<rlim_t>(r.soft);
        rl.rlim_max = r.hard == UINT64_MAX ? RLIM_INFINITY : static_cast<rlim_t>(r.hard);
        s.limits.emplace_back(res.id, rl);
      }

  int sp[2], ep[2];
  if (pipe(sp) != 0 || pipe(ep) != 0) return unavailable("cage", "cannot create pipes", "check the fd limit", errno);
  for (int fd : {sp[0], sp[1], ep[0], ep[1]}) fcntl(fd, F_SETFD, FD_CLOEXEC);
  fcntl(sp[1], F_SETFL, O_NONBLOCK);
  fcntl(sp[0], F_SETFL, O_NONBLOCK);
  g_signal_pipe = sp[1];
  struct sigaction sa {};
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int sig : kForwarded) sigaction(sig, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  pid_t pid = fork();
  if (pid < 0) return unavailable("cage", "fork failed", "check the process limit", errno);
  if (pid == 0) child(s, ep[1]);
  close(ep[1]);
  Supervise sup{pid, sp[0], pol.limits.timeout_ms ? static_cast<int64_t>(*pol.limits.timeout_ms) : 0};
  int st = sup.wait_status();
  ChildError ce{};
  ssize_t got = read(ep[0], &ce, sizeof ce);
  close(ep[0]);
  for (int sig : kForwarded) signal(sig, SIG_DFL);
  close(sp[0]);
  close(sp[1]);
  if (net) net->stop();
  if (got == static_cast<ssize_t>(sizeof ce)) {
    const char* what[] = {"cannot enter the working directory", "cannot set a resource limit",
                          "cannot execute /usr/bin/sandbox-exec"};
    return unavailable(ce.step == 0 ? s.cwd : ce.step == 1 ? "--rlimit" : sandbox_exec, what[ce.step % 3],
                       "check the path and limits", ce.err);
  }
  if (sup.timed_out) return exit_status::kTimedOut;
  return exit_status::of_wait(st);
}

}  // namespace cage::macos
