// win::compile: the AppContainer/job plan as data (which calls, with which arguments), path mapping,
// command resolution, argument quoting and the case-insensitive environment, all on Linux.
#include <gtest/gtest.h>

#include <algorithm>

#include "cli/options.h"
#include "golden.h"
#include "windows/compile.h"
#include "windows/label_refs.h"
#include "windows/net_slots.h"

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
  if (env.empty())
    env = {{"Path", "C:\\Windows\\system32;C:\\Windows"},
           {"PATHEXT", ".COM;.EXE;.BAT;.CMD"},
           {"SystemRoot", "C:\\Windows"},
           {"ComSpec", "C:\\Windows\\system32\\cmd.exe"}};
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

// Issue 24, point 1: a run without --net needs no administrator: its own AppContainer, without
// capabilities, has no network; no WFP call anywhere in the plan.
TEST(WindowsPlan, ContainerIsTheRunsOwnWithoutCapabilities) {
  auto plan = plan_of({"--", "cmd.exe"});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_EQ(plan->container.name, "cage.run-7-00000abc00000012");
  EXPECT_TRUE(plan->container.per_run);
  EXPECT_TRUE(plan->container.capabilities.empty());
  EXPECT_FALSE(plan->container.loopback_exemption);
  // S-1-15-2 and seven RIDs: the shape of every package SID.
  EXPECT_EQ(plan->container.sid.rfind("S-1-15-2-", 0), 0u);
  EXPECT_EQ(std::count(plan->container.sid.begin(), plan->container.sid.end(), '-'), 10);
  EXPECT_EQ(win::package_sid_of("CAGE.NET"), win::package_sid_of("cage.net")) << "names are case-insensitive";
  // A pair Windows itself made: the legacy Edge's package family name and its AppContainer SID.
  EXPECT_EQ(win::package_sid_of("Microsoft.MicrosoftEdge_8wekyb3d8bbwe"),
            "S-1-15-2-3624051433-2125758914-1423191267-1740899205-1073925389-3782572162-737981194");
  EXPECT_NE(win::package_sid_of("cage.net"), plan->container.sid);
  auto calls = win::calls_of(*plan);
  EXPECT_EQ(arg(call(calls, "CreateAppContainerProfile"), "name"), "cage.run-7-00000abc00000012");
  EXPECT_EQ(arg(call(calls, "CreateAppContainerProfile"), "capabilities"),
            "none (no network, loopback included)");
  for (const auto& c : calls) {
    EXPECT_EQ(c.api.rfind("Fwpm", 0), std::string::npos) << c.api;
    EXPECT_NE(c.api, "CreateRestrictedToken");
  }
  EXPECT_NE(
      win::render_summary(*plan, policy::Policy{}).find("network: none (the AppContainer has no network"),
      std::string::npos);
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
  EXPECT_LT(index_of(calls, "CreateProcessW"), index_of(calls, "AssignProcessToJobObject"));
  EXPECT_LT(index_of(calls, "AssignProcessToJobObject"), index_of(calls, "ResumeThread"));
  EXPECT_EQ(arg(call(calls, "CreateProcessW"), "flags"),
            "CREATE_SUSPENDED|CREATE_UNICODE_ENVIRONMENT|EXTENDED_STARTUPINFO_PRESENT");
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

// Grants are ACEs for the run's package SID: --rw also a Low label (AppContainers run at Low
// integrity), --hide a deny of everything, --ro beneath --rw a deny of the write rights (point 4).
TEST(WindowsPlan, GrantsAreAcesForThePackageSid) {
  using K = win::AclChange::Kind;
  auto plan = plan_of(
      {"--rw", "out", "--ro", "C:\\tools", "--ro", "out/keep", "--hide", "secret.txt", "--", "cmd.exe"});
  ASSERT_TRUE(plan) << plan.error().reason;
  ASSERT_EQ(plan->acl.size(), 7u);
  const std::string sid = plan->container.sid;
  EXPECT_EQ(sid, win::package_sid_of("cage.run-7-00000abc00000012"));
  EXPECT_EQ(plan->acl[0].kind, K::low_label);
  EXPECT_EQ(plan->acl[0].path, "C:\\Users\\ann\\proj\\out");
  EXPECT_EQ(plan->acl[0].sddl, "S:(ML;OICI;NW;;;LW)");
  EXPECT_EQ(plan->acl[1].kind, K::allow_modify);
  EXPECT_EQ(plan->acl[1].sddl, "D:(A;OICI;0x1301bf;;;" + sid + ")");
  EXPECT_EQ(plan->acl[2].path, "C:\\tools");
  EXPECT_EQ(plan->acl[2].sddl, "D:(A;OICI;0x1200a9;;;" + sid + ")");
  EXPECT_EQ(plan->acl[3].path, "C:\\Users\\ann\\proj\\out\\keep");
  EXPECT_EQ(plan->acl[3].kind, K::allow_read);
  EXPECT_EQ(plan->acl[4].path, "C:\\Users\\ann\\proj\\out\\keep");
  EXPECT_EQ(plan->acl[4].kind, K::deny_write) << "--ro beneath --rw stays read-only";
  EXPECT_EQ(plan->acl[4].sddl, "D:(D;OICI;0x10156;;;" + sid + ")");
  EXPECT_EQ(plan->acl[5].path, "C:\\Users\\ann\\proj\\secret.txt");
  EXPECT_EQ(plan->acl[5].sddl, "D:(D;;0x1f01ff;;;" + sid + ")");
  EXPECT_EQ(plan->acl[6].path, "C:\\Users\\ann\\proj");
  EXPECT_EQ(plan->acl[6].why, "current directory (read-only)");
  EXPECT_EQ(plan->acl[6].sddl, "D:(A;OICI;0x1200a9;;;" + sid + ")");
  EXPECT_EQ(win::kModifyMask & 0x40u, 0u) << "no FILE_DELETE_CHILD: a nested --ro cannot be renamed away";
  auto calls = win::calls_of(*plan);
  auto* first = call(calls, "SetSecurityInfo");
  EXPECT_NE(arg(first, "open").find("FILE_FLAG_OPEN_REPARSE_POINT"), std::string::npos);
  EXPECT_NE(arg(first, "open").find("GetFinalPathNameByHandleW"), std::string::npos);
  EXPECT_EQ(arg(call(calls, "SetSecurityInfo", 1), "restore"),
            "remove exactly the ACEs for " + sid + " (others' and yours stay)");
  // The SID is known before anything changes; the profile is made last, before the job and spawn.
  EXPECT_LT(index_of(calls, "SetSecurityInfo"), index_of(calls, "CreateAppContainerProfile"));
  EXPECT_LT(index_of(calls, "CreateAppContainerProfile"), index_of(calls, "CreateJobObjectW"));
  EXPECT_LT(index_of(calls, "SetSecurityInfo"), index_of(calls, "CreateProcessW"));
}

// The working directory is readable as on Linux, but not a drive's root or the profile.
TEST(WindowsPlan, WorkingDirectoryReadableUnlessTooWide) {
  auto granted = plan_of({"--rw", ".", "--", "cmd.exe"});
  ASSERT_TRUE(granted);
  EXPECT_EQ(granted->acl.size(), 2u) << "already granted: no read ACE of its own";
  auto root = plan_of({"--chdir", "C:/", "--", "cmd.exe"});
  ASSERT_TRUE(root) << root.error().reason;
  EXPECT_TRUE(root->acl.empty());
  bool noted = false;
  for (const auto& g : root->gaps) noted |= g.find("the working directory C:\\ is not granted") == 0;
  EXPECT_TRUE(noted);
  auto home = plan_of({"--chdir", "C:/Users/ann", "--", "cmd.exe"});
  ASSERT_TRUE(home);
  EXPECT_TRUE(home->acl.empty());
  auto hidden = plan_of({"--no-cwd", "--", "cmd.exe"});
  ASSERT_TRUE(hidden) << hidden.error().reason;
  EXPECT_TRUE(hidden->acl.empty());
}

// --share-net: the client and server capabilities; --net: the one loopback-exempt container, so
// the proxy is reachable, and nothing else (no internet capability).
TEST(WindowsPlan, NetworkIsTheContainersCapabilities) {
  auto shared = plan_of({"--share-net", "--", "curl.exe"});
  ASSERT_TRUE(shared);
  ASSERT_EQ(shared->container.capabilities.size(), 3u);
  EXPECT_EQ(shared->container.capabilities[0].first, "S-1-15-3-1");
  EXPECT_TRUE(shared->container.per_run);
  EXPECT_FALSE(shared->proxy);

  // A --net run holds a slot (net_slots.h): its container and its proxy's port are the slot's.
  win::WinHostFacts facts;
  facts.net_slot = 3;
  facts.net_slot_notes = {"cage.net.0 (127.0.0.1:47300): busy (another run holds it)"};
  auto net = plan_of({"--net", "example.com:443", "--", "curl.exe"}, facts);
  ASSERT_TRUE(net) << net.error().reason;
  EXPECT_TRUE(net->proxy);
  EXPECT_EQ(net->container.name, "cage.net.3");
  EXPECT_EQ(net->container.sid, win::net_slot_sid(3));
  EXPECT_EQ(net->proxy_port, 47303);
  EXPECT_EQ(net->net_slot.slot, 3);
  EXPECT_TRUE(net->net_slot.claimed);
  EXPECT_EQ(net->net_slot.lock, "C:\\ProgramData\\cage\\net-slots\\slot-3.lock");
  EXPECT_FALSE(net->container.per_run);
  EXPECT_TRUE(net->container.loopback_exemption);
  EXPECT_TRUE(net->container.capabilities.empty());
  for (const auto& a : net->acl) EXPECT_NE(a.sddl.find(win::net_slot_sid(3)), std::string::npos) << a.sddl;
  auto calls = win::calls_of(*net);
  EXPECT_NE(call(calls, "CreateAppContainerProfile")->why.find("never deleted"), std::string::npos)
      << "the exemption and the filters name the slot's SID: the profile is kept";
  EXPECT_NE(arg(call(calls, "NetworkIsolationGetAppContainerConfig"), "require").find("cage.net.3"),
            std::string::npos);
  EXPECT_NE(call(calls, "FwpmFilterGetByKey0")->why.find("--install-windows-network"), std::string::npos);
  EXPECT_NE(arg(call(calls, "StartProxy"), "listen").find("127.0.0.1:47303"), std::string::npos);
  EXPECT_LT(index_of(calls, "FwpmFilterGetByKey0"), index_of(calls, "StartProxy"));
  EXPECT_LT(index_of(calls, "StartProxy"), index_of(calls, "CreateProcessW"));
  EXPECT_LT(index_of(calls, "NetworkIsolationGetAppContainerConfig"), index_of(calls, "CreateProcessW"));
  bool proxy_env = false;
  for (const auto& e : net->env) proxy_env |= e == "HTTPS_PROXY=http://127.0.0.1:47303";
  EXPECT_TRUE(proxy_env);
  for (const auto& g : net->gaps)
    EXPECT_EQ(g.find("loopback"), std::string::npos) << "the filters close the old gaps: " << g;
  EXPECT_NE(win::render_text(*net).find("busy (another run holds it)"), std::string::npos)
      << "--dry-run shows how the slot was chosen";

  // A dry-run claims nothing: slot 0 is shown, and the plan says the run picks the first free one.
  auto preview = plan_of({"--net", "example.com:443", "--", "curl.exe"});
  ASSERT_TRUE(preview);
  EXPECT_EQ(preview->container.name, "cage.net.0");
  EXPECT_FALSE(preview->net_slot.claimed);
  EXPECT_NE(win::render_text(*preview).find("the first free of cage.net.0 .. cage.net.15"),
            std::string::npos);

  facts.proxy_secret = "0123456789abcdef0123456789abcdef";
  auto secret = plan_of({"--net", "example.com:443", "--", "curl.exe"}, facts);
  ASSERT_TRUE(secret);
  bool carried = false;
  for (const auto& e : secret->env)
    carried |= e == "HTTPS_PROXY=http://cage:0123456789abcdef0123456789abcdef@127.0.0.1:47303";
  EXPECT_TRUE(carried) << "the proxy on the host's loopback serves only clients with the run's secret";
}

// Point 2: an explicit desktop; the command is the resolved path, never found by CreateProcess.
TEST(WindowsPlan, ProcessGetsDesktopAndResolvedApplication) {
  auto plan = plan_of({"--", "cmd.exe", "/c", "echo a b"});
  ASSERT_TRUE(plan) << plan.error().reason;
  auto calls = win::calls_of(*plan);
  auto* spawn = call(calls, "CreateProcessW");
  EXPECT_EQ(arg(spawn, "desktop"), "winsta0\\default");
  EXPECT_EQ(arg(spawn, "applicationName"), "C:\\Windows\\system32\\cmd.exe");
  EXPECT_EQ(arg(spawn, "commandLine"), "cmd.exe /c \"echo a b\"");
  EXPECT_NE(arg(spawn, "attributes").find("SECURITY_CAPABILITIES (cage.run-7-00000abc00000012)"),
            std::string::npos);
}

TEST(WindowsPlan, JournalAndTempAreTheRunsOwn) {
  auto plan = plan_of({"--rw", "out", "--", "cmd.exe"});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->journal.dir, "C:\\Users\\ann\\AppData\\Local\\cage\\restore");
  EXPECT_EQ(plan->journal.file, plan->journal.dir + "\\run-7-00000abc00000012.journal");
  EXPECT_EQ(plan->temp.path, "C:\\Users\\ann\\AppData\\Local\\cage\\tmp\\run-7-00000abc00000012");
  EXPECT_NE(plan->temp.sddl.find("S:(ML;OICI;NW;;;LW)"), std::string::npos);
  EXPECT_NE(plan->temp.sddl.find("(A;OICI;0x1301bf;;;" + plan->container.sid + ")"), std::string::npos);
  EXPECT_EQ(plan->temp.sddl.rfind("D:P(", 0), 0u) << "not inherited from LOCALAPPDATA";
  auto has = [&](const std::string& e) {
    return std::find(plan->env.begin(), plan->env.end(), e) != plan->env.end();
  };
  EXPECT_TRUE(has("TEMP=" + plan->temp.path));
  EXPECT_TRUE(has("TMP=" + plan->temp.path));
  auto calls = win::calls_of(*plan);
  // Orphans first, then the journal, and only then the first descriptor change.
  EXPECT_EQ(index_of(calls, "RestoreOrphanedJournals"), 0u);  // no --net: no proxy before it
  EXPECT_LT(index_of(calls, "CreateFileW"), index_of(calls, "SetSecurityInfo"));
  EXPECT_LT(index_of(calls, "CreateFileW"), index_of(calls, "CreateAppContainerProfile"));
  EXPECT_EQ(calls.back().api, "Cleanup");
  win::WinHostFacts facts;
  facts.localappdata = "D:\\Local";
  auto moved = plan_of({"--", "cmd.exe"}, facts);
  ASSERT_TRUE(moved);
  EXPECT_EQ(moved->journal.dir, "D:\\Local\\cage\\restore");
  EXPECT_EQ(moved->journal.labels, "D:\\Local\\cage\\labels");
}

