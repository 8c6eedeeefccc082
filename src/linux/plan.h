// The Linux plan: every mount, Landlock rule, id map, environment entry, seccomp profile and network
// setting a run will apply, decided by lx::compile (pure) and carried out by lx::execute. Printable
// with --dry-run (render.cc) without privileges.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "policy/policy.h"

namespace cage::lx {

enum class MountKind {
  tmpfs,    // fresh tmpfs at target
  bind_ro,  // bind source at target, recursively read-only, nosuid, nodev
  bind_rw,  // bind source at target, nosuid, nodev
  proc,     // a proc instance for the new pid namespace
  dev,      // minimal /dev: tmpfs + null zero full random urandom tty, devpts, shm
  hide,     // mask target: an empty read-only directory or file
  symlink,  // create target as a symlink to source
  file,     // create target (in a tmpfs) holding `content`, read-only
  proc_ro,  // re-bind a /proc subtree read-only (sys, sysrq-trigger, ...)
  dir,      // create target as an empty directory (a mount point the view needs)
  over_file,  // mount a read-only file holding `content` over the existing file at target (in a bind)
};
std::string_view to_string(MountKind k);

// What a mount step is for, where the plan's readers (the summary) or the executor act on it; the
// rest is said in `why`. Decided by compile, never recovered from the text.
enum class MountRole { plain, private_home, pin, cage_binary };

struct MountStep {
  MountKind kind = MountKind::tmpfs;
  std::string source, target;
  std::string content;    // MountKind::file and over_file only
  bool is_dir = true;     // bind/hide: the source (or masked target) is a directory
  bool read_only = false; // tmpfs: made read-only once everything beneath it is mounted
  std::string why;        // "--rw ./out", "default view: CA certs"
  // A grant: the user's (--ro, a profile's fs.rw, --hide...) or the implicit current directory.
  // Rendering only: --dry-run lists these first, the default view as a count.
  bool granted = false;
  // tmpfs: its size= (the workload gets ENOSPC past it); dev: the size of its /dev/shm. 0: none
  // (a read-only tmpfs: /etc, a masked directory).
  uint64_t size_bytes = 0;
  // --exec (compile_exec.cc): a writable mount is noexec, so a file the workload wrote cannot be
  // mapped executable either (the dynamic loader's way around Landlock's execute right). dev: its
  // /dev/shm.
  bool noexec = false;
  // A writable tmpfs: the permissions of its root (01777 for /tmp and /var/tmp, 0700 for the
  // private $HOME). Compile sets it; mount.cc only passes it on.
  unsigned mode = 0755;
  MountRole role = MountRole::plain;
};

// Landlock access in three scopes; landlock.cc maps them onto the kernel's access bits for the
// highest ABI the host offers.
// exec: read and execute, the only access that grants execute when LandlockPlan::exec_listed_only.
enum class Access { list, read, read_exec, write, dev_rw, exec };
std::string_view to_string(Access a);

struct LandlockRule {
  std::string path;
  Access access = Access::read;
  bool is_dir = true;
  std::string why;
  bool granted = false;  // as MountStep::granted
};

// One of cage's own standard descriptors (0-2), when it is a regular file: the workload inherits it.
struct StdioFile {
  int fd = 0;
  std::string path;  // its name on the host (/proc/self/fd/N's target)
  bool read = false, write = false;  // its open mode
};

struct LandlockPlan {
  // The ABI applied, 0 for no Landlock layer (namespaces mechanism only: the kernel has none, or
  // ABI 1, see namespaces_landlock_abi). host_abi: what the kernel offers.
  int abi = 0;
  int host_abi = 0;
  std::vector<LandlockRule> rules;
  // landlock_only: TCP ports the workload may connect to (the proxy's). Under namespaces the network
  // namespace is the boundary and TCP is never handled: the workload's own loopback stays free.
  std::vector<uint16_t> connect_tcp;
  bool scope_signals = true;          // ABI 6: no signals to processes outside the sandbox domain
  bool scope_abstract_unix = true;    // ABI 6: no abstract unix sockets outside the domain
  bool deny_all_tcp = false;          // landlock_only: no TCP connect or bind at all (no private loopback)
  // landlock_only: rule paths are canonical host paths opened without following any link, so a link
  // swapped into a grant's path after compile makes the run fail instead of granting its target.
  bool no_symlinks = false;
  // --exec: execute only where an Access::exec rule grants it (write grants lose it too).
  bool exec_listed_only = false;
  // The workload's stdin, stdout and stderr, where they are regular files it inherits (`cage ... >
  // build.log`; not a stream --max-output caps): a rule on each file alone lets it open them again by
  // their /proc/self/fd names (/dev/stdout, `tee /dev/stderr`) with the access their descriptors
  // already give (read, or write and truncate), and no more. Without it Landlock refuses the reopen
  // of a file outside --rw, which no view without Landlock (bwrap's, the host's) does. Pipes,
  // terminals and devices need no rule. The executor applies each to the descriptor itself.
  std::vector<StdioFile> stdio;
};

struct IdMaps {
  uint32_t outer_uid = 0, outer_gid = 0;  // who runs cage
  uint32_t inner_uid = 0, inner_gid = 0;  // who the workload is inside (same by default)
};

struct SeccompPlan {
  policy::SeccompProfile profile = policy::SeccompProfile::default_profile;
  // --exec: memfd_create and memfd_secret answer ENOSYS (seccomp_exec.cc), on top of the profile.
  bool no_memfd = false;
  // landlock_only: the socket, IPC and metadata filter of seccomp/landlock_only.txt, on top of the
  // profile (what namespaces would have kept out of reach, refused instead).
  bool landlock_only_supplement = false;
};

// Transparent egress (--net-mode transparent|both; transparent_plan.cc decides, netns.cc acts in
// cage's init): local routes on the namespace's `lo`, TCP listeners handed to the supervisor, and a
// DNS socket on which the supervisor answers allowed names with synthetic addresses.
struct TransparentPlan {
  bool enabled = false;
  uint32_t resolver = 0;                   // IPv4, host order: the UDP DNS listener (port 53)
  uint32_t synthetic_base = 0;             // the synthetic range
  int synthetic_prefix = 0;
  struct Route { uint32_t addr = 0; int prefix = 32; std::string why; };
  std::vector<Route> routes;               // `local` routes on lo: the synthetic range, IPv4 rules
  std::vector<uint16_t> ports;             // a listener on 0.0.0.0:PORT for each
  std::vector<std::pair<std::string, uint32_t>> names;  // exact names, assigned in rule order
  std::vector<std::string> notes;          // what it does not carry (IPv6 rules...), for --dry-run
  bool handoff = false;  // IPv4 TCP connects get a socket the supervisor connected (linux/handoff.h)
};

struct NetPlan {
  enum class Mode { none, proxy, host };  // none: loopback only; proxy: --net; host: --share-net
  Mode mode = Mode::none;
  uint16_t shim_port = 0;  // 127.0.0.1:PORT inside the namespace; 0: no proxy port (transparent only)
  std::vector<policy::NetRule> allow;
  TransparentPlan transparent;
  size_t max_connections = 0;  // the proxy's concurrent connections: proxy::connection_limit(--memory)
  uint32_t lo_address = 0;     // IPv4, host order: an address on the namespace's lo besides 127.0.0.1 (0: none)
  // Mode::none: where cage's init binds the resolver that notes lookups for the end-of-run hint
  // (offline_resolver.h); 0 when resolv.conf could not name it.
  uint32_t offline_resolver = 0;
};

// Resource limits by cgroup (cgroup_plan.cc decides, cgroup.cc acts). The executor creates one
// directory "cage-<supervisor pid>" under each parent, writes `writes` into it, moves cage's init
// there before the workload starts, and removes it when the run ends.
struct CgroupDir {
  std::string controller;   // v1: "memory", "pids", "cpu"; v2: "" (one unified directory)
  std::string parent;       // absolute path of the directory the run's cgroup is created in
};
struct CgroupWrite {
  size_t dir = 0;           // index into CgroupPlan::dirs
  std::string file, value;  // "memory.limit_in_bytes", "33554432"
  bool optional = false;    // missing file is not an error (memory.memsw.* without swap accounting)
  std::string why;          // "--memory 32M"
};
// A limit the user asked for that no cgroup enforces on this host: approximated by an rlimit
// (added to Plan::limits.rlimits by compile) or not enforced at all. Never silently dropped.
struct Unenforced {
  std::string limit;     // "--memory 32M"
  std::string fallback;  // "RLIMIT_AS" / "RLIMIT_NPROC", or "" when nothing approximates it
  std::string why;       // why no cgroup can be used, and what the fallback does not cover
};
// A unit property of the transient scope (systemd_scope.h): "MemoryMax" = 104857600.
struct ScopeProperty {
  std::string name;
  uint64_t value = 0;
  std::string why;  // "--memory 100M"
};
// Where the limits live: nowhere (rlimits only), a cgroup directory cage writes itself ("direct"),
// or a transient scope the caller's systemd user manager creates and delegates ("user_scope").
enum class CgroupVia { none, direct, user_scope };
struct UserScopePlan {
  std::string socket;                    // the user manager's private bus: $XDG_RUNTIME_DIR/systemd/private
  std::string mount;                     // where the unified hierarchy is mounted (the scope's path is below)
  std::vector<ScopeProperty> properties;  // the limits, applied by systemd before the pid moves in
  // What replaces the scope if the manager refuses it at run time (without --strict-limits).
  std::vector<Unenforced> fallback;
  std::vector<policy::Rlimit> fallback_rlimits;
};
struct CgroupPlan {
  int version = 0;  // 0: no cgroup; 1: cgroup v1 hierarchies; 2: the unified hierarchy
  CgroupVia via = CgroupVia::none;
  std::vector<CgroupDir> dirs;       // direct only
  std::vector<CgroupWrite> writes;   // direct only
  UserScopePlan scope;               // user_scope only
  std::vector<Unenforced> unenforced;
  bool strict = false;               // --strict-limits: a refused scope is an error, not a fallback
};

// --scratch NAME: a directory of the caller's that outlives the run. execute creates it (0700) below
// `base`, opening each of `below` without following links (scratch.cc), before anything mounts it.
struct ScratchPlan {
  std::string base;                // real path of $XDG_STATE_HOME or $HOME: trusted, the caller's own
  std::vector<std::string> below;  // ".local" "state" "cage" "scratch" NAME
  std::string host_path;           // base + below
  std::string inside;              // namespaces: /scratch/NAME; landlock_only: host_path
  std::string why;                 // "--scratch cache"
};

// namespaces: the full sandbox. landlock_only: where user namespaces are blocked, Landlock +
// seccomp + no_new_privs + rlimits on the host's own tree (src/linux/landlock_only.cc).
enum class Mechanism { namespaces, landlock_only };

// Placeholders in a landlock_only plan's environment, replaced by landlock_only.cc at run time.
inline constexpr const char* kProxyPortMark = "<proxy-port>";
inline constexpr const char* kProxySecretMark = "<proxy-secret>";

// How the sandbox's first process, cage's init, is made and what it does besides starting the
// workload: decided by compile from the mechanism, so that execute.cc and init.cc only carry it out.
struct InitPlan {
  // The namespaces the clone that starts init creates ("user", "mount", "pid", "ipc", "uts",
  // "cgroup", "net"); none: a plain fork on the host's. A new user namespace gets its uid/gid maps
  // from the supervisor (ids).
  std::vector<std::string> namespaces;
  bool build_root = false;     // init mounts the sandbox's root, its sized tmpfs and sets the hostname
  bool loopback = false;       // init brings up `lo` in the new network namespace
  // true: init is pid 1 of a new pid namespace, and killing it (SIGKILL) ends every process of the
  // run. false: init is a subreaper on the host, the supervisor ends the run by asking init (kEndRun,
  // then kEndRunSignal) and init ends its tree itself (descendants.cc); the workload dies with init
  // (PR_SET_PDEATHSIG).
  bool pid1 = false;
};

struct Plan {
  Mechanism mechanism = Mechanism::namespaces;
  InitPlan init;
  std::vector<std::string> degraded;  // landlock_only: elements lost, each accepted by --allow-degraded
  std::vector<std::string> notes;     // landlock_only: differences that weaken nothing (private /tmp ...)
  // landlock_only: chmod/chown/xattr calls allowed (--allow-degraded=metadata); refused otherwise,
  // since Landlock does not confine them to the --rw grants (seccomp/landlock_only.txt).
  bool allow_metadata = false;
  // --explain: the workload's path calls are observed (explain_notify.h); nothing is enforced differently.
  bool explain = false;
  // landlock_only with --net: the proxy listens on a host loopback port chosen at run time, which
  // landlock_only.cc puts into landlock.connect_tcp and, with the run's secret, into the environment.
  bool loopback_proxy = false;
  std::vector<MountStep> mounts;  // in order; parents before children, masks after what they mask
  LandlockPlan landlock;
  IdMaps ids;
  std::vector<std::string> env;   // NAME=VALUE, the workload's whole environment but --secret's
  // --secret: names and sources only; execute reads the values at start and sets them last
  // (common/secret.h), so no plan, dry-run or audit ever holds one.
  std::vector<policy::Secret> secrets;
  SeccompPlan seccomp;
  NetPlan net;
  std::vector<std::string> argv;
  std::string exec_path;  // argv[0] resolved against the sandbox's PATH, as seen inside
  // --exec: one line per execute allowance for --dry-run ("/usr/bin/git  # --exec /usr/bin/git");
  // empty without an allowlist. argv_pattern: [exec] run, as written, when the profile pins it.
  std::vector<std::string> exec_summary;
  std::string argv_pattern;
  std::string cwd;        // where the workload starts, inside
  std::string cwd_note;   // set when the implicit cwd grant skipped cwd ($HOME, /tmp...) and no grant covers it
  std::string hostname;
  // namespaces, root caller: the sandbox's user namespace allows no nested one (its
  // user.max_user_namespaces is 0). A nested namespace would regain CAP_SETFCAP with its root mapped
  // to host uid 0, and a file capability it wrote in a --rw grant would hold on the host.
  bool no_nested_userns = false;
  std::optional<ScratchPlan> scratch;
  std::string run_id;  // empty in a --dry-run without --run-id: generated at start
  std::vector<std::pair<std::string, std::string>> labels;  // for --dry-run; the report session records them
  policy::Limits limits;
  CgroupPlan cgroup;
};

}  // namespace cage::lx
