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

std::vector<std::pair<std::string, std::string>> proxy_environment(uint16_t port,
                                                                   const std::vector<policy::NetRule>& allow) {
  const std::string p = std::to_string(port);
  const std::string http = "http://127.0.0.1:" + p;
  // socks5h: the client sends names, so the allowlist sees the name and DNS happens outside.
  const std::string socks = "socks5h://127.0.0.1:" + p;
  const std::string no_proxy = names_host_loopback(allow) ? "" : "localhost,127.0.0.1,::1";
  return {
      {"HTTPS_PROXY", http},  // curl, Go, Python requests, pip, npm, cargo, git (https)
      {"https_proxy", http},  // curl reads only the lower-case form for http_proxy; many read both
      {"HTTP_PROXY", http},
      {"http_proxy", http},   // curl ignores upper-case HTTP_PROXY (CGI "httpoxy" guard)
      {"ALL_PROXY", socks},   // curl and others: non-HTTP protocols through SOCKS on the same port
      {"all_proxy", socks},
      {"NO_PROXY", no_proxy},  // the sandbox's own loopback stays direct
      {"no_proxy", no_proxy},
      {"NODE_USE_ENV_PROXY", "1"},  // Node.js >= 22.15/24: built-in fetch/http honour *_PROXY
      // The JVM reads no *_PROXY variable; it does read JAVA_TOOL_OPTIONS at startup.
      {"JAVA_TOOL_OPTIONS", "-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=" + p + " -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=" + p +
                                " -Dhttp.nonProxyHosts=localhost|127.0.0.1|[::1]"},
  };
}

}  // namespace cage::proxy
