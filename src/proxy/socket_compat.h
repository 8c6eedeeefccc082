// The few socket calls whose spelling differs between hosts, for the proxy's portable files: POSIX
// (Linux, macOS) and Winsock. Sockets are ints everywhere (a Winsock SOCKET handle fits in 32 bits;
// INVALID_SOCKET reads as -1), errors are errno names (Winsock's WSAE* codes are mapped), and on
// Windows every call that finds a socket not ready tells the poller, which is how poller_wsapoll.cc
// turns WSAPoll's level-triggered readiness into the edges the proxy loop is written for.
#pragma once
#if defined(_WIN32)
#include <winsock2.h>
#include <ws2tcpip.h>
#else
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#if defined(__APPLE__)
#include <sys/sysctl.h>  // sysctlbyname, for fd_limit_os_cap
#endif
#include <sys/types.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstddef>

namespace cage::proxy {

inline bool would_block(int e) { return e == EAGAIN || e == EWOULDBLOCK; }

#if defined(_WIN32)

// WSAStartup once per process (idempotent; the proxy's first socket calls it).
void socket_startup();
// The errno name for a Winsock error code (socket_windows.cc); EIO for the unexpected.
int errno_from_wsa(int wsa);
// poller_wsapoll.cc: `fd` would block for reading (write=false) or writing: its next readiness in
// that direction is an edge the poller must report.
void note_would_block(int fd, bool write);

inline SOCKET os_socket(int fd) { return static_cast<SOCKET>(static_cast<intptr_t>(fd)); }
inline int last_socket_error() { return errno_from_wsa(::WSAGetLastError()); }

inline long send_nosignal(int fd, const char* data, size_t size) {
  int n = ::send(os_socket(fd), data, static_cast<int>(std::min<size_t>(size, INT_MAX)), 0);
  if (n == SOCKET_ERROR && ::WSAGetLastError() == WSAEWOULDBLOCK) note_would_block(fd, true);
  return n == SOCKET_ERROR ? -1 : n;
}
inline long recv_some(int fd, char* data, size_t size) {
  int n = ::recv(os_socket(fd), data, static_cast<int>(std::min<size_t>(size, INT_MAX)), 0);
  if (n == SOCKET_ERROR && ::WSAGetLastError() == WSAEWOULDBLOCK) note_would_block(fd, false);
  return n == SOCKET_ERROR ? -1 : n;
}
inline void shutdown_write(int fd) { ::shutdown(os_socket(fd), SD_SEND); }
inline int set_nonblocking(int fd) {
  u_long on = 1;
  return ::ioctlsocket(os_socket(fd), FIONBIO, &on) == 0 ? 0 : -1;
}

// A TCP socket, non-blocking and not inherited by child processes.
inline int open_stream_socket(int family) {
  socket_startup();
  SOCKET s = ::WSASocketW(family, SOCK_STREAM, IPPROTO_TCP, nullptr, 0, WSA_FLAG_NO_HANDLE_INHERIT);
  if (s == INVALID_SOCKET) return -1;
  int fd = static_cast<int>(s);
  set_nonblocking(fd);
  return fd;
}

// accept giving a non-blocking socket that no child inherits. Any failure re-arms the listener: a
// connection left in the backlog (out of memory) is retried at the next wait, not forgotten.
inline int accept_nonblocking(int listener) {
  SOCKET s = ::accept(os_socket(listener), nullptr, nullptr);
  if (s == INVALID_SOCKET) {
    note_would_block(listener, false);
    return -1;
  }
  ::SetHandleInformation(reinterpret_cast<HANDLE>(s), HANDLE_FLAG_INHERIT, 0);
  int fd = static_cast<int>(s);
  set_nonblocking(fd);
  return fd;
}

// Starts a non-blocking connect: 0 when connected or under way, else the errno name.
inline int connect_nonblocking(int fd, const sockaddr* sa, int len) {
  if (::connect(os_socket(fd), sa, len) == 0) return 0;
  int e = ::WSAGetLastError();
  return e == WSAEWOULDBLOCK || e == WSAEINPROGRESS ? 0 : errno_from_wsa(e);
}

template <class T>
inline int get_socket_option(int fd, int level, int name, T& value) {
  int len = sizeof value;
  return ::getsockopt(os_socket(fd), level, name, reinterpret_cast<char*>(&value), &len);
}
template <class T>
inline int set_socket_option(int fd, int level, int name, const T& value) {
  return ::setsockopt(os_socket(fd), level, name, reinterpret_cast<const char*>(&value), sizeof value);
}
// A connect's outcome (SO_ERROR) as an errno name; 0 when none is pending.
inline int pending_socket_error(int fd) {
  int err = 0;
  get_socket_option(fd, SOL_SOCKET, SO_ERROR, err);
  return err == 0 ? 0 : errno_from_wsa(err);
}
inline void raise_fd_limit() {}  // Windows has no per-process socket limit to raise
// getaddrinfo's error as text (mingw's gai_strerror is an inline this toolchain does not emit).
inline const char* resolve_error_text(int e) {
  switch (e) {
    case WSAHOST_NOT_FOUND: return "no such host";
    case WSATRY_AGAIN: return "temporary failure in name resolution";
    case WSANO_RECOVERY: return "non-recoverable failure in name resolution";
    case WSANO_DATA: return "no address for this name";
    default: return "name resolution failed";
  }
}

#else  // POSIX

inline int os_socket(int fd) { return fd; }
inline int last_socket_error() { return errno; }
inline long send_nosignal(int fd, const char* data, size_t size) {
#if defined(MSG_NOSIGNAL)
  return static_cast<long>(::send(fd, data, size, MSG_NOSIGNAL));
#else
  return static_cast<long>(::send(fd, data, size, 0));  // macOS: SO_NOSIGPIPE is set on the socket
#endif
}
inline long recv_some(int fd, char* data, size_t size) { return static_cast<long>(::recv(fd, data, size, 0)); }
inline void shutdown_write(int fd) { ::shutdown(fd, SHUT_WR); }
inline int set_nonblocking(int fd) { return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

inline void no_sigpipe([[maybe_unused]] int fd) {
#if defined(SO_NOSIGPIPE)
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif
}

// A TCP socket, non-blocking and close-on-exec (macOS has no SOCK_NONBLOCK / SOCK_CLOEXEC flags).
inline int open_stream_socket(int family) {
#if defined(SOCK_NONBLOCK) && defined(SOCK_CLOEXEC)
  return ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
#else
  int fd = ::socket(family, SOCK_STREAM, 0);
  if (fd >= 0) {
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    set_nonblocking(fd);
    no_sigpipe(fd);
  }
  return fd;
#endif
}

// accept(2) giving a non-blocking, close-on-exec socket (accept4 where it exists).
inline int accept_nonblocking(int listener) {
#if defined(SOCK_NONBLOCK) && defined(SOCK_CLOEXEC)
  return ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
#else
  int fd = ::accept(listener, nullptr, nullptr);
  if (fd >= 0) {
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    set_nonblocking(fd);
    no_sigpipe(fd);
  }
  return fd;
#endif
}

inline const char* resolve_error_text(int e) { return gai_strerror(e); }

// Starts a non-blocking connect: 0 when connected or under way, else the errno.
inline int connect_nonblocking(int fd, const sockaddr* sa, socklen_t len) {
  return ::connect(fd, sa, len) == 0 || errno == EINPROGRESS ? 0 : errno;
}

template <class T>
inline int get_socket_option(int fd, int level, int name, T& value) {
  socklen_t len = sizeof value;
  return ::getsockopt(fd, level, name, &value, &len);
}
template <class T>
inline int set_socket_option(int fd, int level, int name, const T& value) {
  return ::setsockopt(fd, level, name, &value, sizeof value);
}
// A connect's outcome (SO_ERROR); 0 when none is pending.
inline int pending_socket_error(int fd) {
  int err = 0;
  get_socket_option(fd, SOL_SOCKET, SO_ERROR, err);
  return err;
}

// Each tunnel holds two sockets: lift the soft fd limit towards the hard one (at most 65536), so
// 1,000 concurrent tunnels do not hit a 1024 default (256 on macOS).
inline constexpr rlim_t kFdLimitCeiling = 65536;

// The soft limit to ask for: the hard limit, at most kFdLimitCeiling and at most `os_cap` (0: none).
// macOS's setrlimit(2) refuses (EINVAL) a soft RLIMIT_NOFILE above kern.maxfilesperproc, and its
// hard limit is usually RLIM_INFINITY, so asking for 65536 there left the proxy at 256.
inline rlim_t fd_limit_target(rlim_t hard, rlim_t os_cap) {
  rlim_t want = hard == RLIM_INFINITY ? kFdLimitCeiling : std::min<rlim_t>(hard, kFdLimitCeiling);
  return os_cap > 0 ? std::min(want, os_cap) : want;
}

// The OS's own cap on a soft RLIMIT_NOFILE beyond the hard limit; 0 where there is none (Linux).
// macOS: kern.maxfilesperproc, the bound the kernel checks (Go's os package clamps to it too,
// src/os/rlimit_darwin.go); OPEN_MAX when the sysctl cannot be read, the value setrlimit(2)'s man
// page documents ("use rlim_cur = min(OPEN_MAX, rlim_max)").
inline rlim_t fd_limit_os_cap() {
#if defined(__APPLE__)
  int n = 0;
  size_t len = sizeof n;
  if (sysctlbyname("kern.maxfilesperproc", &n, &len, nullptr, 0) == 0 && n > 0) return static_cast<rlim_t>(n);
  return OPEN_MAX;
#else
  return 0;
#endif
}

inline void raise_fd_limit() {
  rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  rlim_t want = fd_limit_target(rl.rlim_max, fd_limit_os_cap());
  if (rl.rlim_cur < want) {
    rl.rlim_cur = want;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

#ifndef MSG_CMSG_CLOEXEC
// macOS cannot mark received fds close-on-exec atomically; cage's macOS executor spawns with
// POSIX_SPAWN_CLOEXEC_DEFAULT instead, so no proxy socket reaches the workload.
#define MSG_CMSG_CLOEXEC 0
#endif

#endif

inline void set_nodelay(int fd) {
  int one = 1;
  set_socket_option(fd, IPPROTO_TCP, TCP_NODELAY, one);
}
// Close with a reset (SO_LINGER 0): the peer fails at once instead of seeing a clean end.
inline void reset_on_close(int fd) {
  linger l{};
  l.l_onoff = 1;
  l.l_linger = 0;
  set_socket_option(fd, SOL_SOCKET, SO_LINGER, l);
}

}  // namespace cage::proxy
