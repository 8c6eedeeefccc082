// The proxy's Windows event loop (WSAPoll with emulated edges, the socket Waker, Winsock errors) run
// for real: built for Windows with cage_core and run under Wine by tests/cross/wine_smoke.sh (Wine's
// Winsock is the host's sockets, so the loop's readiness handling is exercised end to end). The
// proxy is the very LoopbackProxy cage.exe starts for --net; the upstream is an echo server in this
// process. Each check prints PASS/FAIL; the exit status is the number of failures (0: all passed).
#include <winsock2.h>
#include <ws2tcpip.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "proxy/http.h"
#include "proxy/loopback.h"

using namespace cage;
using namespace cage::proxy;

namespace {

int failures = 0;
const auto t_start = std::chrono::steady_clock::now();

void check(bool ok, const std::string& what) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t_start);
  std::printf("%s %s [%lld ms]\n", ok ? "PASS" : "FAIL", what.c_str(), static_cast<long long>(ms.count()));
  std::fflush(stdout);
  if (!ok) ++failures;
}

SOCKET listen_loopback(uint16_t& port) {
  SOCKET s = ::socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int len = sizeof a;
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::listen(s, 512);
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  port = ntohs(a.sin_port);
  return s;
}

SOCKET connect_loopback(uint16_t port) {
  SOCKET s = ::socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  DWORD ms = 20000;  // no check may hang the suite
  ::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, reinterpret_cast<const char*>(&ms), sizeof ms);
  if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::closesocket(s);
    return INVALID_SOCKET;
  }
  return s;
}

