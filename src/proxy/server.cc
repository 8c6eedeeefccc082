// The proxy event loop (one thread): takes accepted client sockets from the shim, tells the
// protocol apart by the first byte (0x05 SOCKS5, else HTTP), checks each request against the
// allowlist, connects upstream and relays. Denials answer 403 / SOCKS 0x02; upstream failures 502;
// timeouts 504. Proven by tests/unit/proxy_server_test.cc and tests/integration/net_*.sh.
#include "proxy/server.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "proxy/dial.h"
#include "proxy/env.h"
#include "proxy/relay.h"
#include "proxy/socket_compat.h"
#include "proxy/socks5.h"

namespace cage::proxy {

using Clock = std::chrono::steady_clock;

namespace {
constexpr size_t kBuf = kRelayBuf;
constexpr std::chrono::milliseconds kLinger{2000};
uint64_t token(uint64_t id, int side) { return id << 2 | static_cast<uint64_t>(side); }
}  // namespace

std::string_view to_string(Decision d) {
  switch (d) {
    case Decision::allowed: return "allowed";
    case Decision::denied: return "denied";
    case Decision::failed: return "failed";
  }
  return "?";
}

enum class Stage { sniff, http_head, socks_greeting, socks_auth, socks_request, resolving, connecting, tunnel, plain, closing };
enum class Proto { unknown, connect, http, socks5, transparent, handoff };
enum class Resp { head, body, done };  // how far a plain-HTTP response has been framed

struct Conn {
  uint64_t id = 0;
  UniqueSocket client, upstream;
  Stage stage = Stage::sniff;
  Proto proto = Proto::unknown;
  bool dead = false, client_eof = false, shut = false, over_limit = false;
  std::string in, out, up_out;
  std::string host;
  uint16_t port = 0;
  const policy::NetRule* rule = nullptr;
  std::vector<Address> addrs;  // screened, in dial_order
  struct Attempt {
    UniqueSocket s;
    size_t addr;
  };
  std::vector<Attempt> attempts;  // connects in flight (dial.h), all under the token of side 1
  Dial dial;
  int last_connect_errno = 0;
  std::string peer;  // the address that answered, for the events
  Clock::time_point dial_wake = Clock::time_point::max();  // the dial timer last queued
  Leg up, down;
  HttpRequest req;
  int64_t body_left = 0;
  ChunkScanner chunks;
  bool body_done = false, up_eof = false, got_response = false;
  std::string resp;  // upstream bytes not yet framed: a response head still arriving
  Resp resp_state = Resp::head;
  BodyFraming framing = BodyFraming::until_close;
  uint64_t resp_left = 0;
  ChunkScanner resp_chunks;
  bool close_client = false;  // the response said the client connection ends after it
  int response_code = 0;
  uint64_t bytes_up = 0, bytes_down = 0;
  uint64_t ticket = 0;  // Proto::handoff: the mediator's notification
  Clock::time_point started{}, deadline = Clock::time_point::max();
};

namespace {

// Appends without letting the string's capacity pass `cap` (std::string doubles it: a 64 KiB head
// limit would otherwise hold 128 KiB), so budget.h's per-connection figure is a real bound.
void append_bounded(std::string& buf, const char* p, size_t n, size_t cap) {
  if (buf.size() + n > buf.capacity()) buf.reserve(std::min(cap, std::max(buf.size() + n, 2 * buf.capacity())));
  buf.append(p, n);
}

// Reads what the socket has into `buf`, up to `cap` bytes in all. >0 progress, 0 none, -1 EOF/error.
int read_into(int fd, std::string& buf, size_t cap) {
  bool any = false;
  while (buf.size() < cap) {
    char tmp[16384];
    long n = recv_some(fd, tmp, std::min(sizeof tmp, cap - buf.size()));
    if (n > 0) {
      append_bounded(buf, tmp, static_cast<size_t>(n), cap);
      any = true;
      continue;
    }
    int e = n < 0 ? last_socket_error() : 0;
    if (e == EINTR) continue;
    if (would_block(e)) break;
    return any ? 1 : -1;  // report the data first; EOF shows again on the next read
  }
  return any ? 1 : 0;
}

// Writes what it can of `buf`. 1 progress, 0 blocked or nothing to do, -1 peer gone.
int write_from(int fd, std::string& buf, uint64_t* counter = nullptr) {
  bool any = false;
  while (!buf.empty()) {
    long n = send_nosignal(fd, buf.data(), buf.size());
    int e = n < 0 ? last_socket_error() : 0;
    if (e == EINTR) continue;
    if (would_block(e)) break;
    if (n < 0) return -1;
    buf.erase(0, static_cast<size_t>(n));
    if (counter) *counter += static_cast<uint64_t>(n);
    any = true;
  }
  return any ? 1 : 0;
}

}  // namespace

Server::Server(Allowlist allow, ServerOptions opt, EventSink sink)
    : allow_(std::move(allow)), opt_(opt), sink_(std::move(sink)) {
  poller_.add(wake_.get(), kWake);
  if (resolver_.notify_fd() >= 0) poller_.add(resolver_.notify_fd(), kResolver);
}

Server::~Server() {
  if (resolver_.notify_fd() >= 0) poller_.remove(resolver_.notify_fd());
}

int Server::add_listener(UniqueSocket listener) {
  set_nonblocking(listener.get());
  listener_ = std::move(listener);
  return poller_.add(listener_.get(), kListener);
}

void Server::on_client_listener() {
  while (listener_.valid()) {
    int c = accept_nonblocking(listener_.get());
    if (c < 0) {
      int e = last_socket_error();
      if (e == EINTR || e == ECONNABORTED) continue;
      return;  // EAGAIN, or out of fds (the next connection's edge retries)
    }
    accept_client(c);
  }
}

void Server::stop() {
  stopping_ = true;
  wake_.signal();
}

int Server::run() {
  if (!poller_.ok() || !wake_.valid()) return EMFILE;
  std::vector<PollEvent> events;
  auto next_tick = Clock::now();
  while (!stopping_) {
    int n = poller_.wait(events, poll_timeout());
    if (n < 0 && n != -EINTR) return -n;
    for (const auto& e : events) {
      if (e.token == kWake) {
        wake_.drain();
        take_handoffs();
        take_direct();
        continue;
      }
      if (e.token == kListener) {
        on_client_listener();
        continue;
      }
      if (e.token == kChannel) {
        on_channel();
      } else if (e.token == kResolver) {
        for (auto& r : resolver_.take()) {
          auto it = conns_.find(r.id);
          if (it == conns_.end() || it->second->dead || it->second->stage != Stage::resolving) continue;
          on_resolved(*it->second, std::move(r.addrs), r.error);
          drive(*it->second);  // a refusal is written now, not at the next event
        }
      } else {
        on_event(e.token, e.readable || e.hangup || e.error, e.writable || e.error);
      }
    }
    fire_dial_timers();
    if (Clock::now() >= next_tick) {
      check_timers();
      next_tick = Clock::now() + kTick;
    }
    for (uint64_t id : doomed_) conns_.erase(id);
    doomed_.clear();
    live_ = conns_.size();
  }
  for (auto& [id, c] : conns_) {  // stopped: every open connection ends now, not at destruction
    if (c->stage == Stage::tunnel && !c->dead) {  // its event would come at its close: record it now
      c->bytes_up += c->up.bytes;
      c->bytes_down = c->down.bytes;
      emit(*c, Decision::allowed, c->proto == Proto::socks5 ? 0 : 200, "still open when the run ended");
    }
    if (c->client.valid()) poller_.remove(c->client.get());
    if (c->upstream.valid()) poller_.remove(c->upstream.get());
    drop_attempts(*c);
  }
  conns_.clear();
  doomed_.clear();
  take_direct();
  poll_handed(true);
  live_ = 0;
  return 0;
}

void Server::accept_client(int fd, const Destination* dest) {
  UniqueSocket client(fd);
  int type = 0;
  // Only stream sockets are served; anything else the channel carries is closed unread.
  if (get_socket_option(fd, SOL_SOCKET, SO_TYPE, type) != 0 || type != SOCK_STREAM) return;
  if (conns_.size() - refusing_ >= opt_.max_connections) {
    refuse_over_limit(std::move(client));
    return;
  }
  set_nonblocking(fd);
  set_nodelay(fd);
  auto c = std::make_unique<Conn>();
  c->id = next_id_++;
  c->started = Clock::now();
  c->deadline = c->started + opt_.head_timeout;
  if (poller_.add(fd, token(c->id, 0)) != 0) return;
  c->client = std::move(client);
  Conn& ref = *c;
  conns_.emplace(c->id, std::move(c));
  live_ = conns_.size();
  if (dest) {  // transparent: the destination is known, nothing is read before the upstream answers
    ref.proto = Proto::transparent;
    ref.host = dest->host;
    ref.port = dest->port;
    ref.stage = Stage::resolving;
    decide(ref);
    if (ref.dead) return;
  }
  drive(ref);
}

// The sandbox holds its limit of connections (budget.h): this one is answered and closed, never
// served, so the supervisor's memory stays bounded whatever the workload opens. The answer is 503,
// or, when the client already spoke SOCKS5 (first byte 5), "no acceptable method". A few answers at
// a time linger (closing stage) so the client reads them; past that the socket is just closed.
// One line a second reaches stderr and the audit log, with the count of the refusals in between.
void Server::refuse_over_limit(UniqueSocket client) {
  ++limit_unreported_;
  auto now = Clock::now();
  bool report = now - limit_reported_ >= std::chrono::seconds(1);
  if (refusing_ >= kRefusing && !report) return;
  set_nonblocking(client.get());
  auto c = std::make_unique<Conn>();
  c->id = next_id_++;
  c->started = now;
  if (poller_.add(client.get(), token(c->id, 0)) != 0) return;
  c->client = std::move(client);
  c->over_limit = true;
  char first = 0;
  c->proto = ::recv(os_socket(c->client.get()), &first, 1, MSG_PEEK) == 1 && first == 5 ? Proto::socks5 : Proto::http;
  ++refusing_;
  Conn& ref = *c;
  conns_.emplace(c->id, std::move(c));
  std::string msg = "cage: the --net proxy holds " + std::to_string(opt_.max_connections) +
                    " connections, this sandbox's limit (" + std::to_string(limit_unreported_) +
                    " refused since the last report; the limit is --memory / " + std::to_string(kConnCost >> 10) +
                    " KiB, or " + std::to_string(kDefaultConnections) + " without --memory)";
  if (report) {
    limit_reported_ = now;
    limit_unreported_ = 0;
  }
  if (ref.proto == Proto::socks5) {
    if (report) emit(ref, Decision::denied, 0xff, msg);
    ref.out = socks_method_reply(false);
    ref.stage = Stage::closing;
    ref.deadline = now + kLinger;
  } else {
    auto sink = std::exchange(sink_, report ? sink_ : EventSink{});
    refuse(ref, 503, 0, msg, Decision::denied);
    sink_ = std::move(sink);
  }
  drive(ref);
}

void Server::on_event(uint64_t tok, bool, bool) {
  if ((tok & 3) >= 2) {
    auto a = aux_.find(tok >> 2);
    if (a == aux_.end()) return;
    if ((tok & 3) == 2)
      on_listener(a->second.get());
    else
      on_dns();
    return;
  }
  auto it = conns_.find(tok >> 2);
  if (it == conns_.end() || it->second->dead) return;
  drive(*it->second);
}

void Server::close_conn(uint64_t id) {
  auto it = conns_.find(id);
  if (it == conns_.end() || it->second->dead) return;
  Conn& c = *it->second;
  c.dead = true;
  if (c.over_limit) --refusing_;
  bulk_slots_ += (c.up.grown ? 1 : 0) + (c.down.grown ? 1 : 0);
  if (c.client.valid()) poller_.remove(c.client.get());
  if (c.upstream.valid()) poller_.remove(c.upstream.get());
  drop_attempts(c);
  doomed_.push_back(id);
}

void Server::emit(Conn& c, Decision d, int status, const std::string& reason) {
  if (sink_) sink_(event_of(c, d, status, reason));
}

NetEvent Server::event_of(const Conn& c, Decision d, int status, const std::string& reason) const {
  NetEvent e;
  e.protocol = c.proto == Proto::socks5                                    ? "socks5"
               : c.proto == Proto::connect                                 ? "connect"
               : c.proto == Proto::transparent || c.proto == Proto::handoff ? "tcp"
                                                                           : "http";
  e.host = c.host;
  e.port = c.port;
  e.decision = d;
  e.rule = c.rule ? c.rule->origin : std::string();
  e.reason = reason;
  e.address = c.peer;
  e.status = status;
  e.bytes_up = c.bytes_up;
  e.bytes_down = c.bytes_down;
  e.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - c.started);
  return e;
}

