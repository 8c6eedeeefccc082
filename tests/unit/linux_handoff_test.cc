// Egress hand-off's decisions (linux/handoff.h): which destinations are handed off, and what the
// supervisor does with each notified connect, bind and listen, by the kind of socket it names.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include <cstring>

#include "fake_host_view.h"
#include "linux/compile.h"
#include "linux/handoff.h"

namespace cage::testing {
namespace {

using lx::handoff::Action;
using lx::handoff::SocketKind;

Result<lx::Plan> plan_of(std::vector<std::string> words, bool cookie = true) {
  FakeHostView host;
  host.set_socket_netns_cookie(cookie);
  return lx::compile(policy_of(std::move(words)), host, {{"PATH", "/usr/bin:/bin"}});
}

sockaddr_storage inet(const char* ip, uint16_t port) {
  sockaddr_storage ss{};
  auto* in = reinterpret_cast<sockaddr_in*>(&ss);
  in->sin_family = AF_INET;
  in->sin_port = htons(port);
  inet_pton(AF_INET, ip, &in->sin_addr);
  return ss;
}

sockaddr_storage unix_addr(const char* path, bool abstract = false) {
  sockaddr_storage ss{};
  auto* un = reinterpret_cast<sockaddr_un*>(&ss);
  un->sun_family = AF_UNIX;
  std::strcpy(un->sun_path + (abstract ? 1 : 0), path);
  return ss;
}

sockaddr_storage inet6(const char* ip, uint16_t port) {
  sockaddr_storage ss{};
  auto* in = reinterpret_cast<sockaddr_in6*>(&ss);
  in->sin6_family = AF_INET6;
  in->sin6_port = htons(port);
  inet_pton(AF_INET6, ip, &in->sin6_addr);
  return ss;
}

uint32_t v4(const char* ip) {
  in_addr a{};
  inet_pton(AF_INET, ip, &a);
  return ntohl(a.s_addr);
}

const std::vector<std::string> kRules = {"--net", "api.example.com:443", "--net", "10.77.0.0/16:8080",
                                         "--net", "127.0.0.1:9000", "--", "make"};

TEST(LinuxHandoff, OnWhereTheHostTellsNamespacesApartAndOnlyInTransparentMode) {
  auto plan = plan_of(kRules);
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_TRUE(plan->net.transparent.handoff);
  EXPECT_NE(lx::render_text(*plan).find("hand-off:"), std::string::npos);
  auto old = plan_of(kRules, false);  // before Linux 5.14: the relay carries everything
  ASSERT_TRUE(old);
  EXPECT_FALSE(old->net.transparent.handoff);
  std::vector<std::string> proxy_only = {"--net-mode", "proxy"};
  proxy_only.insert(proxy_only.end(), kRules.begin(), kRules.end());
  auto proxied = plan_of(proxy_only);
  ASSERT_TRUE(proxied);
  EXPECT_FALSE(proxied->net.transparent.handoff);
}

TEST(LinuxHandoff, CarriesWhatLandsOnCagesListenersOnly) {
  auto plan = plan_of(kRules);
  ASSERT_TRUE(plan);
  const auto& net = plan->net;
  EXPECT_TRUE(lx::handoff::carried(net, v4("198.18.0.1"), 443));   // a synthetic address
  EXPECT_TRUE(lx::handoff::carried(net, v4("10.77.3.4"), 8080));   // an IPv4 rule's route
  EXPECT_TRUE(lx::handoff::carried(net, v4("127.0.0.1"), 9000));   // loopback: cage's listener
  EXPECT_FALSE(lx::handoff::carried(net, v4("198.18.0.1"), 22));   // no listener on that port
  EXPECT_FALSE(lx::handoff::carried(net, v4("8.8.8.8"), 443));     // not routed in the namespace
}

TEST(LinuxHandoff, HostSocketsAreNeverConnectedBoundOrListened) {
  auto plan = plan_of(kRules);
  ASSERT_TRUE(plan);
  auto to = inet("198.18.0.1", 443);
  sockaddr_storage unspec{};
  auto v = lx::handoff::classify(plan->net, SYS_connect, SocketKind::foreign, AF_INET, SOCK_STREAM, to, 16);
  EXPECT_EQ(v.action, Action::refuse);
  EXPECT_EQ(v.err, EISCONN);
  v = lx::handoff::classify(plan->net, SYS_connect, SocketKind::foreign, AF_INET, SOCK_STREAM, unspec, 2);
  EXPECT_EQ(v.action, Action::refuse);
  EXPECT_EQ(v.err, EACCES);
  for (long nr : {SYS_bind, SYS_listen}) {
    v = lx::handoff::classify(plan->net, nr, SocketKind::foreign, AF_INET, SOCK_STREAM, to, 16);
    EXPECT_EQ(v.action, Action::refuse) << nr;
    EXPECT_EQ(v.err, EACCES) << nr;
  }
  // A unix address on a host socket (the fd swapped after the check) is refused the same way.
  v = lx::handoff::classify(plan->net, SYS_bind, SocketKind::foreign, AF_INET, SOCK_STREAM, unix_addr("/s"), 5);
  EXPECT_EQ(v.action, Action::refuse);
}

TEST(LinuxHandoff, SandboxSocketsAreHandedOffOrServedByTheSupervisor) {
  auto plan = plan_of(kRules);
  ASSERT_TRUE(plan);
  const auto& net = plan->net;
  auto v = lx::handoff::classify(net, SYS_connect, SocketKind::sandbox, AF_INET, SOCK_STREAM,
                                 inet("198.18.0.1", 443), sizeof(sockaddr_in));
  EXPECT_EQ(v.action, Action::hand_off);
  EXPECT_EQ(v.addr, v4("198.18.0.1"));
  EXPECT_EQ(v.port, 443);
  // The sandbox's own loopback, not TCP, not IPv4: the performer connects the workload's own socket.
  for (const char* own : {"127.0.0.1", "127.0.0.53", "0.0.0.0", "192.0.0.8"})
    EXPECT_EQ(lx::handoff::classify(net, SYS_connect, SocketKind::sandbox, AF_INET, SOCK_STREAM,
                                    inet(own, 5000), 16).action, Action::perform) << own;
  EXPECT_EQ(lx::handoff::classify(net, SYS_connect, SocketKind::sandbox, AF_INET, SOCK_DGRAM,
                                  inet("198.18.0.1", 443), 16).action, Action::perform);
  EXPECT_EQ(lx::handoff::classify(net, SYS_connect, SocketKind::sandbox, AF_INET6, SOCK_STREAM,
                                  inet("198.18.0.1", 443), 16).action, Action::perform);
  EXPECT_EQ(lx::handoff::classify(net, SYS_connect, SocketKind::sandbox, AF_INET, SOCK_STREAM,
                                  inet("198.18.0.1", 443), 8).action, Action::perform);  // short: EINVAL
  EXPECT_EQ(lx::handoff::classify(net, SYS_listen, SocketKind::sandbox, AF_INET, SOCK_STREAM, {}, 0).action,
            Action::perform);
  EXPECT_EQ(lx::handoff::classify(net, SYS_connect, SocketKind::not_socket, 0, 0, inet("198.18.0.1", 443), 16)
                .err, ENOTSOCK);  // as the kernel answers
}

// Anywhere else nothing of cage's listens: the proxy's check refuses and reports it, as it does a
// carried destination no rule names, where the kernel would have failed the connect silently.
TEST(LinuxHandoff, UncarriedDestinationsOutsideOwnLoopbackGoToTheCheck) {
  auto plan = plan_of(kRules);
  ASSERT_TRUE(plan);
  const auto& net = plan->net;
  for (auto [ip, port] : {std::pair{"10.77.3.4", 22}, {"198.18.0.1", 22}, {"8.8.8.8", 443}, {"8.8.8.8", 9}, {"0.1.2.3", 443}}) {
    auto v = lx::handoff::classify(net, SYS_connect, SocketKind::sandbox, AF_INET, SOCK_STREAM, inet(ip, port),
                                   sizeof(sockaddr_in));
    EXPECT_EQ(v.action, Action::hand_off) << ip << ":" << port;
    EXPECT_EQ(v.addr, v4(ip));
    EXPECT_EQ(v.port, port);
  }
  // bind is never a destination.
  EXPECT_EQ(lx::handoff::classify(net, SYS_bind, SocketKind::sandbox, AF_INET, SOCK_STREAM,
                                  inet("10.77.3.4", 22), 16).action, Action::perform);
}

// No listener of cage's is IPv6 and the sandbox has no IPv6 route: an IPv6 destination, or an
// IPv4-mapped one nothing carries, is refused and reported without a dial, with the errno the kernel
// would have given (ENETUNREACH; ECONNREFUSED as for the IPv4 twin). The sandbox's own loopback and a
// carried mapped address run as the workload's own call.
TEST(LinuxHandoff, Ipv6AndUncarriedMappedDestinationsAreReportedDenials) {
  auto plan = plan_of(kRules);
  ASSERT_TRUE(plan);
  const auto& net = plan->net;
  auto c6 = [&](const char* ip, uint16_t port, size_t len = sizeof(sockaddr_in6), int nr = SYS_connect,
                int type = SOCK_STREAM) {
    return lx::handoff::classify(net, nr, SocketKind::sandbox, AF_INET6, type, inet6(ip, port), len);
  };
  auto v = c6("2001:db8::7", 443);
  EXPECT_EQ(v.action, Action::refuse_reported);
  EXPECT_EQ(v.err, ENETUNREACH);
  EXPECT_EQ(v.host, "2001:db8::7");
  EXPECT_EQ(v.port, 443);
  auto m = c6("::ffff:8.8.8.8", 443);
  EXPECT_EQ(m.action, Action::refuse_reported);
  EXPECT_EQ(m.err, ECONNREFUSED);
  EXPECT_EQ(m.host, "8.8.8.8");
  EXPECT_EQ(c6("::ffff:10.77.3.4", 22).action, Action::refuse_reported);  // a routed address, a port no rule names
  for (const char* own : {"::1", "::", "::ffff:127.0.0.1", "::ffff:0.0.0.0", "::ffff:198.18.0.1"})
    EXPECT_EQ(c6(own, 443).action, Action::perform) << own;  // the last: carried, the relay's
  EXPECT_EQ(c6("2001:db8::7", 443, 16).action, Action::perform);              // short: the kernel's EINVAL
  EXPECT_EQ(c6("2001:db8::7", 443, sizeof(sockaddr_in6), SYS_bind).action, Action::perform);
  EXPECT_EQ(c6("2001:db8::7", 443, sizeof(sockaddr_in6), SYS_connect, SOCK_DGRAM).action, Action::perform);
}

TEST(LinuxHandoff, UnixPathsAreResolvedInTheWorkloadsViewAndNothingContinues) {
  auto plan = plan_of(kRules);
  ASSERT_TRUE(plan);
  const auto& net = plan->net;
  EXPECT_EQ(lx::handoff::classify(net, SYS_connect, SocketKind::sandbox, AF_UNIX, SOCK_STREAM,
                                  unix_addr("/run/s"), 9).action, Action::perform_unix_path);
  EXPECT_EQ(lx::handoff::classify(net, SYS_connect, SocketKind::sandbox, AF_UNIX, SOCK_STREAM,
                                  unix_addr("s", true), 4).action, Action::perform);  // abstract: per namespace
  EXPECT_EQ(lx::handoff::classify(net, SYS_bind, SocketKind::sandbox, AF_UNIX, SOCK_STREAM,
                                  unix_addr("/tmp/s"), 9).action, Action::perform_unix_path);
  EXPECT_EQ(lx::handoff::classify(net, SYS_bind, SocketKind::sandbox, AF_UNIX, SOCK_STREAM,
                                  unix_addr("s", true), 4).action, Action::perform);
  EXPECT_EQ(lx::handoff::classify(net, SYS_bind, SocketKind::sandbox, AF_INET, SOCK_STREAM,
                                  inet("0.0.0.0", 80), 16).action, Action::perform);
}

}  // namespace
}  // namespace cage::testing
