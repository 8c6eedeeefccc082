// The option table (see option_table.h). The rows are in --help order; the profile keys of a table
// are listed in kSections in the order its unknown-key error names them.
#include "cli/option_table.h"

#include <algorithm>

namespace cage::cli {

namespace {

using In = policy::PolicyInput;

const char* const kFs = "Filesystem";
const char* const kEnv = "Environment";
const char* const kNet = "Network";
const char* const kProc = "Process and limits";
const char* const kReport = "Result and audit";

const OptionSpec kOptions[] = {
    {.flag = "--ro", .value_name = "PATH", .group = kFs,
     .help = "Grant PATH read-only (and executable) at the same path inside",
     .section = "fs", .key = "ro", .kind = Kind::paths, .list = &In::ro, .merge = Merge::path_wins,
     .complete = "file"},
    {.flag = "--rw", .value_name = "PATH", .group = kFs, .help = "Grant PATH read-write at the same path inside",
     .section = "fs", .key = "rw", .kind = Kind::paths, .list = &In::rw, .merge = Merge::path_wins,
     .complete = "file"},
    {.flag = "--tmpfs", .value_name = "PATH[:size=SIZE]", .group = kFs,
     .help = "Mount an empty private tmpfs at PATH, of SIZE (default: --tmpfs-size)",
     .section = "fs", .key = "tmpfs", .kind = Kind::paths, .list = &In::tmpfs, .merge = Merge::path_wins,
     .complete = "file"},
    {.flag = "--hide", .value_name = "PATH", .group = kFs,
     .help = "Mask PATH (a file or directory beneath a granted one)",
     .section = "fs", .key = "hide", .kind = Kind::paths, .list = &In::hide, .merge = Merge::path_wins,
     .complete = "file"},
    {.flag = "--no-system", .value_name = "", .group = kFs, .help = "Start from an empty root: no default system view",
     .section = "fs", .key = "no_system", .kind = Kind::boolean, .scalar = &In::no_system},
    {.flag = "--no-cwd", .value_name = "", .group = kFs,
     .help = "Do not grant the current directory read-only implicitly",
     .section = "fs", .key = "no_cwd", .kind = Kind::boolean, .scalar = &In::no_cwd},
    {.flag = "--scratch", .value_name = "NAME", .group = kFs,
     .help = "Mount the persistent directory NAME (yours, 0700, kept across runs) read-write at /scratch/NAME; "
             "$CAGE_SCRATCH names it",
     .section = "fs", .key = "scratch", .kind = Kind::text, .scalar = &In::scratch},
    {.flag = "--chdir", .value_name = "DIR", .group = kFs,
     .help = "Start the command in DIR (default: the current directory)",
     .section = "fs", .key = "chdir", .kind = Kind::path, .scalar = &In::chdir, .complete = "dir"},
    {.flag = "--env", .value_name = "NAME", .group = kEnv,
     .help = "Pass the caller's variable NAME through (globs such as LC_* allowed)",
     .section = "env", .key = "pass", .kind = Kind::words, .list = &In::env_pass, .merge = Merge::cancels_unset,
     .complete = "variable"},
    {.flag = "--setenv", .value_name = "NAME=VALUE", .group = kEnv, .help = "Set NAME to VALUE for the command",
     .section = "env", .key = "set", .kind = Kind::pairs, .list = &In::env_set, .merge = Merge::cancels_unset,
     .expected = "a table of NAME = \"VALUE\""},
    {.flag = "--unsetenv", .value_name = "NAME", .group = kEnv,
     .help = "Remove NAME (globs allowed) from the command's environment",
     .section = "env", .key = "unset", .kind = Kind::words, .list = &In::env_unset, .complete = "variable"},
    {.flag = "--secret", .value_name = "NAME=SOURCE", .group = kEnv,
     .help = "Set NAME from @FILE, fd:N or env:VAR, read once at start: the value is never on a command line, "
             "printed or audited",
     .section = "env", .key = "secret", .kind = Kind::pairs, .list = &In::env_secret,
     .expected = "a table of NAME = \"@FILE\" | \"fd:N\" | \"env:VAR\""},
    {.flag = "--net", .value_name = "HOST:PORT", .group = kNet,
     .help = "Allow TCP to HOST:PORT through cage's proxy (*.domain one label, **.domain any depth, IP, CIDR, "
             "port list a,b or range a-b; a URL https://HOST[:PORT]/... is read as HOST:443 or HOST:PORT)",
     .section = "net", .key = "allow", .kind = Kind::words, .list = &In::net},
    {.flag = "--net-mode", .value_name = "MODE", .group = kNet,
     .help = "How --net destinations are reached: proxy (*_PROXY variables), transparent (cage's DNS answers "
             "allowed names; plain TCP connects work), or both (default); needs --net",
     .section = "net", .key = "mode", .kind = Kind::text, .scalar = &In::net_mode,
     .complete = "proxy transparent both"},
    {.flag = "--share-net", .value_name = "", .group = kNet,
     .help = "Escape hatch: use the host network unchanged (audited)",
     .section = "net", .key = "share_net", .kind = Kind::boolean, .scalar = &In::share_net},
    {.flag = "--seccomp", .value_name = "PROFILE", .group = kProc,
     .help = "Syscall filter: default, relaxed, or none (escape hatch, reported everywhere)",
     .section = "seccomp", .key = "profile", .kind = Kind::text, .scalar = &In::seccomp,
     .complete = "default relaxed none"},
    {.flag = "--timeout", .value_name = "DURATION", .group = kProc,
     .help = "Wall-clock limit (30s, 5m, 1h): SIGTERM, a grace period, then SIGKILL; exit status 124",
     .section = "limits", .key = "timeout", .kind = Kind::integer_text, .scalar = &In::timeout},
    {.flag = "--rlimit", .value_name = "NAME=VALUE", .group = kProc,
     .help = "Set a resource limit: nofile=1024, core=0, fsize=1G:2G, ...",
     .section = "limits", .key = "rlimits", .kind = Kind::integer_pairs, .list = &In::rlimits,
     .expected = "a table of NAME = VALUE or \"SOFT:HARD\""},
    {.flag = "--memory", .value_name = "SIZE", .group = kProc,
     .help = "Memory limit for the whole sandbox (512M, 2G), by cgroup",
     .section = "limits", .key = "memory", .kind = Kind::integer_text, .scalar = &In::memory},
    {.flag = "--tmpfs-size", .value_name = "SIZE", .group = kProc,
     .help = "Size of each private tmpfs cage mounts (/tmp, /var/tmp, /run, $HOME, /dev/shm, --tmpfs); default "
             "1/8 of RAM",
     .section = "limits", .key = "tmpfs_size", .kind = Kind::integer_text, .scalar = &In::tmpfs_size},
    {.flag = "--pids", .value_name = "N", .group = kProc,
     .help = "Limit the sandbox to N processes and threads, by cgroup",
     .section = "limits", .key = "pids", .kind = Kind::integer_text, .scalar = &In::pids},
    {.flag = "--cpu", .value_name = "FRACTION", .group = kProc, .help = "CPU share in cores (0.5, 1.5), by cgroup",
     .section = "limits", .key = "cpu", .kind = Kind::number_text, .scalar = &In::cpu},
    {.flag = "--max-output", .value_name = "SIZE", .group = kProc,
     .help = "Pass at most SIZE bytes of stdout and of stderr each (1M, 0); the rest is read and dropped, and "
             "one line at the end says how much",
     .section = "limits", .key = "max_output", .kind = Kind::integer_text, .scalar = &In::max_output},
    {.flag = "--max-stdout", .value_name = "SIZE", .group = kProc,
     .help = "The cap for stdout alone (overrides --max-output)",
     .section = "limits", .key = "max_stdout", .kind = Kind::integer_text, .scalar = &In::max_stdout},
    {.flag = "--max-stderr", .value_name = "SIZE", .group = kProc,
     .help = "The cap for stderr alone (overrides --max-output)",
     .section = "limits", .key = "max_stderr", .kind = Kind::integer_text, .scalar = &In::max_stderr},
    {.flag = "--limits", .value_name = "PRESET", .group = kProc,
     .help = "Ceilings for unattended runs: default = --memory 4G --pids 1024 --timeout 30m --max-output 16M "
             "--tmpfs-size 1G, each unless given",
     .section = "limits", .key = "preset", .kind = Kind::text, .scalar = &In::limits_preset,
     .complete = "default"},
    {.flag = "--strict-limits", .value_name = "", .group = kProc,
     .help = "Refuse to run when a limit cannot be enforced by a cgroup (instead of an rlimit approximation "
             "and a warning)",
     .section = "limits", .key = "strict", .kind = Kind::boolean, .scalar = &In::strict_limits},
    {.flag = "--exec", .value_name = "PATH", .group = kProc,
     .help = "Let the command execute only PATH: a file, or the files beneath a directory; repeatable (the "
             "command itself and the dynamic loader are added; see cage(1), EXEC ALLOWLIST)",
     .section = "exec", .key = "allow", .kind = Kind::paths, .list = &In::exec, .complete = "file"},
    {.flag = "--mechanism", .value_name = "MECH", .group = kProc,
     .help = "auto (default), namespaces, or landlock (no namespaces: for hosts that block user namespaces)",
     .section = "", .key = "mechanism", .kind = Kind::text, .scalar = &In::mechanism,
     .complete = "auto namespaces landlock"},
    {.flag = "--allow-degraded", .value_name = "ELEMENTS", .group = kProc,
     .help = "Accept these losses where only Landlock is available: pid, hide, tmpfs, hostname, nested-ro, "
             "metadata, exec-written (comma-separated)",
     .section = "", .key = "allow_degraded", .kind = Kind::words, .list = &In::allow_degraded,
     .complete = "pid hide tmpfs hostname nested-ro metadata exec-written"},
    {.flag = "--hostname", .value_name = "NAME", .group = kProc,
     .help = "Host name inside the sandbox (default: cage); {run_id} in it is the run's id (12 characters)",
     .section = "", .key = "hostname", .kind = Kind::text, .scalar = &In::hostname},
    {.flag = "--uid", .value_name = "ID", .group = kProc,
     .help = "Run as nobody, UID or UID:GID inside the user namespace; files it writes stay yours on the host",
     .section = "", .key = "uid", .kind = Kind::integer_text, .scalar = &In::uid, .complete = "nobody"},
    {.flag = "--label", .value_name = "KEY=VALUE", .group = kReport,
     .help = "Tag the run: in every audit event, the result and --json-errors (repeatable)",
     .section = "audit", .key = "labels", .kind = Kind::pairs, .list = &In::labels, .merge = Merge::key_wins,
     .expected = "a table of KEY = \"VALUE\""},
    // One run's: merged, never a profile key nor printed.
    {.flag = "--run-id", .value_name = "ID", .group = kReport,
     .help = "Use ID as the run id (default: 32 random hex digits); also $CAGE_RUN_ID inside",
     .section = nullptr, .key = nullptr, .kind = Kind::text, .scalar = &In::run_id},
    // A way of running a policy, not part of it: a profile that asked for it would print a report
    // into every run of a tool (so never a profile key), and the policy hash leaves it out.
    {.flag = "--explain", .value_name = "", .group = kReport,
     .help = "Observe the run and, when it ends, list each access the policy refused or hid, with the flag "
             "that would allow it (Linux; slower)",
     .section = nullptr, .key = nullptr, .kind = Kind::boolean, .scalar = &In::explain},
    // Never a profile key either: a profile that wrote a profile on every run would be a surprise.
    {.flag = "--learn", .value_name = "FILE", .group = kReport,
     .help = "Run a trusted command in a learning view (host read-only, secrets hidden, the working "
             "directory writable) and write the profile it used, with the limits it reached as commented-out "
             "suggestions, to FILE (Linux; FILE must not exist)",
     .section = nullptr, .key = nullptr, .kind = Kind::path, .scalar = &In::learn, .complete = "file"},
    // --audit and --audit-required are bound with the modes (they fill ReportOptions; apply_profiles
    // merges them as the last source).
    {.flag = nullptr, .value_name = "", .group = kReport, .help = "",
     .section = "audit", .key = "file", .kind = Kind::file_or_fd, .scalar = &In::audit_file},
    {.flag = nullptr, .value_name = "", .group = kReport, .help = "",
     .section = "audit", .key = "required", .kind = Kind::boolean, .scalar = &In::audit_required},
};

const SectionSpec kSections[] = {
    {"", "version include run hostname mechanism uid allow_degraded"},  // then each table, as [fs]
    {"fs", "ro rw tmpfs hide no_system no_cwd chdir scratch"},
    {"env", "pass set unset secret"},
    {"net", "allow mode share_net"},
    {"limits", "preset memory pids cpu timeout tmpfs_size rlimits strict max_output max_stdout max_stderr"},
    {"seccomp", "profile"},
    {"audit", "file required labels"},
    {"exec", "allow run"},
};

}  // namespace

std::span<const OptionSpec> options() { return kOptions; }
std::span<const SectionSpec> sections() { return kSections; }

const OptionSpec* find_option(std::string_view section, std::string_view key) {
  auto it = std::find_if(std::begin(kOptions), std::end(kOptions), [&](const OptionSpec& o) {
    return o.section && o.section == section && o.key == key;
  });
  return it == std::end(kOptions) ? nullptr : &*it;
}

const SectionSpec* find_section(std::string_view name) {
  auto it = std::find_if(std::begin(kSections), std::end(kSections),
                         [&](const SectionSpec& s) { return s.name == name; });
  return it == std::end(kSections) ? nullptr : &*it;
}

}  // namespace cage::cli
