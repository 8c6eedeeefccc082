// lx::compile: decides the whole Linux run from a validated Policy and what HostView says about the
// host. Grants resolve through symlinks to the real path and appear there inside; the default view
// holds what real tools need and no secrets; Landlock mirrors the mount view. Tested by
// tests/unit/linux_compile_test.cc (golden and invariant tests with a FakeHostView).
#include "linux/compile.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <sstream>
#include <utility>

#include "linux/cgroup_plan.h"
#include "linux/devices.h"
#include "linux/etc_view.h"
#include "linux/generated_file.h"
#include "linux/learn.h"
#include "linux/transparent_plan.h"
#include "policy/policy.h"
#include "proxy/budget.h"
#include "proxy/env.h"
#include "proxy/synthetic.h"

namespace cage::lx {

// The start directory is shown read-only unless that would show far more than a project: the root,
// $HOME and its ancestors (~/.ssh and friends), and the shared directories where other programs
// keep their sockets (/tmp/.X11-unix, tmux, ssh-agent, /run/user/N/bus...): a read-only view does
// not stop connect() to a socket, and those would reach outside the sandbox.
// System directories are not projects either: from /etc (or below it) the host's /etc would be shown
// instead of the curated one (a root caller read /etc/shadow; /etc/ssh holds the host's keys), from
// /var or /var/lib every service's state, from /home every user's home (found by review: `cd /etc;
// cage -- cat /etc/shadow` as root). A directory below those (/var/lib/jenkins/workspace/app, a
// project in root's home) is a project.
bool cwd_too_wide(const std::string& cwd, const std::string& home) {
  if (cwd == "/" || (!home.empty() && policy::is_beneath(home, cwd))) return true;
  for (const char* shared : {"/tmp", "/var/tmp", "/dev/shm", "/run", "/var/run", "/run/user"})
    if (cwd == shared) return true;
  for (const char* tree : {"/etc", "/boot"})
    if (policy::is_beneath(cwd, tree)) return true;
  for (const char* sys : {"/var", "/var/log", "/var/lib", "/var/spool", "/var/mail", "/var/cache", "/home", "/srv",
                          "/mnt", "/media", "/root"})
    if (cwd == sys) return true;
  return cwd.rfind("/run/user/", 0) == 0 && cwd.find('/', 10) == std::string::npos;  // /run/user/N
}

Error nothing_to_hide(const policy::Grant& g, int err) {
  return Error{ErrorClass::invalid_policy, "there is nothing to hide at this path",
               "check the spelling; in a profile, { path = \"...\", optional = true } skips a path that may "
               "be absent",
               g.origin, err};
}

std::string cwd_not_granted_note(const std::string& cwd, const std::string& home) {
  const bool shared = cwd == "/tmp" || cwd == "/var/tmp" || cwd == "/dev/shm" || policy::is_beneath(cwd, "/run") ||
                      cwd == "/var/run";
  const char* why = cwd == "/"                                     ? "it is the root"
                    : cwd == home                                   ? "it is $HOME"
                    : !home.empty() && policy::is_beneath(home, cwd) ? "it holds $HOME"
                    : shared                                        ? "every program shares it"
                                                                    : "it is a system directory";
  return "the working directory " + cwd + " is not granted (" + why +
         "): its host content is not shown; grant what it needs, e.g. --ro " +
         (cwd == "/" ? "/PATH" : cwd + "/PATH") + ", or run from a project directory";
}

// From a repository's subdirectory only that subdirectory is shown, and git (which looks for .git
// upwards) says "not a git repository": say so, with the grant that shows the repository. The walk
// stops below $HOME and /, whose grant would show far more than a project.
std::string repository_note(const HostView& host, const std::string& cwd, const std::string& home,
                            const std::function<bool(const std::string&)>& shown) {
  if (host.stat(cwd + "/.git").kind != FileKind::missing) return "";
  for (std::string d = policy::parent_of(cwd); d != "/" && !cwd_too_wide(d, home); d = policy::parent_of(d)) {
    if (host.stat(d + "/.git").kind == FileKind::missing) continue;
    if (shown(d)) return "";
    return "the working directory is inside the git repository " + d + ", of which only " + cwd +
           " is shown, so git will not find it: add --ro " + d + " (or --rw " + d + " to commit)";
  }
  return "";
}

// What `path` names when only the links of $HOME and of the start directory themselves are followed
// (a home under /usr/home, a project reached as $PWD through a link): what the caller means by it.
static std::string meant_path(const policy::Policy& p, const HostView& host, const std::string& path) {
  std::string clean = policy::resolve_dot_dot(path);
  for (const std::string& base : {p.cwd, p.home}) {
    if (base.empty() || !policy::is_beneath(clean, base)) continue;
    if (auto r = host.realpath(base)) return *r + clean.substr(base.size());
  }
  return clean;
}

// A grant named inside the project (the start directory) that reaches its target through a symbolic
// link on the way (build -> ~, docs -> ~/.ssh: planted by the project cage confines, or by an earlier
// run's --rw) is judged by that target too: otherwise `--rw ./build` in a hostile checkout granted
// all of $HOME (found by review: the refusal of a relative --rw of $HOME, validate.cc, judged only
// the name). Refused when the link leads to the root, $HOME or an ancestor of it, a system
// directory, a credential store (learn::is_secret), or anywhere in $HOME outside the project (when
// the start directory is a project, not too wide to show): the caller grants the real path by name
// if that is meant, which stays an explicit choice. A link the caller keeps outside the project (a
// dotfile manager's ~/.config/nvim -> ~/dotfiles/nvim) and a link to anywhere else are followed, as by
// bwrap and mount(8); --dry-run shows the real path beside the grant.
Status refuse_link_escape(const policy::Policy& p, const HostView& host, const policy::Grant& g,
                          const std::string& real) {
  const std::string meant = meant_path(p, host, g.path);
  if (real == meant) return Ok{};
  auto cwd = host.realpath(p.cwd);
  if (!cwd || !policy::is_beneath(meant, *cwd)) return Ok{};
  const std::string home = p.home.empty() ? "" : host.realpath(p.home).value_or(p.home);
  std::string what = policy::wide_directory(real, home);
  if (what.empty() && learn::is_secret(real, home)) what = "a credential store";
  if (what.empty() && !home.empty() && policy::is_beneath(real, home) && !cwd_too_wide(*cwd, home) &&
      !policy::is_beneath(real, *cwd))
    what = "a place in $HOME outside the project " + *cwd;
  if (what.empty()) return Ok{};
  const std::string where = what.find(real) != std::string::npos ? what : real + ", " + what;
  return invalid(g.origin, "resolves through a symbolic link to " + where + ": refused",
                 "remove or fix the link; if you mean that directory, grant it by its real path, " + real);
}

// A path that resolves through a link inside a --rw grant names whatever the workload (or any other
// writer there) last pointed that link at: refused, the real path must be granted. Both mechanisms.
Status refuse_link_inside_rw(const policy::Policy& p, const HostView& host, const policy::Grant& g, const std::string& real) {
  if (real == policy::resolve_dot_dot(g.path)) return Ok{};
  for (const auto& w : p.rw) {
    auto wreal = host.realpath(w.path);
    bool inside = policy::is_beneath(g.path, w.path) || (wreal && policy::is_beneath(g.path, *wreal));
    if (inside && w.path != g.path)
      return invalid(g.origin, "resolves through a symbolic link inside " + w.origin + " (to " + real + ")",
                     "grant the real path, " + real + ", if that is what you mean");
  }
  return Ok{};
}

namespace {

using policy::Grant;
using policy::is_beneath;
using policy::Policy;

size_t depth_of(const std::string& path) {
  if (path == "/") return 0;
  return static_cast<size_t>(std::count(path.begin(), path.end(), '/'));
}

// /proc entries that expose or change the host kernel: made read-only, or masked entirely.
const char* const kProcReadOnly[] = {"sys", "sysrq-trigger", "irq", "bus", "fs", nullptr};
// (kcore, kmsg and kallsyms are left alone: the kernel guards them with capabilities of the initial
// user namespace, which nothing in the sandbox can hold; each mask costs start-up time. kpage*,
// slabinfo, vmallocinfo and pagetypeinfo are guarded only by their mode, 0400 root: a root caller's
// uid 0 would read physical page flags and the kernel's heap layout; they are masked for root only,
// see proc_and_dev.)
const char* const kProcMasked[] = {"keys", "key-users", "timer_list", "sched_debug", "latency_stats", "acpi",
                                   "scsi", "asound", "kpageflags", "kpagecount", "kpagecgroup", "slabinfo",
                                   "vmallocinfo", "pagetypeinfo", nullptr};

}  // namespace

// 1/8 of the host's RAM for each private tmpfs, in whole MiB: a default run has five writable ones, so
// together they hold at most 5/8 of RAM (the kernel's default is 1/2 for each), and a /tmp or $HOME
// still takes a large build or package install (3 GiB on a 24 GiB host). Tmpfs pages are also charged
// to the --memory cgroup. Without /proc/meminfo: 1 GiB.
uint64_t default_tmpfs_bytes(const HostView& host) {
  constexpr uint64_t kMiB = 1ULL << 20;
  auto info = host.read_file("/proc/meminfo");
  auto at = info ? info->find("MemTotal:") : std::string::npos;
  uint64_t kib = at == std::string::npos ? 0 : std::strtoull(info->c_str() + at + 9, nullptr, 10);
  if (kib == 0) return 1024 * kMiB;
  return std::max<uint64_t>(kib * 1024 / 8 / kMiB, 16) * kMiB;
}

namespace {

struct Compiler {
  const Policy& p;
  const HostView& host;
  Plan plan;
  std::vector<MountStep> sys;   // the default view
  std::vector<MountStep> user;  // grants, tmpfs, hides, home, cwd
  std::string user_name = "user", group_name = "user", shell = "/bin/sh";

