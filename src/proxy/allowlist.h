// The --net allowlist as the proxy applies it: a name check on what the client asked for, then an
// address check on what that name resolved to (no DNS rebinding into the host or a private network
// unless such an address, CIDR or the exact name was listed). Pure; proven by proxy_allowlist_test.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "policy/policy.h"

namespace cage::proxy {

using Address = std::array<uint8_t, 16>;  // IPv6, IPv4 as v4-mapped

// Loopback, private (RFC 1918, ULA), link-local, CGNAT, unspecified, multicast, broadcast,
// documentation/benchmark ranges and IPv6 transition forms that embed one of them.
bool is_special_address(const Address& a);
std::string address_text(const Address& a);

class Allowlist {
 public:
  Allowlist() = default;
  explicit Allowlist(std::vector<policy::NetRule> rules) : rules_(std::move(rules)) {}

  // The first rule the requested host:port matches, or nullptr.
  const policy::NetRule* match(std::string_view host, uint16_t port) const;
  // May a connection for host:port (allowed by `rule`) go to `addr`?
  bool address_allowed(const policy::NetRule& rule, const Address& addr, uint16_t port) const;
  bool empty() const { return rules_.empty(); }
  const std::vector<policy::NetRule>& rules() const { return rules_; }

 private:
  std::vector<policy::NetRule> rules_;
};

// "cage: evil.com:443 is not in the --net allowlist (add --net evil.com:443)"
std::string denial_message(std::string_view host, uint16_t port);
std::string host_port_text(std::string_view host, uint16_t port);  // brackets IPv6

}  // namespace cage::proxy
