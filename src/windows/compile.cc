// win::compile: decides a whole Windows run (docs/windows.md). The workload runs in an AppContainer
// made for this run: it reads and writes only what the ACEs cage adds for the run's package SID
// grant (and what Windows grants ALL APPLICATION PACKAGES: the system directories), and has no
// network unless the container is given capabilities. Processes are held by a job object. The
// command is resolved here, never by CreateProcess's search. Tested by tests/unit/windows_plan_test.cc.
#include "windows/compile.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "common/sha256.h"
#include "proxy/env.h"
#include "windows/label_refs.h"
#include "windows/net_slots.h"

namespace cage::win {

namespace {

using policy::is_beneath;

// Passed through when set: what Windows programs expect to find (SystemRoot for DLL loading, ComSpec,
// PATHEXT, the Program Files and ProgramData locations, PowerShell's module path) and the
// terminal/locale set of the Linux build. The profile-shaped ones (APPDATA, LOCALAPPDATA, TEMP,
// HOMEDRIVE/HOMEPATH) are set by compile, not passed.
const char* const kPassedEnv[] = {"PATH",
                                  "PATHEXT",
                                  "SYSTEMROOT",
                                  "SYSTEMDRIVE",
                                  "WINDIR",
                                  "COMSPEC",
                                  "PROGRAMFILES",
                                  "PROGRAMFILES(X86)",
                                  "PROGRAMW6432",
                                  "COMMONPROGRAMFILES",
                                  "COMMONPROGRAMFILES(X86)",
                                  "COMMONPROGRAMW6432",
                                  "PROGRAMDATA",
                                  "ALLUSERSPROFILE",
                                  "PUBLIC",
                                  "COMPUTERNAME",
                                  "USERDOMAIN",
                                  "PSMODULEPATH",
                                  "NUMBER_OF_PROCESSORS",
                                  "PROCESSOR_ARCHITECTURE",
                                  "PROCESSOR_IDENTIFIER",
                                  "PROCESSOR_LEVEL",
                                  "PROCESSOR_REVISION",
                                  "OS",
                                  "USERNAME",
                                  "TERM",
                                  "COLORTERM",
                                  "LANG",
                                  "LC_*",
                                  "TZ",
                                  "NO_COLOR",
                                  "COLUMNS",
                                  "LINES",
                                  nullptr};

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}
std::string ace(const char* type, bool dir, uint32_t mask) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "D:(%s;%s;0x%x;;;<PACKAGE>)", type, dir ? "OICI" : "", mask);
  return buf;
}

Status add_grant(WinPlan& plan, const policy::Grant& g, AclChange::Kind kind, const WinHostFacts& facts) {
  auto path = to_windows_path(g.path, facts, g.origin);
  if (!path) return path.error();
  char k = facts.kind ? facts.kind(*path) : 'd';
  if (k == 0 && kind != AclChange::Kind::deny_all)
    return invalid(g.origin, "no such file or directory (" + *path + ")",
                   "create it first, or check the path");
  if (k == 0) return Ok{};  // nothing to hide
  const bool dir = k == 'd';
  switch (kind) {
    case AclChange::Kind::allow_modify:
      // AppContainers run at Low integrity: without the Low label the no-write-up rule refuses what
      // the ACE grants.
      plan.acl.push_back(AclChange{AclChange::Kind::low_label, *path, dir,
                                   std::string("S:(ML;") + (dir ? "OICI" : "") + ";NW;;;LW)", g.origin});
      plan.acl.push_back(AclChange{kind, *path, dir, ace("A", dir, kModifyMask), g.origin});
      break;
    case AclChange::Kind::allow_read:
      plan.acl.push_back(AclChange{kind, *path, dir, ace("A", dir, kReadMask), g.origin});
      break;
    case AclChange::Kind::deny_write:
      plan.acl.push_back(AclChange{kind, *path, dir, ace("D", dir, kDenyWriteMask), g.origin});
      break;
    case AclChange::Kind::deny_all:
      plan.acl.push_back(AclChange{kind, *path, dir, ace("D", dir, kDenyAllMask), g.origin});
      break;
    case AclChange::Kind::low_label:
      break;  // only as part of allow_modify
  }
  return Ok{};
}