void Server::refuse(Conn& c, int http_status, uint8_t socks_code, const std::string& msg, Decision d) {
  emit(c, d, c.proto == Proto::socks5 ? socks_code : http_status, msg);
  drop_attempts(c);
  if (c.upstream.valid()) {
    poller_.remove(c.upstream.get());
    c.upstream.reset();
  }
  if (c.proto == Proto::handoff) {  // the workload's connect() fails with the errno this stands for
    int e = c.last_connect_errno ? c.last_connect_errno
            : http_status == 504 ? ETIMEDOUT
            : http_status == 502 ? EHOSTUNREACH
                                 : ECONNREFUSED;
    finish_handoff(c, e);
    return;
  }
  if (c.proto == Proto::transparent) {  // no protocol to answer in: reset, so the client fails at once
    reset_on_close(c.client.get());
    close_conn(c.id);
    return;
  }
  c.out += c.proto == Proto::socks5 ? socks_reply(static_cast<SocksReply>(socks_code))
                                    : http_error_response(http_status, msg);
  c.stage = Stage::closing;
  c.deadline = Clock::now() + kLinger;
}

void Server::drive(Conn& c) {
  for (int round = 0; round < 64 && !c.dead; ++round) {
    bool progress = false;
    switch (c.stage) {
      case Stage::sniff:
      case Stage::http_head:
      case Stage::socks_greeting:
      case Stage::socks_auth:
      case Stage::socks_request:
        progress = negotiate(c);
        break;
      case Stage::resolving:
        return;
      case Stage::connecting:
        progress = poll_attempts(c);
        break;
      case Stage::tunnel:
        pump(c.up);
        pump(c.down);
        if (c.up.done && c.down.done) {
          c.bytes_up += c.up.bytes;
          c.bytes_down = c.down.bytes;
          emit(c, Decision::allowed, c.proto == Proto::socks5 ? 0 : 200, {});
          close_conn(c.id);
        }
        return;
      case Stage::plain:
        progress = drive_plain(c);
        break;
      case Stage::closing: {
        int w = write_from(c.client.get(), c.out);
        if (w < 0) {
          close_conn(c.id);
          return;
        }
        if (!c.out.empty()) return;
        if (!c.shut) {
          shutdown_write(c.client.get());
          c.shut = true;
        }
        // Read and drop what the client still sends, so close() does not reset the connection
        // before it has read our answer.
        std::string sink;
        while (true) {
          sink.clear();
          int r = read_into(c.client.get(), sink, 65536);
          if (r < 0) {
            close_conn(c.id);
            return;
          }
          if (r == 0) return;
        }
      }
    }
    if (!progress) return;
  }
}

