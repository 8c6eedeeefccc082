// SOCKS5 (RFC 1928) as the proxy speaks it: no authentication, CONNECT only, with domain names
// (socks5h: the proxy resolves, so the allowlist sees the name) or IPv4/IPv6 addresses. Pure;
// fuzzed by tests/fuzz/socks5_fuzz.cc, unit-tested by tests/unit/proxy_socks5_test.cc.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "proxy/http.h"

namespace cage::proxy {

// Reply codes (RFC 1928 section 6).
enum class SocksReply : uint8_t {
  succeeded = 0x00,
  general_failure = 0x01,
  not_allowed = 0x02,  // "connection not allowed by ruleset": the --net allowlist said no
  network_unreachable = 0x03,
  host_unreachable = 0x04,
  connection_refused = 0x05,
  ttl_expired = 0x06,  // used for a connect timeout
  command_not_supported = 0x07,
  address_type_not_supported = 0x08,
};

struct SocksGreeting {
  ParseStatus status = ParseStatus::need_more;
  size_t consumed = 0;
  bool no_auth_offered = false;
  bool userpass_offered = false;  // method 0x02, username/password (RFC 1929)
};
SocksGreeting parse_socks_greeting(std::string_view buf);

struct SocksRequest {
  ParseStatus status = ParseStatus::need_more;
  size_t consumed = 0;
  SocksReply error = SocksReply::general_failure;  // when status == error
  std::string host;  // a name (lower-case) or an IP literal in text form
  uint16_t port = 0;
};
SocksRequest parse_socks_request(std::string_view buf);

// RFC 1929 username/password sub-negotiation: 01 ULEN USER PLEN PASS.
struct SocksUserPass {
  ParseStatus status = ParseStatus::need_more;
  size_t consumed = 0;
  std::string user, password;
};
SocksUserPass parse_socks_userpass(std::string_view buf);

std::string socks_method_reply(bool accept);  // 05 00, or 05 FF (no acceptable method)
std::string socks_userpass_method_reply();    // 05 02
std::string socks_userpass_reply(bool ok);    // 01 00, or 01 01
std::string socks_reply(SocksReply rep);       // bound address 0.0.0.0:0

}  // namespace cage::proxy
