// --dry-run's default output: what a user checks first, in about 25 lines. What the command can
// write and read and from which flag or profile line, what is private or hidden, network,
// environment, limits and the layers in force; the default view as a count. render_text
// (render.cc, --dry-run --verbose) prints every step. tests/golden/summary_*.txt.
#include <sstream>

#include "linux/cgroup_plan.h"
#include "linux/compile.h"
#include "policy/summary.h"

namespace cage::lx {

namespace {

using policy::Listing;

void mounts_summary(std::ostream& o, const Plan& plan) {
  Listing l;
  std::string priv, system;
  size_t etc = 0, proc_masked = 0, proc_ro = 0, pins = 0;
  bool dev = false, proc = false;
  uint64_t shm = 0;
  for (const auto& m : plan.mounts) {
    const bool etc_entry = policy::is_beneath(m.target, "/etc") && m.target != "/etc";
    if (m.granted) {
      switch (m.kind) {
        case MountKind::bind_rw: l.add(Listing::rw, m.target, m.why); break;
        case MountKind::bind_ro: l.add(Listing::ro, m.target, m.why); break;
        case MountKind::hide: l.add(Listing::hidden, m.target, m.why); break;
        case MountKind::tmpfs: l.add(Listing::tmpfs, m.target + " (" + format_size(m.size_bytes) + ")", m.why); break;
        case MountKind::symlink: l.add(Listing::ro, m.target + " -> " + m.source, m.why); break;
        case MountKind::proc:
        case MountKind::dev:
        case MountKind::file:
        case MountKind::over_file:
        case MountKind::proc_ro:
        case MountKind::dir: break;
      }
      continue;
    }
    if (m.kind == MountKind::tmpfs && m.target != "/etc") {
      priv += (priv.empty() ? "" : ", ") + m.target + (m.role == MountRole::private_home ? " ($HOME)" : "");
      if (m.size_bytes) priv += " " + format_size(m.size_bytes);
    } else if (etc_entry) {
      ++etc;
    } else if (m.kind == MountKind::hide && policy::is_beneath(m.target, "/proc")) {
      ++proc_masked;
    } else if (m.kind == MountKind::proc_ro) {
      ++proc_ro;
    } else if (m.kind == MountKind::proc) {
      proc = true;
    } else if (m.kind == MountKind::dev) {
      dev = true;
      shm = m.size_bytes;
    } else if (m.role == MountRole::pin) {
      ++pins;
    } else if (m.role == MountRole::cage_binary) {
      l.add(Listing::ro, m.target, m.why);
    } else if (m.kind == MountKind::bind_ro || m.kind == MountKind::symlink) {
      system += (system.empty() ? "" : " ") + m.target;
    }
  }
  o << l.text();
  if (!priv.empty()) o << "private, empty: " << priv << "\n";
  if (!system.empty() || etc) {
    o << "system view (read-only): " << system;
    if (etc) o << (system.empty() ? "" : ", ") << "/etc (" << etc << " curated entries, no secrets)";
    o << "\n";
  }
  if (proc || dev) {
    o << "kernel views:";
    if (proc)
      o << " private /proc (" << proc_masked << " host entries masked, " << proc_ro << " read-only)" << (dev ? "," : "");
    if (dev) o << " minimal /dev" << (shm ? " (/dev/shm " + format_size(shm) + ")" : "");
    o << "\n";
  }
  if (pins) o << "pinned: " << pins << " directories between --rw grants and mounts beneath them\n";
  o << "not shown: everything else on the host";
  if (plan.mechanism == Mechanism::namespaces) o << " (--verbose lists each mount)";
  o << "\n";
}

void landlock_summary(std::ostream& o, const Plan& plan) {
  Listing l;
  size_t system = 0;
  for (const auto& r : plan.landlock.rules) {
    if (r.access == Access::exec) continue;  // listed as "may exec"
    if (r.granted && r.access == Access::write) l.add(Listing::rw, r.path, r.why);
    else if (r.granted) l.add(Listing::ro, r.path, r.why);
    else if (is_private_dir_rule(r)) l.add(Listing::rw, "<private HOME and TMPDIR>", r.why);
    else ++system;
  }
  o << l.text();
  o << "system view: " << system << " Landlock rules (--verbose lists them)\n"
    << "not shown: everything else on the host (Landlock denies it)\n";
}

void limits_summary(std::ostream& o, const Plan& plan) {
  o << "limits:      " << policy::summary_limits(plan.limits);
  switch (plan.cgroup.via) {
    case CgroupVia::direct: o << " (cgroup v" << plan.cgroup.version << ")"; break;
    case CgroupVia::user_scope: o << " (a systemd user scope, cgroup v2)"; break;
    case CgroupVia::none: break;
  }
  o << "\n";
  render_unenforced_text(o, plan.cgroup);
}

}  // namespace

std::string render_summary(const Plan& plan) {
  std::ostringstream o;
  o << platform_line(plan) << "\n";
  for (const auto& d : plan.degraded) o << "degraded: " << d << "  # accepted with --allow-degraded\n";
  o << "command:     " << quoted_argv(plan.argv) << "  (" << plan.exec_path << ", in " << plan.cwd << ")\n";
  if (!plan.argv_pattern.empty()) o << "pinned:      " << plan.argv_pattern << "\n";
  for (const auto& e : plan.exec_summary) o << "may exec:    " << e << "\n";
  if (!plan.cwd_note.empty()) o << "note:     " << plan.cwd_note << "\n";
  for (const auto& n : plan.notes) o << "note:     " << n << "\n";
  render_identity_text(o, plan, "         ");
  if (plan.mechanism == Mechanism::namespaces) mounts_summary(o, plan);
  else landlock_summary(o, plan);
  render_network_text(o, plan, false);
  o << policy::summary_environment(shown_environment(plan));
  limits_summary(o, plan);
  if (plan.seccomp.profile == policy::SeccompProfile::none)
    o << "WARNING: --seccomp none: only the floor (terminal, set-id bits, sockets outside the netns, leases)\n";
  o << "layers in force:\n";
  for (const auto& l : layers_in_force(plan)) o << "  " << l << "\n";
  o << "(a summary: --verbose prints the whole plan, every mount, rule and variable)\n";
  return o.str();
}

}  // namespace cage::lx
