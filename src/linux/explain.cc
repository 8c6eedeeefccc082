// --explain's judgement (see explain.h): each observed access against the Plan's view, after the run.
#include "linux/explain.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "common/json.h"

namespace cage::lx::explain {
namespace {

// Three or more refused entries of one directory are suggested as the directory: a program that
// reads several files of ~/.config/tool wants the directory, not a list of files.
constexpr size_t kFoldSiblings = 3;

bool covers(const std::string& dir, const std::string& path) {
  if (dir == "/") return true;
  return path.compare(0, dir.size(), dir) == 0 && (path.size() == dir.size() || path[dir.size()] == '/');
}

std::string parent_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

bool writes(Op op) {
  return op == Op::write || op == Op::create || op == Op::remove;
}

// What the view does at `path` for `op`, and for hidden_by_policy the grant that hides it.
struct Judged {
  Verdict verdict = Verdict::allowed;
  std::string why;
};

// Namespaces: the deepest mount covering the path decides (the later one of two at the same target:
// masks come after what they mask). A tmpfs or an empty directory shows nothing of the host beneath.
Judged judge_mounts(const Plan& plan, const std::string& path, Op op) {
  const MountStep* deepest = nullptr;
  const MountStep* tmpfs = nullptr;  // the deepest tmpfs: whether a write beneath a mount point lands
  bool on_the_way = false;           // an ancestor of a mount target: it exists, as an empty directory
  for (const auto& m : plan.mounts) {
    on_the_way = on_the_way || (m.target != path && covers(path, m.target));
    if (!covers(m.target, path)) continue;
    if (!deepest || m.target.size() >= deepest->target.size()) deepest = &m;
    if (m.kind == MountKind::tmpfs && (!tmpfs || m.target.size() >= tmpfs->target.size())) tmpfs = &m;
  }
  if (!deepest) return {Verdict::unknown, ""};
  switch (deepest->kind) {
    case MountKind::hide:
      return {Verdict::hidden_by_policy, deepest->why};
    case MountKind::bind_ro:
      return {writes(op) ? Verdict::read_only : Verdict::allowed, ""};
    case MountKind::bind_rw:
      return {Verdict::allowed, ""};
    case MountKind::tmpfs:
    case MountKind::dir:
      if (deepest->target == path || (on_the_way && !writes(op))) return {Verdict::allowed, ""};
      if (!writes(op)) return {Verdict::hidden, ""};
      // A write beneath a mount point fails where the host's directory it meant is not there (judge()
      // asks whether the workload made that directory itself), else lands in the tmpfs.
      if (parent_of(path) != deepest->target) return {Verdict::hidden, ""};
      return {tmpfs && tmpfs->read_only ? Verdict::read_only : Verdict::allowed, ""};
    // cage's own generated view (/proc, /dev, /etc/passwd...): not the user's to grant.
    case MountKind::proc:
    case MountKind::dev:
    case MountKind::symlink:
    case MountKind::file:
    case MountKind::proc_ro:
    case MountKind::over_file:
      return {Verdict::unknown, ""};
  }
  return {Verdict::unknown, ""};
}

// Landlock-only: rules add up, so any covering rule with the right suffices. Landlock does not
// mediate stat, so a stat is never refused.
Judged judge_landlock(const Plan& plan, const std::string& path, Op op) {
  if (op == Op::stat) return {Verdict::allowed, ""};
  bool read = false, exec = false, write = false;
  for (const auto& r : plan.landlock.rules) {
    if (!covers(r.path, path)) continue;
    switch (r.access) {
      case Access::list:
        read = read || r.path == path;
        break;
      case Access::read:
        read = true;
        break;
      case Access::read_exec:
      case Access::exec:
        read = exec = true;
        break;
      case Access::write:
        read = write = true, exec = exec || !plan.landlock.exec_listed_only;
        break;
      case Access::dev_rw:
        read = write = true;
        break;
    }
  }
  if (writes(op)) return {write ? Verdict::allowed : read ? Verdict::read_only : Verdict::refused, ""};
  if (!read) return {Verdict::refused, ""};
  if (op == Op::exec && !exec) return {Verdict::not_executable, ""};
  return {Verdict::allowed, ""};
}

// --exec under namespaces: Landlock grants execute only beneath its exec rules, whatever the mounts.
bool exec_listed(const Plan& plan, const std::string& path) {
  return std::any_of(plan.landlock.rules.begin(), plan.landlock.rules.end(),
                     [&](const LandlockRule& r) { return r.access == Access::exec && covers(r.path, path); });
}

// The grant that allows a write: the nearest directory above the path that the host has.
std::string writable_dir(const std::string& path, const HostKind& host) {
  std::string d = parent_of(path);
  int k = 0;
  while (d != "/" && (k = host(d)) != 2) {
    if (k < 0) return "";  // not looked up: no suggestion rather than a wider one above it
    d = parent_of(d);
  }
  return d == "/" ? "" : d;
}

// A --net remedy only for a name or address a shell passes as one word: the host is what the
// workload asked the proxy for, and a suggestion must not carry flags of its own.
bool plain_host_port(const std::string& hp) {
  const auto colon = hp.rfind(':');
  if (colon == 0 || colon == std::string::npos || colon + 1 == hp.size() || hp.substr(colon + 1) == "0") return false;
  return std::all_of(hp.begin(), hp.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '-' || c == '_' || c == ':' || c == '[' || c == ']' || c == '*';
  });
}

// Paths are printed as the remedy's argument: one with a shell's special characters is quoted.
std::string shell_word(const std::string& s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || std::string_view("/._-+,:@%=~").find(static_cast<char>(c)) != std::string_view::npos;
  });
  if (plain) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The workload created the directory itself before this access: what it finds there is its own.
