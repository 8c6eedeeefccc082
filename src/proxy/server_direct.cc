// Hand-off's direct path (linux/handoff.h, issue 25 item 3): a workload's connect() to an IPv4
// literal outside the synthetic range is decided and dialled on the seccomp mediator's own thread,
// which saves the hop to the proxy's loop (one thread wake-up of three on the way to the first
// byte). Such a destination needs neither the synthetic map (which the loop's DNS changes) nor the
// resolver: the decision reads only the allowlist, the options and host_check (one netlink query,
// no state), all fixed before run(), so it is safe off the loop. It is the loop's own decision for
// that destination, step for step (decide -> on_resolved's screen -> one non-blocking connect), with
// the same events and errnos; the events go to the loop through a queue, since the sink is the
// loop's. Proven by tests/escape/net_handoff_*.sh and tests/integration/net_handoff*.sh.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>

#include "proxy/server.h"
#include "proxy/socket_compat.h"

namespace cage::proxy {
namespace {

using Clock = std::chrono::steady_clock;

Address mapped(uint32_t addr) {
  Address a{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  a[12] = static_cast<uint8_t>(addr >> 24);
  a[13] = static_cast<uint8_t>(addr >> 16);
  a[14] = static_cast<uint8_t>(addr >> 8);
  a[15] = static_cast<uint8_t>(addr);
  return a;
}

// What event_of() makes of a Proto::handoff connection.
NetEvent event(const Server::Direct& d, Decision decision, int status, std::string reason, bool peer) {
  NetEvent e;
  e.protocol = "tcp";
  e.host = ipv4_text(d.addr);
  e.port = d.port;
  e.decision = decision;
  e.rule = d.rule ? d.rule->origin : std::string();
  e.reason = std::move(reason);
  if (peer) e.address = address_text(mapped(d.addr));
  e.status = status;
  e.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - d.started);
  return e;
}

}  // namespace

std::optional<Server::Direct> Server::dial_direct(uint32_t addr, uint16_t port) {
  // A synthetic address stands for a name (decide): the loop's map and resolver. contains() reads
  // only the range, fixed by enable_transparent(); the loop's DNS adds names, never moves it.
  if (!transparent_ || synthetic_.contains(addr)) return std::nullopt;
  Direct d;
  d.addr = addr;
  d.port = port;
  d.started = Clock::now();
  d.deadline = d.started + opt_.connect_timeout;
  const std::string host = ipv4_text(addr);
  const auto refused = [&](std::string why) {
    // refuse(): a 403 leaves connect() with ECONNREFUSED. Queued, and the loop woken, so that a
    // denial is printed as it happens (a refused connect is not what this path saves time for).
    {
      std::lock_guard<std::mutex> lock(handoff_mu_);
      direct_events_.push_back(event(d, Decision::denied, 403, std::move(why), false));
    }
    wake_.signal();
    d.err = ECONNREFUSED;
    return std::optional<Direct>(std::move(d));
  };
  d.rule = allow_.match(host, port);
  if (!d.rule) return refused(denial_message(host, port));
  const Address a = mapped(addr);
  if (std::string why = allow_.screen(*d.rule, a, port, opt_.host_check); !why.empty()) {
    const std::string text = address_text(a);
    return refused("cage: " + host_port_text(host, port) + " resolves to " + text + ", " + why + ", which " +
                   d.rule->origin + " does not cover (list " + host_port_text(text, port) +
                   " or the exact name to allow it)");
  }
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(addr);
  d.sock.reset(open_stream_socket(AF_INET));
  int e = d.sock.valid() ? 0 : last_socket_error();
  if (e == 0) {
    set_nodelay(d.sock.get());
    e = connect_nonblocking(d.sock.get(), reinterpret_cast<const sockaddr*>(&to), sizeof to);
  }
  if (e != 0) {  // as try_connect's exhausted dial: the errno itself
    d.sock.reset();
    direct_done(d, e);
  }
  return d;
}

void Server::refuse_uncarried(const std::string& host, uint16_t port) {
  NetEvent e;
  e.protocol = "tcp";
  e.host = host;
  e.port = port;
  e.decision = Decision::denied;
  e.status = 403;
  const policy::NetRule* rule = allow_.match(host, port);
  const std::string hp = host_port_text(host, port);
  if (!rule) {
    e.reason = denial_message(host, port);
  } else {
    // A rule names it, but a direct connect cannot reach it: only the proxy dials IPv6.
    e.rule = rule->origin;
    e.reason = "cage: " + hp + " is allowed by " + rule->origin +
               " through cage's proxy only: the sandbox has no route to it (use the HTTPS_PROXY or ALL_PROXY "
               "cage sets)";
  }
  {
    std::lock_guard<std::mutex> lock(handoff_mu_);
    direct_events_.push_back(std::move(e));
  }
  wake_.signal();
}

void Server::direct_done(Direct& d, int err) {
  if (err != 0) {
    d.err = err;
    std::string why =
        dial_failure(host_port_text(ipv4_text(d.addr), d.port), err, Clock::now() >= d.deadline);
    {
      std::lock_guard<std::mutex> lock(handoff_mu_);
      direct_events_.push_back(event(d, Decision::failed, err == ETIMEDOUT ? 504 : 502, std::move(why), false));
    }
    wake_.signal();
    return;
  }
  // As finish_handoff: reported when the connection ends, with the kernel's byte counts. The caller
  // still holds the socket, so the connection is surely there when sock_diag is first asked. Only
  // the run's first hand-off asks here: a sock_diag round trip on this thread would hold up, on a
  // shared core, the server's answer the workload now waits for, and a look this early finds no
  // byte anyway; the loop's tick makes the first look at the others.
  Handed h;
  h.event = event(d, Decision::allowed, 0, "handed off: the workload holds the connection", true);
  h.started = d.started;
  const bool named = tcp_id(d.sock.get(), h.id);
  if (named && diag_answers_ < 0) diag_answers_ = tcp_counts(h.id, h.last) == 1 ? 1 : 0;
  const bool tracked = named && diag_answers_ == 1;
  if (!tracked) h.event.reason += " (byte counts unavailable: sock_diag did not answer)";
  std::lock_guard<std::mutex> lock(handoff_mu_);
  // Not woken for: the loop looks at what is queued on its next tick (250 ms), as it looks at
  // handed_ connections, whose events come only when they end.
  if (tracked)
    direct_handed_.push_back(std::move(h));
  else
    direct_events_.push_back(std::move(h.event));
}

// The loop's side: what the direct path queued.
void Server::take_direct() {
  std::vector<Handed> handed;
  std::vector<NetEvent> events;
  {
    std::lock_guard<std::mutex> lock(handoff_mu_);
    handed.swap(direct_handed_);
    events.swap(direct_events_);
  }
  for (auto& h : handed) handed_.push_back(std::move(h));
  if (sink_)
    for (const auto& e : events) sink_(e);
}

}  // namespace cage::proxy