bool send_all(SOCKET s, const std::string& data) {
  for (size_t off = 0; off < data.size();) {
    int n = ::send(s, data.data() + off, static_cast<int>(data.size() - off), 0);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// Reads until `stop` is in the data (or EOF / error / timeout when stop is empty).
std::string read_until(SOCKET s, const std::string& stop = {}) {
  std::string got;
  char buf[65536];
  while (stop.empty() || got.find(stop) == std::string::npos) {
    int n = ::recv(s, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

// Upstream: echoes every connection until the client half-closes, then ends it. A connection whose
// first bytes are an HTTP GET gets a fixed response instead.
class EchoServer {
 public:
  EchoServer() : ls_(listen_loopback(port_)) {
    thread_ = std::thread([this] {
      while (true) {
        SOCKET c = ::accept(ls_, nullptr, nullptr);
        if (c == INVALID_SOCKET) return;
        std::thread([c] { serve(c); }).detach();
      }
    });
  }
  ~EchoServer() {
    ::closesocket(ls_);
    thread_.join();
  }
  uint16_t port() const { return port_; }

 private:
  static void serve(SOCKET c) {
    char buf[65536];
    bool first = true;
    while (true) {
      int n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0) break;
      if (first && n >= 4 && std::memcmp(buf, "GET ", 4) == 0) {
        send_all(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
        break;
      }
      first = false;
      if (!send_all(c, std::string(buf, static_cast<size_t>(n)))) break;
    }
    ::shutdown(c, SD_SEND);
    ::closesocket(c);
  }
  uint16_t port_ = 0;
  SOCKET ls_;
  std::thread thread_;
};

Allowlist allow(const std::vector<std::string>& texts) {
  std::vector<policy::NetRule> rules;
  for (const auto& t : texts) {
    policy::NetRule r;
    if (!policy::parse_host_pattern(t, r.pattern).empty()) check(false, "parse " + t);
    r.origin = "--net " + t;
    rules.push_back(r);
  }
  return Allowlist(rules);
}

std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + i / 7) & 0xff);
  return s;
}

// CONNECT through the proxy; returns the socket after a 200, or INVALID_SOCKET (status in `head`).
SOCKET open_tunnel(uint16_t proxy_port, const std::string& auth, uint16_t to, std::string& head) {
  SOCKET s = connect_loopback(proxy_port);
  if (s == INVALID_SOCKET) return s;
  std::string target = "127.0.0.1:" + std::to_string(to);
  std::string req = "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n";
  if (!auth.empty()) req += "Proxy-Authorization: Basic " + auth + "\r\n";
  send_all(s, req + "\r\n");
  head = read_until(s, "\r\n\r\n");
  if (head.rfind("HTTP/1.1 200", 0) != 0) {
    ::closesocket(s);
    return INVALID_SOCKET;
  }
  return s;
}

// Sends `data` through a tunnel, half-closes, and reads the echo to the end.
bool echo_roundtrip(SOCKET s, const std::string& data) {
  std::string got;
  std::thread reader([&] { got = read_until(s); });
  bool sent = send_all(s, data);
  ::shutdown(s, SD_SEND);
  reader.join();
  ::closesocket(s);
  return sent && got == data;
}

}  // namespace

int main() {
  WSADATA wsa;
  if (::WSAStartup(MAKEWORD(2, 2), &wsa) != 0) return 100;
  EchoServer echo;
  uint16_t closed_port = 0;
  ::closesocket(listen_loopback(closed_port));  // a port with nothing listening: connect refused
  std::atomic<int> denials{0};
  auto started = LoopbackProxy::start(
      allow({"127.0.0.1:" + std::to_string(echo.port()), "127.0.0.1:" + std::to_string(closed_port)}),
      [&](const NetEvent& e) {
        if (e.decision == Decision::denied) ++denials;
      });
  check(static_cast<bool>(started), "LoopbackProxy starts on 127.0.0.1");
  if (!started) return failures;
  LoopbackProxy& p = **started;
  const std::string auth = base64("cage:" + p.secret());
  std::string head;

  SOCKET s = open_tunnel(p.port(), auth, echo.port(), head);
  check(s != INVALID_SOCKET, "CONNECT with the run's secret: 200 (" + head.substr(0, 12) + ")");
  if (s != INVALID_SOCKET) check(echo_roundtrip(s, pattern(8 << 20)), "8 MiB through the tunnel and back, intact, after a half-close");

  s = open_tunnel(p.port(), "", echo.port(), head);
  check(s == INVALID_SOCKET && head.rfind("HTTP/1.1 407", 0) == 0, "CONNECT without credentials: 407");
  s = open_tunnel(p.port(), base64("cage:not-the-secret"), echo.port(), head);
  check(s == INVALID_SOCKET && head.rfind("HTTP/1.1 407", 0) == 0, "CONNECT with a wrong secret: 407");
  s = open_tunnel(p.port(), auth, static_cast<uint16_t>(echo.port() ^ 1), head);
  check(s == INVALID_SOCKET && head.rfind("HTTP/1.1 403", 0) == 0, "CONNECT to a port not in the allowlist: 403");
  s = open_tunnel(p.port(), auth, closed_port, head);
  check(s == INVALID_SOCKET && head.rfind("HTTP/1.1 502", 0) == 0,
        "CONNECT to an allowed port with nothing listening: 502 (" + head.substr(0, 12) + ")");

  // Absolute-form HTTP, answered by the upstream through the proxy.
  s = connect_loopback(p.port());
  std::string url = "http://127.0.0.1:" + std::to_string(echo.port()) + "/x";
  send_all(s, "GET " + url + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(echo.port()) +
                  "\r\nProxy-Authorization: Basic " + auth + "\r\nConnection: close\r\n\r\n");
  std::string resp = read_until(s);
  ::closesocket(s);
  check(resp.rfind("HTTP/1.1 200", 0) == 0 && resp.find("hello") != std::string::npos, "plain HTTP GET: 200 from upstream");

  // SOCKS5 with the username/password method (RFC 1929).
  s = connect_loopback(p.port());
  send_all(s, std::string("\x05\x01\x02", 3));
  std::string r = read_until(s, std::string("\x05\x02", 2));
  std::string up = std::string("\x01\x04", 2) + "cage" + static_cast<char>(p.secret().size()) + p.secret();
  send_all(s, up);
  r = read_until(s, std::string("\x01\x00", 2));
  std::string req("\x05\x01\x00\x01\x7f\x00\x00\x01", 8);
  req += static_cast<char>(echo.port() >> 8);
  req += static_cast<char>(echo.port() & 0xff);
  send_all(s, req);
  r = read_until(s, std::string("\x05\x00", 2));
  if (r.size() < 10) r += read_until(s);  // the rest of the reply (bound address)
  bool socks_ok = r.size() >= 10 && r[0] == 5 && r[1] == 0;
  check(socks_ok, "SOCKS5 with credentials: succeeded");
  if (socks_ok) check(echo_roundtrip(s, pattern(1 << 20)), "1 MiB through the SOCKS5 tunnel and back");
  else ::closesocket(s);

  // Many tunnels at once: every one served, none starved by the emulated edges.
  constexpr int kTunnels = 200;
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < kTunnels; ++i)
    clients.emplace_back([&, i] {
      std::string h;
      SOCKET t = open_tunnel(p.port(), auth, echo.port(), h);
      if (t != INVALID_SOCKET && echo_roundtrip(t, pattern(64 * 1024 + static_cast<size_t>(i)))) ++ok;
    });
  for (auto& t : clients) t.join();
  check(ok == kTunnels, std::to_string(ok.load()) + "/" + std::to_string(kTunnels) + " concurrent tunnels intact");
  check(denials >= 3, "denials reach the event sink");

  // stop() returns promptly with a tunnel still open.
  SOCKET idle = open_tunnel(p.port(), auth, echo.port(), head);
  auto t0 = std::chrono::steady_clock::now();
  p.stop();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  check(idle != INVALID_SOCKET && ms < 2000, "stop() with an open tunnel returns (" + std::to_string(ms) + " ms)");
  if (idle != INVALID_SOCKET) {
    char b;
    check(::recv(idle, &b, 1, 0) <= 0, "the open tunnel is closed by stop()");
    ::closesocket(idle);
  }
  std::printf("%d failure(s)\n", failures);
  return failures;
}