bool Server::negotiate(Conn& c) {
  int r = c.client_eof ? 0 : read_into(c.client.get(), c.in, opt_.limits.max_head + 1024);
  if (r < 0) c.client_eof = true;
  if (c.in.empty()) {
    if (c.client_eof) close_conn(c.id);
    return false;
  }
  if (c.stage == Stage::sniff) {
    c.stage = static_cast<uint8_t>(c.in[0]) == 5 ? Stage::socks_greeting : Stage::http_head;
    if (c.stage == Stage::socks_greeting) c.proto = Proto::socks5;
    return true;
  }
  bool progress = c.stage == Stage::http_head ? handle_http_head(c) : handle_socks(c);
  if (!progress && c.client_eof && !c.dead && c.stage != Stage::closing) close_conn(c.id);  // truncated request
  return progress || r > 0;
}

bool Server::handle_http_head(Conn& c) {
  HttpParse p = parse_request_head(c.in, opt_.limits);
  if (p.status == ParseStatus::need_more) return false;
  c.proto = p.req.is_connect ? Proto::connect : Proto::http;
  if (p.status == ParseStatus::error) {
    refuse(c, p.error_status, 0, p.error, Decision::denied);
    return true;
  }
  c.req = std::move(p.req);
  c.in.erase(0, c.req.head_len);
  if (!opt_.secret.empty() && !basic_credentials_match(c.req.proxy_authorization, kProxyUser, opt_.secret)) {
    refuse(c, 407, 0, "cage: this proxy serves only the sandbox it was started for (no or wrong credentials)",
           Decision::denied);
    return true;
  }
  c.host = c.req.host;
  c.port = c.req.port;
  decide(c);
  return true;
}