// The Low label of a --rw path is counted per path (label_refs.h): the plan names the run's holder
// id and the path's lock file beside the journals, and no longer lists "can leave that label behind".
TEST(WindowsPlan, RwLabelGoesThroughThePathsLockFile) {
  auto plan = plan_of({"--rw", "out", "--", "cmd.exe"});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->journal.run, "7-00000abc00000012");
  EXPECT_EQ(plan->journal.labels, "C:\\Users\\ann\\AppData\\Local\\cage\\labels");
  auto calls = win::calls_of(*plan);
  const win::WinCall* label = nullptr;
  for (const auto& c : calls)
    if (c.api == "SetSecurityInfo" && arg(&c, "info") == "LABEL_SECURITY_INFORMATION") label = &c;
  ASSERT_NE(label, nullptr);
  const std::string lock = plan->journal.labels + "\\" + win::label_lock_name("C:\\Users\\ann\\proj\\out");
  EXPECT_EQ(arg(label, "lock").rfind(lock, 0), 0u);
  EXPECT_NE(arg(label, "restore").find("last live holder"), std::string::npos);
  for (const auto& g : plan->gaps) EXPECT_EQ(g.find("label behind"), std::string::npos) << g;
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
  const size_t journal = index_of(calls, "CreateFileW"), spawn = index_of(calls, "CreateProcessW");
  for (const char* api : {"SetSecurityInfo", "CreateDirectoryW", "CreateAppContainerProfile"})
    EXPECT_LT(journal, index_of(calls, api)) << api;
  for (const char* api :
       {"SetSecurityInfo", "CreateDirectoryW", "CreateAppContainerProfile",
        "NetworkIsolationGetAppContainerConfig", "CreateJobObjectW", "SetInformationJobObject", "StartProxy"})
    EXPECT_LT(index_of(calls, api), spawn) << api;
  EXPECT_LT(index_of(calls, "ResumeThread"), index_of(calls, "WaitForMultipleObjects"));
  EXPECT_EQ(arg(call(calls, "SetInformationJobObject", 2), "ControlFlags"), "ENABLE|HARD_CAP (0x5)");
  EXPECT_NE(arg(call(calls, "WaitForMultipleObjects"), "").find("<no arg"), std::string::npos);
  EXPECT_NE(call(calls, "WaitForMultipleObjects")->why.find("exit 124"), std::string::npos);
  EXPECT_NE(call(calls, "WaitForMultipleObjects")->why.find("exit 130"), std::string::npos);
  // out: its label and ACE; secret.txt: a deny ACE; the working directory: a read ACE.
  EXPECT_EQ(plan->acl.size(), 4u);
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
  EXPECT_EQ(plan->acl[0].path, "C:\\Users\\ann\\out");
  EXPECT_EQ(plan->acl[2].path, "D:\\data");
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
  EXPECT_NE(text.find("CreateAppContainerProfile"), std::string::npos);
  EXPECT_NE(text.find("not enforced on Windows:\n  writes:"), std::string::npos);
  EXPECT_NE(win::render_json(*plan).find("\"api\" : \"CreateProcessW\""), std::string::npos);
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
  EXPECT_NE(text->find("not enforced on Windows: writes:"), std::string::npos) << *text;
  EXPECT_NE(text->find("limits:      timeout 5s\n"), std::string::npos) << *text;
  EXPECT_EQ(text->find("CreateAppContainerProfile"), std::string::npos) << *text;
  EXPECT_EQ(text->find("USERPROFILE=D:"), std::string::npos) << "values only with --verbose";
}

}  // namespace
}  // namespace cage::testing

