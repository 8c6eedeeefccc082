// lx::compile for Mechanism::landlock_only: each policy element Landlock alone cannot enforce is
// refused by name until accepted with --allow-degraded, and what is enforced shows in the plan.
#include <gtest/gtest.h>

#include <algorithm>

#include "fake_host_view.h"
#include "golden.h"
#include "linux/compile.h"

namespace cage::testing {
namespace {

Result<lx::Plan> landlock_only(std::vector<std::string> words) {
  words.insert(words.begin(), {"--mechanism", "landlock"});
  return lx::compile(policy_of(std::move(words)), FakeHostView(), {{"PATH", "/usr/bin:/bin"}});
}

// The whole --dry-run --verbose plan of the Landlock-only mechanism (issue 26: a golden per mechanism):
// no mounts, the Landlock rules mirroring the view, the private directory, what is degraded.
TEST(LinuxLandlockOnly, GoldenDryRun) {
  auto plan = landlock_only({"--ro", "src", "--rw", "out", "--allow-degraded", "pid", "--timeout", "30s", "--", "make"});
  ASSERT_TRUE(plan) << plan.error().reason;
  expect_golden(lx::render_text(*plan), "landlock_only_ro_rw.txt");
}

bool has_env(const lx::Plan& p, const std::string& entry) {
  return std::find(p.env.begin(), p.env.end(), entry) != p.env.end();
}

bool has_env_name(const lx::Plan& p, const std::string& name) {
  return std::any_of(p.env.begin(), p.env.end(), [&](const std::string& e) { return e.rfind(name + "=", 0) == 0; });
}

struct ElementCase {
  const char* element;
  std::vector<std::string> words;  // the flags that ask for the element
};

class LandlockOnlyElement : public ::testing::TestWithParam<ElementCase> {};

TEST_P(LandlockOnlyElement, RefusedByNameUntilAccepted) {
  const auto& c = GetParam();
  std::vector<std::string> words = c.words;
  words.insert(words.end(), {"--allow-degraded", "pid", "--", "make"});
  auto refused = landlock_only(words);
  ASSERT_FALSE(refused) << c.element;
  EXPECT_EQ(refused.error().cls, ErrorClass::spawn_sandbox_unavailable);
  EXPECT_NE(refused.error().reason.find(std::string(c.element) + ":"), std::string::npos) << refused.error().reason;
  EXPECT_NE(refused.error().remedy.find(std::string("--allow-degraded=") + c.element), std::string::npos)
      << refused.error().remedy;

  words = c.words;
  words.insert(words.end(), {"--allow-degraded", std::string("pid,") + c.element, "--", "make"});
  auto accepted = landlock_only(words);
  ASSERT_TRUE(accepted) << accepted.error().reason;
  EXPECT_EQ(accepted->mechanism, lx::Mechanism::landlock_only);
  EXPECT_TRUE(std::any_of(accepted->degraded.begin(), accepted->degraded.end(),
                          [&](const std::string& d) { return d.rfind(std::string(c.element) + ":", 0) == 0; }));
}

INSTANTIATE_TEST_SUITE_P(
    Elements, LandlockOnlyElement,
    ::testing::Values(ElementCase{"hide", {"--ro", "/home/ann/proj", "--hide", "/home/ann/proj/.env"}},
                      ElementCase{"tmpfs", {"--tmpfs", "/home/ann/proj/out"}},
                      ElementCase{"hostname", {"--hostname", "box"}},
                      ElementCase{"nested-ro", {"--rw", "/home/ann/proj", "--ro", "/home/ann/proj/src"}}),
    [](const ::testing::TestParamInfo<ElementCase>& i) {
      std::string n = i.param.element;
      std::replace(n.begin(), n.end(), '-', '_');
      return n;
    });

TEST(LandlockOnly, PidIsAlwaysAnElement) {
  auto plan = landlock_only({"--", "make"});
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().reason.find("pid:"), std::string::npos);
}

TEST(LandlockOnly, NetGoesThroughALoopbackProxyWithASecret) {
  auto plan = landlock_only({"--net", "example.com:443", "--allow-degraded", "pid", "--", "make"});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_TRUE(plan->loopback_proxy);
  EXPECT_EQ(plan->net.mode, lx::NetPlan::Mode::proxy);
  EXPECT_EQ(plan->net.shim_port, 0);  // no shim: the workload connects to the host's loopback
  EXPECT_TRUE(plan->landlock.connect_tcp.empty());  // the port is added when the run picks it
  EXPECT_TRUE(plan->landlock.deny_all_tcp);
  EXPECT_TRUE(has_env(*plan, "HTTPS_PROXY=http://cage:<proxy-secret>@127.0.0.1:<proxy-port>"));
  EXPECT_TRUE(has_env(*plan, "ALL_PROXY=socks5h://cage:<proxy-secret>@127.0.0.1:<proxy-port>"));
  EXPECT_FALSE(has_env_name(*plan, "JAVA_TOOL_OPTIONS"));  // the JVM cannot carry the secret
}

TEST(LandlockOnly, NetNeedsPtraceAccessForTheConnectCheck) {
  FakeHostView host;
  host.add_dir("/proc/sys/kernel");
  host.add_dir("/proc/sys/kernel/yama");
  host.add_file("/proc/sys/kernel/yama/ptrace_scope", 0644, "3\n");
  auto plan = lx::compile(policy_of({"--mechanism", "landlock", "--net", "example.com:443", "--allow-degraded", "pid",
                                     "--", "make"}),
                          host, {});
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().cls, ErrorClass::spawn_sandbox_unavailable);
  EXPECT_NE(plan.error().reason.find("ptrace_scope"), std::string::npos);
}

