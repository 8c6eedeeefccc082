// The Windows plan as the ordered calls the executor makes (calls_of), printed by --dry-run --target
// windows as text or JSON on any host; what the executor does, call by call. tests/unit/windows_plan_test.cc
// checks calls and arguments.
#include <cctype>
#include <cstdio>
#include <string>

#include "common/json.h"
#include "policy/summary.h"
#include "windows/compile.h"

namespace cage::win {

namespace {

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string to_string(WfpFilter::Layer l) {
  switch (l) {
    case WfpFilter::Layer::ale_auth_connect_v4:
      return "FWPM_LAYER_ALE_AUTH_CONNECT_V4";
    case WfpFilter::Layer::ale_auth_connect_v6:
      return "FWPM_LAYER_ALE_AUTH_CONNECT_V6";
  }
  return "?";
}

std::string to_string(const WfpCondition& c) {
  switch (c.field) {
    case WfpCondition::Field::ale_user_id:
      return "ALE_USER_ID matches " + c.sddl;
    case WfpCondition::Field::ip_protocol:
      return "IP_PROTOCOL=" + std::to_string(c.value);
    case WfpCondition::Field::ip_remote_address_v4:
      return "IP_REMOTE_ADDRESS=" + std::to_string(c.value >> 24) + "." +
             std::to_string((c.value >> 16) & 0xff) + "." + std::to_string((c.value >> 8) & 0xff) + "." +
             std::to_string(c.value & 0xff);
    case WfpCondition::Field::ip_remote_port:
      return "IP_REMOTE_PORT=" + std::to_string(c.value);
  }
  return "?";
}

std::string conditions_of(const WfpFilter& f) {
  std::string out;
  for (const auto& c : f.conditions) out += (out.empty() ? "" : "; ") + to_string(c);
  return out.empty() ? "(none: every connection that gets this far)" : out;
}

void token_and_job_calls(const WinPlan& plan, std::vector<WinCall>& c) {
  c.push_back(WinCall{"CreateRestrictedToken",
                      {{"flags", "DISABLE_MAX_PRIVILEGE|LUA_TOKEN (" + hex(plan.token.flags) + ")"},
                       {"SidsToDisable", "every group of the caller's token except Everyone (" +
                                             std::string(kEveryoneSid) + ")"},
                       {"SidsToRestrict", "the caller's user and groups, and " + plan.token.run_sid}},
                      "no privileges, groups deny-only; the run SID marks the run's connections for WFP"});
  c.push_back(WinCall{"SetTokenInformation",
                      {{"class", "TokenIntegrityLevel"}, {"sid", plan.token.integrity_sid}},
                      "Low integrity: no writes to Medium objects"});
  c.push_back(WinCall{"CreateJobObjectW", {{"name", "(unnamed)"}}, "the run's processes"});
  c.push_back(WinCall{"SetInformationJobObject",
                      {{"class", "JobObjectExtendedLimitInformation"},
                       {"LimitFlags", hex(plan.job.limit_flags)},
                       {"ActiveProcessLimit", std::to_string(plan.job.active_processes)},
                       {"JobMemoryLimit", std::to_string(plan.job.job_memory)}},
                      "KILL_ON_JOB_CLOSE, DIE_ON_UNHANDLED_EXCEPTION, no breakaway; --pids, --memory"});
  c.push_back(WinCall{
      "SetInformationJobObject",
      {{"class", "JobObjectBasicUIRestrictions"}, {"UIRestrictionsClass", hex(plan.job.ui_restrictions)}},
      "no clipboard, desktop, global atoms, display settings, exit windows"});
  if (plan.job.cpu_rate_flags)
    c.push_back(WinCall{"SetInformationJobObject",
                        {{"class", "JobObjectCpuRateControlInformation"},
                         {"ControlFlags", "ENABLE|HARD_CAP (" + hex(plan.job.cpu_rate_flags) + ")"},
                         {"CpuRate", std::to_string(plan.job.cpu_rate)}},
                        "--cpu"});
}

void wfp_calls(const WinPlan& plan, std::vector<WinCall>& c) {
  if (!plan.wfp.enabled) return;
  c.push_back(
      WinCall{"FwpmEngineOpen0",
              {{"session.flags", "FWPM_SESSION_FLAG_DYNAMIC (" + hex(plan.wfp.session_flags) + ")"}},
              "filters vanish with the session, also if cage dies; failure: spawn_sandbox_unavailable"});
  c.push_back(WinCall{"FwpmTransactionBegin0", {}, "all filters or none"});
  c.push_back(WinCall{"FwpmSubLayerAdd0",
                      {{"subLayerKey", "(fresh GUID)"}, {"weight", hex(plan.wfp.sublayer_weight)}},
                      "cage's own sublayer"});
  for (const auto& f : plan.wfp.filters)
    c.push_back(
        WinCall{"FwpmFilterAdd0",
                {{"layer", to_string(f.layer)},
                 {"action", f.action == WfpFilter::Action::permit ? "FWP_ACTION_PERMIT" : "FWP_ACTION_BLOCK"},
                 {"weight", std::to_string(f.weight)},
                 {"conditions", conditions_of(f)},
                 {"flags", f.flags & kFilterFlagClearActionRight ? "CLEAR_ACTION_RIGHT (hard)" : "0"}},
                f.why});
  c.push_back(WinCall{"FwpmTransactionCommit0", {}, ""});
}

}  // namespace

std::vector<WinCall> calls_of(const WinPlan& plan) {
  std::vector<WinCall> c;
  if (plan.proxy)  // first: its port is part of the plan (filters, HTTPS_PROXY)
    c.push_back(WinCall{"StartProxy",
                        {{"listen", "127.0.0.1:" + std::to_string(plan.proxy_port)}},
                        "cage's proxy, with the --net allowlist, in cage's own process"});
  c.push_back(WinCall{"RestoreOrphanedJournals",
                      {{"dir", plan.journal.dir}},
                      "put back what a crashed run changed (journals no live run holds open)"});
  c.push_back(WinCall{"CreateFileW",
                      {{"path", plan.journal.file},
                       {"share",
                        "FILE_SHARE_READ (held open while the run lives: a live run's journal cannot be "
                        "opened exclusively)"}},
                      "restore journal: each descriptor is saved here before it is changed"});
  for (const auto& a : plan.acl)
    c.push_back(
        WinCall{"SetNamedSecurityInfoW",
                {{"path", a.path},
                 {"info", a.kind == AclChange::Kind::allow_user ? "DACL_SECURITY_INFORMATION"
                                                                : "LABEL_SECURITY_INFORMATION"},
                 {a.kind == AclChange::Kind::allow_user ? "add" : "set", a.sddl},
                 {"restore", "saved descriptor, put back at exit (or on the next start after a crash)"}},
                a.why});
  c.push_back(WinCall{"CreateDirectoryW",
                      {{"path", plan.temp.path}, {"sddl", plan.temp.sddl}},
                      "the run's TEMP; removed at exit (links inside are removed, never followed)"});
  token_and_job_calls(plan, c);
  wfp_calls(plan, c);
  c.push_back(WinCall{"CreateProcessAsUserW",
                      {{"commandLine", plan.command_line},
                       {"currentDirectory", plan.cwd},
                       {"flags", "CREATE_SUSPENDED|CREATE_UNICODE_ENVIRONMENT"},
                       {"environment", std::to_string(plan.env.size()) + " variables"}},
                      "started suspended"});
  c.push_back(WinCall{"AssignProcessToJobObject", {}, "before it runs a single instruction"});
  c.push_back(WinCall{"ResumeThread", {}, ""});
  c.push_back(WinCall{"WaitForMultipleObjects",
                      {{"objects", "process, Ctrl-C event"},
                       {"timeout", plan.timeout_ms ? std::to_string(plan.timeout_ms) + " ms" : "INFINITE"}},
                      "walltime: TerminateJobObject, exit 124; Ctrl-C/close: TerminateJobObject, exit 130"});
  c.push_back(WinCall{"Cleanup",
                      {{"order",
                        "close job, close WFP session, remove TEMP, restore descriptors "
                        "(reverse order), delete journal"}},
                      "also after any failure above"});
  return c;
}

std::string render_text(const WinPlan& plan) {
  std::string out = "# cage plan for Windows: the calls in order\n";
  int n = 0;
  for (const auto& c : calls_of(plan)) {
    out += std::to_string(++n) + ". " + c.api + (c.why.empty() ? "" : "  # " + c.why) + "\n";
    for (const auto& [k, v] : c.args) out += "     " + k + " = " + v + "\n";
  }
  out += "environment:\n";
  for (const auto& e : plan.env) out += "  " + e + "\n";
  out += "not enforced on Windows:\n";
  for (const auto& g : plan.gaps) out += "  " + g + "\n";
  return out;
}

std::string render_summary(const WinPlan& plan, const policy::Policy& policy) {
  std::string out = "platform: windows (a restricted token at Low integrity, a job object";
  out += std::string(plan.wfp.enabled ? ", WFP filters" : "") + ")\n";
  out += "command:     " + plan.command_line + "  (in " + plan.cwd + ")\n";
  out += policy::summary_grants(policy);
  out += plan.proxy ? "network: cage's proxy on 127.0.0.1:" + std::to_string(plan.proxy_port) + "\n"
                    : std::string(plan.wfp.enabled ? "network: none (WFP blocks every connection)\n"
                                                   : "network: the host's\n");
  for (const auto& r : policy.net) out += "  allow " + r.pattern.text + "\n";
  out += policy::summary_environment(plan.env);
  out += "limits:      " + policy::summary_limits(policy.limits) + "\n";
  for (const auto& g : plan.gaps) out += "not enforced on Windows: " + g + "\n";
  return out + "(a summary: --verbose prints the calls in order, with their arguments)\n";
}

std::string render_json(const WinPlan& plan) {
  toml::table t;
  t.insert("target", "windows");
  toml::array calls;
  for (const auto& c : calls_of(plan)) {
    toml::table call;
    call.insert("api", c.api);
    toml::table args;
    for (const auto& [k, v] : c.args) args.insert(k, v);
    call.insert("args", std::move(args));
    call.insert("why", c.why);
    calls.push_back(std::move(call));
  }
  t.insert("calls", std::move(calls));
  toml::array env, argv, gaps;
  for (const auto& e : plan.env) env.push_back(e);
  for (const auto& a : plan.argv) argv.push_back(a);
  for (const auto& g : plan.gaps) gaps.push_back(g);
  t.insert("argv", std::move(argv));
  t.insert("env", std::move(env));
  t.insert("gaps", std::move(gaps));
  t.insert("cwd", plan.cwd);
  return to_json(t) + "\n";
}

Result<std::string> render_dry_run(const policy::Policy& policy,
                                   const std::vector<std::pair<std::string, std::string>>& caller_env,
                                   bool json, bool verbose) {
  WinHostFacts facts;
  facts.pid = 4242;  // a placeholder identity: the real run draws its own
#if defined(_WIN32)
  facts.on_windows = true;
#endif
  facts.home_posix = policy.home;
  auto named = [](std::string k, const char* want) {  // Windows spells names in any case
    for (auto& ch : k) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return k == want;
  };
  for (const auto& [k, v] : caller_env)
    if (named(k, "USERPROFILE") && !v.empty())
      facts.userprofile = v;
    else if (named(k, "LOCALAPPDATA") && !v.empty())
      facts.localappdata = v;
  auto plan = compile(policy, facts, caller_env);
  if (!plan) return plan.error();
  std::string head = facts.on_windows
                         ? ""
                         : "# (planned on a non-Windows host: ~ is %USERPROFILE%, other paths Wine's Z:)\n";
  return json ? render_json(*plan) : head + (verbose ? render_text(*plan) : render_summary(*plan, policy));
}

}  // namespace cage::win
