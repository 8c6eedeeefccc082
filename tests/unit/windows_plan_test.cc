// win::compile: the token/job/WFP plan as data (which calls, with which arguments), path mapping,
// argument quoting and the case-insensitive environment, all on Linux.
#include <gtest/gtest.h>

#include <algorithm>

#include "cli/options.h"
#include "windows/compile.h"

namespace cage::testing {
namespace {

Result<win::WinPlan> plan_of(std::vector<std::string> words, win::WinHostFacts facts = {},
                             std::vector<std::pair<std::string, std::string>> env = {}) {
  words.insert(words.begin(), "cage");
  const std::string cwd = "/C:/Users/ann/proj", home = "/C:/Users/ann";
  auto inv = cli::parse(words, cwd);
  if (!inv) return inv.error();
  win::normalize_input(inv->input);
  auto p = policy::validate(inv->input, policy::Context{cwd, home, {}});
  if (!p) return p.error();
  facts.on_windows = true;
  facts.home_posix = home;
  facts.userprofile = "C:\\Users\\ann";
  if (!facts.pid) {
    facts.pid = 7;
    facts.nonce[0] = 0xabc;
    facts.nonce[1] = 0x12;
  }
  if (!facts.kind)
    facts.kind = [](const std::string& path) { return path.find('.') == std::string::npos ? 'd' : 'f'; };
  return win::compile(*p, facts, env);
}

const win::WinCall* call(const std::vector<win::WinCall>& calls, const std::string& api, size_t nth = 0) {
  for (const auto& c : calls)
    if (c.api == api && nth-- == 0) return &c;
  return nullptr;
}
std::string arg(const win::WinCall* c, const std::string& name) {
  if (!c) return "<no call>";
  for (const auto& [k, v] : c->args)
    if (k == name) return v;
  return "<no arg " + name + ">";
}
size_t index_of(const std::vector<win::WinCall>& calls, const std::string& api) {
  for (size_t i = 0; i < calls.size(); ++i)
    if (calls[i].api == api) return i;
  return calls.size();
}

// --secret is refused, never dropped, until the Windows executor reads it.
TEST(WindowsPlan, RefusesSecrets) {
  auto plan = plan_of({"--secret", "TOKEN=fd:3", "--", "cmd"});
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().cls, ErrorClass::spawn_sandbox_unavailable);
  EXPECT_EQ(plan.error().input, "--secret TOKEN=fd:3");
}

// Output caps likewise: refused with the flag named, never dropped.
TEST(WindowsPlan, RefusesOutputCaps) {
  auto plan = plan_of({"--max-output", "1M", "--", "cmd"});
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().cls, ErrorClass::spawn_sandbox_unavailable);
  EXPECT_EQ(plan.error().input, "--max-output 1M");
}

// --uid and --scratch are refused, never dropped.
TEST(WindowsPlan, RefusesUidAndScratch) {
  for (auto [flag, value] : {std::pair<const char*, const char*>{"--uid", "nobody"}, {"--scratch", "cache"}}) {
    auto plan = plan_of({flag, value, "--", "cmd"});
    ASSERT_FALSE(plan) << flag;
    EXPECT_EQ(plan.error().cls, ErrorClass::spawn_sandbox_unavailable);
    EXPECT_EQ(plan.error().input, std::string(flag) + " " + value);
  }
}

TEST(WindowsPlan, TokenIsRestrictedAndLow) {
  auto plan = plan_of({"--", "cmd.exe"});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_EQ(plan->token.flags, win::kDisableMaxPrivilege | win::kLuaToken);
  EXPECT_TRUE(plan->token.deny_only_groups_except_everyone);
  auto calls = win::calls_of(*plan);
  EXPECT_EQ(arg(call(calls, "CreateRestrictedToken"), "flags"), "DISABLE_MAX_PRIVILEGE|LUA_TOKEN (0x5)");
  EXPECT_EQ(arg(call(calls, "SetTokenInformation"), "sid"), "S-1-16-4096");
  EXPECT_EQ(plan->token.run_sid, "S-1-9-2748-18-7");
  EXPECT_EQ(arg(call(calls, "CreateRestrictedToken"), "SidsToRestrict"),
            "the caller's user and groups, and S-1-9-2748-18-7");
}

