// The ceiling for any single-hop user-space relay on this machine, measured next to cage by
// bench/proxy.sh: accept on 127.0.0.1:LISTEN, connect to 127.0.0.1:UPSTREAM, and move bytes with
// blocking splice(2) through a 1 MiB pipe, one thread per direction, no parsing, no event loop, no
// policy. cage's proxy does the same hop plus everything a real proxy needs; the gap between the
// two is cage's own cost, the gap between this and a direct connection is the hop's.
// Usage: splice_relay LISTEN_PORT UPSTREAM_PORT
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

namespace {

void pump(int src, int dst) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return;
  fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
  for (;;) {
    ssize_t n = splice(src, nullptr, p[1], nullptr, 1 << 20, SPLICE_F_MOVE);
    if (n <= 0) break;
    while (n > 0) {
      ssize_t m = splice(p[0], nullptr, dst, nullptr, static_cast<size_t>(n), SPLICE_F_MOVE);
      if (m <= 0) break;
      n -= m;
    }
  }
  shutdown(dst, SHUT_WR);
  close(p[0]);
  close(p[1]);
}

sockaddr_in loopback(int port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = htons(static_cast<uint16_t>(port));
  return sa;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  int listen_port = std::atoi(argv[1]), upstream_port = std::atoi(argv[2]);
  int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
  setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa = loopback(listen_port);
  if (bind(l, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || listen(l, 64) != 0) return 1;
  for (;;) {
    int c = accept4(l, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    int u = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in up = loopback(upstream_port);
    if (connect(u, reinterpret_cast<sockaddr*>(&up), sizeof up) != 0) {
      close(c);
      close(u);
      continue;
    }
    std::thread([c, u] {
      std::thread t(pump, c, u);
      pump(u, c);
      t.join();
      close(c);
      close(u);
    }).detach();
  }
}
