// cage --check [flags]: probes this host for each mechanism cage uses (user, mount, pid, net
// namespaces, mount_setattr, Landlock ABI, seccomp, no_new_privs, cgroups) by trying it in a throwaway
// child, reports each as available or not and why, then plans the run the flags describe (a command
// defaults to `true`) exactly as a run would and names the layers it would have in force. Exit 0
// only if that run can start: its plan compiles and every probe its mechanism needs works; 125
// otherwise (tests/integration/check_layers.sh).
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "common/exit_status.h"
#include "common/json.h"
#include "linux/cgroup_plan.h"
#include "linux/compile.h"
#include "linux/execute.h"
#include "linux/namespace_probe.h"
#include "linux/systemd_scope.h"

namespace cage::lx {

namespace {

struct Probe {
  std::string name;
  bool ok = false;
  bool required = true;
  std::string detail;
};

// Runs fn in a forked child and returns its errno (0 on success); the child never touches the host.
template <class F>
int in_child(F fn) {
  pid_t pid = ::fork();
  if (pid == 0) _exit(fn());
  if (pid < 0) return errno;
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

int probe_userns() {
  return ::unshare(CLONE_NEWUSER) == 0 ? 0 : errno;
}

int probe_seccomp() {
  int mode = ::prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
  if (mode < 0) return errno;
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 ? 0 : errno;
}

std::string cgroup_summary() {
  FILE* f = std::fopen("/proc/self/cgroup", "r");
  if (!f) return "no /proc/self/cgroup";
  char line[512];
  std::string v1, v2;
  while (std::fgets(line, sizeof line, f)) {
    std::string l(line);
    if (l.rfind("0::", 0) == 0) v2 = "v2 unified";
    for (const char* c : {"memory", "pids", "cpu,", "cpu:"})
      if (l.find(c) != std::string::npos && v1.find(c) == std::string::npos) v1 += std::string(v1.empty() ? "" : " ") + c;
  }
  std::fclose(f);
  return (v2.empty() ? "" : v2 + "; ") + (v1.empty() ? "no v1 controllers" : "v1: " + v1);
}

// Asks the user manager for a scope holding a throwaway child, as a run would (systemd removes it
// once the child exits). "" when refused.
std::string try_user_scope(const std::string& socket) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return "";
  pid_t pid = ::fork();
  if (pid == 0) {
    char b;
    ::close(fds[1]);
    while (::read(fds[0], &b, 1) < 0 && errno == EINTR) {
    }
    _exit(0);
  }
  ::close(fds[0]);
  std::string out;
  if (pid > 0) {
    auto r = start_user_scope(socket, "cage-check-" + std::to_string(::getpid()) + ".scope", {pid}, {}, 10000);
    if (r) out = *r;
  }
  ::close(fds[1]);
  while (pid > 0 && ::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  return out;
}

// Which of --memory, --pids, --cpu a cgroup can enforce for this user here, decided exactly as a
// run would decide it (compile_cgroups); the rest fall back to rlimits or are not enforced.
Probe cgroup_limits_probe() {
  Plan plan;
  plan.limits.memory_bytes = 1ULL << 30;
  plan.limits.pids = 1024;
  plan.limits.cpu = 1.0;
  auto host = make_real_host_view();
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  (void)compile_cgroups(plan, *host, runtime && runtime[0] == '/' ? runtime : "");
  const CgroupPlan& cg = plan.cgroup;
  std::string detail = cgroup_summary() + "; ", how = "cgroup v" + std::to_string(cg.version);
  std::vector<Unenforced> unenforced = cg.unenforced;
  if (cg.via == CgroupVia::user_scope) {
    std::string scope = try_user_scope(cg.scope.socket);
    how = "a delegated scope via the systemd user manager (" + cg.scope.socket + (scope.empty() ? ")" : "; a trial scope was granted)");
    if (scope.empty()) {
      detail += "the systemd user manager at " + cg.scope.socket + " refused a trial scope; ";
      unenforced.insert(unenforced.end(), cg.scope.fallback.begin(), cg.scope.fallback.end());
    }
  }
  if (cg.version != 0 && unenforced.empty())
    return {"cgroup_limits", true, false, detail + "--memory, --pids, --cpu enforced by " + how};
  for (const auto& u : unenforced) {
    std::string flag = u.limit.substr(0, u.limit.find(' '));
    detail += flag + (u.fallback.empty() ? " NOT enforced" : " only approximated by " + u.fallback) + "; ";
  }
  if (unenforced.size() < 3 && cg.version != 0) detail += "the others enforced by " + how + "; ";
  detail += "limits_not_enforced (" + (unenforced.empty() ? std::string() : unenforced.front().why) + ")";
  return {"cgroup_limits", false, false, detail};
}

}  // namespace

// The Landlock probe in words: what the ABI gives each mechanism.
std::string landlock_detail(long abi, int err) {
  const std::string only = "--mechanism landlock needs ABI " + std::to_string(kLandlockOnlyMinAbi) + " (Linux 6.12)";
  if (abi < 1)
    return std::string("unavailable (") + std::strerror(err) + "): namespaces confine without it; " + only;
  Plan p;
  p.landlock.host_abi = static_cast<int>(abi);
  p.landlock.abi = namespaces_landlock_abi(p.landlock.host_abi);
  return "under namespaces: " + landlock_layer(p) + "; " +
         (abi >= kLandlockOnlyMinAbi ? "enough for --mechanism landlock" : only);
}

int check_host(bool json, const Result<policy::Policy>& intended,
               const std::vector<std::pair<std::string, std::string>>& env) {
  std::vector<Probe> probes;
  int e = in_child(probe_userns);
  probes.push_back({"user_namespaces", e == 0, true, e == 0 ? "unprivileged user namespaces work" : std::strerror(e)});
  e = probe_namespaces();
  probes.push_back({"mount_pid_net_namespaces", e == 0, true,
                    e == 0 ? "mount, pid, net, ipc, uts and cgroup namespaces, tmpfs, proc and mount_setattr work"
                           : std::string("failed: ") + std::strerror(e)});
  long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, 1U);
  probes.push_back({"landlock", abi >= 1, false, landlock_detail(abi, errno)});
  e = in_child(probe_seccomp);
  probes.push_back({"seccomp", e == 0, true, e == 0 ? "seccomp filters and no_new_privs available" : std::strerror(e)});
  probes.push_back(cgroup_limits_probe());
  // The intended run, planned as a run would plan it; its mechanism says which probes it needs.
  std::optional<Error> refused;
  Plan plan;
  if (!intended) {
    refused = intended.error();
  } else if (auto p = compile(*intended, *make_real_host_view(), env); !p) {
    refused = p.error();
  } else {
    plan = std::move(*p);
  }
  const bool landlock_only = plan.mechanism == Mechanism::landlock_only;
  for (auto& p : probes) {
    if (p.name == "landlock") p.required = landlock_only;
    if (p.name == "user_namespaces" || p.name == "mount_pid_net_namespaces") p.required = !landlock_only;
  }
  bool all = !refused;
  for (const auto& p : probes) all = all && (p.ok || !p.required);
  const std::string mech = landlock_only ? "landlock" : "namespaces";
  if (json) {
    toml::table mechs;
    for (const auto& p : probes)
      mechs.insert(p.name, toml::table{{"available", p.ok}, {"required", p.required}, {"detail", p.detail}});
    toml::table t{{"platform", "linux"}, {"full_confinement", all}, {"mechanisms", std::move(mechs)}};
    if (refused) {
      t.insert("refused", toml::table{{"class", std::string(to_string(refused->cls))}, {"reason", refused->reason},
                                      {"input", refused->input}, {"remedy", refused->remedy}});
    } else {
      toml::array layers;
      for (const auto& l : layers_in_force(plan)) layers.push_back(l);
      t.insert("mechanism", mech);
      t.insert("layers", std::move(layers));
    }
    std::cout << to_json(t) << "\n";
  } else {
    for (const auto& p : probes)
      std::cout << (p.ok ? "ok      " : (p.required ? "MISSING " : "absent  ")) << p.name << ": " << p.detail << "\n";
    if (refused) {
      std::cout << "refused: " << render_error_text(*refused) << "\n";
    } else {
      std::cout << "the run (mechanism " << mech << ") would have in force:\n";
      for (const auto& l : layers_in_force(plan)) std::cout << "  " << l << "\n";
    }
    std::cout << (all ? "full confinement: available\n" : "full confinement: NOT available (cage will refuse to run)\n");
  }
  return all ? 0 : exit_status::kCageError;
}

}  // namespace cage::lx