bool Server::handle_socks(Conn& c) {
  if (c.stage == Stage::socks_greeting) {
    SocksGreeting g = parse_socks_greeting(c.in);
    if (g.status == ParseStatus::need_more) return false;
    const bool secret = !opt_.secret.empty();
    if (g.status == ParseStatus::error || !(secret ? g.userpass_offered : g.no_auth_offered)) {
      c.out += socks_method_reply(false);
      c.stage = Stage::closing;
      c.deadline = Clock::now() + kLinger;
      return true;
    }
    c.in.erase(0, g.consumed);
    c.out += secret ? socks_userpass_method_reply() : socks_method_reply(true);
    c.stage = secret ? Stage::socks_auth : Stage::socks_request;
    if (write_from(c.client.get(), c.out) < 0) close_conn(c.id);
    return true;
  }
  if (c.stage == Stage::socks_auth) {
    SocksUserPass u = parse_socks_userpass(c.in);
    if (u.status == ParseStatus::need_more) return false;
    bool ok = u.status == ParseStatus::ok && u.user == kProxyUser &&
              equal_constant_time(u.password, opt_.secret);
    c.out += socks_userpass_reply(ok);
    if (!ok) {
      emit(c, Decision::denied, 1, "cage: SOCKS5 credentials missing or wrong");
      c.stage = Stage::closing;
      c.deadline = Clock::now() + kLinger;
      return true;
    }
    c.in.erase(0, u.consumed);
    c.stage = Stage::socks_request;
    if (write_from(c.client.get(), c.out) < 0) close_conn(c.id);
    return true;
  }
  SocksRequest q = parse_socks_request(c.in);
  if (q.status == ParseStatus::need_more) return false;
  if (q.status == ParseStatus::error) {
    refuse(c, 400, static_cast<uint8_t>(q.error), "cage: unsupported SOCKS5 request", Decision::denied);
    return true;
  }
  c.in.erase(0, q.consumed);
  c.host = std::move(q.host);
  c.port = q.port;
  decide(c);
  return true;
}

void Server::decide(Conn& c) {
  if (transparent_) {  // a synthetic address is checked, resolved and reported as its name
    auto name = unsynthesize(synthetic_, c.host);
    if (!name) {
      refuse(c, 403, static_cast<uint8_t>(SocksReply::not_allowed),
             "cage: " + host_port_text(c.host, c.port) +
                 " is a synthetic address cage's DNS gave no name in this run (connect by name)",
             Decision::denied);
      return;
    }
    c.host = std::move(*name);
  }
  c.rule = allow_.match(c.host, c.port);
  c.peer.clear();
  c.addrs.clear();
  c.dial = Dial();
  if (!c.rule) {
    refuse(c, 403, static_cast<uint8_t>(SocksReply::not_allowed), denial_message(c.host, c.port), Decision::denied);
    return;
  }
  c.deadline = Clock::now() + opt_.connect_timeout;
  Address a;
  bool v4 = false;
  if (policy::parse_ip_literal(c.host, a, v4)) {
    on_resolved(c, {a}, 0);
    return;
  }
  if (c.host == "localhost") {  // never looked up (RFC 6761 6.3): the host's loopback, as the allowlist means it
    on_resolved(c, {kLoopbackV4, kLoopbackV6}, 0);
    return;
  }
  c.stage = Stage::resolving;
  resolver_.submit(c.id, c.host);
}