// An AppContainer without capabilities has no network at all, loopback included: no WFP, no
// administrator. --share-net gives it the client and server capabilities; --net a slot container
// (net_slots.h) that an elevated `cage --install-windows-network` put on the loopback-exemption list
// and confined with WFP filters to its own proxy port: the run's proxy listens exactly there.
void network(WinPlan& plan, const policy::Policy& p, const WinHostFacts& facts) {
  if (p.share_net) {
    plan.container.capabilities = {{kInternetClientSid, "internetClient"},
                                   {kInternetClientServerSid, "internetClientServer"},
                                   {kPrivateNetworkSid, "privateNetworkClientServer"}};
    plan.gaps.push_back("--share-net: the host network, unfiltered; loopback stays blocked (AppContainer)");
    return;
  }
  if (!plan.proxy) return;
  const int slot = facts.net_slot >= 0 ? facts.net_slot : 0;
  plan.net_slot.slot = slot;
  plan.net_slot.claimed = facts.net_slot >= 0;
  plan.net_slot.port = net_slot_port(slot);
  plan.net_slot.notes = facts.net_slot_notes;
  plan.net_slot.lock = net_slot_lock_path(facts.programdata, slot);
  plan.proxy_port = plan.net_slot.port;
  plan.container.name = net_slot_name(slot);
  plan.container.per_run = false;
  plan.container.loopback_exemption = true;
  if (p.net_mode == policy::Policy::NetMode::both)
    plan.gaps.push_back(
        "--net: proxy only; programs that ignore HTTPS_PROXY get no network (no transparent "
        "mode on Windows)");
}

void limits(WinPlan& plan, const policy::Limits& l, const WinHostFacts& facts) {
  if (l.pids) {
    plan.job.limit_flags |= kJobLimitActiveProcess;
    plan.job.active_processes = static_cast<uint32_t>(std::min<uint64_t>(*l.pids, 0xffffffffu));
  }
  if (l.memory_bytes) {
    plan.job.limit_flags |= kJobLimitJobMemory;
    plan.job.job_memory = *l.memory_bytes;
  }
  if (l.cpu) {
    double share = *l.cpu / std::max(1u, facts.cpu_count) * 10000.0;
    plan.job.cpu_rate_flags = kCpuRateEnable | kCpuRateHardCap;
    plan.job.cpu_rate = static_cast<uint32_t>(std::clamp(share, 1.0, 10000.0));
  }
  if (l.timeout_ms) plan.timeout_ms = *l.timeout_ms;
  for (const auto& r : l.rlimits)
    plan.gaps.push_back(r.origin + ": Windows has no resource limit of this kind");
}

// `path` is `dir` or inside it, compared as Windows compares names (case-insensitively).
bool windows_beneath(const std::string& path, const std::string& dir) {
  std::string p = upper(path), d = upper(dir);
  while (d.size() > 3 && d.back() == '\\') d.pop_back();
  return p == d ||
         (p.size() > d.size() && p.compare(0, d.size(), d) == 0 && (d.back() == '\\' || p[d.size()] == '\\'));
}

std::string run_id(const WinHostFacts& facts) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%u-%08x%08x", facts.pid, facts.nonce[0], facts.nonce[1]);
  return buf;
}

// An argument of a .cmd/.bat is safe to quote when cmd.exe cannot expand or split it inside quotes.
bool cmd_safe(const std::string& arg) {
  return arg.find_first_of(std::string("%!\"\r\n\0", 6)) == std::string::npos;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    item.erase(std::remove(item.begin(), item.end(), '"'), item.end());  // "C:\Program Files\x";...
    if (!item.empty()) out.push_back(item);
    start = end + 1;
  }
  return out;
}

