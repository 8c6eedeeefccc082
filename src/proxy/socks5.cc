// SOCKS5 greeting and CONNECT request parsing (RFC 1928). No authentication when the proxy is reached
// through the shim (the workload's identity is the sandbox); username/password (RFC 1929) when it
// listens on the host's loopback and the password is the run's secret. Pure; proven by tests/unit/proxy_socks5_test.cc and
// tests/fuzz/socks5_fuzz.cc.
#include "proxy/socks5.h"

#include <array>

#include "proxy/allowlist.h"

namespace cage::proxy {

SocksGreeting parse_socks_greeting(std::string_view buf) {
  SocksGreeting g;
  if (buf.size() < 2) return g;
  if (static_cast<uint8_t>(buf[0]) != 5 || buf[1] == 0) {
    g.status = ParseStatus::error;
    return g;
  }
  size_t n = static_cast<uint8_t>(buf[1]);
  if (buf.size() < 2 + n) return g;
  for (size_t i = 0; i < n; ++i)
    if (buf[2 + i] == 0) g.no_auth_offered = true;
    else if (buf[2 + i] == 2) g.userpass_offered = true;
  g.consumed = 2 + n;
  g.status = ParseStatus::ok;
  return g;
}

SocksRequest parse_socks_request(std::string_view buf) {
  SocksRequest r;
  auto fail = [&](SocksReply e) {
    r.status = ParseStatus::error;
    r.error = e;
    return r;
  };
  if (buf.size() < 4) return r;
  if (static_cast<uint8_t>(buf[0]) != 5 || buf[2] != 0) return fail(SocksReply::general_failure);
  uint8_t cmd = static_cast<uint8_t>(buf[1]), atyp = static_cast<uint8_t>(buf[3]);
  size_t addr_len = 0;
  if (atyp == 1) {
    addr_len = 4;
  } else if (atyp == 4) {
    addr_len = 16;
  } else if (atyp == 3) {
    if (buf.size() < 5) return r;
    addr_len = 1 + static_cast<uint8_t>(buf[4]);
  } else {
    return fail(SocksReply::address_type_not_supported);
  }
  if (buf.size() < 4 + addr_len + 2) return r;
  // BIND and UDP ASSOCIATE would open listeners or datagram paths the allowlist cannot see.
  if (cmd != 1) return fail(SocksReply::command_not_supported);
  const auto* p = reinterpret_cast<const uint8_t*>(buf.data()) + 4;
  if (atyp == 3) {
    std::string_view name(buf.data() + 5, addr_len - 1);
    if (name.empty()) return fail(SocksReply::host_unreachable);
    for (char c : name) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      r.host.push_back(c);
    }
    if (r.host.size() > 1 && r.host.back() == '.') r.host.pop_back();
  } else {
    Address a{};
    if (atyp == 1) {
      a[10] = a[11] = 0xff;
      std::copy(p, p + 4, a.begin() + 12);
    } else {
      std::copy(p, p + 16, a.begin());
    }
    r.host = address_text(a);
  }
  r.port = static_cast<uint16_t>(p[addr_len] << 8 | p[addr_len + 1]);
  if (r.port == 0) return fail(SocksReply::general_failure);
  r.consumed = 4 + addr_len + 2;
  r.status = ParseStatus::ok;
  return r;
}

SocksUserPass parse_socks_userpass(std::string_view buf) {
  SocksUserPass u;
  if (buf.size() < 2) return u;
  if (buf[0] != 1) {
    u.status = ParseStatus::error;
    return u;
  }
  size_t ulen = static_cast<uint8_t>(buf[1]);
  if (buf.size() < 3 + ulen) return u;
  size_t plen = static_cast<uint8_t>(buf[2 + ulen]);
  if (buf.size() < 3 + ulen + plen) return u;
  u.user = std::string(buf.substr(2, ulen));
  u.password = std::string(buf.substr(3 + ulen, plen));
  u.consumed = 3 + ulen + plen;
  u.status = ParseStatus::ok;
  return u;
}

std::string socks_userpass_method_reply() { return std::string("\x05\x02", 2); }
std::string socks_userpass_reply(bool ok) { return std::string("\x01", 1) + (ok ? '\0' : '\x01'); }

std::string socks_method_reply(bool accept) { return std::string("\x05", 1) + (accept ? '\0' : '\xff'); }

std::string socks_reply(SocksReply rep) {
  std::string s("\x05\x00\x00\x01\x00\x00\x00\x00\x00\x00", 10);
  s[1] = static_cast<char>(rep);
  return s;
}

}  // namespace cage::proxy
