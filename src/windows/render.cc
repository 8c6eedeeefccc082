// The Windows plan as the ordered calls the executor makes (calls_of), printed by --dry-run --target
// windows as text or JSON on any host; what the executor does, call by call. tests/unit/windows_plan_test.cc
// checks calls and arguments.
#include <cctype>
#include <cstdio>
#include <string>

#include "common/json.h"
#include "policy/summary.h"
#include "windows/compile.h"
#include "windows/label_refs.h"
#include "windows/net_slots.h"

namespace cage::win {

namespace {

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string capabilities_of(const ContainerPlan& c) {
  if (c.capabilities.empty()) return "none (no network, loopback included)";
  std::string out;
  for (const auto& [sid, name] : c.capabilities) out += (out.empty() ? "" : ", ") + name + " (" + sid + ")";
  return out;
}

std::string access_of(AclChange::Kind k) {
  switch (k) {
    case AclChange::Kind::allow_read:
      return "add ACE: read and execute";
    case AclChange::Kind::allow_modify:
      return "add ACE: read, write, execute, delete";
    case AclChange::Kind::deny_write:
      return "add ACE: deny every write right";
    case AclChange::Kind::deny_all:
      return "add ACE: deny all access";
    case AclChange::Kind::low_label:
      return "set label: Low, no-write-up";
  }
  return "?";
}

void container_calls(const WinPlan& plan, std::vector<WinCall>& c) {
  if (plan.container.per_run) {
    c.push_back(
        WinCall{"CreateAppContainerProfile",
                {{"name", plan.container.name}, {"capabilities", capabilities_of(plan.container)}},
                "the run's own package SID " + plan.container.sid +
                    " (Windows' must match); per user, no administrator; journaled, deleted at exit"});
    return;
  }
  c.push_back(WinCall{"CreateAppContainerProfile",
                      {{"name", plan.container.name}, {"capabilities", capabilities_of(plan.container)}},
                      "--net: the slot's container " + plan.container.sid +
                          ", named by the loopback exemption and cage's WFP filters; made per user on first "
                          "use (else DeriveAppContainerSidFromAppContainerName), never deleted"});
  c.push_back(WinCall{"NetworkIsolationGetAppContainerConfig",
                      {{"require", plan.container.name + " on the loopback-exemption list"}},
                      "else refused: spawn_sandbox_unavailable (run `cage --install-windows-network` once, "
                      "elevated)"});
}

// --net: the install is checked, then a slot is claimed and the proxy bound to its port, before
// anything else: the port is in the plan (HTTPS_PROXY) and the container is the slot's.
void net_calls(const WinPlan& plan, std::vector<WinCall>& c) {
  const std::string filters = std::to_string(wfp_filters().size());
  c.push_back(
      WinCall{"FwpmFilterGetByKey0",
              {{"provider", kWfpProviderKey},
               {"sublayer", kWfpSublayerKey},
               {"filters", filters + " (7 per slot, " + std::to_string(kNetSlots) + " slots)"},
               {"and", "NetworkIsolationGetAppContainerConfig: the " + std::to_string(kNetSlots) +
                           " slot containers listed, the old shared cage.net not"}},
              "the install must be complete (read only); else refused: spawn_sandbox_unavailable naming "
              "`cage --install-windows-network`"});
  std::string notes;
  for (const auto& n : plan.net_slot.notes) notes += (notes.empty() ? "" : "; ") + n;
  c.push_back(WinCall{
      "CreateFileW",
      {{"path", plan.net_slot.lock},
       {"share", "0 (held without sharing for the whole run; Windows closes it if cage dies)"},
       {"slot", plan.net_slot.claimed
                    ? plan.container.name + " (port " + std::to_string(plan.net_slot.port) + ")"
                    : "the first free of " + net_slot_name(0) + " .. " + net_slot_name(kNetSlots - 1) +
                          " (shown: " + plan.container.name + ")"},
       {"decisions", notes.empty()
                         ? std::string("made at run time: busy, crashed-and-not-restored and port-taken "
                                       "slots are skipped; none left: exit 125")
                         : notes}},
      "claim a --net slot: one run per slot, so no two runs share a package SID"});
}

void job_calls(const WinPlan& plan, std::vector<WinCall>& c) {
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

}  // namespace

std::vector<WinCall> calls_of(const WinPlan& plan) {
  std::vector<WinCall> c;
  if (plan.proxy) {  // first: its port is part of the plan (filters, HTTPS_PROXY)
    net_calls(plan, c);
    c.push_back(
        WinCall{"StartProxy",
                {{"listen", "127.0.0.1:" + std::to_string(plan.proxy_port) + " (SO_EXCLUSIVEADDRUSE)"}},
                "cage's proxy, with the --net allowlist, in cage's own process; the only address "
                "cage's filters let " +
                    plan.container.name + " reach (a port in use: the next slot)"});
  }
  c.push_back(WinCall{"RestoreOrphanedJournals",
                      {{"dir", plan.journal.dir}},
                      "put back what a crashed run changed (journals no live run holds open)"});
  c.push_back(WinCall{"CreateFileW",
                      {{"path", plan.journal.file},
                       {"share",
                        "FILE_SHARE_READ (held open while the run lives: a live run's journal cannot be "
                        "opened exclusively)"}},
                      "restore journal: each descriptor is saved here before it is changed"});
  const std::string open =
      "CreateFileW(FILE_FLAG_OPEN_REPARSE_POINT): a reparse point is refused; the final path "
      "(GetFinalPathNameByHandleW) must be this one";
  for (const auto& a : plan.acl) {
    if (a.kind == AclChange::Kind::low_label) {
      c.push_back(WinCall{
          "SetSecurityInfo",
          {{"path", a.path},
           {"open", open},
           {"lock",
            plan.journal.labels + "\\" + label_lock_name(a.path) +
                " (opened unshared: one cage at a time; holds the label before cage's and the runs "
                "holding it, by pid and start time)"},
           {"info", "LABEL_SECURITY_INFORMATION"},
           {"set", a.sddl + " (unless a live run already set it)"},
           {"restore",
            "by the last live holder (a crashed run's entry is dropped by the next cage), and only if "
            "the label is still cage's"}},
          access_of(a.kind) + "; " + a.why});
      continue;
    }
    c.push_back(WinCall{"SetSecurityInfo",
                        {{"path", a.path},
                         {"open", open},
                         {"info", "DACL_SECURITY_INFORMATION"},
                         {"add", a.sddl},
                         {"restore",
                          "remove exactly the ACEs for " + plan.container.sid + " (others' and yours stay)"}},
                        access_of(a.kind) + "; " + a.why});
  }
  std::string subdirs;
  for (const auto& d : plan.temp.subdirs) subdirs += (subdirs.empty() ? "" : ", ") + d;
  c.push_back(WinCall{"CreateDirectoryW",
                      {{"path", plan.temp.path}, {"sddl", plan.temp.sddl}, {"subdirs", subdirs}},
                      "the run's TEMP, APPDATA and LOCALAPPDATA; removed at exit (links inside are removed, "
                      "never followed)"});
  container_calls(plan, c);
  job_calls(plan, c);
  c.push_back(WinCall{
      "CreateProcessW",
      {{"applicationName", plan.application.empty() ? "(resolved on Windows at run time)" : plan.application},
       {"commandLine", plan.command_line},
       {"currentDirectory", plan.cwd},
       {"desktop", plan.desktop},
       {"flags", "CREATE_SUSPENDED|CREATE_UNICODE_ENVIRONMENT|EXTENDED_STARTUPINFO_PRESENT"},
       {"attributes",
        "SECURITY_CAPABILITIES (" + plan.container.name + "), HANDLE_LIST (the standard handles only)"},
       {"environment", std::to_string(plan.env.size()) + " variables"}},
      "started suspended, in the AppContainer"});
  c.push_back(WinCall{"AssignProcessToJobObject", {}, "before it runs a single instruction"});
  c.push_back(WinCall{"ResumeThread", {}, ""});
  c.push_back(WinCall{"WaitForMultipleObjects",
                      {{"objects", "process, Ctrl-C event"},
                       {"timeout", plan.timeout_ms ? std::to_string(plan.timeout_ms) + " ms" : "INFINITE"}},
                      "walltime: TerminateJobObject, exit 124; Ctrl-C/close: TerminateJobObject, exit 130"});
  c.push_back(
      WinCall{"Cleanup",
              {{"order",
                "close job; then the journal in reverse: delete the AppContainer profile, remove "
                "TEMP, remove the run's ACEs, leave each label count (the last holder restores "
                "the label); delete journal" +
                    std::string(plan.proxy ? "; then stop the proxy, mark the slot released and close its "
                                             "lock file (only now may another run take its SID)"
                                           : "")}},
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
  std::string out = "platform: windows (an AppContainer: " + plan.container.name + ", a job object)\n";
  out += "command:     " + plan.command_line + "  (in " + plan.cwd + ")\n";
  out += policy::summary_grants(policy);
  out += plan.proxy ? "network: cage's proxy on 127.0.0.1:" + std::to_string(plan.proxy_port) + " (slot " +
                          plan.container.name +
                          (plan.net_slot.claimed ? "" : ", or the first free one at run time") +
                          ": loopback-exempt, and cage's WFP filters let it reach only that port)\n"
         : plan.container.capabilities.empty()
             ? "network: none (the AppContainer has no network capability)\n"
             : "network: the host's\n";
  for (const auto& n : plan.net_slot.notes) out += "  slot " + n + "\n";
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
    else if (named(k, "PROGRAMDATA") && !v.empty())
      facts.programdata = v;
  auto plan = compile(policy, facts, caller_env);
  if (!plan) return plan.error();
  std::string head = facts.on_windows
                         ? ""
                         : "# (planned on a non-Windows host: ~ is %USERPROFILE%, other paths Wine's Z:)\n";
  return json ? render_json(*plan) : head + (verbose ? render_text(*plan) : render_summary(*plan, policy));
}

}  // namespace cage::win