namespace cage::testing {
namespace {

// A host that has exactly `files` (any case), and every other path as a directory or missing.
win::WinHostFacts host_with(std::vector<std::string> files) {
  win::WinHostFacts facts;
  facts.kind = [files](const std::string& path) -> char {
    auto up = [](std::string s) {
      for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      return s;
    };
    for (const auto& f : files)
      if (up(f) == up(path)) return 'f';
    return path.find('.') == std::string::npos ? 'd' : '\0';
  };
  return facts;
}

const std::vector<std::pair<std::string, std::string>> kEnv = {
    {"Path", "C:\\Windows\\system32;.;bin;\"C:\\Program Files\\nodejs\";C:\\Windows"},
    {"PATHEXT", ".COM;.EXE;.BAT;.CMD"},
    {"SystemRoot", "C:\\Windows"},
    {"ComSpec", "C:\\Windows\\system32\\cmd.exe"}};

// Point 5: the sandbox's PATH and PATHEXT, absolute entries only; the working directory (where
// tool.exe lies here) is never searched, neither as "." nor implicitly as CreateProcess would.
TEST(WindowsCommand, ResolvedWithPathAndPathextNeverTheWorkingDirectory) {
  auto facts = host_with({"C:\\Users\\ann\\proj\\tool.exe", "C:\\Users\\ann\\proj\\bin\\tool.exe",
                          "C:\\Windows\\system32\\where.exe", "C:\\Program Files\\nodejs\\node.exe"});
  auto missing = plan_of({"--", "tool"}, facts, kEnv);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().cls, ErrorClass::not_found);
  EXPECT_EQ(missing.error().input, "tool");
  auto node = plan_of({"--", "node", "-e", "1"}, facts, kEnv);
  ASSERT_TRUE(node) << node.error().reason;
  EXPECT_EQ(node->application, "C:\\Program Files\\nodejs\\node.EXE") << "quoted PATH entry, PATHEXT .EXE";
  EXPECT_EQ(node->command_line, "node -e 1");
  auto where = plan_of({"--", "WHERE.EXE"}, facts, kEnv);
  ASSERT_TRUE(where);
  EXPECT_EQ(where->application, "C:\\Windows\\system32\\WHERE.EXE");
  // A name with a directory part is taken relative to the working directory, as the user wrote it.
  auto local = plan_of({"--", ".\\tool"}, facts, kEnv);
  ASSERT_TRUE(local) << local.error().reason;
  EXPECT_EQ(local->application, "C:\\Users\\ann\\proj\\tool.EXE");
  auto up = plan_of({"--", "..\\proj\\bin\\..\\tool.exe"}, facts, kEnv);
  ASSERT_TRUE(up) << up.error().reason;
  EXPECT_EQ(up->application, "C:\\Users\\ann\\proj\\tool.exe") << "as GetFullPathNameW: by the text";
  auto unix_style = plan_of({"--", "bin/tool.exe"}, facts, kEnv);
  ASSERT_TRUE(unix_style);
  EXPECT_EQ(unix_style->application, "C:\\Users\\ann\\proj\\bin\\tool.exe");
}

// npm/npx-style .cmd shims run through %ComSpec% with /d /v:off /s /c and every argument escaped;
// an argument cmd.exe would expand or split even inside quotes is refused (the BatBadBut class).
TEST(WindowsCommand, BatchFilesRunThroughCmdWithSafeArgumentsOnly) {
  auto facts = host_with({"C:\\Program Files\\nodejs\\npm.cmd"});
  auto npm = plan_of({"--", "npm", "install", "a b", "x&y", "--save=dev", "plain"}, facts, kEnv);
  ASSERT_TRUE(npm) << npm.error().reason;
  EXPECT_EQ(npm->application, "C:\\Windows\\system32\\cmd.exe");
  EXPECT_EQ(npm->command_line,
            "C:\\Windows\\system32\\cmd.exe /d /v:off /s /c \"\"C:\\Program Files\\nodejs\\npm.CMD\" install "
            "\"a b\" \"x&y\" \"--save=dev\" plain\"");
  for (const char* bad : {"%PATH%", "say \"hi\"", "line\nbreak", "!x!", "cr\r"}) {
    auto p = plan_of({"--", "npm", "run", bad}, facts, kEnv);
    ASSERT_FALSE(p) << bad;
    EXPECT_EQ(p.error().cls, ErrorClass::invalid_policy) << bad;
    EXPECT_EQ(p.error().input, bad);
    EXPECT_NE(p.error().reason.find("argument 2 of the batch file"), std::string::npos);
  }
  EXPECT_EQ(win::quote_cmd_argument("plain"), std::optional<std::string>("plain"));
  EXPECT_EQ(win::quote_cmd_argument(""), std::optional<std::string>("\"\""));
  EXPECT_EQ(win::quote_cmd_argument("a^b"), std::optional<std::string>("\"a^b\""));
  EXPECT_EQ(win::quote_cmd_argument("50%"), std::nullopt);
  // Without ComSpec: SystemRoot's cmd.exe, never a cmd.exe found on PATH or in the working directory.
  auto no_comspec =
      plan_of({"--", "npm"}, facts,
              {{"Path", "C:\\Program Files\\nodejs"}, {"PATHEXT", ".CMD"}, {"SystemRoot", "D:\\Win"}});
  ASSERT_TRUE(no_comspec);
  EXPECT_EQ(no_comspec->application, "D:\\Win\\System32\\cmd.exe");
}

// The variables programs expect: passed from the caller, or pointed into the run's own TEMP tree
// (APPDATA, LOCALAPPDATA) and derived from the profile (HOMEDRIVE, HOMEPATH).
TEST(WindowsEnv, OrdinaryVariablesArePresent) {
  auto env = kEnv;
  for (auto kv :
       std::vector<std::pair<std::string, std::string>>{{"ProgramFiles", "C:\\Program Files"},
                                                        {"ProgramFiles(x86)", "C:\\Program Files (x86)"},
                                                        {"ProgramData", "C:\\ProgramData"},
                                                        {"COMPUTERNAME", "BOX"},
                                                        {"PSModulePath", "C:\\ps"},
                                                        {"APPDATA", "C:\\Users\\ann\\AppData\\Roaming"},
                                                        {"LOCALAPPDATA", "C:\\Users\\ann\\AppData\\Local"},
                                                        {"AWS_SECRET_ACCESS_KEY", "s"}})
    env.push_back(kv);
  auto plan = plan_of({"--", "cmd.exe"}, {}, env);
  ASSERT_TRUE(plan) << plan.error().reason;
  auto has = [&](const std::string& e) {
    return std::find(plan->env.begin(), plan->env.end(), e) != plan->env.end();
  };
  for (const char* e : {"ProgramFiles=C:\\Program Files", "ProgramFiles(x86)=C:\\Program Files (x86)",
                        "ProgramData=C:\\ProgramData", "COMPUTERNAME=BOX", "PSModulePath=C:\\ps",
                        "PATHEXT=.COM;.EXE;.BAT;.CMD", "SystemRoot=C:\\Windows",
                        "HOMEDRIVE=C:", "HOMEPATH=\\Users\\ann", "USERPROFILE=C:\\Users\\ann"})
    EXPECT_TRUE(has(e)) << e;
  EXPECT_TRUE(has("APPDATA=" + plan->temp.path + "\\AppData\\Roaming"));
  EXPECT_TRUE(has("LOCALAPPDATA=" + plan->temp.path + "\\AppData\\Local"));
  EXPECT_FALSE(has("APPDATA=C:\\Users\\ann\\AppData\\Roaming")) << "the real one is not granted";
  EXPECT_FALSE(has("AWS_SECRET_ACCESS_KEY=s"));
}

}  // namespace
}  // namespace cage::testing