void Server::on_resolved(Conn& c, std::vector<Address> addrs, int error) {
  std::string hp = host_port_text(c.host, c.port);
  if (error != 0) {
    refuse(c, 502, static_cast<uint8_t>(SocksReply::host_unreachable),
           "cage: cannot resolve " + c.host + ": " + resolve_error_text(error), Decision::failed);
    return;
  }
  c.addrs.clear();
  std::string refused, why;
  for (const auto& a : addrs) {
    std::string w = allow_.screen(*c.rule, a, c.port, opt_.host_check);
    if (w.empty())
      c.addrs.push_back(a);
    else if (refused.empty())
      refused = address_text(a), why = std::move(w);
  }
  if (c.addrs.empty()) {
    refuse(c, 403, static_cast<uint8_t>(SocksReply::not_allowed),
           "cage: " + hp + " resolves to " + refused + ", " + why + ", which " + c.rule->origin +
               " does not cover (list " + host_port_text(refused, c.port) + " or the exact name to allow it)",
           Decision::denied);
    return;
  }
  c.addrs = dial_order(c.addrs);
  c.dial = Dial(c.addrs.size());
  c.stage = Stage::connecting;
  try_connect(c);
}

// Starts every attempt that is due (dial.h: one per kAttemptDelay, the next at once after a
// failure). With nothing in flight and no address left, the connection is answered with the last
// error; otherwise a timer wakes the loop when the next attempt is due.
void Server::try_connect(Conn& c) {
  auto now = Clock::now();
  while (auto i = c.dial.start(now)) {
    if (int e = start_attempt(c, *i); e != 0) {
      c.last_connect_errno = e;
      c.dial.failed();
    }
  }
  if (c.dial.exhausted()) {
    int e = c.last_connect_errno;
    uint8_t code = e == ECONNREFUSED ? 0x05 : e == ENETUNREACH ? 0x03 : e == ETIMEDOUT ? 0x06 : 0x04;
    refuse(c, e == ETIMEDOUT ? 504 : 502, code,
           dial_failure(host_port_text(c.host, c.port), e, false) + tried(c), Decision::failed);
    return;
  }
  auto at = c.dial.wake_at();
  if (at != Clock::time_point::max() && at != c.dial_wake) dial_timers_.emplace(c.dial_wake = at, c.id);
}

// One non-blocking connect to c.addrs[i], watched under the connection's upstream token. 0 or errno.
int Server::start_attempt(Conn& c, size_t i) {
  const Address& a = c.addrs[i];
  sockaddr_storage ss{};
  socklen_t len;
  if (is_ipv4(a)) {
    auto* s4 = reinterpret_cast<sockaddr_in*>(&ss);
    s4->sin_family = AF_INET;
    s4->sin_port = htons(c.port);
    std::memcpy(&s4->sin_addr, a.data() + 12, 4);
    len = sizeof *s4;
  } else {
    auto* s6 = reinterpret_cast<sockaddr_in6*>(&ss);
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons(c.port);
    std::memcpy(&s6->sin6_addr, a.data(), 16);
    len = sizeof *s6;
  }
  UniqueSocket s(open_stream_socket(ss.ss_family));
  if (!s.valid()) return last_socket_error();
  set_nodelay(s.get());
  if (int e = connect_nonblocking(s.get(), reinterpret_cast<sockaddr*>(&ss), len); e != 0) return e;
  if (int e = poller_.add(s.get(), token(c.id, 1)); e != 0) return -e;
  c.attempts.push_back({std::move(s), i});
  return 0;
}

// Looks at every attempt in flight: the first connected one becomes the upstream and the others are
// closed; a failed one is dropped and the next address tried at once. true: the stage changed.
bool Server::poll_attempts(Conn& c) {
  for (size_t k = 0; k < c.attempts.size();) {
    int fd = c.attempts[k].s.get();
    if (int err = pending_socket_error(fd); err != 0) {
      c.last_connect_errno = err;
      poller_.remove(fd);
      c.attempts.erase(c.attempts.begin() + static_cast<std::ptrdiff_t>(k));
      c.dial.failed();
      continue;
    }
    sockaddr_storage peer;
    socklen_t plen = sizeof peer;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &plen) != 0) {  // still pending
      ++k;
      continue;
    }
    c.upstream = std::move(c.attempts[k].s);
    c.peer = address_text(c.addrs[c.attempts[k].addr]);
    c.attempts.erase(c.attempts.begin() + static_cast<std::ptrdiff_t>(k));
    drop_attempts(c);
    on_connected(c);
    return true;
  }
  try_connect(c);
  return c.stage != Stage::connecting;
}

