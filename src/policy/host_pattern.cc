// --net allowlist patterns: parsing and matching, pure string work (no OS headers, no resolver).
// The match is on the name the client asked for; what an allowed name may resolve to is decided by
// proxy/allowlist.cc. Proven by tests/unit/host_pattern_test.cc and tests/fuzz/host_pattern_fuzz.cc.
#include "policy/host_pattern.h"

#include <algorithm>
#include <cstring>

namespace cage::policy {
namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  c = lower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Decimal without sign or leading zeros ("08" is refused: some parsers read it as octal).
bool parse_decimal(std::string_view s, uint32_t max, uint32_t& out) {
  if (s.empty() || s.size() > 10 || (s.size() > 1 && s[0] == '0')) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (!is_digit(c)) return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > max) return false;
  out = static_cast<uint32_t>(v);
  return true;
}

bool parse_ipv4(std::string_view s, uint8_t out[4]) {
  for (int i = 0; i < 4; ++i) {
    size_t dot = i < 3 ? s.find('.') : s.size();
    if (dot == std::string_view::npos) return false;
    uint32_t v = 0;
    if (!parse_decimal(s.substr(0, dot), 255, v)) return false;
    out[i] = static_cast<uint8_t>(v);
    s.remove_prefix(i < 3 ? dot + 1 : dot);
  }
  return s.empty();
}

// RFC 4291 text forms: up to eight groups, one "::", an optional dotted IPv4 tail. No zone ids.
bool parse_ipv6(std::string_view s, std::array<uint8_t, 16>& out) {
  uint16_t groups[8] = {};
  int n = 0, gap = -1;
  if (s.size() < 2) return false;
  if (s.substr(0, 2) == "::") {
    gap = 0;
    s.remove_prefix(2);
  } else if (s[0] == ':') {
    return false;
  }
  while (!s.empty()) {
    if (n >= 8) return false;
    size_t colon = s.find(':');
    std::string_view part = s.substr(0, colon);
    if (part.find('.') != std::string_view::npos) {  // IPv4 tail: last, and takes two groups
      uint8_t v4[4];
      if (colon != std::string_view::npos || n > 6 || !parse_ipv4(part, v4)) return false;
      groups[n++] = static_cast<uint16_t>(v4[0] << 8 | v4[1]);
      groups[n++] = static_cast<uint16_t>(v4[2] << 8 | v4[3]);
      s = {};
      break;
    }
    if (part.empty() || part.size() > 4) return false;
    uint16_t g = 0;
    for (char c : part) {
      int h = hex_value(c);
      if (h < 0) return false;
      g = static_cast<uint16_t>(g << 4 | h);
    }
    groups[n++] = g;
    if (colon == std::string_view::npos) {
      s = {};
    } else if (s.substr(colon, 2) == "::") {
      if (gap >= 0) return false;
      gap = n;
      s.remove_prefix(colon + 2);
    } else {
      s.remove_prefix(colon + 1);
      if (s.empty()) return false;  // trailing single ':'
    }
  }
  if (gap < 0 && n != 8) return false;
  if (gap >= 0 && n > 7) return false;
  uint16_t full[8] = {};
  if (gap < 0) {
    std::copy(groups, groups + 8, full);
  } else {
    std::copy(groups, groups + gap, full);
    std::copy(groups + gap, groups + n, full + 8 - (n - gap));
  }
  for (int i = 0; i < 8; ++i) {
    out[2 * i] = static_cast<uint8_t>(full[i] >> 8);
    out[2 * i + 1] = static_cast<uint8_t>(full[i]);
  }
  return true;
}

