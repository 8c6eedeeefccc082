// macos::compile: decides a whole macOS run. The SBPL profile starts from (deny default) and allows
// what a program needs to start (dyld, its shared cache, system libraries), the grants (literal for
// files, subpath for directories, at their resolved /private/... paths), the hidden paths denied after
// them, and TCP to cage's proxy only. Golden: tests/unit/macos_sbpl_test.cc; fuzz: tests/fuzz/sbpl_fuzz.cc.
#include "macos/compile.h"

#include <sys/stat.h>
#if !defined(_WIN32)
#include <unistd.h>  // readlink
#endif

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <set>
#include <sstream>

#include "policy/rlimits.h"
#include "proxy/env.h"

namespace cage::macos {

namespace {

using policy::is_beneath;

// Needed by every program: the dynamic linker, libSystem, and the shared cache it maps (since macOS
// 11 system libraries exist only inside the cache; macOS 13+ keeps it in the Preboot cryptex).
const char* const kStartPaths[] = {
    "/usr/lib", "/System/Library", "/System/Cryptexes", "/System/Volumes/Preboot/Cryptexes",
    "/private/var/db/dyld", "/private/var/db/timezone", "/usr/share/zoneinfo", nullptr};
// The default view (dropped by --no-system): tools, shared data, system configuration. No home, no
// /Users, no /private/var (other users' temp and caches), no keychains.
// /Library/Frameworks holds the python.org and other framework installs /usr/local/bin links into.
const char* const kSystemPaths[] = {"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/libexec", "/usr/share",
                                    "/usr/local", "/opt/homebrew", "/Library/Preferences", "/Library/Apple",
                                    "/Library/Frameworks", "/private/etc", nullptr};
// Files of the default view: /bin/sh is a shim that execs the shell this link names (sh(1)); the
// xcrun shims find the selected developer directory through xcode-select's link (and the older
// /var/select one), then run its tools (developer_dirs).
const char* const kSystemFiles[] = {"/private/var/select/sh", "/private/var/db/xcode_select_link",
                                    "/private/var/select/developer_dir", nullptr};
// Devices every program may open for reading and writing.
const char* const kDevices[] = {"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/tty",
                                "/dev/dtracehelper", nullptr};
// confstr(_CS_DARWIN_USER_TEMP_DIR) asks dirhelper for the user's /var/folders directory; xcrun (every
// /usr/bin developer shim) calls it for its cache and fails without an answer. sandbox-runtime's
// profile generator lists it among its base services; Codex's only with network. The answer is a
// path: writing there stays denied (an xcrun cache a later unsandboxed xcrun trusts), so the cache
// goes to the run's private TMPDIR or nowhere.
constexpr const char* kDirhelper = "com.apple.bsd.dirhelper";
// Mach services: user and group lookups (getpwuid), the system log, TLS trust evaluation, dirhelper.
const char* const kMachServices[] = {"com.apple.system.opendirectoryd.libinfo",
                                     "com.apple.system.opendirectoryd.membership", "com.apple.system.logger",
                                     "com.apple.logd", "com.apple.trustd.agent",
                                     "com.apple.system.notification_center", kDirhelper, nullptr};
// With --net: Security.framework evaluates certificates out of process, in trustd and securityd
// (gh, terraform and other Go tools fail "x509: OSStatus -26276" without them; rustls-native-certs
// finds no roots), so peers' network profiles add these; trustd.agent is above already.
const char* const kTlsMachServices[] = {"com.apple.trustd", "com.apple.SecurityServer", "com.apple.ocspd",
                                        nullptr};

// Comments carry flag origins; a control character would end the comment early, so none survive.
std::string comment_safe(std::string s) {
  for (auto& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return s;
}

struct Rule {
  std::string path;
  bool is_dir;
  std::string why;
};

std::string filter(const Rule& r) { return std::string(r.is_dir ? "(subpath " : "(literal ") + quote_sbpl(r.path) + ")"; }

struct Profile {
  std::ostringstream out;
  std::set<std::string> ancestors;  // directories whose metadata path lookup needs (realpath, getcwd)

  void note_ancestors(const std::string& path) {
    for (std::string p = path; p != "/";) {
      p = p.substr(0, std::max<size_t>(p.rfind('/'), 1));
      ancestors.insert(p);
    }
  }
  void group(const char* ops, const char* head, const std::vector<Rule>& rules) {
    if (rules.empty()) return;
    out << "\n;; " << head << "\n";
    for (const auto& r : rules) out << "(allow " << ops << " " << filter(r) << ")  ; " << comment_safe(r.why) << "\n";
  }
};

// The path with only the system's /tmp, /var and /etc links followed (none of a writer's).
std::string through_fixed_links(const std::string& path) {
  for (const char* link : {"/tmp", "/var", "/etc"})
    if (is_beneath(path, link)) return "/private" + path;
  return path;
}

// A grant that resolves through a symbolic link inside a --rw grant names whatever the workload (or
// an earlier run with that --rw) last pointed the link at: `--rw . --rw out` with out -> ~/.ssh would
// allow writes to ~/.ssh, and Seatbelt matches only the resolved path, so the profile cannot pin the
// link. Refused as on Linux (lx::refuse_link_inside_rw: the same rule, error and remedy); the
// system's /tmp, /var and /etc links are followed, they are no writer's. Only realpath(3) on the Mac
// sees links: without it (another host's dry-run, a missing path) nothing is refused.
Status refuse_link_inside_rw(const policy::Policy& p, const MacHostFacts& facts, const policy::Grant& g) {
  const auto resolved = facts.resolve ? facts.resolve(g.path) : std::nullopt;
  if (!resolved || *resolved == through_fixed_links(policy::resolve_dot_dot(g.path))) return Ok{};
  const std::string& real = *resolved;
  for (const auto& w : p.rw) {
    const std::string wreal = canonical_mac_path(w.path, facts);
    bool inside = is_beneath(g.path, w.path) || is_beneath(g.path, wreal) ||
                  is_beneath(through_fixed_links(g.path), wreal);
    if (inside && w.path != g.path)
      return invalid(g.origin, "resolves through a symbolic link inside " + w.origin + " (to " + real + ")",
                     "grant the real path, " + real + ", if that is what you mean");
  }
  return Ok{};
}

Result<Rule> grant_rule(const policy::Policy& p, const policy::Grant& g, const MacHostFacts& facts) {
  std::string path = canonical_mac_path(g.path, facts);
  // Asked of the path as given: stat follows the /private links on the Mac, and on another host
  // (a cross-target dry-run) only the given path can exist.
  PathKind k = facts.kind ? facts.kind(g.path) : PathKind::dir;
  if (k == PathKind::missing)
    return invalid(g.origin, "no such file or directory (" + path + ")", "create it first, or check the path");
  if (auto s = refuse_link_inside_rw(p, facts, g); !s) return s.error();
  return Rule{path, k == PathKind::dir, g.origin};
}

bool strictly_beneath(const std::string& path, const std::string& dir) { return path != dir && is_beneath(path, dir); }

bool in_any(const std::string& path, const std::vector<Rule>& rules, bool strictly) {
  return std::any_of(rules.begin(), rules.end(), [&](const Rule& r) {
    return strictly ? strictly_beneath(path, r.path) : is_beneath(path, r.path);
  });
}

// Seatbelt rules match paths, and the last matching rule wins: a --ro grant beneath a --rw grant is
// denied writes after the grants (else the --rw allow matches it), a --rw grant beneath that one is
// allowed again, and the hidden paths are denied after both.
void nested_read_only(Profile& pr, const std::vector<Rule>& nested_ro, const std::vector<Rule>& rw) {
  if (nested_ro.empty()) return;
  auto& o = pr.out;
  o << "\n;; read-only grants beneath read-write grants: writes denied after the grants\n";
  for (const auto& r : nested_ro) o << "(deny file-write* " << filter(r) << ")  ; " << comment_safe(r.why) << "\n";
  std::vector<Rule> again;
  for (const auto& w : rw)
    if (in_any(w.path, nested_ro, true)) again.push_back(w);
  pr.group("file-read* file-write*", "read-write grants beneath those: allowed again", again);
}

// A path rule still holds after a rename, but renaming a directory above a nested grant moves the
// protected files out from under it (a hidden .env becomes readable, a --ro hook writable) and lets
// the workload put its own files at the old path. So every directory between a --rw grant and a
// nested --ro or --hide is denied file-write-unlink, the operation Seatbelt checks on the source of
// rename(2) (sandbox-runtime's generateMoveBlockingRules denies it on the ancestors of its protected
// paths for the same reason), and so is each --rw grant itself, which its own allow would let move
// out of the directory above (a --ro one, such as the current directory): as on Linux, where every
// grant is a mount point that cannot be renamed. The nested grants are denied file-write* whole
// (subpath, so the path itself cannot be unlinked, renamed or created: Codex carves its read-only
// .git and .codex out of a writable root the same way, openai/codex #1765 and #15067; they sit
// directly in the root, while a cage grant may be deeper); hard links need file-link, which the
// profile never allows.
void pin_paths(Profile& pr, const std::vector<Rule>& nested, const std::vector<Rule>& rw, size_t user_rw) {
  std::set<std::string> pinned;
  for (size_t i = 0; i < user_rw; ++i) pinned.insert(rw[i].path);
  for (const auto& r : nested)
    for (std::string d = r.path; d != "/";) {
      d = d.substr(0, std::max<size_t>(d.rfind('/'), 1));
      if (in_any(d, rw, false)) pinned.insert(d);
    }
  if (pinned.empty()) return;
  pr.out << "\n;; the read-write grants and the directories between them and a nested grant: not renamed or\n"
            ";; removed (rename(2) checks file-write-unlink on its source), so nothing moves out of its rule\n"
            "(deny file-write-unlink";
  for (const auto& d : pinned) pr.out << " (literal " << quote_sbpl(d) << ")";
  pr.out << ")\n";
}

// The current directory is shown read-only unless that shows far more than a project: "/", or
// $HOME and its ancestors (which hold ~/.ssh and the keychains).
bool cwd_shown(const policy::Policy& p, const MacHostFacts& facts) {
  const std::string home = p.home.empty() ? "" : canonical_mac_path(p.home, facts);
  const std::string cwd = canonical_mac_path(p.cwd, facts);
  return p.cwd_visible && cwd != "/" && (home.empty() || !is_beneath(home, cwd));
}

// Seatbelt answers EPERM inside the caller's home, which git (~/.gitconfig), npm, pip and cargo
// treat as fatal, where a missing file is fine (nono's tracker reports it for every git command).
// So the run gets an empty HOME of its own, as on Linux (a tmpfs over $HOME there; the Landlock-only
// private directory), unless a grant shows the real one.
bool uses_private_home(const policy::Policy& p, const MacHostFacts& facts) {
  if (p.home.empty()) return false;
  const std::string home = canonical_mac_path(p.home, facts);
  if (home == "/") return false;
  for (const auto* list : {&p.ro, &p.rw})
    for (const auto& g : *list)
      if (is_beneath(home, canonical_mac_path(g.path, facts))) return false;
  return true;
}

// On Linux the grants beneath $HOME are mounted at their places in the empty HOME; here each is a
// link there to the granted path, so `--ro ~/.gitconfig` is read as ~/.gitconfig (the profile
// decides what the link reaches: Seatbelt checks the resolved path). The shown current directory
// too, as on Linux. A grant beneath another is reached through that one's link: no link is ever
// made through a link, into the real home.
std::vector<HomeLink> home_links(const policy::Policy& p, const MacHostFacts& facts) {
  const std::string home = canonical_mac_path(p.home, facts);
  std::vector<std::string> shown;
  for (const auto* list : {&p.ro, &p.rw})
    for (const auto& g : *list) shown.push_back(canonical_mac_path(g.path, facts));
  if (cwd_shown(p, facts)) shown.push_back(canonical_mac_path(p.cwd, facts));
  std::sort(shown.begin(), shown.end());  // a directory sorts before everything beneath it
  std::vector<HomeLink> links;
  for (const auto& path : shown) {
    if (!strictly_beneath(path, home)) continue;
    auto through = [&](const HomeLink& l) { return is_beneath(path, l.target); };
    if (std::any_of(links.begin(), links.end(), through)) continue;
    links.push_back(HomeLink{path.substr(home.size() + 1), path});
  }
  return links;
}

void preamble(Profile& pr) {
  auto& o = pr.out;
  o << "(version 1)\n(deny default)\n";
  o << "\n;; processes: the command and its children, all under this profile\n"
       "(allow process-exec)\n(allow process-fork)\n"
       "(allow signal (target same-sandbox))\n(allow process-info* (target same-sandbox))\n"
       "(allow sysctl-read)\n(allow user-preference-read)\n(allow ipc-posix-sem)\n";
  o << "(allow mach-lookup";
  for (const char* const* m = kMachServices; *m; ++m) o << "\n  (global-name " << quote_sbpl(*m) << ")";
  o << ")\n";
  o << "\n;; terminals and the usual devices\n(allow pseudo-tty)\n"
       "(allow file-read* file-write* file-ioctl (literal \"/dev/ptmx\") (regex #\"^/dev/ttys[0-9]+$\"))\n";
  o << "(allow file-read* file-write-data file-ioctl";
  for (const char* const* d = kDevices; *d; ++d) o << " (literal " << quote_sbpl(*d) << ")";
  o << ")\n";
  // What every program may look at, as in Codex's platform defaults (after Chromium's common.sb): the
  // root directory itself (getcwd, realpath; its names only, nothing beneath), the metadata of /dev
  // (clang stats it before /dev/null) and of the /etc, /tmp and /var links, and /dev/fd with the
  // /dev/std* links to it, which reopen descriptors the program already holds.
  o << "\n;; the root directory itself, /dev and the system's links (metadata), the program's descriptors\n"
       "(allow file-read* (literal \"/\"))\n"
       "(allow file-read-metadata (literal \"/dev\") (literal \"/etc\") (literal \"/tmp\") (literal \"/var\")"
       " (literal \"/dev/stdin\") (literal \"/dev/stdout\") (literal \"/dev/stderr\"))\n"
       "(allow file-read* file-write-data (subpath \"/dev/fd\"))\n";
}

// TIOCSTI pushes bytes into a terminal's input queue: a workload on the caller's terminal could type
// a command into the shell that started cage once it exits (bubblewrap's CVE-2017-5226). The
// terminal's other ioctls stay allowed (termios, window size, TIOCSPGRP for job control). Written as a
// number: sandbox-exec on macOS 14.2 rejects the symbolic name ("unbound variable: TIOCSTI",
// openai/codex issue #45119), and ioctl-command takes an integer (Apple's own profiles pass it
// (_IO "h" 4)). Emitted last, so no later allow of file-ioctl can match after it.
constexpr unsigned long kTiocsti = 0x80017472;  // _IOW('t', 114, char) in <sys/ttycom.h>

void closing(Profile& pr) {
  pr.out << "\n;; TIOCSTI (_IOW('t', 114, char)) on any descriptor: no typing into the caller's terminal\n"
         << "(deny file-ioctl (ioctl-command " << kTiocsti << "))\n";
}

}  // namespace

std::string quote_sbpl(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  }
  return out + "\"";
}

std::string canonical_mac_path(const std::string& path, const MacHostFacts& facts) {
  if (facts.resolve)
    if (auto r = facts.resolve(path)) return *r;
  return through_fixed_links(path);
}

namespace {
// The profile; with `plan`, also what it lets the workload read (its readable and hidden lists).
Result<std::string> profile(const policy::Policy& p, const MacHostFacts& facts, MacPlan* plan) {
  if (!p.tmpfs.empty())
    return unavailable(p.tmpfs.front().origin, "macOS has no private tmpfs mounts",
                       "use --rw on a scratch directory instead");
  if (p.limits.tmpfs_bytes)  // its private TMPDIR is a directory on the host's disk: nothing to size
    return unavailable("--tmpfs-size", "macOS has no private tmpfs mounts to size",
                       "drop --tmpfs-size (the run's TMPDIR is a directory on the host's disk)");
  Profile pr;
  preamble(pr);
  std::vector<Rule> start, system, ro, rw, hide;
  for (const char* const* s = kStartPaths; *s; ++s) start.push_back(Rule{*s, true, "program start-up"});
  if (p.system_view) {
    for (const char* const* s = kSystemPaths; *s; ++s) system.push_back(Rule{*s, true, "default view"});
    const auto dev = facts.developer_dirs.empty() ? developer_dirs("", std::nullopt) : facts.developer_dirs;
    for (const auto& d : dev) system.push_back(Rule{d, true, "developer directory (xcode-select)"});
    for (const char* const* s = kSystemFiles; *s; ++s) system.push_back(Rule{*s, false, "default view"});
  }
  for (const auto& g : p.ro) {
    auto r = grant_rule(p, g, facts);
    if (!r) return r.error();
    ro.push_back(*r);
  }
  const std::vector<Rule> ro_grants = ro;  // the user's --ro grants, without the current directory
  std::string cwd = canonical_mac_path(p.cwd, facts);
  if (cwd_shown(p, facts)) ro.push_back(Rule{cwd, true, "current directory (read-only)"});
  for (const auto& g : p.rw) {
    auto r = grant_rule(p, g, facts);
    if (!r) return r.error();
    rw.push_back(*r);
  }
  const size_t user_rw = rw.size();
  if (!facts.private_tmp.empty()) rw.push_back(Rule{facts.private_tmp, true, "private TMPDIR"});
  if (!facts.private_home.empty() && uses_private_home(p, facts))
    rw.push_back(Rule{facts.private_home, true, "private HOME (empty, links to the grants beneath $HOME)"});
  for (const auto& g : p.hide) {
    std::string path = canonical_mac_path(g.path, facts);
    if (auto s = refuse_link_inside_rw(p, facts, g); !s) return s.error();
    hide.push_back(Rule{path, true, g.origin});
  }
  for (const auto* list : {&ro, &rw}) for (const auto& r : *list) pr.note_ancestors(r.path);
  for (const char* const* s = kSystemFiles; p.system_view && *s; ++s) pr.note_ancestors(*s);
  // The paths as given too: stat("/tmp/x") reads the /tmp link itself before it reaches /private/tmp.
  for (const auto* list : {&p.ro, &p.rw}) for (const auto& g : *list) pr.note_ancestors(g.path);
  pr.note_ancestors(cwd);
  pr.ancestors.insert(cwd);  // getcwd() and `cd .` need the start directory's own metadata
  pr.group("file-read*", "program start-up: dyld, libSystem, the shared cache", start);
  pr.group("file-read*", "default view (read-only)", system);
  pr.group("file-read*", "read-only grants", ro);
  pr.group("file-read* file-write*", "read-write grants", rw);
  auto& o = pr.out;
  o << "\n;; path lookup: metadata (not content) of the directories above the grants\n(allow file-read-metadata";
  for (const auto& a : pr.ancestors) o << " (literal " << quote_sbpl(a) << ")";
  o << ")\n";
  std::vector<Rule> nested_ro, nested;  // --ro grants beneath --rw; those and the hidden paths there
  for (const auto& r : ro_grants)
    if (in_any(r.path, rw, true)) nested_ro.push_back(r);
  nested_read_only(pr, nested_ro, rw);
  if (!hide.empty()) {
    o << "\n;; hidden paths: denied after the grants (the last matching rule wins)\n";
    for (const auto& h : hide) o << "(deny file-read* file-write* " << filter(h) << ")  ; " << comment_safe(h.why) << "\n";
  }
  nested = nested_ro;
  for (const auto& h : hide)
    if (in_any(h.path, rw, true)) nested.push_back(h);
  pin_paths(pr, nested, rw, user_rw);
  if (plan) {
    for (const auto* list : {&start, &system, &ro, &rw})
      for (const auto& r : *list) plan->readable.push_back(r.path);
    for (const auto& h : hide) plan->hidden.push_back(h.path);
  }
  // Loopback: Linux gives the workload a loopback of its own, where its test servers listen and its
  // clients reach them, and the host's 127.0.0.1 stays out of reach. Under sandbox-exec there is one
  // loopback, the host's, and SBPL's network filters cannot tell a port the workload listens on from
  // a host service (a database on 127.0.0.1:5432, an OAuth callback a browser is about to call).
  // Peers make it opt-in: sandbox-runtime's allowLocalBinding and Codex's allow_local_binding allow
  // bind, inbound and outbound by the *local* address, which reaches every host loopback service
  // too. So nothing local is allowed here but the proxy; --share-net (audited, as on Linux) gives the
  // host's network, loopback included.
  if (p.share_net) {
    o << "\n;; network: the host's, unchanged (--share-net: an escape hatch, named in the audit log)\n"
         "(allow network*)\n";
    o << ";; TLS certificate evaluation (Security.framework asks trustd and securityd)\n(allow mach-lookup";
    for (const char* const* m = kTlsMachServices; *m; ++m) o << " (global-name " << quote_sbpl(*m) << ")";
    o << ")\n";
    closing(pr);
    return o.str();
  }
  o << "\n;; network: nothing but cage's proxy on the loopback\n(deny network*)\n";
  if (!p.net.empty()) {
    if (facts.proxy_port == 0) o << ";; (dry-run: the proxy's port is chosen at run time; 3128 shown)\n";
    o << "(allow network-outbound (remote tcp " << quote_sbpl("localhost:" + std::to_string(facts.proxy_port ? facts.proxy_port : 3128))
      << "))\n";
    o << ";; TLS certificate evaluation (Security.framework asks trustd and securityd)\n(allow mach-lookup";
    for (const char* const* m = kTlsMachServices; *m; ++m) o << " (global-name " << quote_sbpl(*m) << ")";
    o << ")\n";
  }
  closing(pr);
  return o.str();
}
}  // namespace

Result<std::string> compile_sbpl(const policy::Policy& p, const MacHostFacts& facts) {
  return profile(p, facts, nullptr);
}

std::vector<std::string> developer_dirs(const std::string& env_developer_dir,
                                        const std::optional<std::string>& select_link_target) {
  auto bundle = [](std::string d) {
    while (d.size() > 1 && d.back() == '/') d.pop_back();
    const std::string tail = ".app/Contents/Developer";
    if (d.size() > tail.size() && d.compare(d.size() - tail.size(), tail.size(), tail) == 0)
      d.resize(d.size() - tail.size() + 4);
    return through_fixed_links(policy::lexically_clean(d));
  };
  if (!env_developer_dir.empty() && env_developer_dir[0] == '/') return {bundle(env_developer_dir)};
  if (select_link_target && !select_link_target->empty() && (*select_link_target)[0] == '/')
    return {bundle(*select_link_target)};
  return {"/Applications/Xcode.app", "/Library/Developer/CommandLineTools"};
}

bool readable_in(const MacPlan& plan, const std::string& path) {
  auto under = [&](const std::string& root) { return is_beneath(path, root); };
  return std::any_of(plan.readable.begin(), plan.readable.end(), under) &&
         std::none_of(plan.hidden.begin(), plan.hidden.end(), under);
}

// macOS's execvp(3) gives up at the first entry that fails with EPERM, and Seatbelt answers EPERM for
// every path the profile denies: a shim directory in the home (pyenv, asdf, mise, ~/.local/bin) before
// /usr/bin made sandbox-exec exit 71 on its exec of `python3`, and the workload's own execvp of a tool
// would fail the same way. So such entries are left out of the workload's PATH.
std::string visible_path(const std::string& path, const std::function<bool(const std::string&)>& readable,
                         const std::function<std::string(const std::string&)>& canonical,
                         std::vector<std::string>& dropped) {
  std::string out;
  bool first = true;
  for (size_t b = 0; b <= path.size();) {
    size_t end = std::min(path.find(':', b), path.size());
    const std::string entry = path.substr(b, end - b);
    b = end + 1;
    if (!entry.empty() && entry[0] == '/' && !readable(canonical(entry))) {
      dropped.push_back(entry);
      continue;
    }
    out += (first ? "" : ":") + entry;
    first = false;
  }
  return out;
}

Result<std::string> resolve_command(const std::string& cmd, const std::string& path, const std::string& cwd,
                                    const std::function<CommandFile(const std::string&)>& lookup,
                                    const std::function<bool(const std::string&)>& readable) {
  std::vector<std::string> candidates;
  if (cmd.find('/') != std::string::npos) {
    candidates.push_back(cmd[0] == '/' ? cmd : policy::lexically_clean(cwd + "/" + cmd));
  } else {
    std::stringstream ss(path);
    for (std::string dir; std::getline(ss, dir, ':');)  // relative entries: as lx::compile, not searched
      if (!dir.empty() && dir[0] == '/') candidates.push_back(dir + "/" + cmd);
  }
  std::string found_outside;
  for (const auto& c : candidates) {
    const CommandFile f = lookup(c);
    if (!f.exists) continue;
    if (!readable(f.real)) {
      if (found_outside.empty()) found_outside = c;
      continue;
    }
    if (f.dir) return Error{ErrorClass::exec_failed, "is a directory", "name a program", "COMMAND " + cmd, 0};
    if (f.mode & 06000)  // S_ISUID | S_ISGID, by number: the Windows build compiles this for --target macos
      return Error{ErrorClass::capability_denied, "refusing to run a setuid/setgid program (" + f.real + ")",
                   "cage never grants privilege; run an unprivileged tool", "COMMAND " + cmd, 0};
    if (!(f.mode & 0111))
      return Error{ErrorClass::exec_failed, "not executable (" + c + ")", "chmod +x it", "COMMAND " + cmd, 0};
    return c;
  }
  if (!found_outside.empty())
    return Error{ErrorClass::not_found,
                 "not visible inside the sandbox (found on the host at " + found_outside + ")",
                 "grant its directory with --ro", "COMMAND " + cmd, 0};
  return Error{ErrorClass::not_found, "command not found on the sandbox's PATH",
               "check the name, or grant it with --ro", "COMMAND " + cmd, 0};
}

Result<MacPlan> compile(const policy::Policy& p, const MacHostFacts& facts,
                        const std::vector<std::pair<std::string, std::string>>& caller_env) {
  if (auto s = policy::refuse_linux_only(p, "macOS"); !s) return s.error();  // never a silent drop
  MacPlan plan;
  auto sbpl = profile(p, facts, &plan);
  if (!sbpl) return sbpl.error();
  plan.sbpl = std::move(*sbpl);
  plan.argv = p.argv;
  plan.cwd = canonical_mac_path(p.cwd, facts);
  plan.limits = p.limits;
  // No cgroups on macOS: RLIMIT_NPROC counts all of the user's processes and RLIMIT_AS is not enforced.
  if (p.limits.memory_bytes) plan.unenforced.push_back("--memory: macOS has no per-run memory limit");
  if (p.limits.pids) plan.unenforced.push_back("--pids: macOS counts processes per user, not per run");
  if (p.limits.cpu) plan.unenforced.push_back("--cpu: macOS has no per-run CPU quota");
  // Linux-only resource limits are refused, not dropped: macOS has no such setrlimit resource.
  for (const auto& r : p.limits.rlimits)
    if (std::find(std::begin(policy::kPosixRlimitNames), std::end(policy::kPosixRlimitNames), r.name) ==
        std::end(policy::kPosixRlimitNames)) {
      std::string names;
      for (const char* n : policy::kPosixRlimitNames) names += (names.empty() ? "" : ", ") + std::string(n);
      return unavailable(r.origin, "macOS has no " + r.name + " resource limit", "drop it; macOS has " + names);
    }
  if (p.limits.strict && !plan.unenforced.empty())
    return unavailable("--strict-limits", plan.unenforced.front(), "drop the limit or --strict-limits");
  plan.private_home = uses_private_home(p, facts);
  if (plan.private_home) plan.home_links = home_links(p, facts);
  const std::string home = !plan.private_home           ? (p.home.empty() ? "/" : p.home)
                           : facts.private_home.empty() ? "<private HOME, made at run time>"
                                                        : facts.private_home;
  std::vector<std::pair<std::string, std::string>> forced = {{"HOME", home},
                                                              {"PWD", plan.cwd},
                                                              {policy::kInsideMarker, "1"}};
  if (!p.run_id.empty()) forced.emplace_back(policy::kRunIdVariable, p.run_id);
  if (!facts.private_tmp.empty()) forced.emplace_back("TMPDIR", facts.private_tmp);
  // The developer directory the profile shows was the caller's DEVELOPER_DIR: xcrun inside must pick
  // the same one, not the link's (which the profile may not show).
  for (const auto& [k, v] : caller_env)
    if (k == "DEVELOPER_DIR" && !v.empty() && v[0] == '/' && p.system_view) forced.emplace_back(k, v);
  // The proxy listens on the host's loopback, where any local process could reach it: at run time
  // the URLs carry the run's secret (dry-run shows where it goes).
  const uint16_t port = facts.proxy_port ? facts.proxy_port : 3128;
  const std::string secret = facts.proxy_secret.empty() && facts.proxy_port == 0 ? "SECRET" : facts.proxy_secret;
  if (!p.net.empty())
    for (auto& kv : secret.empty() ? proxy::proxy_environment(port, p.net)
                                   : proxy::proxy_environment_with_secret(std::to_string(port), secret, p.net))
      forced.push_back(std::move(kv));
  plan.env = policy::build_environment(p.env, caller_env, forced);
  if (std::none_of(plan.env.begin(), plan.env.end(), [](const std::string& e) { return e.rfind("PATH=", 0) == 0; }))
    plan.env.insert(plan.env.begin(), "PATH=/usr/bin:/bin:/usr/sbin:/sbin");
  for (auto& e : plan.env)
    if (e.rfind("PATH=", 0) == 0)
      e = "PATH=" + visible_path(
                        e.substr(5), [&](const std::string& d) { return readable_in(plan, d); },
                        [&](const std::string& d) { return canonical_mac_path(d, facts); },
                        plan.path_dropped);
  return plan;
}

MacHostFacts make_real_mac_facts(bool on_mac) {
  MacHostFacts f;
  f.kind = [](const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return PathKind::missing;
    return S_ISDIR(st.st_mode) ? PathKind::dir : PathKind::file;
  };
#if !defined(_WIN32)  // cage_core is built for Windows too, whose C library has no realpath
  const char* env_dev = std::getenv("DEVELOPER_DIR");
  std::optional<std::string> link;
  char target[PATH_MAX];
  ssize_t n = on_mac ? ::readlink("/private/var/db/xcode_select_link", target, sizeof target - 1) : -1;
  if (n > 0) link = std::string(target, static_cast<size_t>(n));
  f.developer_dirs = developer_dirs(env_dev ? env_dev : "", link);
  if (on_mac)
    f.resolve = [](const std::string& path) -> std::optional<std::string> {
      char buf[PATH_MAX];
      if (!::realpath(path.c_str(), buf)) return std::nullopt;
      return std::string(buf);
    };
#else
  (void)on_mac;
#endif
  return f;
}

}  // namespace cage::macos
