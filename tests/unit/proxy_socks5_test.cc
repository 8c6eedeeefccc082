#include "proxy/socks5.h"

#include <gtest/gtest.h>

using namespace cage::proxy;

namespace {

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

TEST(ProxySocks5, Greeting) {
  EXPECT_EQ(parse_socks_greeting(bytes({5})).status, ParseStatus::need_more);
  auto g = parse_socks_greeting(bytes({5, 2, 2, 0}));
  EXPECT_EQ(g.status, ParseStatus::ok);
  EXPECT_TRUE(g.no_auth_offered);
  EXPECT_EQ(g.consumed, 4u);
  EXPECT_FALSE(parse_socks_greeting(bytes({5, 1, 2})).no_auth_offered);
  EXPECT_EQ(parse_socks_greeting(bytes({4, 1, 0})).status, ParseStatus::error);
}

TEST(ProxySocks5, DomainRequest) {
  std::string r = bytes({5, 1, 0, 3, 11}) + "Example.COM" + bytes({0x01, 0xbb});
  for (size_t i = 0; i < r.size(); ++i) EXPECT_EQ(parse_socks_request(r.substr(0, i)).status, ParseStatus::need_more);
  auto q = parse_socks_request(r + "extra");
  ASSERT_EQ(q.status, ParseStatus::ok);
  EXPECT_EQ(q.host, "example.com");
  EXPECT_EQ(q.port, 443);
  EXPECT_EQ(q.consumed, r.size());
}

TEST(ProxySocks5, AddressRequests) {
  auto q4 = parse_socks_request(bytes({5, 1, 0, 1, 10, 77, 0, 2, 0, 80}));
  ASSERT_EQ(q4.status, ParseStatus::ok);
  EXPECT_EQ(q4.host, "10.77.0.2");
  auto q6 = parse_socks_request(bytes({5, 1, 0, 4, 0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0xbb}));
  ASSERT_EQ(q6.status, ParseStatus::ok);
  EXPECT_EQ(q6.host, "2001:db8:0:0:0:0:0:1");
}

TEST(ProxySocks5, OnlyConnect) {
  auto bind = parse_socks_request(bytes({5, 2, 0, 1, 1, 2, 3, 4, 0, 80}));
  EXPECT_EQ(bind.status, ParseStatus::error);
  EXPECT_EQ(bind.error, SocksReply::command_not_supported);
  EXPECT_EQ(parse_socks_request(bytes({5, 1, 0, 9, 0, 0})).error, SocksReply::address_type_not_supported);
  EXPECT_EQ(socks_reply(SocksReply::not_allowed)[1], 2);
}

}  // namespace

namespace {
using namespace cage::proxy;

TEST(Socks5Auth, UserPassSubnegotiation) {
  std::string msg("\x01\x04" "cage" "\x06" "s3cr3t", 13);
  auto u = parse_socks_userpass(msg);
  ASSERT_EQ(u.status, ParseStatus::ok);
  EXPECT_EQ(u.user, "cage");
  EXPECT_EQ(u.password, "s3cr3t");
  EXPECT_EQ(u.consumed, msg.size());
  EXPECT_EQ(parse_socks_userpass(msg.substr(0, 8)).status, ParseStatus::need_more);
  EXPECT_EQ(parse_socks_userpass(std::string("\x05\x00", 2)).status, ParseStatus::error);
  auto g = parse_socks_greeting(std::string("\x05\x01\x02", 3));
  EXPECT_TRUE(g.userpass_offered);
  EXPECT_FALSE(g.no_auth_offered);
}
}  // namespace
