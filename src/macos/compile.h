// macos::compile: Policy + MacHostFacts -> an SBPL profile for sandbox-exec, plus the rest of a macOS
// run (environment, limits). Pure: what it needs from the Mac comes through MacHostFacts, so golden
// tests (tests/unit/macos_sbpl_test.cc) and the fuzzer (tests/fuzz/sbpl_fuzz.cc) run on Linux.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "policy/policy.h"

namespace cage::macos {

enum class PathKind { missing, file, dir };

struct MacHostFacts {
  // Kind of a canonical path on the Mac (stat(2) there; a table in tests).
  std::function<PathKind(const std::string&)> kind;
  // realpath(3) on the Mac; empty elsewhere, where only the fixed links below are applied.
  std::function<std::optional<std::string>(const std::string&)> resolve;
  uint16_t proxy_port = 0;  // 127.0.0.1:PORT of cage's proxy (run time); 0: not known yet (dry-run)
  std::string proxy_secret;  // the run's proxy secret (run time; the *_PROXY URLs carry it); "" in tests
  std::string private_tmp;  // the run's own TMPDIR, read-write; empty: none
  std::string private_home;  // the run's own empty HOME, read-write (run time); empty: not made yet (dry-run)
  // The developer directories xcrun may use (developer_dirs below); empty: xcode-select's defaults.
  std::vector<std::string> developer_dirs;
};

// The developer directory the xcrun shims (/usr/bin/git, python3, make, clang) run tools from, as
// xcode-select(1) picks it: $DEVELOPER_DIR, else the target of the link `xcode-select -s` writes
// (/var/db/xcode_select_link), else its default search (/Applications/Xcode.app, then the Command
// Line Tools). An Xcode bundle's .../X.app/Contents/Developer is widened to X.app, whose Info.plist
// and version.plist xcrun reads too.
std::vector<std::string> developer_dirs(const std::string& env_developer_dir,
                                        const std::optional<std::string>& select_link_target);

// A link in the private HOME to a grant beneath the real $HOME: NAME (relative, e.g. ".gitconfig"
// or ".config/git") -> TARGET (the granted path), so ~/NAME is found where a program looks for it.
struct HomeLink {
  std::string name, target;
};

// /tmp, /var and /etc are symlinks into /private on macOS; sandbox rules match the resolved path only.
std::string canonical_mac_path(const std::string& path, const MacHostFacts& facts);

// SBPL string literal: backslash and double quote escaped, the rest verbatim (control characters
// never reach here: validate() rejects them, and quote_sbpl replaces any with '?' as a last guard).
std::string quote_sbpl(const std::string& s);

Result<std::string> compile_sbpl(const policy::Policy& policy, const MacHostFacts& facts);

struct MacPlan {
  std::string sbpl;
  std::vector<std::string> env;   // NAME=VALUE, the workload's whole environment
  std::vector<std::string> argv;  // the workload's argv (sandbox-exec is prepended by execute)
  std::string cwd;
  policy::Limits limits;
  std::vector<std::string> unenforced;  // limits macOS cannot enforce ("--pids 64: no per-run ...")
  bool private_home = false;            // HOME is the run's own empty directory, not the caller's
  std::vector<HomeLink> home_links;     // made in it by execute before the command starts
  // What the profile lets the workload read (resolved paths; beneath `readable`, not beneath `hidden`),
  // for PATH and the command's lookup; and the PATH entries left out of the workload's PATH.
  std::vector<std::string> readable, hidden, path_dropped;
};

// Whether the profile lets the workload read PATH (a resolved, /private/... path).
bool readable_in(const MacPlan& plan, const std::string& path);

// The workload's PATH: the caller's without the absolute entries the profile does not let it read
// (appended to `dropped`); relative entries are kept, they name the workload's own directories.
std::string visible_path(const std::string& path, const std::function<bool(const std::string&)>& readable,
                         const std::function<std::string(const std::string&)>& canonical,
                         std::vector<std::string>& dropped);

// A candidate for the command as the Mac sees it (stat(2) following links, realpath(3); a table in tests).
struct CommandFile {
  bool exists = false, dir = false;
  uint32_t mode = 0;  // st_mode
  std::string real;   // its resolved path
};

// The absolute path of the command that sandbox-exec is to run, decided outside the sandbox as
// lx::compile does (resolve_command): the absolute PATH entries in order (PATH is the workload's,
// already without the unreadable entries), or the path given relative to CWD. Not found (127), not
// executable or a directory (126), setuid/setgid (capability_denied), found only where the profile
// does not let the workload read (127, naming where it is).
Result<std::string> resolve_command(const std::string& cmd, const std::string& path, const std::string& cwd,
                                    const std::function<CommandFile(const std::string&)>& lookup,
                                    const std::function<bool(const std::string&)>& readable);

Result<MacPlan> compile(const policy::Policy& policy, const MacHostFacts& facts,
                        const std::vector<std::pair<std::string, std::string>>& caller_env);

// Facts from the machine cage runs on (stat/realpath); on a non-Mac host only the fixed links apply.
MacHostFacts make_real_mac_facts(bool on_mac);

}  // namespace cage::macos

namespace cage::macos {
// --dry-run --target macos (on any host): the SBPL profile, then the command and environment as SBPL
// comments (so the text can be given to sandbox-exec -f as is) with verbose; a summary without; with
// json, one JSON object.
Result<std::string> render_dry_run(const policy::Policy& policy,
                                   const std::vector<std::pair<std::string, std::string>>& caller_env, bool json,
                                   bool verbose);
}  // namespace cage::macos
