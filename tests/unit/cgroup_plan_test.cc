// compile_cgroups: which cgroup version, directory and files each limit gets, and what falls back to
// rlimits, for the host layouts cage meets (v1 as root, v2 delegated, nothing usable).
#include <gtest/gtest.h>

#include <map>

#include "fake_host_view.h"
#include "linux/cgroup_plan.h"

namespace cage::testing {
namespace {

const char* kV1Mounts =
    "30 25 0:26 / /sys/fs/cgroup/cpu rw,relatime shared:9 - cgroup cgroup rw,cpu\n"
    "31 25 0:27 / /sys/fs/cgroup/memory rw,relatime shared:10 - cgroup cgroup rw,memory\n"
    "32 25 0:28 / /sys/fs/cgroup/pids rw,relatime shared:11 - cgroup cgroup rw,pids\n"
    "33 25 0:29 / /sys/fs/cgroup/unified rw,relatime shared:12 - cgroup2 cgroup2 rw\n";

void v1_host(FakeHostView& h) {
  h.add_file("/proc/self/mountinfo", 0444, kV1Mounts);
  h.add_file("/proc/self/cgroup", 0444, "8:pids:/\n4:memory:/jobs/42\n1:cpu:/\n0::/\n");
  h.add_dir("/sys");
  h.add_dir("/sys/fs");
  h.add_dir("/sys/fs/cgroup");
  for (const char* d : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/memory/jobs",
                        "/sys/fs/cgroup/memory/jobs/42", "/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified"})
    h.add_dir(d);
  h.add_file("/sys/fs/cgroup/unified/cgroup.controllers", 0444, "hugetlb\n");
}

lx::Plan plan_with(std::vector<std::string> flags) {
  flags.insert(flags.end(), {"--", "true"});
  lx::Plan p;
  p.limits = policy_of(flags).limits;
  return p;
}

std::string value_of(const lx::Plan& p, const std::string& file) {
  for (const auto& w : p.cgroup.writes)
    if (w.file == file) return w.value;
  return "<none>";
}

TEST(CgroupPlan, NoLimitsNoCgroup) {
  FakeHostView h;
  auto p = plan_with({});
  ASSERT_TRUE(lx::compile_cgroups(p, h));
  EXPECT_EQ(p.cgroup.version, 0);
  EXPECT_TRUE(p.cgroup.unenforced.empty());
}

TEST(CgroupPlan, V1AsRootNestsBeneathOurOwnCgroups) {
  FakeHostView h;
  v1_host(h);
  h.set_uid(0);
  for (const char* d : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/memory/jobs/42", "/sys/fs/cgroup/pids"}) h.add_writable(d);
  auto p = plan_with({"--memory", "32M", "--pids", "64", "--cpu", "1.5"});
  ASSERT_TRUE(lx::compile_cgroups(p, h));
  EXPECT_EQ(p.cgroup.version, 1);
  ASSERT_EQ(p.cgroup.dirs.size(), 3u);
  EXPECT_EQ(p.cgroup.dirs[0].parent, "/sys/fs/cgroup/memory/jobs/42");
  EXPECT_EQ(value_of(p, "memory.limit_in_bytes"), "33554432");
  EXPECT_EQ(value_of(p, "pids.max"), "64");
  EXPECT_EQ(value_of(p, "cpu.cfs_quota_us"), "150000");
  EXPECT_TRUE(p.cgroup.unenforced.empty());
  EXPECT_TRUE(p.limits.rlimits.empty());
}

TEST(CgroupPlan, UnprivilegedFallsBackToRlimitsAndSaysSo) {
  FakeHostView h;
  v1_host(h);
  auto p = plan_with({"--memory", "32M", "--pids", "64", "--cpu", "0.5"});
  ASSERT_TRUE(lx::compile_cgroups(p, h));
  EXPECT_EQ(p.cgroup.version, 0);
  ASSERT_EQ(p.cgroup.unenforced.size(), 3u);
  EXPECT_EQ(p.cgroup.unenforced[0].limit, "--memory 32M");
  EXPECT_EQ(p.cgroup.unenforced[0].fallback, "RLIMIT_AS");
  EXPECT_EQ(p.cgroup.unenforced[1].fallback, "RLIMIT_NPROC");
  EXPECT_EQ(p.cgroup.unenforced[2].fallback, "");
  EXPECT_NE(p.cgroup.unenforced[0].why.find("not writable by uid 1000"), std::string::npos);
  // The v2 reason is printed under each limit: it names every missing controller, not only memory's.
  for (const auto& u : p.cgroup.unenforced)
    EXPECT_NE(u.why.find("controllers 'memory', 'pids', 'cpu' are not available"), std::string::npos) << u.why;
  ASSERT_EQ(p.limits.rlimits.size(), 2u);
  EXPECT_EQ(p.limits.rlimits[0].name, "as");
  EXPECT_EQ(p.limits.rlimits[0].soft, 33554432u);
  EXPECT_EQ(p.limits.rlimits[1].name, "nproc");
}

TEST(CgroupPlan, RootWithoutCgroupsGetsNoNprocBecauseItWouldNotBind) {
  FakeHostView h;
  h.set_uid(0);
  auto p = plan_with({"--pids", "64"});
  ASSERT_TRUE(lx::compile_cgroups(p, h));
  ASSERT_EQ(p.cgroup.unenforced.size(), 1u);
  EXPECT_EQ(p.cgroup.unenforced[0].fallback, "");
  EXPECT_NE(p.cgroup.unenforced[0].why.find("does not bind root"), std::string::npos);
  EXPECT_TRUE(p.limits.rlimits.empty());
}

TEST(CgroupPlan, UserRlimitWinsOverTheApproximation) {
  FakeHostView h;
  auto p = plan_with({"--memory", "32M", "--rlimit", "as=1000000"});
  ASSERT_TRUE(lx::compile_cgroups(p, h));
  ASSERT_EQ(p.limits.rlimits.size(), 1u);
  EXPECT_EQ(p.limits.rlimits[0].soft, 1000000u);
  EXPECT_EQ(p.cgroup.unenforced[0].fallback, "");
}

TEST(CgroupPlan, StrictLimitsRefuseNamingTheLimit) {
  FakeHostView h;
  v1_host(h);
  auto p = plan_with({"--pids", "64", "--strict-limits"});
  auto s = lx::compile_cgroups(p, h);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().cls, ErrorClass::spawn_sandbox_unavailable);
  EXPECT_EQ(s.error().input, "--pids 64");
}

TEST(CgroupPlan, V2DelegatedSubtreeIsUsedAboveOurLeaf) {
  FakeHostView h;
  const std::string svc = "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service";
  h.add_file("/proc/self/mountinfo", 0444, "30 25 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n");
  h.add_file("/proc/self/cgroup", 0444, "0::/user.slice/user-1000.slice/user@1000.service/app.slice/t.scope\n");
  h.add_file(svc + "/app.slice/t.scope/cgroup.controllers", 0444, "cpu memory pids\n");
  h.add_file(svc + "/app.slice/t.scope/cgroup.subtree_control", 0644, "\n");
  h.add_file(svc + "/app.slice/cgroup.controllers", 0444, "cpu memory pids\n");
  h.add_file(svc + "/app.slice/cgroup.subtree_control", 0644, "cpu memory pids\n");
  h.add_writable(svc + "/app.slice");
  h.add_writable(svc + "/app.slice/cgroup.procs");
  auto p = plan_with({"--memory", "1G", "--cpu", "2"});
  ASSERT_TRUE(lx::compile_cgroups(p, h));
  EXPECT_EQ(p.cgroup.version, 2);
  ASSERT_EQ(p.cgroup.dirs.size(), 1u);
  EXPECT_EQ(p.cgroup.dirs[0].parent, svc + "/app.slice");
  EXPECT_EQ(value_of(p, "memory.max"), "1073741824");
  EXPECT_EQ(value_of(p, "cpu.max"), "200000 100000");
}

TEST(CgroupPlan, V2SessionScopeNotDelegatedFallsBack) {
  FakeHostView h;
  h.add_file("/proc/self/mountinfo", 0444, "30 25 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
  h.add_file("/proc/self/cgroup", 0444, "0::/user.slice/user-1000.slice/session-3.scope\n");
  h.add_file("/sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope/cgroup.controllers", 0444, "memory pids\n");
  h.add_file("/sys/fs/cgroup/user.slice/user-1000.slice/cgroup.subtree_control", 0644, "memory pids\n");
  auto p = plan_with({"--memory", "1G"});
  ASSERT_TRUE(lx::compile_cgroups(p, h));
  EXPECT_EQ(p.cgroup.version, 0);
  ASSERT_EQ(p.cgroup.unenforced.size(), 1u);
  EXPECT_NE(p.cgroup.unenforced[0].why.find("delegated"), std::string::npos);
}

// A login session's scope (not writable) on a systemd host whose user manager is delegated
// "memory pids" or more, as Debian 12's user@.service is.
void systemd_host(FakeHostView& h, const std::string& delegated) {
  const std::string u = "/sys/fs/cgroup/user.slice/user-1000.slice";
  h.add_file("/proc/self/mountinfo", 0444, "30 25 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n");
  h.add_file("/proc/self/cgroup", 0444, "0::/user.slice/user-1000.slice/session-3.scope\n");
  h.add_file(u + "/session-3.scope/cgroup.controllers", 0444, "cpu memory pids\n");
  h.add_file(u + "/cgroup.subtree_control", 0644, "cpu memory pids\n");
  h.add_file(u + "/user@1000.service/cgroup.controllers", 0444, delegated + "\n");
}

TEST(CgroupPlan, SessionScopeGetsATransientScopeFromTheUserManager) {
  FakeHostView h;
  systemd_host(h, "cpu memory pids");
  h.add_socket("/run/user/1000/systemd/private");
  auto p = plan_with({"--memory", "100M", "--pids", "64", "--cpu", "0.5"});
  ASSERT_TRUE(lx::compile_cgroups(p, h));
  EXPECT_EQ(p.cgroup.via, lx::CgroupVia::user_scope);
  EXPECT_EQ(p.cgroup.version, 2);
  EXPECT_EQ(p.cgroup.scope.socket, "/run/user/1000/systemd/private");
  EXPECT_EQ(p.cgroup.scope.mount, "/sys/fs/cgroup");
  std::map<std::string, uint64_t> props;
  for (const auto& q : p.cgroup.scope.properties) props[q.name] = q.value;
  EXPECT_EQ(props["MemoryMax"], 104857600u);
  EXPECT_EQ(props["MemorySwapMax"], 0u);
  EXPECT_EQ(props["TasksMax"], 65u);  // the sandbox's 64 and cage's keeper
  EXPECT_EQ(props["CPUQuotaPerSecUSec"], 500000u);
  EXPECT_TRUE(p.cgroup.unenforced.empty());
  EXPECT_TRUE(p.limits.rlimits.empty());  // the rlimits apply only if the manager refuses
  ASSERT_EQ(p.cgroup.scope.fallback.size(), 3u);
  EXPECT_EQ(p.cgroup.scope.fallback[0].fallback, "RLIMIT_AS");
  ASSERT_EQ(p.cgroup.scope.fallback_rlimits.size(), 2u);
  EXPECT_EQ(p.cgroup.scope.fallback_rlimits[1].name, "nproc");
}

TEST(CgroupPlan, UserScopeLimitsOnlyTheControllersTheManagerIsDelegated) {
  FakeHostView h;
  systemd_host(h, "memory pids");  // systemd before 252 delegated no cpu to user@.service
  h.add_socket("/run/user/1000/systemd/private");
  auto p = plan_with({"--memory", "100M", "--cpu", "0.5"});
  ASSERT_TRUE(lx::compile_cgroups(p, h));
  EXPECT_EQ(p.cgroup.via, lx::CgroupVia::user_scope);
  ASSERT_EQ(p.cgroup.unenforced.size(), 1u);
  EXPECT_EQ(p.cgroup.unenforced[0].limit, "--cpu 0.5");
  EXPECT_NE(p.cgroup.unenforced[0].why.find("not delegated the 'cpu' controller"), std::string::npos);
  for (const auto& q : p.cgroup.scope.properties) EXPECT_NE(q.name, "CPUQuotaPerSecUSec");
  auto strict = plan_with({"--memory", "100M", "--cpu", "0.5", "--strict-limits"});
  auto s = lx::compile_cgroups(strict, h);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().input, "--cpu 0.5");
}

TEST(CgroupPlan, UserManagerIsFoundThroughXdgRuntimeDir) {
  FakeHostView h;
  systemd_host(h, "cpu memory pids");
  h.add_socket("/tmp/rt/systemd/private");
  auto p = plan_with({"--pids", "10"});
  ASSERT_TRUE(lx::compile_cgroups(p, h, "/tmp/rt"));
  EXPECT_EQ(p.cgroup.via, lx::CgroupVia::user_scope);
  EXPECT_EQ(p.cgroup.scope.socket, "/tmp/rt/systemd/private");
}

TEST(CgroupPlan, NoUserManagerKeepsTheRlimitsAndSaysWhy) {
  FakeHostView h;
  systemd_host(h, "cpu memory pids");
  auto p = plan_with({"--memory", "100M"});
  ASSERT_TRUE(lx::compile_cgroups(p, h));
  EXPECT_EQ(p.cgroup.via, lx::CgroupVia::none);
  ASSERT_EQ(p.cgroup.unenforced.size(), 1u);
  EXPECT_NE(p.cgroup.unenforced[0].why.find("no systemd user manager listens at /run/user/1000/systemd/private"),
            std::string::npos);
  EXPECT_EQ(p.limits.rlimits.size(), 1u);
}

TEST(CgroupPlan, RootNeverAsksAUserManager) {
  FakeHostView h;
  systemd_host(h, "cpu memory pids");
  h.set_uid(0);
  h.add_socket("/run/user/0/systemd/private");
  auto p = plan_with({"--memory", "100M"});
  ASSERT_TRUE(lx::compile_cgroups(p, h));
  EXPECT_NE(p.cgroup.via, lx::CgroupVia::user_scope);
}

}  // namespace
}  // namespace cage::testing
