// The proxy variables a workload gets with --net, one entry per convention tools actually read.
// Pure: no OS calls. Documented in src/proxy/README.md; checked by tests/unit/proxy_env_test.cc.
#include "proxy/env.h"

namespace cage::proxy {

namespace {
bool names_host_loopback(const std::vector<policy::NetRule>& allow) {
  for (const auto& r : allow)
    for (const char* h : {"localhost", "127.0.0.1", "::1"})
      for (const auto& pr : r.pattern.ports)
        if (policy::host_pattern_matches(r.pattern, h, pr.lo)) return true;
  return false;
}
}  // namespace

namespace {
// `authority`: what follows the scheme in every proxy URL; `java`: whether the JVM hint can be given
// (the JVM takes no credentials from a system property, so not with a secret).
std::vector<std::pair<std::string, std::string>> environment_for(const std::string& authority, const std::string& port,
                                                                 const std::vector<policy::NetRule>& allow, bool java) {
  const std::string http = "http://" + authority;
  // socks5h: the client sends names, so the allowlist sees the name and DNS happens outside.
  const std::string socks = "socks5h://" + authority;
  const std::string no_proxy = names_host_loopback(allow) ? "" : "localhost,127.0.0.1,::1";
  std::vector<std::pair<std::string, std::string>> env = {
      {"HTTPS_PROXY", http},  // curl, Go, Python requests, pip, npm, cargo, git (https)
      {"https_proxy", http},  // curl reads only the lower-case form for http_proxy; many read both
      {"HTTP_PROXY", http},
      {"http_proxy", http},   // curl ignores upper-case HTTP_PROXY (CGI "httpoxy" guard)
      {"ALL_PROXY", socks},   // curl and others: non-HTTP protocols through SOCKS on the same port
      {"all_proxy", socks},
      {"NO_PROXY", no_proxy},  // the sandbox's own loopback stays direct
      {"no_proxy", no_proxy},
      {"NODE_USE_ENV_PROXY", "1"},  // Node.js >= 22.15/24: built-in fetch/http honour *_PROXY
  };
  // The JVM reads no *_PROXY variable; it does read JAVA_TOOL_OPTIONS at startup. Its own default
  // nonProxyHosts (localhost|127.*|[::1]) would send a rule for the host's loopback to the sandbox's
  // own: set empty then, as NO_PROXY is.
  if (java)
    env.emplace_back("JAVA_TOOL_OPTIONS", "-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=" + port +
                                              " -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=" + port +
                                              " -Dhttp.nonProxyHosts=" +
                                              (no_proxy.empty() ? "" : "localhost|127.0.0.1|[::1]"));
  return env;
}
}  // namespace

std::vector<std::pair<std::string, std::string>> proxy_environment(uint16_t port,
                                                                   const std::vector<policy::NetRule>& allow) {
  const std::string p = std::to_string(port);
  return environment_for("127.0.0.1:" + p, p, allow, true);
}

std::vector<std::pair<std::string, std::string>> proxy_environment_with_secret(const std::string& port,
                                                                               const std::string& secret,
                                                                               const std::vector<policy::NetRule>& allow) {
  return environment_for(std::string(kProxyUser) + ":" + secret + "@127.0.0.1:" + port, port, allow, false);
}

}  // namespace cage::proxy
