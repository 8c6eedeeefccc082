// The environment a workload needs to find cage's proxy (pure; the core's compile step adds it).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "policy/policy.h"

namespace cage::proxy {

// `allow`: when a rule names the host's loopback (localhost, 127.0.0.0/8, ::1), NO_PROXY leaves
// loopback out, so that clients send those requests to the proxy instead of the sandbox's own lo.
std::vector<std::pair<std::string, std::string>> proxy_environment(uint16_t port,
                                                                   const std::vector<policy::NetRule>& allow = {});

// A proxy on the host's loopback (no network namespace) serves only clients that know the run's
// secret: the URLs carry it as user kProxyUser and password `secret` (Basic Proxy-Authorization for
// HTTP, RFC 1929 for SOCKS5). No JAVA_TOOL_OPTIONS: the JVM cannot take credentials that way.
inline constexpr const char* kProxyUser = "cage";
std::vector<std::pair<std::string, std::string>> proxy_environment_with_secret(const std::string& port,
                                                                               const std::string& secret,
                                                                               const std::vector<policy::NetRule>& allow = {});

}  // namespace cage::proxy
