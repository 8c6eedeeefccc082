// bench helper for bench/proxy.sh. Modes:
//   serve PORT                       accept forever; each connection: reply "x" then sink everything
//   bulk HOST PORT MIB [PROXYPORT]   send MIB MiB (via CONNECT on 127.0.0.1:PROXYPORT if given), print MiB/s
//   latency HOST PORT N [PROXYPORT]  connect(+CONNECT)+first byte, N times; print median ms
//   hold HOST PORT N PROXYPORT       open N tunnels at once, print "held N", keep them 3 s
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using Clock = std::chrono::steady_clock;

static int dial(const char* host, int port) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, host, &a.sin_addr);
  if (connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) { perror("connect"); exit(1); }
  int one = 1;
  setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return s;
}

// Opens a connection to host:port, through the proxy's CONNECT when pport > 0; waits for "x".
static int open_conn(const char* host, int port, int pport) {
  int s = dial(pport > 0 ? "127.0.0.1" : host, pport > 0 ? pport : port);
  if (pport > 0) {
    std::string req = "CONNECT " + std::string(host) + ":" + std::to_string(port) + " HTTP/1.1\r\n\r\n";
    if (write(s, req.data(), req.size()) < 0) exit(1);
    std::string head;
    char c;
    while (head.find("\r\n\r\n") == std::string::npos && read(s, &c, 1) == 1) head.push_back(c);
    if (head.rfind("HTTP/1.1 200", 0) != 0) { fprintf(stderr, "proxy said: %s\n", head.c_str()); exit(1); }
  }
  char x;
  if (read(s, &x, 1) != 1) exit(1);
  return s;
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  std::string mode = argv[1];
  if (mode == "serve") {
    int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(atoi(argv[2])));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a) || listen(l, 4096)) { perror("bind"); return 1; }
    while (true) {
      int c = accept(l, nullptr, nullptr);
      if (c < 0) continue;
      std::thread([c] {
        static thread_local std::vector<char> buf(1 << 20);
        if (write(c, "x", 1) != 1) { close(c); return; }
        while (read(c, buf.data(), buf.size()) > 0) {}
        close(c);
      }).detach();
    }
  }
  const char* host = argv[2];
  int port = atoi(argv[3]), n = atoi(argv[4]), pport = argc > 5 ? atoi(argv[5]) : 0;
  if (mode == "bulk") {
    int s = open_conn(host, port, pport);
    std::vector<char> buf(1 << 20, 'b');
    auto t0 = Clock::now();
    for (int i = 0; i < n; ++i)
      for (size_t off = 0; off < buf.size();) {
        ssize_t w = write(s, buf.data() + off, buf.size() - off);
        if (w <= 0) return 1;
        off += static_cast<size_t>(w);
      }
    shutdown(s, SHUT_WR);
    char c;
    while (read(s, &c, 1) > 0) {}
    double sec = std::chrono::duration<double>(Clock::now() - t0).count();
    printf("%.0f\n", n / sec);
  } else if (mode == "latency") {
    std::vector<double> ms;
    for (int i = 0; i < n; ++i) {
      auto t0 = Clock::now();
      int s = open_conn(host, port, pport);
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      close(s);
    }
    std::sort(ms.begin(), ms.end());
    printf("%.3f\n", ms[ms.size() / 2]);
  } else if (mode == "hold") {
    std::vector<int> fds;
    for (int i = 0; i < n; ++i) fds.push_back(open_conn(host, port, pport));
    printf("held %zu\n", fds.size());
    fflush(stdout);
    sleep(3);
  }
  return 0;
}
