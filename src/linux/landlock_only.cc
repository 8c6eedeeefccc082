// Running without namespaces (parent side of Mechanism::landlock_only): the run's private HOME and
// TMPDIR are made in a fresh directory under /tmp, named in the plan's Landlock rule and
// environment, and removed afterwards without ever following a link the workload may have planted.
// The child side is cage's init as a plain child (init.cc). Proved by tests/integration/landlock_only_*.sh.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <dirent.h>

#include "linux/child.h"
#include "linux/dirent64.h"
#include "linux/compile.h"
#include "linux/execute.h"
#include "linux/sentinel.h"
#include "linux/terminal.h"
#include "proxy/loopback.h"
#include "linux/scratch.h"

namespace cage::lx {

namespace {


// Calls visit(dirfd, name) for each entry of dirfd but "." and "..", then closes dirfd.
template <class Visit>
void for_each_entry(int dirfd, Visit visit) {
  DIR* d = ::fdopendir(dirfd);
  if (!d) {
    ::close(dirfd);
    return;
  }
  while (struct dirent* e = ::readdir(d)) {
    const char* n = e->d_name;
    if (n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0'))) continue;
    visit(dirfd, n);
  }
  ::closedir(d);
}

class PrivateDir {
 public:
  ~PrivateDir() {
    if (!path_.empty()) remove_tree_at(AT_FDCWD, path_.c_str());
  }
  Status create() {
    remove_stale();
    std::string tmpl = "/tmp/cage-private." + std::to_string(::getpid()) + ".XXXXXX";
    if (!::mkdtemp(tmpl.data())) return unavailable("/tmp", "cannot create the run's private directory", "check /tmp", errno);
    path_ = tmpl;
    for (const char* sub : {"/home", "/tmp"})
      if (::mkdir((path_ + sub).c_str(), 0700) != 0)
        return unavailable(path_, "cannot create the run's private directory", "check /tmp", errno);
    return Ok{};
  }
  const std::string& path() const { return path_; }

  // A supervisor killed with SIGKILL leaves its directory behind: the next run removes every
  // /tmp/cage-private.PID.* of this user whose PID no longer exists (a reused PID only delays it).
  static void remove_stale() {
    int tmp = ::open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (tmp < 0) return;
    for_each_entry(tmp, [](int dirfd, const char* n) {
      if (std::strncmp(n, "cage-private.", 13) != 0) return;
      char* end = nullptr;
      long pid = std::strtol(n + 13, &end, 10);
      if (pid <= 0 || !end || *end != '.' || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) return;
      struct stat st;
      if (::fstatat(dirfd, n, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid()) return;
      remove_tree_at(dirfd, n);
    });
  }

 private:
  std::string path_;
};

// The caller's terminal (terminal.h): reopening it by name (/dev/stderr, /dev/pts/N) gives the
// workload nothing it does not hold already, as /dev/console does with namespaces (mount.cc).
void grant_terminal(Plan& plan) {
  char tty[256];
  if (caller_pty(tty, sizeof tty))
    plan.landlock.rules.push_back(LandlockRule{tty, Access::dev_rw, false, "the caller's terminal"});
}

void substitute(std::string& s, const std::string& key, const std::string& value) {
  for (size_t i = s.find(key); i != std::string::npos; i = s.find(key, i + value.size())) s.replace(i, key.size(), value);
}

}  // namespace

void remove_private_dir(const char* path) { remove_tree_at(AT_FDCWD, path); }

Result<RunOutcome> execute(const Plan& plan, const RunHooks& hooks) {
  // Both mechanisms: the directory exists, the caller's and closed to others, before anything opens it.
  if (plan.scratch)
    if (auto s = ensure_scratch(*plan.scratch); !s) return s.error();
  if (plan.mechanism != Mechanism::landlock_only) return execute_plan(plan, hooks);
  // Declared first, released last: the directory is gone (~PrivateDir) before the sentinel leaves.
  // It covers the moments before init exists (init removes the directory itself should the
  // supervisor die later).
  Sentinel sentinel;
  PrivateDir dir;
  if (auto s = dir.create(); !s) return s.error();
  if (int e = sentinel.start({{Sentinel::Kind::tree, dir.path()}}))
    return unavailable("/tmp", "cannot start the process that removes the run's private directory should cage be killed",
                       "check the process limit", e);
  Plan local = plan;
  for (auto& r : local.landlock.rules)
    if (is_private_dir_rule(r)) r.path = dir.path();
  for (auto& e : local.env) substitute(e, "<private>", dir.path());
  grant_terminal(local);
  // --net: the proxy on the host's loopback, its port the only one Landlock lets the workload reach.
  // The proxy serves from here until the run ends (the same LoopbackProxy as on macOS and Windows).
  RunHooks with_proxy = hooks;
  std::unique_ptr<proxy::LoopbackProxy> proxy;
  if (plan.loopback_proxy) {
    proxy::ServerOptions opt;
    opt.max_connections = plan.net.max_connections;
    auto lp = proxy::LoopbackProxy::start(proxy::Allowlist(plan.net.allow), hooks.net ? hooks.net : proxy::print_denials,
                                          opt);
    if (!lp) return lp.error();
    proxy = std::move(*lp);
    local.landlock.connect_tcp.push_back(proxy->port());
    for (auto& e : local.env) {
      substitute(e, kProxyPortMark, std::to_string(proxy->port()));
      substitute(e, kProxySecretMark, proxy->secret());
    }
    with_proxy.proxy_port = proxy->port();
  }
  with_proxy.private_dir = dir.path();
  auto out = execute_plan(local, with_proxy);
  if (out) out->private_dir = dir.path();
  return out;
}

}  // namespace cage::lx