TEST(WindowsPlan, JobKillsOnCloseAndNeverBreaksAway) {
  auto plan = plan_of({"--", "cmd.exe"});
  ASSERT_TRUE(plan);
  uint32_t f = plan->job.limit_flags;
  EXPECT_TRUE(f & win::kJobLimitKillOnJobClose);
  EXPECT_TRUE(f & win::kJobLimitDieOnUnhandledException);
  EXPECT_FALSE(f & (win::kJobLimitBreakawayOk | win::kJobLimitSilentBreakawayOk));
  EXPECT_EQ(plan->job.ui_restrictions, 0xFFu);
  auto calls = win::calls_of(*plan);
  EXPECT_EQ(arg(call(calls, "SetInformationJobObject"), "LimitFlags"), "0x2400");
  // Suspended, in the job, then resumed: the workload never runs outside the job.
  EXPECT_LT(index_of(calls, "CreateProcessAsUserW"), index_of(calls, "AssignProcessToJobObject"));
  EXPECT_LT(index_of(calls, "AssignProcessToJobObject"), index_of(calls, "ResumeThread"));
  EXPECT_EQ(arg(call(calls, "CreateProcessAsUserW"), "flags"), "CREATE_SUSPENDED|CREATE_UNICODE_ENVIRONMENT");
}

TEST(WindowsPlan, LimitsMapOntoTheJob) {
  win::WinHostFacts facts;
  facts.cpu_count = 4;
  auto plan =
      plan_of({"--pids", "64", "--memory", "512M", "--cpu", "1", "--timeout", "30s", "--", "cmd.exe"}, facts);
  ASSERT_TRUE(plan) << plan.error().reason;
  auto calls = win::calls_of(*plan);
  auto* limits = call(calls, "SetInformationJobObject");
  EXPECT_EQ(arg(limits, "LimitFlags"), "0x2608");
  EXPECT_EQ(arg(limits, "ActiveProcessLimit"), "64");
  EXPECT_EQ(arg(limits, "JobMemoryLimit"), std::to_string(512ull << 20));
  EXPECT_EQ(arg(call(calls, "SetInformationJobObject", 2), "CpuRate"), "2500");  // 1 of 4 CPUs
  EXPECT_EQ(arg(call(calls, "WaitForMultipleObjects"), "timeout"), "30000 ms");
  EXPECT_EQ(plan->timeout_ms, 30000u);
}

TEST(WindowsPlan, RwGetsLowLabelAndUserAceHideGetsNoReadUp) {
  auto plan = plan_of({"--rw", "out", "--ro", "C:\\tools", "--hide", "secret.txt", "--", "cmd.exe"});
  ASSERT_TRUE(plan) << plan.error().reason;
  ASSERT_EQ(plan->acl.size(), 4u);
  EXPECT_EQ(plan->acl[0].path, "C:\\tools");
  EXPECT_EQ(plan->acl[0].kind, win::AclChange::Kind::allow_user);
  EXPECT_EQ(plan->acl[1].path, "C:\\Users\\ann\\proj\\out");
  EXPECT_EQ(plan->acl[1].sddl, "S:(ML;OICI;NW;;;LW)");
  EXPECT_EQ(plan->acl[2].sddl, "D:(A;OICI;0x1301bf;;;<USER>)");
  EXPECT_EQ(plan->acl[3].path, "C:\\Users\\ann\\proj\\secret.txt");
  EXPECT_EQ(plan->acl[3].sddl, "S:(ML;;NWNRNX;;;ME)");
  auto calls = win::calls_of(*plan);
  EXPECT_LT(index_of(calls, "SetNamedSecurityInfoW"), index_of(calls, "CreateProcessAsUserW"));
}

