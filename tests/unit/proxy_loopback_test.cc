// LoopbackProxy (the macOS proxy entry point) on Linux: it listens on 127.0.0.1 at an ephemeral
// port, serves only requests with the run's secret, tunnels an allowed CONNECT both ways and refuses
// what the allowlist lacks.
#include "proxy/loopback.h"

#include "socket_helpers.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>

#include "proxy/env.h"
#include "proxy/socket_compat.h"

using namespace cage;
using namespace cage::proxy;
using cage::testing::connect_to;
using cage::testing::listen_any;
using cage::testing::read_all;

namespace {

Allowlist allow(const std::string& text) {
  policy::NetRule r;
  EXPECT_EQ(policy::parse_host_pattern(text, r.pattern), "");
  r.origin = "--net " + text;
  return Allowlist({r});
}

}  // namespace

TEST(ProxyLoopback, TunnelsAnAllowedConnectAndRefusesTheRest) {
  uint16_t up_port;
  UniqueFd up(listen_any(up_port));
  std::mutex mu;
  std::vector<NetEvent> events;
  auto p = LoopbackProxy::start(allow("127.0.0.1:" + std::to_string(up_port)), [&](const NetEvent& e) {
    std::lock_guard l(mu);
    events.push_back(e);
  });
  ASSERT_TRUE(p) << p.error().reason;
  ASSERT_NE((*p)->port(), 0);
  ASSERT_EQ((*p)->secret().size(), 32u);
  // The Basic credentials a client builds from the *_PROXY URL (user "cage", the secret).
  std::string auth;
  for (const auto& [k, v] : proxy_environment_with_secret(std::to_string((*p)->port()), (*p)->secret()))
    if (k == "HTTPS_PROXY") auth = v;
  ASSERT_EQ(auth, "http://cage:" + (*p)->secret() + "@127.0.0.1:" + std::to_string((*p)->port()));
  static const char* k64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string plain = "cage:" + (*p)->secret(), b64;  // 37 bytes: 12 full groups and one left over
  for (size_t i = 0; i + 2 < plain.size(); i += 3) {
    unsigned v = static_cast<unsigned char>(plain[i]) << 16 | static_cast<unsigned char>(plain[i + 1]) << 8 |
                 static_cast<unsigned char>(plain[i + 2]);
    for (int s = 18; s >= 0; s -= 6) b64 += k64[(v >> s) & 63];
  }
  unsigned last = static_cast<unsigned char>(plain.back()) << 16;
  b64 += std::string{k64[(last >> 18) & 63], k64[(last >> 12) & 63], '=', '='};
  const std::string cred = "Proxy-Authorization: Basic " + b64 + "\r\n";

  UniqueFd anon(connect_to((*p)->port()));  // a local process without the secret
  std::string bare = "CONNECT 127.0.0.1:" + std::to_string(up_port) + " HTTP/1.1\r\n\r\n";
  ASSERT_EQ(write(anon.get(), bare.data(), bare.size()), static_cast<ssize_t>(bare.size()));
  std::string r407 = read_all(anon.get());
  EXPECT_EQ(r407.rfind("HTTP/1.1 407", 0), 0u) << r407;

  UniqueFd c(connect_to((*p)->port()));
  ASSERT_TRUE(c.valid());
  std::string req = "CONNECT 127.0.0.1:" + std::to_string(up_port) + " HTTP/1.1\r\n" + cred + "\r\nhello";
  ASSERT_EQ(write(c.get(), req.data(), req.size()), static_cast<ssize_t>(req.size()));
  UniqueFd u(accept(up.get(), nullptr, nullptr));
  char buf[5];
  ASSERT_EQ(recv(u.get(), buf, 5, MSG_WAITALL), 5);
  EXPECT_EQ(std::string(buf, 5), "hello");
  ASSERT_EQ(write(u.get(), "world", 5), 5);
  u.reset();
  std::string r = read_all(c.get());
  EXPECT_EQ(r, "HTTP/1.1 200 Connection established\r\n\r\nworld");

  UniqueFd d(connect_to((*p)->port()));
  std::string deny = "CONNECT evil.com:443 HTTP/1.1\r\nHost: evil.com:443\r\n" + cred + "\r\n";
  ASSERT_EQ(write(d.get(), deny.data(), deny.size()), static_cast<ssize_t>(deny.size()));
  r = read_all(d.get());
  EXPECT_EQ(r.rfind("HTTP/1.1 403", 0), 0u) << r;
  EXPECT_NE(r.find("evil.com:443 is not in the --net allowlist"), std::string::npos);

  uint16_t port = (*p)->port();
  (*p)->stop();
  (*p)->stop();  // idempotent
  p->reset();
  EXPECT_EQ(connect_to(port), -1) << "the listener outlived the proxy";
  std::lock_guard l(mu);
  bool denied = false;
  for (const auto& e : events) denied |= e.decision == Decision::denied && e.host == "evil.com";
  EXPECT_TRUE(denied) << "the denial was not reported to the sink";
}

// The proxy's descriptor limit: macOS's hard limit is RLIM_INFINITY and setrlimit(2) refuses a soft
// limit above kern.maxfilesperproc (10240 = OPEN_MAX when unread), so the OS cap must win there;
// on Linux (no cap) the hard limit and the 65536 ceiling decide as before.
TEST(ProxyFdLimit, MacOsCapBoundsAnInfiniteHardLimit) {
  EXPECT_EQ(fd_limit_target(RLIM_INFINITY, 10240), rlim_t{10240});
  EXPECT_EQ(fd_limit_target(RLIM_INFINITY, 245760), kFdLimitCeiling);
  EXPECT_EQ(fd_limit_target(4096, 10240), rlim_t{4096});
}

TEST(ProxyFdLimit, WithoutAnOsCapTheHardLimitAndCeilingDecide) {
  EXPECT_EQ(fd_limit_target(RLIM_INFINITY, 0), kFdLimitCeiling);
  EXPECT_EQ(fd_limit_target(1u << 20, 0), kFdLimitCeiling);
  EXPECT_EQ(fd_limit_target(4096, 0), rlim_t{4096});
#if defined(__linux__)
  EXPECT_EQ(fd_limit_os_cap(), rlim_t{0});
#endif
}
