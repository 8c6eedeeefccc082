// The --net allowlist as the proxy applies it: a name check on what the client asked for, then an
// address check on what that name resolved to (no DNS rebinding into the host or a private network
// unless such an address, CIDR or the exact name was listed). Pure; proven by proxy_allowlist_test.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "policy/policy.h"

namespace cage::proxy {

using Address = std::array<uint8_t, 16>;  // IPv6, IPv4 as v4-mapped
inline constexpr Address kLoopbackV4{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1};
inline constexpr Address kLoopbackV6{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

// One row of the special-purpose table: a range a name's DNS may not point a wildcard rule at.
struct SpecialRange {
  Address net;  // IPv4 rows are v4-mapped, so an IPv4-mapped IPv6 address meets the IPv4 rows
  int prefix;
  std::string_view name;  // the IANA registry's name for the block
};
// The IANA IPv4 and IPv6 Special-Purpose Address Registries, the multicast blocks, and the
// deprecated IPv6 forms that embed an IPv4 address (allowlist.cc has the table).
std::span<const SpecialRange> special_ranges();
const SpecialRange* special_range_of(const Address& a);  // nullptr: globally routable unicast
bool is_special_address(const Address& a);
std::string address_text(const Address& a);
std::string range_text(const SpecialRange& r);  // "198.51.100.0/24", "2001:db8::/32"

// Does the host itself answer on `a` (an address of one of its interfaces, a local route)? 1 yes,
// 0 no, <0 -errno when it cannot tell (the caller refuses). host_local.cc; a test passes its own.
using HostCheck = std::function<int(const Address&)>;
int host_answers_on(const Address& a);

class Allowlist {
 public:
  Allowlist() = default;
  explicit Allowlist(std::vector<policy::NetRule> rules) : rules_(std::move(rules)) {}

  // The first rule the requested host:port matches, or nullptr. `localhost` is the name of
  // 127.0.0.1 and ::1 (issue 19 item 7): a rule for `localhost:P` also matches those addresses at
  // port P, and an IP or CIDR rule covering either of them at port P also matches `localhost`
  // (connected to the covered address only, by screen()).
  const policy::NetRule* match(std::string_view host, uint16_t port) const;
  // Why a connection for host:port (allowed by `rule`) may not go to `addr`, or "" when it may:
  // `addr` is special-purpose, or the host answers on it (asked of `host` only when it matters),
  // and neither an IP/CIDR rule covering it nor the exact name was listed.
  std::string screen(const policy::NetRule& rule, const Address& addr, uint16_t port, const HostCheck& host) const;
  bool address_allowed(const policy::NetRule& rule, const Address& addr, uint16_t port) const {
    return screen(rule, addr, port, nullptr).empty();  // the table only
  }
  bool empty() const { return rules_.empty(); }
  const std::vector<policy::NetRule>& rules() const { return rules_; }

 private:
  std::vector<policy::NetRule> rules_;
};

// "cage: evil.com:443 is not in the --net allowlist (add --net evil.com:443)"
std::string denial_message(std::string_view host, uint16_t port);
std::string host_port_text(std::string_view host, uint16_t port);  // brackets IPv6

}  // namespace cage::proxy
