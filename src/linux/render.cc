// --dry-run output of a Linux plan: text for people (each step with its `why`), a toml::table for
// --json. Nothing here touches the system.
#include <algorithm>
#include <sstream>

#include "common/sha256.h"
#include "linux/cgroup_plan.h"
#include "linux/compile.h"
#include "policy/summary.h"
#include "linux/transparent_plan.h"
#include "proxy/synthetic.h"

namespace cage::lx {

std::string_view to_string(MountKind k) {
  switch (k) {
    case MountKind::tmpfs: return "tmpfs";
    case MountKind::bind_ro: return "bind_ro";
    case MountKind::bind_rw: return "bind_rw";
    case MountKind::proc: return "proc";
    case MountKind::dev: return "dev";
    case MountKind::hide: return "hide";
    case MountKind::symlink: return "symlink";
    case MountKind::file: return "file";
    case MountKind::proc_ro: return "proc_ro";
    case MountKind::dir: return "dir";
    case MountKind::over_file: return "over_file";
  }
  return "?";
}

std::string_view to_string(Access a) {
  switch (a) {
    case Access::list: return "list";
    case Access::read: return "read";
    case Access::read_exec: return "read_exec";
    case Access::write: return "write";
    case Access::dev_rw: return "dev_rw";
    case Access::exec: return "exec";
  }
  return "?";
}

namespace {

std::string_view net_mode(NetPlan::Mode m) {
  switch (m) {
    case NetPlan::Mode::none: return "none";
    case NetPlan::Mode::proxy: return "proxy";
    case NetPlan::Mode::host: return "host";
  }
  return "?";
}

// cgroup limits: where the run's cgroup goes, what is written, and what no cgroup enforces.
const char* via_name(CgroupVia v) {
  switch (v) {
    case CgroupVia::none: return "none";
    case CgroupVia::direct: return "direct";
    case CgroupVia::user_scope: return "user_scope";
  }
  return "none";
}

void render_cgroup_text(std::ostream& o, const CgroupPlan& cg) {
  if (cg.via == CgroupVia::user_scope) {
    o << "limits: delegated scope via the systemd user manager: cgroup v2 in a transient cage-<pid>.scope "
         "(Delegate=yes), asked for over " << cg.scope.socket << "; systemd applies these before the sandbox "
         "moves in and removes the scope when the run ends:\n";
    for (const auto& p : cg.scope.properties) o << "    " << p.name << " = " << p.value << "    # " << p.why << "\n";
    for (const auto& u : cg.scope.fallback)
      o << "  if the user manager refuses: " << u.limit << (u.fallback.empty() ? " not enforced" : " falls back to " + u.fallback)
        << (cg.strict ? " (no: --strict-limits makes it an error)" : "") << "\n";
  } else if (cg.via == CgroupVia::direct) {
    o << "limits: cgroup v" << cg.version << " at";
    for (const auto& d : cg.dirs) o << " " << d.parent;
    o << "\n";
  } else if (!cg.unenforced.empty()) {
    o << "limits: rlimits: no delegated cgroup\n";
  }
  if (cg.via == CgroupVia::direct) o << "cgroup v" << cg.version << " (a cage-<pid> directory in each, removed when the run ends):\n";
  for (size_t i = 0; i < cg.dirs.size(); ++i) {
    o << "  " << cg.dirs[i].parent << "/cage-<pid>\n";
    for (const auto& w : cg.writes)
      if (w.dir == i) o << "    " << w.file << " = " << w.value << (w.optional ? " (if present)" : "") << "    # " << w.why << "\n";
  }
  render_unenforced_text(o, cg);
}

toml::table render_cgroup_table(const CgroupPlan& cg) {
  toml::array dirs, unenforced;
  for (size_t i = 0; i < cg.dirs.size(); ++i) {
    toml::table writes;
    for (const auto& w : cg.writes)
      if (w.dir == i) writes.insert(w.file, w.value);
    dirs.push_back(toml::table{{"controller", cg.dirs[i].controller}, {"parent", cg.dirs[i].parent}, {"writes", std::move(writes)}});
  }
  for (const auto& u : cg.unenforced) {
    toml::table t{{"limit", u.limit}, {"reason", u.why}};
    if (!u.fallback.empty()) t.insert("fallback", u.fallback);
    unenforced.push_back(std::move(t));
  }
  toml::table t{{"version", cg.version}, {"via", via_name(cg.via)}, {"dirs", std::move(dirs)},
                {"not_enforced", std::move(unenforced)}};
  if (cg.via == CgroupVia::user_scope) {
    toml::table props;
    for (const auto& p : cg.scope.properties) props.insert(p.name, static_cast<int64_t>(p.value));
    toml::array fallback;
    for (const auto& u : cg.scope.fallback) {
      toml::table f{{"limit", u.limit}, {"reason", u.why}};
      if (!u.fallback.empty()) f.insert("fallback", u.fallback);
      fallback.push_back(std::move(f));
    }
    t.insert("scope", toml::table{{"manager", cg.scope.socket}, {"properties", std::move(props)},
                                  {"if_refused", std::move(fallback)}});
  }
  return t;
}

}  // namespace

std::string quoted_argv(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`*?[]{}()<>|&;#~") == std::string::npos;
    if (plain) {
      s += a;
      continue;
    }
    s += '\'';
    for (char c : a) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
    s += '\'';
  }
  return s;
}

static toml::table render_init_table(const InitPlan& init) {
  toml::array ns;
  for (const auto& n : init.namespaces) ns.push_back(n);
  return toml::table{{"namespaces", std::move(ns)}, {"build_root", init.build_root}, {"loopback", init.loopback},
                     {"pid1", init.pid1}};
}

std::string platform_line(const Plan& plan) {
  if (plan.mechanism == Mechanism::landlock_only)
    return "platform: linux, mechanism landlock (user namespaces are blocked: Landlock + seccomp alone)";
  std::string ns;
  for (const auto& n : plan.init.namespaces) ns += (ns.empty() ? "" : ", ") + n;
  return "platform: linux (" + ns + " namespaces)";
}

void render_unenforced_text(std::ostream& o, const CgroupPlan& cg) {
  for (const auto& u : cg.unenforced)
    o << "WARNING: " << u.limit << " not enforced by a cgroup" << (u.fallback.empty() ? "" : " (" + u.fallback + " instead)")
      << ": " << u.why << "\n";
}

void render_identity_text(std::ostream& o, const Plan& plan, const char* indent) {
  auto head = [&](std::string name) {  // "run:" padded like the lines around it
    name += ':';
    name.resize(std::max(name.size() + 1, std::string(indent).size() + 4), ' ');
    return name;
  };
  if (!plan.run_id.empty() || !plan.labels.empty()) {
    o << head("run") << "id " << (plan.run_id.empty() ? "generated at start" : plan.run_id);
    for (const auto& [k, v] : plan.labels) o << ", " << k << "=" << v;
    o << "\n";
  }
  if (plan.ids.inner_uid != plan.ids.outer_uid || plan.ids.inner_gid != plan.ids.outer_gid)
    o << head("as") << "uid " << plan.ids.inner_uid << ", gid " << plan.ids.inner_gid << " inside (--uid); uid "
      << plan.ids.outer_uid << " on the host\n";
  if (plan.scratch)
    o << head("scratch") << plan.scratch->inside << " (read-write, kept across runs in " << plan.scratch->host_path
      << ")\n";
}

void render_network_text(std::ostream& o, const Plan& plan, bool detail) {
  o << "network: " << net_mode(plan.net.mode);
  switch (plan.net.mode) {
    case NetPlan::Mode::none:
      o << (plan.mechanism == Mechanism::namespaces ? " (own loopback only)\n" : " (no TCP at all, no private loopback)\n");
      break;
    case NetPlan::Mode::host: o << "  # WARNING: host network shared (--share-net)\n"; break;
    case NetPlan::Mode::proxy:
      // The mode's name is "proxy" whatever --net-mode says: the words after it tell how the allowed
      // destinations are reached, so a transparent-only run does not read as a proxy one.
      if (plan.net.shim_port != 0) o << " (shim 127.0.0.1:" << plan.net.shim_port << " -> cage's proxy)";
      if (plan.net.shim_port != 0 && plan.net.transparent.enabled)
        o << " and transparent egress (direct connects and cage's DNS)";
      else if (plan.net.shim_port != 0 && plan.mechanism == Mechanism::namespaces)
        o << "; --net-mode proxy: direct connects fail";
      else if (plan.mechanism == Mechanism::landlock_only)
        o << " (cage's proxy on a 127.0.0.1 port chosen at run time; no transparent egress)";
      else if (plan.net.shim_port == 0)
        o << " via transparent egress only (--net-mode transparent: no proxy port, no *_PROXY variables)";
      o << "\n";
      for (const auto& r : plan.net.allow) o << "  allow " << r.pattern.text << "\n";
      if (plan.net.lo_address != 0 && detail)
        o << "  address " << proxy::ipv4_text(plan.net.lo_address)
          << "/32 on lo (AI_ADDRCONFIG and \"am I online?\" checks; no default route)\n";
      if (plan.net.transparent.enabled && detail) o << render_transparent(plan.net);
      break;
  }
}

std::vector<std::string> shown_environment(const Plan& plan) {
  std::vector<std::string> out;
  for (const auto& e : plan.env)
    if (std::none_of(plan.secrets.begin(), plan.secrets.end(),
                     [&](const policy::Secret& s) { return e.rfind(s.name + "=", 0) == 0; }))
      out.push_back(e);
  for (const auto& s : plan.secrets) out.push_back(s.name + "=<secret from " + s.source + ">");
  return out;
}

std::string render_text(const Plan& plan) {
  std::ostringstream o;
  o << platform_line(plan) << "\n";
  if (plan.mechanism == Mechanism::landlock_only) {
    for (const auto& d : plan.degraded) o << "degraded: " << d << "  # accepted with --allow-degraded\n";
    for (const auto& n : plan.notes) o << "note:     " << n << "\n";
  }
  o << "command:  " << quoted_argv(plan.argv) << "\n";
  o << "exec:     " << plan.exec_path << "\n";
  if (!plan.argv_pattern.empty()) o << "pinned:   " << plan.argv_pattern << "\n";
  for (const auto& e : plan.exec_summary) o << "may exec: " << e << "\n";
  o << "cwd:      " << plan.cwd << "\n";
  if (!plan.cwd_note.empty()) o << "note:     " << plan.cwd_note << "\n";
  o << "ids:      uid " << plan.ids.outer_uid << " -> " << plan.ids.inner_uid << ", gid " << plan.ids.outer_gid
    << " -> " << plan.ids.inner_gid << "\n";
  o << "hostname: " << plan.hostname << "\n";
  render_identity_text(o, plan, "      ");
  if (plan.mounts.empty())
    o << "\nmounts: none (no mount namespace: the host's own tree, bounded by the Landlock rules below)\n";
  else
    o << "\nmounts (in order, on a fresh tmpfs root, read-only once built):\n";
  for (const auto& m : plan.mounts) {
    o << "  " << to_string(m.kind);
    for (size_t i = to_string(m.kind).size(); i < 8; ++i) o << ' ';
    o << ' ' << m.target;
    if (m.kind == MountKind::symlink) o << " -> " << m.source;
    if ((m.kind == MountKind::bind_ro || m.kind == MountKind::bind_rw) && m.source != m.target) o << " <- " << m.source;
    if (m.kind == MountKind::tmpfs && m.read_only) o << " (read-only)";
    if (m.size_bytes) o << (m.kind == MountKind::dev ? " (shm size " : " (size ") << format_size(m.size_bytes) << ")";
    if (m.noexec) o << " (noexec)";
    if (m.kind == MountKind::tmpfs && !m.read_only && m.mode != 0755) o << " (mode " << std::oct << m.mode << std::dec << ")";
    o << "    # " << m.why << "\n";
  }
  o << "\nlayers in force:\n";
  for (const auto& l : layers_in_force(plan)) o << "  " << l << "\n";
  if (plan.landlock.abi >= 1) {
    o << "\nlandlock (ABI " << plan.landlock.abi << "; everything not listed is denied):\n";
    for (const auto& r : plan.landlock.rules) o << "  " << to_string(r.access) << ' ' << r.path << "\n";
    if (plan.mechanism == Mechanism::landlock_only && plan.landlock.deny_all_tcp)
      o << "  tcp connect and bind: denied" << (plan.loopback_proxy ? " (but to the proxy's port)" : "") << "\n";
    if (plan.landlock.abi >= 6) o << "  scoped: signals and abstract unix sockets stay inside the sandbox\n";
  } else {
    o << "\n" << landlock_layer(plan) << "\n";
  }
  o << "\nseccomp: " << policy::to_string(plan.seccomp.profile);
  if (plan.seccomp.no_memfd) o << " + memfd_create and memfd_secret answer ENOSYS (--exec)";
  if (plan.seccomp.profile == policy::SeccompProfile::none) o << "  # WARNING: only the floor (terminal, set-id bits, sockets outside the netns, leases)";
  o << "\n";
  render_network_text(o, plan, true);
  o << "\nenvironment:\n";
  for (const auto& e : shown_environment(plan)) o << "  " << e << "\n";
  o << "\nprocess: no_new_privs, all capabilities dropped (bounding, ambient), "
    << (plan.init.pid1 ? "pid 1 is cage's init" : "cage's init is the workload's parent and subreaper (no pid namespace)")
    << (plan.no_nested_userns ? ", no nested user namespace (a root caller's would write host-valid file capabilities)" : "")
    << "\n";
  if (plan.limits.timeout_ms) o << "timeout: " << policy::human_duration(*plan.limits.timeout_ms) << "\n";
  if (plan.limits.max_stdout || plan.limits.max_stderr)
    o << "output: " << policy::summary_output(plan.limits)
      << " (through pipes cage reads; the rest is dropped and counted)\n";
  for (const auto& r : plan.limits.rlimits) o << "rlimit: " << r.name << "=" << r.soft << ":" << r.hard << "\n";
  render_cgroup_text(o, plan.cgroup);
  return o.str();
}

toml::table render_table(const Plan& plan) {
  toml::array mounts;
  for (const auto& m : plan.mounts) {
    toml::table t{{"kind", std::string(to_string(m.kind))}, {"target", m.target}, {"why", m.why}};
    if (!m.source.empty()) t.insert("source", m.source);
    if (m.kind == MountKind::file || m.kind == MountKind::over_file) {
      // By size and digest, never the content: /etc's copies made the plan 185 KB. A consumer
      // compares the digest with the host file's (sha256sum) to tell what is written.
      t.insert("bytes", static_cast<int64_t>(m.content.size()));
      t.insert("sha256", sha256_hex(m.content));
    }
    if (m.read_only) t.insert("read_only", true);
    if (m.kind == MountKind::tmpfs && !m.read_only) t.insert("mode", static_cast<int64_t>(m.mode));
    if (m.size_bytes) t.insert("size_bytes", static_cast<int64_t>(m.size_bytes));
    if (m.noexec) t.insert("noexec", true);
    if (m.granted) t.insert("granted", true);
    mounts.push_back(std::move(t));
  }
  toml::array rules;  // only where a Landlock layer is applied (abi 0: "layer" says why none)
  for (const auto& r : plan.landlock.abi >= 1 ? plan.landlock.rules : std::vector<LandlockRule>{})
    rules.push_back(r.granted ? toml::table{{"path", r.path}, {"access", std::string(to_string(r.access))}, {"granted", true}}
                              : toml::table{{"path", r.path}, {"access", std::string(to_string(r.access))}});
  toml::array stdio;
  for (const auto& f : plan.landlock.abi >= 1 ? plan.landlock.stdio : std::vector<StdioFile>{})
    stdio.push_back(toml::table{{"fd", f.fd}, {"path", f.path},
                                {"access", std::string(f.read && f.write ? "read,write" : f.read ? "read" : "write")}});
  toml::array tcp;
  for (auto port : plan.landlock.connect_tcp) tcp.push_back(static_cast<int64_t>(port));
  toml::array env, argv, allow;
  for (const auto& e : shown_environment(plan)) env.push_back(e);
  for (const auto& a : plan.argv) argv.push_back(a);
  toml::array exec_allow;  // empty: no allowlist, everything readable may run
  for (const auto& e : plan.exec_summary) exec_allow.push_back(e);
  for (const auto& r : plan.net.allow) allow.push_back(r.pattern.text);
  toml::table limits;
  if (plan.limits.timeout_ms) limits.insert("timeout_ms", static_cast<int64_t>(*plan.limits.timeout_ms));
  toml::table rl;
  for (const auto& r : plan.limits.rlimits)
    rl.insert(r.name, toml::array{static_cast<int64_t>(r.soft == UINT64_MAX ? -1 : static_cast<int64_t>(r.soft)),
                                  static_cast<int64_t>(r.hard == UINT64_MAX ? -1 : static_cast<int64_t>(r.hard))});
  if (!rl.empty()) limits.insert("rlimits", std::move(rl));
  if (plan.limits.memory_bytes) limits.insert("memory_bytes", static_cast<int64_t>(*plan.limits.memory_bytes));
  if (plan.limits.pids) limits.insert("pids", static_cast<int64_t>(*plan.limits.pids));
  if (plan.limits.cpu) limits.insert("cpu", *plan.limits.cpu);
  if (plan.limits.max_stdout) limits.insert("max_stdout_bytes", static_cast<int64_t>(*plan.limits.max_stdout));
  if (plan.limits.max_stderr) limits.insert("max_stderr_bytes", static_cast<int64_t>(*plan.limits.max_stderr));
  limits.insert("strict", plan.limits.strict);
  limits.insert("cgroup", render_cgroup_table(plan.cgroup));
  toml::array degraded, notes, layers;
  for (const auto& l : layers_in_force(plan)) layers.push_back(l);
  for (const auto& d : plan.degraded) degraded.push_back(d);
  for (const auto& n : plan.notes) notes.push_back(n);
  toml::table t{
      {"platform", "linux"},
      {"mechanism", plan.mechanism == Mechanism::landlock_only ? "landlock" : "namespaces"},
      {"init", render_init_table(plan.init)},
      {"degraded", std::move(degraded)},
      {"notes", std::move(notes)},
      {"argv", std::move(argv)},
      {"exec", plan.exec_path},
      {"exec_allow", std::move(exec_allow)},
      {"argv_pattern", plan.argv_pattern},
      {"cwd", plan.cwd},
      {"hostname", plan.hostname},
      {"ids", toml::table{{"outer_uid", static_cast<int64_t>(plan.ids.outer_uid)},
                          {"inner_uid", static_cast<int64_t>(plan.ids.inner_uid)},
                          {"outer_gid", static_cast<int64_t>(plan.ids.outer_gid)},
                          {"inner_gid", static_cast<int64_t>(plan.ids.inner_gid)}}},
      {"mounts", std::move(mounts)},
      {"layers", std::move(layers)},
      {"landlock", toml::table{{"abi", plan.landlock.abi},
                               {"host_abi", plan.landlock.host_abi},
                               {"layer", landlock_layer(plan)},
                               {"rules", std::move(rules)},
                               {"connect_tcp", std::move(tcp)},
                               {"scope_signals", plan.landlock.abi >= 6},
                               {"scope_abstract_unix", plan.landlock.abi >= 6},
                               {"stdio", std::move(stdio)}}},
      {"seccomp", std::string(policy::to_string(plan.seccomp.profile))},
      {"seccomp_no_memfd", plan.seccomp.no_memfd},
      {"network", toml::table{{"mode", std::string(net_mode(plan.net.mode))},
                              {"shim_port", static_cast<int64_t>(plan.net.shim_port)},
                              {"allow", std::move(allow)},
                              {"transparent", transparent_table(plan.net)}}},
      {"env", std::move(env)},
      {"limits", std::move(limits)},
  };
  if (!plan.cwd_note.empty()) t.insert("cwd_note", plan.cwd_note);
  if (!plan.run_id.empty()) t.insert("run_id", plan.run_id);
  if (!plan.labels.empty()) {
    toml::table labels;
    for (const auto& [k, v] : plan.labels) labels.insert_or_assign(k, v);
    t.insert("labels", std::move(labels));
  }
  if (plan.scratch)
    t.insert("scratch", toml::table{{"inside", plan.scratch->inside}, {"host", plan.scratch->host_path}});
  return t;
}

}  // namespace cage::lx
