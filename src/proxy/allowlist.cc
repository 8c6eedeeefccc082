// The --net allowlist check (pure): names are matched as the client wrote them; the addresses a
// name resolves to are then screened so that an allowed public name cannot be pointed (by its DNS)
// at the host's loopback or a private network. Proven by tests/unit/proxy_allowlist_test.cc.
#include "proxy/allowlist.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace cage::proxy {
namespace {

struct Range {
  uint8_t bytes[16];
  int prefix;
};

// IPv4 ranges are written v4-mapped (prefix + 96).
constexpr Range kSpecial[] = {
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0}, 104},        // 0.0.0.0/8 (reaches loopback)
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 0}, 104},       // 10/8
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 100, 64, 0, 0}, 106},     // 100.64/10 CGNAT
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 0}, 104},      // 127/8
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 169, 254, 0, 0}, 112},    // 169.254/16 (cloud metadata)
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 172, 16, 0, 0}, 108},     // 172.16/12
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 0, 0}, 120},      // 192.0.0/24
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 0, 0}, 112},    // 192.168/16
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 0}, 111},     // 198.18/15
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 224, 0, 0, 0}, 99},       // 224/3 multicast+reserved
    {{0}, 128},                                                           // ::
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128},              // ::1
    {{0}, 96},                                                            // ::/96 (IPv4-compatible)
    {{0, 0x64, 0xff, 0x9b}, 96},                                          // 64:ff9b::/96 NAT64
    {{0, 0x64, 0xff, 0x9b, 0, 1}, 48},                                    // 64:ff9b:1::/48 local NAT64 (RFC 8215)
    {{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0}, 96},                     // ::ffff:0:0:0/96 IPv4-translated (SIIT)
    {{0x20, 0x02}, 16},                                                   // 2002::/16 6to4
    {{0x20, 0x01, 0, 0}, 32},                                             // 2001::/32 Teredo
    {{0xfc}, 7},                                                          // ULA
    {{0xfe, 0x80}, 10},                                                   // link-local
    {{0xfe, 0xc0}, 10},                                                   // site-local
    {{0xff}, 8},                                                          // multicast
};

bool in_prefix(const Address& a, const uint8_t* net, int prefix) {
  int bytes = prefix / 8, rest = prefix % 8;
  if (std::memcmp(a.data(), net, static_cast<size_t>(bytes)) != 0) return false;
  if (rest == 0) return true;
  uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (a[bytes] & mask) == (net[bytes] & mask);
}

bool rule_covers_address(const policy::HostPattern& p, const Address& addr, uint16_t port) {
  using K = policy::HostPattern::Kind;
  if (p.kind != K::ip && p.kind != K::cidr) return false;
  bool port_ok = std::any_of(p.ports.begin(), p.ports.end(),
                             [&](const policy::PortRange& r) { return port >= r.lo && port <= r.hi; });
  return port_ok && in_prefix(addr, p.addr.data(), p.kind == K::ip ? 128 : p.prefix);
}

}  // namespace

bool is_special_address(const Address& a) {
  return std::any_of(std::begin(kSpecial), std::end(kSpecial),
                     [&](const Range& r) { return in_prefix(a, r.bytes, r.prefix); });
}

std::string address_text(const Address& a) {
  char buf[64];
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::memcmp(a.data(), kMapped, 12) == 0) {
    std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", a[12], a[13], a[14], a[15]);
    return buf;
  }
  std::string s;
  for (int i = 0; i < 8; ++i) {
    std::snprintf(buf, sizeof buf, "%s%x", i ? ":" : "", a[2 * i] << 8 | a[2 * i + 1]);
    s += buf;
  }
  return s;
}

std::string host_port_text(std::string_view host, uint16_t port) {
  bool v6 = host.find(':') != std::string_view::npos;
  return (v6 ? "[" : "") + std::string(host) + (v6 ? "]:" : ":") + std::to_string(port);
}

std::string denial_message(std::string_view host, uint16_t port) {
  std::string hp = host_port_text(host, port);
  return "cage: " + hp + " is not in the --net allowlist (add --net " + hp + ")";
}

const policy::NetRule* Allowlist::match(std::string_view host, uint16_t port) const {
  for (const auto& r : rules_)
    if (policy::host_pattern_matches(r.pattern, host, port)) return &r;
  return nullptr;
}

bool Allowlist::address_allowed(const policy::NetRule& rule, const Address& addr, uint16_t port) const {
  if (!is_special_address(addr)) return true;
  // Listing the exact name (or the address itself) is the explicit consent; a wildcard is not.
  if (rule.pattern.kind == policy::HostPattern::Kind::exact_name) return true;
  return std::any_of(rules_.begin(), rules_.end(),
                     [&](const policy::NetRule& r) { return rule_covers_address(r.pattern, addr, port); });
}

}  // namespace cage::proxy