std::string env_get(const std::vector<std::string>& env, const std::string& name) {
  for (const auto& e : env) {
    size_t eq = e.find('=');
    if (eq != std::string::npos && upper(e.substr(0, eq)) == upper(name)) return e.substr(eq + 1);
  }
  return {};
}

// "C:\a\.\b\..\c" -> "C:\a\c", as GetFullPathNameW does it: by the text, never above the root.
std::string lexical_full_path(const std::string& path) {
  const size_t root = path.rfind("\\\\", 0) == 0 ? path.find('\\', path.find('\\', 2) + 1) : 2;
  if (root == std::string::npos || root >= path.size()) return path;
  std::vector<std::string> parts;
  size_t start = root + 1;
  while (start <= path.size()) {
    size_t end = path.find('\\', start);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(start, end - start);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = end + 1;
  }
  std::string out = path.substr(0, root);
  for (const auto& part : parts) out += "\\" + part;
  return parts.empty() ? out + "\\" : out;
}

std::string extension_of(const std::string& path) {
  size_t slash = path.find_last_of("\\/"), dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return {};
  return upper(path.substr(dot));
}

// The ACEs and labels for the grants, in the order that keeps each one right: --rw, --ro, then the
// deny ACEs (nested --ro, --hide) that must win over what a grant above them allows.
Status grants(WinPlan& plan, const policy::Policy& p, const WinHostFacts& facts, const std::string& local,
              const std::string& profile, const std::vector<std::string>& system_roots) {
  for (const auto& g : p.rw)
    if (auto s = add_grant(plan, g, AclChange::Kind::allow_modify, facts); !s) return s;
  // A workload that could write the restore journals could make the next cage change any descriptor
  // or delete any tree of the user's: no write grant may cover cage's own directory.
  const std::string own = local + "\\cage";
  std::vector<std::string> writable;
  for (const auto& a : plan.acl) {
    if (a.kind != AclChange::Kind::allow_modify) continue;
    if (windows_beneath(own, a.path) || windows_beneath(a.path, own))
      return invalid(a.why, "would make cage's restore journals (" + own + ") writable by the sandbox",
                     "grant a directory that does not contain " + own);
    writable.push_back(a.path);
  }
  for (const auto& g : p.ro) {
    // Windows already grants every AppContainer read and execute there (ALL APPLICATION PACKAGES),
    // and the user may not change those ACLs: a --ro grant there needs nothing (a profile's --ro
    // of the Windows directory would otherwise fail for want of WRITE_DAC).
    auto path = to_windows_path(g.path, facts, g.origin);
    if (!path) return path.error();
    if (std::any_of(system_roots.begin(), system_roots.end(),
                    [&](const std::string& root) { return windows_beneath(*path, root); }))
      continue;
    if (auto s = add_grant(plan, g, AclChange::Kind::allow_read, facts); !s) return s;
  }
  // --ro beneath --rw: the inherited modify ACE would make it writable; an explicit deny of the
  // write rights for the same SID comes first in the access check and keeps it read-only.
  for (const auto& g : p.ro) {
    auto path = to_windows_path(g.path, facts, g.origin);
    if (!path) return path.error();
    for (const auto& w : writable)
      if (windows_beneath(*path, w) && upper(*path) != upper(w)) {
        if (auto s = add_grant(plan, g, AclChange::Kind::deny_write, facts); !s) return s;
        break;
      }
  }
  for (const auto& g : p.hide)
    if (auto s = add_grant(plan, g, AclChange::Kind::deny_all, facts); !s) return s;
  // The working directory is readable, as on Linux, unless that would show far more than a project:
  // a drive's root, the profile or a directory holding it.
  auto granted = [&](const std::string& path) {
    return std::any_of(plan.acl.begin(), plan.acl.end(), [&](const AclChange& a) {
      return (a.kind == AclChange::Kind::allow_read || a.kind == AclChange::Kind::allow_modify) &&
             windows_beneath(path, a.path);
    });
  };
  const bool too_wide = plan.cwd.size() <= 3 || windows_beneath(profile, plan.cwd);
  if (p.cwd_visible && !granted(plan.cwd)) {
    if (too_wide)
      plan.gaps.push_back("the working directory " + plan.cwd +
                          " is not granted (it is a drive's root or holds your profile): the run cannot "
                          "read it; grant a project directory, or start in one");
    else
      plan.acl.push_back(AclChange{AclChange::Kind::allow_read, plan.cwd, true, ace("A", true, kReadMask),
                                   "current directory (read-only)"});
  }
  return Ok{};
}

}  // namespace

