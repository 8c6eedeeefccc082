// The few socket calls whose spelling differs between hosts, for the proxy's portable files. POSIX
// here (Linux, macOS); a Windows build supplies the same names over Winsock.
#pragma once
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>

namespace cage::proxy {

inline int last_socket_error() { return errno; }
inline bool would_block(int e) { return e == EAGAIN || e == EWOULDBLOCK; }
inline long send_nosignal(int fd, const char* data, size_t size) {
  return static_cast<long>(::send(fd, data, size, MSG_NOSIGNAL));
}
inline long recv_some(int fd, char* data, size_t size) { return static_cast<long>(::recv(fd, data, size, 0)); }
inline void shutdown_write(int fd) { ::shutdown(fd, SHUT_WR); }

// A TCP socket, non-blocking and close-on-exec (macOS has no SOCK_NONBLOCK / SOCK_CLOEXEC flags).
inline int open_stream_socket(int family) {
#if defined(SOCK_NONBLOCK) && defined(SOCK_CLOEXEC)
  return ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
#else
  int fd = ::socket(family, SOCK_STREAM, 0);
  if (fd >= 0) {
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
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
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  return fd;
#endif
}

#ifndef MSG_CMSG_CLOEXEC
// macOS cannot mark received fds close-on-exec atomically; cage's macOS executor spawns with
// POSIX_SPAWN_CLOEXEC_DEFAULT instead, so no proxy socket reaches the workload.
#define MSG_CMSG_CLOEXEC 0
#endif

}  // namespace cage::proxy
