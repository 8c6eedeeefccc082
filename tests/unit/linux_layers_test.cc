// Landlock is a layer, not a gate, where namespaces confine (issue 18): for each Landlock ABI a
// kernel may offer (0: none, 1 Ubuntu 22.04, 2 Debian 12, 3, 4 Ubuntu 24.04, 6) the plan under both
// mechanisms, the layer line --dry-run / --check / --result / the audit print, and each refusal's
// class, input and remedy. The kernels themselves are booted by the QEMU matrix; here HostView
// stands in for them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "fake_host_view.h"
#include "golden.h"
#include "linux/compile.h"

namespace cage::testing {
namespace {

const std::vector<std::string> kHeadline = {"--ro", "src", "--rw", "out", "--net", "api.github.com:443", "--", "make"};

Result<lx::Plan> compile_on(int abi, std::vector<std::string> words, const std::string& release = "") {
  FakeHostView host;
  host.set_landlock_abi(abi);
  if (!release.empty()) host.add_file("/proc/sys/kernel/osrelease", 0444, release);
  return lx::compile(policy_of(std::move(words)), host, {{"PATH", "/usr/bin:/bin"}});
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

bool has_layer(const lx::Plan& plan, const std::string& part) {
  auto layers = lx::layers_in_force(plan);
  return std::any_of(layers.begin(), layers.end(), [&](const std::string& l) { return contains(l, part); });
}

struct NamespacesCase {
  int host_abi;
  int applied;        // the ABI the plan applies (0: no Landlock layer)
  const char* layer;  // the layer line, exactly
};

class NamespacesAbi : public ::testing::TestWithParam<NamespacesCase> {};

// The headline command runs on every ABI; --net never needs Landlock's TCP rules.
TEST_P(NamespacesAbi, HeadlineCommandIsPlannedWithTheLayerTheKernelHas) {
  const auto& c = GetParam();
  auto plan = compile_on(c.host_abi, kHeadline);
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_EQ(plan->mechanism, lx::Mechanism::namespaces);
  EXPECT_EQ(plan->landlock.host_abi, c.host_abi);
  EXPECT_EQ(plan->landlock.abi, c.applied);
  EXPECT_EQ(plan->net.mode, lx::NetPlan::Mode::proxy);
  EXPECT_EQ(plan->net.shim_port, lx::kShimPort);
  EXPECT_TRUE(std::find(plan->env.begin(), plan->env.end(), "HTTPS_PROXY=http://127.0.0.1:3128") != plan->env.end());
  // The workload's own loopback stays free: no TCP port rule, TCP not handled.
  EXPECT_TRUE(plan->landlock.connect_tcp.empty());
  EXPECT_FALSE(plan->landlock.deny_all_tcp);
  EXPECT_EQ(lx::landlock_layer(*plan), c.layer);
  EXPECT_TRUE(has_layer(*plan, "namespaces: user, mount, pid, ipc, uts, cgroup, net"));
  const std::string text = lx::render_text(*plan);
  EXPECT_TRUE(contains(text, c.layer)) << text;
  // Rules are listed only where a Landlock layer is applied.
  EXPECT_EQ(contains(text, "landlock (ABI "), c.applied > 0) << text;
  auto table = lx::render_table(*plan);
  EXPECT_EQ(table["landlock"]["layer"].value_or(std::string()), c.layer);
  EXPECT_EQ(table["landlock"]["abi"].value_or(-1), c.applied);
  ASSERT_NE(table["landlock"]["rules"].as_array(), nullptr);
  EXPECT_EQ(table["landlock"]["rules"].as_array()->empty(), c.applied == 0);
  ASSERT_NE(table["layers"].as_array(), nullptr);
  EXPECT_EQ(table["layers"].as_array()->size(), lx::layers_in_force(*plan).size());
}

// Transparent egress adds no TCP rule either (its listeners are in the namespace).
TEST_P(NamespacesAbi, TransparentModeHandlesNoTcp) {
  auto plan = compile_on(GetParam().host_abi, {"--net", "api.github.com:443", "--net-mode", "transparent", "--", "make"});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_TRUE(plan->net.transparent.enabled);
  EXPECT_TRUE(plan->landlock.connect_tcp.empty());
  EXPECT_FALSE(plan->landlock.deny_all_tcp);
}

INSTANTIATE_TEST_SUITE_P(
    Abis, NamespacesAbi,
    ::testing::Values(
        NamespacesCase{0, 0, "landlock: not available on this kernel (namespaces confine)"},
        NamespacesCase{1, 0, "landlock ABI 1: not applied (ABI 1 fails every rename or link across directories; namespaces confine)"},
        NamespacesCase{2, 2, "landlock ABI 2: filesystem only (no truncate right, no device-ioctl right, no signal or abstract-socket scoping)"},
        NamespacesCase{3, 3, "landlock ABI 3: filesystem only (no device-ioctl right, no signal or abstract-socket scoping)"},
        NamespacesCase{4, 4, "landlock ABI 4: filesystem only (no device-ioctl right, no signal or abstract-socket scoping)"},
        NamespacesCase{6, 6, "landlock ABI 6: filesystem, signal and abstract-socket scoping"}));

// The headline command as Debian 12's stock kernel (6.1, Landlock ABI 2) plans it, whole.
TEST(Layers, GoldenDryRunOnDebian12) {
  auto plan = compile_on(2, kHeadline, "6.1.0-18-amd64\n");
  ASSERT_TRUE(plan) << plan.error().reason;
  expect_golden(lx::render_text(*plan), "net_landlock_abi2.txt");
}

// --share-net below ABI 6 shares the host's abstract unix sockets too: said, not hidden.
TEST(Layers, ShareNetBelowAbi6NamesTheHostsAbstractSockets) {
  auto plan = compile_on(2, {"--share-net", "--", "make"});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_TRUE(has_layer(*plan, "abstract unix sockets"));
  auto scoped = compile_on(6, {"--share-net", "--", "make"});
  ASSERT_TRUE(scoped);
  EXPECT_FALSE(has_layer(*scoped, "abstract unix sockets"));
}

// The namespaces mechanism's minimum kernel: refused below it by name, with what is missing.
TEST(Layers, NamespacesRefuseAKernelBelowTheMinimum) {
  auto plan = compile_on(2, {"--", "make"}, "5.10.0-28-amd64\n");
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().cls, ErrorClass::spawn_sandbox_unavailable);
  EXPECT_EQ(plan.error().input, "kernel 5.10.0-28-amd64");
  EXPECT_TRUE(contains(plan.error().reason, "Linux 5.12")) << plan.error().reason;
  EXPECT_TRUE(contains(plan.error().reason, "mount_setattr")) << plan.error().reason;
  EXPECT_FALSE(plan.error().remedy.empty());
  EXPECT_EQ(exit_status_of(plan.error()), 125);
  for (const char* ok : {"5.12.0", "5.15.0-91-generic", "6.1.0-18-amd64", "6.12.9+bpo-amd64"})
    EXPECT_TRUE(compile_on(2, {"--", "make"}, ok)) << ok;
}

struct LandlockOnlyCase {
  int abi;
  std::vector<std::string> lost;  // "ABI N:" items named in the refusal
};

class LandlockOnlyAbi : public ::testing::TestWithParam<LandlockOnlyCase> {};

// Without namespaces nothing else confines what a lower ABI lacks: refused, naming each loss.
TEST_P(LandlockOnlyAbi, BelowTheMinimumIsRefusedNamingEachLoss) {
  const auto& c = GetParam();
  auto plan = compile_on(c.abi, {"--mechanism", "landlock", "--allow-degraded", "pid", "--", "make"});
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().cls, ErrorClass::spawn_sandbox_unavailable);
  EXPECT_EQ(plan.error().input, "--mechanism landlock");
  EXPECT_TRUE(contains(plan.error().reason, "ABI 6 (Linux 6.12)")) << plan.error().reason;
  EXPECT_TRUE(contains(plan.error().remedy, "allow user namespaces")) << plan.error().remedy;
  for (const auto& l : c.lost) EXPECT_TRUE(contains(plan.error().reason, l)) << l << " in " << plan.error().reason;
  for (int n = 2; n <= c.abi; ++n)
    EXPECT_FALSE(contains(plan.error().reason, "ABI " + std::to_string(n) + ":")) << n << " in " << plan.error().reason;
}

INSTANTIATE_TEST_SUITE_P(Abis, LandlockOnlyAbi,
                         ::testing::Values(LandlockOnlyCase{0, {"no Landlock", "ABI 2:", "ABI 6:"}},
                                           LandlockOnlyCase{1, {"ABI 2:", "ABI 3:", "ABI 4:", "ABI 5:", "ABI 6:"}},
                                           LandlockOnlyCase{2, {"ABI 3:", "truncate", "ABI 4:", "ABI 6:"}},
                                           LandlockOnlyCase{3, {"ABI 4:", "TCP", "ABI 6:"}},
                                           LandlockOnlyCase{4, {"ABI 5:", "ABI 6:", "signals"}}));

TEST(Layers, LandlockOnlyAtAbi6NamesItsWholeLayer) {
  auto plan = compile_on(6, {"--mechanism", "landlock", "--allow-degraded", "pid", "--", "make"});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_EQ(plan->mechanism, lx::Mechanism::landlock_only);
  EXPECT_EQ(plan->landlock.abi, 6);
  EXPECT_TRUE(plan->landlock.deny_all_tcp);
  EXPECT_TRUE(contains(lx::landlock_layer(*plan), "landlock ABI 6: filesystem, TCP connect and bind")) << lx::landlock_layer(*plan);
  EXPECT_TRUE(has_layer(*plan, "no namespaces"));
}

}  // namespace
}  // namespace cage::testing