std::string container_name_of(const WinHostFacts& facts) {
  return "cage.run-" + run_id(facts);
}

std::string package_sid_of(const std::string& name) {
  std::string utf16;  // names are ASCII (cage makes them): each character and a zero byte
  for (char c : name) {
    utf16 += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    utf16 += '\0';
  }
  const std::string hex = sha256_hex(utf16);
  std::string sid = "S-1-15-2";
  for (int i = 0; i < 7; ++i) {
    uint32_t rid = 0;
    for (int b = 3; b >= 0; --b) rid = (rid << 8) | std::stoul(hex.substr((i * 4 + b) * 2, 2), nullptr, 16);
    sid += "-" + std::to_string(rid);
  }
  return sid;
}

std::string insert_ace(const std::string& dacl, const std::string& ace) {
  if (dacl.rfind("D:", 0) != 0) return "D:" + ace;  // no DACL part at all: an empty one plus ours
  if (dacl.find("NO_ACCESS_CONTROL") != std::string::npos) return dacl;  // NULL DACL: all allowed already
  size_t pos = dacl.find('(');
  if (pos == std::string::npos) return dacl + ace;  // "D:P" alone: an empty DACL
  // Explicit deny ACEs come first; ours goes before the first ACE that is not one.
  while (pos < dacl.size() && dacl[pos] == '(') {
    size_t end = dacl.find(')', pos);
    if (end == std::string::npos) break;
    std::string body = dacl.substr(pos + 1, end - pos - 1);
    std::string type = body.substr(0, body.find(';'));
    std::string flags = body.substr(type.size() + 1, body.find(';', type.size() + 1) - type.size() - 1);
    if ((type != "D" && type != "OD") || flags.find("ID") != std::string::npos) break;
    pos = end + 1;
  }
  return dacl.substr(0, pos) + ace + dacl.substr(pos);
}

std::string posix_form(const std::string& text) {
  std::string s = text;
  std::replace(s.begin(), s.end(), '\\', '/');
  if (s.size() >= 2 && std::isalpha(static_cast<unsigned char>(s[0])) && s[1] == ':') {
    s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
    return "/" + s.substr(0, 2) + (s.size() > 2 && s[2] != '/' ? "/" : "") + s.substr(2);
  }
  return s;
}

void normalize_input(policy::PolicyInput& in) {
  for (auto* list : {&in.ro, &in.rw, &in.tmpfs, &in.hide})
    for (auto& v : *list) {
      v.text = posix_form(v.text);
      v.base = posix_form(v.base);
    }
  if (in.chdir) {
    in.chdir->text = posix_form(in.chdir->text);
    in.chdir->base = posix_form(in.chdir->base);
  }
}

Result<std::string> to_windows_path(const std::string& posix, const WinHostFacts& facts,
                                    const std::string& input) {
  auto backslashed = [](std::string s) {
    std::replace(s.begin(), s.end(), '/', '\\');
    return s;
  };
  if (posix.size() >= 3 && posix[0] == '/' && std::isalpha(static_cast<unsigned char>(posix[1])) &&
      posix[2] == ':') {
    std::string rest = posix.substr(3);
    return std::string(1, static_cast<char>(std::toupper(static_cast<unsigned char>(posix[1])))) + ":" +
           (rest.empty() ? "\\" : backslashed(rest));
  }
  if (!facts.on_windows && !facts.home_posix.empty() && is_beneath(posix, facts.home_posix))
    return facts.userprofile + backslashed(posix.substr(facts.home_posix.size()));
  if (!facts.on_windows && !posix.empty() && posix[0] == '/') return "Z:" + backslashed(posix);
  return invalid(input, "cannot be mapped to a Windows path (" + posix + ")",
                 "use a drive path such as C:/work/src, or ~/... for %USERPROFILE%");
}

