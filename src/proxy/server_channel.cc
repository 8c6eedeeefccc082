// The proxy's channel from cage's init and shim (Linux; also built on macOS for the unit tests): a
// SOCK_SEQPACKET socket whose messages each carry one fd by SCM_RIGHTS and a tag byte: 'c' an
// accepted client (the shim), 'L' a listener and 'D' the DNS socket (transparent egress,
// server_transparent.cc). Windows has neither (server_no_channel.cc).
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "common/send_fd.h"
#include "proxy/server.h"

namespace cage::proxy {

int Server::add_channel(UniqueFd channel) {
  channel_ = std::move(channel);
  return poller_.add(channel_.get(), kChannel);
}

void Server::on_channel() {
  while (channel_.valid()) {
    char byte = 0;
    int fd = recv_fd(channel_.get(), &byte, MSG_DONTWAIT);
    if (fd < 0 && errno == EAGAIN) return;
    if (fd < 0 && errno == EBADMSG) continue;  // a message without an fd: nothing to serve
    if (fd < 0) {  // the shim is gone (the sandbox ended): existing tunnels carry on
      poller_.remove(channel_.get());
      channel_.reset();
      return;
    }
    if (transparent_ && (byte == 'L' || byte == 'D'))
      add_aux(fd, byte == 'L' ? 2 : 3);
    else if (byte == 'c')
      accept_client(fd);
    else
      close(fd);
  }
}

}  // namespace cage::proxy
