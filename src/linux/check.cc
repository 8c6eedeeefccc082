// cage --check: probes this host for each mechanism cage needs (user, mount, pid, net namespaces,
// mount_setattr, Landlock ABI, seccomp, no_new_privs, cgroups) by trying it in a throwaway child,
// and reports each as available or not and why. Exit 0 only if full confinement is possible.
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
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "common/json.h"
#include "linux/cgroup_plan.h"
#include "linux/execute.h"
#include "linux/namespace_probe.h"

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

// Which of --memory, --pids, --cpu a cgroup can enforce for this user here, decided exactly as a
// run would decide it (compile_cgroups); the rest fall back to rlimits or are not enforced.
Probe cgroup_limits_probe() {
  Plan plan;
  plan.limits.memory_bytes = 1ULL << 30;
  plan.limits.pids = 1024;
  plan.limits.cpu = 1.0;
  auto host = make_real_host_view();
  (void)compile_cgroups(plan, *host);
  std::string detail = cgroup_summary() + "; ";
  if (plan.cgroup.version != 0 && plan.cgroup.unenforced.empty())
    return {"cgroup_limits", true, false, detail + "--memory, --pids, --cpu enforced by cgroup v" + std::to_string(plan.cgroup.version)};
  for (const auto& u : plan.cgroup.unenforced) {
    std::string flag = u.limit.substr(0, u.limit.find(' '));
    detail += flag + (u.fallback.empty() ? " NOT enforced" : " only approximated by " + u.fallback) + "; ";
  }
  detail += "limits_not_enforced (" + (plan.cgroup.unenforced.empty() ? std::string() : plan.cgroup.unenforced.front().why) + ")";
  return {"cgroup_limits", false, false, detail};
}

}  // namespace

int check_host(bool json) {
  std::vector<Probe> probes;
  int e = in_child(probe_userns);
  probes.push_back({"user_namespaces", e == 0, true, e == 0 ? "unprivileged user namespaces work" : std::strerror(e)});
  e = probe_namespaces();
  probes.push_back({"mount_pid_net_namespaces", e == 0, true,
                    e == 0 ? "mount, pid, net, ipc, uts and cgroup namespaces, tmpfs, proc and mount_setattr work"
                           : std::string("failed: ") + std::strerror(e)});
  long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, 1U);
  probes.push_back({"landlock", abi >= 1, true,
                    abi >= 1 ? "ABI " + std::to_string(abi) + (abi >= 4 ? " (TCP rules)" : " (no TCP rules: --net refused)") +
                                   (abi >= 6 ? ", signal and abstract-socket scoping" : "")
                             : std::string("unavailable: ") + std::strerror(errno)});
  e = in_child(probe_seccomp);
  probes.push_back({"seccomp", e == 0, true, e == 0 ? "seccomp filters and no_new_privs available" : std::strerror(e)});
  probes.push_back(cgroup_limits_probe());
  bool all = true;
  for (const auto& p : probes) all = all && (p.ok || !p.required);
  // Without the namespaces, cage still runs where Landlock and seccomp work (containers, hardened
  // hosts): with the Landlock-only mechanism, once its documented loss is accepted.
  const bool fallback = !all && probes[2].ok && probes[3].ok;
  const std::string fallback_line =
      "Landlock-only mechanism: available: cage runs with it when you accept its loss of pid isolation: "
      "--allow-degraded=pid (cage(1) MECHANISMS lists what it enforces)";
  if (json) {
    toml::table mechs;
    for (const auto& p : probes)
      mechs.insert(p.name, toml::table{{"available", p.ok}, {"required", p.required}, {"detail", p.detail}});
    toml::table t{{"platform", "linux"}, {"full_confinement", all}, {"mechanisms", std::move(mechs)}};
    if (fallback) t.insert("landlock_only", toml::table{{"available", true}, {"requires", "--allow-degraded=pid"}});
    std::cout << to_json(t) << "\n";
  } else {
    for (const auto& p : probes)
      std::cout << (p.ok ? "ok      " : (p.required ? "MISSING " : "absent  ")) << p.name << ": " << p.detail << "\n";
    std::cout << (all ? "full confinement: available\n"
                      : fallback ? "full confinement: NOT available\n" + fallback_line + "\n"
                                 : "full confinement: NOT available (cage will refuse to run)\n");
  }
  return all ? 0 : 125;
}

}  // namespace cage::lx