bool made_before(const Accesses& all, const std::string& dir, uint64_t order) {
  auto it = all.find({Op::create, dir});
  return it != all.end() && it->second.order < order;
}

Finding judge(const Plan& plan, const Accesses& all, const Key& key, const Seen& seen, const HostKind& host) {
  const auto& [op, path] = key;
  Finding f{op, path, Verdict::allowed, "", seen.count, seen.pid, seen.comm, 1, seen.order};
  if (op == Op::connect) {  // the proxy's refusal, recorded as it decided
    f.verdict = Verdict::refused;
    if (plain_host_port(path)) f.remedy = "--net " + path;
    return f;
  }
  // Under Landlock only the view is the host's: a directory made where one exists (mkdir -p) fails
  // with EEXIST before Landlock is asked, as it would outside.
  if (plan.mechanism == Mechanism::landlock_only && op == Op::create && host(path) == 2) return f;
  // The workload's stdio files, opened again by their /proc/self/fd names (LandlockPlan::stdio).
  for (const auto& s : plan.landlock.stdio)
    if (s.path == path && (writes(op) ? s.write : op == Op::read ? s.read : op == Op::stat)) return f;
  Judged j = plan.mechanism == Mechanism::landlock_only ? judge_landlock(plan, path, op)
                                                        : judge_mounts(plan, path, op);
  if (op == Op::exec && j.verdict == Verdict::allowed && plan.landlock.exec_listed_only &&
      !exec_listed(plan, path))
    j.verdict = Verdict::not_executable;
  if (j.verdict == Verdict::hidden_by_policy) f.remedy = j.why;
  if (writes(op) && j.verdict == Verdict::hidden &&
      (host(parent_of(path)) != 2 || made_before(all, parent_of(path), seen.order)))
    j.verdict = Verdict::allowed;  // a directory of the sandbox's own, not a hidden one of the host
  f.verdict = j.verdict;
  const bool refused = j.verdict == Verdict::hidden || j.verdict == Verdict::refused;
  if ((refused || j.verdict == Verdict::read_only) && host(path) < 0) {
    f.verdict = Verdict::unknown;  // not looked up on the host: nothing to suggest (host_lookup.h)
    return f;
  }
  if (writes(op) && (refused || j.verdict == Verdict::read_only)) {
    std::string d = writable_dir(path, host);
    if (!d.empty()) f.remedy = "--rw " + shell_word(d);
  } else if (refused) {
    // Absent on the host as well: the program looked and would not have found it outside either.
    if (host(path) == 0)
      f.verdict = Verdict::probe;
    else
      f.remedy = "--ro " + shell_word(path);
  } else if (j.verdict == Verdict::not_executable) {
    f.remedy = "--exec " + shell_word(path);
  }
  return f;
}

std::string base_of(const std::string& path) {
  return path.substr(path.rfind('/') + 1);
}

// An exec refused at one place and run from another under the same name is a search along PATH.
void mark_path_searches(std::vector<Finding>& all) {
  for (auto& f : all) {
    if (f.op != Op::exec || f.verdict == Verdict::allowed || f.verdict == Verdict::probe) continue;
    const std::string name = base_of(f.path);
    bool found = std::any_of(all.begin(), all.end(), [&](const Finding& g) {
      return g.op == Op::exec && g.verdict == Verdict::allowed && base_of(g.path) == name;
    });
    if (found) f.verdict = Verdict::probe, f.remedy.clear();
  }
}

