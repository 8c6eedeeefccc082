// --net-mode: validation, and what compile decides for transparent egress (routes, listeners,
// names, Landlock ports, the generated resolv.conf and hosts), against a FakeHostView.
#include <gtest/gtest.h>

#include "fake_host_view.h"
#include "linux/compile.h"
#include "linux/transparent_plan.h"

namespace cage::testing {
namespace {

using lx::MountKind;

Result<lx::Plan> plan_of(std::vector<std::string> words) {
  FakeHostView host;
  return lx::compile(policy_of(std::move(words)), host, {{"PATH", "/usr/bin:/bin"}});
}

const lx::MountStep* find(const lx::Plan& plan, const std::string& target) {
  for (const auto& m : plan.mounts)
    if (m.target == target) return &m;
  return nullptr;
}

bool has_env(const lx::Plan& plan, const std::string& prefix) {
  for (const auto& e : plan.env)
    if (e.rfind(prefix, 0) == 0) return true;
  return false;
}

Result<policy::Policy> validate_mode(const std::string& mode) {
  policy::PolicyInput in;
  in.argv = {"true"};
  in.net = {policy::Value{"a.com:443", "--net", "/w"}};
  in.net_mode = policy::Value{mode, "--net-mode", "/w"};
  return policy::validate(in, policy::Context{"/w", "/home/ann", {}});
}

TEST(NetMode, ValidValuesAndDefault) {
  EXPECT_EQ(validate_mode("proxy")->net_mode, policy::Policy::NetMode::proxy);
  EXPECT_EQ(validate_mode("transparent")->net_mode, policy::Policy::NetMode::transparent);
  EXPECT_EQ(validate_mode("both")->net_mode, policy::Policy::NetMode::both);
  EXPECT_EQ(policy_of({"--net", "a.com:443", "--", "make"}).net_mode, policy::Policy::NetMode::both);
}

TEST(NetMode, UnknownValueIsInvalidAndNamed) {
  auto p = validate_mode("tproxy");
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().cls, ErrorClass::invalid_policy);
  EXPECT_EQ(p.error().input, "--net-mode tproxy");
}

TEST(LinuxTransparent, BothModeAddsRoutesListenersAndNamesButNoTcpRules) {
  auto plan = plan_of({"--net", "api.github.com:443", "--net", "*.example.com:22", "--net", "10.77.0.0/16:8080",
                       "--net", "127.0.0.1:9000", "--net", "[2001:db8::1]:443", "--", "make"});
  ASSERT_TRUE(plan) << plan.error().reason;
  const auto& t = plan->net.transparent;
  ASSERT_TRUE(t.enabled);
  EXPECT_EQ(plan->net.shim_port, lx::kShimPort);
  EXPECT_TRUE(has_env(*plan, "HTTPS_PROXY="));
  EXPECT_EQ(t.ports, (std::vector<uint16_t>{22, 443, 8080, 9000}));
  // The shim's port, then every listener's port: Landlock names ports only.
  // The namespace, holding only lo and cage's listeners, is the boundary: no Landlock TCP rule, so
  // the workload's own loopback servers work (linux_layers_test.cc, net_own_loopback.sh).
  EXPECT_TRUE(plan->landlock.connect_tcp.empty());
  ASSERT_EQ(t.routes.size(), 2u);  // the synthetic range and 10.77/16; 127/8 is local already
  EXPECT_EQ(t.routes[0].addr, 0xC6120000u);
  EXPECT_EQ(t.routes[0].prefix, 15);
  EXPECT_EQ(t.routes[1].addr, 0x0A4D0000u);
  EXPECT_EQ(t.routes[1].prefix, 16);
  ASSERT_EQ(t.names.size(), 1u);
  EXPECT_EQ(t.names[0].first, "api.github.com");
  EXPECT_EQ(t.names[0].second, 0xC6120001u);
  ASSERT_EQ(t.notes.size(), 1u);  // the IPv6 rule: proxy only, and said so
  const auto* resolv = find(*plan, "/etc/resolv.conf");
  ASSERT_NE(resolv, nullptr);
  EXPECT_EQ(resolv->kind, MountKind::file);
  EXPECT_NE(resolv->content.find("nameserver 127.0.0.53"), std::string::npos);
  const auto* hosts = find(*plan, "/etc/hosts");
  ASSERT_NE(hosts, nullptr);
  EXPECT_EQ(hosts->content.find("127.0.0.1\tlocalhost\n"), 0u);
  std::string text = lx::render_text(*plan);
  EXPECT_NE(text.find("api.github.com -> 198.18.0.1"), std::string::npos) << text;
  EXPECT_NE(text.find("listeners: 0.0.0.0:22,443,8080,9000"), std::string::npos) << text;
}

TEST(LinuxTransparent, TransparentOnlyHasNoProxyPortNorVariables) {
  auto plan = plan_of({"--net", "a.com:443", "--net-mode", "transparent", "--", "make"});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_EQ(plan->net.shim_port, 0);
  EXPECT_FALSE(has_env(*plan, "HTTPS_PROXY="));
  EXPECT_FALSE(has_env(*plan, "JAVA_TOOL_OPTIONS="));
  EXPECT_TRUE(plan->landlock.connect_tcp.empty());
}

TEST(LinuxTransparent, ProxyModeLeavesEtcAndLandlockAsBefore) {
  auto plan = plan_of({"--net", "a.com:443", "--net-mode", "proxy", "--", "make"});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_FALSE(plan->net.transparent.enabled);
  EXPECT_TRUE(plan->landlock.connect_tcp.empty());
  EXPECT_EQ(find(*plan, "/etc/resolv.conf"), nullptr);  // the fake host has none to copy
  ASSERT_NE(find(*plan, "/etc/hosts"), nullptr);
  EXPECT_EQ(find(*plan, "/etc/hosts")->content, "");      // the host's copy, untouched
}

TEST(LinuxTransparent, NoNetMeansNothingTransparent) {
  auto plan = plan_of({"--", "make"});
  ASSERT_TRUE(plan);
  EXPECT_FALSE(plan->net.transparent.enabled);
  EXPECT_TRUE(plan->landlock.connect_tcp.empty());
}

TEST(LinuxTransparent, AGrantedEtcGetsFilesMountedOverNotWrittenInto) {
  auto plan = plan_of({"--ro", "/etc", "--net", "a.com:443", "--", "make"});
  ASSERT_TRUE(plan) << plan.error().reason;
  const auto* hosts = find(*plan, "/etc/hosts");  // the fake host has /etc/hosts, no resolv.conf
  ASSERT_NE(hosts, nullptr);
  EXPECT_EQ(hosts->kind, MountKind::over_file);
  EXPECT_EQ(hosts->content.find("127.0.0.1\tlocalhost\n"), 0u);
  EXPECT_EQ(find(*plan, "/etc/resolv.conf"), nullptr);  // nothing would be created in the grant
  ASSERT_EQ(plan->net.transparent.notes.size(), 1u);
  EXPECT_NE(plan->net.transparent.notes[0].find("/etc/resolv.conf"), std::string::npos);
  EXPECT_EQ(plan->net.lo_address, lx::kLoAddress);
  auto bare = plan_of({"--no-system", "--ro", "/usr", "--net", "a.com:443", "--", "make"});
  ASSERT_TRUE(bare) << bare.error().reason;
  ASSERT_NE(find(*bare, "/etc/resolv.conf"), nullptr);
  EXPECT_EQ(find(*bare, "/etc/resolv.conf")->kind, MountKind::file);
  EXPECT_TRUE(bare->net.transparent.notes.empty());
}

TEST(LinuxTransparent, RefusesWhatItCannotCarry) {
  auto wide = plan_of({"--net", "a.com:1000-2000", "--", "make"});
  ASSERT_FALSE(wide);
  EXPECT_EQ(wide.error().cls, ErrorClass::invalid_policy);
  EXPECT_NE(wide.error().remedy.find("--net-mode proxy"), std::string::npos);
  EXPECT_TRUE(plan_of({"--net", "a.com:1000-2000", "--net-mode", "proxy", "--", "make"}));
  auto shim = plan_of({"--net", "a.com:3128", "--", "make"});
  ASSERT_FALSE(shim);
  EXPECT_TRUE(plan_of({"--net", "a.com:3128", "--net-mode", "transparent", "--", "make"}));
  auto overlap = plan_of({"--net", "198.18.5.0/24:443", "--", "make"});
  ASSERT_FALSE(overlap);
  EXPECT_EQ(overlap.error().input, "--net 198.18.5.0/24:443");
}

}  // namespace
}  // namespace cage::testing
