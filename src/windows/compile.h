// win::compile: Policy + WinHostFacts -> WinPlan, every Windows call a run makes and its arguments:
// an AppContainer profile for the run (no capabilities: no network), a job object with limits, the
// ACEs for the run's package SID and labels for grants (journaled, removed afterwards), the resolved
// command. Pure; tested on Linux by tests/unit/windows_plan_test.cc. Design: docs/windows.md.
// Policy paths on Windows are "/C:/dir" (posix_form, paths.cc).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/exit_status.h"
#include "policy/policy.h"

namespace cage::win {

// winnt.h / winbase.h values, spelled out so the plan is the same on every build host.
inline constexpr uint32_t kJobLimitActiveProcess = 0x8, kJobLimitJobMemory = 0x200,
                          kJobLimitDieOnUnhandledException = 0x400, kJobLimitBreakawayOk = 0x800,
                          kJobLimitSilentBreakawayOk = 0x1000, kJobLimitKillOnJobClose = 0x2000;
inline constexpr uint32_t kUiLimitAll = 0xFF;  // handles, clipboard r/w, system parameters, display
                                               // settings, global atoms, desktop, exit windows
inline constexpr uint32_t kCpuRateEnable = 0x1, kCpuRateHardCap = 0x4;
// File access masks of the ACEs cage adds for the run's package SID.
inline constexpr uint32_t kReadMask = 0x1200a9;      // FILE_GENERIC_READ | FILE_GENERIC_EXECUTE
inline constexpr uint32_t kModifyMask = 0x1301bf;    // read, execute, write, DELETE; no FILE_DELETE_CHILD
inline constexpr uint32_t kDenyWriteMask = 0x10156;  // write data/EA/attributes, append, delete child, DELETE
inline constexpr uint32_t kDenyAllMask = 0x1f01ff;   // FILE_ALL_ACCESS
inline constexpr const char* kLowIntegritySid = "S-1-16-4096";
// Capability SIDs (well-known, winnt.h SECURITY_CAPABILITY_*).
inline constexpr const char* kInternetClientSid = "S-1-15-3-1";
inline constexpr const char* kInternetClientServerSid = "S-1-15-3-2";
inline constexpr const char* kPrivateNetworkSid = "S-1-15-3-3";
inline constexpr const char* kAllAppPackagesSid = "S-1-15-2-1";
inline constexpr const char* kDefaultDesktop = "winsta0\\default";

struct WinHostFacts {
  bool on_windows = false;  // false: a cross-target dry-run; paths map as Wine maps them (Z:)
  std::string home_posix;   // the Policy's home ("/C:/Users/ann", or $HOME elsewhere)
  std::string userprofile = "C:\\Users\\user";  // %USERPROFILE%, what "~" maps to
  std::string localappdata;                     // %LOCALAPPDATA%; empty: <userprofile>\AppData\Local
  std::string programdata = "C:\\ProgramData";  // %ProgramData%: the --net slot locks (machine-wide)
  unsigned cpu_count = 1;
  uint16_t proxy_port = 0;   // 0: not known yet (dry-run; 3128 shown); --net: its slot's port
  std::string proxy_secret;  // the run's proxy secret (the *_PROXY URLs carry it); "" in tests
  // --net: the slot this run holds (net_slots.h), -1 when not claimed (a dry-run: slot 0 is shown),
  // and how it was chosen, one line per slot tried.
  int net_slot = -1;
  std::vector<std::string> net_slot_notes;
  // This run's identity: names its journal, temp directory and AppContainer profile.
  uint32_t pid = 0;
  uint32_t nonce[2] = {0, 0};  // random on a real run
  // Kind of a Windows path: 'd' directory, 'f' file, 0 missing; empty function: the host cannot be
  // asked (a dry-run elsewhere): every grant exists as a directory and the command is resolved at run time.
  std::function<char(const std::string&)> kind;
};

// The AppContainer (LowBox) the workload runs in. Windows derives its package SID from `name`; the
// plan derives the same SID (package_sid_of) so that every ACE is known before anything is changed,
// and the executor refuses the run if Windows' SID differs.
struct ContainerPlan {
  std::string name;     // "cage.run-<pid>-<nonce>", or a --net slot's "cage.net.<k>"
  std::string sid;      // package_sid_of(name)
  bool per_run = true;  // created by this run (CreateAppContainerProfile), deleted at its end
  std::vector<std::pair<std::string, std::string>> capabilities;  // {SID, name}: none = no network
  bool loopback_exemption = false;  // --net: the profile must be exempt (cage --install-windows-network)
};

// --net: the slot the run holds. Its container is exempt from loopback isolation and confined by
// cage's WFP filters to TCP to 127.0.0.1:port, where this run's proxy listens (net_slots.h).
struct NetSlotPlan {
  int slot = -1;         // -1: no --net
  bool claimed = false;  // false: a dry-run; the run claims the first free slot
  uint16_t port = 0;
  std::string lock;                // the lock file held for the run (%ProgramData%\cage\net-slots\...)
  std::vector<std::string> notes;  // how the slot was chosen
};

struct JobPlan {
  uint32_t limit_flags = kJobLimitKillOnJobClose | kJobLimitDieOnUnhandledException;  // never breakaway
  uint32_t active_processes = 0;  // with kJobLimitActiveProcess
  uint64_t job_memory = 0;        // bytes, with kJobLimitJobMemory
  uint32_t ui_restrictions = kUiLimitAll;
  uint32_t cpu_rate_flags = 0;  // kCpuRateEnable | kCpuRateHardCap with cpu_rate
  uint32_t cpu_rate = 0;        // 1/100 percent of the whole machine (10000 = all CPUs)
};

// A change to one path's security descriptor, made on the path's final name (the executor opens it
// without following a reparse point and refuses one). ACEs are for the run's package SID (<PACKAGE>)
// and undone by removing exactly that SID's ACEs; a label is saved to the journal and put back.
struct AclChange {
  enum class Kind { allow_read, allow_modify, deny_write, deny_all, low_label } kind = Kind::allow_read;
  std::string path;  // Windows form
  bool is_dir = true;
  std::string sddl;  // the ACE added ("D:(A;OICI;0x1200a9;;;S-1-15-2-...)") or the label set ("S:(ML;...)")
  std::string why;
};

// The restore journal: one file per run in `dir`, held open exclusively while the run lives, so that
// a later cage can tell an orphaned journal (its run crashed) from a live one and restore it.
struct JournalPlan {
  std::string dir;     // %LOCALAPPDATA%\cage\restore
  std::string file;    // dir\run-<pid>-<nonce>.journal
  std::string run;     // "<pid>-<nonce>": the run's holder name in the --rw label counts
  std::string labels;  // %LOCALAPPDATA%\cage\labels: one lock file per --rw path (label_refs.h)
};

// The run's own TEMP, created Low-labelled (AppContainers run at Low integrity) with an ACE for the
// package SID, and removed at the end. APPDATA and LOCALAPPDATA point at `subdirs` inside it.
struct TempPlan {
  std::string path;  // %LOCALAPPDATA%\cage\tmp\run-<pid>-<nonce>
  std::string sddl;  // its whole descriptor, <USER> for the caller's SID
  std::vector<std::string> subdirs;  // relative: AppData\Roaming, AppData\Local
};

struct WinCall {
  std::string api;
  std::vector<std::pair<std::string, std::string>> args;
  std::string why;
};

struct WinPlan {
  ContainerPlan container;
  NetSlotPlan net_slot;
  JobPlan job;
  JournalPlan journal;
  TempPlan temp;
  std::vector<AclChange> acl;
  std::vector<std::string> env;  // NAME=VALUE
  std::vector<std::string> argv;
  // CreateProcessW: `application` is the resolved absolute path (lpApplicationName), so Windows'
  // own search (cage's directory, the current directory, then PATH) never runs; empty only in a
  // dry-run that cannot ask the host (resolved at run time, with the same rules).
  std::string application;
  std::string command_line;  // CommandLineToArgvW quoting; for .cmd/.bat: %ComSpec% /d /v:off /s /c "..."
  std::string desktop = kDefaultDesktop;  // STARTUPINFO.lpDesktop: user32 needs a desktop it may open
  std::string cwd;           // Windows form
  uint64_t timeout_ms = 0;   // walltime: TerminateJobObject, exit 124
  uint16_t proxy_port = 0;
  bool proxy = false;             // start cage's proxy (with the Policy's allowlist) before the workload
  std::vector<std::string> gaps;  // what this plan cannot enforce on Windows, said in --dry-run
};


// "/C:/x/y" -> "C:\x\y"; under the home -> %USERPROFILE%\...; on a non-Windows host every other
// absolute path maps through Wine's Z: drive. Anything else cannot be mapped: invalid_policy.
Result<std::string> to_windows_path(const std::string& posix, const WinHostFacts& facts,
                                    const std::string& input);
// "C:\x", "c:/x" -> "/C:/x"; backslashes become slashes; "~\x" -> "~/x". For values given on Windows.
std::string posix_form(const std::string& text);
void normalize_input(policy::PolicyInput& in);
// CommandLineToArgvW quoting of one argument.
std::string quote_argument(const std::string& arg);
// One argument of a .cmd/.bat for cmd.exe: quoted when it holds a space or a cmd.exe metacharacter;
// nullopt when no quoting is safe (%, !, ", a line break or NUL: cmd.exe expands or splits them
// even inside quotes: the BatBadBut class).
std::optional<std::string> quote_cmd_argument(const std::string& arg);
// The command as CreateProcessW gets it: argv[0] resolved with the sandbox's PATH and PATHEXT (never
// the working directory or cage's own directory), batch files run through %ComSpec%.
struct ResolvedCommand {
  std::string application, command_line;
};
Result<ResolvedCommand> resolve_command(const std::vector<std::string>& argv, const std::string& cwd,
                                        const std::vector<std::string>& env, const WinHostFacts& facts);
// The environment, names compared case-insensitively as Windows does.
std::vector<std::string> build_environment(const policy::EnvPolicy& env,
                                           const std::vector<std::pair<std::string, std::string>>& host,
                                           const std::vector<std::pair<std::string, std::string>>& forced);

Result<WinPlan> compile(const policy::Policy& policy, const WinHostFacts& facts,
                        const std::vector<std::pair<std::string, std::string>>& caller_env);

// The ordered list of calls the executor makes, with their arguments (what --dry-run prints).
std::vector<WinCall> calls_of(const WinPlan& plan);
// "cage.run-<pid>-<nonce>": the run's AppContainer profile name.
std::string container_name_of(const WinHostFacts& facts);
// The package SID Windows derives from an AppContainer name (DeriveAppContainerSidFromAppContainerName):
// "S-1-15-2-" and seven RIDs, the first 28 bytes (little-endian) of the SHA-256 of the lower-cased
// name in UTF-16LE. The executor compares it with what Windows returns.
std::string package_sid_of(const std::string& name);
// The DACL SDDL with `ace` ("(A;OICI;0x1301bf;;;S-1-5-...)") inserted in canonical order: after the
// explicit deny ACEs, before the explicit allows and everything inherited. A NULL DACL is left alone.
std::string insert_ace(const std::string& dacl_sddl, const std::string& ace);
std::string render_text(const WinPlan& plan);
std::string render_json(const WinPlan& plan);
// A summary of a plan (--dry-run without --verbose): the grants with their sources, network,
// environment, limits, what Windows does not enforce.
std::string render_summary(const WinPlan& plan, const policy::Policy& policy);
// --dry-run --target windows on any host.
Result<std::string> render_dry_run(const policy::Policy& policy,
                                   const std::vector<std::pair<std::string, std::string>>& caller_env,
                                   bool json, bool verbose);

}  // namespace cage::win
