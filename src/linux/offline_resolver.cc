// OfflineResolver (see offline_resolver.h): one thread per run without --net, asleep in poll(2)
// until the workload looks a name up or the run ends.
#include "linux/offline_resolver.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <thread>

#include "common/send_fd.h"
#include "proxy/dns.h"

namespace cage::lx {

namespace {
constexpr size_t kMostNames = 16;  // remembered for the hint; more are counted as "..."
}

struct OfflineResolver::State {
  UniqueFd channel, sock, stop_r, stop_w;
  std::thread thread;
  std::mutex mu;
  std::vector<std::string> names;
  bool more = false;

  void note(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu);
    if (std::find(names.begin(), names.end(), name) != names.end()) return;
    if (names.size() < kMostNames) names.push_back(name);
    else more = true;
  }
  void answer() {
    char buf[1500];
    sockaddr_storage from{};
    socklen_t len = sizeof from;
    ssize_t n = ::recvfrom(sock.get(), buf, sizeof buf, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &len);
    if (n <= 0) return;
    std::string_view msg(buf, static_cast<size_t>(n));
    proxy::DnsQuery q;
    std::string reply;
    switch (proxy::parse_dns_query(msg, q)) {
      case proxy::DnsParse::ignore: return;
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
    ::sendto(sock.get(), reply.data(), reply.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), len);
  }
  void run() {
    while (true) {
      int watched = sock.valid() ? sock.get() : channel.get();
      struct pollfd fds[2] = {{watched, POLLIN, 0}, {stop_r.get(), POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[1].revents) return;
      if (!fds[0].revents) continue;
      if (sock.valid()) {
        answer();
        continue;
      }
      char tag = 0;
      int fd = recv_fd(channel.get(), &tag);
      if (fd < 0) return;  // init closed the channel without a socket: it failed, and says so itself
      sock.reset(fd);
      channel.reset();
    }
  }
};

std::unique_ptr<OfflineResolver> OfflineResolver::start(UniqueFd channel) {
  std::unique_ptr<OfflineResolver> r(new OfflineResolver());
  r->s_ = std::make_unique<State>();
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return nullptr;
  r->s_->stop_r.reset(p[0]);
  r->s_->stop_w.reset(p[1]);
  r->s_->channel = std::move(channel);
  r->s_->thread = std::thread([st = r->s_.get()] { st->run(); });
  return r;
}

std::vector<std::string> OfflineResolver::finish() {
  if (s_->thread.joinable()) {
    char b = 1;
    (void)!::write(s_->stop_w.get(), &b, 1);
    s_->thread.join();
  }
  std::lock_guard<std::mutex> lock(s_->mu);
  auto names = s_->names;
  if (s_->more) names.push_back("...");
  return names;
}

OfflineResolver::~OfflineResolver() { finish(); }

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
