// The platform-neutral policy: what a run may read, write, see and reach. Built only by validate()
// from a PolicyInput (flags and profiles), immutable afterwards, and compiled per OS (lx::compile,
// macos::compile, win::compile). No OS headers here: this layer is unit-tested without privileges.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "policy/host_pattern.h"

namespace cage::policy {

// One raw value as given, with the place it came from ("--rw", "cage.toml:12 fs.rw"), so every error
// can name its input precisely.
struct Value {
  std::string text;
  std::string origin;  // the flag or profile key that gave it
  std::string base;    // directory relative paths resolve against (cwd, or a profile's directory)
  // A profile's string as written, before ${VAR} expansion ("" for flags): --print-profile prints
  // it, so "${HOME}/x" stays the loading user's home.
  std::string written = {};
  bool optional = false;  // a profile's { path = ..., optional = true }
};

enum class SeccompProfile { default_profile, relaxed, none };
std::string_view to_string(SeccompProfile p);

// Everything the user asked for, unvalidated. cli::parse and the profile loader fill it; later
// sources append to (lists) or replace (scalars) earlier ones.
struct PolicyInput {
  std::vector<Value> ro, rw, tmpfs, hide;
  std::vector<Value> env_pass, env_set, env_unset;
  std::vector<Value> env_secret;  // --secret NAME=@FILE|fd:N|env:VAR
  std::vector<Value> net;
  std::optional<Value> net_mode;  // --net-mode proxy|transparent|both
  std::vector<Value> rlimits;
  std::optional<Value> memory, pids, cpu, timeout, seccomp, chdir, hostname;
  std::optional<Value> max_output, max_stdout, max_stderr;  // --max-output (both streams), per stream
  std::optional<Value> tmpfs_size;  // --tmpfs-size / [limits] tmpfs_size: cage's private tmpfs mounts
  std::optional<Value> limits_preset;  // --limits NAME / [limits] preset: ceilings for the limits not given
  std::optional<Value> no_system, no_cwd, share_net, strict_limits;  // "true"/"false" with origin
  std::optional<Value> mechanism;        // --mechanism auto|namespaces|landlock
  std::vector<Value> allow_degraded;     // --allow-degraded pid,hide,...
  std::optional<Value> audit_file, audit_required;  // [audit] file, required (profiles; carried for audit)
  std::vector<Value> labels;                  // --label KEY=VALUE, [audit] labels
  std::optional<Value> run_id, scratch, uid;  // --run-id (flag only), --scratch NAME, --uid nobody|N[:G]
  std::optional<Value> explain;  // --explain (flag only): a way of running, not part of the policy
  std::optional<Value> learn;    // --learn FILE (flag only): write the profile the run used (linux/learn.h)
  std::vector<Value> exec;        // --exec PATH, [exec] allow: the only files the workload may execute
  std::vector<Value> exec_run;    // [exec] run: the argv shape the command line must match (profiles only)
  std::vector<std::string> argv;
};

// Facts about the calling process that validation needs, passed in so validate() stays pure.
struct Context {
  std::string cwd;   // absolute
  std::string home;  // absolute, may be empty
  std::vector<std::pair<std::string, std::string>> environ;  // the caller's environment
};

struct Grant {
  std::string path;    // absolute and lexically clean ("~" expanded, "." and "//" removed)
  std::string origin;  // "--ro ./src"
  uint64_t size_bytes = 0;  // --tmpfs PATH:size=SIZE only; 0: the default size (Limits::tmpfs_bytes)
};

// --tmpfs PATH[:size=SIZE]: the option is the text after the last ':' when that text starts with
// "size=", so a path may hold ':' anywhere (a path whose own last ':' begins "size=" must then be
// given with a size). Returns {path, size text or "" when none}.
std::pair<std::string, std::string> split_tmpfs_spec(const std::string& text);

// --secret: a variable whose value cage reads once at start from a file, an inherited descriptor or
// its own environment, so that it never stands on a command line (ps shows argv to every local user).
// Only the name and the source are ever printed, audited or hashed.
struct Secret {
  std::string name;
  std::string source;  // "@/absolute/file", "fd:N" or "env:VAR"
  std::string origin;  // "--secret TOKEN=@~/.token"
};

struct EnvPolicy {
  std::vector<std::string> pass;                           // names or globs (LC_*)
  std::vector<std::pair<std::string, std::string>> set;    // --setenv NAME=VALUE
  std::vector<std::string> unset;                          // --unsetenv NAME
  std::vector<Secret> secrets;                             // --secret NAME=SOURCE, set last
};

struct NetRule {
  HostPattern pattern;
  std::string origin;  // "--net api.github.com:443"
};

struct Rlimit {
  std::string name;  // "nofile", "fsize", ...
  uint64_t soft = 0, hard = 0;
  std::string origin;
};

struct Limits {
  std::optional<uint64_t> memory_bytes;
  std::optional<uint64_t> pids;
  std::optional<double> cpu;  // cores, e.g. 1.5
  std::optional<uint64_t> timeout_ms;
  // Size of every writable private tmpfs cage mounts (/tmp, /var/tmp, /run, $HOME, /dev/shm, and
  // --tmpfs without :size=); unset: the platform's default (Linux: 1/8 of RAM, lx::default_tmpfs_bytes).
  std::optional<uint64_t> tmpfs_bytes;
  std::vector<Rlimit> rlimits;
  bool strict = false;  // --strict-limits: a limit that cannot be enforced is an error
  // --max-stdout / --max-stderr (or --max-output for both): bytes passed through per stream; past
  // them the rest is read and dropped and one marker line says how much (src/linux/output_cap.cc).
  std::optional<uint64_t> max_stdout, max_stderr;
  std::string output_origin;  // "--max-output 1M": the first cap's source, for errors
};

// --scratch NAME: a per-user directory that outlives the run (identity.cc decides where).
struct Scratch {
  std::string name;
  std::string host_dir;  // absolute: <state dir>/cage/scratch/NAME, created 0700 at run time
  std::string origin;    // "--scratch cache"
  std::string base;      // $XDG_STATE_HOME or $HOME: the caller's, trusted as given
  std::string below;     // host_dir relative to base: ".local/state/cage/scratch/NAME"
};

// --uid: who the workload is inside its user namespace; it still acts on the host as the caller.
struct RunAs {
  uint32_t uid = 0, gid = 0;
  std::string origin;  // "--uid nobody"
};

// [exec] run = ["git", "clone", "{url}"]: the command line a profile allows (argv_pattern.cc). Each
// element is a literal word or a whole-word placeholder: {url} an https URL, {path} a relative path
// without "..", {arg} any word not starting with '-'.
struct ArgvPattern {
  enum class Kind { literal, url, path, arg };
  struct Word { Kind kind; std::string text; };  // text: the literal, or the placeholder as written
  std::vector<Word> words;
  std::string origin;  // "cage.toml:3:7 exec.run"
};
Result<ArgvPattern> parse_argv_pattern(const std::vector<Value>& words);
// Ok, or a usage_error naming the first argument that does not match (or the missing/extra one).
Status match_argv(const ArgvPattern& pattern, const std::vector<std::string>& argv);

struct Policy {
  std::vector<Grant> ro, rw, tmpfs, hide;
  // --exec: when not empty, the workload may execute only these files (or files beneath these
  // directories), the resolved command and what cage adds (compile says which); nothing else.
  std::vector<Grant> exec;
  std::optional<ArgvPattern> argv_pattern;  // [exec] run, checked against argv by validate()
  bool system_view = true;  // false with --no-system: start from an empty root
  bool cwd_visible = true;  // false with --no-cwd: the current directory is not granted implicitly
  std::string cwd;          // where the command starts (absolute)
  std::string home;         // the caller's home; inside it is an empty private tmpfs unless granted
  std::string hostname = "cage";
  EnvPolicy env;
  std::vector<NetRule> net;
  bool share_net = false;   // --share-net: the host network unchanged (an audited escape hatch)
  // --net-mode: proxy (HTTP CONNECT/SOCKS5 on 127.0.0.1:3128 inside), transparent (cage's DNS and
  // synthetic addresses, for programs that ignore *_PROXY), or both (the default).
  enum class NetMode { both, proxy, transparent };
  NetMode net_mode = NetMode::both;
  // Linux: namespaces + Landlock + seccomp (the full sandbox), or Landlock + seccomp alone where user
  // namespaces are blocked. auto picks the best the host offers; a lost element is refused unless
  // listed in allow_degraded.
  enum class Mechanism { automatic, namespaces, landlock_only };  // --mechanism auto|namespaces|landlock
  Mechanism mechanism = Mechanism::automatic;
  std::vector<std::string> allow_degraded;
  Limits limits;
  SeccompProfile seccomp = SeccompProfile::default_profile;
  std::vector<std::string> argv;
  // Identity (identity.cc): labels and the run id only name the run (audit, result, errors,
  // $CAGE_RUN_ID) and never change what it may do, so the policy hash leaves them out.
  std::vector<std::pair<std::string, std::string>> labels;
  std::string run_id;  // empty in a --dry-run without --run-id: generated at start
  // --explain: report what the policy refused or hid (Linux); like the run id, outside the hash.
  bool explain = false;
  // --learn FILE: run in the learning view and write the profile the run used (Linux); absolute.
  std::string learn;
  std::string learn_origin;  // "--learn FILE"
  std::optional<Scratch> scratch;
  std::optional<RunAs> run_as;
};

Result<Policy> validate(const PolicyInput& in, const Context& ctx);
// macOS and Windows: the first element of p only the Linux backend carries out, as a
// spawn_sandbox_unavailable naming its input (linux_only.cc), or Ok.
Status refuse_linux_only(const Policy& p, const std::string& os);
// What --allow-degraded may name: pid (host processes visible, no pid namespace), hide (--hide
// cannot mask beneath a grant), tmpfs (--tmpfs paths are not mounted), exec-written (with --exec, files
// the workload writes can still be run through the dynamic loader: no noexec mounts).
extern const char* const kDegradableElements[7];

// Identity (identity.cc): --label, --run-id, --scratch, --uid.
Status validate_identity(const PolicyInput& in, const Context& ctx, Policy& p);
// --run-id: 1-64 of [A-Za-z0-9._-], starting with a letter or digit (generated ones: 32 hex digits).
bool valid_run_id(std::string_view id);
// Where scratch directories live on the host: $XDG_STATE_HOME/cage/scratch, else
// ~/.local/state/cage/scratch (root too). Empty when neither is known.
std::string scratch_root(const Context& ctx);
std::pair<std::string, std::string> scratch_location(const Context& ctx);  // {base, relative part}
bool valid_scratch_name(std::string_view name);
inline constexpr const char* kScratchInside = "/scratch";  // namespaces: /scratch/NAME inside
inline constexpr const char* kRunIdVariable = "CAGE_RUN_ID";
inline constexpr const char* kScratchVariable = "CAGE_SCRATCH";

// Path helpers (paths.cc): "~" expansion, joining to a base, lexical cleaning. Pure string work.
Result<std::string> absolute_path(const Value& v, const std::string& home);
std::string lexically_clean(const std::string& abs);
// ".." taken lexically (what the path means when no component is a symbolic link).
std::string resolve_dot_dot(const std::string& abs);
bool is_beneath(const std::string& path, const std::string& dir);  // path == dir or inside it
std::string parent_of(const std::string& abs);  // "/a/b" -> "/a", "/a" -> "/" 
// What a grant of `real` (a clean absolute path) would show that is far more than a project: "the
// root", "$HOME (/home/u)", "/home, which holds $HOME", "the system directory /etc"; "" when none.
// One table for the relative --rw check (validate.cc) and grants reached through a link (compile.cc).
std::string wide_directory(const std::string& real, const std::string& home);
// The caller's home from its environment: HOME when absolute, else "" (unknown). A relative HOME
// ("." or "x") would be resolved against the current directory, and the private home tmpfs then
// covered the project (HOME=.) or was planned at a relative path; it counts as unknown (HOME=/ inside).
inline std::string home_of(const std::vector<std::pair<std::string, std::string>>& environ) {
  for (const auto& [k, v] : environ)
    if (k == "HOME") return !v.empty() && v[0] == '/' ? v : std::string();
  return {};
}

// Environment (env.cc): the environment the workload starts with.
bool env_glob_match(const std::string& pattern, const std::string& name);
extern const char* const kDefaultPassedEnv[];
// The caller's variables matching `passed` (null-terminated) or --env, then `forced`, then --setenv,
// minus --unsetenv. fold_case: names compare case-insensitively and keep their first spelling (Windows).
std::vector<std::string> build_environment(const EnvPolicy& env,
                                           const std::vector<std::pair<std::string, std::string>>& host,
                                           const std::vector<std::pair<std::string, std::string>>& forced,
                                           const char* const* passed = kDefaultPassedEnv, bool fold_case = false);
// Set to "1" in every workload's environment (--unsetenv drops it): tools and scripts can tell they
// run confined, and a cage started inside a cage says so instead of listing what it cannot enforce.
// It only changes wording, never a decision: any process could set it.
inline constexpr const char* kInsideMarker = "CAGE_SANDBOX";

}  // namespace cage::policy