std::string quote_argument(const std::string& arg) {
  if (!arg.empty() && arg.find_first_of(" \t\n\v\"") == std::string::npos) return arg;
  std::string out = "\"";
  size_t backslashes = 0;
  for (char c : arg) {
    if (c == '\\') {
      ++backslashes;
      continue;
    }
    // Backslashes are literal unless they precede a quote: then each is doubled and the quote escaped.
    out.append(c == '"' ? backslashes * 2 + 1 : backslashes, '\\');
    backslashes = 0;
    out += c;
  }
  out.append(backslashes * 2, '\\');  // before the closing quote
  return out + "\"";
}

std::optional<std::string> quote_cmd_argument(const std::string& arg) {
  if (!cmd_safe(arg)) return std::nullopt;
  // Inside quotes cmd.exe takes & | < > ^ ( ) @ and the separators , ; = as text.
  if (!arg.empty() && arg.find_first_of(" \t&|<>^()@,;=") == std::string::npos) return arg;
  return "\"" + arg + "\"";
}

Result<ResolvedCommand> resolve_command(const std::vector<std::string>& argv, const std::string& cwd,
                                        const std::vector<std::string>& env, const WinHostFacts& facts) {
  ResolvedCommand r;
  if (argv.empty()) return r;
  if (!facts.kind) {  // a dry-run that cannot ask the host: the rules below run on Windows
    for (const auto& a : argv) r.command_line += (r.command_line.empty() ? "" : " ") + quote_argument(a);
    return r;
  }
  std::vector<std::string> exts;
  for (const auto& e : split_list(env_get(env, "PATHEXT"))) exts.push_back(upper(e));
  if (exts.empty()) exts = {".COM", ".EXE", ".BAT", ".CMD"};
  auto is_file = [&](const std::string& path) { return facts.kind(path) == 'f'; };
  // The name as given when its extension is an executable one, else with each PATHEXT extension.
  auto try_base = [&](const std::string& base) -> std::string {
    const std::string ext = extension_of(base);
    if (!ext.empty() && std::find(exts.begin(), exts.end(), ext) != exts.end() && is_file(base)) return base;
    for (const auto& e : exts)
      if (is_file(base + e)) return base + e;
    return {};
  };
  auto absolute = [](const std::string& path) {
    return (path.size() >= 3 && path[1] == ':' && path[2] == '\\') || path.rfind("\\\\", 0) == 0;
  };
  std::string name = argv[0], found;
  std::replace(name.begin(), name.end(), '/', '\\');
  if (name.find_first_of("\\:") != std::string::npos) {
    // "\dir\x" is rooted on the working directory's drive, anything else relative to the directory.
    found = try_base(lexical_full_path(absolute(name)         ? name
                                       : name.front() == '\\' ? cwd.substr(0, 2) + name
                                                              : cwd + "\\" + name));
  } else {
    // The sandbox's PATH only, absolute entries only: "." or a relative entry would search the
    // untrusted working directory, which is exactly what cage resolves the command itself to avoid.
    for (const auto& dir : split_list(env_get(env, "PATH"))) {
      if (!absolute(dir)) continue;
      std::string d = dir;
      while (d.size() > 3 && d.back() == '\\') d.pop_back();
      if (!(found = try_base(d + (d.back() == '\\' ? "" : "\\") + name)).empty()) break;
    }
  }
  if (found.empty())
    return Error{ErrorClass::not_found, argv[0] + ": command not found",
                 "check the name and the sandbox's PATH and PATHEXT (the working directory is not searched)",
                 argv[0], 0};
  const std::string ext = extension_of(found);
  if (ext != ".BAT" && ext != ".CMD") {
    r.application = found;
    for (const auto& a : argv) r.command_line += (r.command_line.empty() ? "" : " ") + quote_argument(a);
    return r;
  }
  // A batch file runs in cmd.exe, which re-parses its whole command line: /d skips AutoRun commands,
  // /v:off delayed expansion, /s /c runs what lies between the outer quotes.
  std::string comspec = env_get(env, "COMSPEC");
  if (!absolute(comspec)) {
    std::string root = env_get(env, "SYSTEMROOT");
    comspec = (absolute(root) ? root : std::string("C:\\Windows")) + "\\System32\\cmd.exe";
  }
  if (!cmd_safe(found))
    return invalid(argv[0], "the batch file's path holds a character cmd.exe would expand (" + found + ")",
                   "move it, or run it with cmd.exe /c yourself");
  std::string line = "\"" + found + "\"";
  for (size_t i = 1; i < argv.size(); ++i) {
    auto q = quote_cmd_argument(argv[i]);
    if (!q)
      return invalid(argv[i],
                     "argument " + std::to_string(i) + " of the batch file " + found +
                         " holds %, !, \", a line break or NUL, which cmd.exe expands or splits even "
                         "inside quotes",
                     "pass it through a file or an environment variable (--setenv), or call the program "
                     "the batch file wraps directly");
    line += " " + *q;
  }
  r.application = comspec;
  r.command_line = quote_argument(comspec) + " /d /v:off /s /c \"" + line + "\"";
  return r;
}

