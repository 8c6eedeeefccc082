// The --net allowlist check (pure): names are matched as the client wrote them; the addresses a
// name resolves to are then screened so that an allowed public name cannot be pointed (by its DNS)
// at the host's loopback, a private network, any special-purpose range or an address of the host.
// Proven by tests/unit/proxy_allowlist_test.cc and tests/escape/net_rebind_host.sh.
#include "proxy/allowlist.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

namespace cage::proxy {
namespace {

constexpr SpecialRange v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d, int len, std::string_view name) {
  return {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d}, 96 + len, name};
}
constexpr SpecialRange v6(std::array<uint16_t, 8> g, int len, std::string_view name) {
  Address a{};
  for (size_t i = 0; i < 8; ++i) {
    a[2 * i] = static_cast<uint8_t>(g[i] >> 8);
    a[2 * i + 1] = static_cast<uint8_t>(g[i]);
  }
  return {a, len, name};
}

// Every block of the IANA IPv4 and IPv6 Special-Purpose Address Registries (names as there), refused
// whole even where a row says "globally reachable" (an anycast service is not what a wildcard's DNS
// should lead to), plus the multicast registries and the deprecated forms. ::ffff:0:0/96
// (IPv4-mapped) is no row: such an address is held as the IPv4 address it maps and meets the IPv4
// rows. Forms that embed an IPv4 address (NAT64, 6to4, Teredo, IPv4-compatible, SIIT) are refused
// whole rather than decoded: no public service needs a wildcard rule to reach it through one.
constexpr SpecialRange kSpecial[] = {
    v4(0, 0, 0, 0, 8, "This network (RFC 791; reaches the host's loopback)"),
    v4(10, 0, 0, 0, 8, "Private-Use (RFC 1918)"),
    v4(100, 64, 0, 0, 10, "Shared Address Space (RFC 6598, CGNAT)"),
    v4(127, 0, 0, 0, 8, "Loopback (RFC 1122)"),
    v4(169, 254, 0, 0, 16, "Link Local (RFC 3927; cloud metadata)"),
    v4(172, 16, 0, 0, 12, "Private-Use (RFC 1918)"),
    v4(192, 0, 0, 0, 24, "IETF Protocol Assignments (RFC 6890)"),
    v4(192, 0, 2, 0, 24, "Documentation (TEST-NET-1, RFC 5737)"),
    v4(192, 31, 196, 0, 24, "AS112-v4 (RFC 7535)"),
    v4(192, 52, 193, 0, 24, "AMT (RFC 7450)"),
    v4(192, 88, 99, 0, 24, "Deprecated (6to4 Relay Anycast) (RFC 7526)"),
    v4(192, 168, 0, 0, 16, "Private-Use (RFC 1918)"),
    v4(192, 175, 48, 0, 24, "Direct Delegation AS112 Service (RFC 7534)"),
    v4(198, 18, 0, 0, 15, "Benchmarking (RFC 2544)"),
    v4(198, 51, 100, 0, 24, "Documentation (TEST-NET-2, RFC 5737)"),
    v4(203, 0, 113, 0, 24, "Documentation (TEST-NET-3, RFC 5737)"),
    v4(224, 0, 0, 0, 4, "Multicast (IPv4 Multicast Address Space Registry)"),
    v4(240, 0, 0, 0, 4, "Reserved (RFC 1112)"),
    v4(255, 255, 255, 255, 32, "Limited Broadcast (RFC 919)"),
    v6({}, 128, "Unspecified Address (RFC 4291)"),
    v6({0, 0, 0, 0, 0, 0, 0, 1}, 128, "Loopback Address (RFC 4291)"),
    v6({}, 96, "IPv4-Compatible Address (deprecated, RFC 4291)"),
    v6({0, 0, 0, 0, 0xffff, 0}, 96, "IPv4-Translated Address (SIIT, RFC 2765)"),
    v6({0x64, 0xff9b}, 96, "IPv4-IPv6 Translat. (RFC 6052)"),
    v6({0x64, 0xff9b, 1}, 48, "IPv4-IPv6 Translat. (RFC 8215)"),
    v6({0x100}, 64, "Discard-Only Address Block (RFC 6666)"),
    v6({0x100, 0, 0, 1}, 64, "Dummy IPv6 Prefix (RFC 9780)"),
    v6({0x2001}, 23, "IETF Protocol Assignments (RFC 2928; holds TEREDO 2001::/32, RFC 4380)"),
    v6({0x2001, 0xdb8}, 32, "Documentation (RFC 3849)"),
    v6({0x2002}, 16, "6to4 (RFC 3056)"),
    v6({0x2620, 0x4f, 0x8000}, 48, "Direct Delegation AS112 Service (RFC 7534)"),
    v6({0x3fff}, 20, "Documentation (RFC 9637)"),
    v6({0x5f00}, 16, "Segment Routing (SRv6) SIDs (RFC 9602)"),
    v6({0xfc00}, 7, "Unique-Local (RFC 4193)"),
    v6({0xfe80}, 10, "Link-Local Unicast (RFC 4291)"),
    v6({0xfec0}, 10, "Site-Local (deprecated, RFC 3879)"),
    v6({0xff00}, 8, "Multicast (IPv6 Multicast Address Space Registry)"),
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

std::span<const SpecialRange> special_ranges() { return kSpecial; }

const SpecialRange* special_range_of(const Address& a) {
  for (const auto& r : kSpecial)
    if (in_prefix(a, r.net.data(), r.prefix)) return &r;
  return nullptr;
}

bool is_special_address(const Address& a) { return special_range_of(a) != nullptr; }

std::string range_text(const SpecialRange& r) {
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  bool v4 = std::memcmp(r.net.data(), kMapped, 12) == 0 && r.prefix >= 96;
  if (v4) return address_text(r.net) + "/" + std::to_string(r.prefix - 96);
  // RFC 5952 form: the longest run of zero groups (two or more) becomes "::".
  int best = -1, best_len = 1;
  for (int i = 0, run = 0; i < 8; ++i) {
    run = r.net[2 * i] == 0 && r.net[2 * i + 1] == 0 ? run + 1 : 0;
    if (run > best_len) best = i - run + 1, best_len = run;
  }
  std::string s;
  char buf[8];
  for (int i = 0; i < 8; ++i) {
    if (i == best) {
      s += "::";
      i += best_len - 1;
      continue;
    }
    std::snprintf(buf, sizeof buf, "%s%x", s.empty() || s.back() == ':' ? "" : ":", r.net[2 * i] << 8 | r.net[2 * i + 1]);
    s += buf;
  }
  return s + "/" + std::to_string(r.prefix);
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

// One meaning of `localhost` in every mode: the host's loopback. Inside, cage's /etc/hosts makes the
// name 127.0.0.1, so a direct connect (transparent) names the address where a proxy client names
// the name; both are the same destination, and neither is reached without a rule naming it.
const policy::NetRule* Allowlist::match(std::string_view host, uint16_t port) const {
  for (const auto& r : rules_)
    if (policy::host_pattern_matches(r.pattern, host, port)) return &r;
  Address a{};
  bool v4 = false;
  if (policy::parse_ip_literal(host, a, v4)) {
    if (a != kLoopbackV4 && a != kLoopbackV6) return nullptr;
    for (const auto& r : rules_)
      if (r.pattern.kind == policy::HostPattern::Kind::exact_name && policy::host_pattern_matches(r.pattern, "localhost", port))
        return &r;
  } else if (host == "localhost") {
    for (const auto& r : rules_)
      if (rule_covers_address(r.pattern, kLoopbackV4, port) || rule_covers_address(r.pattern, kLoopbackV6, port))
        return &r;
  }
  return nullptr;
}

std::string Allowlist::screen(const policy::NetRule& rule, const Address& addr, uint16_t port,
                              const HostCheck& host) const {
  // Listing the exact name (or the address itself) is the explicit consent; a wildcard is not.
  if (rule.pattern.kind == policy::HostPattern::Kind::exact_name) return {};
  if (std::any_of(rules_.begin(), rules_.end(),
                  [&](const policy::NetRule& r) { return rule_covers_address(r.pattern, addr, port); }))
    return {};
  if (const SpecialRange* r = special_range_of(addr))
    return "a special-purpose address (" + range_text(*r) + ": " + std::string(r->name) + ")";
  if (!host) return {};
  // A public address the host holds (docker0's, a VPN's, the machine's own) reaches services bound
  // to it or to 0.0.0.0 that nobody meant to offer to the sandbox.
  int local = host(addr);
  if (local > 0) return "an address this host answers on (one of its own)";
  if (local < 0)
    return std::string("an address cage could not check against the host's own (") + std::strerror(-local) + ")";
  return {};
}

}  // namespace cage::proxy
