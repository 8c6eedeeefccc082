// Which kernel a mechanism needs, and which layers a plan puts in force, named one way for
// --dry-run, --check, --result and the audit's spawn event. Under the namespaces mechanism the
// namespaces are the boundary and Landlock is a second filesystem layer of whatever ABI the kernel
// has (or none); only the Landlock-only mechanism needs a minimum ABI. Pure; tested by
// tests/unit/linux_layers_test.cc.
#include <cstdio>

#include "linux/compile.h"

namespace cage::lx {

namespace {

// The newest call the namespaces mechanism cannot do without, and the others it makes (mount.cc,
// init.cc, execute.cc, landlock.cc). Each fact once: README and cage(1) repeat this list.
constexpr int kNamespacesMajor = 5, kNamespacesMinor = 12;
constexpr const char* kNamespacesNeeds =
    "mount_setattr (5.12) for read-only, nosuid, nodev bind mounts, close_range with CLOSE_RANGE_CLOEXEC "
    "(5.11), openat2 with RESOLVE_NO_SYMLINKS (5.6), pidfd_open (5.3), open_tree and move_mount (5.2), "
    "unprivileged user namespaces";

// What the Landlock-only mechanism would lose on each ABI below its minimum: without namespaces
// nothing else confines these, so each loss is a refusal, not a note.
struct AbiLoss {
  int abi;
  const char* lost;
};
constexpr AbiLoss kLandlockOnlyLosses[] = {
    {6, "signals and abstract unix sockets are not scoped (the workload could signal the user's other "
        "processes and connect to the host's abstract sockets: X11, D-Bus, container runtimes)"},
    {5, "ioctl on device files beneath a grant is not restricted"},
    {4, "TCP connect and bind are not restricted (the host's whole network and its local services)"},
    {3, "truncate of any file the user may write is not restricted, even outside --rw"},
    {2, "every rename or link across directories fails (EXDEV), even within --rw"},
};

std::string lost_below(int abi, int upto) {
  std::string s;
  for (const auto& l : kLandlockOnlyLosses)
    if (l.abi > abi && l.abi <= upto) s += std::string(s.empty() ? "" : "; ") + "ABI " + std::to_string(l.abi) + ": " + l.lost;
  return s;
}

// What a Landlock ABI adds to the filesystem layer, and what it lacks, under namespaces.
std::string fs_layer_text(int abi) {
  std::string missing;
  auto add = [&](const char* m) { missing += std::string(missing.empty() ? "" : ", ") + m; };
  if (abi < 3) add("no truncate right");
  if (abi < 5) add("no device-ioctl right");
  if (abi < 6) add("no signal or abstract-socket scoping");
  return "landlock ABI " + std::to_string(abi) + ": filesystem" + (abi >= 6 ? ", signal and abstract-socket scoping" : " only") +
         (missing.empty() ? "" : " (" + missing + ")");
}

}  // namespace

int namespaces_landlock_abi(int host_abi) {
  // ABI 1 denies every rename or link into another directory (EXDEV), even where the rules grant
  // both sides: LANDLOCK_ACCESS_FS_REFER, which lifts that, came with ABI 2 (Linux 5.19, kernel
  // commit "landlock: Add support for file reparenting"). Under namespaces, where the mounts already
  // confine, that layer would break package managers and build tools for no boundary of its own.
  return host_abi >= 2 ? host_abi : 0;
}

Status check_namespaces_kernel(const HostView& host) {
  auto release = host.read_file("/proc/sys/kernel/osrelease");
  int major = 0, minor = 0;
  if (!release || std::sscanf(release->c_str(), "%d.%d", &major, &minor) != 2) return Ok{};  // unknown: the calls tell
  if (major > kNamespacesMajor || (major == kNamespacesMajor && minor >= kNamespacesMinor)) return Ok{};
  std::string r = *release;
  while (!r.empty() && (r.back() == '\n' || r.back() == ' ')) r.pop_back();
  return unavailable("kernel " + r,
                     "the namespaces mechanism needs Linux " + std::to_string(kNamespacesMajor) + "." +
                         std::to_string(kNamespacesMinor) + " or later: " + kNamespacesNeeds,
                     "upgrade the kernel (any distribution kernel from 2021 on)");
}

Status check_landlock_only_abi(const HostView& host) {
  const int abi = host.landlock_abi();
  if (abi >= kLandlockOnlyMinAbi) return Ok{};
  std::string offered = abi < 1 ? "this kernel has no Landlock" : "this kernel offers ABI " + std::to_string(abi);
  return unavailable("--mechanism landlock",
                     "without namespaces cage needs Landlock ABI " + std::to_string(kLandlockOnlyMinAbi) +
                         " (Linux 6.12); " + offered + ", so: " + lost_below(abi < 1 ? 1 : abi, kLandlockOnlyMinAbi) +
                         (abi < 1 ? "; and no filesystem rules at all" : ""),
                     "allow user namespaces (see cage --check) so that namespaces confine, or upgrade the kernel");
}

std::string landlock_layer(const Plan& plan) {
  const LandlockPlan& l = plan.landlock;
  if (plan.mechanism == Mechanism::landlock_only)
    return "landlock ABI " + std::to_string(l.abi) + ": filesystem, " +
           (l.deny_all_tcp ? "TCP connect and bind, " : "") +
           "signal and abstract-socket scoping (the only filesystem boundary)";
  if (l.host_abi < 1) return "landlock: not available on this kernel (namespaces confine)";
  if (l.abi < 1)
    return "landlock ABI " + std::to_string(l.host_abi) +
           ": not applied (ABI 1 fails every rename or link across directories; namespaces confine)";
  return fs_layer_text(l.abi);
}

std::vector<std::string> layers_in_force(const Plan& plan) {
  std::vector<std::string> out;
  const bool host_net = plan.net.mode == NetPlan::Mode::host;
  if (plan.mechanism == Mechanism::namespaces)
    out.push_back(std::string("namespaces: user, mount, pid, ipc, uts, cgroup") + (host_net ? "" : ", net"));
  else
    out.push_back("no namespaces (mechanism landlock): the host's own tree, processes and network");
  out.push_back(landlock_layer(plan));
  out.push_back("seccomp: " + std::string(policy::to_string(plan.seccomp.profile)) +
                (plan.mechanism == Mechanism::landlock_only ? " + the Landlock-only socket and IPC filter" : "") +
                (plan.seccomp.no_memfd ? " + memfd_create refused (--exec)" : ""));
  switch (plan.net.mode) {
    case NetPlan::Mode::none:
      out.push_back(plan.mechanism == Mechanism::namespaces ? "network: own loopback only (empty network namespace)"
                                                            : "network: none (TCP denied by Landlock, other sockets by seccomp)");
      break;
    case NetPlan::Mode::proxy:
      out.push_back(plan.mechanism == Mechanism::namespaces
                        ? "network: empty network namespace; only cage's listeners inside it lead out, to cage's "
                          "proxy and its allowlist (own loopback free)"
                        : "network: every connect() checked by cage; only cage's proxy port is reached");
      break;
    case NetPlan::Mode::host:
      out.push_back(plan.mechanism == Mechanism::namespaces && plan.landlock.abi < 6
                        ? "network: the host's (--share-net), and with it the host's abstract unix sockets (scoping "
                          "needs Landlock ABI 6)"
                        : "network: the host's (--share-net)");
      break;
  }
  out.push_back("no_new_privs, all capabilities dropped");
  return out;
}

}  // namespace cage::lx
