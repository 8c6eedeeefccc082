#include "proxy/env.h"

#include <gtest/gtest.h>

#include <map>

TEST(ProxyEnv, PointsEveryConventionAtTheShim) {
  auto env = cage::proxy::proxy_environment(3128);
  std::map<std::string, std::string> m(env.begin(), env.end());
  EXPECT_EQ(m["HTTPS_PROXY"], "http://127.0.0.1:3128");
  EXPECT_EQ(m["http_proxy"], "http://127.0.0.1:3128");
  EXPECT_EQ(m["ALL_PROXY"], "socks5h://127.0.0.1:3128");
  EXPECT_EQ(m["no_proxy"], "localhost,127.0.0.1,::1");
  EXPECT_EQ(m["NODE_USE_ENV_PROXY"], "1");
  EXPECT_NE(m["JAVA_TOOL_OPTIONS"].find("-Dhttps.proxyPort=3128"), std::string::npos);
  EXPECT_NE(m["JAVA_TOOL_OPTIONS"].find("-Dhttp.nonProxyHosts=localhost|127.0.0.1|[::1]"), std::string::npos);
}

TEST(ProxyEnv, HostLoopbackRulesGoThroughTheProxy) {
  cage::policy::NetRule r;
  ASSERT_EQ(cage::policy::parse_host_pattern("localhost:8080", r.pattern), "");
  auto env = cage::proxy::proxy_environment(3128, {r});
  std::map<std::string, std::string> m(env.begin(), env.end());
  EXPECT_EQ(m["NO_PROXY"], "");
  // The JVM's own default nonProxyHosts would keep localhost direct (the sandbox's loopback): emptied.
  const std::string& jvm = m["JAVA_TOOL_OPTIONS"];
  ASSERT_GE(jvm.size(), std::string("-Dhttp.nonProxyHosts=").size());
  EXPECT_EQ(jvm.substr(jvm.size() - std::string("-Dhttp.nonProxyHosts=").size()), "-Dhttp.nonProxyHosts=");
}
