// Winsock glue for the proxy's portable files (socket_compat.h): start-up, closing, and the errno
// names of Winsock's error codes, so the shared code compares ECONNREFUSED and EAGAIN on every host.
#include <mutex>

#include "common/unique_fd.h"
#include "proxy/socket_compat.h"

namespace cage {

void close_socket(int s) { ::closesocket(proxy::os_socket(s)); }

}  // namespace cage

namespace cage::proxy {

void socket_startup() {
  static std::once_flag once;
  std::call_once(once, [] {
    WSADATA wsa;
    ::WSAStartup(MAKEWORD(2, 2), &wsa);  // a failure shows as the first socket call's error
  });
}

int errno_from_wsa(int wsa) {
  switch (wsa) {
    case 0: return 0;
    case WSAEWOULDBLOCK: return EAGAIN;
    case WSAEINPROGRESS:
    case WSAEALREADY: return EINPROGRESS;
    case WSAEINTR: return EINTR;
    case WSAECONNREFUSED: return ECONNREFUSED;
    case WSAECONNRESET: return ECONNRESET;
    case WSAECONNABORTED: return ECONNABORTED;
    case WSAENETUNREACH:
    case WSAENETDOWN: return ENETUNREACH;
    case WSAEHOSTUNREACH:
    case WSAEHOSTDOWN: return EHOSTUNREACH;
    case WSAETIMEDOUT: return ETIMEDOUT;
    case WSAEADDRINUSE: return EADDRINUSE;
    case WSAEADDRNOTAVAIL: return EADDRNOTAVAIL;
    case WSAEAFNOSUPPORT: return EAFNOSUPPORT;
    case WSAEMFILE: return EMFILE;
    case WSAENOBUFS: return ENOBUFS;
    case WSAENOTCONN: return ENOTCONN;
    case WSAESHUTDOWN: return EPIPE;
    case WSAENOTSOCK: return ENOTSOCK;
    case WSAEACCES: return EACCES;
    case WSAEINVAL: return EINVAL;
    default: return EIO;
  }
}

}  // namespace cage::proxy
