// Before/after figure for the relay's bulk pipe (src/proxy/relay.h: a leg that has moved kBulkAfter
// bytes grows its pipe to kBulkPipe), all in one run and one process, against a direct loopback
// connection measured in the same rounds:
//   direct            client -> sink
//   relay, bulk pipe  client -> relay -> sink: open_leg/pump driven by an edge-triggered Poller, as
//                     Server's tunnel stage drives them, with ServerOptions' default pipe size
//   relay, no growth  the same, the legs marked as already grown, so the pipe keeps its first size
//   proxy::Server     client -> CONNECT through the real Server (add_listener) -> sink, as shipped
// The rounds interleave the four paths so that a noisy neighbour hits them alike; each path reports
// its best and median MiB/s, and the median over rounds of its share of that round's direct figure.
// Run: build/cage_relay_bench [MiB per transfer, default 1024] [rounds, default 15]
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "policy/host_pattern.h"
#include "proxy/poller.h"
#include "proxy/relay.h"
#include "proxy/server.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace cage;

sockaddr_in loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  return a;
}

// A listening socket on 127.0.0.1 at a port the kernel picks.
int listen_any(int& port) {
  int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a = loopback(0);
  socklen_t len = sizeof a;
  if (l < 0 || bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(l, 64) != 0 ||
      getsockname(l, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    perror("listen");
    std::exit(1);
  }
  port = ntohs(a.sin_port);
  return l;
}

int dial(int port) {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a = loopback(port);
  if (connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    perror("connect");
    std::exit(1);
  }
  return s;
}

// The upstream: each connection is read to its end, then closed.
void sink(int l) {
  for (;;) {
    int c = accept4(l, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) return;  // the listener was shut down
    std::thread([c] {
      std::vector<char> buf(1 << 20);
      while (read(c, buf.data(), buf.size()) > 0) {
      }
      close(c);
    }).detach();
  }
}

// One tunnel at a time, relayed the way Server's tunnel stage does it.
void relay(int l, int upstream_port, bool grow) {
  for (;;) {
    int c = accept4(l, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (c < 0) return;
    int u = dial(upstream_port);
    int one = 1;  // as Server does on both sides
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(u, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(u, F_SETFL, fcntl(u, F_GETFL) | O_NONBLOCK);
    proxy::Leg up, down;
    const int pipe_size = proxy::ServerOptions{}.pipe_size;
    if (proxy::open_leg(up, c, u, pipe_size) != 0 || proxy::open_leg(down, u, c, pipe_size) != 0) std::exit(1);
    up.grown = down.grown = !grow;  // pump() grows a leg's pipe only once, and only if not yet grown
    proxy::Poller poller;
    poller.add(c, 1);
    poller.add(u, 2);
    std::vector<proxy::PollEvent> events;
    while (!(up.done && down.done)) {
      proxy::pump(up);
      proxy::pump(down);
      if (!(up.done && down.done)) poller.wait(events, -1);
    }
    close(c);
    close(u);
  }
}

// Sends `mib` MiB and waits until the far end has read it all and closed. Through Server when
// connect_to is set ("127.0.0.1:PORT" for a CONNECT). Returns MiB/s.
double transfer(int port, int mib, const std::string& connect_to = {}) {
  int s = dial(port);
  int one = 1;
  setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (!connect_to.empty()) {
    std::string req = "CONNECT " + connect_to + " HTTP/1.1\r\nHost: " + connect_to + "\r\n\r\n", head;
    if (write(s, req.data(), req.size()) != static_cast<ssize_t>(req.size())) std::exit(1);
    char ch;
    while (head.find("\r\n\r\n") == std::string::npos && read(s, &ch, 1) == 1) head.push_back(ch);
    if (head.rfind("HTTP/1.1 200", 0) != 0) {
      std::fprintf(stderr, "proxy said: %s\n", head.c_str());
      std::exit(1);
    }
  }
  static std::vector<char> buf(1 << 20, 'b');
  auto t0 = Clock::now();
  for (int i = 0; i < mib; ++i)
    for (size_t off = 0; off < buf.size();) {
      ssize_t w = write(s, buf.data() + off, buf.size() - off);
      if (w <= 0) std::exit(1);
      off += static_cast<size_t>(w);
    }
  shutdown(s, SHUT_WR);
  char ch;
  while (read(s, &ch, 1) > 0) {
  }
  double sec = std::chrono::duration<double>(Clock::now() - t0).count();
  close(s);
  return mib / sec;
}

}  // namespace

int main(int argc, char** argv) {
  int mib = argc > 1 ? std::atoi(argv[1]) : 1024, rounds = argc > 2 ? std::atoi(argv[2]) : 15;
  if (mib <= 0 || rounds <= 0) return 2;
  int sink_port, bulk_port, flat_port, server_port;
  int sink_l = listen_any(sink_port), bulk_l = listen_any(bulk_port), flat_l = listen_any(flat_port);
  int server_l = listen_any(server_port);
  const std::string dest = "127.0.0.1:" + std::to_string(sink_port);
  policy::NetRule rule;
  if (!policy::parse_host_pattern(dest, rule.pattern).empty()) return 1;
  rule.origin = "--net " + dest;
  proxy::Server server(proxy::Allowlist({rule}), proxy::ServerOptions{}, [](const proxy::NetEvent&) {});
  if (server.add_listener(UniqueFd(server_l)) != 0) return 1;
  std::thread sink_t(sink, sink_l), bulk_t(relay, bulk_l, sink_port, true), flat_t(relay, flat_l, sink_port, false);
  std::thread server_t([&] { server.run(); });

  struct Path {
    const char* name;
    int port;
    std::string connect_to;
    std::vector<double> mibs;
  };
  std::vector<Path> paths = {{"direct loopback TCP", sink_port, {}, {}},
                             {"relay, bulk pipe (as shipped)", bulk_port, {}, {}},
                             {"relay, pipe never grown", flat_port, {}, {}},
                             {"proxy::Server CONNECT", server_port, dest, {}}};
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < paths.size(); ++i) {  // a different path leads each round
      Path& p = paths[(i + static_cast<size_t>(r)) % paths.size()];
      p.mibs.push_back(transfer(p.port, mib, p.connect_to));
    }

  // Paired figures: within a round the paths ran back to back, so a ratio taken inside a round cancels
  // most of a neighbour's load; the median over rounds is the figure to quote.
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  auto paired = [&](const Path& a, const Path& b) {
    std::vector<double> q;
    for (size_t r = 0; r < a.mibs.size(); ++r) q.push_back(a.mibs[r] / b.mibs[r]);
    return median(q);
  };
  std::printf("%d MiB per transfer, %d rounds; pipe %d KiB, grown to %d KiB after %llu MiB\n", mib, rounds,
              proxy::ServerOptions{}.pipe_size >> 10, proxy::kBulkPipe >> 10,
              static_cast<unsigned long long>(proxy::kBulkAfter >> 20));
  std::printf("%-32s %10s %10s %10s\n", "path", "best MiB/s", "median", "of direct");
  for (const Path& p : paths)
    std::printf("%-32s %10.0f %10.0f %9.1f%%\n", p.name, *std::max_element(p.mibs.begin(), p.mibs.end()),
                median(p.mibs), 100 * paired(p, paths[0]));
  std::printf("bulk pipe against never grown: %+.1f%% (median of the rounds' ratios)\n",
              100 * (paired(paths[1], paths[2]) - 1));

  server.stop();
  server_t.join();
  for (int l : {sink_l, bulk_l, flat_l}) shutdown(l, SHUT_RDWR);  // ends the accept loops
  sink_t.join();
  bulk_t.join();
  flat_t.join();
  for (int l : {sink_l, bulk_l, flat_l}) close(l);
  return 0;
}
