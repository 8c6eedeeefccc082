// Egress hand-off's decisions (pure) and the calls the mediator makes on the workload's open files:
// see handoff.h. Parent side, the connect_notify mediator thread. Proven by
// tests/unit/handoff_test.cc and tests/escape/net_handoff_*.sh.
#include "linux/handoff.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/unique_fd.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

namespace cage::lx::handoff {
namespace {

bool in_prefix(uint32_t addr, uint32_t base, int prefix) {
  uint32_t mask = prefix == 0 ? 0 : ~0u << (32 - prefix);
  return (addr & mask) == (base & mask);
}

// A unix address naming a filesystem path (not abstract, not the unnamed autobind form).
bool unix_path(const sockaddr_storage& sa, size_t len) {
  return sa.ss_family == AF_UNIX && len > offsetof(sockaddr_un, sun_path) &&
         reinterpret_cast<const sockaddr_un&>(sa).sun_path[0] != '\0';
}

Verdict refuse(int err) { return Verdict{Action::refuse, err}; }

// The addresses the sandbox's own lo answers on for its own listeners: 127.0.0.0/8, the plan's extra
// lo address, and 0.0.0.0 (a connect to it reaches the local host). The rest of 0.0.0.0/8 is unicast
// since Linux 5.3 and no interface of the sandbox has it: a connect there is a destination like any.
bool own_address(const NetPlan& net, uint32_t addr) {
  return in_prefix(addr, 0x7F000000, 8) || addr == 0 || (net.lo_address != 0 && addr == net.lo_address);
}

}  // namespace

bool mediates(long nr) { return nr == SYS_connect || nr == SYS_bind || nr == SYS_listen; }

bool carried(const NetPlan& net, uint32_t addr, uint16_t port) {
  const auto& t = net.transparent;
  if (!t.enabled || !std::binary_search(t.ports.begin(), t.ports.end(), port)) return false;
  if (in_prefix(addr, t.synthetic_base, t.synthetic_prefix) || in_prefix(addr, 0x7F000000, 8)) return true;
  if (net.lo_address != 0 && addr == net.lo_address) return true;
  return std::any_of(t.routes.begin(), t.routes.end(),
                     [&](const TransparentPlan::Route& r) { return in_prefix(addr, r.addr, r.prefix); });
}

Verdict classify(const NetPlan& net, long nr, SocketKind kind, int domain, int type, const sockaddr_storage& sa,
                 size_t len) {
  if (kind == SocketKind::not_socket) return refuse(ENOTSOCK);  // the kernel's own answer
  if (kind == SocketKind::foreign) {
    // A host socket (a handed-off one, or one passed on): it keeps its one checked destination.
    const bool inet = sa.ss_family == AF_INET || sa.ss_family == AF_INET6;
    return refuse(nr == SYS_connect && inet ? EISCONN : EACCES);
  }
  if (nr == SYS_listen) return Verdict{Action::perform};
  if (unix_path(sa, len)) return Verdict{Action::perform_unix_path};
  if (nr == SYS_bind) return Verdict{Action::perform};
  if (domain == AF_INET && type == SOCK_STREAM && sa.ss_family == AF_INET && len >= sizeof(sockaddr_in)) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(sa);
    uint32_t addr = ntohl(in.sin_addr.s_addr);
    uint16_t port = ntohs(in.sin_port);
    if (carried(net, addr, port)) return Verdict{Action::hand_off, 0, addr, port};
    // Anywhere else but the sandbox's own loopback nothing listens (a listed address on a port no
    // rule names) or nothing is routed (an unlisted address): the kernel's answer would be a silent
    // ECONNREFUSED or ENETUNREACH. Handed to the same check instead, which no rule can pass (every
    // rule's ports are carried, every IPv4 rule's addresses routed), so it is refused and reported
    // as a denial like any other (ECONNREFUSED; tests/integration/net_handoff_denials.sh).
    if (!own_address(net, addr)) return Verdict{Action::hand_off, 0, addr, port};
  }
  if (domain == AF_INET6 && type == SOCK_STREAM && sa.ss_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
    // No transparent listener is IPv6 and the sandbox has no IPv6 route: the kernel would fail this in
    // silence (ENETUNREACH), as it would an IPv4-mapped address no listener carries. Both are
    // reported as denials and fail as they would have; an IPv4-mapped address that is carried, and
    // the sandbox's own loopback (::1, ::, a mapped own address), run as the workload's own call.
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(sa);
    const uint16_t port = ntohs(in6.sin6_port);
    if (IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr)) {
      uint32_t addr = 0;
      std::memcpy(&addr, in6.sin6_addr.s6_addr + 12, 4);
      addr = ntohl(addr);
      if (carried(net, addr, port) || own_address(net, addr)) return Verdict{Action::perform};
      char text[INET_ADDRSTRLEN] = "";
      ::inet_ntop(AF_INET, in6.sin6_addr.s6_addr + 12, text, sizeof text);
      return Verdict{Action::refuse_reported, ECONNREFUSED, addr, port, text};
    }
    if (IN6_IS_ADDR_LOOPBACK(&in6.sin6_addr) || IN6_IS_ADDR_UNSPECIFIED(&in6.sin6_addr))
      return Verdict{Action::perform};
    char text[INET6_ADDRSTRLEN] = "";
    ::inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text);
    return Verdict{Action::refuse_reported, ENETUNREACH, 0, port, text};
  }
  return Verdict{Action::perform};
}

