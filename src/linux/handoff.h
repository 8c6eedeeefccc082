// Egress hand-off (issue 25 item 3): with --net in transparent mode (namespaces), the workload's own
// connect() to an allowed destination ends with it holding a socket of the supervisor's (the host's)
// network namespace, connected by the supervisor to the checked address, so cage moves no bytes.
//
// Only under the default seccomp profile (transparent_plan.cc): it kills the 32-bit and x32 entry
// points, which the filter below cannot number; an attack review re-aimed a handed-off socket with
// int 0x80 connect() under relaxed and none. The filter refuses those entry points as well.
//
// How: the workload's process installs a seccomp filter that turns connect, bind and listen into user
// notifications (connect_notify.h). The supervisor reads the sockaddr once and takes the notified
// descriptor's open file with pidfd_getfd. An IPv4 TCP connect to an address that lands on one of
// cage's transparent listeners (a synthetic address, an IPv4 rule's route, 127.0.0.0/8) on a carried
// port goes to the proxy's own decide -> resolve -> address check -> dial path (proxy::Server::
// hand_off); the connected socket replaces the workload's descriptor number with
// SECCOMP_IOCTL_NOTIF_ADDFD + SECCOMP_ADDFD_FLAG_SETFD (O_NONBLOCK and FD_CLOEXEC as the workload's
// had them; TCP_NODELAY, keepalive, IP_TOS, SO_LINGER, TCP_USER_TIMEOUT copied), and connect()
// returns 0 — also for a non-blocking socket: the connection is complete, which POSIX allows.
//
// Why it is safe: a host socket in the workload could reach anything if the kernel ever ran
// connect (after connect(AF_UNSPEC), or a thread dup2-ing it over a checked descriptor number while
// another swaps the sockaddr) or listen on it. So no connect and no listen is ever answered with
// CONTINUE: the supervisor performs them itself on the open file it took, with the address it read,
// and only when that file is a socket of the sandbox's namespace (SO_NETNS_COOKIE against a socket
// init made there); on any other socket they fail (EISCONN / EACCES). connect() to a unix path is
// resolved in the workload's root (openat2 RESOLVE_IN_ROOT from /proc/TID/root, or RESOLVE_BENEATH
// from its cwd) and connected through the O_PATH descriptor. The filter refuses sendto/sendmsg/
// sendmmsg with MSG_FASTOPEN (a connect from send) and setsockopt IP_OPTIONS / IPv6 routing headers
// (a source route re-aims a connected socket's packets); io_uring is refused by seccomp/floor.txt.
// Proven by tests/escape/net_handoff_*.sh (races) and tests/integration/net_handoff.sh.
//
// Residual risks: bind() of a unix socket to a path is continued (the path and the workload's umask
// and mounts must apply): a racing thread can make the kernel bind a host socket instead, which can
// only name a local port of the host for a socket that can neither listen (it stays SS_CONNECTED)
// nor connect (it does keep that port from the host's services for the run). Calls the supervisor
// performs carry its identity and its capabilities in the sandbox's user namespace: a unix server
// outside reached through a grant sees cage as the peer (SO_PEERCRED, SO_PEERSEC), and a bind in the
// sandbox's namespace may take a port below 1024 there (a helper inside the sandbox performing them
// would close both; not built). getsockname() on a handed-off socket shows the host's local address, and its ioctls
// (SIOCGIFCONF) list the host's interfaces. A blocking connect() the supervisor performs on a
// socket whose peer's backlog is full holds the mediator (the sandbox's own calls wait; the socket's
// SO_SNDTIMEO applies). A handed-off connect() waits for the dial (at most the proxy's 10 s connect
// timeout) even on a non-blocking socket, and handled signals wait for its answer. Where the hand-off is not made (IPv6, UDP,
// proxy-mode clients, Landlock-only, kernels without SO_NETNS_COOKIE before Linux 5.14) the relay
// carries the bytes as before.
#pragma once
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "linux/plan.h"

namespace cage::lx::handoff {

// Pure: whether an IPv4 destination (host byte order) reaches one of cage's transparent listeners,
// i.e. whether cage would have relayed it: a carried port, an address routed to `lo` by the plan.
bool carried(const NetPlan& net, uint32_t addr, uint16_t port);

// The calls the mediator answers in hand-off mode: connect, bind, listen.
bool mediates(long nr);

enum class SocketKind { not_socket, sandbox, foreign };  // foreign: any other namespace's socket

// What the supervisor does with one notified call in hand-off mode.
enum class Action {
  hand_off,            // dial the checked destination and install the socket in the workload's place
  perform,             // the supervisor runs the call on the workload's open file, with its copy
  perform_unix_path,   // connect to a unix path resolved in the workload's root
  continue_unix_bind,  // bind of a unix socket to a path (residual risk above)
  refuse,              // fail with `err`
};
struct Verdict {
  Action action = Action::refuse;
  int err = 0;
  uint32_t addr = 0;  // hand_off: the IPv4 destination (host byte order)
  uint16_t port = 0;
};

// Pure. nr: SYS_connect, SYS_bind or SYS_listen; the socket's domain and type (0 when not a
// socket); `sa`/`len`: the address as read once (len 0 for listen).
Verdict classify(const NetPlan& net, long nr, SocketKind kind, int domain, int type, const sockaddr_storage& sa,
                 size_t len);

// The workload's descriptor `fd` (its open file `sock`, taken by the caller) bound for `addr`:
// Parent, mediator thread. The kind of a socket: SO_NETNS_COOKIE against the sandbox's.
SocketKind kind_of(int sock, uint64_t sandbox_cookie);
// SO_NETNS_COOKIE of a socket; nullopt before Linux 5.14 (no hand-off then).
std::optional<uint64_t> netns_cookie(int sock);
// Runs the call on `sock` (perform); 0 or an errno.
int perform(long nr, int sock, const sockaddr_storage& sa, size_t len, int backlog);
// connect(sock) to the unix path in sa, resolved as the thread `tid` would; 0 or an errno.
int connect_unix_path(pid_t tid, int sock, const sockaddr_storage& sa, size_t len);
// Gives `fresh` what the workload set on `old` that survives a hand-off (options, O_NONBLOCK).
void copy_settings(int old, int fresh);

}  // namespace cage::lx::handoff
