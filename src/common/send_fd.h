// Passing a file descriptor over a unix socket with SCM_RIGHTS: one message carries a one-byte tag
// (SEQPACKET needs a payload; the tag says what the fd is) and the fd. Used by the shim and by
// cage's init to hand sockets to the supervisor. Async-signal-safe: no allocation.
#pragma once
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>

namespace cage {

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
  while (sendmsg(channel, &msg, MSG_NOSIGNAL) < 0)
    if (errno != EINTR) return errno;
  return 0;
}

}  // namespace cage
