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
  if (!facts.kind) facts.kind = [](const std::string& path) { return path.find('.') == std::string::npos ? 'd' : 'f'; };
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

TEST(WindowsPlan, TokenIsRestrictedAndLow) {
  auto plan = plan_of({"--", "cmd.exe"});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_EQ(plan->token.flags, win::kDisableMaxPrivilege | win::kLuaToken);
  EXPECT_TRUE(plan->token.deny_only_groups_except_everyone);
  auto calls = win::calls_of(*plan);
  EXPECT_EQ(arg(call(calls, "CreateRestrictedToken"), "flags"), "DISABLE_MAX_PRIVILEGE|LUA_TOKEN (0x5)");
  EXPECT_EQ(arg(call(calls, "SetTokenInformation"), "sid"), "S-1-16-4096");
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
  auto plan = plan_of({"--pids", "64", "--memory", "512M", "--cpu", "1", "--timeout", "30s", "--", "cmd.exe"}, facts);
  ASSERT_TRUE(plan) << plan.error().reason;
  auto calls = win::calls_of(*plan);
  auto* limits = call(calls, "SetInformationJobObject");
  EXPECT_EQ(arg(limits, "LimitFlags"), "0x2608");
  EXPECT_EQ(arg(limits, "ActiveProcessLimit"), "64");
  EXPECT_EQ(arg(limits, "JobMemoryLimit"), std::to_string(512ull << 20));
  EXPECT_EQ(arg(call(calls, "SetInformationJobObject", 2), "CpuRate"), "2500");  // 1 of 4 CPUs
  EXPECT_EQ(arg(call(calls, "WaitForSingleObject"), "timeout"), "30000 ms");
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
  win::WinHostFacts facts;
  facts.proxy_port = 50123;
  auto none = plan_of({"--", "curl.exe"}, facts);
  ASSERT_TRUE(none);
  ASSERT_TRUE(none->wfp);
  for (const auto& f : none->filters) EXPECT_EQ(f.action, "BLOCK");
  auto net = plan_of({"--net", "example.com:443", "--", "curl.exe"}, facts);
  ASSERT_TRUE(net);
  auto calls = win::calls_of(*net);
  EXPECT_EQ(arg(call(calls, "FwpmEngineOpen0"), "session.flags"), "FWPM_SESSION_FLAG_DYNAMIC");
  auto* permit = call(calls, "FwpmFilterAdd0");
  EXPECT_EQ(arg(permit, "action"), "PERMIT");
  EXPECT_NE(arg(permit, "conditions").find("IP_REMOTE_ADDRESS=127.0.0.1; IP_REMOTE_PORT=50123"), std::string::npos);
  EXPECT_EQ(arg(call(calls, "FwpmFilterAdd0", 1), "action"), "BLOCK");
  EXPECT_EQ(arg(call(calls, "FwpmFilterAdd0", 2), "layer"), "FWPM_LAYER_ALE_AUTH_CONNECT_V6");
  EXPECT_GT(std::stoi(arg(permit, "weight")), std::stoi(arg(call(calls, "FwpmFilterAdd0", 1), "weight")));
  auto shared = plan_of({"--share-net", "--", "curl.exe"});
  ASSERT_TRUE(shared);
  EXPECT_FALSE(shared->wfp);
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

TEST(WindowsPlan, RefusesTmpfsAndMissingGrants) {
  auto t = plan_of({"--tmpfs", "C:/scratch", "--", "cmd.exe"});
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().cls, ErrorClass::spawn_sandbox_unavailable);
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
  auto out = win::build_environment(
      env, {{"Path", "C:\\Windows"}, {"SystemRoot", "C:\\Windows"}, {"MY_TOKEN", "t"}, {"FOO", "1"}, {"SECRET", "s"}},
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
