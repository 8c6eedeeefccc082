// The Windows plan as the ordered calls the executor makes (calls_of), printed by --dry-run --target
// windows as text or JSON on any host. tests/unit/windows_plan_test.cc checks calls and arguments.
#include <cstdio>
#include <string>

#include "common/json.h"
#include "windows/compile.h"

namespace cage::win {

namespace {

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::vector<WinCall> calls_of(const WinPlan& plan) {
  std::vector<WinCall> c;
  for (const auto& a : plan.acl)
    c.push_back(WinCall{"SetNamedSecurityInfoW",
                        {{"path", a.path},
                         {"info", a.kind == AclChange::Kind::allow_user ? "DACL_SECURITY_INFORMATION"
                                                                        : "LABEL_SECURITY_INFORMATION"},
                         {"add", a.sddl},
                         {"restore", "saved descriptor, put back at exit (or on the next start after a crash)"}},
                        a.why});
  c.push_back(WinCall{"CreateRestrictedToken",
                      {{"flags", "DISABLE_MAX_PRIVILEGE|LUA_TOKEN (" + hex(plan.token.flags) + ")"},
                       {"SidsToDisable", "every group of the caller's token except Everyone (" +
                                             std::string(kEveryoneSid) + ")"}},
                      "no privileges, groups deny-only"});
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
  c.push_back(WinCall{"SetInformationJobObject",
                      {{"class", "JobObjectBasicUIRestrictions"}, {"UIRestrictionsClass", hex(plan.job.ui_restrictions)}},
                      "no clipboard, desktop, global atoms, display settings, exit windows"});
  if (plan.job.cpu_rate_flags)
    c.push_back(WinCall{"SetInformationJobObject",
                        {{"class", "JobObjectCpuRateControlInformation"},
                         {"ControlFlags", "ENABLE|HARD_CAP (" + hex(plan.job.cpu_rate_flags) + ")"},
                         {"CpuRate", std::to_string(plan.job.cpu_rate)}},
                        "--cpu"});
  if (plan.wfp) {
    c.push_back(WinCall{"FwpmEngineOpen0", {{"session.flags", "FWPM_SESSION_FLAG_DYNAMIC"}},
                        "filters vanish with the session, also if cage dies"});
    for (const auto& f : plan.filters)
      c.push_back(WinCall{"FwpmFilterAdd0",
                          {{"layer", f.layer}, {"action", f.action}, {"weight", std::to_string(f.weight)},
                           {"conditions", f.conditions}},
                          f.why});
  }
  c.push_back(WinCall{"CreateProcessAsUserW",
                      {{"commandLine", plan.command_line}, {"currentDirectory", plan.cwd},
                       {"flags", "CREATE_SUSPENDED|CREATE_UNICODE_ENVIRONMENT"},
                       {"environment", std::to_string(plan.env.size()) + " variables"}},
                      "started suspended"});
  c.push_back(WinCall{"AssignProcessToJobObject", {}, "before it runs a single instruction"});
  c.push_back(WinCall{"ResumeThread", {}, ""});
  c.push_back(WinCall{"WaitForSingleObject",
                      {{"timeout", plan.timeout_ms ? std::to_string(plan.timeout_ms) + " ms" : "INFINITE"}},
                      "walltime; then TerminateJobObject, exit status 124"});
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
                                   const std::vector<std::pair<std::string, std::string>>& caller_env, bool json) {
  WinHostFacts facts;
#if defined(_WIN32)
  facts.on_windows = true;
#endif
  facts.home_posix = policy.home;
  for (const auto& [k, v] : caller_env)
    if (k == "USERPROFILE" && !v.empty()) facts.userprofile = v;
  auto plan = compile(policy, facts, caller_env);
  if (!plan) return plan.error();
  std::string head = facts.on_windows ? "" : "# (planned on a non-Windows host: ~ is %USERPROFILE%, other paths Wine's Z:)\n";
  return json ? render_json(*plan) : head + render_text(*plan);
}

}  // namespace cage::win
