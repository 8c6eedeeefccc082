// The allowlist as the proxy applies it: names first, then no rebinding into private addresses.
#include "proxy/allowlist.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>

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

// One row per registry block; each row's first and last address are in it, the addresses just
// outside are not, and the names are the registry's.
TEST(ProxyAllowlist, SpecialRangeTable) {
  std::vector<std::string> rows;
  for (const auto& r : proxy::special_ranges()) {
    rows.push_back(proxy::range_text(r));
    EXPECT_FALSE(r.name.empty());
    EXPECT_NE(proxy::special_range_of(r.net), nullptr) << proxy::range_text(r);
  }
  for (const char* want : {"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15",
                           "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
                           "255.255.255.255/32", "::/128", "::1/128", "64:ff9b::/96", "64:ff9b:1::/48",
                           "100::/64", "2001::/23", "2001:db8::/32", "2002::/16", "3fff::/20", "fc00::/7",
                           "fe80::/10", "ff00::/8"})
    EXPECT_NE(std::find(rows.begin(), rows.end(), want), rows.end()) << want;
  for (const char* s : {"192.0.2.1", "198.51.100.7", "203.0.113.255", "198.19.255.255", "240.0.0.1",
                        "239.255.255.255", "0.1.2.3", "100.127.255.255", "2001::1", "2001:0:4136:e378::1",
                        "2001:1ff::1", "2001:db8::1", "2002:7f00:1::1", "2002:c000:0204::1", "100::1",
                        "3fff:fff::1", "fec0::1", "ff02::1", "::ffff:192.0.2.1", "::ffff:198.51.100.7"})
    EXPECT_TRUE(proxy::is_special_address(addr(s))) << s;
  for (const char* s : {"192.0.3.1", "198.51.101.1", "203.0.114.1", "198.20.0.1", "100.128.0.1",
                        "2001:200::1", "2001:db9::1", "2003::1", "2a00:1450::1", "45.77.0.7"})
    EXPECT_FALSE(proxy::is_special_address(addr(s))) << s;
  EXPECT_EQ(proxy::special_range_of(addr("2001:0:4136:e378::1"))->name.find("TEREDO") != std::string_view::npos,
            true);
  EXPECT_NE(proxy::special_range_of(addr("198.51.100.7"))->name.find("TEST-NET-2"), std::string_view::npos);
}

// The host's own addresses: a wildcard rule's name resolving to one is refused, whatever the
// address; listing the address itself (or a CIDR over it) or the exact name is the consent.
TEST(ProxyAllowlist, HostOwnAddressesAreScreened) {
  auto l = list({"*.example.test:80", "exact.example.org:80", "45.77.0.8:80"});
  int asked = 0;
  proxy::HostCheck host = [&](const proxy::Address& a) {
    ++asked;
    return a == addr("45.77.0.7") || a == addr("45.77.0.8") || a == addr("2a01:4f8::7") ? 1 : 0;
  };
  const auto* w = l.match("svc.example.test", 80);
  ASSERT_NE(w, nullptr);
  EXPECT_NE(l.screen(*w, addr("45.77.0.7"), 80, host).find("an address this host answers on"), std::string::npos);
  EXPECT_NE(l.screen(*w, addr("2a01:4f8::7"), 80, host), "");
  EXPECT_EQ(l.screen(*w, addr("93.184.216.34"), 80, host), "");       // not the host's: allowed
  EXPECT_EQ(l.screen(*w, addr("45.77.0.8"), 80, host), "");           // the address is listed
  EXPECT_NE(l.screen(*w, addr("45.77.0.8"), 81, host), "");           // ... for port 80 only
  EXPECT_NE(l.screen(*w, addr("198.51.100.7"), 80, host).find("TEST-NET-2"), std::string::npos);
  EXPECT_EQ(l.screen(*l.match("exact.example.org", 80), addr("45.77.0.7"), 80, host), "");
  int before = asked;
  (void)l.screen(*w, addr("10.0.0.1"), 80, host);  // the table decides: the host is not asked
  EXPECT_EQ(asked, before);
  proxy::HostCheck broken = [](const proxy::Address&) { return -EMFILE; };  // cannot tell: refused
  EXPECT_NE(l.screen(*w, addr("93.184.216.34"), 80, broken).find("could not check"), std::string::npos);
}

// The real check, in this process's network namespace: its loopback is local, a documentation
// address (no route, or a gateway route) is not.
TEST(ProxyAllowlist, HostAnswersOnLoopback) {
  EXPECT_EQ(proxy::host_answers_on(addr("127.0.0.1")), 1);
  EXPECT_EQ(proxy::host_answers_on(addr("192.0.2.77")), 0);
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

// Issue 19 item 7: `localhost` is 127.0.0.1 and ::1 in every mode, so a rule for either spelling
// matches the other; nothing else on 127/8, and no other port, comes with it.
TEST(ProxyAllowlist, LocalhostIsItsLoopbackAddresses) {
  auto byname = list({"localhost:80"});
  EXPECT_NE(byname.match("localhost", 80), nullptr);
  EXPECT_NE(byname.match("127.0.0.1", 80), nullptr);
  EXPECT_NE(byname.match("::1", 80), nullptr);
  EXPECT_NE(byname.match("0:0:0:0:0:0:0:1", 80), nullptr);
  EXPECT_EQ(byname.match("127.0.0.2", 80), nullptr);
  EXPECT_EQ(byname.match("127.0.0.1", 81), nullptr);
  EXPECT_EQ(byname.match("localhost.example", 80), nullptr);
  EXPECT_TRUE(byname.address_allowed(*byname.match("127.0.0.1", 80), addr("127.0.0.1"), 80));

  auto byaddr = list({"127.0.0.1:80"});
  const auto* r = byaddr.match("localhost", 80);
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(byaddr.address_allowed(*r, addr("127.0.0.1"), 80));
  EXPECT_FALSE(byaddr.address_allowed(*r, addr("::1"), 80));  // connected to the listed address only
  EXPECT_EQ(byaddr.match("::1", 80), nullptr);
  EXPECT_EQ(byaddr.match("localhost", 81), nullptr);
  EXPECT_NE(list({"[::1]:80"}).match("localhost", 80), nullptr);
  EXPECT_NE(list({"127.0.0.0/8:80"}).match("localhost", 80), nullptr);
  EXPECT_EQ(list({"10.0.0.0/8:80"}).match("localhost", 80), nullptr);
  EXPECT_EQ(list({"*.x.localhost:80"}).match("127.0.0.1", 80), nullptr);  // a wildcard is no consent
}

TEST(ProxyAllowlist, DenialNamesTheMissingRule) {
  EXPECT_EQ(proxy::denial_message("evil.com", 443), "cage: evil.com:443 is not in the --net allowlist (add --net evil.com:443)");
  EXPECT_EQ(proxy::host_port_text("::1", 80), "[::1]:80");
}

}  // namespace