// "80", "80,443", "8000-8100", "80,8000-8100".
std::string parse_ports(std::string_view s, std::vector<PortRange>& out) {
  if (s.empty()) return "missing port after ':' (write host:port, e.g. example.com:443)";
  while (true) {
    size_t comma = s.find(',');
    std::string_view item = s.substr(0, comma);
    size_t dash = item.find('-');
    uint32_t lo = 0, hi = 0;
    std::string_view a = item.substr(0, dash);
    std::string_view b = dash == std::string_view::npos ? a : item.substr(dash + 1);
    if (item.empty()) return "empty entry in port list";
    if (!parse_decimal(a, 65535, lo) || !parse_decimal(b, 65535, hi) || lo == 0 || hi == 0)
      return "invalid port '" + std::string(item) + "' (ports are 1-65535)";
    if (lo > hi) return "port range '" + std::string(item) + "' runs backwards";
    out.push_back({static_cast<uint16_t>(lo), static_cast<uint16_t>(hi)});
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return {};
}

// A DNS name as a client would send it: labels of [a-z0-9_-], 1-63 bytes, 253 in all, and not
// all-numeric in the last label (that is an IP address, or a form like "1.2.3" some resolvers
// turn into one).
std::string check_name(std::string_view name) {
  if (name.empty()) return "missing host name";
  if (name.size() > 253) return "host name longer than 253 characters";
  size_t start = 0;
  std::string_view last;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    if (dot == std::string_view::npos) dot = name.size();
    std::string_view label = name.substr(start, dot - start);
    if (label.empty()) return "empty label in host name '" + std::string(name) + "'";
    if (label.size() > 63) return "label longer than 63 characters in host name";
    for (char c : label) {
      bool ok = (c >= 'a' && c <= 'z') || is_digit(c) || c == '-' || c == '_';
      if (c == '*') return "'*' is allowed only as a whole leading label ('*.example.com' or '**.example.com')";
      if (!ok) return "invalid character '" + std::string(1, c) + "' in host name '" + std::string(name) + "'";
    }
    if (label.front() == '-' || label.back() == '-')
      return "label '" + std::string(label) + "' starts or ends with '-'";
    last = label;
    start = dot + 1;
  }
  if (std::all_of(last.begin(), last.end(), is_digit))
    return "'" + std::string(name) + "' is neither a host name nor a valid IP address";
  return {};
}

std::string to_lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = lower(c);
  return r;
}

bool port_in(const std::vector<PortRange>& ports, uint16_t port) {
  return std::any_of(ports.begin(), ports.end(), [&](const PortRange& r) { return port >= r.lo && port <= r.hi; });
}

bool prefix_equal(const std::array<uint8_t, 16>& a, const std::array<uint8_t, 16>& b, int bits) {
  int bytes = bits / 8, rest = bits % 8;
  if (std::memcmp(a.data(), b.data(), static_cast<size_t>(bytes)) != 0) return false;
  if (rest == 0) return true;
  uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (a[bytes] & mask) == (b[bytes] & mask);
}

std::string parse_address_part(std::string_view host, bool bracketed, HostPattern& out) {
  size_t slash = host.find('/');
  std::string_view addr = host.substr(0, slash);
  if (!parse_ip_literal(addr, out.addr, out.v4) || (bracketed && out.v4))
    return "invalid IP address '" + std::string(addr) + "'";
  if (!bracketed && !out.v4) return "IPv6 addresses need brackets: [" + std::string(host) + "]:PORT";
  out.kind = HostPattern::Kind::ip;
  out.prefix = 128;
  out.name = std::string(addr);
  if (slash == std::string_view::npos) return {};
  uint32_t len = 0;
  uint32_t max = out.v4 ? 32 : 128;
  if (!parse_decimal(host.substr(slash + 1), max, len))
    return "invalid prefix length '/" + std::string(host.substr(slash + 1)) + "' (0-" + std::to_string(max) + ")";
  out.kind = HostPattern::Kind::cidr;
  out.prefix = static_cast<int>(out.v4 ? len + 96 : len);
  // Host bits set below the prefix ("10.1.2.3/8") are almost always a typo for a single host.
  std::array<uint8_t, 16> masked{};
  for (int i = 0; i < 16; ++i) {
    int keep = std::clamp(out.prefix - 8 * i, 0, 8);
    masked[i] = static_cast<uint8_t>(out.addr[i] & (keep == 0 ? 0 : 0xff << (8 - keep)));
  }
  if (masked != out.addr) return "CIDR '" + std::string(host) + "' has host bits set beyond the prefix";
  return {};
}

// "https://host[:port][/path]" (what `npm config get registry` prints) -> "host:port", the port
// from the URL or its scheme's (https 443, http 80). The path does not narrow the rule: inside TLS
// the proxy never sees it, so it is dropped, not pretended to. Any other scheme, or a URL with
// credentials, is refused with the HOST:PORT to write instead.
std::string url_to_host_port(std::string_view url, size_t sep, std::string& out) {
  std::string scheme = to_lower(url.substr(0, sep));
  std::string_view rest = url.substr(sep + 3);
  std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  size_t at = authority.rfind('@');
  bool credentials = at != std::string_view::npos;
  if (credentials) authority.remove_prefix(at + 1);  // the hint never repeats a password
  std::string_view host = authority, port;
  size_t colon = authority.rfind(':');
  if (colon != std::string_view::npos && authority.find(']', colon) == std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  uint16_t scheme_port = scheme == "https" ? 443 : scheme == "http" ? 80 : 0;
  std::string hint = std::string(host) + ":" +
                     (!port.empty() ? std::string(port) : scheme_port ? std::to_string(scheme_port) : "PORT");
  std::string refusal = "a URL, where --net takes HOST:PORT: write " + hint;
  if (host.empty() || scheme_port == 0 || credentials || !std::all_of(port.begin(), port.end(), is_digit))
    return refusal;
  out = hint;
  return {};
}

}  // namespace

