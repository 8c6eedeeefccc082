// Egress hand-off's performer (handoff.h): the one process that runs the workload's connect, bind and
// listen once the supervisor has checked them, so that they carry the workload's identity and no
// more. Forked by cage's init before the workload (init side here), it holds the workload's uid and
// gid, no capability, the workload's seccomp profile and Landlock rules, and is not dumpable; the
// supervisor (connect_notify.cc) sends it the sandbox's socket and the address it read once, and
// answers the notification with the errno it returns. Proven by tests/escape/net_handoff_peer.sh,
// net_handoff_lowport.sh, net_handoff_unixbind.sh, net_handoff_performer_gone.sh, net_handoff_wedge.sh
// and net_handoff_explain.sh.
#pragma once
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>

#include <cstdint>

#include "linux/child.h"

namespace cage::lx::performer {

// One call. The descriptors that come with it: the socket; for a unix path also an O_PATH
// descriptor of the calling thread's cwd and one of its root.
struct Request {
  uint64_t id = 0;        // the notification's id, echoed in the reply
  int32_t nr = 0;         // SYS_connect, SYS_bind or SYS_listen
  int32_t backlog = 0;    // listen
  int32_t umask = 0;      // a unix path bind: the thread's umask
  int32_t unix_path = 0;  // cwd and root come with the socket
  int32_t blocking = 0;   // a connect that can wait (a stream socket's): in a thread, the performer goes on
  uint32_t len = 0;
  sockaddr_storage sa{};
};
struct Reply {
  uint64_t id = 0;
  int32_t err = 0;
};

// At most this many blocking connects wait at once (each in a thread of the performer); more fail
// with EAGAIN, so a workload that abandons connects cannot make the performer grow without end.
inline constexpr int kMaxWaiting = 64;

// Init (child side, before the workload): forks the performer; *supervisor_end is the supervisor's
// end of its channel, *ready_fd the pipe the performer writes once it has confined itself: the
// workload's process waits for it (await_ready) just before its exec, so the performer confines
// itself while the workload's process is set up, as the shim does (net.h). 0 or an errno. No
// allocation.
int spawn(const ChildContext& c, int* supervisor_end, int* ready_fd);
// The workload's process: waits until the performer has confined itself and closes ready_fd; 0, or
// ECHILD if it died first (the shim's one-byte protocol, net::await_shim).
int await_ready(int ready_fd);

// Supervisor: sends one request with its descriptors (1 or 3); 0 or an errno. A performer that does
// not read holds the caller for the channel's SO_SNDTIMEO at most.
inline int send(int channel, const Request& r, const int* fds, int nfds) {
  if (nfds < 1 || nfds > 3) return EINVAL;
  iovec iov{const_cast<Request*>(&r), sizeof r};
  alignas(cmsghdr) char ctl[CMSG_SPACE(3 * sizeof(int))] = {};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = ctl;
  m.msg_controllen = CMSG_SPACE(static_cast<size_t>(nfds) * sizeof(int));
  cmsghdr* h = CMSG_FIRSTHDR(&m);
  h->cmsg_level = SOL_SOCKET;
  h->cmsg_type = SCM_RIGHTS;
  h->cmsg_len = CMSG_LEN(static_cast<size_t>(nfds) * sizeof(int));
  std::memcpy(CMSG_DATA(h), fds, static_cast<size_t>(nfds) * sizeof(int));
  ssize_t n;
  do n = ::sendmsg(channel, &m, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof r) ? 0 : EACCES;
}

// Supervisor: one reply without waiting: 1, 0 when none is there yet, -1 when the performer is
// gone or the message is not a reply.
inline int receive(int channel, Reply* r) {
  ssize_t n;
  do n = ::recv(channel, r, sizeof *r, MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
  return n == static_cast<ssize_t>(sizeof *r) && r->err >= 0 && r->err <= 4095 ? 1 : -1;
}

}  // namespace cage::lx::performer
