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
// hand_off), or, for an address outside the synthetic range (nothing to map back or resolve), to
// the same decision and a non-blocking dial on the mediator's own thread (proxy::Server::dial_direct,
// which saves the wake-up of the proxy's loop; the notification is answered once the socket polls
// writable, and the mediator serves other calls meanwhile). An IPv4 TCP connect anywhere else but
// the sandbox's own loopback (a listed address on a port no rule names, an unlisted address) takes
// the same path, whose check refuses it: ECONNREFUSED and a denied tcp event, where the kernel would
// have failed it in silence (tests/integration/net_handoff_denials.sh). A TCP connect on an IPv6 socket
// to anything but its own loopback is refused the same way without a dial (the sandbox has no IPv6
// route; ENETUNREACH, as the kernel's, so a client falls back to IPv4), and to an IPv4-mapped address
// no listener carries as its IPv4 twin is (ECONNREFUSED). The connected socket replaces the
// workload's descriptor number with
// SECCOMP_IOCTL_NOTIF_ADDFD + SECCOMP_ADDFD_FLAG_SETFD (O_NONBLOCK and FD_CLOEXEC as the workload's
// had them; TCP_NODELAY, keepalive, IP_TOS, SO_LINGER, TCP_USER_TIMEOUT copied), and connect()
// returns 0 — also for a non-blocking socket: the connection is complete, which POSIX allows.
//
// Why it is safe: a host socket in the workload could reach anything if the kernel ever ran
// connect (after connect(AF_UNSPEC), or a thread dup2-ing it over a checked descriptor number while
// another swaps the sockaddr), bind or listen on it. So none of them is ever answered with CONTINUE:
// the supervisor takes the open file, and only when it is a socket of the sandbox's namespace
// (SO_NETNS_COOKIE against a socket init made there) sends it, with the address it read, to the
// performer (performer.h), which runs the call; on any other socket they fail (EISCONN / EACCES).
// The performer is a process of the sandbox with the workload's identity and no more (its uid and
// gid, no capability, its seccomp profile and Landlock rules, not dumpable), so a unix server outside
// reached through a grant sees a process of the sandbox as the peer (SO_PEERCRED, SO_PEERSEC), and
// a bind below port 1024 fails with EACCES as the workload's own would. A unix path is resolved by
// the performer from the calling thread's cwd (an O_PATH descriptor of /proc/TID/cwd), a bind under
// its umask (/proc/TID/status), and only while the thread's root is the sandbox's (else EACCES). A
// connect that can wait (a stream socket, blocking now or by the time it runs: a full backlog, TCP's
// handshake) runs in a thread of the performer, at most performer::kMaxWaiting at once (then EAGAIN),
// so neither the mediator nor the sandbox's other calls wait for it. A performer that is gone,
// stopped (a send to it waits at most 1 s) or answers what it was not asked fails the calls with
// EACCES, never CONTINUE. The filter
// refuses sendto/sendmsg/sendmmsg with MSG_FASTOPEN (a connect from send) and setsockopt IP_OPTIONS /
// IPv6 routing headers (a source route re-aims a connected socket's packets); io_uring is refused by
// seccomp/floor.txt. Proven by tests/escape/net_handoff_*.sh (races; peer, lowport and unixbind for
// the performer) and tests/integration/net_handoff.sh.
//
// Residual risks: the performer's Landlock domain is not the workload's own but a copy of its rules
// without the abstract-socket scope (a sibling domain's scope would keep it from the workload's own
// abstract sockets); abstract sockets are per network namespace, so it reaches only the sandbox's.
// The performer has the rights the sandbox started with, not the calling thread's: a process that
// confines itself further (its own Landlock domain: MAKE_SOCK, TCP rules, the abstract scope; a cage
// run inside this one, which can only use Landlock) has its connect, bind and listen run without those
// restrictions (tests/escape/pending/net_handoff_nested_landlock.sh; no interface tells a thread's domain).
// The workload's rlimits do not bind the performer (its address space is a copy of cage's init:
// --memory's RLIMIT_AS stand-in would leave it no room for a thread); a cgroup's limits do.
// The workload can kill or stop the performer (same uid; with Landlock ABI 6 signal scoping it
// cannot): its own connect, bind and listen then fail with EACCES. A connect in a performer thread
// whose caller was interrupted or died waits on until the kernel ends it (the socket's SO_SNDTIMEO,
// TCP's retries, the peer's accept), holding one of the kMaxWaiting places (a unix connect to a backlog that
// stays full and has no SO_SNDTIMEO holds its place for the run). SO_PEERCRED names the performer,
// not the calling process: a server sees a process of the sandbox, never the workload's own pid.
// getsockname() on a handed-off socket shows the host's local address, and its ioctls (SIOCGIFCONF)
// list the host's interfaces. A dial whose caller was killed while it waited is dropped within
// 250 ms (proxy::Server::kTick) on either path, the direct one and the loop's (a synthetic
// address), by one look at the notification (SECCOMP_IOCTL_NOTIF_ID_VALID, Mediator::waiting), and
// audited as abandoned (tests/escape/net_handoff_dead_callers.sh); until then it holds two of the
// supervisor's descriptors. A handed-off connect() waits for the dial (at most the proxy's 10 s
// connect timeout) even on a non-blocking socket, and handled signals wait for its answer; so do
// calls the performer runs (the notification is answered when it answers). Where the hand-off is not
// made (IPv6, UDP, proxy-mode clients, Landlock-only, kernels without SO_NETNS_COOKIE before Linux
// 5.14) the relay carries the bytes as before, and connect, bind and listen run as the workload's own.
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
  hand_off,           // dial the checked destination and install the socket in the workload's place
  perform,            // the performer (performer.h) runs the call on the workload's open file
  perform_unix_path,  // the same, for a unix path: from the thread's cwd, under its umask
  refuse,             // fail with `err`
  refuse_reported,    // fail with `err`, reported as a denial of `host`:`port` (no dial is made)
};
struct Verdict {
  Action action = Action::refuse;
  int err = 0;
  uint32_t addr = 0;  // hand_off: the IPv4 destination (host byte order)
  uint16_t port = 0;
  std::string host{};  // refuse_reported: the destination's address as text (IPv6 without brackets)
};

// Pure. nr: SYS_connect, SYS_bind or SYS_listen; the socket's domain and type (0 when not a
// socket); `sa`/`len`: the address as read once (len 0 for listen).
Verdict classify(const NetPlan& net, long nr, SocketKind kind, int domain, int type, const sockaddr_storage& sa,
                 size_t len);

// Parent, mediator thread. The kind of a socket: SO_NETNS_COOKIE against the sandbox's.
SocketKind kind_of(int sock, uint64_t sandbox_cookie);
// SO_NETNS_COOKIE of a socket; nullopt before Linux 5.14 (no hand-off then).
std::optional<uint64_t> netns_cookie(int sock);
// Gives `fresh` what the workload set on `old` that survives a hand-off (options, O_NONBLOCK).
void copy_settings(int old, int fresh);

}  // namespace cage::lx::handoff
