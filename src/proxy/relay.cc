// Splice relay for tunnels (CONNECT and SOCKS5). The pipe is always drained before the next read,
// so an EAGAIN from the read side means "src is empty", never "pipe full": with edge-triggered
// readiness no wake-up is lost. Proven by tests/unit/proxy_server_test.cc (slow reader, early close).
#include "proxy/relay.h"

#include <fcntl.h>
#include <sys/socket.h>

#include <cerrno>

namespace cage::proxy {
namespace {

constexpr unsigned kSpliceFlags = SPLICE_F_NONBLOCK | SPLICE_F_MOVE;

bool write_prefix(Leg& leg) {
  while (!leg.prefix.empty()) {
    ssize_t n = send(leg.dst, leg.prefix.data(), leg.prefix.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) leg.error = errno;
      return false;
    }
    leg.prefix.erase(0, static_cast<size_t>(n));
  }
  return true;
}

void finish(Leg& leg) {
  shutdown(leg.dst, SHUT_WR);
  leg.done = true;
}

}  // namespace

int open_leg(Leg& leg, int src, int dst, int pipe_size) {
  int p[2];
  if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) return errno;
  leg.pipe_r.reset(p[0]);
  leg.pipe_w.reset(p[1]);
  if (pipe_size > 0) fcntl(p[1], F_SETPIPE_SZ, pipe_size);  // best effort: per-user pipe quota
  leg.src = src;
  leg.dst = dst;
  return 0;
}

void pump(Leg& leg) {
  while (!leg.done) {
    if (!write_prefix(leg)) {
      if (leg.error) leg.done = true;  // dst is gone: nothing more can be delivered
      return;
    }
    while (leg.pending > 0) {
      ssize_t n = splice(leg.pipe_r.get(), nullptr, leg.dst, nullptr, leg.pending, kSpliceFlags);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN) return;  // dst full: its EPOLLOUT edge resumes us
        leg.error = errno;
        leg.done = true;
        return;
      }
      leg.pending -= static_cast<size_t>(n);
      leg.bytes += static_cast<uint64_t>(n);
    }
    if (leg.eof) {
      finish(leg);
      return;
    }
    ssize_t n = splice(leg.src, nullptr, leg.pipe_w.get(), nullptr, 1 << 20, kSpliceFlags);
    if (n > 0) {
      leg.pending = static_cast<size_t>(n);
      if (!leg.grown && leg.bytes >= kBulkAfter && (!leg.bulk_slots || *leg.bulk_slots > 0)) {
        if (leg.bulk_slots) --*leg.bulk_slots;  // given back by the server when the tunnel ends
        leg.grown = true;
        fcntl(leg.pipe_w.get(), F_SETPIPE_SZ, kBulkPipe);  // best effort, like open_leg's
      }
    } else if (n == 0) {
      leg.eof = true;
    } else if (errno == EAGAIN) {
      return;  // the pipe was empty, so src is: its EPOLLIN edge resumes us
    } else if (errno != EINTR) {
      leg.error = errno;  // a reset peer: deliver what we have, then half-close
      leg.eof = true;
    }
  }
}

}  // namespace cage::proxy
