// --net patterns: every accepted form parses and matches what it should and nothing more; every
// malformed form is refused with a message naming the problem.
#include "policy/host_pattern.h"

#include <gtest/gtest.h>

using cage::policy::HostPattern;
using cage::policy::host_pattern_matches;
using cage::policy::parse_host_pattern;

namespace {

HostPattern P(const char* text) {
  HostPattern p;
  std::string err = parse_host_pattern(text, p);
  EXPECT_EQ(err, "") << text;
  return p;
}

std::string E(const char* text) {
  HostPattern p;
  return parse_host_pattern(text, p);
}

TEST(HostPattern, ExactNameAndPort) {
  auto p = P("API.Example.com:443");
  EXPECT_EQ(p.kind, HostPattern::Kind::exact_name);
  EXPECT_TRUE(host_pattern_matches(p, "api.example.com", 443));
  EXPECT_TRUE(host_pattern_matches(p, "API.EXAMPLE.COM.", 443));
  EXPECT_FALSE(host_pattern_matches(p, "api.example.com", 80));
  EXPECT_FALSE(host_pattern_matches(p, "x.api.example.com", 443));
  EXPECT_FALSE(host_pattern_matches(p, "api.example.com.evil.com", 443));
}

TEST(HostPattern, OneLabelWildcard) {
  auto p = P("*.example.com:443");
  EXPECT_TRUE(host_pattern_matches(p, "a.example.com", 443));
  EXPECT_FALSE(host_pattern_matches(p, "a.b.example.com", 443));
  EXPECT_FALSE(host_pattern_matches(p, "example.com", 443));
  EXPECT_FALSE(host_pattern_matches(p, "aexample.com", 443));
}

TEST(HostPattern, AnyDepthWildcard) {
  auto p = P("**.example.com:443");
  EXPECT_TRUE(host_pattern_matches(p, "a.example.com", 443));
  EXPECT_TRUE(host_pattern_matches(p, "a.b.c.example.com", 443));
  EXPECT_FALSE(host_pattern_matches(p, "example.com", 443));
  EXPECT_FALSE(host_pattern_matches(p, "badexample.com", 443));
}

TEST(HostPattern, PortListAndRange) {
  auto p = P("a.com:80,443,8000-8100");
  for (int port : {80, 443, 8000, 8050, 8100}) EXPECT_TRUE(host_pattern_matches(p, "a.com", port)) << port;
  for (int port : {81, 442, 7999, 8101}) EXPECT_FALSE(host_pattern_matches(p, "a.com", port)) << port;
}

TEST(HostPattern, IpAndCidr) {
  auto v4 = P("10.1.2.3:5432");
  EXPECT_EQ(v4.kind, HostPattern::Kind::ip);
  EXPECT_TRUE(host_pattern_matches(v4, "10.1.2.3", 5432));
  EXPECT_TRUE(host_pattern_matches(v4, "::ffff:10.1.2.3", 5432));
  EXPECT_FALSE(host_pattern_matches(v4, "10.1.2.4", 5432));
  auto cidr = P("10.0.0.0/8:5432");
  EXPECT_EQ(cidr.prefix, 104);
  EXPECT_TRUE(host_pattern_matches(cidr, "10.200.0.1", 5432));
  EXPECT_FALSE(host_pattern_matches(cidr, "11.0.0.1", 5432));
  EXPECT_FALSE(host_pattern_matches(cidr, "ten.example", 5432));
  auto v6 = P("[2001:db8::1]:443");
  EXPECT_TRUE(host_pattern_matches(v6, "2001:db8:0:0::1", 443));
  EXPECT_TRUE(host_pattern_matches(v6, "[2001:db8::1]", 443));
  auto v6net = P("[2001:db8::/32]:443");
  EXPECT_TRUE(host_pattern_matches(v6net, "2001:db8:ffff::5", 443));
  EXPECT_FALSE(host_pattern_matches(v6net, "2001:db9::5", 443));
}

TEST(HostPattern, NameDoesNotMatchAnIpRuleNorTheReverse) {
  EXPECT_FALSE(host_pattern_matches(P("127.0.0.1:80"), "localhost", 80));
  EXPECT_FALSE(host_pattern_matches(P("localhost:80"), "127.0.0.1", 80));
  EXPECT_TRUE(host_pattern_matches(P("localhost:80"), "localhost", 80));
}

TEST(HostPattern, ErrorsNameTheProblem) {
  EXPECT_NE(E("example.com").find("missing port"), std::string::npos);
  EXPECT_NE(E("example.com:").find("missing port"), std::string::npos);
  EXPECT_NE(E("example.com:0").find("1-65535"), std::string::npos);
  EXPECT_NE(E("example.com:70000").find("1-65535"), std::string::npos);
  EXPECT_NE(E("example.com:90-80").find("backwards"), std::string::npos);
  EXPECT_NE(E("example.com:80,").find("empty entry"), std::string::npos);
  EXPECT_NE(E("*:443").find("every host"), std::string::npos);
  EXPECT_NE(E("*.com:443").find("top-level"), std::string::npos);
  EXPECT_NE(E("a.*.com:443").find("'*'"), std::string::npos);
  EXPECT_NE(E("exa mple.com:443").find("invalid character"), std::string::npos);
  EXPECT_NE(E("2001:db8::1:443").find("brackets"), std::string::npos);
  EXPECT_NE(E("[2001:db8::1]443").find("missing port"), std::string::npos);
  EXPECT_NE(E("10.0.0.1/33:1").find("prefix length"), std::string::npos);
  EXPECT_NE(E("10.1.0.0/8:1").find("host bits"), std::string::npos);
  EXPECT_NE(E("10.0.0:1").find("invalid IP"), std::string::npos);
  EXPECT_NE(E("010.0.0.1:1").find("invalid IP"), std::string::npos);
  EXPECT_NE(E("-a.com:1").find("starts or ends"), std::string::npos);
  EXPECT_NE(E("a..com:1").find("empty label"), std::string::npos);
  EXPECT_NE(E("").find("empty pattern"), std::string::npos);
}

TEST(HostPattern, IpLiteralParser) {
  std::array<uint8_t, 16> a{};
  bool v4 = false;
  EXPECT_TRUE(cage::policy::parse_ip_literal("::", a, v4));
  EXPECT_TRUE(cage::policy::parse_ip_literal("::1", a, v4));
  EXPECT_FALSE(v4);
  EXPECT_TRUE(cage::policy::parse_ip_literal("1:2:3:4:5:6:7:8", a, v4));
  EXPECT_TRUE(cage::policy::parse_ip_literal("::ffff:1.2.3.4", a, v4));
  EXPECT_TRUE(v4);
  EXPECT_FALSE(cage::policy::parse_ip_literal("1:2:3:4:5:6:7:8:9", a, v4));
  EXPECT_FALSE(cage::policy::parse_ip_literal("1::2::3", a, v4));
  EXPECT_FALSE(cage::policy::parse_ip_literal("1.2.3.256", a, v4));
  EXPECT_FALSE(cage::policy::parse_ip_literal("fe80::1%eth0", a, v4));
  EXPECT_FALSE(cage::policy::parse_ip_literal("2130706433", a, v4));
}

// A URL pasted as is (`--net "$(npm config get registry)"`) is read as its host and port; what
// cannot be read that way is refused with the exact HOST:PORT to write.
TEST(HostPattern, UrlsAreReadAsHostAndPort) {
  auto p = P("https://Registry.example.org/");
  EXPECT_EQ(p.text, "Registry.example.org:443");
  EXPECT_TRUE(host_pattern_matches(p, "registry.example.org", 443));
  EXPECT_FALSE(host_pattern_matches(p, "registry.example.org", 80));
  EXPECT_EQ(P("http://mirror.example.org/debian?x#y").text, "mirror.example.org:80");
  EXPECT_EQ(P("HTTPS://a.example:8443/simple").text, "a.example:8443");
  EXPECT_EQ(P("https://[2001:db8::1]/").text, "[2001:db8::1]:443");
  EXPECT_EQ(P("http://[2001:db8::1]:8080").text, "[2001:db8::1]:8080");
  EXPECT_EQ(P("https://10.0.0.1").text, "10.0.0.1:443");
  EXPECT_EQ(E("ftp://files.example.org/pub"), "a URL, where --net takes HOST:PORT: write files.example.org:PORT");
  EXPECT_EQ(E("git://code.example.org:9418/x"), "a URL, where --net takes HOST:PORT: write code.example.org:9418");
  EXPECT_EQ(E("https://user:pw@a.example/"), "a URL, where --net takes HOST:PORT: write a.example:443");
  EXPECT_NE(E("https://"), "");
  EXPECT_NE(E("https:///path"), "");
  EXPECT_NE(E("https://a.example:x/"), "");
  EXPECT_NE(E("https://a.example:0/"), "");
  EXPECT_NE(E("https://*/"), "");
}

}  // namespace