bool parse_ip_literal(std::string_view s, std::array<uint8_t, 16>& out, bool& v4) {
  uint8_t b[4];
  if (s.find(':') == std::string_view::npos) {
    if (!parse_ipv4(s, b)) return false;
    out = {};
    out[10] = out[11] = 0xff;
    std::memcpy(out.data() + 12, b, 4);
    v4 = true;
    return true;
  }
  if (!parse_ipv6(s, out)) return false;
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  v4 = std::memcmp(out.data(), kMapped, 12) == 0;
  return true;
}

std::string parse_host_pattern(std::string_view text, HostPattern& out) {
  out = HostPattern{};
  std::string from_url;
  if (size_t sep = text.find("://"); sep != std::string_view::npos) {
    if (std::string err = url_to_host_port(text, sep, from_url); !err.empty()) return err;
    text = from_url;  // the rule is shown (--dry-run, the audit log) as the host:port it allows
  }
  out.text = std::string(text);
  if (text.empty()) return "empty pattern (write host:port, e.g. example.com:443)";
  std::string_view host, ports;
  bool bracketed = false;
  if (text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return "missing ']' after IPv6 address";
    host = text.substr(1, close - 1);
    if (close + 1 >= text.size() || text[close + 1] != ':')
      return "missing port after ']' (write [ADDRESS]:PORT)";
    ports = text.substr(close + 2);
    bracketed = true;
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return "missing port (write host:port, e.g. example.com:443)";
    host = text.substr(0, colon);
    ports = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos)
      return "IPv6 addresses need brackets: [" + std::string(host) + "]:PORT";
  }
  if (std::string err = parse_ports(ports, out.ports); !err.empty()) return err;
  if (host.empty()) return "missing host before ':'";
  if (bracketed || host.find('/') != std::string_view::npos ||
      (is_digit(host.back()) && host.find_first_not_of("0123456789.") == std::string_view::npos))
    return parse_address_part(host, bracketed, out);

  std::string name = to_lower(host);
  if (name.size() > 1 && name.back() == '.') name.pop_back();  // "example.com." is the same name
  if (name.rfind("**.", 0) == 0) {
    out.kind = HostPattern::Kind::any_depth;
    name.erase(0, 3);
  } else if (name.rfind("*.", 0) == 0) {
    out.kind = HostPattern::Kind::one_label;
    name.erase(0, 2);
  } else if (name == "*" || name == "**") {
    return "'" + name + "' would allow every host; list the hosts (or '**.example.com') instead";
  }
  if (std::string err = check_name(name); !err.empty()) return err;
  if (out.kind != HostPattern::Kind::exact_name && name.find('.') == std::string::npos)
    return "wildcard '" + std::string(host) + "' covers a whole top-level domain; name at least two labels";
  out.name = std::move(name);
  return {};
}

bool host_pattern_matches(const HostPattern& p, std::string_view host, uint16_t port) {
  if (!port_in(p.ports, port)) return false;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  std::array<uint8_t, 16> addr{};
  bool v4 = false;
  bool is_ip = parse_ip_literal(host, addr, v4);
  switch (p.kind) {
    case HostPattern::Kind::ip:
      return is_ip && addr == p.addr;
    case HostPattern::Kind::cidr:
      return is_ip && prefix_equal(addr, p.addr, p.prefix);
    case HostPattern::Kind::exact_name:
    case HostPattern::Kind::one_label:
    case HostPattern::Kind::any_depth:
      break;
  }
  if (is_ip || host.empty() || host.size() > 254) return false;
  std::string name = to_lower(host);
  if (name.back() == '.') name.pop_back();
  if (!check_name(name).empty()) return false;
  if (p.kind == HostPattern::Kind::exact_name) return name == p.name;
  // Wildcards: "<label(s)>.<suffix>"; the suffix itself (the apex) is not covered.
  if (name.size() <= p.name.size() + 1) return false;
  size_t cut = name.size() - p.name.size();
  if (name.compare(cut, std::string::npos, p.name) != 0 || name[cut - 1] != '.') return false;
  std::string_view head(name.data(), cut - 1);
  if (head.empty()) return false;
  return p.kind == HostPattern::Kind::any_depth || head.find('.') == std::string_view::npos;
}

}  // namespace cage::policy