TEST(WindowsPlan, WfpBlocksAllButTheProxy) {
  using F = win::WfpFilter;
  using C = win::WfpCondition;
  win::WinHostFacts facts;
  facts.proxy_port = 50123;
  auto none = plan_of({"--", "curl.exe"}, facts);
  ASSERT_TRUE(none);
  ASSERT_TRUE(none->wfp.enabled);
  EXPECT_FALSE(none->proxy);
  EXPECT_EQ(none->wfp.session_flags, 0x1u);  // FWPM_SESSION_FLAG_DYNAMIC
  EXPECT_EQ(none->wfp.sublayer_weight, 0xFFFF);
  ASSERT_EQ(none->wfp.filters.size(), 4u);  // not-the-run permit and block, v4 and v6
  for (const auto& f : none->wfp.filters)
    if (f.action == F::Action::permit) {
      ASSERT_EQ(f.conditions.size(), 1u);
      EXPECT_EQ(f.conditions[0].field, C::Field::ale_user_id);
      EXPECT_EQ(f.conditions[0].sddl, "O:SYG:SYD:(D;;CC;;;S-1-9-2748-18-7)(A;;CC;;;WD)");
    } else {
      EXPECT_TRUE(f.conditions.empty());
      EXPECT_EQ(f.weight, 0);
      EXPECT_EQ(f.flags, win::kFilterFlagClearActionRight) << "a hard block: no other sublayer overrides it";
    }

  auto net = plan_of({"--net", "example.com:443", "--", "curl.exe"}, facts);
  ASSERT_TRUE(net);
  EXPECT_TRUE(net->proxy);
  auto calls = win::calls_of(*net);
  EXPECT_EQ(arg(call(calls, "FwpmEngineOpen0"), "session.flags"), "FWPM_SESSION_FLAG_DYNAMIC (0x1)");
  EXPECT_LT(index_of(calls, "FwpmTransactionBegin0"), index_of(calls, "FwpmFilterAdd0"));
  EXPECT_LT(index_of(calls, "FwpmFilterAdd0"), index_of(calls, "FwpmTransactionCommit0"));
  EXPECT_LT(index_of(calls, "StartProxy"), index_of(calls, "CreateProcessAsUserW"));
  EXPECT_LT(index_of(calls, "FwpmTransactionCommit0"), index_of(calls, "CreateProcessAsUserW"));
  auto* others = call(calls, "FwpmFilterAdd0", 0);
  EXPECT_EQ(arg(others, "action"), "FWP_ACTION_PERMIT");
  EXPECT_EQ(arg(others, "weight"), "15");
  auto* proxy = call(calls, "FwpmFilterAdd0", 2);
  EXPECT_EQ(arg(proxy, "action"), "FWP_ACTION_PERMIT");
  EXPECT_EQ(arg(proxy, "layer"), "FWPM_LAYER_ALE_AUTH_CONNECT_V4");
  EXPECT_EQ(arg(proxy, "conditions"), "IP_PROTOCOL=6; IP_REMOTE_ADDRESS=127.0.0.1; IP_REMOTE_PORT=50123");
  EXPECT_EQ(arg(proxy, "weight"), "14");
  auto* block4 = call(calls, "FwpmFilterAdd0", 3);
  auto* block6 = call(calls, "FwpmFilterAdd0", 4);
  EXPECT_EQ(arg(block4, "action"), "FWP_ACTION_BLOCK");
  EXPECT_EQ(arg(block6, "action"), "FWP_ACTION_BLOCK");
  EXPECT_EQ(arg(block6, "layer"), "FWPM_LAYER_ALE_AUTH_CONNECT_V6");
  EXPECT_EQ(arg(block4, "weight"), "0");
  EXPECT_EQ(arg(block4, "flags"), "CLEAR_ACTION_RIGHT (hard)");
  EXPECT_EQ(arg(proxy, "flags"), "0");
  bool proxy_env = false;
  for (const auto& e : net->env) proxy_env |= e == "HTTPS_PROXY=http://127.0.0.1:50123";
  EXPECT_TRUE(proxy_env);

  facts.proxy_secret = "0123456789abcdef0123456789abcdef";
  auto secret = plan_of({"--net", "example.com:443", "--", "curl.exe"}, facts);
  ASSERT_TRUE(secret);
  bool carried = false;
  for (const auto& e : secret->env)
    carried |= e == "HTTPS_PROXY=http://cage:0123456789abcdef0123456789abcdef@127.0.0.1:50123";
  EXPECT_TRUE(carried) << "the proxy on the host's loopback serves only clients with the run's secret";

  auto shared = plan_of({"--share-net", "--", "curl.exe"});
  ASSERT_TRUE(shared);
  EXPECT_FALSE(shared->wfp.enabled);
  EXPECT_EQ(index_of(win::calls_of(*shared), "FwpmEngineOpen0"), win::calls_of(*shared).size());
}