// Several hidden entries of one directory read alike become one finding for the directory.
// Never folded: the caller's home, a directory above it, or / (a suggestion to grant a whole home
// would hand over every credential in it: an attack review found `--ro /root` offered for three
// dotfiles); each file is then its own finding.
bool too_wide(const std::string& dir, const std::string& home) {
  return dir == "/" || (!home.empty() && covers(dir, home));
}

std::vector<Finding> fold_siblings(std::vector<Finding> all, const std::string& home) {
  std::map<std::string, std::vector<size_t>> by_dir;
  for (size_t i = 0; i < all.size(); ++i)
    if ((all[i].verdict == Verdict::hidden || all[i].verdict == Verdict::refused) && !writes(all[i].op) &&
        all[i].op != Op::connect)
      by_dir[parent_of(all[i].path)].push_back(i);
  std::vector<bool> gone(all.size(), false);
  std::vector<Finding> out;
  for (const auto& [dir, idx] : by_dir) {
    std::map<std::string, bool> distinct;
    for (size_t i : idx) distinct[all[i].path] = true;
    if (distinct.size() < kFoldSiblings || too_wide(dir, home)) continue;
    size_t first = *std::min_element(idx.begin(), idx.end(),
                                     [&](size_t a, size_t b) { return all[a].order < all[b].order; });
    Finding f = all[first];
    f.path = dir;
    f.remedy = "--ro " + shell_word(dir);
    f.count = 0;
    f.paths = distinct.size();
    for (size_t i : idx) f.count += all[i].count, gone[i] = true;
    out.push_back(std::move(f));
  }
  for (size_t i = 0; i < all.size(); ++i)
    if (!gone[i]) out.push_back(std::move(all[i]));
  return out;
}

int rank(Verdict v) {
  return v == Verdict::probe ? 2 : v == Verdict::hidden_by_policy ? 1 : 0;
}

}  // namespace

std::string_view to_string(Op op) {
  switch (op) {
    case Op::read:
      return "read";
    case Op::stat:
      return "stat";
    case Op::exec:
      return "exec";
    case Op::write:
      return "write";
    case Op::create:
      return "create";
    case Op::remove:
      return "remove";
    case Op::connect:
      return "connect";
    case Op::syscall:
      return "syscall";
  }
  return "?";
}

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::allowed:
      return "allowed";
    case Verdict::hidden:
      return "hidden";
    case Verdict::read_only:
      return "read_only";
    case Verdict::not_executable:
      return "not_executable";
    case Verdict::hidden_by_policy:
      return "hidden_by_policy";
    case Verdict::refused:
      return "refused";
    case Verdict::direct:
      return "direct";
    case Verdict::killed:
      return "killed";
    case Verdict::probe:
      return "probe";
    case Verdict::unknown:
      return "unknown";
  }
  return "?";
}

namespace {
// The accesses under their resolved paths, merged where two names lead to one file.
Accesses resolved(const Accesses& seen, const Canonical& canonical) {
  Accesses out;
  for (const auto& [key, s] : seen) {
    Key k{key.first, key.first == Op::connect ? key.second : canonical(key.second)};
    auto [it, fresh] = out.emplace(k, s);
    if (fresh) continue;
    it->second.count += s.count;
    if (s.order < it->second.order)
      it->second.pid = s.pid, it->second.comm = s.comm, it->second.order = s.order;
  }
  return out;
}

}  // namespace

// git (and what uses its discovery) looks for .git in the working directory, then in each parent,
// but stops where the parent lies on another mount: with the working directory granted as its own
// mount (the implicit cwd grant, or a --ro of a subdirectory), the repository's .git above it is
// never even looked for, so nothing would be listed and git only says "not a git repository". When
// a .git was looked for in D and the host has one above D that the view hides, that one is listed
// with the grant of its repository.
void repository_above(const Plan& plan, const Accesses& all_seen, const HostKind& host, const std::string& home,
                      std::vector<Finding>& out) {
  for (const auto& [key, s] : all_seen) {
    const auto& [op, path] = key;
    if ((op != Op::stat && op != Op::read) || !path.ends_with("/.git")) continue;
    for (std::string a = parent_of(parent_of(path)); a != "/" && a != home; a = parent_of(a)) {
      const std::string git = a + "/.git";
      if (host(git) <= 0) continue;
      const bool listed = std::any_of(out.begin(), out.end(), [&](const Finding& f) { return f.path == git; });
      Judged j = plan.mechanism == Mechanism::landlock_only ? judge_landlock(plan, git, Op::stat)
                                                            : judge_mounts(plan, git, Op::stat);
      if (!listed && (j.verdict == Verdict::hidden || j.verdict == Verdict::refused))
        out.push_back(Finding{Op::stat, git, j.verdict, "--ro " + shell_word(a), s.count, s.pid, s.comm, 1, s.order});
      break;
    }
  }
}