std::optional<uint64_t> netns_cookie(int sock) {
  uint64_t cookie = 0;
  socklen_t l = sizeof cookie;
  if (::getsockopt(sock, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &l) != 0) return std::nullopt;
  return cookie;
}

SocketKind kind_of(int sock, uint64_t sandbox_cookie) {
  auto c = netns_cookie(sock);
  if (!c) return errno == ENOTSOCK ? SocketKind::not_socket : SocketKind::foreign;
  return *c == sandbox_cookie ? SocketKind::sandbox : SocketKind::foreign;
}

void copy_settings(int old, int fresh) {
  struct Opt {
    int level, name;
  };
  static constexpr Opt kInts[] = {{IPPROTO_TCP, TCP_NODELAY},  {SOL_SOCKET, SO_KEEPALIVE},
                                  {IPPROTO_TCP, TCP_KEEPIDLE}, {IPPROTO_TCP, TCP_KEEPINTVL},
                                  {IPPROTO_TCP, TCP_KEEPCNT},  {IPPROTO_TCP, TCP_USER_TIMEOUT},
                                  {IPPROTO_IP, IP_TOS}};
  for (const auto& o : kInts) {
    int v = 0;
    socklen_t l = sizeof v;
    if (::getsockopt(old, o.level, o.name, &v, &l) == 0) ::setsockopt(fresh, o.level, o.name, &v, l);
  }
  for (int name : {SO_RCVTIMEO, SO_SNDTIMEO}) {
    timeval tv{};
    socklen_t tl = sizeof tv;
    if (::getsockopt(old, SOL_SOCKET, name, &tv, &tl) == 0 && (tv.tv_sec || tv.tv_usec))
      ::setsockopt(fresh, SOL_SOCKET, name, &tv, tl);
  }
  linger lg{};
  socklen_t l = sizeof lg;
  if (::getsockopt(old, SOL_SOCKET, SO_LINGER, &lg, &l) == 0 && lg.l_onoff)
    ::setsockopt(fresh, SOL_SOCKET, SO_LINGER, &lg, l);
  int fl = ::fcntl(fresh, F_GETFL);
  int want = ::fcntl(old, F_GETFL);
  if (fl >= 0 && want >= 0) ::fcntl(fresh, F_SETFL, (fl & ~O_NONBLOCK) | (want & O_NONBLOCK));
}

}  // namespace cage::lx::handoff