TEST(WindowsPlan, JournalAndTempAreTheRunsOwn) {
  auto plan = plan_of({"--rw", "out", "--", "cmd.exe"});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->journal.dir, "C:\\Users\\ann\\AppData\\Local\\cage\\restore");
  EXPECT_EQ(plan->journal.file, plan->journal.dir + "\\run-7-00000abc00000012.journal");
  EXPECT_EQ(plan->temp.path, "C:\\Users\\ann\\AppData\\Local\\cage\\tmp\\run-7-00000abc00000012");
  EXPECT_NE(plan->temp.sddl.find("S:(ML;OICI;NW;;;LW)"), std::string::npos);
  EXPECT_EQ(plan->temp.sddl.rfind("D:P(", 0), 0u) << "not inherited from LOCALAPPDATA";
  auto has = [&](const std::string& e) {
    return std::find(plan->env.begin(), plan->env.end(), e) != plan->env.end();
  };
  EXPECT_TRUE(has("TEMP=" + plan->temp.path));
  EXPECT_TRUE(has("TMP=" + plan->temp.path));
  auto calls = win::calls_of(*plan);
  // Orphans first, then the journal, and only then the first descriptor change.
  EXPECT_EQ(index_of(calls, "RestoreOrphanedJournals"), 0u);  // no --net: no proxy before it
  EXPECT_LT(index_of(calls, "CreateFileW"), index_of(calls, "SetNamedSecurityInfoW"));
  EXPECT_EQ(calls.back().api, "Cleanup");
  win::WinHostFacts facts;
  facts.localappdata = "D:\\Local";
  auto moved = plan_of({"--", "cmd.exe"}, facts);
  ASSERT_TRUE(moved);
  EXPECT_EQ(moved->journal.dir, "D:\\Local\\cage\\restore");
}

// The executor follows calls_of: nothing is changed before the journal exists, the workload is
// created only once every restriction is in place, and it runs only once it is in the job.
TEST(WindowsPlan, CallOrderIsFailClosed) {
  win::WinHostFacts facts;
  facts.proxy_port = 40000;
  auto plan = plan_of(
      {"--rw", "out", "--hide", "secret.txt", "--net", "example.com:443", "--cpu", "1", "--", "cmd.exe"},
      facts);
  ASSERT_TRUE(plan) << plan.error().reason;
  auto calls = win::calls_of(*plan);
  const size_t journal = index_of(calls, "CreateFileW"), spawn = index_of(calls, "CreateProcessAsUserW");
  for (const char* api : {"SetNamedSecurityInfoW", "CreateDirectoryW"})
    EXPECT_LT(journal, index_of(calls, api)) << api;
  for (const char* api :
       {"SetNamedSecurityInfoW", "CreateDirectoryW", "CreateRestrictedToken", "SetTokenInformation",
        "CreateJobObjectW", "SetInformationJobObject", "FwpmTransactionCommit0", "StartProxy"})
    EXPECT_LT(index_of(calls, api), spawn) << api;
  EXPECT_LT(index_of(calls, "ResumeThread"), index_of(calls, "WaitForMultipleObjects"));
  EXPECT_EQ(arg(call(calls, "SetInformationJobObject", 2), "ControlFlags"), "ENABLE|HARD_CAP (0x5)");
  EXPECT_NE(arg(call(calls, "WaitForMultipleObjects"), "").find("<no arg"), std::string::npos);
  EXPECT_NE(call(calls, "WaitForMultipleObjects")->why.find("exit 124"), std::string::npos);
  EXPECT_NE(call(calls, "WaitForMultipleObjects")->why.find("exit 130"), std::string::npos);
  // Two label changes (out, secret.txt) and the access entry for out: three journaled changes.
  EXPECT_EQ(plan->acl.size(), 3u);
}

TEST(WindowsAcl, InsertAceKeepsCanonicalOrder) {
  const std::string ace = "(A;OICI;0x1301bf;;;S-1-5-21-1)";
  EXPECT_EQ(win::insert_ace("D:AI(A;ID;FA;;;SY)", ace), "D:AI" + ace + "(A;ID;FA;;;SY)");
  EXPECT_EQ(win::insert_ace("D:P(D;;WD;;;WD)(A;;FA;;;SY)", ace), "D:P(D;;WD;;;WD)" + ace + "(A;;FA;;;SY)");
  // An inherited deny is not explicit: ours still precedes it, as Windows' own editors place it.
  EXPECT_EQ(win::insert_ace("D:(D;ID;WD;;;WD)", ace), "D:" + ace + "(D;ID;WD;;;WD)");
  EXPECT_EQ(win::insert_ace("D:P", ace), "D:P" + ace);
  EXPECT_EQ(win::insert_ace("", ace), "D:" + ace);
  EXPECT_EQ(win::insert_ace("D:NO_ACCESS_CONTROL", ace), "D:NO_ACCESS_CONTROL");
}

