// Passing a file descriptor over a unix socket with SCM_RIGHTS: one message carries a one-byte tag
// (SEQPACKET needs a payload; the tag says what the fd is) and the fd. Used by the shim and by
// cage's init to hand sockets to the supervisor. Async-signal-safe: no allocation.
#pragma once
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fcntl.h>

namespace cage {

#ifdef MSG_CMSG_CLOEXEC
inline constexpr int kRecvCloexec = MSG_CMSG_CLOEXEC;
#else
inline constexpr int kRecvCloexec = 0;  // macOS: set with fcntl after the message is in
#endif
#ifdef MSG_NOSIGNAL
inline constexpr int kSendNoSignal = MSG_NOSIGNAL;
#else
inline constexpr int kSendNoSignal = 0;  // macOS: SO_NOSIGPIPE on the socket instead
#endif

// Returns 0 or an errno.
inline int send_fd(int channel, int fd, char tag) {
  iovec iov{&tag, 1};
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = ctl;
  msg.msg_controllen = sizeof ctl;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  while (sendmsg(channel, &msg, kSendNoSignal) < 0)
    if (errno != EINTR) return errno;
  return 0;
}

// Receives one message: up to `len` bytes into `buf`, up to `max` (at most 4) descriptors into fds
// (close-on-exec; any beyond `max` are closed, never used). Returns the bytes read, 0 at end of
// stream, -1 with errno; *count the descriptors kept, *msg_flags the message's flags (MSG_TRUNC,
// MSG_CTRUNC).
inline ssize_t recv_fds(int channel, void* buf, size_t len, int* fds, int max, int* count, int* msg_flags,
                        int flags = 0) {
  *count = 0;
  iovec iov{buf, len};
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int) * 4)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = ctl;
  msg.msg_controllen = sizeof ctl;
  ssize_t n;
  while ((n = recvmsg(channel, &msg, kRecvCloexec | flags)) < 0 && errno == EINTR) {
  }
  if (n <= 0) return n;
  *msg_flags = msg.msg_flags;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < k; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (kRecvCloexec == 0) fcntl(fd, F_SETFD, FD_CLOEXEC);
      if (*count < max) fds[(*count)++] = fd;
      else close(fd);
    }
  }
  return n;
}

// Receives one message from send_fd: returns the fd (close-on-exec) and stores the tag, or -1 with
// errno set (0 at end of stream). Extra fds a message may carry are closed, never used.
inline int recv_fd(int channel, char* tag, int flags = 0) {
  int fd = -1, count = 0, msg_flags = 0;
  ssize_t n = recv_fds(channel, tag, 1, &fd, 1, &count, &msg_flags, flags);
  if (n <= 0) {
    if (n == 0) errno = 0;
    return -1;
  }
  if (count == 0) errno = EBADMSG;
  return count ? fd : -1;
}

}  // namespace cage
