// Network allowlist patterns: "host:port", "*.example.com:443" (one label), "**.example.com:443" (any
// depth), IP literals and CIDRs ("10.0.0.0/8:5432", "[2001:db8::1]:443"), ports as a list or range
// ("example.com:80,443", "example.com:8000-8100"). Parsing and matching are pure and fuzzed.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cage::policy {

struct PortRange {
  uint16_t lo = 0, hi = 0;
};

struct HostPattern {
  enum class Kind { exact_name, one_label, any_depth, ip, cidr };
  Kind kind = Kind::exact_name;
  std::string name;              // lower-case; for wildcards the suffix without "*." / "**."
  std::array<uint8_t, 16> addr{};  // ip / cidr: IPv4 stored as v4-mapped IPv6
  int prefix = 128;              // cidr prefix length in IPv6 terms (v4 /8 is stored as 104)
  bool v4 = false;
  std::vector<PortRange> ports;
  std::string text;              // as written, for messages
};

// Returns an error message (empty on success) naming what is wrong with the pattern.
std::string parse_host_pattern(std::string_view text, HostPattern& out);
// A name or IP literal (as the client asked for it) and port against one pattern.
bool host_pattern_matches(const HostPattern& p, std::string_view host, uint16_t port);
// Parses an IPv4 or IPv6 literal (no brackets) into v4-mapped IPv6 form.
bool parse_ip_literal(std::string_view s, std::array<uint8_t, 16>& out, bool& v4);

}  // namespace cage::policy