std::vector<Finding> classify(const Plan& plan, const Accesses& named, const HostKind& host,
                              const Canonical& canonical, const std::string& home) {
  const bool resolve = plan.mechanism == Mechanism::landlock_only && canonical;
  const Accesses& seen = resolve ? resolved(named, canonical) : named;
  std::vector<Finding> all;
  for (const auto& [key, s] : seen) all.push_back(judge(plan, seen, key, s, host));
  mark_path_searches(all);
  repository_above(plan, seen, host, home, all);
  std::erase_if(
      all, [](const Finding& f) { return f.verdict == Verdict::allowed || f.verdict == Verdict::unknown; });
  all = fold_siblings(std::move(all), home);
  std::stable_sort(all.begin(), all.end(), [](const Finding& a, const Finding& b) {
    if (rank(a.verdict) != rank(b.verdict)) return rank(a.verdict) < rank(b.verdict);
    return std::tie(a.path, a.op) < std::tie(b.path, b.op);
  });
  return all;
}

Finding seccomp_kill(std::string_view profile, std::string_view killing_calls) {
  Finding f;
  f.op = Op::syscall;
  f.path = killing_calls.empty() ? "a call the '" + std::string(profile) + "' profile forbids"
                                 : "one of " + std::string(killing_calls);
  f.verdict = Verdict::killed;
  f.count = 1;
  f.remedy = profile == "default" ? "--seccomp relaxed" : "--seccomp none";
  return f;
}

std::string render_text(const std::vector<Finding>& findings, uint64_t dropped) {
  std::string out;
  size_t probes = 0;
  for (const auto& f : findings) {
    if (f.verdict == Verdict::probe) {
      ++probes;
      continue;
    }
    std::string line = "cage: explain: " + std::string(to_string(f.op)) + " " + f.path;
    if (f.paths > 1) line += " (" + std::to_string(f.paths) + " entries)";
    line += ": " + (f.verdict == Verdict::hidden_by_policy ? "hidden by " + f.remedy
                                                           : std::string(to_string(f.verdict)));
    line += " (" + std::to_string(f.count) + "x";
    if (f.pid) line += ", first " + f.comm + "[" + std::to_string(f.pid) + "]";
    line += ")";
    if (f.verdict == Verdict::hidden_by_policy)
      line += "; not suggested";
    else if (f.verdict == Verdict::direct)  // --net would not help: Landlock refuses every direct connect
      line += "; connect through cage's proxy (HTTPS_PROXY, HTTP_PROXY as cage sets them), or use "
              "--mechanism namespaces for transparent egress";
    else if (!f.remedy.empty())
      line += "; allow with " + f.remedy;
    out += printable(line) + "\n";
  }
  if (probes)
    out += "cage: explain: " + std::to_string(probes) +
           " probed paths absent on the host too, or found elsewhere on PATH (not listed; see --result)\n";
  if (dropped)
    out +=
        "cage: explain: " + std::to_string(dropped) + " more distinct accesses were not recorded (limit)\n";
  if (out.empty()) out = "cage: explain: nothing observed was refused or hidden\n";
  return out;
}

toml::table finding_fields(const Finding& f) {
  toml::table t{{"op", std::string(to_string(f.op))},
                {"path", f.path},
                {"verdict", std::string(to_string(f.verdict))},
                {"count", static_cast<int64_t>(f.count)}};
  if (f.paths > 1) t.insert("entries", static_cast<int64_t>(f.paths));
  if (f.pid) t.insert("pid", f.pid), t.insert("comm", f.comm);
  if (f.verdict == Verdict::hidden_by_policy)
    t.insert("hidden_by", f.remedy);
  else if (!f.remedy.empty())
    t.insert("remedy", f.remedy);
  return t;
}

}  // namespace cage::lx::explain
