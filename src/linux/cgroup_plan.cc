// Decides how --memory, --pids and --cpu are enforced (pure; compile side of cgroup.cc): which cgroup
// version and parent directory, which files get which values, and which limits fall back to rlimits
// or are not enforced at all. Reads the host only through HostView. Proved by
// tests/unit/cgroup_plan_test.cc and tests/integration/limits_*.sh.
#include "linux/cgroup_plan.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace cage::lx {

namespace {

struct Mount {
  std::string root, point, fstype, options;  // mountinfo fields 4, 5, fstype, super options
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  return out;
}

std::vector<Mount> cgroup_mounts(const HostView& host) {
  std::vector<Mount> out;
  auto text = host.read_file("/proc/self/mountinfo");
  if (!text) return out;
  for (const auto& line : split(*text, '\n')) {
    auto f = split(line, ' ');
    size_t dash = 0;
    for (size_t i = 6; i < f.size(); ++i)
      if (f[i] == "-") {
        dash = i;
        break;
      }
    if (dash == 0 || f.size() < dash + 4) continue;
    if (f[dash + 1] != "cgroup" && f[dash + 1] != "cgroup2") continue;
    out.push_back(Mount{f[3], f[4], f[dash + 1], f[dash + 3]});
  }
  return out;
}

bool has_word(const std::string& list, char sep, const std::string& word) {
  for (const auto& w : split(list, sep))
    if (w == word) return true;
  return false;
}

// Where the hierarchy's path `cg` (from /proc/self/cgroup) is visible in this mount namespace.
std::optional<std::string> dir_of(const Mount& m, const std::string& cg) {
  if (m.root != "/" && cg != m.root && cg.rfind(m.root + "/", 0) != 0) return std::nullopt;
  std::string rel = m.root == "/" ? cg : cg.substr(m.root.size());
  if (rel == "/") rel.clear();
  return m.point + rel;
}

struct Want {
  std::string controller;  // "memory", "pids", "cpu"
  std::string limit;       // "--memory 32M"
};

std::vector<Want> wanted(const policy::Limits& l) {
  std::vector<Want> w;
  if (l.memory_bytes) w.push_back({"memory", "--memory " + format_size(*l.memory_bytes)});
  if (l.pids) w.push_back({"pids", "--pids " + std::to_string(*l.pids)});
  if (l.cpu) {
    std::ostringstream o;
    o << *l.cpu;
    w.push_back({"cpu", "--cpu " + o.str()});
  }
  return w;
}

void add_writes(CgroupPlan& cg, size_t dir, const std::string& controller, const policy::Limits& l, int version,
                const std::string& why) {
  auto put = [&](std::string file, std::string value, bool optional = false) {
    cg.writes.push_back(CgroupWrite{dir, std::move(file), std::move(value), optional, why});
  };
  if (controller == "memory") {
    std::string bytes = std::to_string(*l.memory_bytes);
    if (version == 2) {
      put("memory.max", bytes);
      put("memory.swap.max", "0", true);  // absent without swap accounting: then there is no swap to escape to
    } else {
      put("memory.limit_in_bytes", bytes);
      // memsw must not be below limit_in_bytes, so it is written second; absent without swap accounting.
      put("memory.memsw.limit_in_bytes", bytes, true);
    }
  } else if (controller == "pids") {
    put("pids.max", std::to_string(*l.pids));
  } else if (controller == "cpu") {
    auto quota = static_cast<long long>(std::llround(*l.cpu * 100000.0));
    if (version == 2) {
      put("cpu.max", std::to_string(quota) + " 100000");
    } else {
      put("cpu.cfs_period_us", "100000");
      put("cpu.cfs_quota_us", std::to_string(quota));
    }
  }
}

// cgroup v2: the nearest ancestor of our own cgroup (itself included) whose subtree already has the
// controllers enabled and whose cgroup.procs we may write: a sandbox cgroup created there can take a
// process moved from ours (the kernel checks write access on the common ancestor's cgroup.procs).
// Our own leaf usually cannot enable controllers itself (processes live in it: no internal processes).
std::optional<std::string> v2_parent(const HostView& host, const std::string& own, const std::vector<Want>& want,
                                     std::string& why) {
  auto controllers = host.read_file(own + "/cgroup.controllers");
  if (!controllers) {
    why = "cannot read " + own + "/cgroup.controllers";
    return std::nullopt;
  }
  // Every missing controller is named: this reason is printed under each limit, so naming only the
  // first would tell --pids that 'memory' is missing.
  std::string absent;
  for (const auto& w : want)
    if (!has_word(std::string(controllers->substr(0, controllers->find('\n'))), ' ', w.controller))
      absent += (absent.empty() ? "'" : ", '") + w.controller + "'";
  if (!absent.empty()) {
    why = (absent.find(',') == std::string::npos ? "the cgroup v2 controller " : "the cgroup v2 controllers ") +
          absent + (absent.find(',') == std::string::npos ? " is" : " are") + " not available in " + own;
    return std::nullopt;
  }
  for (std::string dir = own;; dir = policy::parent_of(dir)) {
    auto sub = host.read_file(dir + "/cgroup.subtree_control");
    bool enabled = sub.has_value();
    for (const auto& w : want) enabled = enabled && has_word(sub->substr(0, sub->find('\n')), ' ', w.controller);
    if (enabled && host.writable(dir) && host.writable(dir + "/cgroup.procs")) return dir;
    if (host.read_file(policy::parent_of(dir) + "/cgroup.controllers") == std::nullopt || dir == policy::parent_of(dir)) break;
  }
  why = "no cgroup v2 directory from " + own + " upwards is delegated to uid " + std::to_string(host.uid()) +
        " with these controllers enabled";
  return std::nullopt;
}

std::string own_cgroup(const std::string& proc_cgroup, const std::string& controller) {
  for (const auto& line : split(proc_cgroup, '\n')) {
    auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string ctrls = line.substr(a + 1, b - a - 1);
    if (controller.empty() ? line.compare(0, 3, "0::") == 0 : has_word(ctrls, ',', controller))
      return line.substr(b + 1);
  }
  return "";
}

}  // namespace

