// The allowlist as the proxy applies it: names first, then no rebinding into private addresses.
#include "proxy/allowlist.h"

#include <gtest/gtest.h>

using namespace cage;

namespace {

proxy::Allowlist list(std::initializer_list<const char*> pats) {
  std::vector<policy::NetRule> rules;
  for (const char* t : pats) {
    policy::NetRule r;
    EXPECT_EQ(policy::parse_host_pattern(t, r.pattern), "");
    r.origin = std::string("--net ") + t;
    rules.push_back(r);
  }
  return proxy::Allowlist(rules);
}

proxy::Address addr(const char* s) {
  proxy::Address a;
  bool v4;
  EXPECT_TRUE(policy::parse_ip_literal(s, a, v4));
  return a;
}

TEST(ProxyAllowlist, SpecialAddresses) {
  for (const char* s : {"127.0.0.1", "10.1.1.1", "172.16.0.1", "192.168.1.1", "169.254.169.254", "0.0.0.0",
                        "100.64.0.1", "::1", "::", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "224.0.0.1",
                        "255.255.255.255", "64:ff9b::a00:1", "64:ff9b:1::a00:1", "64:ff9b:1:ffff::7f00:1",
                        "::ffff:0:127.0.0.1", "::ffff:0:a00:1"})
    EXPECT_TRUE(proxy::is_special_address(addr(s))) << s;
  for (const char* s : {"93.184.216.34", "1.1.1.1", "2606:4700::1111", "172.32.0.1", "64:ff9b:2::1"})
    EXPECT_FALSE(proxy::is_special_address(addr(s))) << s;
}

TEST(ProxyAllowlist, WildcardCannotRebindIntoPrivate) {
  auto l = list({"*.example.com:443"});
  const auto* r = l.match("a.example.com", 443);
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(l.address_allowed(*r, addr("93.184.216.34"), 443));
  EXPECT_FALSE(l.address_allowed(*r, addr("127.0.0.1"), 443));
  EXPECT_FALSE(l.address_allowed(*r, addr("10.0.0.5"), 443));
}

TEST(ProxyAllowlist, ExactNameOrCidrConsents) {
  auto l = list({"db.internal:5432", "*.corp.example:443", "10.0.0.0/8:443"});
  EXPECT_TRUE(l.address_allowed(*l.match("db.internal", 5432), addr("10.1.1.1"), 5432));
  const auto* w = l.match("git.corp.example", 443);
  ASSERT_NE(w, nullptr);
  EXPECT_TRUE(l.address_allowed(*w, addr("10.9.9.9"), 443));
  EXPECT_FALSE(l.address_allowed(*w, addr("192.168.1.1"), 443));
  EXPECT_EQ(l.match("evil.com", 443), nullptr);
  EXPECT_EQ(l.match("db.internal", 5433), nullptr);
}

TEST(ProxyAllowlist, DenialNamesTheMissingRule) {
  EXPECT_EQ(proxy::denial_message("evil.com", 443), "cage: evil.com:443 is not in the --net allowlist (add --net evil.com:443)");
  EXPECT_EQ(proxy::host_port_text("::1", 80), "[::1]:80");
}

}  // namespace
