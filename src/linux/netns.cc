// Transparent egress inside the sandbox's network namespace (child side, cage's init; issue #9).
// A `local` route on lo for the synthetic range and for each IPv4 --net rule makes every address
// there local, so a connect to it reaches a listener bound to 0.0.0.0 on that port, and getsockname
// on the accepted socket still tells which address was dialled. init binds the listeners (ports
// below 1024 need CAP_NET_BIND_SERVICE, which only init holds) and hands them, with the DNS socket,
// to the supervisor; nothing here parses traffic. Proven by tests/integration/net_transparent_*.sh.
#include "linux/netns.h"

#include "common/send_fd.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cage::lx::net {

namespace {

constexpr int kLoopbackIfindex = 1;  // lo is always ifindex 1 in a new network namespace

void add_attr(nlmsghdr* nh, unsigned short type, const void* data, unsigned short len) {
  auto* rta = reinterpret_cast<rtattr*>(reinterpret_cast<char*>(nh) + NLMSG_ALIGN(nh->nlmsg_len));
  rta->rta_type = type;
  rta->rta_len = static_cast<unsigned short>(RTA_LENGTH(len));
  std::memcpy(RTA_DATA(rta), data, len);
  nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

int request(int nl, nlmsghdr* req);

// `ip route add local ADDR/PREFIX dev lo table local`, and wait for the kernel's answer.
int add_local_route(int nl, uint32_t addr, int prefix, uint32_t seq) {
  struct {
    nlmsghdr nh;
    rtmsg rt;
    char attrs[64];
  } req{};
  req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(rtmsg));
  req.nh.nlmsg_type = RTM_NEWROUTE;
  req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK;
  req.nh.nlmsg_seq = seq;
  req.rt.rtm_family = AF_INET;
  req.rt.rtm_dst_len = static_cast<unsigned char>(prefix);
  req.rt.rtm_table = RT_TABLE_LOCAL;
  req.rt.rtm_protocol = RTPROT_BOOT;
  req.rt.rtm_scope = RT_SCOPE_HOST;
  req.rt.rtm_type = RTN_LOCAL;
  uint32_t dst = htonl(addr);
  int oif = kLoopbackIfindex;
  add_attr(&req.nh, RTA_DST, &dst, sizeof dst);
  add_attr(&req.nh, RTA_OIF, &oif, sizeof oif);
  return request(nl, &req.nh);
}

// `ip addr add ADDR/32 dev lo`: one address besides 127.0.0.1 and ::1, so that glibc's AI_ADDRCONFIG
// (getent ahostsv4, Node's lookups) returns IPv4 answers and "am I online?" checks (yarn 1 looks for
// any address but 127.0.0.1 and ::1) do not take the sandbox for offline. It routes nowhere.
int add_address(int nl, uint32_t addr, uint32_t seq) {
  struct {
    nlmsghdr nh;
    ifaddrmsg ifa;
    char attrs[64];
  } req{};
  req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(ifaddrmsg));
  req.nh.nlmsg_type = RTM_NEWADDR;
  req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK;
  req.nh.nlmsg_seq = seq;
  req.ifa.ifa_family = AF_INET;
  req.ifa.ifa_prefixlen = 32;
  req.ifa.ifa_scope = RT_SCOPE_UNIVERSE;
  req.ifa.ifa_index = kLoopbackIfindex;
  uint32_t a = htonl(addr);
  add_attr(&req.nh, IFA_LOCAL, &a, sizeof a);
  add_attr(&req.nh, IFA_ADDRESS, &a, sizeof a);
  return request(nl, &req.nh);
}

// Sends one request and waits for the kernel's answer to it.
int request(int nl, nlmsghdr* req) {
  const uint32_t seq = req->nlmsg_seq;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (sendto(nl, req, req->nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) return errno;
  alignas(nlmsghdr) char buf[512];
  while (true) {
    ssize_t n = recv(nl, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    for (auto* h = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(h, static_cast<unsigned>(n)); h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_seq != seq || h->nlmsg_type != NLMSG_ERROR) continue;
      int err = -reinterpret_cast<nlmsgerr*>(NLMSG_DATA(h))->error;
      return err == EEXIST ? 0 : err;  // overlapping rules: the route is there already
    }
  }
}

int bind_and_pass(int channel, int type, uint32_t addr, uint16_t port, char kind) {
  int s = socket(AF_INET, type | SOCK_CLOEXEC, 0);
  if (s < 0) return errno;
  int one = 1;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(addr);
  int e = 0;
  if (bind(s, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || (type == SOCK_STREAM && listen(s, 4096) != 0))
    e = errno;
  if (e == 0) e = send_fd(channel, s, kind);
  close(s);  // the supervisor holds it now
  return e;
}

}  // namespace

int setup_transparent(const NetPlan& plan, int channel) {
  const auto& t = plan.transparent;
  if (plan.mode != NetPlan::Mode::proxy || (!t.enabled && plan.lo_address == 0)) return 0;
  int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (nl < 0) return errno;
  uint32_t seq = 1;
  if (plan.lo_address != 0)
    if (int e = add_address(nl, plan.lo_address, seq++)) {
      close(nl);
      return e;
    }
  if (!t.enabled) {
    close(nl);
    return 0;
  }
  for (const auto& r : t.routes)
    if (int e = add_local_route(nl, r.addr, r.prefix, seq++)) {
      close(nl);
      return e;
    }
  close(nl);
  if (int e = bind_and_pass(channel, SOCK_DGRAM, t.resolver, 53, 'D')) return e;
  for (uint16_t port : t.ports)
    if (int e = bind_and_pass(channel, SOCK_STREAM, INADDR_ANY, port, 'L')) return e;
  return 0;
}

int setup_offline_resolver(const NetPlan& plan, int channel) {
  if (plan.mode != NetPlan::Mode::none || plan.offline_resolver == 0) return 0;
  return bind_and_pass(channel, SOCK_DGRAM, plan.offline_resolver, 53, 'D');
}

}  // namespace cage::lx::net
