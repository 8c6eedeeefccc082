// connect(2) mediation for --net without a network namespace (Mechanism::landlock_only). Landlock
// confines TCP connect by port only, so cage's init installs a seccomp filter that turns every
// connect() of the workload into a user notification; the supervisor reads the address once, and
// only when it is the proxy's (127.0.0.1:PORT) connects the workload's own socket itself (a
// duplicate taken with pidfd_getfd) to that fixed address. No address is re-read after the check,
// so a racing thread cannot swap it. Every other connect() fails with EACCES at once.
// Proved by tests/integration/landlock_only_net.sh (a direct connect to another host on the
// proxy's port fails; the proxy works).
#pragma once
#include <linux/filter.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/unique_fd.h"
#include "linux/explain_notify.h"
#include "linux/plan.h"
#include "policy/policy.h"

namespace cage::proxy {
class Server;
}

namespace cage::lx::connect_notify {

// Parent, before clone: the filter that turns the workload's connect() (with --net) and its chmod and
// utimes calls (metadata_notify.h, unless --allow-degraded=metadata) into notifications, and with
// --explain its path calls (explain_notify.h), which are observed and continued, never refused.
// With `handoff` (handoff.h) connect, bind and listen are notified too, and the filter itself refuses
// sendto/sendmsg/sendmmsg with MSG_FASTOPEN and setsockopt's source routes (IP_OPTIONS, IPv6
// routing headers). `tail`: --explain's errno observer (seccomp_observe.h), run for every other call.
std::vector<sock_filter> filter(bool connect, bool metadata, bool explain = false, bool handoff = false,
                                std::span<const sock_filter> tail = {});
// The native call numbers that filter() decides itself (ioctl among them with metadata, for some of
// its commands): what --explain's errno observer must leave to the original profile.
std::vector<int> notified_calls(bool connect, bool metadata, bool explain, bool handoff);

// Child (the workload's process, just before the profile's filter and execve): installs the filter
// with a listener and sends the listener over `channel` (tag 'n'), and with `netns_socket` a socket of
// the sandbox's network namespace (tag 'k': the hand-off tells the sandbox's sockets by it). Sets
// no_new_privs first. Returns 0 or an errno. No allocation.
int install(int channel, const std::vector<sock_filter>& filter, bool netns_socket = false);

// Parent: answers the notifications that arrive on the listener sent over `channel`, until destroyed:
// connects to proxy_port (0: none), metadata changes beneath the `writable` paths, observed calls.
class Mediator {
 public:
  virtual ~Mediator() = default;
  // Stops answering (the workload is gone) and hands over what --explain observed.
  virtual explain_notify::Log finish() = 0;
  // Hand-off (handoff.h): where destinations are sent to be checked and dialled (the proxy's
  // Server::hand_off), and the proxy's answer, on its thread: the connected socket or an errno
  // (ECANCELED: the caller is gone, nothing is answered). Returns 0 when the workload now holds the
  // socket, else the errno its connect() ended with (ECANCELED: its caller was gone).
  // `direct`: the proxy whose Server::dial_direct decides a literal destination on the mediator's
  // own thread (it must outlive the mediator's thread: finish() comes first); null: none.
  using Dialer = std::function<void(uint64_t ticket, std::string host, uint16_t port)>;
  virtual void set_dialer(Dialer dialer, proxy::Server* direct) = 0;
  virtual int dialled(uint64_t ticket, int fd, int err) = 0;
  // Whether the caller of a hand-off still waits in connect() (SECCOMP_IOCTL_NOTIF_ID_VALID): the
  // one look both dialling paths make at a dial's caller. Thread-safe.
  virtual bool waiting(uint64_t ticket) = 0;
};
// --explain's errno observer (seccomp_observe.h): the profile's original filter, which judges the
// calls it refuses, and the profile's name, for the remedy. An empty filter: not observed.
struct Refusals {
  std::vector<sock_filter> filter;
  policy::SeccompProfile profile = policy::SeccompProfile::default_profile;
};
// `handoff`: the plan's network, when its transparent egress is handed off (it outlives the mediator).
Result<std::unique_ptr<Mediator>> start(UniqueFd channel, uint16_t proxy_port,
                                        std::vector<std::string> writable, bool explain = false,
                                        Refusals refusals = {}, const NetPlan* handoff = nullptr);

}  // namespace cage::lx::connect_notify