void Server::drop_attempts(Conn& c) {
  for (auto& a : c.attempts) poller_.remove(a.s.get());
  c.attempts.clear();
}

// " (tried A, B)": the addresses a name led to that were dialled; nothing for an address literal.
std::string Server::tried(const Conn& c) const {
  Address a;
  bool v4 = false;
  if (c.dial.started() == 0 || policy::parse_ip_literal(c.host, a, v4)) return {};
  std::string s = " (tried ";
  for (size_t i = 0; i < c.dial.started(); ++i) s += (i ? ", " : "") + address_text(c.addrs[i]);
  return s + ")";
}

// The loop's wait ends in time for the next attempt that is due (at most kTick, check_timers' tick).
int Server::poll_timeout() const {
  constexpr int kMax = static_cast<int>(kTick.count());
  if (dial_timers_.empty()) return kMax;
  auto left = std::chrono::ceil<std::chrono::milliseconds>(dial_timers_.top().first - Clock::now()).count();
  return static_cast<int>(std::clamp<decltype(left)>(left, 0, kMax));
}

void Server::fire_dial_timers() {
  auto now = Clock::now();
  while (!dial_timers_.empty() && dial_timers_.top().first <= now) {
    uint64_t id = dial_timers_.top().second;
    dial_timers_.pop();
    auto it = conns_.find(id);
    if (it == conns_.end() || it->second->dead || it->second->stage != Stage::connecting) continue;
    drive(*it->second);
  }
}

void Server::on_connected(Conn& c) {
  c.deadline = Clock::time_point::max();
  if (c.proto == Proto::handoff) {
    finish_handoff(c, 0);
    return;
  }
  if (c.proto == Proto::http) {
    c.up_out = std::move(c.req.forward_head);  // one copy of the head, not two
    c.body_left = c.req.chunked ? 0 : c.req.content_length;
    c.chunks = ChunkScanner{};
    c.body_done = !c.req.chunked && c.req.content_length == 0;
    c.up_eof = c.got_response = c.close_client = false;
    c.resp.clear();
    c.resp_state = Resp::head;
    c.stage = Stage::plain;
    c.deadline = Clock::now() + opt_.response_timeout;
    return;
  }
  if (open_leg(c.up, c.client.get(), c.upstream.get(), opt_.pipe_size) != 0 ||
      open_leg(c.down, c.upstream.get(), c.client.get(), opt_.pipe_size) != 0) {
    refuse(c, 502, 0x01, "cage: out of pipes", Decision::failed);
    return;
  }
  c.up.bulk_slots = c.down.bulk_slots = &bulk_slots_;
  c.bytes_up = c.in.size();
  c.up.prefix = std::move(c.in);  // sent before the reply arrived (TLS ClientHello): not lost
  c.in.clear();
  c.down.prefix = c.proto == Proto::socks5       ? socks_reply(SocksReply::succeeded)
                  : c.proto == Proto::transparent ? std::string()
                                                  : std::string("HTTP/1.1 200 Connection established\r\n\r\n");
  c.stage = Stage::tunnel;
}

bool Server::drive_plain(Conn& c) {
  bool progress = false;
  if (!c.body_done) {
    if (c.in.empty() && !c.client_eof && c.up_out.size() < kBuf) {  // the upstream reads: bounded
      int r = read_into(c.client.get(), c.in, kBuf);
      if (r < 0) c.client_eof = true;
      progress |= r != 0;
    }
    size_t take = 0;
    if (c.req.chunked) {
      take = c.chunks.feed(c.in);
      if (c.chunks.failed()) {
        refuse(c, 400, 0, "cage: malformed chunked request body", Decision::denied);
        return true;
      }
      c.body_done = c.chunks.done();
    } else {
      take = static_cast<size_t>(std::min<int64_t>(c.body_left, static_cast<int64_t>(c.in.size())));
      c.body_left -= static_cast<int64_t>(take);
      c.body_done = c.body_left == 0;
    }
    if (take) {
      append_bounded(c.up_out, c.in.data(), take, opt_.limits.max_head + kBuf);
      c.in.erase(0, take);
      progress = true;
    }
    if (c.client_eof && !c.body_done) c.body_done = true;  // truncated body: let the server answer
  }
  int w = write_from(c.upstream.get(), c.up_out, &c.bytes_up);
  if (w < 0) c.up_out.clear();  // the server stopped reading; its answer may still come
  progress |= w > 0;
  if (!c.up_eof && c.resp_state != Resp::done && c.out.size() < kBuf) {
    size_t before = c.resp.size();
    int r = read_into(c.upstream.get(), c.resp, c.resp_state == Resp::head ? opt_.limits.max_head + 1 : kBuf);
    if (c.resp.size() > before && !c.got_response) {
      c.deadline = Clock::time_point::max();
      c.got_response = true;
    }
    if (r < 0) c.up_eof = true;
    progress |= r != 0;
    if (!frame_response(c)) return true;
  }
  w = write_from(c.client.get(), c.out, &c.bytes_down);
  if (w < 0) {
    emit(c, Decision::allowed, c.response_code, "client went away");
    close_conn(c.id);
    return false;
  }
  progress |= w > 0;
  if (c.resp_state == Resp::done && c.out.empty()) {  // complete: never wait for the server's close
    finish_exchange(c);
    return true;
  }
  if (c.up_eof && c.out.empty()) {
    if (c.resp_state == Resp::head) {  // nothing, a piece of a head, or only 1xx heads
      refuse(c, 502, 0, "cage: " + host_port_text(c.host, c.port) + " closed the connection without a response",
             Decision::failed);
      return true;
    }
    finish_exchange(c);  // the end of a body read until close, or a truncated one: the client closes
    return true;
  }
  return progress;
}