TEST(LandlockOnly, TransparentEgressNeedsANamespace) {
  auto plan = landlock_only({"--net", "example.com:443", "--net-mode", "transparent", "--allow-degraded", "pid",
                        "--", "make"});
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().cls, ErrorClass::spawn_sandbox_unavailable);
  EXPECT_EQ(plan.error().input, "--net-mode");
}

TEST(LandlockOnly, MetadataCallsRefusedUnlessAccepted) {
  auto plan = landlock_only({"--allow-degraded", "pid", "--", "make"});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_FALSE(plan->allow_metadata);
  auto relaxed = landlock_only({"--allow-degraded", "pid,metadata", "--", "make"});
  ASSERT_TRUE(relaxed) << relaxed.error().reason;
  EXPECT_TRUE(relaxed->allow_metadata);
}

TEST(LandlockOnly, RulesAreOpenedWithoutFollowingLinks) {
  auto plan = landlock_only({"--allow-degraded", "pid", "--", "make"});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_TRUE(plan->landlock.no_symlinks);
}

TEST(LandlockOnly, ShareNetKeepsTheHostNetwork) {
  auto plan = landlock_only({"--share-net", "--allow-degraded", "pid", "--", "make"});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_EQ(plan->net.mode, lx::NetPlan::Mode::host);
  EXPECT_FALSE(plan->landlock.deny_all_tcp);
}

// A cage started inside a cage (no user namespaces there, the marker in its environment) says so in
// one short refusal; the same host without the marker gets the list of losses.
TEST(LandlockOnly, InsideCageIsSaidInsteadOfTheLosses) {
  FakeHostView host;
  host.set_user_namespaces(false);
  auto pol = policy_of({"--", "make"});
  auto inside = lx::compile(pol, host, {{"PATH", "/usr/bin:/bin"}, {"CAGE_SANDBOX", "1"}});
  ASSERT_FALSE(inside);
  EXPECT_EQ(inside.error().cls, ErrorClass::spawn_sandbox_unavailable);
  EXPECT_EQ(inside.error().input, "already inside cage");
  EXPECT_NE(inside.error().remedy.find("--mechanism landlock --allow-degraded=pid"), std::string::npos);
  auto outside = lx::compile(pol, host, {{"PATH", "/usr/bin:/bin"}});
  ASSERT_FALSE(outside);
  EXPECT_EQ(outside.error().input, "user namespaces");
  EXPECT_NE(outside.error().reason.find("pid:"), std::string::npos);
  // Asked for explicitly, the Landlock-only refusal stays the detailed one.
  auto explicit_ll = lx::compile(policy_of({"--mechanism", "landlock", "--", "make"}), host,
                                 {{"PATH", "/usr/bin:/bin"}, {"CAGE_SANDBOX", "1"}});
  ASSERT_FALSE(explicit_ll);
  EXPECT_EQ(explicit_ll.error().input, "user namespaces");
}

TEST(LandlockOnly, WorkloadCarriesTheInsideMarker) {
  auto plan = landlock_only({"--allow-degraded", "pid", "--", "make"});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_TRUE(has_env(*plan, "CAGE_SANDBOX=1"));
  auto unset = landlock_only({"--allow-degraded", "pid", "--unsetenv", "CAGE_SANDBOX", "--", "make"});
  ASSERT_TRUE(unset) << unset.error().reason;
  EXPECT_FALSE(has_env_name(*unset, "CAGE_SANDBOX"));
}

}  // namespace
}  // namespace cage::testing
