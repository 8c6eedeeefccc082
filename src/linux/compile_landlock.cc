// lx::compile for hosts that block user namespaces (Ubuntu 23.10+ AppArmor, container seccomp
// profiles, max_user_namespaces=0): the same Policy enforced with Landlock + seccomp +
// no_new_privs + rlimits on the host's own tree. Each policy element is compared with what that
// mechanism enforces; a lost element is refused unless --allow-degraded names it. Pure; tested by
// tests/unit/linux_compile_test.cc and tests/integration/landlock_only_*.sh.
#include <algorithm>

#include "linux/compile.h"
#include "linux/devices.h"
#include "proxy/budget.h"

namespace cage::lx {

namespace {

using policy::is_beneath;
using policy::Policy;

// Where the supervisor puts the run's private HOME and TMPDIR (created at run time, removed after).
constexpr const char* kPrivateDir = "<private>";

bool accepted(const Policy& p, const std::string& element) {
  return std::find(p.allow_degraded.begin(), p.allow_degraded.end(), element) != p.allow_degraded.end();
}

void add_rule(Plan& plan, const HostView& host, const std::string& path, Access a, const std::string& why) {
  FileInfo fi = host.stat(path);
  if (fi.kind == FileKind::missing) return;
  auto real = host.realpath(path);
  plan.landlock.rules.push_back(LandlockRule{real ? *real : path, a, fi.kind == FileKind::dir, why});
}

// A typo in --hide is refused here as under namespaces (compile.cc).
Status refuse_missing_hides(const Policy& p, const HostView& host) {
  for (const auto& h : p.hide)
    if (FileInfo fi = host.lstat(h.path); fi.kind == FileKind::missing) return nothing_to_hide(h, fi.err);
  return Ok{};
}

// A --ro grant beneath a --rw grant: Landlock adds rights, it cannot take write away beneath one.
bool ro_beneath_rw(const Policy& p, const HostView& host) {
  for (const auto& ro : p.ro)
    for (const auto& rw : p.rw) {
      auto r1 = host.realpath(ro.path), r2 = host.realpath(rw.path);
      if (r1 && r2 && is_beneath(*r1, *r2)) return true;
    }
  return false;
}

// A policy element Landlock alone cannot give: `asked` when the policy uses it.
struct Loss {
  const char* element;
  bool asked;
  const char* what;
};

Status refuse_unaccepted_losses(const Policy& p, const HostView& host, Plan& plan) {
  const Loss losses[] = {
      {"pid", true, "no pid namespace: /proc is the host's (every process and its command line, and kernel "
                    "files such as /proc/keys and /proc/timer_list, are readable; environments, memory and "
                    "fds of host processes are not), and should cage's init itself be killed from outside, "
                    "the workload's descendants may outlive it (signals and ptrace to host processes stay "
                    "denied)"},
      {"hide", !p.hide.empty(), "--hide cannot mask a path beneath a grant without a mount namespace"},
      {"tmpfs", !p.tmpfs.empty() || p.limits.tmpfs_bytes.has_value(),
       "--tmpfs cannot mount at its path without a mount namespace, and --tmpfs-size has no private tmpfs to "
       "size (HOME and TMPDIR are a directory on the host's /tmp)"},
      {"hostname", p.hostname != "cage", "--hostname needs a UTS namespace: the host's name shows"},
      {"nested-ro", ro_beneath_rw(p, host),
       "a --ro grant beneath a --rw grant stays writable: Landlock cannot take write "
       "access away beneath a grant, and the workload may rename its parent directories "
       "and put its own files at its path"},
  };
  std::string refused, remedy;
  for (const auto& l : losses) {
    if (!l.asked) continue;
    if (!accepted(p, l.element)) {
      refused += std::string(refused.empty() ? "" : "; ") + l.element + ": " + l.what;
      remedy += std::string(remedy.empty() ? "" : ",") + l.element;
      continue;
    }
    plan.degraded.push_back(std::string(l.element) + ": " + l.what);
  }
  if (!refused.empty())
    return unavailable("user namespaces",
                       "without user namespaces Landlock alone cannot enforce: " + refused,
                       "allow user namespaces (see cage --check), or accept the loss with --allow-degraded=" + remedy);
  return Ok{};
}

// Modes, timestamps, owners and extended attributes (ACLs among them) are outside Landlock's rights:
// cage checks each such call (metadata_notify.h) unless the loss is accepted, so that no file the
// user owns outside --rw changes its metadata.
void decide_metadata(const Policy& p, Plan& plan) {
  plan.allow_metadata = accepted(p, "metadata");
  if (plan.allow_metadata)
    plan.degraded.push_back("metadata: chmod, timestamps, chown, extended attributes and inode flags (chattr) work "
                            "on every file the user owns, not only beneath --rw grants (content stays read-only)");
}

// connect() is checked by the supervisor through seccomp user notification (connect_notify.h),
// which reads the workload's memory and takes its socket: ptrace access Yama may forbid.
Status check_connect_notify_allowed(const HostView& host) {
  auto scope = host.read_file("/proc/sys/kernel/yama/ptrace_scope");
  int level = scope && !scope->empty() ? (*scope)[0] - '0' : 0;
  if (level >= 3 || (level == 2 && host.uid() != 0))
    return unavailable("--net", "without a network namespace cage checks each connect() of the workload, which "
                                "needs ptrace access to it; kernel.yama.ptrace_scope is " + std::to_string(level),
                       "allow user namespaces, or lower kernel.yama.ptrace_scope (1 lets a parent check its "
                       "descendants), or drop --net");
  return Ok{};
}

// --share-net is the host's network; --net is the proxy on loopback, every connect() checked.
Status compile_network(const Policy& p, const HostView& host, Plan& plan) {
  if (p.share_net) plan.net.mode = NetPlan::Mode::host;
  if (p.net.empty() || p.share_net) return Ok{};
  plan.net.mode = NetPlan::Mode::proxy;
  plan.net.allow = p.net;
  plan.net.max_connections = proxy::connection_limit(p.limits.memory_bytes);
  plan.loopback_proxy = true;
  if (auto s = check_connect_notify_allowed(host); !s) return s;
  if (p.net_mode == Policy::NetMode::transparent)
    return unavailable("--net-mode", "transparent egress needs a network namespace",
                       "use --net-mode proxy (the default), or allow user namespaces");
  return Ok{};
}

std::vector<std::string> landlock_only_notes() {
  return {"/tmp is not writable; TMPDIR and HOME point to a private directory removed after the run",
          "/etc is the host's: files needed to run are readable, /etc/passwd lists every account",
          "no private loopback: TCP connect and bind are denied (but to the proxy's port with --net), "
          "UDP, raw and unix sockets too",
          "chmod, timestamps, chown, extended attributes and inode flags (chattr) are checked by cage for "
          "each call: allowed only beneath --rw and the private directory (anywhere with "
          "--allow-degraded=metadata)",
          "stat, extended attributes and link targets of every host path stay readable (never contents)",
          "no pseudo-terminals can be allocated (/dev/pts is not granted, but for the caller's own terminal, "
          "which can be reopened by name)"};
}

// The host's system directories and the /etc entries programs need, read-only.
void add_system_view_rules(const HostView& host, Plan& plan) {
  for (const char* d : {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"})
    add_rule(plan, host, d, Access::read_exec, std::string("default view: ") + d);
  for (const char* const* e = default_etc_entries(); *e; ++e) {
    std::string path = std::string("/etc/") + *e;
    if (path == "/etc/ssl") {  // private keys stay out
      add_rule(plan, host, "/etc/ssl/certs", Access::read, "default view: /etc/ssl/certs");
      add_rule(plan, host, "/etc/ssl/openssl.cnf", Access::read, "default view: /etc/ssl/openssl.cnf");
      continue;
    }
    add_rule(plan, host, path, Access::read, "default view: " + path);
  }
  add_rule(plan, host, "/etc/passwd", Access::read, "default view: /etc/passwd");
  add_rule(plan, host, "/etc/group", Access::read, "default view: /etc/group");
}

void add_default_view_rules(const Policy& p, const HostView& host, Plan& plan) {
  if (p.system_view) add_system_view_rules(host, plan);
  add_rule(plan, host, "/proc", Access::read, "/proc (host processes visible: --allow-degraded=pid)");
  for (const char* d : kDevices) add_rule(plan, host, dev_path(d), Access::dev_rw, "minimal /dev");
}

// One rule per --ro or --rw grant, on the path the grant resolves to now.
Status add_grant_rules(const Policy& p, const HostView& host, const std::vector<policy::Grant>& list,
                       Access a, Plan& plan) {
  for (const auto& g : list) {
    FileInfo fi = host.stat(g.path);
    auto real = host.realpath(g.path);
    if (fi.kind == FileKind::missing || !real)
      return Error{ErrorClass::invalid_policy, "no such file or directory", "check the path", g.origin, fi.err};
    if (fi.kind == FileKind::device)
      return invalid(g.origin, "device nodes cannot be granted", "the default /dev has what programs need");
    if (auto s = refuse_link_inside_rw(p, host, g, *real); !s) return s;
    if (auto s = refuse_link_escape(p, host, g, *real); !s) return s;
    plan.landlock.rules.push_back(LandlockRule{*real, a, fi.kind == FileKind::dir, g.origin, true});
  }
  return Ok{};
}

// The nested-ro check again, on the very paths the rules name: a link swapped in between the two
// looks (refuse_unaccepted_losses, and the realpaths of add_grant_rules) must not turn a refused
// --ro beneath --rw into a silent loss. Rules [ro_begin, rw_begin) are --ro, [rw_begin, end) --rw.
Status recheck_ro_beneath_rw(const Policy& p, const Plan& plan, size_t ro_begin, size_t rw_begin) {
  const auto& rules = plan.landlock.rules;
  if (accepted(p, "nested-ro")) return Ok{};
  for (size_t i = ro_begin; i < rw_begin; ++i)
    for (size_t j = rw_begin; j < rules.size(); ++j)
      if (is_beneath(rules[i].path, rules[j].path))
        return unavailable("user namespaces",
                           "without user namespaces Landlock alone cannot enforce: nested-ro: " + rules[i].why +
                               " lies beneath " + rules[j].why + " (a path changed while cage looked)",
                           "allow user namespaces (see cage --check), or accept the loss with --allow-degraded=nested-ro");
  return Ok{};
}

Status add_grants(const Policy& p, const HostView& host, Plan& plan) {
  const size_t ro_begin = plan.landlock.rules.size();
  if (auto s = add_grant_rules(p, host, p.ro, Access::read_exec, plan); !s) return s;
  const size_t rw_begin = plan.landlock.rules.size();
  if (auto s = add_grant_rules(p, host, p.rw, Access::write, plan); !s) return s;
  return recheck_ro_beneath_rw(p, plan, ro_begin, rw_begin);
}

// Landlock cannot take write access back beneath a grant, so cage's own binary must not lie in one:
// a workload that rewrote it would run outside the sandbox the next time the caller starts cage.
Status refuse_self_beneath_rw(const Policy& p, const HostView& host) {
  if (auto self = host.self_exe())
    for (const auto& g : p.rw)
      if (auto real = host.realpath(g.path); real && is_beneath(*self, *real))
        return invalid(g.origin, "cage's own binary (" + *self + ") lies beneath this --rw grant",
                       "install cage outside the directories you grant, or allow user namespaces");
  return Ok{};
}

// Whether a read or write rule already covers `path`.
bool granted(const Plan& plan, const std::string& path) {
  return std::any_of(plan.landlock.rules.begin(), plan.landlock.rules.end(), [&](const LandlockRule& r) {
    return (r.access == Access::read_exec || r.access == Access::write) && is_beneath(path, r.path);
  });
}

// The start directory, readable unless it is too wide to show (cwd_too_wide), and the note that
// says what of it the workload sees.
Status compile_cwd(const Policy& p, const HostView& host, Plan& plan) {
  auto cwd = host.realpath(p.cwd);
  if (!cwd || host.stat(*cwd).kind != FileKind::dir)
    return invalid("--chdir " + p.cwd, "the start directory does not exist", "create it or pick another");
  plan.cwd = *cwd;
  std::string home = p.home.empty() ? "" : host.realpath(p.home).value_or(p.home);
  bool too_wide = cwd_too_wide(*cwd, home);
  if (p.cwd_visible && !too_wide)
    plan.landlock.rules.push_back(
        LandlockRule{*cwd, Access::read_exec, true, "current directory (read-only)", true});
  if (p.cwd_visible && too_wide && !granted(plan, *cwd)) plan.cwd_note = cwd_not_granted_note(*cwd, home);
  if (p.cwd_visible && !too_wide)
    plan.cwd_note =
        repository_note(host, *cwd, home, [&](const std::string& path) { return granted(plan, path); });
  return Ok{};
}

// The private HOME and TMPDIR, TCP denied but through the proxy, and the kernel's Landlock ABI.
void finish_landlock_plan(const Policy& p, const HostView& host, Plan& plan) {
  plan.landlock.rules.push_back(LandlockRule{kPrivateDir, Access::write, true, "private HOME and TMPDIR"});
  plan.landlock.deny_all_tcp = !p.share_net;
  if (plan.loopback_proxy)
    plan.notes.push_back("--net: the proxy listens on a 127.0.0.1 port chosen at run time and serves only "
                         "requests that carry the run's secret (in the *_PROXY URLs); every connect() of the "
                         "workload is checked by cage (seccomp user notification) and only that address is "
                         "reached; programs that ignore "
                         "the proxy variables fail at once (no transparent egress without a network namespace)");
  plan.landlock.abi = plan.landlock.host_abi = host.landlock_abi();
  plan.landlock.no_symlinks = true;
}

}  // namespace

// The steps run in this order so that the refusals come in the order a user fixes them: what no
// --allow-degraded can give, then the losses to accept, then the network, then each path.
Status compile_landlock_view(const Policy& p, const HostView& host, Plan& plan) {
  plan.mechanism = Mechanism::landlock_only;
  // First: below its minimum ABI no --allow-degraded makes this mechanism possible (layers.cc).
  if (auto s = check_landlock_only_abi(host); !s) return s;
  if (auto s = refuse_missing_hides(p, host); !s) return s;
  if (auto s = refuse_unaccepted_losses(p, host, plan); !s) return s;
  decide_metadata(p, plan);
  if (auto s = compile_network(p, host, plan); !s) return s;
  plan.notes = landlock_only_notes();
  add_default_view_rules(p, host, plan);
  if (auto s = add_grants(p, host, plan); !s) return s;
  if (auto s = refuse_self_beneath_rw(p, host); !s) return s;
  if (auto s = compile_cwd(p, host, plan); !s) return s;
  finish_landlock_plan(p, host, plan);
  return Ok{};
}

bool is_private_dir_rule(const LandlockRule& r) { return r.path == kPrivateDir; }

}  // namespace cage::lx
