// LoopbackProxy on POSIX hosts (see loopback.h). The acceptor polls the listener and a stop pipe,
// accepts, and passes each client over a SOCK_DGRAM unix socketpair (message boundaries keep one
// fd per message; macOS has no SOCK_SEQPACKET for unix sockets) to Server::add_channel.
#include "proxy/loopback.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <thread>

#include "common/send_fd.h"
#include "proxy/socket_compat.h"
#include "proxy/waker.h"

namespace cage::proxy {

struct LoopbackProxy::Impl {
  Impl(Allowlist allow, ServerOptions opt, EventSink sink) : server(std::move(allow), opt, std::move(sink)) {}
  Server server;
  UniqueFd listener, feed;  // feed: our end of the channel
  Waker stop_accepting;
  std::thread serve, accept;
  bool stopped = false;

  void accept_loop() {
    pollfd fds[2] = {{listener.get(), POLLIN, 0}, {stop_accepting.get(), POLLIN, 0}};
    while (true) {
      if (poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[1].revents) return;
      int c = accept_nonblocking(listener.get());
      if (c < 0) continue;  // EAGAIN (another wake-up took it), ECONNABORTED, out of fds: next one
      send_fd(feed.get(), c, 'c');
      ::close(c);  // the server holds its own copy now
    }
  }
};

Result<std::unique_ptr<LoopbackProxy>> LoopbackProxy::start(Allowlist allow, EventSink sink, ServerOptions opt) {
  auto impl = std::make_unique<Impl>(std::move(allow), opt, std::move(sink));
  UniqueFd l(open_stream_socket(AF_INET));
  if (!l.valid()) return unavailable("--net", "cannot create the proxy's socket", "check the fd limit", errno);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (bind(l.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(l.get(), 128) != 0 ||
      getsockname(l.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0)
    return unavailable("--net", "cannot listen on 127.0.0.1 for the proxy", "check the loopback interface", errno);
  int sp[2];
  if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sp) != 0)
    return unavailable("--net", "cannot create the proxy's channel", "check the fd limit", errno);
  UniqueFd theirs(sp[0]);
  impl->feed.reset(sp[1]);
  for (int fd : sp) fcntl(fd, F_SETFD, FD_CLOEXEC);
  fcntl(sp[0], F_SETFL, fcntl(sp[0], F_GETFL) | O_NONBLOCK);
  impl->listener = std::move(l);
  if (!impl->stop_accepting.valid())
    return unavailable("--net", "cannot create the proxy's stop signal", "check the fd limit", errno);
  if (int e = impl->server.add_channel(std::move(theirs)); e != 0)
    return unavailable("--net", "cannot watch the proxy's channel", "check the fd limit", -e);
  Impl* raw = impl.get();
  impl->serve = std::thread([raw] { raw->server.run(); });
  impl->accept = std::thread([raw] { raw->accept_loop(); });
  return std::unique_ptr<LoopbackProxy>(new LoopbackProxy(std::move(impl), ntohs(a.sin_port)));
}

LoopbackProxy::LoopbackProxy(std::unique_ptr<Impl> impl, uint16_t port) : impl_(std::move(impl)), port_(port) {}

LoopbackProxy::~LoopbackProxy() { stop(); }

void LoopbackProxy::stop() {
  if (!impl_ || impl_->stopped) return;
  impl_->stopped = true;
  impl_->stop_accepting.signal();
  if (impl_->accept.joinable()) impl_->accept.join();
  impl_->listener.reset();
  impl_->server.stop();
  if (impl_->serve.joinable()) impl_->serve.join();
}

void print_denials(const NetEvent& e) {
  if (e.decision != Decision::denied) return;
  std::string msg = e.reason.rfind("cage: ", 0) == 0 ? e.reason.substr(6) : e.reason;
  std::fprintf(stderr, "cage: net: denied (%s) %s\n", e.protocol.c_str(), msg.c_str());
}

}  // namespace cage::proxy