TEST(WindowsPaths, TildeSlashesAndUnmappable) {
  EXPECT_EQ(win::posix_form("c:\\Work\\src"), "/C:/Work/src");
  EXPECT_EQ(win::posix_form("D:"), "/D:");
  EXPECT_EQ(win::posix_form("~\\proj"), "~/proj");
  auto plan = plan_of({"--rw", "~/out", "--ro", "D:/data", "--", "cmd.exe"});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_EQ(plan->acl[0].path, "D:\\data");
  EXPECT_EQ(plan->acl[1].path, "C:\\Users\\ann\\out");
  auto bad = plan_of({"--ro", "/usr/lib", "--", "cmd.exe"});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().cls, ErrorClass::invalid_policy);
  EXPECT_EQ(bad.error().input, "--ro /usr/lib");
  EXPECT_NE(bad.error().reason.find("cannot be mapped"), std::string::npos);
  win::WinHostFacts elsewhere;
  elsewhere.home_posix = "/home/ann";
  elsewhere.userprofile = "C:\\Users\\ann";
  EXPECT_EQ(*win::to_windows_path("/home/ann/x", elsewhere, "t"), "C:\\Users\\ann\\x");
  EXPECT_EQ(*win::to_windows_path("/work/main", elsewhere, "t"), "Z:\\work\\main");
}

TEST(WindowsPlan, NoWriteGrantCoversTheJournals) {
  for (const char* path :
       {"~/AppData/Local", "C:/Users/ANN/appdata", "C:/", "~", "~/AppData/Local/cage/restore"}) {
    auto p = plan_of({"--rw", path, "--", "cmd.exe"});
    ASSERT_FALSE(p) << path;
    EXPECT_EQ(p.error().cls, ErrorClass::invalid_policy) << path;
    EXPECT_EQ(p.error().input, "--rw " + win::posix_form(path));
    EXPECT_NE(p.error().reason.find("restore journals"), std::string::npos);
  }
  EXPECT_TRUE(plan_of({"--rw", "~/AppData/Local/Temp", "--", "cmd.exe"}));
  EXPECT_TRUE(plan_of({"--rw", "~/AppData/Local/cagey", "--", "cmd.exe"}));
  EXPECT_TRUE(plan_of({"--ro", "~", "--", "cmd.exe"}));  // reading them is harmless
}

TEST(WindowsPlan, RefusesTransparentMode) {
  auto t = plan_of({"--net", "example.com:443", "--net-mode", "transparent", "--", "curl.exe"});
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().cls, ErrorClass::spawn_sandbox_unavailable);
  EXPECT_EQ(t.error().input, "--net-mode transparent");
  auto proxy = plan_of({"--net", "example.com:443", "--net-mode", "proxy", "--", "curl.exe"});
  ASSERT_TRUE(proxy) << proxy.error().reason;
  EXPECT_TRUE(proxy->proxy);
}

TEST(WindowsPlan, RefusesTmpfsAndMissingGrants) {
  auto t = plan_of({"--tmpfs", "C:/scratch", "--", "cmd.exe"});
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().cls, ErrorClass::spawn_sandbox_unavailable);
  auto sized = plan_of({"--tmpfs-size", "1G", "--", "cmd.exe"});  // refused, never silently dropped
  ASSERT_FALSE(sized);
  EXPECT_EQ(sized.error().cls, ErrorClass::spawn_sandbox_unavailable);
  EXPECT_EQ(sized.error().input, "--tmpfs-size");
  win::WinHostFacts facts;
  facts.kind = [](const std::string&) { return '\0'; };
  auto m = plan_of({"--ro", "C:/nope", "--", "cmd.exe"}, facts);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().cls, ErrorClass::invalid_policy);
}