namespace cage::testing {
namespace {

// The whole --dry-run --target windows text of a run with every kind of grant, a .cmd command and
// limits: the calls in order with their arguments (review the diff when it changes).
TEST(WindowsPlan, GoldenDryRun) {
  auto facts = host_with({"C:\\Program Files\\nodejs\\npm.cmd", "C:\\Users\\ann\\proj\\secret.txt"});
  facts.cpu_count = 4;
  auto env = kEnv;
  env.push_back({"ProgramFiles", "C:\\Program Files"});
  auto plan = plan_of({"--rw", "out", "--ro", "out/keep", "--ro", "C:/tools", "--hide", "secret.txt",
                       "--pids", "64", "--cpu", "1", "--timeout", "30s", "--", "npm", "run", "build"},
                      facts, env);
  ASSERT_TRUE(plan) << plan.error().reason;
  expect_golden(win::render_text(*plan), "windows_plan.txt");
}

}  // namespace
}  // namespace cage::testing

namespace cage::testing {
namespace {

// --ro beneath the Windows directory or Program Files adds nothing: every AppContainer reads there by
// Windows' own ACLs, and the user could not change them anyway.
TEST(WindowsPlan, SystemDirectoriesNeedNoAce) {
  auto env = kEnv;
  env.push_back({"ProgramFiles", "C:\\Program Files"});
  auto plan = plan_of(
      {"--ro", "C:/Windows/System32", "--ro", "C:/Program Files/Git", "--ro", "C:/tools", "--", "cmd.exe"},
      {}, env);
  ASSERT_TRUE(plan) << plan.error().reason;
  ASSERT_EQ(plan->acl.size(), 2u);
  EXPECT_EQ(plan->acl[0].path, "C:\\tools");
  EXPECT_EQ(plan->acl[1].why, "current directory (read-only)");
}

}  // namespace
}  // namespace cage::testing
