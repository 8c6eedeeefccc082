// win::compile: Policy + WinHostFacts -> WinPlan, every Windows call a run makes and its arguments:
// a restricted Low-integrity token, a job object with limits, the label/ACL changes for grants
// (recorded, restored afterwards), WFP filters in a dynamic session. Pure; tested on Linux by
// tests/unit/windows_plan_test.cc. Policy paths on Windows are "/C:/dir" (posix_form, paths.cc).
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
inline constexpr uint32_t kDisableMaxPrivilege = 0x1, kLuaToken = 0x4;
inline constexpr uint32_t kJobLimitActiveProcess = 0x8, kJobLimitJobMemory = 0x200,
                          kJobLimitDieOnUnhandledException = 0x400, kJobLimitBreakawayOk = 0x800,
                          kJobLimitSilentBreakawayOk = 0x1000, kJobLimitKillOnJobClose = 0x2000;
inline constexpr uint32_t kUiLimitAll = 0xFF;  // handles, clipboard r/w, system parameters, display
                                               // settings, global atoms, desktop, exit windows
inline constexpr uint32_t kFilterFlagClearActionRight = 0x8;  // FWPM_FILTER_FLAG_CLEAR_ACTION_RIGHT
inline constexpr uint32_t kCpuRateEnable = 0x1, kCpuRateHardCap = 0x4;
inline constexpr const char* kLowIntegritySid = "S-1-16-4096";
inline constexpr const char* kMediumIntegritySid = "S-1-16-8192";
inline constexpr const char* kEveryoneSid = "S-1-1-0";

struct WinHostFacts {
  bool on_windows = false;  // false: a cross-target dry-run; paths map as Wine maps them (Z:)
  std::string home_posix;   // the Policy's home ("/C:/Users/ann", or $HOME elsewhere)
  std::string userprofile = "C:\\Users\\user";  // %USERPROFILE%, what "~" maps to
  std::string localappdata;                     // %LOCALAPPDATA%; empty: <userprofile>\AppData\Local
  unsigned cpu_count = 1;
  uint16_t proxy_port = 0;   // 0: not known yet (dry-run; 3128 shown)
  std::string proxy_secret;  // the run's proxy secret (the *_PROXY URLs carry it); "" in tests
  // This run's identity: names its journal and temp directory and the marker SID its token carries.
  uint32_t pid = 0;
  uint32_t nonce[2] = {0, 0};  // random on a real run
  // Kind of a Windows path: 'd' directory, 'f' file, 0 missing; empty function: everything exists as a dir.
  std::function<char(const std::string&)> kind;
};

struct TokenPlan {
  uint32_t flags = kDisableMaxPrivilege | kLuaToken;
  bool deny_only_groups_except_everyone = true;  // every group SID deny-only, Everyone kept enabled
  // Restricting SIDs: the caller's user and groups (so the second access check grants what the first
  // one does) plus `run_sid`, a SID no other token holds. WFP tells the run's connections apart by it.
  std::string run_sid;
  std::string integrity_sid = kLowIntegritySid;
};

struct JobPlan {
  uint32_t limit_flags = kJobLimitKillOnJobClose | kJobLimitDieOnUnhandledException;  // never breakaway
  uint32_t active_processes = 0;  // with kJobLimitActiveProcess
  uint64_t job_memory = 0;        // bytes, with kJobLimitJobMemory
  uint32_t ui_restrictions = kUiLimitAll;
  uint32_t cpu_rate_flags = 0;  // kCpuRateEnable | kCpuRateHardCap with cpu_rate
  uint32_t cpu_rate = 0;        // 1/100 percent of the whole machine (10000 = all CPUs)
};

// A change to one path's security descriptor. The old descriptor is written to the restore journal
// (JournalPlan) before the change and put back when the run ends, or on cage's next start after a crash.
struct AclChange {
  enum class Kind { low_label, allow_user, no_read_up } kind = Kind::low_label;
  std::string path;  // Windows form
  bool is_dir = true;
  std::string
      sddl;  // the ACE added ("D:(A;...)") or the label set ("S:(ML;...)"), <USER> for the caller's SID
  std::string why;
};

// The restore journal: one file per run in `dir`, held open exclusively while the run lives, so that
// a later cage can tell an orphaned journal (its run crashed) from a live one and restore it.
struct JournalPlan {
  std::string dir;   // %LOCALAPPDATA%\cage\restore
  std::string file;  // dir\run-<pid>-<nonce>.journal
};

// The run's own TEMP, created Low-labelled (the token can write nothing Medium) and removed at the end.
struct TempPlan {
  std::string path;  // %LOCALAPPDATA%\cage\tmp\run-<pid>-<nonce>
  std::string sddl;  // its whole descriptor, <USER> for the caller's SID
};

struct WfpCondition {
  enum class Field { ale_user_id, ip_protocol, ip_remote_address_v4, ip_remote_port } field;
  uint32_t value = 0;  // protocol number, IPv4 address (host order) or port
  std::string sddl;    // ale_user_id: the connecting token must be granted FWP_ACTRL_MATCH_FILTER (CC)
};

struct WfpFilter {
  enum class Layer { ale_auth_connect_v4, ale_auth_connect_v6 } layer = Layer::ale_auth_connect_v4;
  enum class Action { permit, block } action = Action::block;
  uint8_t weight = 0;                    // within cage's own sublayer: the highest matching weight decides
  std::vector<WfpCondition> conditions;  // all must match
  std::string why;
  uint32_t flags = 0;  // kFilterFlagClearActionRight: no other sublayer can turn this block into a permit
};

struct WfpPlan {
  bool enabled = false;  // open a dynamic session, add a sublayer and `filters` in one transaction
  uint16_t sublayer_weight = 0xFFFF;  // cage's sublayer is arbitrated first
  uint32_t session_flags = 0x1;       // FWPM_SESSION_FLAG_DYNAMIC: everything goes when the session closes
  std::vector<WfpFilter> filters;
};

struct WinCall {
  std::string api;
  std::vector<std::pair<std::string, std::string>> args;
  std::string why;
};

struct WinPlan {
  TokenPlan token;
  JobPlan job;
  JournalPlan journal;
  TempPlan temp;
  std::vector<AclChange> acl;
  WfpPlan wfp;
  std::vector<std::string> env;  // NAME=VALUE
  std::vector<std::string> argv;
  std::string command_line;  // argv quoted for CreateProcessAsUserW (CommandLineToArgvW rules)
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
// The environment, names compared case-insensitively as Windows does.
std::vector<std::string> build_environment(const policy::EnvPolicy& env,
                                           const std::vector<std::pair<std::string, std::string>>& host,
                                           const std::vector<std::pair<std::string, std::string>>& forced);

Result<WinPlan> compile(const policy::Policy& policy, const WinHostFacts& facts,
                        const std::vector<std::pair<std::string, std::string>>& caller_env);

// The ordered list of calls the executor makes, with their arguments (what --dry-run prints).
std::vector<WinCall> calls_of(const WinPlan& plan);
// "S-1-9-<a>-<b>": the run's marker SID (resource-manager authority; no account has it).
std::string run_sid_of(const WinHostFacts& facts);
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
