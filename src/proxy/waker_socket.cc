// The Waker on Windows, which has neither eventfd nor a pollable pipe: one UDP socket on 127.0.0.1
// connected to itself. signal() sends a byte (a full buffer means "already signalled"); drain()
// reads until it would block, which re-arms the poller's read edge (poller_wsapoll.cc).
#include "proxy/socket_compat.h"
#include "proxy/waker.h"

#include <mswsock.h>  // after winsock2.h

namespace cage::proxy {

Waker::Waker() {
  socket_startup();
  SOCKET s = ::WSASocketW(AF_INET, SOCK_DGRAM, IPPROTO_UDP, nullptr, 0, WSA_FLAG_NO_HANDLE_INHERIT);
  if (s == INVALID_SOCKET) return;
  UniqueSocket owned(static_cast<int>(s));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int len = sizeof a;
  if (::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) != 0 ||
      ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || set_nonblocking(owned.get()) != 0)
    return;
  // A UDP socket reports an earlier ICMP "port unreachable" as WSAECONNRESET on its next recv;
  // nothing else sends here, but the waker must never stop on such an error.
  BOOL off = FALSE;
  DWORD ret = 0;
  ::WSAIoctl(s, SIO_UDP_CONNRESET, &off, sizeof off, nullptr, 0, &ret, nullptr, nullptr);
  read_ = std::move(owned);
}

void Waker::signal() {
  char one = 1;
  ::send(os_socket(read_.get()), &one, 1, 0);  // would block: a signal is pending already
}

void Waker::drain() {
  char buf[64];
  while (true) {
    long n = recv_some(read_.get(), buf, sizeof buf);
    if (n > 0) continue;
    if (n < 0 && !would_block(last_socket_error())) note_would_block(read_.get(), false);
    return;
  }
}

}  // namespace cage::proxy
