// OfflineResolver (see offline_resolver.h): answered from the supervisor's poll loop (execute.cc)
// whenever the workload looks a name up, and drained once the run ends.
#include "linux/offline_resolver.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "common/send_fd.h"
#include "proxy/dns.h"

namespace cage::lx {

namespace {
constexpr size_t kMostNames = 16;  // remembered for the hint; more are counted as "..."
}

void OfflineResolver::note(const std::string& name) {
  if (std::find(names_.begin(), names_.end(), name) != names_.end()) return;
  if (names_.size() < kMostNames) names_.push_back(name);
  else more_ = true;
}

bool OfflineResolver::on_readable() {
  if (!sock_.valid()) {
    if (!channel_.valid()) return false;
    char tag = 0;
    int fd = recv_fd(channel_.get(), &tag, MSG_DONTWAIT);
    if (fd < 0 && errno == EAGAIN) return false;
    channel_.reset();  // one socket, or init closed the channel without one
    if (fd >= 0) sock_.reset(fd);
    return true;
  }
  char buf[1500];
  for (int i = 0; i < 64; ++i) {  // a burst at a time; poll comes back for the rest
    sockaddr_storage from{};
    socklen_t len = sizeof from;
    ssize_t n = ::recvfrom(sock_.get(), buf, sizeof buf, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return i > 0;
    if (n == 0) continue;
    std::string_view msg(buf, static_cast<size_t>(n));
    proxy::DnsQuery q;
    std::string reply;
    switch (proxy::parse_dns_query(msg, q)) {
      case proxy::DnsParse::ignore: continue;
      case proxy::DnsParse::formerr: reply = proxy::dns_error(msg, proxy::DnsRcode::formerr); break;
      case proxy::DnsParse::notimp: reply = proxy::dns_error(msg, proxy::DnsRcode::notimp); break;
      case proxy::DnsParse::ok:
        // Only what a --net rule could name: an address question for a well-formed name.
        if ((q.qtype == proxy::kDnsTypeA || q.qtype == proxy::kDnsTypeAAAA) && q.name_ok && !q.name.empty() &&
            q.name.find('.') != std::string::npos)
          note(q.name);
        reply = proxy::dns_answer(msg, q, proxy::DnsRcode::nxdomain);
        break;
    }
    ::sendto(sock_.get(), reply.data(), reply.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), len);
  }
  return true;
}

std::vector<std::string> OfflineResolver::finish() {
  // The sandbox is gone: what init sent and what the workload asked is all queued by now (the
  // socket's receive buffer bounds it; the count bounds the loop).
  for (int i = 0; i < 256 && on_readable(); ++i) {
  }
  auto names = names_;
  if (more_) names.push_back("...");
  return names;
}

std::string offline_hint(const std::vector<std::string>& names) {
  if (names.empty()) return "";
  std::string list, flags;
  for (const auto& n : names) {
    list += (list.empty() ? "" : ", ") + n;
    if (n != "...") flags += " --net " + n + ":443";
  }
  return "cage: note: the network is off (no --net) and the run looked up " + list + "; to allow " +
         (names.size() == 1 ? "it" : "them") + " (HTTPS; name another port if the tool uses one):" + flags;
}

}  // namespace cage::lx