std::vector<std::string> build_environment(const policy::EnvPolicy& env,
                                           const std::vector<std::pair<std::string, std::string>>& host,
                                           const std::vector<std::pair<std::string, std::string>>& forced) {
  return policy::build_environment(env, host, forced, kPassedEnv, /*fold_case=*/true);
}

Result<WinPlan> compile(const policy::Policy& p, const WinHostFacts& facts,
                        const std::vector<std::pair<std::string, std::string>>& caller_env) {
  if (auto s = policy::refuse_linux_only(p, "Windows"); !s) return s.error();  // never a silent drop
  if (!p.tmpfs.empty())
    return unavailable(p.tmpfs.front().origin, "Windows has no private tmpfs mounts",
                       "use --rw on a scratch directory instead");
  if (p.limits.tmpfs_bytes)  // its private TMPDIR is a directory on the host's disk: nothing to size
    return unavailable("--tmpfs-size", "Windows has no private tmpfs mounts to size",
                       "drop --tmpfs-size (the run's TMPDIR is a directory on the host's disk)");
  if (!p.net.empty() && !p.share_net && p.net_mode == policy::Policy::NetMode::transparent)
    return unavailable("--net-mode transparent", "Windows has no transparent mode: only the proxy is carried",
                       "use --net-mode proxy (clients that honour HTTPS_PROXY)");
  WinPlan plan;
  plan.argv = p.argv;
  plan.proxy_port = facts.proxy_port ? facts.proxy_port : 3128;
  plan.proxy = !p.net.empty() && !p.share_net;
  plan.container.name = container_name_of(facts);
  const std::string local =
      facts.localappdata.empty() ? facts.userprofile + "\\AppData\\Local" : facts.localappdata;
  const std::string id = run_id(facts);
  plan.journal.dir = local + "\\cage\\restore";
  plan.journal.file = plan.journal.dir + "\\run-" + id + ".journal";
  plan.journal.run = id;
  plan.journal.labels = label_lock_dir(plan.journal.dir);
  // The caller, SYSTEM and the run's container, not inherited from LOCALAPPDATA, labelled Low so
  // the run (at Low integrity) can write it.
  plan.temp.path = local + "\\cage\\tmp\\run-" + id;
  plan.temp.sddl = "D:P(A;OICI;FA;;;<USER>)(A;OICI;FA;;;SY)(A;OICI;0x1301bf;;;<PACKAGE>)S:(ML;OICI;NW;;;LW)";
  plan.temp.subdirs = {"AppData\\Roaming", "AppData\\Local"};
  auto cwd = to_windows_path(p.cwd, facts, "--chdir " + p.cwd);
  if (!cwd) return cwd.error();
  plan.cwd = *cwd;
  std::string profile = facts.userprofile;
  if (!p.home.empty())
    if (auto h = to_windows_path(p.home, facts, "HOME"); h) profile = *h;
  std::vector<std::string> system_roots;  // what ALL APPLICATION PACKAGES reads by Windows' own ACLs
  for (const auto& [k, v] : caller_env)
    for (const char* name : {"SYSTEMROOT", "PROGRAMFILES", "PROGRAMFILES(X86)", "PROGRAMW6432"})
      if (upper(k) == name && v.size() > 3 && v[1] == ':') system_roots.push_back(v);
  if (auto s = grants(plan, p, facts, local, profile, system_roots); !s) return s.error();
  if (!p.system_view)
    plan.gaps.push_back(
        "--no-system: Windows system directories stay readable (Windows grants them to every "
        "AppContainer)");
  if (!p.rw.empty())
    plan.gaps.push_back(
        "writes: other Low-integrity processes of yours can write the --rw paths during the run (they "
        "carry a Low label)");
  network(plan, p, facts);
  limits(plan, p.limits, facts);
  if (p.limits.strict && !p.limits.rlimits.empty())
    return unavailable(p.limits.rlimits.front().origin, "Windows has no resource limits of this kind",
                       "drop the limit or --strict-limits");
  std::vector<std::pair<std::string, std::string>> forced = {{"USERPROFILE", profile},
                                                              {policy::kInsideMarker, "1"}};
  if (profile.size() >= 2 && profile[1] == ':') {
    forced.emplace_back("HOMEDRIVE", profile.substr(0, 2));
    forced.emplace_back("HOMEPATH", profile.size() > 2 ? profile.substr(2) : "\\");
  }
  if (!p.run_id.empty()) forced.emplace_back(policy::kRunIdVariable, p.run_id);
  forced.emplace_back("TEMP", plan.temp.path);
  forced.emplace_back("TMP", plan.temp.path);
  // The real ones are not granted: programs that keep state there get the run's private copies.
  forced.emplace_back("APPDATA", plan.temp.path + "\\" + plan.temp.subdirs[0]);
  forced.emplace_back("LOCALAPPDATA", plan.temp.path + "\\" + plan.temp.subdirs[1]);
  if (plan.proxy)
    // cage's proxy listens on the host's loopback, where any local process could reach it: with a
    // secret it serves only clients that present it (the URLs carry it).
    for (auto& kv : facts.proxy_secret.empty()
                        ? proxy::proxy_environment(plan.proxy_port, p.net)
                        : proxy::proxy_environment_with_secret(std::to_string(plan.proxy_port),
                                                               facts.proxy_secret, p.net))
      forced.push_back(std::move(kv));
  plan.env = win::build_environment(p.env, caller_env, forced);
  auto cmd = resolve_command(p.argv, plan.cwd, plan.env, facts);
  if (!cmd) return cmd.error();
  plan.application = cmd->application;
  plan.command_line = cmd->command_line;
  // Every ACE names the container's package SID, known now that the container is chosen.
  plan.container.sid = package_sid_of(plan.container.name);
  auto with_sid = [&](std::string sddl) {
    for (size_t at; (at = sddl.find("<PACKAGE>")) != std::string::npos;)
      sddl.replace(at, 9, plan.container.sid);
    return sddl;
  };
  for (auto& a : plan.acl) a.sddl = with_sid(a.sddl);
  plan.temp.sddl = with_sid(plan.temp.sddl);
  return plan;
}

}  // namespace cage::win