std::string format_size(uint64_t bytes) {
  const char* units[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (u < 4 && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return std::to_string(bytes) + units[u];
}

namespace {

using Missing = std::vector<std::pair<Want, std::string>>;  // limit and why no cgroup enforces it

// The rlimit approximation of each limit no cgroup enforces, with what it does not cover.
void approximate(const policy::Limits& l, const Missing& missing, const HostView& host,
                 std::vector<Unenforced>& out, std::vector<policy::Rlimit>& rlimits) {
  auto user_set = [&](const char* name) {
    for (const auto& r : l.rlimits)
      if (r.name == name) return true;
    return false;
  };
  for (const auto& [w, why] : missing) {
    Unenforced u{w.limit, "", why};
    if (w.controller == "memory" && !user_set("as")) {
      u.fallback = "RLIMIT_AS";
      u.why += "; approximated by RLIMIT_AS, which bounds each process's address space (not the sandbox's "
               "total, and not resident memory)";
      rlimits.push_back(policy::Rlimit{"as", *l.memory_bytes, *l.memory_bytes, w.limit + " (fallback)"});
    } else if (w.controller == "pids" && host.uid() != 0 && !user_set("nproc")) {
      u.fallback = "RLIMIT_NPROC";
      u.why += "; approximated by RLIMIT_NPROC, which counts this user's processes in the sandbox's user "
               "namespace (cage's init and shim included), and host-wide on kernels before 5.14";
      rlimits.push_back(policy::Rlimit{"nproc", *l.pids, *l.pids, w.limit + " (fallback)"});
    } else if (w.controller == "pids") {
      u.why += host.uid() == 0 ? "; RLIMIT_NPROC does not bind root, so nothing enforces it"
                               : "; --rlimit nproc was given and is kept as it is";
    } else if (w.controller == "cpu") {
      u.why += "; no rlimit can cap a CPU share, so it is not enforced";
    } else {
      u.why += "; --rlimit as was given and is kept as it is";
    }
    out.push_back(std::move(u));
  }
}

// The unit property systemd turns into the same cgroup v2 file a direct cgroup would get.
std::vector<ScopeProperty> scope_properties(const Want& w, const policy::Limits& l) {
  if (w.controller == "memory")
    return {{"MemoryMax", *l.memory_bytes, w.limit}, {"MemorySwapMax", 0, w.limit}};  // no swap to escape to
  // cage's keeper process (cgroup.cc) sits in the scope too: one more, so the sandbox gets --pids.
  if (w.controller == "pids") return {{"TasksMax", *l.pids + 1, w.limit + " (+1: cage's keeper process)"}};
  return {{"CPUQuotaPerSecUSec", static_cast<uint64_t>(std::llround(*l.cpu * 1000000.0)), w.limit}};
}

// An unprivileged caller on a systemd host whose own cgroup is not delegated (a login session's
// scope): the user manager owns user@UID.service, which is delegated to it, and creates a scope
// there on request. Only the controllers user@.service is given (its Delegate=, e.g. "pids memory
// cpu" in systemd 252) can be limited in it; the rest keep the rlimit approximation.
bool plan_user_scope(Plan& plan, const HostView& host, const Mount& m, const std::vector<Want>& want,
                     const std::string& runtime_dir, std::string& why, Missing& missing) {
  const std::string uid = std::to_string(host.uid());
  const std::string socket = (runtime_dir.empty() ? "/run/user/" + uid : runtime_dir) + "/systemd/private";
  if (host.stat(socket).kind != FileKind::socket) {
    why += "; no systemd user manager listens at " + socket;
    return false;
  }
  const std::string mgr = (m.point == "/" ? "" : m.point) + "/user.slice/user-" + uid + ".slice/user@" + uid + ".service";
  auto ctrls = host.read_file(mgr + "/cgroup.controllers");
  if (m.root != "/" || !ctrls) {
    why += "; the user manager's cgroup " + mgr + " is not visible here";
    return false;
  }
  CgroupPlan& cg = plan.cgroup;
  Missing undelegated;
  for (const auto& w : want) {
    if (!has_word(ctrls->substr(0, ctrls->find('\n')), ' ', w.controller)) {
      undelegated.emplace_back(w, "the systemd user manager is not delegated the '" + w.controller +
                                      "' controller (" + mgr + "/cgroup.controllers)");
      continue;
    }
    for (auto& p : scope_properties(w, plan.limits)) cg.scope.properties.push_back(std::move(p));
  }
  if (cg.scope.properties.empty()) {
    why += "; the systemd user manager is delegated none of these controllers";
    return false;
  }
  cg.version = 2;
  cg.via = CgroupVia::user_scope;
  cg.scope.socket = socket;
  cg.scope.mount = m.point == "/" ? "" : m.point;
  Missing refused;
  for (const auto& w : want)
    if (std::none_of(undelegated.begin(), undelegated.end(), [&](const auto& u) { return u.first.limit == w.limit; }))
      refused.emplace_back(w, "the systemd user manager refused the transient scope");
  approximate(plan.limits, refused, host, cg.scope.fallback, cg.scope.fallback_rlimits);
  missing = std::move(undelegated);
  return true;
}

}  // namespace

namespace {

// What compile_cgroups reads of the host once: our own cgroups and the cgroup mounts.
struct CgroupHost {
  std::string proc;  // /proc/self/cgroup
  std::vector<Mount> mounts;
};

// What the cgroup v2 attempt settled: every limit in a direct cgroup, some in a systemd user scope
// (the rest in `missing`), or nothing (cgroup v1 is tried next).
enum class V2Outcome { direct, user_scope, none };

// cgroup v2 when the unified hierarchy offers every controller asked for; else, unprivileged, a
// scope from the systemd user manager. `why` says why no direct v2 cgroup could be used.
V2Outcome plan_cgroup_v2(Plan& plan, const HostView& host, const CgroupHost& h, const std::vector<Want>& want,
                         const std::string& runtime_dir, std::string& why, Missing& missing) {
  CgroupPlan& cg = plan.cgroup;
  for (const auto& m : h.mounts) {
    if (m.fstype != "cgroup2") continue;
    auto own = dir_of(m, own_cgroup(h.proc, ""));
    if (!own) continue;
    if (auto parent = v2_parent(host, *own, want, why)) {
      cg.version = 2;
      cg.via = CgroupVia::direct;
      cg.dirs.push_back(CgroupDir{"", *parent});
      for (const auto& w : want) add_writes(cg, 0, w.controller, plan.limits, 2, w.limit);
      return V2Outcome::direct;
    }
    if (host.uid() != 0 && plan_user_scope(plan, host, m, want, runtime_dir, why, missing))
      return V2Outcome::user_scope;
    break;
  }
  return V2Outcome::none;
}

// One controller's cgroup v1 hierarchy: a run cgroup beneath our own cgroup there. False, with
// `why`, when no mounted hierarchy of it can be used.
bool plan_v1_controller(CgroupPlan& cg, const HostView& host, const CgroupHost& h, const Want& w,
                        const policy::Limits& l, const std::string& v2why, std::string& why) {
  why = v2why + "; no cgroup v1 '" + w.controller + "' hierarchy is mounted";
  for (const auto& m : h.mounts) {
    if (m.fstype != "cgroup" || !has_word(m.options, ',', w.controller)) continue;
    auto dir = dir_of(m, own_cgroup(h.proc, w.controller));
    if (!dir) continue;
    if (host.stat(*dir).kind != FileKind::dir || !host.writable(*dir)) {
      why = v2why + "; the cgroup v1 '" + w.controller + "' directory " + *dir +
            " is missing or not writable by uid " + std::to_string(host.uid());
      return false;
    }
    cg.version = 1;
    cg.via = CgroupVia::direct;
    size_t idx = cg.dirs.size();
    for (size_t i = 0; i < cg.dirs.size(); ++i)
      if (cg.dirs[i].parent == *dir) idx = i;
    if (idx == cg.dirs.size()) cg.dirs.push_back(CgroupDir{w.controller, *dir});
    add_writes(cg, idx, w.controller, l, 1, w.limit);
    return true;
  }
  return false;
}

// cgroup v1: one hierarchy per controller, each run cgroup beneath our own cgroup there (so the
// limits the caller is under still apply to the sandbox). Returns the limits no hierarchy takes.
Missing plan_cgroup_v1(CgroupPlan& cg, const HostView& host, const CgroupHost& h,
                       const std::vector<Want>& want, const policy::Limits& l, const std::string& v2why) {
  Missing missing;
  for (const auto& w : want)
    if (std::string why; !plan_v1_controller(cg, host, h, w, l, v2why, why)) missing.emplace_back(w, why);
  return missing;
}

// A limit no cgroup enforces is refused under --strict-limits, else approximated by an rlimit.
Status refuse_or_approximate(Plan& plan, const HostView& host, const Missing& missing) {
  const policy::Limits& l = plan.limits;
  if (missing.empty()) return Ok{};
  if (l.strict)
    return unavailable(missing.front().first.limit,
                       "no cgroup can enforce this limit here (" + missing.front().second +
                           ") and --strict-limits is set",
                       "run as root, or inside a delegated cgroup v2 subtree (systemd-run --user --scope -p "
                       "Delegate=yes cage ...), or drop --strict-limits to accept the rlimit approximation");
  approximate(l, missing, host, plan.cgroup.unenforced, plan.limits.rlimits);
  return Ok{};
}

}  // namespace

Status compile_cgroups(Plan& plan, const HostView& host, const std::string& runtime_dir) {
  auto want = wanted(plan.limits);
  plan.cgroup.strict = plan.limits.strict;
  if (want.empty()) return Ok{};
  CgroupHost h{host.read_file("/proc/self/cgroup").value_or(""), cgroup_mounts(host)};
  std::string v2why = "no cgroup v2 hierarchy is mounted";
  Missing missing;
  switch (plan_cgroup_v2(plan, host, h, want, runtime_dir, v2why, missing)) {
    case V2Outcome::direct: return Ok{};
    case V2Outcome::user_scope: break;
    case V2Outcome::none: missing = plan_cgroup_v1(plan.cgroup, host, h, want, plan.limits, v2why); break;
  }
  return refuse_or_approximate(plan, host, missing);
}

}  // namespace cage::lx
