// The copy relay (see relay_copy.h). src -> buf -> dst; prefix first; SHUT_WR on dst once src has
// ended and everything read was delivered.
#include "proxy/relay_copy.h"

#include <cerrno>

#include "proxy/socket_compat.h"

namespace cage::proxy {
namespace {

// Sends [data, data+size) as far as dst takes it. Returns bytes sent, or -1 with leg.error set
// (EAGAIN leaves error 0).
long send_some(Leg& leg, const char* data, size_t size) {
  size_t sent = 0;
  while (sent < size) {
    long n = send_nosignal(leg.dst, data + sent, size - sent);
    if (n < 0) {
      int e = last_socket_error();
      if (e == EINTR) continue;
      if (!would_block(e)) {
        leg.error = e;
        return -1;
      }
      break;
    }
    sent += static_cast<size_t>(n);
  }
  return static_cast<long>(sent);
}

}  // namespace

int open_copy_leg(Leg& leg, int src, int dst, size_t size) {
  leg.buf.resize(size ? size : 64 * 1024);
  leg.buf_off = 0;
  leg.pending = 0;
  leg.src = src;
  leg.dst = dst;
  return 0;
}

void pump_copy(Leg& leg) {
  while (!leg.done) {
    if (!leg.prefix.empty()) {
      long n = send_some(leg, leg.prefix.data(), leg.prefix.size());
      if (n < 0) {
        leg.done = true;  // dst is gone: nothing more can be delivered
        return;
      }
      leg.prefix.erase(0, static_cast<size_t>(n));
      if (!leg.prefix.empty()) return;  // dst full: its writable edge resumes us
    }
    if (leg.pending > 0) {
      long n = send_some(leg, leg.buf.data() + leg.buf_off, leg.pending);
      if (n < 0) {
        leg.done = true;
        return;
      }
      leg.buf_off += static_cast<size_t>(n);
      leg.pending -= static_cast<size_t>(n);
      leg.bytes += static_cast<uint64_t>(n);
      if (leg.pending > 0) return;  // dst full
    }
    if (leg.eof) {
      shutdown_write(leg.dst);
      leg.done = true;
      return;
    }
    leg.buf_off = 0;
    long n = recv_some(leg.src, leg.buf.data(), leg.buf.size());
    if (n > 0) {
      leg.pending = static_cast<size_t>(n);
    } else if (n == 0) {
      leg.eof = true;
    } else {
      int e = last_socket_error();
      if (would_block(e)) return;  // the buffer was empty, so src is: its readable edge resumes us
      if (e != EINTR) {
        leg.error = e;  // a reset peer: deliver what we have, then half-close
        leg.eof = true;
      }
    }
  }
}

}  // namespace cage::proxy
