// tcp_counts.h on Linux: one sock_diag request per look, for exactly one socket (its 4-tuple and
// cookie: a later connection reusing the tuple has another cookie and answers ESTALE). Unprivileged.
#include "proxy/tcp_counts.h"

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "common/unique_fd.h"

namespace cage::proxy {
namespace {

bool address(const sockaddr_storage& ss, uint8_t* addr, uint16_t& port) {
  if (ss.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(ss);
    std::memcpy(addr, &in.sin_addr, 4);
    port = ntohs(in.sin_port);
    return true;
  }
  if (ss.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(ss);
    std::memcpy(addr, &in6.sin6_addr, 16);
    port = ntohs(in6.sin6_port);
    return true;
  }
  return false;
}

}  // namespace

bool tcp_id(int fd, TcpId& id) {
  sockaddr_storage l{}, r{};
  socklen_t ll = sizeof l, rl = sizeof r;
  socklen_t cl = sizeof id.cookie;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&l), &ll) != 0 ||
      ::getpeername(fd, reinterpret_cast<sockaddr*>(&r), &rl) != 0 ||
      ::getsockopt(fd, SOL_SOCKET, SO_COOKIE, &id.cookie, &cl) != 0)
    return false;
  id.family = l.ss_family;
  return address(l, id.local, id.local_port) && address(r, id.remote, id.remote_port);
}

int tcp_counts(const TcpId& id, TcpCounts& out) {
  UniqueFd nl(::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
  if (!nl.valid()) return -1;
  struct {
    nlmsghdr h;
    inet_diag_req_v2 r;
  } req{};
  req.h.nlmsg_len = sizeof req;
  req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  req.h.nlmsg_flags = NLM_F_REQUEST;
  req.r.sdiag_family = static_cast<uint8_t>(id.family);
  req.r.sdiag_protocol = IPPROTO_TCP;
  req.r.idiag_states = ~0u;
  req.r.idiag_ext = 1 << (INET_DIAG_INFO - 1);
  req.r.id.idiag_sport = htons(id.local_port);
  req.r.id.idiag_dport = htons(id.remote_port);
  std::memcpy(req.r.id.idiag_src, id.local, 16);
  std::memcpy(req.r.id.idiag_dst, id.remote, 16);
  req.r.id.idiag_cookie[0] = static_cast<uint32_t>(id.cookie);
  req.r.id.idiag_cookie[1] = static_cast<uint32_t>(id.cookie >> 32);
  if (::send(nl.get(), &req, sizeof req, 0) != static_cast<ssize_t>(sizeof req)) return -1;
  alignas(nlmsghdr) char buf[8192];
  ssize_t n = ::recv(nl.get(), buf, sizeof buf, 0);
  if (n < static_cast<ssize_t>(sizeof(nlmsghdr))) return -1;
  auto* h = reinterpret_cast<nlmsghdr*>(buf);
  if (!NLMSG_OK(h, static_cast<unsigned>(n))) return -1;
  if (h->nlmsg_type == NLMSG_ERROR) {
    int e = -reinterpret_cast<nlmsgerr*>(NLMSG_DATA(h))->error;
    return e == ENOENT || e == ESTALE ? 0 : -1;
  }
  auto* msg = reinterpret_cast<inet_diag_msg*>(NLMSG_DATA(h));
  int len = static_cast<int>(h->nlmsg_len - NLMSG_LENGTH(sizeof *msg));
  for (auto* a = reinterpret_cast<rtattr*>(msg + 1); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
    if (a->rta_type != INET_DIAG_INFO) continue;
    tcp_info info{};
    std::memcpy(&info, RTA_DATA(a), std::min<size_t>(RTA_PAYLOAD(a), sizeof info));
    out.sent = info.tcpi_bytes_acked;
    out.received = info.tcpi_bytes_received;
    return 1;
  }
  return 0;  // TIME_WAIT: no tcp_info, the connection is over
}

}  // namespace cage::proxy