// Moves the upstream's bytes from c.resp to c.out as far as the response's framing reaches: heads
// (1xx ones forwarded and followed by the real one) re-written by parse_response_head, then the body
// up to its end. Bytes past that end are dropped with the upstream connection: they could only be
// read by the client as the answer to its next request, which goes to a host of its own. false:
// the exchange ended here (502 for a refused head, a close for a broken chunked body).
bool Server::frame_response(Conn& c) {
  while (c.resp_state == Resp::head) {
    ResponseHead h = parse_response_head(c.resp, c.req, opt_.limits);
    if (h.status == ParseStatus::need_more) return true;
    if (h.status == ParseStatus::error) {
      refuse(c, 502, 0, h.error + " (from " + host_port_text(c.host, c.port) + ")", Decision::failed);
      return false;
    }
    c.resp.erase(0, h.head_len);
    c.out += h.forward_head;
    c.response_code = h.code;
    if (h.interim) continue;
    c.framing = h.framing;
    c.resp_left = h.length;
    c.close_client = h.close_client;
    c.resp_chunks = ChunkScanner{};
    bool empty = h.framing == BodyFraming::none || (h.framing == BodyFraming::length && h.length == 0);
    c.resp_state = empty ? Resp::done : Resp::body;
  }
  if (c.resp_state == Resp::body) {
    size_t take = c.resp.size();
    if (c.framing == BodyFraming::length) {
      take = static_cast<size_t>(std::min<uint64_t>(c.resp_left, take));
      c.resp_left -= take;
      if (c.resp_left == 0) c.resp_state = Resp::done;
    } else if (c.framing == BodyFraming::chunked) {
      take = c.resp_chunks.feed(c.resp);
      if (c.resp_chunks.failed()) {  // the client has part of the body already: only a close is left
        emit(c, Decision::failed, c.response_code,
             "cage: " + host_port_text(c.host, c.port) + " sent a malformed chunked body");
        close_conn(c.id);
        return false;
      }
      if (c.resp_chunks.done()) c.resp_state = Resp::done;
    }
    if (c.out.empty() && take == c.resp.size()) {
      std::swap(c.out, c.resp);  // the usual case, a whole read of body: no second copy
    } else {
      c.out.append(c.resp, 0, take);
      c.resp.erase(0, take);
    }
  }
  if (c.resp_state == Resp::done) c.resp.clear();
  return true;
}

void Server::finish_exchange(Conn& c) {
  emit(c, Decision::allowed, c.response_code, {});
  poller_.remove(c.upstream.get());
  c.upstream.reset();
  bool keep = c.resp_state == Resp::done && !c.close_client && c.body_done && !c.client_eof;
  c.bytes_up = c.bytes_down = 0;
  c.started = Clock::now();
  c.rule = nullptr;
  if (keep) {  // keep-alive: the next request on this connection is checked on its own
    c.stage = Stage::http_head;
    c.deadline = c.started + opt_.head_timeout;
  } else {
    c.stage = Stage::closing;
    c.deadline = c.started + kLinger;
  }
}

void Server::poll_handed(bool run_ended) {
  for (size_t i = 0; i < handed_.size();) {
    Handed& h = handed_[i];
    int r = tcp_counts(h.id, h.last);
    if (r == 1 && !run_ended) {
      ++i;
      continue;
    }
    // Gone: the counts of the last look (up to one tick old), the bytes the kernel acknowledged.
    h.event.bytes_up = h.last.sent;
    h.event.bytes_down = h.last.received;
    h.event.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - h.started);
    if (run_ended && r == 1) h.event.reason += "; still open when the run ended";
    if (sink_) sink_(h.event);
    handed_[i] = std::move(handed_.back());
    handed_.pop_back();
  }
}

