// Does the host answer on an address? Asked by the proxy after resolution (Allowlist::screen), in
// the supervisor's own network namespace, which is where it connects from. Linux asks the kernel's
// routing decision itself (RTM_GETROUTE: a route of type "local" or "broadcast"), one netlink round
// trip per address, so it is always current and also sees addresses no interface lists (`ip route
// add local 198.51.100.0/24 dev lo`, AnyIP). Elsewhere the interface list (getifaddrs,
// GetAdaptersAddresses) is read on each call. Proven by tests/escape/net_rebind_host.sh.
#include <cerrno>
#include <cstring>

#include "proxy/allowlist.h"

#if defined(__linux__)
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>
#elif defined(_WIN32)
#include <winsock2.h>
#include <ws2tcpip.h>
#include <iphlpapi.h>
#include <vector>
#else
#include <ifaddrs.h>
#include <netinet/in.h>
#endif

namespace cage::proxy {
namespace {

constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
bool is_v4(const Address& a) { return std::memcmp(a.data(), kMapped, 12) == 0; }

}  // namespace

#if defined(__linux__)
int host_answers_on(const Address& a) {
  struct {
    nlmsghdr nh;
    rtmsg rt;
    char attrs[RTA_SPACE(16)];
  } req{};
  const bool v4 = is_v4(a);
  const int len = v4 ? 4 : 16;
  req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(rtmsg)) + RTA_SPACE(len);
  req.nh.nlmsg_type = RTM_GETROUTE;
  req.nh.nlmsg_flags = NLM_F_REQUEST;
  req.rt.rtm_family = v4 ? AF_INET : AF_INET6;
  req.rt.rtm_dst_len = static_cast<unsigned char>(len * 8);
  auto* rta = reinterpret_cast<rtattr*>(req.attrs);
  rta->rta_type = RTA_DST;
  rta->rta_len = static_cast<unsigned short>(RTA_LENGTH(len));
  std::memcpy(RTA_DATA(rta), a.data() + (v4 ? 12 : 0), static_cast<size_t>(len));
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return -errno;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  int result = -EPROTO;
  if (sendto(fd, &req, req.nh.nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
    result = -errno;
  } else {
    alignas(nlmsghdr) char buf[4096];
    ssize_t n;
    do n = recv(fd, buf, sizeof buf, 0);
    while (n < 0 && errno == EINTR);
    auto* nh = reinterpret_cast<nlmsghdr*>(buf);
    if (n < 0) {
      result = -errno;
    } else if (!NLMSG_OK(nh, static_cast<unsigned>(n))) {
      result = -EPROTO;
    } else if (nh->nlmsg_type == NLMSG_ERROR) {
      // No route (ENETUNREACH, EHOSTUNREACH, EACCES for a prohibit route): the host does not answer
      // there, and the connect fails on its own.
      int e = -static_cast<nlmsgerr*>(NLMSG_DATA(nh))->error;
      result = e == ENETUNREACH || e == EHOSTUNREACH || e == EACCES || e == EINVAL ? 0 : -e;
    } else if (nh->nlmsg_type == RTM_NEWROUTE) {
      auto* rt = static_cast<rtmsg*>(NLMSG_DATA(nh));
      result = rt->rtm_type == RTN_LOCAL || rt->rtm_type == RTN_BROADCAST || rt->rtm_type == RTN_ANYCAST ? 1 : 0;
    }
  }
  close(fd);
  return result;
}
#elif defined(_WIN32)
int host_answers_on(const Address& a) {
  ULONG size = 16384;
  std::vector<unsigned char> buf;
  ULONG r = ERROR_BUFFER_OVERFLOW;
  for (int tries = 0; tries < 4 && r == ERROR_BUFFER_OVERFLOW; ++tries) {
    buf.resize(size);
    r = GetAdaptersAddresses(AF_UNSPEC, GAA_FLAG_SKIP_ANYCAST | GAA_FLAG_SKIP_MULTICAST | GAA_FLAG_SKIP_DNS_SERVER,
                             nullptr, reinterpret_cast<IP_ADAPTER_ADDRESSES*>(buf.data()), &size);
  }
  if (r != NO_ERROR) return -EIO;
  for (auto* ad = reinterpret_cast<IP_ADAPTER_ADDRESSES*>(buf.data()); ad; ad = ad->Next)
    for (auto* u = ad->FirstUnicastAddress; u; u = u->Next) {
      const sockaddr* sa = u->Address.lpSockaddr;
      if (sa->sa_family == AF_INET && is_v4(a) &&
          std::memcmp(&reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, a.data() + 12, 4) == 0)
        return 1;
      if (sa->sa_family == AF_INET6 &&
          std::memcmp(&reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, a.data(), 16) == 0)
        return 1;
    }
  return 0;
}
#else
int host_answers_on(const Address& a) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return -errno;
  int found = 0;
  for (ifaddrs* i = list; i && !found; i = i->ifa_next) {
    if (!i->ifa_addr) continue;
    if (i->ifa_addr->sa_family == AF_INET && is_v4(a))
      found = std::memcmp(&reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, a.data() + 12, 4) == 0;
    else if (i->ifa_addr->sa_family == AF_INET6)
      found = std::memcmp(&reinterpret_cast<sockaddr_in6*>(i->ifa_addr)->sin6_addr, a.data(), 16) == 0;
  }
  freeifaddrs(list);
  return found;
}
#endif

}  // namespace cage::proxy
