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
#include "policy/policy.h"

namespace cage::win {

// winnt.h / winbase.h values, spelled out so the plan is the same on every build host.
inline constexpr uint32_t kDisableMaxPrivilege = 0x1, kLuaToken = 0x4;
inline constexpr uint32_t kJobLimitActiveProcess = 0x8, kJobLimitJobMemory = 0x200,
                          kJobLimitDieOnUnhandledException = 0x400, kJobLimitBreakawayOk = 0x800,
                          kJobLimitSilentBreakawayOk = 0x1000, kJobLimitKillOnJobClose = 0x2000;
inline constexpr uint32_t kUiLimitAll = 0xFF;  // handles, clipboard r/w, system parameters, display
                                               // settings, global atoms, desktop, exit windows
inline constexpr uint32_t kCpuRateEnable = 0x1, kCpuRateHardCap = 0x4;
inline constexpr const char* kLowIntegritySid = "S-1-16-4096";
inline constexpr const char* kMediumIntegritySid = "S-1-16-8192";
inline constexpr const char* kEveryoneSid = "S-1-1-0";

struct WinHostFacts {
  bool on_windows = false;     // false: a cross-target dry-run; paths map as Wine maps them (Z:)
  std::string home_posix;      // the Policy's home ("/C:/Users/ann", or $HOME elsewhere)
  std::string userprofile = "C:\\Users\\user";  // %USERPROFILE%, what "~" maps to
  unsigned cpu_count = 1;
  uint16_t proxy_port = 0;     // 0: not known yet (dry-run; 3128 shown)
  std::string private_tmp;     // the run's own TEMP (Windows path), already Low-labelled; may be empty
  // Kind of a Windows path: 'd' directory, 'f' file, 0 missing; empty function: everything exists as a dir.
  std::function<char(const std::string&)> kind;
};

struct TokenPlan {
  uint32_t flags = kDisableMaxPrivilege | kLuaToken;
  bool deny_only_groups_except_everyone = true;  // every group SID deny-only, Everyone kept enabled
  std::string integrity_sid = kLowIntegritySid;
};

struct JobPlan {
  uint32_t limit_flags = kJobLimitKillOnJobClose | kJobLimitDieOnUnhandledException;  // never breakaway
  uint32_t active_processes = 0;  // with kJobLimitActiveProcess
  uint64_t job_memory = 0;        // bytes, with kJobLimitJobMemory
  uint32_t ui_restrictions = kUiLimitAll;
  uint32_t cpu_rate_flags = 0;    // kCpuRateEnable | kCpuRateHardCap with cpu_rate
  uint32_t cpu_rate = 0;          // 1/100 percent of the whole machine (10000 = all CPUs)
};

// A change to one path's security descriptor. The old descriptor is saved (in %LOCALAPPDATA%/cage/
// restore) before the change and put back when the run ends, or on cage's next start after a crash.
struct AclChange {
  enum class Kind { low_label, allow_user, no_read_up } kind = Kind::low_label;
  std::string path;  // Windows form
  bool is_dir = true;
  std::string sddl;  // the ACE added, with <USER> for the caller's SID
  std::string why;
};

struct WfpFilter {
  std::string layer;   // "FWPM_LAYER_ALE_AUTH_CONNECT_V4"
  std::string action;  // "PERMIT" / "BLOCK"
  uint8_t weight = 0;
  std::string conditions;
  std::string why;
};

struct WinCall {
  std::string api;
  std::vector<std::pair<std::string, std::string>> args;
  std::string why;
};

struct WinPlan {
  TokenPlan token;
  JobPlan job;
  std::vector<AclChange> acl;
  bool wfp = false;  // open a dynamic WFP session and add `filters`
  std::vector<WfpFilter> filters;
  std::vector<std::string> env;  // NAME=VALUE
  std::vector<std::string> argv;
  std::string command_line;      // argv quoted for CreateProcessAsUserW (CommandLineToArgvW rules)
  std::string cwd;               // Windows form
  uint64_t timeout_ms = 0;
  uint16_t proxy_port = 0;
  std::vector<std::string> gaps;  // what this plan cannot enforce on Windows, said in --dry-run
};

// "/C:/x/y" -> "C:\x\y"; under the home -> %USERPROFILE%\...; on a non-Windows host every other
// absolute path maps through Wine's Z: drive. Anything else cannot be mapped: invalid_policy.
Result<std::string> to_windows_path(const std::string& posix, const WinHostFacts& facts, const std::string& input);
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
std::string render_text(const WinPlan& plan);
std::string render_json(const WinPlan& plan);
// --dry-run --target windows on any host.
Result<std::string> render_dry_run(const policy::Policy& policy,
                                   const std::vector<std::pair<std::string, std::string>>& caller_env, bool json);

}  // namespace cage::win