  Status resolve(const Grant& g, MountKind kind);
  Status default_view();
  void etc_view();
  void passwd_files();
  void proc_and_dev();
  Status home_and_cwd();
  Status merge();
  Status check_mount_points();
  void pin_nested_mounts();
  void landlock_rules();
  Status environment(const std::vector<std::pair<std::string, std::string>>& caller_env);
  void ca_bundle_variables(const std::vector<std::pair<std::string, std::string>>& caller_env,
                           std::vector<std::pair<std::string, std::string>>& forced) const;
  bool visible_inside(const std::string& path) const;
  Status resolve_command();
  const MountStep* covering(const std::string& path) const;
};

Status Compiler::resolve(const Grant& g, MountKind kind) {
  // One look at the path (realpath), then questions about the real path only: the child opens it
  // again refusing every symlink and checks its kind, so a later swap fails closed.
  auto real = host.realpath(g.path);
  FileInfo fi = real ? host.stat(*real) : host.stat(g.path);
  if (!real || fi.kind == FileKind::missing) {
    if (kind == MountKind::hide) return nothing_to_hide(g, fi.err);
    if (kind == MountKind::tmpfs && fi.kind == FileKind::missing) {
      user.push_back(MountStep{kind, "", g.path, "", true, false, g.origin, true, g.size_bytes});
      return Ok{};
    }
    // A path that exists but that the caller cannot reach (a file in another user's 0700 home) is
    // not said to be missing: the caller would look for a typo.
    if (fi.err == EACCES)
      return Error{ErrorClass::invalid_policy, "cannot be reached: a directory on the way is not searchable by you",
                   "grant a path you can open", g.origin, fi.err};
    return Error{ErrorClass::invalid_policy, "no such file or directory",
                 kind == MountKind::bind_rw ? "create it first, or use --tmpfs for a scratch directory"
                                            : "check the path",
                 g.origin, fi.err};
  }
  if (fi.kind == FileKind::device)
    return invalid(g.origin, "device nodes cannot be granted (the sandbox is mounted nodev)",
                   "the default /dev has null, zero, full, random, urandom, tty and ptys");
  for (const char* fixed : {"/proc", "/dev"})
    if (is_beneath(*real, fixed) && kind != MountKind::hide)
      return invalid(g.origin, std::string(fixed) + " is provided by cage and cannot be granted",
                     "drop this option");
  if (kind == MountKind::tmpfs && fi.kind != FileKind::dir)
    return invalid(g.origin, "--tmpfs needs a directory (or a path that does not exist yet)");
  if (auto s = refuse_link_inside_rw(p, host, g, *real); !s) return s;
  if (kind == MountKind::bind_ro || kind == MountKind::bind_rw)
    if (auto s = refuse_link_escape(p, host, g, *real); !s) return s;
  MountStep s{kind, *real, *real, "", fi.kind == FileKind::dir, false, g.origin, true, g.size_bytes};
  if (kind == MountKind::tmpfs) s.source.clear();
  user.push_back(s);
  // A granted link also appears where it was named, pointing at what is bound (a convenience only:
  // what is mounted was decided above from the real path).
  if (*real != g.path && kind != MountKind::hide && host.lstat(g.path).kind == FileKind::symlink)
    user.push_back(MountStep{MountKind::symlink, *real, g.path, "", false, false, g.origin + " (symlink)", true});
  return Ok{};
}

void Compiler::etc_view() {
  sys.push_back(MountStep{MountKind::tmpfs, "", "/etc", "", true, true, "default view: curated /etc"});
  for (auto& s : curated_etc(host)) sys.push_back(std::move(s));
  passwd_files();
}

// passwd and group list only root, the caller and nobody: names for `ls -l` and `id`, no other
// accounts. Parsed by hand: static glibc must not call getpwuid (NSS modules would be dlopen'ed).
void Compiler::passwd_files() {
  const uint32_t uid = plan.ids.inner_uid, gid = plan.ids.inner_gid;
  auto field = [](const std::string& line, int n) {
    std::stringstream ss(line);
    std::string f;
    for (int i = 0; i <= n && std::getline(ss, f, ':'); ++i) {
    }
    return f;
  };
  // The caller's entry gives the shell, and the name unless --uid chose another id.
  if (auto pw = host.read_file("/etc/passwd")) {
    std::stringstream ss(*pw);
    for (std::string line; std::getline(ss, line);)
      if (field(line, 2) == std::to_string(plan.ids.outer_uid)) {
        if (uid == plan.ids.outer_uid) user_name = field(line, 0);
        if (auto sh = field(line, 6); !sh.empty()) shell = sh;
        break;
      }
  }
  if (auto gr = host.read_file("/etc/group")) {
    std::stringstream ss(*gr);
    for (std::string line; std::getline(ss, line);)
      if (field(line, 2) == std::to_string(gid)) {
        if (gid == plan.ids.outer_gid) group_name = field(line, 0);
        break;
      }
  }
  constexpr uint32_t kNobody = 65534;
  if (uid == 0) user_name = "root";
  if (gid == 0) group_name = "root";
  if (uid == kNobody) user_name = "nobody";
  if (gid == kNobody) group_name = "nogroup";
  std::string home = p.home.empty() ? "/" : p.home;
  std::string passwd = "root:x:0:0:root:/root:/bin/sh\n";
  if (uid != 0 && uid != kNobody)
    passwd += user_name + ":x:" + std::to_string(uid) + ":" + std::to_string(gid) + "::" + home + ":" + shell + "\n";
  // --uid nobody: the workload's own entry is nobody's, with the home and shell it runs with.
  passwd += uid == kNobody ? "nobody:x:65534:" + std::to_string(gid) + ":nobody:" + home + ":" + shell + "\n"
                           : "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
  std::string group = "root:x:0:\n";
  if (gid != 0 && gid != kNobody) group += group_name + ":x:" + std::to_string(gid) + ":\n";
  group += "nogroup:x:65534:\n";
  sys.push_back(MountStep{MountKind::file, "", "/etc/passwd", passwd, false, false, "default view: passwd (root, you, nobody)"});
  sys.push_back(MountStep{MountKind::file, "", "/etc/group", group, false, false, "default view: group (root, yours, nogroup)"});
  sys.push_back(MountStep{MountKind::file, "", "/etc/hostname", p.hostname + "\n", false, false, "default view: hostname"});
}

void Compiler::proc_and_dev() {
  sys.push_back(MountStep{MountKind::proc, "proc", "/proc", "", true, false, "private /proc for the new pid namespace"});
  for (const char* const* e = kProcReadOnly; *e; ++e) {
    std::string path = std::string("/proc/") + *e;
    FileInfo fi = host.lstat(path);
    if (fi.kind != FileKind::missing)
      sys.push_back(MountStep{MountKind::proc_ro, path, path, "", fi.kind == FileKind::dir, false,
                              "read-only: host kernel settings"});
  }
  for (const char* const* e = kProcMasked; *e; ++e) {
    std::string path = std::string("/proc/") + *e;
    FileInfo fi = host.lstat(path);
    if (fi.kind != FileKind::dir && fi.kind != FileKind::file) continue;
    // A file only its owner may read (kpage*, slabinfo, timer_list: 0400 root) needs no mask when the
    // caller is not that owner: the sandbox's user namespace maps the caller's uid alone, so no process
    // inside is the owner, and no capability there applies to an inode whose owner is unmapped. Each
    // mask is a mount made and torn down on every run.
    if (fi.kind == FileKind::file && !(fi.mode & 0044) && fi.uid != plan.ids.outer_uid) continue;
    sys.push_back(MountStep{MountKind::hide, "", path, "", fi.kind == FileKind::dir, false, "masked: host kernel state"});
  }
  sys.push_back(MountStep{MountKind::dev, "", "/dev", "", true, false, "minimal /dev"});
}

Status Compiler::default_view() {
  if (!p.system_view) {
    proc_and_dev();
    return Ok{};
  }
  if (host.lstat("/usr").kind == FileKind::dir)
    sys.push_back(MountStep{MountKind::bind_ro, "/usr", "/usr", "", true, false, "default view: /usr"});
  for (const char* d : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
    FileInfo fi = host.lstat(d);
    std::string why = std::string("default view: ") + d;
    if (fi.kind == FileKind::symlink) {
      if (auto t = host.readlink(d)) sys.push_back(MountStep{MountKind::symlink, *t, d, "", false, false, why});
    } else if (fi.kind == FileKind::dir) {
      sys.push_back(MountStep{MountKind::bind_ro, d, d, "", true, false, why});
    }
  }
  etc_view();
  proc_and_dev();
  sys.push_back(MountStep{MountKind::tmpfs, "", "/tmp", "", true, false, "private /tmp"});
  sys.back().mode = 01777;
  sys.push_back(MountStep{MountKind::tmpfs, "", "/var/tmp", "", true, false, "private /var/tmp"});
  sys.back().mode = 01777;
  sys.push_back(MountStep{MountKind::tmpfs, "", "/run", "", true, false, "private /run"});
  return Ok{};
}

const MountStep* Compiler::covering(const std::string& path) const { return covering_mount(plan.mounts, path); }

Status Compiler::home_and_cwd() {
  auto granted = [this](const std::string& path) {
    return std::any_of(user.begin(), user.end(), [&](const MountStep& s) {
      return (s.kind == MountKind::bind_ro || s.kind == MountKind::bind_rw || s.kind == MountKind::tmpfs) &&
             is_beneath(path, s.target);
    });
  };
  std::string home = p.home;
  if (!home.empty()) {
    if (auto r = host.realpath(home)) home = *r;
  }
  auto cwd = host.realpath(p.cwd);
  if (!cwd || host.stat(*cwd).kind != FileKind::dir)
    return invalid("--chdir " + p.cwd, "the start directory does not exist", "create it or pick another");
  plan.cwd = *cwd;
  // The current directory is shown read-only, except where that would show far more than a project:
  // the root, or $HOME itself and its ancestors (which hold ~/.ssh and friends).
  bool too_wide = cwd_too_wide(*cwd, home);
  bool show_cwd = p.cwd_visible && !too_wide && !granted(*cwd);
  if (p.system_view && !home.empty() && home != "/" && !granted(home)) {
    user.push_back(MountStep{MountKind::tmpfs, "", home, "", true, false, "private empty $HOME"});
    user.back().mode = 0700;
    user.back().role = MountRole::private_home;
  }
  if (show_cwd)
    user.push_back(MountStep{MountKind::bind_ro, *cwd, *cwd, "", true, false, "current directory (read-only)", true});
  auto bound = [this](const std::string& path) {  // shown from the host (a tmpfs, such as the private $HOME, is empty)
    return std::any_of(user.begin(), user.end(), [&](const MountStep& s) {
      return (s.kind == MountKind::bind_ro || s.kind == MountKind::bind_rw) && is_beneath(path, s.target);
    });
  };
  if (p.cwd_visible && too_wide && !bound(*cwd)) plan.cwd_note = cwd_not_granted_note(*cwd, home);
  if (show_cwd) plan.cwd_note = repository_note(host, *cwd, home, bound);
  return Ok{};
}

Status Compiler::merge() {
  // validate refuses one name given two ways; a link and its target are two names of one path
  // (--rw ./build --ro /scratch/build with build -> /scratch/build), and only here, with real paths,
  // do they meet: one of the two mounts would silently win.
  auto grant_kind = [](MountKind k) {
    return k == MountKind::bind_ro || k == MountKind::bind_rw || k == MountKind::tmpfs || k == MountKind::hide;
  };
  for (size_t i = 0; i < user.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (grant_kind(user[i].kind) && grant_kind(user[j].kind) && user[i].kind != user[j].kind &&
          !user[i].target.empty() && user[i].target == user[j].target)
        return invalid(user[i].why, "names the same path as " + user[j].why + " (" + user[i].target + ")",
                       "give each path one of --ro, --rw, --tmpfs or --hide");
  for (const auto& u : user)
    // A symlinked grant's link (--ro /bin, --ro /etc/localtime) replaces the default view's link at the
    // same path: both made, the second failed with EEXIST and the run with 125.
    if (u.kind == MountKind::symlink)
      sys.erase(std::remove_if(sys.begin(), sys.end(),
                               [&](const MountStep& s) { return s.kind == MountKind::symlink && s.target == u.target; }),
                sys.end());
    else if (u.kind == MountKind::bind_ro || u.kind == MountKind::bind_rw || u.kind == MountKind::tmpfs) {
      if (u.target == "/") {
        sys.erase(std::remove_if(sys.begin(), sys.end(),
                                 [](const MountStep& s) { return s.kind != MountKind::proc && s.kind != MountKind::proc_ro &&
                                                                 s.kind != MountKind::dev && !(s.kind == MountKind::hide && is_beneath(s.target, "/proc")); }),
                  sys.end());
        continue;
      }
      // A grant replaces the default view at and beneath its path (--rw /tmp/x keeps the rest of /tmp).
      sys.erase(std::remove_if(sys.begin(), sys.end(), [&](const MountStep& s) { return is_beneath(s.target, u.target); }),
                sys.end());
    }
  plan.mounts = std::move(sys);
  plan.mounts.insert(plan.mounts.end(), user.begin(), user.end());
  std::stable_sort(plan.mounts.begin(), plan.mounts.end(),
                   [](const MountStep& a, const MountStep& b) { return depth_of(a.target) < depth_of(b.target); });
  return check_mount_points();
}

// A mount point that does not exist yet may be created only inside cage's own tmpfs; creating it in
// a bind mount would change the host. Grants beneath a masked path are refused for the same reason.
// A granted link that lies in a bind already (--rw build, where ./build links to a scratch disk and
// the current directory is shown read-only) needs no link made: the host's own link is shown, and it
// leads to the grant when its text names the real path without another link on the way (checked
// lexically, so the same text resolves the same way inside, where the path up to it is the same).
Status Compiler::check_mount_points() {
  std::vector<MountStep> done;  // the mounts so far (links, files and directories cover nothing)
  std::vector<size_t> shown;    // link steps the bind covering them shows already
  auto leads_to = [&](const MountStep& link) {
    auto text = host.readlink(link.target);
    if (!text || text->empty()) return false;
    std::string abs = (*text)[0] == '/' ? *text : policy::parent_of(link.target) + "/" + *text;
    return policy::resolve_dot_dot(abs) == link.source && host.realpath(link.target) == link.source;
  };
  for (size_t i = 0; i < plan.mounts.size(); ++i) {
    const MountStep& s = plan.mounts[i];
    const MountStep* cover = nullptr;
    for (const auto& d : done)
      if (d.kind != MountKind::symlink && d.kind != MountKind::file && d.kind != MountKind::dir &&
          is_beneath(s.target, d.target) && s.target != d.target)
        if (!cover || depth_of(d.target) >= depth_of(cover->target)) cover = &d;
    if (cover && cover->kind == MountKind::hide)
      return invalid(s.why, "lies beneath a hidden path (" + cover->target + ")", "drop one of the two options");
    bool host_side = cover && (cover->kind == MountKind::bind_ro || cover->kind == MountKind::bind_rw);
    if (host_side) {
      FileInfo fi = host.lstat(s.target);
      bool want_dir = s.kind == MountKind::tmpfs || s.is_dir;
      if (fi.kind == FileKind::missing)
        return invalid(s.why, "would have to create " + s.target + " on the host (beneath " + cover->target + ")",
                       "create it first, or grant a path that exists");
      if (s.kind == MountKind::symlink && s.granted && fi.kind == FileKind::symlink && leads_to(s)) {
        shown.push_back(i);
        continue;
      }
      if (s.kind == MountKind::symlink || s.kind == MountKind::file || s.kind == MountKind::dir)
        return invalid(s.why, "would change " + s.target + " on the host", "grant the real path instead");
      if ((fi.kind == FileKind::dir) != want_dir)
        return invalid(s.why, s.target + " changed kind on the host", "run again");
    }
    if (s.kind != MountKind::symlink && s.kind != MountKind::file && s.kind != MountKind::dir) done.push_back(s);
  }
  for (auto it = shown.rbegin(); it != shown.rend(); ++it) plan.mounts.erase(plan.mounts.begin() + static_cast<long>(*it));
  return Ok{};
}

// A --ro, --hide or --tmpfs beneath a --rw grant is a mount on a dentry of the writable tree, and a
// dentry moves with its directory: `mv .git .git-old; mkdir -p .git/hooks` would set a --ro
// .git/hooks aside and let the workload plant a pre-commit hook on the host at the old path. The
// kernel refuses to rename or remove a dentry that is a mount point in the caller's mount namespace
// (EBUSY: vfs_rename, vfs_rmdir and vfs_unlink check is_local_mountpoint), so every directory between
// the --rw grant and the nested mount is bound onto itself, read-write like the grant, before the
// nested mount is made: the whole path is then fixed from inside (the host can still rename). The
// nested mount itself and the --rw grant are mount points already. tests/escape/nested_rename.sh.
// Landlock cannot stand in for this, here or beneath the private tmpfs roots: a right granted on a
// directory reaches everything beneath it, across mounts, and a file created during the run can only
// be written through a rule on one of its directories, so no set of rules (in any number of layers)
// lets the workload write new files in /tmp or --rw yet not in a --ro beneath. There the read-only
// mount is the boundary; pins keep it in place and private propagation keeps others from covering it.
void Compiler::pin_nested_mounts() {
  auto mounts_something = [](const MountStep& s) {
    return s.kind != MountKind::symlink && s.kind != MountKind::file && s.kind != MountKind::dir;
  };
  std::vector<MountStep> pins;
  for (const auto& s : plan.mounts) {
    if (s.kind != MountKind::bind_ro && s.kind != MountKind::hide && s.kind != MountKind::tmpfs) continue;
    const MountStep* cover = nullptr;  // the deepest mount strictly above s
    for (const auto& c : plan.mounts)
      if (mounts_something(c) && c.target != s.target && is_beneath(s.target, c.target) &&
          (!cover || depth_of(c.target) >= depth_of(cover->target)))
        cover = &c;
    if (!cover || cover->kind != MountKind::bind_rw) continue;
    for (std::string d = s.target.substr(0, s.target.rfind('/')); d.size() > cover->target.size();
         d = d.substr(0, d.rfind('/'))) {
      if (std::any_of(pins.begin(), pins.end(), [&](const MountStep& q) { return q.target == d; })) continue;
      pins.push_back(MountStep{MountKind::bind_rw, d, d, "", true, false,
                               "pinned: path to " + s.why + " inside " + cover->why + " (cannot be renamed)"});
      pins.back().role = MountRole::pin;
    }
  }
  if (pins.empty()) return;
  plan.mounts.insert(plan.mounts.end(), pins.begin(), pins.end());
  std::stable_sort(plan.mounts.begin(), plan.mounts.end(),
                   [](const MountStep& a, const MountStep& b) { return depth_of(a.target) < depth_of(b.target); });
}

void Compiler::landlock_rules() {
  auto& r = plan.landlock.rules;
  r.push_back(LandlockRule{"/", Access::list, true, "the root directory"});
  for (const auto& s : plan.mounts) {
    switch (s.kind) {
      case MountKind::bind_ro: r.push_back(LandlockRule{s.target, Access::read_exec, s.is_dir, s.why, s.granted}); break;
      case MountKind::bind_rw: r.push_back(LandlockRule{s.target, Access::write, s.is_dir, s.why, s.granted}); break;
      case MountKind::tmpfs:
        r.push_back(LandlockRule{s.target, s.read_only ? Access::read : Access::write, true, s.why, s.granted});
        break;
      case MountKind::proc: r.push_back(LandlockRule{s.target, Access::read, true, s.why}); break;
      case MountKind::dev:
        r.push_back(LandlockRule{"/dev", Access::read, true, "minimal /dev"});
        for (const char* d : kDevices) r.push_back(LandlockRule{dev_path(d), Access::dev_rw, false, "minimal /dev"});
        r.push_back(LandlockRule{"/dev/pts", Access::dev_rw, true, "terminals"});
        r.push_back(LandlockRule{"/dev/console", Access::dev_rw, false, "the caller's terminal, when there is one"});
        r.push_back(LandlockRule{"/dev/shm", Access::write, true, "shared memory"});
        break;
      case MountKind::hide:
      case MountKind::symlink:
      case MountKind::file:
      case MountKind::proc_ro:
      case MountKind::over_file:  // read through the rule of the grant it lies in
      case MountKind::dir: break;
    }
  }
  plan.landlock.host_abi = host.landlock_abi();
  plan.landlock.abi = namespaces_landlock_abi(plan.landlock.host_abi);
}

Status Compiler::environment(const std::vector<std::pair<std::string, std::string>>& caller_env) {
  std::vector<std::pair<std::string, std::string>> forced = {
      {"HOME", p.home.empty() ? "/" : p.home}, {"USER", user_name}, {"LOGNAME", user_name},
      {"SHELL", shell}, {"PWD", plan.cwd}, {policy::kInsideMarker, "1"}};
  if (plan.mechanism == Mechanism::landlock_only) {
    forced[0].second = "<private>/home";
    forced.emplace_back("TMPDIR", "<private>/tmp");
  }
  if (!p.run_id.empty()) forced.emplace_back(policy::kRunIdVariable, p.run_id);
  if (plan.scratch) forced.emplace_back(policy::kScratchVariable, plan.scratch->inside);
  if (plan.net.mode == NetPlan::Mode::proxy && plan.net.shim_port != 0)
    for (auto& kv : proxy::proxy_environment(plan.net.shim_port, plan.net.allow)) {
      // Every JVM prints "Picked up JAVA_TOOL_OPTIONS" on stderr. Where transparent egress carries
      // every rule (--net-mode both, no IPv6 literal), the JVM's direct connections get through
      // without it, so the banner is kept for --net-mode proxy only.
      if (kv.first == "JAVA_TOOL_OPTIONS" && carries_every_rule(plan.net)) continue;
      forced.push_back(std::move(kv));
    }
  if (plan.loopback_proxy)  // port and secret are known at run time: landlock_only.cc fills them in
    for (auto& kv : proxy::proxy_environment_with_secret(kProxyPortMark, kProxySecretMark, plan.net.allow))
      forced.push_back(std::move(kv));
  if (plan.net.mode == NetPlan::Mode::proxy) ca_bundle_variables(caller_env, forced);
  plan.env = policy::build_environment(p.env, caller_env, forced);
  plan.secrets = p.env.secrets;
  if (std::none_of(plan.env.begin(), plan.env.end(), [](const std::string& e) { return e.rfind("PATH=", 0) == 0; }))
    plan.env.insert(plan.env.begin(), "PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin");
  return Ok{};
}

// The CA bundles a host points its TLS clients at (a corporate root, a test CA) matter only with
// --net, and only when the file is there inside: a variable naming a file the sandbox cannot see
// would turn every TLS handshake into an error about the file.
const char* const kCaBundleVariables[] = {"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE",
                                          "CURL_CA_BUNDLE", "GIT_SSL_CAINFO", nullptr};

bool Compiler::visible_inside(const std::string& path) const {
  if (path.empty() || path[0] != '/') return false;
  auto real = host.realpath(path);
  if (!real || host.stat(*real).kind == FileKind::missing) return false;
  if (plan.mechanism == Mechanism::landlock_only)
    return std::any_of(plan.landlock.rules.begin(), plan.landlock.rules.end(), [&](const LandlockRule& r) {
      return r.access != Access::list && r.access != Access::dev_rw && is_beneath(*real, r.path);
    });
  // The /etc snapshot's copies (a file step at the path) or a bind that covers the real path.
  for (const auto& m : plan.mounts)
    if (m.kind == MountKind::file && (m.target == path || m.target == *real)) return true;
  const MountStep* cov = covering(*real);
  return cov && (cov->kind == MountKind::bind_ro || cov->kind == MountKind::bind_rw);
}

void Compiler::ca_bundle_variables(const std::vector<std::pair<std::string, std::string>>& caller_env,
                                   std::vector<std::pair<std::string, std::string>>& forced) const {
  for (const char* const* v = kCaBundleVariables; *v; ++v)
    for (const auto& [k, value] : caller_env) {
      if (k != *v || value.empty()) continue;
      // SSL_CERT_DIR is a list (OpenSSL splits it at ':'): every element must be there.
      std::stringstream ss(value);
      bool all = true;
      for (std::string part; all && std::getline(ss, part, ':');) all = visible_inside(part);
      if (all) forced.emplace_back(k, value);
    }
}

// argv[0] is found on the sandbox's PATH among what the plan shows; a setuid or setgid program is
// refused outright (no_new_privs and nosuid would defuse it, but it cannot do what it expects). A
// directory or a file without an execute bit is said to be one before whether it is visible: granted,
// it would not run either (execve: EACCES). On a PATH search they are passed over, as execvp does, and
// the first problem in PATH order is the one reported.
Status Compiler::resolve_command() {
  const std::string& cmd = p.argv[0];
  const std::string input = "COMMAND " + cmd;
  std::vector<std::string> candidates;
  if (cmd.find('/') != std::string::npos) {
    candidates.push_back(cmd[0] == '/' ? cmd : policy::lexically_clean(plan.cwd + "/" + cmd));
  } else {
    std::string path;
    for (const auto& e : plan.env)
      if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
    std::stringstream ss(path);
    for (std::string dir; std::getline(ss, dir, ':');)
      if (!dir.empty() && dir[0] == '/') candidates.push_back(dir + "/" + cmd);
  }
  std::optional<Error> first;
  for (const auto& c : candidates) {
    FileInfo fi = host.stat(c);
    if (fi.kind == FileKind::missing) continue;
    auto real = host.realpath(c);
    if (fi.kind == FileKind::dir) {
      if (!first) first = Error{ErrorClass::exec_failed, "is a directory (" + c + "), not a program", "name a program", input, 0};
      continue;
    }
    if (!(fi.mode & 0111)) {
      if (!first) first = Error{ErrorClass::exec_failed, "not executable (" + c + " has no execute permission)",
                    "chmod +x it, or run it with its interpreter (e.g. sh " + cmd + ")", input, EACCES};
      continue;
    }
    if (!real || !shown_from_host(plan, *real, Shown::to_run)) {
      if (!first) first = Error{ErrorClass::not_found, "not visible inside the sandbox (found on the host at " + c + ")",
                    "grant its directory with --ro", input, 0};
      continue;
    }
    if (fi.mode & (S_ISUID | S_ISGID))
      return Error{ErrorClass::capability_denied, "refusing to run a setuid/setgid program (" + *real + ")",
                   "cage never grants privilege; run an unprivileged tool", input, 0};
    plan.exec_path = c;
    // Under Landlock alone the workload walks the host's own mounts: the kernel's look-up of a #!
    // interpreter outside the view would still touch them (on a hung NFS or FUSE mount, an exec held
    // in an uninterruptible wait that no --timeout ends; escape test interp_hung_mount), so there the
    // script's line is checked before the run. Under namespaces the view holds no such path, and the
    // question waits until the exec has failed.
    if (plan.mechanism == Mechanism::landlock_only && fi.kind == FileKind::file)
      if (auto why = interpreter_problem(plan, host)) return *why;
    return Ok{};
  }
  if (first) return *first;
  if (cmd.find('/') != std::string::npos)
    return Error{ErrorClass::not_found, "no such file or directory (" + candidates[0] + ")", "check the path", input, 0};
  return Error{ErrorClass::not_found, "command not found on the sandbox's PATH", "check the name, or grant it with --ro",
               input, 0};
}

}  // namespace

const MountStep* covering_mount(const std::vector<MountStep>& mounts, const std::string& path) {
  const MountStep* best = nullptr;
  for (const auto& s : mounts)
    if (s.kind != MountKind::symlink && s.kind != MountKind::file && s.kind != MountKind::dir &&
        is_beneath(path, s.target) && (!best || depth_of(s.target) >= depth_of(best->target)))
      best = &s;
  return best;
}

// Whether the plan shows PATH from the host, by the plan's words alone (no host lookup). Shown::any:
// anything at its place (beneath a bind, a link the view creates, under Landlock alone a rule).
// Shown::to_run: a program (its real path) that can be run inside: shown by a bind (a tmpfs and the
// files of the /etc snapshot hold none of the host's programs), or under Landlock alone beneath a
// rule that lets it be read and executed.
bool shown_from_host(const Plan& plan, const std::string& path, Shown how) {
  if (plan.mechanism == Mechanism::landlock_only)
    return std::any_of(plan.landlock.rules.begin(), plan.landlock.rules.end(), [&](const LandlockRule& r) {
      const bool runs = r.access == Access::read_exec || r.access == Access::write;
      return (how == Shown::any || runs) && is_beneath(path, r.path);
    });
  if (how == Shown::any && std::any_of(plan.mounts.begin(), plan.mounts.end(), [&](const MountStep& s) {
        return s.kind == MountKind::symlink && is_beneath(path, s.target);
      }))
    return true;
  const MountStep* cov = covering_mount(plan.mounts, path);
  return cov && (cov->kind == MountKind::bind_ro || cov->kind == MountKind::bind_rw);
}

// The kernel runs a script's #! interpreter in its place, and execve fails with ENOENT when that is
// missing: the error would read as if the script itself were not there (bash says "cannot execute:
// required file not found", exit 127). Only the first 256 bytes count (BINPRM_BUF_SIZE). A relative
// interpreter is the kernel's to resolve against the start directory: left to it. Asked only once the
// exec has failed (and by --dry-run), so a run that starts pays nothing for it.
std::optional<Error> interpreter_problem(const Plan& plan, const HostView& host) {
  const std::string& script = plan.exec_path;
  if (script.empty()) return std::nullopt;
  auto head = host.read_head(script, 256);
  if (!head || head->rfind("#!", 0) != 0) return std::nullopt;
  const size_t b = head->find_first_not_of(" \t", 2);
  if (b == std::string::npos) return std::nullopt;
  const size_t e = head->find_first_of(" \t\n", b);
  std::string interp = head->substr(b, e == std::string::npos ? std::string::npos : e - b);
  if (interp.empty() || interp[0] != '/') return std::nullopt;
  const std::string input = "COMMAND " + plan.argv[0];
  // The script names the path, not the user: the host is asked about it only where the plan shows
  // something (a bind or a link on the way), never on a path of the host's own (a hung network or
  // FUSE mount, an automounter's /net/HOST): found by review attack9 (cage hung before the run).
  if (!shown_from_host(plan, interp, Shown::any))
    return Error{ErrorClass::not_found,
                 "the interpreter " + interp + " named on the #! line of " + script +
                     " is not visible inside the sandbox (cage does not look it up on the host)",
                 "grant its directory with --ro, or correct the script's #! line", input, 0};
  if (interp.back() == '\r') {
    interp.pop_back();
    if (host.stat(interp).kind != FileKind::missing)
      return Error{ErrorClass::not_found,
                   "the #! line of " + script + " ends in a carriage return (DOS line endings): the kernel looks for "
                   "an interpreter named '" + interp + "\\r', which does not exist",
                   "convert the script to Unix line endings (dos2unix " + script + ")", input, ENOENT};
  }
  if (host.stat(interp).kind == FileKind::missing)
    return Error{ErrorClass::not_found,
                 "the interpreter " + interp + " named on the #! line of " + script + " does not exist",
                 "install it, or correct the script's #! line", input, ENOENT};
  auto real = host.realpath(interp);
  if (!real || !shown_from_host(plan, *real, Shown::to_run))
    return Error{ErrorClass::not_found,
                 "the interpreter " + interp + " named on the #! line of " + script +
                     " is not visible inside the sandbox",
                 "grant its directory with --ro", input, 0};
  return std::nullopt;
}


// Where the caller's systemd user manager listens (cgroup_plan.cc asks it for a scope); the
// caller's own environment, and the socket's peer is checked to be the caller's (systemd_scope.cc).
static std::string runtime_dir_of(const std::vector<std::pair<std::string, std::string>>& env) {
  for (const auto& [k, v] : env)
    if (k == "XDG_RUNTIME_DIR" && !v.empty() && v[0] == '/') return v;
  return "";
}

// A cage started by a confined program (a shebang wrapper run inside cage): the outer sandbox
// refuses new user namespaces, so the refusal would list every loss of Landlock alone; say where
// the command is instead. Only the wording depends on the marker.
static Error nested_in_cage(Error e, const std::vector<std::pair<std::string, std::string>>& caller_env) {
  const bool inside = std::any_of(caller_env.begin(), caller_env.end(),
                                  [](const auto& kv) { return kv.first == policy::kInsideMarker; });
  if (!inside || e.cls != ErrorClass::spawn_sandbox_unavailable) return e;
  return unavailable("already inside cage",
                     "this command runs inside a cage sandbox, which lets no program create the user "
                     "namespaces of a nested one",
                     "run the command directly (it is already confined), or nest a Landlock-only sandbox "
                     "with --mechanism landlock --allow-degraded=pid");
}

// --scratch: where the directory is on the host (below the real path of the caller's state base,
// so the mount's no-symlink open of the source succeeds) and where the workload finds it.
static Result<ScratchPlan> plan_scratch(const policy::Scratch& s, const HostView& host, bool landlock_only) {
  auto base = host.realpath(s.base);
  if (!base || host.stat(*base).kind != FileKind::dir)
    return invalid(s.origin, s.base + " (where scratch directories live) is not a directory", "set HOME or XDG_STATE_HOME");
  ScratchPlan sp{*base, {}, "", "", s.origin};
  std::stringstream ss(s.below);
  for (std::string part; std::getline(ss, part, '/');) sp.below.push_back(part);
  sp.host_path = (*base == "/" ? "" : *base) + "/" + s.below;
  // Landlock alone cannot move a directory: the workload sees it at its host path.
  sp.inside = landlock_only ? sp.host_path : std::string(policy::kScratchInside) + "/" + s.name;
  return sp;
}

// cage's init under each mechanism (Plan::init). Namespaces: pid 1 of new user, mount, pid, IPC,
// UTS and cgroup namespaces, and of a network namespace unless the host network is shared; it
// builds the root. Landlock-only: a plain fork, a subreaper on the host's namespaces.
static InitPlan plan_init(const Plan& plan) {
  InitPlan i;
  if (plan.mechanism == Mechanism::landlock_only) return i;
  i.namespaces = {"user", "mount", "pid", "ipc", "uts", "cgroup"};
  if (plan.net.mode != NetPlan::Mode::host) {
    i.namespaces.push_back("net");
    i.loopback = true;
  }
  i.build_root = true;
  i.pid1 = true;
  return i;
}

// LandlockPlan::stdio: cage's own descriptors 0-2 that the workload inherits as they are (a stream
// --max-output caps reaches it as a pipe instead).
void plan_stdio(Plan& plan, const HostView& host) {
  for (int fd = 0; fd <= 2; ++fd) {
    if ((fd == 1 && plan.limits.max_stdout) || (fd == 2 && plan.limits.max_stderr)) continue;
    if (auto f = host.stdio_file(fd)) plan.landlock.stdio.push_back(std::move(*f));
  }
}

Result<Plan> compile(const Policy& p, const HostView& host,
                     const std::vector<std::pair<std::string, std::string>>& caller_env) {
  Compiler c{p, host, {}, {}, {}};
  c.plan.ids = IdMaps{host.uid(), host.gid(), host.uid(), host.gid()};
  if (p.run_as) {  // one inside id each, mapped to the caller's: the host still sees only the caller
    c.plan.ids.inner_uid = p.run_as->uid;
    c.plan.ids.inner_gid = p.run_as->gid;
  }
  c.plan.hostname = p.hostname;
  c.plan.run_id = p.run_id;
  c.plan.explain = p.explain;
  c.plan.labels = p.labels;
  c.plan.argv = p.argv;
  c.plan.seccomp.profile = p.seccomp;
  c.plan.limits = p.limits;
  const bool userns = host.user_namespaces_allowed();
  if (p.mechanism == Policy::Mechanism::namespaces && !userns)
    return nested_in_cage(unavailable("--mechanism namespaces", "this host does not let cage create user namespaces",
                                      "see cage --check; or use --mechanism auto to fall back to Landlock alone"),
                          caller_env);
  if (p.mechanism == Policy::Mechanism::landlock_only || (p.mechanism == Policy::Mechanism::automatic && !userns)) {
    if (p.run_as && (p.run_as->uid != host.uid() || p.run_as->gid != host.gid()))
      return unavailable(p.run_as->origin, "another id inside needs a user namespace, which the Landlock-only "
                                           "mechanism does not create",
                         "run where user namespaces are allowed (see cage --check), or drop --uid");
    if (auto s = compile_landlock_view(p, host, c.plan); !s)
      return p.mechanism == Policy::Mechanism::automatic ? nested_in_cage(s.error(), caller_env) : s.error();
    if (p.scratch) {
      auto sp = plan_scratch(*p.scratch, host, true);
      if (!sp) return sp.error();
      c.plan.landlock.rules.push_back(LandlockRule{sp->host_path, Access::write, true, sp->why, true});
      c.plan.scratch = std::move(*sp);
    }
    if (auto s = c.environment(caller_env); !s) return s.error();
    if (auto s = c.resolve_command(); !s) return s.error();
    if (auto s = compile_exec(p, host, c.plan); !s) return s.error();
    if (auto s = compile_cgroups(c.plan, host, runtime_dir_of(caller_env)); !s) return s.error();
    c.plan.init = plan_init(c.plan);
    c.plan.seccomp.landlock_only_supplement = true;
    plan_stdio(c.plan, host);
    return std::move(c.plan);
  }
  if (auto s = check_namespaces_kernel(host); !s) return s.error();
  c.plan.no_nested_userns = host.uid() == 0;  // see Plan::no_nested_userns
  for (const auto& g : p.ro)
    if (auto s = c.resolve(g, MountKind::bind_ro); !s) return s.error();
  for (const auto& g : p.rw)
    if (auto s = c.resolve(g, MountKind::bind_rw); !s) return s.error();
  for (const auto& g : p.tmpfs)
    if (auto s = c.resolve(g, MountKind::tmpfs); !s) return s.error();
  for (const auto& g : p.hide)
    if (auto s = c.resolve(g, MountKind::hide); !s) return s.error();
  if (p.scratch) {
    auto sp = plan_scratch(*p.scratch, host, false);
    if (!sp) return sp.error();
    c.user.push_back(MountStep{MountKind::bind_rw, sp->host_path, sp->inside, "", true, false, sp->why, true});
    c.plan.scratch = std::move(*sp);
  }
  if (auto s = c.default_view(); !s) return s.error();
  if (auto s = c.home_and_cwd(); !s) return s.error();
  if (auto s = c.merge(); !s) return s.error();
  // cage's own binary stays read-only inside even beneath a --rw grant: a workload that rewrote it
  // would run outside the sandbox the next time the caller starts cage.
  if (auto self = host.self_exe()) {
    const MountStep* cov = c.covering(*self);
    if (cov && cov->kind == MountKind::bind_rw) {
      c.plan.mounts.push_back(MountStep{MountKind::bind_ro, *self, *self, "", false, false, "cage's own binary (read-only)"});
      c.plan.mounts.back().role = MountRole::cage_binary;
    }
  }
  c.pin_nested_mounts();
  // Every tmpfs the workload can write has a size: the kernel's default is half of RAM for each, and
  // five of them (/tmp, /var/tmp, /run, $HOME, /dev/shm) could take more memory than the host has.
  const uint64_t tmpfs_bytes = p.limits.tmpfs_bytes.value_or(default_tmpfs_bytes(host));
  for (auto& m : c.plan.mounts)
    if (((m.kind == MountKind::tmpfs && !m.read_only) || m.kind == MountKind::dev) && m.size_bytes == 0)
      m.size_bytes = tmpfs_bytes;
  // The start directory must exist inside even when its content is not shown (--no-cwd), also
  // beneath a fresh tmpfs (a start in /tmp/x or /var/tmp/x).
  const MountStep* cwd_cover = c.covering(c.plan.cwd);
  if ((!cwd_cover || cwd_cover->kind == MountKind::tmpfs) && c.plan.cwd != "/" &&
      !(cwd_cover && cwd_cover->target == c.plan.cwd)) {
    c.plan.mounts.push_back(MountStep{MountKind::dir, "", c.plan.cwd, "", true, false, "start directory (empty)"});
    std::stable_sort(c.plan.mounts.begin(), c.plan.mounts.end(),
                     [](const MountStep& a, const MountStep& b) { return depth_of(a.target) < depth_of(b.target); });
  }
  // Landlock is a second filesystem layer here, of whatever ABI the kernel has, or none: the mount
  // namespace is the boundary (layers.cc says which layer is in force).
  c.landlock_rules();
  plan_stdio(c.plan, host);
  if (p.share_net) {
    c.plan.net.mode = NetPlan::Mode::host;
  } else if (!p.net.empty()) {
    // The empty network namespace and cage's own listeners in it (the shim, the transparent
    // listeners) are the boundary: nothing else in it leads out. Landlock's TCP rules would add
    // nothing but refuse the workload its own loopback (a test suite's server, a local database),
    // so TCP is left unhandled on every ABI, as without --net.
    c.plan.net.mode = NetPlan::Mode::proxy;
    c.plan.net.shim_port = kShimPort;
    c.plan.net.allow = p.net;
    c.plan.net.max_connections = proxy::connection_limit(p.limits.memory_bytes);
    c.plan.net.lo_address = kLoAddress;
    if (p.net_mode == Policy::NetMode::transparent) c.plan.net.shim_port = 0;  // no proxy port, no *_PROXY variables
    if (auto s = compile_transparent(p, host, c.plan); !s) return s.error();
  } else if (std::any_of(c.plan.mounts.begin(), c.plan.mounts.end(),  // an /etc to put it in (not --no-system's bare root)
                         [](const MountStep& m) { return m.target == "/etc" || m.target == "/"; }) &&
             place_generated_file(c.plan, host, "/etc/resolv.conf",
                                  "# cage: no --net; every name is answered NXDOMAIN (see cage(1), NETWORK)\n"
                                  "nameserver " + proxy::ipv4_text(kResolverAddress) + "\noptions timeout:1 attempts:1\n",
                                  "no --net: cage's resolver answers every name NXDOMAIN and notes it").empty()) {
    c.plan.net.offline_resolver = kResolverAddress;
  }
  if (auto s = c.environment(caller_env); !s) return s.error();
  if (auto s = c.resolve_command(); !s) return s.error();
  if (auto s = compile_exec(p, host, c.plan); !s) return s.error();
  if (auto s = compile_cgroups(c.plan, host, runtime_dir_of(caller_env)); !s) return s.error();
  c.plan.init = plan_init(c.plan);
  return std::move(c.plan);
}

}  // namespace cage::lx
