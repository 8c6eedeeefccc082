// The supervisor's proxy: receives the workload's accepted TCP connections from the in-namespace
// shim (SCM_RIGHTS over a socketpair), speaks HTTP CONNECT, absolute-form HTTP and SOCKS5 on them,
// checks every request against the --net allowlist and relays allowed ones to the real destination.
// One thread runs run(); stop() may be called from any thread. No privileged calls: unit-testable.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/unique_fd.h"
#include "proxy/allowlist.h"
#include "proxy/budget.h"
#include "proxy/event.h"
#include "proxy/http.h"
#include "proxy/poller.h"
#include "proxy/resolver.h"
#include "proxy/synthetic.h"
#include "proxy/tcp_counts.h"
#include "proxy/waker.h"

namespace cage::proxy {

struct ServerOptions {
  std::chrono::milliseconds head_timeout{10'000};      // a request head (or SOCKS handshake) must arrive
  std::chrono::milliseconds connect_timeout{10'000};   // resolve + TCP connect -> 504 after
  std::chrono::milliseconds response_timeout{60'000};  // plain HTTP: first response byte -> 504 after
  HeadLimits limits;
  int pipe_size = kTunnelPipe;
  size_t max_connections = kDefaultConnections;  // connection_limit(--memory), budget.h
  // Non-empty: every request must authenticate as user "cage" with this password (Basic
  // Proxy-Authorization, or SOCKS5 username/password) — for a proxy listening on the host's loopback.
  std::string secret;
  // Does the host answer on an address (host_local.cc)? A resolved address it does is refused
  // unless listed; tests pass their own.
  HostCheck host_check = host_answers_on;
};

struct Conn;
struct DnsQuery;

class Server {
 public:
  Server(Allowlist allow, ServerOptions opt, EventSink sink);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Watches a SOCK_SEQPACKET socket whose messages each carry one accepted client fd. Call before run().
  int add_channel(UniqueFd channel);
  // Or serves the clients of a listening TCP socket directly (the host-loopback proxy of a run without
  // a network namespace; set ServerOptions::secret with it). Call before run().
  int add_listener(UniqueSocket listener);
  // Transparent egress (server_transparent.cc): the channel may also carry listening sockets (the
  // workload's plain TCP connects land there) and the namespace's DNS socket, answered with
  // addresses from `names`. Call before run().
  void enable_transparent(SyntheticMap names);
  // Hand-off (server.cc): the workload's own connect() to a transparent destination, held by the
  // seccomp mediator (connect_notify.h) while this loop decides, resolves, screens and dials it
  // exactly as a connection accepted on a transparent listener. `done` runs on this thread with the
  // connected socket (it takes it: fd >= 0, err 0) or an errno (fd -1; ECANCELED: the caller is
  // gone, nothing to answer) and returns 0 when the workload now holds the socket, else the errno
  // its connect() ended with (ECANCELED: the caller was gone). `waiting`: whether the ticket's caller
  // still waits in connect(); asked each tick, so that a dial whose caller is gone is dropped then,
  // not kept to its deadline. Set before run().
  using HandoffDone = std::function<int(uint64_t ticket, int fd, int err)>;
  using HandoffWaiting = std::function<bool(uint64_t ticket)>;
  void set_handoff(HandoffDone done, HandoffWaiting waiting) {
    handoff_done_ = std::move(done);
    handoff_waiting_ = std::move(waiting);
  }
  void hand_off(uint64_t ticket, std::string host, uint16_t port);  // thread-safe
  // Hand-off's direct path (server_direct.cc): an IPv4 literal outside the synthetic range needs
  // neither the synthetic map nor the resolver, so the mediator has it decided and dials it on its
  // own thread, saving the wake-up of this loop. Thread-safe: reads only the allowlist and options,
  // fixed before run(); the events go to this loop's thread through a queue.
  struct Direct {
    int err = 0;        // refused (reported already): the errno connect() fails with; no socket
    UniqueSocket sock;  // else: the dial, non-blocking, under way or done, to cage's own sockaddr
    uint32_t addr = 0;  // host byte order
    uint16_t port = 0;
    const policy::NetRule* rule = nullptr;
    std::chrono::steady_clock::time_point started, deadline;  // deadline: the connect timeout
  };
  // A workload's connect() to a destination no transparent listener carries and no route reaches (an
  // IPv6 address, an IPv4-mapped one), which fails without a dial: reported as a denial, naming the
  // rule that would have allowed it through the proxy if one does.
  void refuse_uncarried(const std::string& host, uint16_t port);  // thread-safe
  // nullopt: not a direct destination (a synthetic address): hand_off() it.
  std::optional<Direct> dial_direct(uint32_t addr, uint16_t port);  // thread-safe
  // The dial's end. err 0: `d.sock` is connected and now the workload's (still open here, so that it
  // is named for its byte counts); else the errno the workload's connect() failed with (ETIMEDOUT:
  // the deadline passed; ECANCELED: its caller is gone, the workload does not hold the socket),
  // reported as the loop's dial would have been.
  void direct_done(Direct& d, int err);  // thread-safe
  // How often the loop looks at its timers, at handed-off connections' byte counts and at whether a
  // hand-off's caller still waits; the mediator looks at its direct dials' callers as often.
  static constexpr std::chrono::milliseconds kTick{250};
  // Serves until stop(); returns 0 or an errno from the poller.
  int run();
  void stop();  // thread-safe
  size_t connection_count() const { return live_.load(); }

 private:
  // Poller tokens of the server's own sockets; a connection's are id << 2 | side, with ids from 1.
  static constexpr uint64_t kListener = 0, kWake = 1, kChannel = 2, kResolver = 3;
  void on_channel();
  void take_handoffs();
  void finish_handoff(Conn& c, int err);
  // Why a dial ended without a connection, as its event says (`hp`: host_port_text). ETIMEDOUT with
  // `deadline_passed`: the connect timeout; ECANCELED: a hand-off's caller is gone; else the errno.
  std::string dial_failure(const std::string& hp, int err, bool deadline_passed) const;
  struct Destination {  // a transparent connection's original destination
    std::string host;    // the name its synthetic address stands for, or the address as text
    uint16_t port = 0;
  };
  void accept_client(int fd, const Destination* dest = nullptr);
  void add_aux(int fd, int side);
  void on_listener(int fd);
  void on_dns();
  std::string dns_reply(std::string_view msg, const DnsQuery& q);
  bool destination_of(int fd, Destination& d);
  void emit_dns(const std::string& name, Decision d, const std::string& reason);
  void on_event(uint64_t token, bool readable, bool writable);
  void drive(Conn& c);
  bool negotiate(Conn& c);
  bool handle_http_head(Conn& c);
  bool handle_socks(Conn& c);
  void decide(Conn& c);
  void on_resolved(Conn& c, std::vector<Address> addrs, int error);
  void try_connect(Conn& c);
  int start_attempt(Conn& c, size_t i);
  bool poll_attempts(Conn& c);
  void drop_attempts(Conn& c);
  std::string tried(const Conn& c) const;
  int poll_timeout() const;
  void fire_dial_timers();
  void on_connected(Conn& c);
  bool drive_plain(Conn& c);
  bool frame_response(Conn& c);
  void refuse(Conn& c, int http_status, uint8_t socks_code, const std::string& msg, Decision d);
  void finish_exchange(Conn& c);
  void close_conn(uint64_t id);
  void check_timers();
  void emit(Conn& c, Decision d, int status, const std::string& reason);
  NetEvent event_of(const Conn& c, Decision d, int status, const std::string& reason) const;
  // Handed-off connections still open: reported when they end, with the kernel's byte counts
  // (tcp_counts.h), looked at on each 250 ms tick; at the end of the run, whatever is still open.
  struct Handed {
    TcpId id;
    TcpCounts last;
    NetEvent event;
    std::chrono::steady_clock::time_point started;
  };
  std::vector<Handed> handed_;
  void poll_handed(bool run_ended);

  Allowlist allow_;
  ServerOptions opt_;
  EventSink sink_;
  Poller poller_;
  Resolver resolver_;
  UniqueFd channel_;
  UniqueSocket listener_;
  Waker wake_;
  void on_client_listener();
  std::atomic<bool> stopping_{false};
  std::atomic<size_t> live_{0};
  uint64_t next_id_ = 1;
  std::unordered_map<uint64_t, std::unique_ptr<Conn>> conns_;
  std::vector<uint64_t> doomed_;
  // When a connection's next upstream attempt is due (dial.h), soonest first; stale entries are skipped.
  using DialTimer = std::pair<std::chrono::steady_clock::time_point, uint64_t>;
  std::priority_queue<DialTimer, std::vector<DialTimer>, std::greater<>> dial_timers_;
  HandoffDone handoff_done_;
  HandoffWaiting handoff_waiting_;
  // Whether sock_diag answers for a handed-off connection; -1: not asked yet. Either thread.
  std::atomic<int> diag_answers_{-1};
  void take_direct();
  std::mutex handoff_mu_;
  std::vector<std::pair<uint64_t, Destination>> handoff_queue_;  // under handoff_mu_
  std::vector<Handed> direct_handed_;                            // under handoff_mu_: for handed_
  std::vector<NetEvent> direct_events_;                          // under handoff_mu_: for sink_
  bool transparent_ = false;
  SyntheticMap synthetic_;
  std::unordered_map<uint64_t, UniqueFd> aux_;  // listeners (token side 2) and the DNS socket (side 3)
  int dns_fd_ = -1;
  std::unordered_set<std::string> dns_reported_;  // names whose denial was already reported
  void refuse_over_limit(UniqueSocket client);
  size_t refusing_ = 0;                 // connections only being told "503" (not counted as served)
  size_t bulk_slots_ = kBulkPipes;      // bulk pipes this sandbox may still grow (relay.h)
  std::chrono::steady_clock::time_point limit_reported_{};
  size_t limit_unreported_ = 0;         // refusals since the last reported one (one line a second)
};

}  // namespace cage::proxy