void Server::check_timers() {
  take_direct();
  poll_handed(false);
  auto now = Clock::now();
  for (auto& [id, cp] : conns_) {
    Conn& c = *cp;
    if (c.dead) continue;
    // A hand-off whose caller is gone (SIGKILLed while it waited; the wait is killable only) is
    // dropped at this tick, as the mediator drops a direct dial's (connect_notify.cc), not kept to
    // its deadline: else a workload that forks, connects to a slow name and kills the child, over and
    // over, piles up the dial's socket here and the workload's in the mediator for 10 s per dead
    // caller, until the supervisor runs out of descriptors (tests/escape/net_handoff_dead_callers.sh).
    if (c.proto == Proto::handoff && handoff_waiting_ && !handoff_waiting_(c.ticket)) {
      emit(c, Decision::failed, 502,
           dial_failure(host_port_text(c.host, c.port), ECANCELED, false) + tried(c));
      finish_handoff(c, ECANCELED);
      continue;
    }
    if (now < c.deadline) continue;
    auto secs = [](std::chrono::milliseconds ms) { return std::to_string(ms.count() / 1000) + "s"; };
    switch (c.stage) {
      case Stage::resolving:
      case Stage::connecting:
        refuse(c, 504, static_cast<uint8_t>(SocksReply::ttl_expired),
               dial_failure(host_port_text(c.host, c.port), ETIMEDOUT, true) + tried(c), Decision::failed);
        drive(c);
        break;
      case Stage::plain:
        refuse(c, 504, 0,
               "cage: " + host_port_text(c.host, c.port) + " sent no response within " + secs(opt_.response_timeout),
               Decision::failed);
        drive(c);
        break;
      case Stage::sniff:
      case Stage::http_head:
      case Stage::socks_auth:
      case Stage::socks_greeting:
      case Stage::socks_request:
      case Stage::closing:
      case Stage::tunnel:
        close_conn(id);  // an incomplete head after the timeout: slow-loris, or an idle keep-alive
        break;
    }
  }
}

void Server::hand_off(uint64_t ticket, std::string host, uint16_t port) {
  {
    std::lock_guard<std::mutex> lock(handoff_mu_);
    handoff_queue_.push_back({ticket, Destination{std::move(host), port}});
  }
  wake_.signal();
}

// A hand-off takes the transparent path from decide() on; it has no client socket: the answer is
// the connected upstream socket itself, or an errno (refuse, finish_handoff).
void Server::take_handoffs() {
  std::vector<std::pair<uint64_t, Destination>> q;
  {
    std::lock_guard<std::mutex> lock(handoff_mu_);
    q.swap(handoff_queue_);
  }
  for (auto& [ticket, dest] : q) {
    if (!handoff_done_) continue;
    auto c = std::make_unique<Conn>();
    c->id = next_id_++;
    c->ticket = ticket;
    c->proto = Proto::handoff;
    c->host = std::move(dest.host);
    c->port = dest.port;
    c->stage = Stage::resolving;
    c->started = Clock::now();
    Conn& ref = *c;
    conns_.emplace(c->id, std::move(c));
    decide(ref);
    if (!ref.dead) drive(ref);
  }
}

std::string Server::dial_failure(const std::string& hp, int err, bool deadline_passed) const {
  if (err == ETIMEDOUT && deadline_passed)
    return "cage: connecting to " + hp + " timed out after " +
           std::to_string(opt_.connect_timeout.count() / 1000) + "s";
  if (err == ECANCELED)
    return "cage: connecting to " + hp + " abandoned: its caller was killed or interrupted while it waited";
  return "cage: connecting to " + hp + " failed: " + std::strerror(err);
}

// The one event of a hand-off: cage moves none of its bytes, so it reports the decision and the
// address; the socket goes to the mediator, which puts it in the workload's place. A refused or
// failed one was reported already; ECANCELED: its caller is gone (check_timers).
void Server::finish_handoff(Conn& c, int err) {
  drop_attempts(c);
  int fd = -1;
  if (err == 0 && c.upstream.valid()) {
    poller_.remove(c.upstream.get());
    fd = c.upstream.release();
    Handed h;
    h.event = event_of(c, Decision::allowed, 0, "handed off: the workload holds the connection");
    h.started = c.started;
    // The socket is named now (the mediator closes this copy). Whether sock_diag answers at all
    // (inet_diag/tcp_diag are modules that may not load: then the event goes at once and says so)
    // is learnt from the first hand-off, before its answer, when the connection is surely there;
    // later ones are looked at after the workload has its answer, off the path of its connect(),
    // and one already closed again is reported by the next poll, as gone.
    const bool named = tcp_id(fd, h.id);
    if (named && diag_answers_ < 0) diag_answers_ = tcp_counts(h.id, h.last) == 1 ? 1 : 0;
    if (int put = handoff_done_(c.ticket, fd, 0); put != 0) {
      // Not reported as handed off: the workload does not hold this connection (the caller died
      // after the last tick's look, and the mediator's ADDFD found it gone).
      emit(c, Decision::failed, 502, dial_failure(host_port_text(c.host, c.port), put, false));
    } else if (named && diag_answers_ == 1 && tcp_counts(h.id, h.last) >= 0) {
      handed_.push_back(std::move(h));
    } else if (sink_) {
      h.event.reason += " (byte counts unavailable: sock_diag did not answer)";
      sink_(h.event);
    }
  } else {
    if (c.upstream.valid()) {
      poller_.remove(c.upstream.get());
      c.upstream.reset();
    }
    handoff_done_(c.ticket, -1, err == 0 ? ECONNREFUSED : err);
  }
  close_conn(c.id);
}

}  // namespace cage::proxy