TEST(WindowsPlan, QuotesArgumentsForCommandLineToArgvW) {
  EXPECT_EQ(win::quote_argument("plain"), "plain");
  EXPECT_EQ(win::quote_argument(""), "\"\"");
  EXPECT_EQ(win::quote_argument("a b"), "\"a b\"");
  EXPECT_EQ(win::quote_argument("say \"hi\""), "\"say \\\"hi\\\"\"");
  EXPECT_EQ(win::quote_argument("C:\\dir with space\\"), "\"C:\\dir with space\\\\\"");
  EXPECT_EQ(win::quote_argument("a\\\\\"b c"), "\"a\\\\\\\\\\\"b c\"");
  auto plan = plan_of({"--", "cmd.exe", "/c", "echo a b"});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->command_line, "cmd.exe /c \"echo a b\"");
}

TEST(WindowsEnv, NamesAreCaseInsensitive) {
  policy::EnvPolicy env;
  env.pass = {"my_*"};
  env.unset = {"path"};
  env.set = {{"Foo", "2"}};
  auto out = win::build_environment(env,
                                    {{"Path", "C:\\Windows"},
                                     {"SystemRoot", "C:\\Windows"},
                                     {"MY_TOKEN", "t"},
                                     {"FOO", "1"},
                                     {"SECRET", "s"}},
                                    {{"USERPROFILE", "C:\\Users\\ann"}});
  auto has = [&](const std::string& e) { return std::find(out.begin(), out.end(), e) != out.end(); };
  EXPECT_TRUE(has("SystemRoot=C:\\Windows"));
  EXPECT_TRUE(has("MY_TOKEN=t"));
  EXPECT_TRUE(has("Foo=2"));
  EXPECT_FALSE(has("FOO=1"));
  for (const auto& e : out) {
    EXPECT_NE(e.rfind("Path=", 0), 0u) << "--unsetenv path removes Path";
    EXPECT_NE(e.rfind("SECRET=", 0), 0u);
  }
}

TEST(WindowsPlan, DryRunElsewhereTakesTheProfileFromAnySpelling) {
  policy::Policy p;
  p.cwd = "/work";
  p.home = "/home/bob";
  p.argv = {"cmd.exe"};
  auto text =
      win::render_dry_run(p, {{"UserProfile", "D:\\Users\\bob"}, {"localappdata", "E:\\Local"}}, false, true);
  ASSERT_TRUE(text) << text.error().reason;
  EXPECT_NE(text->find("USERPROFILE=D:\\Users\\bob"), std::string::npos);
  EXPECT_NE(text->find("dir = E:\\Local\\cage\\restore"), std::string::npos);
  EXPECT_NE(text->find("currentDirectory = Z:\\work"), std::string::npos);
}

TEST(WindowsPlan, RenderedTextNamesTheGaps) {
  auto plan = plan_of({"--rw", "out", "--", "cmd.exe"});
  ASSERT_TRUE(plan);
  std::string text = win::render_text(*plan);
  EXPECT_NE(text.find("CreateRestrictedToken"), std::string::npos);
  EXPECT_NE(text.find("not enforced on Windows:\n  reads:"), std::string::npos);
  EXPECT_NE(win::render_json(*plan).find("\"api\" : \"CreateProcessAsUserW\""), std::string::npos);
}

}  // namespace
}  // namespace cage::testing

namespace cage::testing {
namespace {

// --dry-run --target windows without --verbose: the grants with their flags, the gaps, no calls.
TEST(WindowsPlan, SummaryNamesGrantsWithTheirFlagsAndTheGaps) {
  policy::Policy p;
  p.cwd = "/work";
  p.home = "/home/bob";
  p.argv = {"cmd.exe"};
  p.rw = {{"/work/out", "--rw out"}};
  p.limits.timeout_ms = 5000;
  auto text = win::render_dry_run(p, {{"UserProfile", "D:\\Users\\bob"}}, false, false);
  ASSERT_TRUE(text) << text.error().reason;
  EXPECT_NE(text->find("read-write:\n  /work/out    # --rw out\n"), std::string::npos) << *text;
  EXPECT_NE(text->find("not enforced on Windows: reads:"), std::string::npos) << *text;
  EXPECT_NE(text->find("limits:      timeout 5000 ms\n"), std::string::npos) << *text;
  EXPECT_EQ(text->find("CreateRestrictedToken"), std::string::npos) << *text;
  EXPECT_EQ(text->find("USERPROFILE=D:"), std::string::npos) << "values only with --verbose";
}

}  // namespace
}  // namespace cage::testing
