// Transparent egress in the proxy loop, on loopback without namespaces: the test plays cage's init
// and passes a listener ('L') and a UDP DNS socket ('D') over the channel; the Server answers DNS
// with synthetic addresses and relays plain TCP connects by their original destination.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "common/send_fd.h"
#include "proxy/dns.h"
#include "proxy/server.h"
#include "proxy/socket_compat.h"

using namespace cage;
using namespace cage::proxy;

namespace {

int bound(int type, uint16_t& port, uint32_t addr = INADDR_LOOPBACK) {
  int s = socket(AF_INET, type | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(addr);
  sa.sin_port = htons(port);
  EXPECT_EQ(bind(s, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  if (type == SOCK_STREAM) listen(s, 64);
  socklen_t len = sizeof sa;
  getsockname(s, reinterpret_cast<sockaddr*>(&sa), &len);
  port = ntohs(sa.sin_port);
  return s;
}

int connect_to(uint32_t addr, uint16_t port) {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(addr);
  sa.sin_port = htons(port);
  if (connect(s, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    close(s);
    return -1;
  }
  return s;
}

void pass(int channel, int fd, char kind) { ASSERT_EQ(cage::send_fd(channel, fd, kind), 0); }

std::string dns_query(const std::string& name, uint16_t qtype) {
  std::string m = {0x42, 0x42, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = std::min(name.find('.', start), name.size());
    m += static_cast<char>(dot - start);
    m += name.substr(start, dot - start);
    start = dot + 1;
  }
  m += std::string("\0", 1) + static_cast<char>(qtype >> 8) + static_cast<char>(qtype & 0xff) + std::string("\0\1", 2);
  return m;
}

class Transparent : public ::testing::Test {
 protected:
  void start(std::vector<std::string> pats, uint16_t listen_port, uint32_t listen_addr = INADDR_LOOPBACK) {
    std::vector<policy::NetRule> rules;
    for (auto& t : pats) {
      policy::NetRule r;
      ASSERT_EQ(policy::parse_host_pattern(t, r.pattern), "") << t;
      r.origin = "--net " + t;
      rules.push_back(r);
    }
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    channel_ = UniqueFd(sv[0]);
    server_ = std::make_unique<Server>(Allowlist(rules), ServerOptions{}, [this](const NetEvent& e) {
      std::lock_guard l(mu_);
      events_.push_back(e);
    });
    server_->add_channel(UniqueFd(sv[1]));
    server_->enable_transparent(std::move(synthetic_));
    if (done_) server_->set_handoff(done_, waiting_);
    thread_ = std::thread([this] { server_->run(); });
    dns_port_ = 0;
    int d = bound(SOCK_DGRAM, dns_port_);
    pass(channel_.get(), d, 'D');
    close(d);
    int l = bound(SOCK_STREAM, listen_port, listen_addr);
    pass(channel_.get(), l, 'L');
    close(l);
    listen_port_ = listen_port;
  }
  void TearDown() override {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }
  std::string ask(const std::string& q) {
    UniqueFd s(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons(dns_port_);
    sendto(s.get(), q.data(), q.size(), 0, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    pollfd p{s.get(), POLLIN, 0};
    if (poll(&p, 1, 2000) != 1) return {};
    char buf[512];
    ssize_t n = recv(s.get(), buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  }
  std::vector<NetEvent> events() {
    std::lock_guard l(mu_);
    return events_;
  }

  SyntheticMap synthetic_;
  Server::HandoffDone done_;  // the mediator's side of a hand-off, when a test plays it
  Server::HandoffWaiting waiting_;
  UniqueFd channel_;
  uint16_t dns_port_ = 0, listen_port_ = 0;
  std::unique_ptr<Server> server_;
  std::thread thread_;
  std::mutex mu_;
  std::vector<NetEvent> events_;
};

TEST_F(Transparent, DnsAnswersListedNamesOnly) {
  start({"api.example.com:443", "*.wild.test:22"}, 0);
  std::string a = ask(dns_query("api.example.com", kDnsTypeA));
  ASSERT_GE(a.size(), 16u);
  EXPECT_EQ(a[3] & 0x0f, 0);
  EXPECT_EQ(a.substr(a.size() - 4), std::string("\xc6\x12\x00\x01", 4));
  std::string w = ask(dns_query("x.wild.test", kDnsTypeA));
  EXPECT_EQ(w.substr(w.size() - 4), std::string("\xc6\x12\x00\x02", 4));
  std::string w2 = ask(dns_query("X.Wild.Test", kDnsTypeA));  // same name: same address
  EXPECT_EQ(w2.substr(w2.size() - 4), std::string("\xc6\x12\x00\x02", 4));
  std::string v6 = ask(dns_query("api.example.com", kDnsTypeAAAA));
  ASSERT_GE(v6.size(), 12u);
  EXPECT_EQ(v6[3] & 0x0f, 0);  // NOERROR, no answer
  EXPECT_EQ(v6[7], 0);
  std::string nx = ask(dns_query("evil.com", kDnsTypeA));
  ASSERT_GE(nx.size(), 12u);
  EXPECT_EQ(nx[3] & 0x0f, 3);
  ask(dns_query("evil.com", kDnsTypeAAAA));
  int denied = 0;
  for (const auto& e : events())
    if (e.protocol == "dns" && e.decision == Decision::denied && e.host == "evil.com") ++denied;
  EXPECT_EQ(denied, 1);  // reported once per name
}

// Issue 19 item 5: other record types are answered (PTR of a synthetic address: its name; SRV, TXT,
// reverse names: NXDOMAIN or NODATA) and only an address query for an unlisted name is reported.
TEST_F(Transparent, DnsAnswersOtherTypesAndReportsOnlyAddressQueries) {
  start({"api.example.com:443"}, 0);
  std::string a = ask(dns_query("api.example.com", kDnsTypeA));
  ASSERT_GE(a.size(), 16u);
  EXPECT_EQ(a.substr(a.size() - 4), std::string("\xc6\x12\x00\x01", 4));
  std::string ptr = ask(dns_query("1.0.18.198.in-addr.arpa", kDnsTypePTR));
  ASSERT_GE(ptr.size(), 12u);
  EXPECT_EQ(ptr[3] & 0x0f, 0);
  EXPECT_EQ(ptr[7], 1);
  EXPECT_EQ(ptr.substr(ptr.size() - 17), std::string("\3api\7example\3com\0", 17));
  auto rcode = [&](const std::string& name, uint16_t type) {
    std::string r = ask(dns_query(name, type));
    return r.size() >= 12 ? (r[3] & 0x0f) + 16 * r[7] : -1;  // rcode, plus 16 per answer record
  };
  constexpr uint16_t kSrv = 33, kTxt = 16;
  EXPECT_EQ(rcode("2.0.18.198.in-addr.arpa", kDnsTypePTR), 3);  // handed out for no name
  EXPECT_EQ(rcode("1.0.0.10.in-addr.arpa", kDnsTypePTR), 3);
  EXPECT_EQ(rcode("1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa", kDnsTypePTR), 3);
  EXPECT_EQ(rcode("1.0.18.198.in-addr.arpa", kDnsTypeA), 0);  // NODATA
  EXPECT_EQ(rcode("_https._tcp.api.example.com", kSrv), 3);
  EXPECT_EQ(rcode("_http._tcp.deb.debian.org", kSrv), 3);
  EXPECT_EQ(rcode("api.example.com", kSrv), 0);
  EXPECT_EQ(rcode("evil.com", kTxt), 3);
  for (const auto& e : events()) EXPECT_FALSE(e.decision == Decision::denied) << e.host << ": " << e.reason;
  EXPECT_EQ(rcode("evil.com", kDnsTypeAAAA), 3);
  int denied = 0;
  for (const auto& e : events()) denied += e.decision == Decision::denied && e.host == "evil.com";
  EXPECT_EQ(denied, 1);
}

// Issue 19 item 4: a client that resolved through cage's DNS and then names the synthetic address
// to the proxy (socks5://, CONNECT to the address) reaches the name's destination, checked and
// reported as the name; an address of the range no name was given is refused without a remedy
// cage would reject. (The synthetic range is 127.0.2.0/24 here, "localhost" its first name.)
TEST_F(Transparent, ProxyRequestsForASyntheticAddressUseItsName) {
  uint16_t port = 0;
  UniqueFd up(bound(SOCK_STREAM, port));
  synthetic_ = SyntheticMap(0x7F000200, 24);
  ASSERT_EQ(*synthetic_.assign("localhost"), 0x7F000201u);
  start({"localhost:" + std::to_string(port)}, 0);
  auto client = [&] {
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    pass(channel_.get(), sv[1], 'c');
    close(sv[1]);
    return UniqueFd(sv[0]);
  };
  auto reply_to = [&](const std::string& req, size_t n) {
    UniqueFd c = client();
    EXPECT_EQ(write(c.get(), req.data(), req.size()), static_cast<ssize_t>(req.size()));
    std::string got(n, '\0');
    EXPECT_EQ(recv(c.get(), got.data(), n, MSG_WAITALL), static_cast<ssize_t>(n));
    return got;
  };
  std::string p{static_cast<char>(port >> 8), static_cast<char>(port & 0xff)};
  std::string hello("\x05\x01\x00", 3);
  std::string v4 = reply_to(hello + std::string("\x05\x01\x00\x01\x7f\x00\x02\x01", 8) + p, 4);
  EXPECT_EQ(v4, std::string("\x05\x00\x05\x00", 4));  // method chosen, then succeeded
  UniqueFd u1(accept4(up.get(), nullptr, nullptr, SOCK_CLOEXEC));
  EXPECT_TRUE(u1.valid());
  std::string v6 = reply_to(hello + std::string("\x05\x01\x00\x04", 4) + std::string(10, '\0') +
                                std::string("\xff\xff\x7f\x00\x02\x01", 6) + p,
                            4);
  EXPECT_EQ(v6, std::string("\x05\x00\x05\x00", 4));
  UniqueFd u2(accept4(up.get(), nullptr, nullptr, SOCK_CLOEXEC));
  EXPECT_TRUE(u2.valid());
  std::string connect = reply_to("CONNECT 127.0.2.1:" + std::to_string(port) + " HTTP/1.1\r\n\r\n", 12);
  EXPECT_EQ(connect, "HTTP/1.1 200");
  UniqueFd u3(accept4(up.get(), nullptr, nullptr, SOCK_CLOEXEC));
  EXPECT_TRUE(u3.valid());
  std::string unknown = reply_to(hello + std::string("\x05\x01\x00\x01\x7f\x00\x02\x09", 8) + p, 4);
  EXPECT_EQ(unknown, std::string("\x05\x00\x05\x02", 4));  // not allowed
  bool refused = false;
  for (int i = 0; i < 100 && !refused; ++i, usleep(20000))
    for (const auto& e : events()) refused |= e.decision == Decision::denied;
  for (const auto& e : events()) {
    EXPECT_NE(e.host, "127.0.2.1");
    if (e.decision == Decision::denied) {
      EXPECT_EQ(e.host, "127.0.2.9");
      EXPECT_NE(e.reason.find("synthetic address"), std::string::npos) << e.reason;
      EXPECT_EQ(e.reason.find("add --net"), std::string::npos) << e.reason;
    }
  }
  EXPECT_TRUE(refused);  // allowed tunnels are reported when they end (u1-u3 are still open)
}

// Without a namespace the test stands in a synthetic range inside 127/8 (local on any host):
// "localhost" is 127.0.2.1, the listener sits there, and the upstream on 127.0.0.1, same port.
TEST_F(Transparent, PlainConnectIsRelayedByItsOriginalDestination) {
  uint16_t port = 0;
  UniqueFd up(bound(SOCK_STREAM, port));
  synthetic_ = SyntheticMap(0x7F000200, 24);
  ASSERT_EQ(*synthetic_.assign("localhost"), 0x7F000201u);
  start({"localhost:" + std::to_string(port)}, port, 0x7F000201);
  UniqueFd c(connect_to(0x7F000201, port));
  ASSERT_TRUE(c.valid());
  UniqueFd u(accept4(up.get(), nullptr, nullptr, SOCK_CLOEXEC));
  ASSERT_TRUE(u.valid());
  ASSERT_EQ(write(c.get(), "ping", 4), 4);
  char buf[8] = {};
  ASSERT_EQ(recv(u.get(), buf, 4, MSG_WAITALL), 4);
  EXPECT_EQ(std::string(buf, 4), "ping");
  ASSERT_EQ(write(u.get(), "pong", 4), 4);
  u.reset();
  std::string got;
  ssize_t n;
  while ((n = recv(c.get(), buf, sizeof buf, 0)) > 0) got.append(buf, static_cast<size_t>(n));
  EXPECT_EQ(got, "pong");
  c.reset();
  for (int i = 0; i < 100; ++i) {
    bool done = false;
    for (const auto& e : events()) done |= e.protocol == "tcp" && e.decision == Decision::allowed;
    if (done) break;
    usleep(20000);
  }
  bool allowed = false;
  for (const auto& e : events())
    if (e.protocol == "tcp" && e.decision == Decision::allowed) {
      allowed = true;
      EXPECT_EQ(e.host, "localhost");
      EXPECT_EQ(e.bytes_up, 4u);
      EXPECT_EQ(e.bytes_down, 4u);
    }
  EXPECT_TRUE(allowed);
}

TEST_F(Transparent, UnlistedDestinationIsResetAtOnce) {
  uint16_t port = 0;
  UniqueFd up(bound(SOCK_STREAM, port));
  start({"localhost:" + std::to_string(port + 1)}, port, 0x7F000305);  // 127.0.3.5: no name, no rule
  UniqueFd c(connect_to(0x7F000305, port));
  ASSERT_TRUE(c.valid());
  char b;
  pollfd p{c.get(), POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 2000), 1);
  EXPECT_LE(recv(c.get(), &b, 1, 0), 0);
  bool denied = false;
  for (const auto& e : events()) denied |= e.protocol == "tcp" && e.decision == Decision::denied && e.host == "127.0.3.5";
  EXPECT_TRUE(denied);
}

}  // namespace

// Hand-off's direct path (server_direct.cc): a literal destination is decided on the caller's
// thread with the loop's own rules and events; a synthetic address is left to the loop.
TEST_F(Transparent, DirectDialDecidesLiteralsOffTheLoopWithTheLoopsEvents) {
  uint16_t up = 0, closed = 0;
  UniqueFd upstream(bound(SOCK_STREAM, up));
  { UniqueFd gone(bound(SOCK_STREAM, closed)); }  // a port nothing listens on any more
  start({"127.0.0.1:" + std::to_string(up), "127.0.0.1:" + std::to_string(closed), "api.example.com:443"}, 0);
  EXPECT_FALSE(server_->dial_direct(0xC6120001, 443)) << "a synthetic address is the loop's";

  auto denied = server_->dial_direct(INADDR_LOOPBACK, 9);
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->err, ECONNREFUSED);
  EXPECT_FALSE(denied->sock.valid());

  auto d = server_->dial_direct(INADDR_LOOPBACK, up);
  ASSERT_TRUE(d);
  ASSERT_EQ(d->err, 0);
  ASSERT_TRUE(d->sock.valid());
  pollfd p{d->sock.get(), POLLOUT, 0};
  ASSERT_EQ(poll(&p, 1, 2000), 1);
  EXPECT_EQ(pending_socket_error(d->sock.get()), 0);
  server_->direct_done(*d, 0);
  UniqueFd peer(accept(upstream.get(), nullptr, nullptr));
  ASSERT_TRUE(peer.valid()) << "connected to the checked destination";

  auto f = server_->dial_direct(INADDR_LOOPBACK, closed);
  ASSERT_TRUE(f);
  if (f->err == 0) {  // refused later, as the mediator sees it from poll
    pollfd q{f->sock.get(), POLLOUT, 0};
    ASSERT_EQ(poll(&q, 1, 2000), 1);
    EXPECT_EQ(pending_socket_error(f->sock.get()), ECONNREFUSED);
    server_->direct_done(*f, ECONNREFUSED);
  } else {
    EXPECT_EQ(f->err, ECONNREFUSED);
  }
  d->sock.reset();
  server_->stop();
  thread_.join();  // the loop reports, as it stops, what the direct path queued
  auto ev = events();
  auto find = [&](Decision dec) {
    for (const auto& e : ev)
      if (e.decision == dec) return &e;
    return static_cast<const NetEvent*>(nullptr);
  };
  const NetEvent* no = find(Decision::denied);
  ASSERT_NE(no, nullptr);
  EXPECT_EQ(no->protocol, "tcp");
  EXPECT_EQ(no->status, 403);
  EXPECT_NE(no->reason.find("not in the --net allowlist"), std::string::npos) << no->reason;
  const NetEvent* failed = find(Decision::failed);
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->status, 502);
  EXPECT_NE(failed->reason.find("failed: Connection refused"), std::string::npos) << failed->reason;
  const NetEvent* yes = find(Decision::allowed);
  ASSERT_NE(yes, nullptr);
  EXPECT_EQ(yes->host, "127.0.0.1");
  EXPECT_EQ(yes->address, "127.0.0.1");
  EXPECT_EQ(yes->rule, "--net 127.0.0.1:" + std::to_string(up));
  EXPECT_NE(yes->reason.find("handed off"), std::string::npos) << yes->reason;
}

// Hand-off through the loop (a synthetic address: a name): a dial whose caller is gone is dropped at
// the loop's next tick, not kept to its 10 s deadline, reported as abandoned, and the mediator is
// told ECANCELED (nothing to answer, its copy of the workload's socket to close). Twins: a caller
// still waiting keeps its dial; one to a listener that accepts gets the connected socket.
TEST_F(Transparent, LoopDropsAHandOffWhoseCallerIsGone) {
  uint16_t up = 0, full = 0;
  UniqueFd upstream(bound(SOCK_STREAM, up));
  UniqueFd slow(bound(SOCK_STREAM, full));
  ASSERT_EQ(listen(slow.get(), 0), 0);
  UniqueFd queued(connect_to(INADDR_LOOPBACK, full));  // the one the queue holds: later dials wait
  ASSERT_TRUE(queued.valid());
  auto addr = synthetic_.assign("localhost");
  ASSERT_TRUE(addr);
  std::mutex m;
  std::map<uint64_t, int> answers;  // ticket -> 0 (the socket taken) or the errno
  std::atomic<bool> gone{false};
  done_ = [&](uint64_t ticket, int fd, int err) {
    if (fd >= 0) close(fd);
    std::lock_guard l(m);
    return answers[ticket] = fd >= 0 ? 0 : err;
  };
  waiting_ = [&](uint64_t ticket) { return ticket != 2 || !gone; };
  start({"localhost:" + std::to_string(up), "localhost:" + std::to_string(full)}, 0);
  auto answer = [&](uint64_t ticket, std::chrono::milliseconds within) -> std::optional<int> {
    for (auto end = std::chrono::steady_clock::now() + within; std::chrono::steady_clock::now() < end;) {
      {
        std::lock_guard l(m);
        if (auto it = answers.find(ticket); it != answers.end()) return it->second;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return std::nullopt;
  };
  server_->hand_off(1, ipv4_text(*addr), up);
  EXPECT_EQ(answer(1, std::chrono::seconds(2)), 0) << "a dial to a listener that accepts is handed over";
  server_->hand_off(2, ipv4_text(*addr), full);
  EXPECT_EQ(answer(2, Server::kTick + std::chrono::milliseconds(100)), std::nullopt)
      << "a dial whose caller waits is kept past a tick";
  gone = true;
  const auto died = std::chrono::steady_clock::now();
  EXPECT_EQ(answer(2, std::chrono::seconds(3)), ECANCELED);
  EXPECT_LT(std::chrono::steady_clock::now() - died, std::chrono::seconds(3)) << "not kept to its deadline";
  server_->stop();
  thread_.join();
  bool abandoned = false, handed = false;
  for (const auto& e : events()) {
    if (e.port != full) continue;
    abandoned |= e.decision == Decision::failed && e.host == "localhost" &&
                 e.reason.find("abandoned: its caller was killed") != std::string::npos;
    handed |= e.reason.find("handed off") != std::string::npos;
  }
  EXPECT_TRUE(abandoned);
  EXPECT_FALSE(handed);
}
